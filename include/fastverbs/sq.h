/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The send ring: producer/consumer counters in WQEBBs, free space, per-slot wr_id and end,
 * signalling policy, fence cache and the doorbell.
 *
 *   ci ........ rung_pi ........ last_pi ...... pi ........ lim     (32-bit WQEBB counters)
 *   |retired    |device told     |last WQE built |next free  |fast path ends
 *
 * The device gets only the low 16 bits (ctrl WQE index, doorbell record).
 *
 * Building a WQE costs one test beyond its stores: does it end at or before lim? lim is the
 * nearer of ci + ring size (room, as of the last look at ci) and sig_pi + unsig_max (where
 * the unsignaled run would need a forced completion); a cached fence sets it to pi. Past lim,
 * fv_sq_take_slow() decides with the live ci and moves lim on. ci only grows, so a stale lim is
 * merely early. pi <= lim <= pi + ring size always: only fv_sq_set_pi, fv_sq_cache_fence and
 * fv_sq_take_slow set lim, so set the counters and the fence through them.
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

/*
 * Building a WQE (inline payloads aside) stores only 64-bit words (WQE, wr_id, end) and 32-bit
 * counters of this struct, and calls nothing: the compiler can tell those stores apart and
 * need not reload the struct's fields after each of them (so no uint8_t fields either: a char
 * may alias anything).
 */
struct fv_sq {
	/* Building a WQE: */
	struct fv_ring ring;
	uint64_t *wrid;		/* wr_id per slot (slot: a WQE's first WQEBB) */
	uint64_t *end;		/* per slot: the counter just past the WQE (ci once it completes),
				 * | FV_SQ_ASKED if its caller asked for a completion */
	uint32_t mask;		/* WQEBBs in the ring - 1 */
	uint32_t pi;		/* WQEBBs built */
	uint32_t lim;		/* WQEs that end at or before lim take the fast path (see top) */
	uint32_t last_pi;	/* first WQEBB of the last WQE built */
	uint32_t qpn8;		/* qpn << 8: the ctrl qpn_ds word without ds */
	__be32 sig_all;		/* FV_SIGNALED when the QP was created with sq_sig_all, as in fm_be */
	/* Ringing: */
	uint32_t rung_pi;	/* pi at the last doorbell */
	uint32_t bf_offset;	/* alternates between the two halves */
	uint8_t *bf_reg;	/* BlueFlame / UAR register base */
	volatile __be32 *dbrec;	/* send doorbell record (dbrec[MLX5_SND_DBR]) */
	uint32_t bf_size;	/* one BlueFlame half; 0 = 8-byte doorbells only */
	/* Completions and the slow path: */
	uint32_t ci;		/* WQEBBs the device is known to be done with */
	uint32_t sig_pi;	/* pi just past the last WQE known to ask for a completion */
	uint32_t unsig_max;	/* longest unsignaled run before fastverbs asks for a completion */
	uint32_t fence_cache;	/* fence the next WQE owes to a local-invalidate / bind */
};

#define FV_SQ_ASKED (1ull << 63)	/* in end[]: the caller's FV_SIGNALED (the sign: one test) */

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

/* The nearer of the two limits of the fast path (see top), both at or past pi. */
static inline uint32_t fv_sq_lim(const struct fv_sq *sq)
{
	uint32_t room_end = sq->ci + sq->mask + 1, run_end = sq->sig_pi + sq->unsig_max;

	return room_end - sq->pi < run_end - sq->pi ? room_end : run_end;
}

/* An empty ring whose counters all start at pi (taking a QP over; tests start anywhere). */
static inline void fv_sq_set_pi(struct fv_sq *sq, uint32_t pi)
{
	sq->pi = sq->ci = sq->rung_pi = sq->sig_pi = pi;
	sq->last_pi = pi - 1;	/* not rung_pi: fv_sq_ring takes that for a WQE to ring */
	sq->lim = fv_sq_lim(sq);
}

/* The next WQE owes fm (an initiator fence) to the one before; FV_FENCE on it overrides. */
static inline void fv_sq_cache_fence(struct fv_sq *sq, uint8_t fm)
{
	sq->fence_cache = fm;
	sq->lim = sq->pi;	/* so the next WQE takes the slow path, which applies it */
}

/*
 * fv_sq_take past lim: room from the live ci, the cached fence, and the unsignaled run: one
 * longer than unsig_max WQEBBs gets a completion fastverbs asks for itself (and hides when
 * polling: see fv_sq_forced), so ci can always advance and the ring always drains.
 * Inline, not called: a call would make the compiler forget the ring's fields.
 */
static inline bool fv_sq_take_slow(struct fv_sq *sq, unsigned nbb, __be32 *fm_be)
{
	uint32_t end = sq->pi + nbb, fm = be32toh(*fm_be);

	if (nbb > fv_sq_room(sq))
		return false;
	if (!(fm & FV_FENCE))
		fm |= sq->fence_cache;
	sq->fence_cache = 0;
	if (!(fm & FV_SIGNALED) && end - sq->sig_pi > sq->unsig_max)
		fm |= FV_SIGNALED;
	if (fm & FV_SIGNALED)
		sq->sig_pi = end;
	sq->lim = fv_sq_lim(sq);
	*fm_be = htobe32(fm);
	return true;
}

