/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One request -> one send WQE. Every typed builder (ops.h) and fv_post_send go through
 * fv_build(); the typed builders pass compile-time QP type, opcode, segments and payload
 * form, so the switch below and every ds computation fold away.
 *
 * Segment order (mlx5-formats.md §3.10):
 *   RC/UC      ctrl [raddr [atomic]] payload
 *   UD         ctrl av(48)           payload
 *   XRC_SEND   ctrl xrc [raddr [atomic]] payload
 */
#ifndef FASTVERBS_BUILD_H
#define FASTVERBS_BUILD_H

#include "qp.h"

#define FV_ALWAYS_INLINE inline __attribute__((always_inline))

enum fv_payload {
	FV_PL_NONE,		/* ctrl-only WQE (NOP) */
	FV_PL_SGL,		/* data segments from an SGE list */
	FV_PL_INLINE,		/* inline segment gathered from an SGE list */
};

enum { FV_SEG_RADDR = 1, FV_SEG_ATOMIC = 2 };

/* Everything one WQE needs; unused fields stay zero. */
struct fv_req {
	uint64_t wr_id;
	unsigned flags;			/* FV_SIGNALED | FV_SOLICITED | FV_FENCE */
	uint8_t opcode;			/* MLX5_OPCODE_* */
	uint8_t segs;			/* FV_SEG_RADDR | FV_SEG_ATOMIC */
	uint8_t payload;		/* enum fv_payload */
	__be32 imm;			/* immediate data, or BE32 rkey to invalidate */
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap_add, compare;	/* atomic operands */
	const struct mlx5_wqe_av *av;	/* UD destination */
	uint32_t remote_qpn, qkey;
	uint32_t srqn;			/* XRC destination SRQ */
	const struct ibv_sge *sgl;	/* the payload's pieces */
	int nsge;
	uint32_t len;			/* FV_PL_INLINE: total bytes */
};

/* Units of the transport segment (UD address vector, XRC SRQ number) a message carries. */
static FV_ALWAYS_INLINE unsigned fv_transport_ds(enum fv_qpt qpt)
{
	return qpt == FV_QPT_UD ? 3 : qpt == FV_QPT_XRC ? 1 : 0;
}

/* 16-byte units before the payload. A NOP (no payload at all) is the control segment alone. */
static FV_ALWAYS_INLINE unsigned fv_req_hdr_ds(enum fv_qpt qpt, const struct fv_req *r)
{
	if (r->payload == FV_PL_NONE)
		return 1;
	return 1 + fv_transport_ds(qpt) + !!(r->segs & FV_SEG_RADDR) + !!(r->segs & FV_SEG_ATOMIC);
}

/*
 * Payload units: one per non-empty SGE (empty ones are skipped, as libmlx5 does).
 * sge1: the payload is one SGE, known not to be empty.
 */
static FV_ALWAYS_INLINE unsigned fv_req_payload_ds(const struct fv_req *r, const int sge1)
{
	unsigned n = 0;

	if (sge1)
		return 1;
	if (r->payload == FV_PL_SGL) {
		for (int i = 0; i < r->nsge; i++)
			n += r->sgl[i].length != 0;
		return n;
	}
	if (r->payload == FV_PL_INLINE)
		return r->len ? fv_inline_ds(r->len) : 0;
	return 0;
}

/* fv_build's body; sge1 as for fv_req_payload_ds. */
static FV_ALWAYS_INLINE int fv_build_wqe(struct fv_qp *qp, enum fv_qpt qpt, const struct fv_req *r,
					 const int sge1)
{
	struct fv_sq *sq = &qp->sq;
	const struct fv_ring *ring = &sq->ring;
	unsigned hdr = fv_req_hdr_ds(qpt, r), ds, nbb, max_ds = FV_MAX_DS;
	__be32 fm;

	if (r->payload == FV_PL_SGL) {
		if (r->nsge != 1 && (unsigned)r->nsge > qp->max_send_sge)	/* also nsge < 0 */
			return ENOMEM;
		max_ds = hdr + (unsigned)r->nsge;
	} else if (r->payload == FV_PL_INLINE) {
		if (r->len > qp->max_inline)
			return ENOMEM;
	} else {
		max_ds = hdr;
	}
	ds = hdr + fv_req_payload_ds(r, sge1);
	nbb = fv_ds_to_bb(ds);
	if (!fv_sq_take(sq, r->flags, nbb, &fm))
		return ENOMEM;

	/* A WQE that fits its first block never meets the ring end. */
	bool may_wrap = max_ds > 4 && ds > 4;
	uint8_t *wqe = fv_sq_next_wqe(sq), *p = wqe + FV_DS;

	if (qpt == FV_QPT_XRC && r->payload != FV_PL_NONE)
		p = fv_wqe_xrc(ring, p, r->srqn, may_wrap);
	if (qpt == FV_QPT_UD && r->payload != FV_PL_NONE)
		p = fv_wqe_av(ring, p, r->av, r->remote_qpn, r->qkey, may_wrap);
	if (r->segs & FV_SEG_RADDR)
		p = fv_wqe_raddr(ring, p, r->raddr, r->rkey, may_wrap);
	if (r->segs & FV_SEG_ATOMIC)
		p = fv_wqe_atomic(ring, p, r->swap_add, r->compare, may_wrap);
	if (r->payload == FV_PL_SGL) {
		for (int i = 0; i < r->nsge; i++) {
			const struct ibv_sge *s = &r->sgl[i];

			if (!sge1 && !s->length)
				continue;
			if (r->segs & FV_SEG_ATOMIC)	/* an atomic's result is always 8 bytes */
				p = fv_wqe_data(ring, p, 8, s->lkey, s->addr, may_wrap);
			else
				p = fv_wqe_sge(ring, p, s, may_wrap);
		}
	} else if (r->payload == FV_PL_INLINE && r->len) {
		fv_wqe_inline(ring, p, r->sgl, r->nsge, r->len, may_wrap);
	}
	fv_wqe_ctrl(wqe, sq->pi, 0, r->opcode, sq->qpn8, ds, fm, r->imm);
	fv_sq_commit(sq, r->wr_id, r->flags, nbb);
	return 0;
}

/*
 * Build the request's WQE at the producer counter and commit it; no doorbell.
 * Checks only what can vary at run time on the typed path: SGE count (beyond one),
 * inline length and ring space. Returns 0 or ENOMEM (libmlx5's errno for all three);
 * nothing is written when it refuses.
 *
 * With one SGE (the typed one-SGE builders) the WQE's size is a constant, and folds into
 * its stores, unless the SGE is empty and takes no data segment: a second copy of the body
 * for that rare case (a call would cost more: the compiler forgets the ring's fields).
 */
static FV_ALWAYS_INLINE int fv_build(struct fv_qp *qp, enum fv_qpt qpt, const struct fv_req *r)
{
	if (r->payload == FV_PL_SGL && r->nsge == 1 && __builtin_expect(r->sgl[0].length != 0, 1))
		return fv_build_wqe(qp, qpt, r, 1);
	return fv_build_wqe(qp, qpt, r, 0);
}

#endif /* FASTVERBS_BUILD_H */
