/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every compiler-specific choice of the library, in one place. The other headers use only the
 * names below; none of them tests __GNUC__ or __clang__.
 *
 * Each switch steers how gcc 12 or clang 14 compile a caller's loop, not what the code does:
 * with -DFV_NO_TUNE every one of them takes its plain value and the library computes the same
 * WQEs, doorbells and completions (make test runs the unit and differential tests so built,
 * and at -O0, where FV__CONST_P is never true; make bench counts a FV_NO_TUNE build, so what
 * each trick still buys shows when compilers change). What a switch is worth is measured in
 * docs/performance.md at the section named.
 *
 *  switch              compiler  tuned value: what it does                          perf.md
 *  ------------------  --------  -------------------------------------------------  -------
 *  FV__ALWAYS_INLINE   both      always_inline on the pieces of a hot loop (when
 *                                optimising: at -O0, plain inline)                   §1.1
 *  FV__NOINLINE        both      noinline on paths a hot loop must not carry         §3
 *  FV__COLD            both      noinline + cold: rare paths out of the poll loop    §5
 *  FV__UNROLL(n)       both      unroll a loop over a constant count of units        §1.1
 *  FV__CONST_P(x)      both      __builtin_constant_p: a typed call's constants
 *                                pick the shorter path                               §1.2
 *  FV__HIDE(x)         both      x's value hidden from the optimiser (asm): the
 *                                compiler cannot carry or hoist what it computes     §1.2, §2
 *  FV__USE(...)        both      values read on every path (asm), so loads one arm
 *                                needs may leave a caller's loop                     §2
 *  FV__RELOAD()        both      memory read again after this point (asm): values
 *                                are not kept on the stack across stores             §3
 *  FV__VEC_STORES      gcc       a 16-byte unit stored as one vector                 §1.4
 *  FV__META_APART(m)   gcc       FV__HIDE between two stores gcc would pair          §2
 *  FV__FAST_EMPTY_2ND  gcc       fast path takes UD's empty SGE of a second block    §1.3
 *  FV__SPLIT_UNSIG     gcc       a copy of the builder for WRs without flags         §1.2
 *  FV__UD_PI_HIDDEN    gcc       UD's pi hidden from induction-variable passes       §3
 *  FV__EMPTY_ARITH     gcc       a typed builder drops an empty SGE's unit from the
 *                                ctrl's ds (and a UD one's second block from its
 *                                size) with no compare (build.h): gcc then moves
 *                                it out of a caller's loop                           §1.2, §1.3
 *  FV__INL_VEC16       gcc       a typed builder's short inline payload copied 16
 *                                bytes at a time, one unaligned vector load and
 *                                store each (wqe.h), not two 8-byte pairs            §1.2
 *  FV__SGE_WORD        clang     an SGE's length and lkey read as one word           §1.4
 *  FV__READ_PI(sq)     clang     the producer read anew (relaxed atomic) per WR      §1.4
 *  FV__EMPTY_COLD      clang     a typed empty SGE goes to the cold path             §1.4
 *  FV__DB_CHAIN        clang     x86 doorbell as a chain of non-volatile asms        §1.4
 *  FV__DB_LATE         gcc       fv_ring's, fv_post_send's and (on a typed handle)
 *                                fv_wr_complete's doorbell ask whether a lone WQE
 *                                fits a BlueFlame half after the register's lock:
 *                                two branches, not a flag kept across the exchange   §3.1
 *  FV__LOAD_VOLATILE   clang     x86: ci and the RQ tail read by a volatile load,
 *                                not a volatile asm (a store to all memory to clang) §1.4
 *  FV__SLOW_INLINE     clang     always_inline on fv__sq_take_slow: clang 14 calls
 *                                it out of line in loop (e), and a call in the loop
 *                                reloads the ring's fields every WR                  §1.4
 *  FV__WR_AV_AS_READ   clang     the fv_wr_* payload setters' AV arm on a struct
 *                                fv_qp builds a UD QP's WQE as UD's, the QP type
 *                                as read (plain: both as a DCI's, gen/wr.h)          §9
 *  FV__WR_CLEAR_SPENT  gcc       a typed handle's fv_wr_* payload setter clears the
 *                                open WQE's fields it has read, so that gcc drops
 *                                their stores in a caller's loop (compat/wr_batch.h) §9
 *  FV__WR_START_LEAN   gcc       a typed handle's fv_wr_start without locking takes
 *                                nothing (wr_open 3), so its batch's end has no unlock
 *                                to run (compat/wr_batch.h)                          §9
 *  FV__ETH_BUILD_EACH  gcc       fv_post_send builds a raw TSO in a copy of its own
 *                                (compat/post_send.h): a SEND's copy then has no
 *                                TSO field to test or to keep in a register          §3.1
 *
 * Plain values (FV_NO_TUNE, or a compiler that is neither): inline (FV__SLOW_INLINE too), no
 * attribute, no unroll hint, FV__CONST_P 0, no asm, the switches 0 and FV__READ_PI a plain load.
 *
 * FV__PLAIN_INIT(v): "= v" in a plain build only. Without forced inlining gcc cannot see that
 * a local is set on every path that reads it (-Wmaybe-uninitialized); tuned, the initialiser
 * would change the code.
 *
 * Compiler features the headers need whatever the tuning (not switched by FV_NO_TUNE):
 * FV__UNUSED, FV__NORETURN, FV__COMPILE_ERROR(msg).
 */
#ifndef FASTVERBS_TUNE_H
#define FASTVERBS_TUNE_H

#if defined(__GNUC__) || defined(__clang__)
#define FV__UNUSED __attribute__((unused))
#define FV__NORETURN __attribute__((noreturn))
/* On a function named only where calling it is the mistake (a _Generic branch of an
 * operation the handle lacks, ops.h): the compile error that names the mistake. */
#define FV__COMPILE_ERROR(msg) __attribute__((error(msg)))
#else
#define FV__UNUSED
#define FV__NORETURN
#define FV__COMPILE_ERROR(msg)
#endif

#if !defined(FV_NO_TUNE) && (defined(__GNUC__) || defined(__clang__))
#define FV__TUNED 1
/* Forced inlining at -O0 buys no speed and folds no constant (FV__CONST_P is 0 there), but
 * it copied every builder whole into each call site: a test file took 25 s to compile at
 * -O0 instead of 0.6 s, and a debugger could not step into the calls. */
#ifdef __OPTIMIZE__
#define FV__ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define FV__ALWAYS_INLINE inline
#endif
#define FV__NOINLINE __attribute__((noinline, unused))
#define FV__COLD __attribute__((noinline, cold, unused))
#define FV__PRAGMA(s) _Pragma(#s)
#define FV__UNROLL(n) FV__PRAGMA(GCC unroll n)
#define FV__CONST_P(x) __builtin_constant_p(x)
#define FV__HIDE(x) __asm__("" : "+r"(x))
#define FV__USE(...) __asm__("" : : __VA_ARGS__)
#define FV__RELOAD() __asm__ __volatile__("" ::: "memory")
#define FV__PLAIN_INIT(...)
#else
#define FV__TUNED 0
#define FV__ALWAYS_INLINE inline
#define FV__NOINLINE FV__UNUSED
#define FV__COLD FV__UNUSED
#define FV__UNROLL(n)
#define FV__CONST_P(x) 0
#define FV__HIDE(x) ((void)0)
#define FV__USE(...) ((void)0)
#define FV__RELOAD() ((void)0)
#define FV__PLAIN_INIT(...) = __VA_ARGS__
#endif

#if FV__TUNED && defined(__clang__)
#define FV__TUNED_CLANG 1
#define FV__TUNED_GCC 0
#elif FV__TUNED
#define FV__TUNED_CLANG 0
#define FV__TUNED_GCC 1
#else
#define FV__TUNED_CLANG 0
#define FV__TUNED_GCC 0
#endif

#define FV__VEC_STORES FV__TUNED_GCC
#define FV__FAST_EMPTY_2ND FV__TUNED_GCC
#define FV__SPLIT_UNSIG FV__TUNED_GCC
#define FV__UD_PI_HIDDEN FV__TUNED_GCC
#define FV__EMPTY_ARITH FV__TUNED_GCC
#define FV__INL_VEC16 FV__TUNED_GCC
#define FV__SGE_WORD FV__TUNED_CLANG
#define FV__EMPTY_COLD FV__TUNED_CLANG
#define FV__LOAD_VOLATILE FV__TUNED_CLANG
#define FV__WR_AV_AS_READ FV__TUNED_CLANG
#define FV__WR_CLEAR_SPENT FV__TUNED_GCC
#define FV__ETH_BUILD_EACH FV__TUNED_GCC
#define FV__DB_LATE FV__TUNED_GCC
#define FV__WR_START_LEAN FV__TUNED_GCC
#if FV__TUNED_GCC
#define FV__META_APART(m) FV__HIDE(m)
#else
#define FV__META_APART(m) ((void)0)
#endif
#if FV__TUNED_CLANG
#define FV__READ_PI(sq) __atomic_load_n(&(sq)->pi, __ATOMIC_RELAXED)
#else
#define FV__READ_PI(sq) ((sq)->pi)
#endif
#if FV__TUNED_CLANG && defined(__x86_64__)
#define FV__DB_CHAIN 1
#endif
#if FV__TUNED_CLANG
#define FV__SLOW_INLINE FV__ALWAYS_INLINE
#else
#define FV__SLOW_INLINE inline
#endif

#endif /* FASTVERBS_TUNE_H */
