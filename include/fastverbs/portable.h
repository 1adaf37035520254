/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the headers need that C11, strict ISO C and C++17 spell differently. Included first
 * by every header, before any system header.
 */
#ifndef FASTVERBS_PORTABLE_H
#define FASTVERBS_PORTABLE_H

/* C11 at least: the headers rely on _Generic and static_assert. One error says so; naming
 * the keyword gcc and clang know in any mode keeps C99's missing macro from adding dozens. */
#if !defined(__cplusplus) && (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L)
#error "fastverbs needs C11 or later: compile with -std=c11 (or gnu11, c17, ...)"
#define static_assert _Static_assert
#else
#include <assert.h>	/* static_assert: a macro in C11, a keyword in C++ */
#endif
#include <endian.h>
#include "tune.h"

/*
 * glibc declares htobe16() and the rest only with _DEFAULT_SOURCE, which strict ISO modes
 * (gcc -std=c11) turn off; libmlx5's own mlx5dv.h calls them. Otherwise they are its macros.
 */
#ifndef htobe16
#if __BYTE_ORDER == __LITTLE_ENDIAN
#define htobe16(x) __builtin_bswap16(x)
#define htobe32(x) __builtin_bswap32(x)
#define htobe64(x) __builtin_bswap64(x)
#else
#define htobe16(x) ((uint16_t)(x))
#define htobe32(x) ((uint32_t)(x))
#define htobe64(x) ((uint64_t)(x))
#endif
#define be16toh(x) htobe16(x)
#define be32toh(x) htobe32(x)
#define be64toh(x) htobe64(x)
#endif

/* C declarations stay C declarations in a C++ program (the overloads of ops.h excepted). */
#ifdef __cplusplus
#define FV__EXTERN_C_BEGIN extern "C" {
#define FV__EXTERN_C_END }
#else
#define FV__EXTERN_C_BEGIN
#define FV__EXTERN_C_END
#endif

/*
 * FV__ASSERT(cond): with -DFV_DEBUG, a false cond prints where and aborts (the ring invariants
 * of sq.h and recv.h are checked so); without it, nothing at all. Off by default: the fast path
 * pays nothing for it. `make test` runs the library's unit tests once with it on.
 */
#ifdef FV_DEBUG
#include <stdio.h>
#include <stdlib.h>
static FV__COLD FV__NORETURN void fv__assert_fail(const char *cond, const char *file, int line)
{
	fprintf(stderr, "fastverbs: %s:%d: assertion failed: %s\n", file, line, cond);
	abort();
}
#define FV__ASSERT(cond) ((cond) ? (void)0 : fv__assert_fail(#cond, __FILE__, __LINE__))
#define FV__ASSERT_MSG(cond, msg) ((cond) ? (void)0 : fv__assert_fail(msg, __FILE__, __LINE__))
#else
#define FV__ASSERT(cond) ((void)0)
#define FV__ASSERT_MSG(cond, msg) ((void)0)
#endif

/* An initializer that zeroes every member, without a warning in either language. */
#ifdef __cplusplus
#define FV__ZERO_INIT {}
#else
#define FV__ZERO_INIT { 0 }
#endif

#endif /* FASTVERBS_PORTABLE_H */