/*
 * Take the next nbb blocks for a WQE built with flags; its fm_ce_se goes to *fm_be as the
 * ctrl segment's big-endian word at byte 8 (signature and stream id 0): built that way, a
 * WQE needs no byte swap for it. Returns false, changing nothing, if the ring has no room.
 * FENCE overrides a cached initiator fence, as in libmlx5. Call right before writing the
 * WQE: it takes the cached fence and a place in the unsignaled run.
 */
static inline bool fv_sq_take(struct fv_sq *sq, unsigned flags, unsigned nbb, __be32 *fm_be)
{
	*fm_be = htobe32(flags & (FV_SIGNALED | FV_SOLICITED | FV_FENCE)) | sq->sig_all;
	if (__builtin_expect(nbb > sq->lim - sq->pi, 0))	/* pi <= lim <= pi + ring size */
		return fv_sq_take_slow(sq, nbb, fm_be);
	/* sq_sig_all WQEs leave sig_pi behind (one test less here); fv_sq_take_slow catches up. */
	if (flags & FV_SIGNALED)
		sq->sig_pi = sq->pi + nbb;
	return true;
}

/*
 * The WQE at pi, built with flags, is complete: remember its wr_id, its end and whether its
 * caller asked for a completion, and move the producer past it.
 */
static inline void fv_sq_commit(struct fv_sq *sq, uint64_t wr_id, unsigned flags, unsigned nbb)
{
	uint32_t pi = sq->pi, slot = pi & sq->mask;

	sq->wrid[slot] = wr_id;
	sq->end[slot] = (flags & FV_SIGNALED ? FV_SQ_ASKED : 0) | (uint32_t)(pi + nbb);
	sq->last_pi = pi;
	sq->pi = pi + nbb;
}

/*
 * Tell the device about everything built since the last doorbell (invariant 2):
 * WQE stores -> DMA barrier -> doorbell record -> WC start -> BlueFlame copy of a lone WQE
 * that fits one BF half, else the 8-byte doorbell of the last WQE -> WC flush -> next half.
 * Everything is read before the first barrier (the barriers make the compiler forget memory).
 * Always inlined: right after a build, the compiler still knows the last WQE's place.
 */
static inline __attribute__((always_inline)) void fv_sq_ring(struct fv_sq *sq)
{
	uint32_t pi = sq->pi, last = sq->last_pi, mask = sq->mask;
	const uint8_t *buf = sq->ring.buf, *wqe = buf + ((size_t)(last & mask) << 6);
	uint8_t *reg = sq->bf_reg + sq->bf_offset;
	unsigned ds = wqe[7];	/* low byte of qpn_ds: the 6-bit ds, its upper bits 0 */
	/* lone: the last WQE is the first since the doorbell (never on an empty ring: set_pi) */
	bool lone = last == sq->rung_pi, bf = lone && ds > 1 && ds * FV_DS <= sq->bf_size;

	if (!lone && pi == sq->rung_pi)
		return;
	fv_dma_wmb();
	*sq->dbrec = htobe32(pi & 0xffff);
	fv_wc_start();
	if (bf) {
		fv_bf_copy64(reg, wqe);
		for (unsigned i = 1; i * 4 < ds; i++)	/* its other blocks; it may continue at block 0 */
			fv_bf_copy64(reg + i * FV_WQEBB, buf + ((size_t)((last + i) & mask) << 6));
	} else {
		fv_mmio_write64(reg, *(const uint64_t *)wqe);
	}
	fv_wc_flush();
	sq->bf_offset ^= sq->bf_size;
	sq->rung_pi = pi;
}

/*
 * A requester completion (or error) for the WQE whose ctrl index is wqe_counter: everything
 * up to and including that WQE is retired. Returns its slot. The ring has at most 2^16
 * WQEBBs (fv_qp_init_geom), so the 16-bit index names the slot.
 */
static inline uint32_t fv_sq_retire(struct fv_sq *sq, uint16_t wqe_counter)
{
	uint32_t slot = wqe_counter & sq->mask;

	sq->ci = (uint32_t)sq->end[slot];
	return slot;
}

/*
 * Whether a completion for the WQE in slot is one fastverbs forced: its caller asked for
 * none (no FV_SIGNALED, no sq_sig_all), so it completes only because fastverbs signaled it
 * (or failed). Nothing to clear: the next WQE in the slot rewrites its end[].
 */
static inline bool fv_sq_forced(const struct fv_sq *sq, uint32_t slot)
{
	return !(sq->end[slot] & FV_SQ_ASKED) && !sq->sig_all;
}

#endif /* FASTVERBS_SQ_H */
