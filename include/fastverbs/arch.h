/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DMA and MMIO ordering, per architecture.
 *
 * The posting order (DESIGN.md invariant 2) needs five primitives:
 *
 *   fv_dma_wmb()        WQE stores visible to the device before the doorbell record
 *   fv_dma_rmb()        after a CQE's owner check, before reading the rest of it
 *   fv_dma_rmb64(p)     the same barrier, the compiler told that only the 64 bytes at p
 *                       (a CQE) are read after it: it keeps other memory in registers
 *   fv_wc_start()       doorbell record visible before the MMIO store
 *   fv_wc_flush()       push the write-combining buffer out (one doorbell = one burst)
 *   fv_mmio_write64()   one 8-byte store to the UAR / BlueFlame register
 *   fv_bf_copy64()      one 64-byte BlueFlame chunk, stores kept in order (never memcpy)
 */
#ifndef FASTVERBS_ARCH_H
#define FASTVERBS_ARCH_H

#include <stdint.h>

/* 64 bytes the device writes (fv_dma_rmb64). */
struct fv_dma64 {
	char b[64];
};

#if defined(__x86_64__)

/* x86 keeps normal stores ordered; only the WC buffer needs sfence. */
#define fv_dma_wmb()  __asm__ __volatile__("" ::: "memory")
#define fv_dma_rmb()  __asm__ __volatile__("lfence" ::: "memory")
#define fv_dma_rmb64(p) __asm__ __volatile__("lfence" : "+m"(*(struct fv_dma64 *)(uintptr_t)(p)))
#define fv_wc_flush() __asm__ __volatile__("sfence" ::: "memory")
#define fv_wc_start() fv_wc_flush()

/* Four aligned 16-byte stores in ascending order, one asm block so the compiler cannot
 * reorder them; they fill one write-combining line. */
static inline void fv_bf_copy64(void *dst, const void *src)
{
	__asm__ __volatile__(
		"movdqa   (%1), %%xmm0\n\t"
		"movdqa 16(%1), %%xmm1\n\t"
		"movdqa 32(%1), %%xmm2\n\t"
		"movdqa 48(%1), %%xmm3\n\t"
		"movdqa %%xmm0,   (%0)\n\t"
		"movdqa %%xmm1, 16(%0)\n\t"
		"movdqa %%xmm2, 32(%0)\n\t"
		"movdqa %%xmm3, 48(%0)"
		: : "r"(dst), "r"(src) : "xmm0", "xmm1", "xmm2", "xmm3", "memory");
}

#elif defined(__aarch64__)
#include <arm_neon.h>

#define fv_dma_wmb()  __asm__ __volatile__("dmb oshst" ::: "memory")
#define fv_dma_rmb()  __asm__ __volatile__("dmb oshld" ::: "memory")
#define fv_dma_rmb64(p) __asm__ __volatile__("dmb oshld" : "+m"(*(struct fv_dma64 *)(uintptr_t)(p)))
#define fv_wc_flush() __asm__ __volatile__("dsb st" ::: "memory")
#define fv_wc_start() fv_wc_flush()

/* ld4/st4 de-interleave and re-interleave: one 64-byte store instruction, in order. */
static inline void fv_bf_copy64(void *dst, const void *src)
{
	vst4q_u64((uint64_t *)dst, vld4q_u64((const uint64_t *)src));
}

#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)

#define fv_dma_wmb()  __asm__ __volatile__("sync" ::: "memory")
#define fv_dma_rmb()  __asm__ __volatile__("lwsync" ::: "memory")
#define fv_dma_rmb64(p) __asm__ __volatile__("lwsync" : "+m"(*(struct fv_dma64 *)(uintptr_t)(p)))
#define fv_wc_flush() __asm__ __volatile__("sync" ::: "memory")
#define fv_wc_start() fv_wc_flush()
#define FV_BF_COPY_BY_WORDS 1

#else /* portable fallback: full fences, word-by-word copy */

#define fv_dma_wmb()  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define fv_dma_rmb()  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define fv_dma_rmb64(p) fv_dma_rmb()
#define fv_wc_flush() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define fv_wc_start() fv_wc_flush()
#define FV_BF_COPY_BY_WORDS 1

#endif

/* One 8-byte MMIO store; volatile so it is neither split, merged nor reordered by the compiler. */
static inline void fv_mmio_write64(void *reg, uint64_t val)
{
	*(volatile uint64_t *)reg = val;
}

#ifdef FV_BF_COPY_BY_WORDS
/* Eight 8-byte stores in ascending address order. */
static inline void fv_bf_copy64(void *dst, const void *src)
{
	volatile uint64_t *d = (volatile uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;

	for (int i = 0; i < 8; i++)
		d[i] = s[i];
}
#endif

#endif /* FASTVERBS_ARCH_H */
