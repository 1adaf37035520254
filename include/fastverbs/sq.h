/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The send ring: producer/consumer counters in WQEBBs, free space, per-slot wr_id,
 * signalling policy, fence cache and the doorbell.
 *
 *   ci ........ rung_pi ........ last_pi ...... pi          (32-bit WQEBB counters)
 *   |retired    |device told     |last WQE built |next free
 *
 * The device gets only the low 16 bits (ctrl WQE index, doorbell record).
 */
#ifndef FASTVERBS_SQ_H
#define FASTVERBS_SQ_H

#include <errno.h>
#include "arch.h"
#include "wqe.h"

/* Per-WQE flags of the typed API: they are the control segment's fm_ce_se bits. */
enum {
	FV_SIGNALED  = MLX5_WQE_CTRL_CQ_UPDATE,	/* ask for a completion */
	FV_SOLICITED = MLX5_WQE_CTRL_SOLICITED,	/* solicited event at the responder */
	FV_FENCE     = MLX5_WQE_CTRL_FENCE,	/* wait for earlier READ/atomic responses */
};

struct fv_sq {
	struct fv_ring ring;
	uint32_t mask;		/* WQEBBs in the ring - 1 */
	uint32_t pi;		/* WQEBBs built */
	uint32_t ci;		/* WQEBBs the device is known to be done with */
	uint32_t rung_pi;	/* pi at the last doorbell */
	uint32_t last_pi;	/* first WQEBB of the last WQE built */
	uint32_t sig_pi;	/* pi just past the last WQE that asks for a completion */
	uint32_t unsig_max;	/* longest unsignaled run before fastverbs asks for a completion */
	__be32 qpn8;		/* qpn << 8, big-endian: the ctrl qpn_ds word without ds */
	uint8_t sig_all;	/* FV_SIGNALED when the QP was created with sq_sig_all */
	uint8_t fence_cache;	/* fence the next WQE owes to a local-invalidate / bind */
	volatile __be32 *dbrec;	/* send doorbell record (dbrec[MLX5_SND_DBR]) */
	uint8_t *bf_reg;	/* BlueFlame / UAR register base */
	uint32_t bf_size;	/* one BlueFlame half; 0 = 8-byte doorbells only */
	uint32_t bf_offset;	/* alternates between the two halves */
	uint64_t *wrid;		/* wr_id per slot */
	uint8_t *forced;	/* per slot: 1 if the completion was asked by fastverbs, not the caller */
};

/* WQEBBs a WQE of ds units occupies. */
static inline unsigned fv_ds_to_bb(unsigned ds)
{
	return (ds + 3) / 4;
}

/* Free WQEBBs: ring size minus what the device may still read. */
static inline uint32_t fv_sq_room(const struct fv_sq *sq)
{
	return sq->mask + 1 - (sq->pi - sq->ci);
}

/* Address of the next WQE's first block. */
static inline uint8_t *fv_sq_next_wqe(const struct fv_sq *sq)
{
	return sq->ring.buf + ((size_t)(sq->pi & sq->mask) << 6);
}

/*
 * fm_ce_se for the next WQE of nbb blocks. FENCE overrides a cached initiator fence, as in
 * libmlx5. An unsignaled run longer than unsig_max gets a completion fastverbs asks for
 * itself (and hides when polling), so ci can always advance and the ring always drains.
 */
static inline uint8_t fv_sq_fm_ce_se(struct fv_sq *sq, unsigned flags, unsigned nbb)
{
	uint8_t fm = (uint8_t)((flags & (FV_SIGNALED | FV_SOLICITED)) | sq->sig_all);
	uint32_t end = sq->pi + nbb;

	fm |= (flags & FV_FENCE) ? (uint8_t)FV_FENCE : sq->fence_cache;
	sq->fence_cache = 0;
	if (!(fm & FV_SIGNALED) && end - sq->sig_pi > sq->unsig_max) {
		fm |= FV_SIGNALED;
		sq->forced[sq->pi & sq->mask] = 1;
	}
	if (fm & FV_SIGNALED)
		sq->sig_pi = end;
	return fm;
}

/* The WQE at pi is complete: remember its wr_id and move the producer past it. */
static inline void fv_sq_commit(struct fv_sq *sq, uint64_t wr_id, unsigned nbb)
{
	sq->wrid[sq->pi & sq->mask] = wr_id;
	sq->last_pi = sq->pi;
	sq->pi += nbb;
}

/* BlueFlame-copy the WQE of ds units that starts at block counter at, block by block. */
static inline void fv_sq_bf_copy(const struct fv_sq *sq, uint8_t *reg, uint32_t at, unsigned ds)
{
	for (unsigned i = 0; i < fv_ds_to_bb(ds); i++)
		fv_bf_copy64(reg + i * FV_WQEBB,
			     sq->ring.buf + ((size_t)((at + i) & sq->mask) << 6));
}

/*
 * Tell the device about everything built since the last doorbell (invariant 2):
 * WQE stores -> DMA barrier -> doorbell record -> WC start -> BlueFlame copy of a lone WQE
 * that fits one BF half, else the 8-byte doorbell of the last WQE -> WC flush -> next half.
 */
static inline void fv_sq_ring(struct fv_sq *sq)
{
	uint32_t pi = sq->pi;
	const uint8_t *last = sq->ring.buf + ((size_t)(sq->last_pi & sq->mask) << 6);
	uint8_t *reg = sq->bf_reg + sq->bf_offset;
	unsigned ds;

	if (pi == sq->rung_pi)
		return;
	ds = last[7] & 0x3f;
	fv_dma_wmb();
	*sq->dbrec = htobe32(pi & 0xffff);
	fv_wc_start();
	if (sq->last_pi == sq->rung_pi && ds > 1 && ds * FV_DS <= sq->bf_size)
		fv_sq_bf_copy(sq, reg, sq->last_pi, ds);
	else
		fv_mmio_write64(reg, *(const uint64_t *)last);
	fv_wc_flush();
	sq->bf_offset ^= sq->bf_size;
	sq->rung_pi = pi;
}

/*
 * A requester completion (or error) for the WQE whose ctrl index is wqe_counter: everything
 * up to and including that WQE is retired. Returns its slot. The WQE's size is read back
 * from its own ctrl segment, which the device never writes.
 */
static inline uint32_t fv_sq_retire(struct fv_sq *sq, uint16_t wqe_counter)
{
	uint32_t start = sq->ci + (uint16_t)(wqe_counter - (uint16_t)sq->ci);
	uint32_t slot = start & sq->mask;
	unsigned ds = sq->ring.buf[((size_t)slot << 6) + 7] & 0x3f;

	sq->ci = start + fv_ds_to_bb(ds);
	return slot;
}

#endif /* FASTVERBS_SQ_H */
