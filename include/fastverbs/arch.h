/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DMA and MMIO ordering, per architecture.
 *
 * The posting order (docs/design.md §3.2) needs these primitives:
 *
 *   fv__dma_wmb()        WQE stores visible to the device before the doorbell record
 *   fv__dma_wmb_sq(p)    the same barrier before a send doorbell, the compiler told that the
 *                       device only reads memory (p: the send ring): every store before it
 *                       stays before it, but nothing the program read is stale after it
 *   fv__dma_wmb_at(p)    fv__dma_wmb_sq on a pointer already hidden (fv__untraced)
 *   fv__dbrec_publish32(rec, v)  fv__dma_wmb_sq, then v stored to the doorbell record rec
 *                       (a receive queue's doorbell)
 *   fv__dma_rmb()        after a CQE's owner check, before reading the rest of it
 *   fv__dma_rmb64(p)     the same barrier, the compiler told that only the 64 bytes at p
 *                       (a CQE) are read after it: it keeps other memory in registers
 *   fv__wc_start()       doorbell record visible before the MMIO store
 *   fv__wc_flush()       push the write-combining buffer out (one doorbell = one burst)
 *   fv__mmio_write64()   one 8-byte store to the UAR / BlueFlame register
 *   fv__bf_copy64()      one 64-byte BlueFlame chunk, stores kept in order (never memcpy)
 */
#ifndef FASTVERBS_ARCH_H
#define FASTVERBS_ARCH_H

#include <stdint.h>
#include "tune.h"

/*
 * p, as an asm's output: the compiler cannot tell what it points to. A barrier that reads
 * memory through it is then a reader of any buffer, even where the compiler knows the ring
 * p points into (tests/codegen, probe_barrier_own_ring).
 */
static inline const void *fv__untraced(const void *p)
{
	__asm__("" : "+r"(p));
	return p;
}

/* 64 bytes the device writes (fv__dma_rmb64). */
struct fv__dma64 {
	char b[64];
};

#if defined(__x86_64__)

/*
 * x86 keeps normal stores ordered; only the WC buffer needs sfence. On the send doorbell's
 * path no asm clobbers "memory": the first one reads memory of unknown extent (so every
 * store before it, WQE or payload, is made before it), the rest are volatile (kept in order
 * with it and with the doorbell record's volatile store) and touch no memory the program
 * reads, so the ring's fields and the caller's requests stay in registers across a doorbell.
 * The "# fv__dma_wmb_sq" marker lets tests/codegen check the order in the compiled code.
 */
#define fv__dma_wmb()  __asm__ __volatile__("" ::: "memory")
#define fv__dma_wmb_at(p) __asm__ __volatile__("# fv__dma_wmb_sq" : : "m"(*(const char *)(p)))
#define fv__dma_wmb_sq(p) fv__dma_wmb_at(fv__untraced(p))
/*
 * x86 does not reorder a load with an older load, and the device writes the CQE to coherent
 * memory before its owner bit: reading the rest after the owner check needs the compiler kept
 * in order, no lfence (the kernel's x86 dma_rmb() is the same compiler barrier).
 */
#define fv__dma_rmb()  __asm__ __volatile__("" ::: "memory")
#define fv__dma_rmb64(p) __asm__ __volatile__("" : "+m"(*(struct fv__dma64 *)(uintptr_t)(p)))
#define fv__wc_flush() __asm__ __volatile__("sfence" : :)	/* extended asm: a basic one clobbers memory */
#define fv__wc_start() fv__wc_flush()

/* 16 bytes of a WQE, read as any type may have written them (a WQE's parts are stored
 * through several, wqe.h): the compiler then reads them after every store to them. */
typedef uint64_t fv_bf_vec __attribute__((vector_size(16), may_alias));

/*
 * Four aligned 16-byte stores in ascending order, one asm block so the compiler cannot
 * reorder them; they fill one write-combining line. The 64 bytes at src are read in C, into
 * registers the compiler picks. What the asm writes (a write-only register) the program
 * never reads.
 */
static inline void fv__bf_copy64(void *dst, const void *src)
{
	const fv_bf_vec *s = (const fv_bf_vec *)src;

	__asm__ __volatile__(
		"movdqa %1,   (%0)\n\t"
		"movdqa %2, 16(%0)\n\t"
		"movdqa %3, 32(%0)\n\t"
		"movdqa %4, 48(%0)"
		: : "r"(dst), "x"(s[0]), "x"(s[1]), "x"(s[2]), "x"(s[3]));
}

/*
 * clang gives a volatile asm (and any without outputs) no memory attributes: it takes it for
 * a store to anything, and reads the ring's fields and the caller's requests again after a
 * doorbell. Under clang the send doorbell is instead a chain of asms that are not volatile,
 * each passing the BlueFlame register on to the next (so they stay in order and none is
 * dropped): the first reads memory of unknown extent (the barrier: every store before it
 * stays before it), then stores the doorbell record itself; the others touch no memory the
 * program reads. Same instructions as above.
 */
#ifdef FV__DB_CHAIN

/*
 * Barrier, doorbell record val at rec, WC start; returns reg, to be passed on. The record is
 * the memory operand the barrier reads: hidden from the compiler, it stands for any memory,
 * and rec's register is free after it (a copy of the ring's pointer cost a move per doorbell).
 * The store to it is not declared: the program never reads the record.
 */
static inline uintptr_t fv__db_start(volatile void *rec, uint32_t val, uintptr_t reg)
{
	__asm__("# fv__dma_wmb_sq\n\t"
		"movl %k2, %1\n\t"
		"sfence"
		: "+r"(reg) : "m"(*(const char *)fv__untraced((const void *)(uintptr_t)rec)), "r"(val));
	return reg;
}

/* fv__bf_copy64 of src to reg + off (off: a multiple of 64 below the BlueFlame half's size); returns reg. */
static inline uintptr_t fv__db_bf64(uintptr_t reg, uintptr_t off, const void *src)
{
	const fv_bf_vec *s = (const fv_bf_vec *)src;

	__asm__("movdqa %2,   (%0,%1)\n\t"
		"movdqa %3, 16(%0,%1)\n\t"
		"movdqa %4, 32(%0,%1)\n\t"
		"movdqa %5, 48(%0,%1)"
		: "+r"(reg) : "r"(off), "x"(s[0]), "x"(s[1]), "x"(s[2]), "x"(s[3]));
	return reg;
}

/* fv__db_bf64 at reg itself. */
static inline uintptr_t fv__db_bf64_0(uintptr_t reg, const void *src)
{
	const fv_bf_vec *s = (const fv_bf_vec *)src;

	__asm__("movdqa %1,   (%0)\n\t"
		"movdqa %2, 16(%0)\n\t"
		"movdqa %3, 32(%0)\n\t"
		"movdqa %4, 48(%0)"
		: "+r"(reg) : "x"(s[0]), "x"(s[1]), "x"(s[2]), "x"(s[3]));
	return reg;
}

/* The 8-byte doorbell val at reg; returns reg. */
static inline uintptr_t fv__db_word(uintptr_t reg, uint64_t val)
{
	__asm__("movq %1, (%0)" : "+r"(reg) : "r"(val));
	return reg;
}

/* WC flush; returns reg. */
static inline uintptr_t fv__db_flush(uintptr_t reg)
{
	__asm__("sfence" : "+r"(reg));
	return reg;
}
#endif

#elif defined(__aarch64__)
#include <arm_neon.h>

#define fv__dma_wmb()  __asm__ __volatile__("dmb oshst" ::: "memory")
#define fv__dma_wmb_sq(p) fv__dma_wmb()
#define fv__dma_rmb()  __asm__ __volatile__("dmb oshld" ::: "memory")
#define fv__dma_rmb64(p) __asm__ __volatile__("dmb oshld" : "+m"(*(struct fv__dma64 *)(uintptr_t)(p)))
#define fv__wc_flush() __asm__ __volatile__("dsb st" ::: "memory")
#define fv__wc_start() fv__wc_flush()

/* ld4/st4 de-interleave and re-interleave: one 64-byte store instruction, in order. */
static inline void fv__bf_copy64(void *dst, const void *src)
{
	vst4q_u64((uint64_t *)dst, vld4q_u64((const uint64_t *)src));
}

#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)

#define fv__dma_wmb()  __asm__ __volatile__("sync" ::: "memory")
#define fv__dma_wmb_sq(p) fv__dma_wmb()
#define fv__dma_rmb()  __asm__ __volatile__("lwsync" ::: "memory")
#define fv__dma_rmb64(p) __asm__ __volatile__("lwsync" : "+m"(*(struct fv__dma64 *)(uintptr_t)(p)))
#define fv__wc_flush() __asm__ __volatile__("sync" ::: "memory")
#define fv__wc_start() fv__wc_flush()
#define FV__BF_COPY_BY_WORDS 1

#else /* portable fallback: full fences, word-by-word copy */

#define fv__dma_wmb()  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define fv__dma_wmb_sq(p) fv__dma_wmb()
#define fv__dma_rmb()  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define fv__dma_rmb64(p) fv__dma_rmb()
#define fv__wc_flush() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define fv__wc_start() fv__wc_flush()
#define FV__BF_COPY_BY_WORDS 1

#endif

#ifndef fv__dma_wmb_at
#define fv__dma_wmb_at(p) fv__dma_wmb()
#endif

/*
 * Doorbell stores go through types of fastverbs' own (as WQE stores do, wqe.h): the compiler
 * then knows they change none of the program's uint32_t or uint64_t data, and keeps what it
 * read of it in registers. Volatile, so a store is neither split, merged nor reordered.
 */
struct fv__db32 {
	uint32_t v;
};

struct fv__db64 {
	uint64_t v;
};

/* Orders the compiler's memory accesses only (no instruction): what comes after stays after. */
#define fv__compiler_barrier() __asm__ __volatile__("" ::: "memory")

/* One 4-byte store to a doorbell record (host memory the device reads). */
static inline void fv__dbrec_write32(volatile void *rec, uint32_t val)
{
	((volatile struct fv__db32 *)rec)->v = val;
}

/*
 * fv__dma_wmb_sq, then fv__dbrec_write32 (a receive queue's doorbell: nothing but the record
 * to write). The barrier's hidden pointer is the store's too, where the two statements
 * needed the pointer in two registers (the hiding asm changes its register).
 */
static inline void fv__dbrec_publish32(volatile void *rec, uint32_t val)
{
	uintptr_t p = (uintptr_t)rec;

	__asm__("" : "+r"(p));	/* fv__untraced, on an integer: as a pointer, gcc allocates worse */
	fv__dma_wmb_at(p);
	((volatile struct fv__db32 *)p)->v = val;
}

/* One 8-byte MMIO store. */
static inline void fv__mmio_write64(void *reg, uint64_t val)
{
	((volatile struct fv__db64 *)reg)->v = val;
}

#ifdef FV__BF_COPY_BY_WORDS
/* Eight 8-byte stores in ascending address order. */
static inline void fv__bf_copy64(void *dst, const void *src)
{
	typedef uint64_t __attribute__((may_alias)) fv_any64;	/* as fv_bf_vec: written by any type */
	volatile uint64_t *d = (volatile uint64_t *)dst;
	const fv_any64 *s = (const fv_any64 *)src;

	for (int i = 0; i < 8; i++)
		d[i] = s[i];
}
#endif

#endif /* FASTVERBS_ARCH_H */
