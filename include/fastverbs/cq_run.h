/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The run cache of a CQ (struct fv_cq_run, cq_init.h): successful requester completions of
 * one QP and send opcode, which differ only in their WQE, decoded from the WQE index alone.
 */
#ifndef FASTVERBS_CQ_RUN_H
#define FASTVERBS_CQ_RUN_H

#include "cq_decode.h"

FV_EXTERN_C_BEGIN

/*
 * Whether the completion cqe, just reported at o for qp, starts a run (struct fv_cq_run): the
 * second in a row of its QP and send opcode (so that the completions of QPs taking turns do
 * not start one each), a successful requester completion (op_own is exactly REQ, format 0,
 * the owner bit own) whose byte_len the WQE does not decide; not for sq_sig_all QPs, whose
 * WQEs' ends are not written (sq.h). If so the run takes its completion (the wr_id is each
 * CQE's own).
 */
static inline __attribute__((always_inline)) void
fv__cq_run_start(struct fv_cq_run *run, struct fv_qp *qp, const struct mlx5_cqe64 *cqe, uint8_t op_own,
		uint32_t own, const void *o, const int ibv)
{
	const unsigned np = (ibv ? sizeof(struct ibv_wc) : sizeof(struct fv_wc)) / 16;

	if (run->last != cqe->sop_drop_qpn) {
		run->last = cqe->sop_drop_qpn;
		return;
	}
	if (op_own != own || !qp || qp->sq.sig_all ||
	    (fv_req_op[*(const uint8_t *)&cqe->sop_drop_qpn] & (FV_REQ_CNT | FV_REQ_UMR)))
		return;
	run->key = cqe->sop_drop_qpn;	/* its tag is already the call's (fv__cq_poll_core) */
	run->qp = qp;
	for (unsigned i = 0; i < np; i++)
		run->t[i] = *fv__wc_piece((void *)(uintptr_t)o, ibv, i);
}

/*
 * Store the run's completion t with wr_id at o (struct ibv_wc if ibv): the pieces as they
 * are, then the wr_id over the first's first word. In a loop the pieces stay in vector
 * registers.
 */
static inline __attribute__((always_inline)) void
fv__cqe_put_run(void *o, const int ibv, uint64_t wr_id, const fv_u64x2 *t)
{
	*fv__wc_piece(o, ibv, 0) = t[0];
	*fv__wc_word(o, ibv, 0) = wr_id;
	*fv__wc_piece(o, ibv, 1) = t[1];
	if (ibv)
		*fv__wc_piece(o, ibv, 2) = t[2];
}

/*
 * The slot of the WQE the CQE at cqe completes if it is one of the CQ's run (struct
 * fv__cq_run), else -1. A CQE of the run is one byte (op_own: REQ, format 0, the owner bit
 * own) and one word (its sop_drop_qpn) away from the run's key, so three tests decide it;
 * not one whose WQE the general path must see (forced by fastverbs). Its completion is the
 * run's but for the wr_id of its WQE (fv__cqe_put_run). The QP's fields (mask, meta) come from
 * the caller, who keeps them in registers in a loop (nothing here stores where they are).
 *
 * A WQE the run completes asked for a completion (sq_sig_all QPs have no runs), so its end
 * (the SQ's ci once retired) was written (sq.h).
 */
static inline __attribute__((always_inline)) int32_t
fv__cq_run_slot(const struct mlx5_cqe64 *cqe, uint32_t own, __be32 key, uint32_t mask,
	       const struct fv_sq_meta *meta)
{
	if (cqe->op_own != own)
		return -1;
	fv__dma_rmb64(cqe);	/* the rest of the CQE only after its owner bit */
	if (cqe->sop_drop_qpn != key)
		return -1;

	uint32_t slot = be16toh(cqe->wqe_counter) & mask;

	return meta[slot].forced == meta[slot].end ? -1 : (int32_t)slot;
}

/*
 * Whether the CQE at off looks like one of the CQ's run, read before any barrier: a hint,
 * fv__cq_run_slot decides. It saves setting a run up for a CQE that is not.
 */
static inline __attribute__((always_inline)) bool fv__cq_run_looks(const struct fv_cq *cq, uint32_t off,
								   uint32_t own)
{
	const struct mlx5_cqe64 *cqe = (const struct mlx5_cqe64 *)(cq->buf64 + off);

	return cqe->op_own == own && cqe->sop_drop_qpn == cq->run.key;
}

/*
 * The CQEs of the CQ's run from off on (fv__cq_run_slot), into o up to end, and up to the ring
 * end. Moves off and o past what it consumed, and the SQ's ci past their WQEs. A loop of its
 * own: the QP's fields and the run's completion stay in registers.
 */
static inline __attribute__((always_inline)) void
fv__cq_run(const struct fv_cq *cq, uint32_t *offp, uint32_t own, uint8_t **op, const uint8_t *end,
	  const int ibv)
{
	const size_t osz = ibv ? sizeof(struct ibv_wc) : sizeof(struct fv_wc);
	const uint8_t *c = cq->buf64 + *offp;	/* the next CQE */
	struct fv_sq *sq = &cq->run.qp->sq;
	const struct fv_sq_meta *meta = sq->meta;
	const struct fv_wr_id *wr_id = sq->wr_id;
	uint32_t size = cq->cqe_size, mask = sq->mask;
	__be32 key = cq->run.key;
	fv_u64x2 t[3] = { cq->run.t[0], cq->run.t[1], ibv ? cq->run.t[2] : cq->run.t[1] };
	uint8_t *o = *op, *stop = o + (size_t)((cq->ring - *offp) >> cq->shift) * osz;	/* the ring end */

	if (stop > end)
		stop = (uint8_t *)end;
	int32_t slot = -1;

	while (o != stop) {
		int32_t next = fv__cq_run_slot((const struct mlx5_cqe64 *)c, own, key, mask, meta);

		if (next < 0)
			break;
		slot = next;
		fv__cqe_put_run(o, ibv, wr_id[slot].v, t);
		o += osz;
		c += size;
	}
	if (slot >= 0)	/* not otherwise: with no run, sq is fv_no_run's */
		sq->ci = meta[slot].end;
	*offp = (uint32_t)(c - cq->buf64);
	*op = o;
}

FV_EXTERN_C_END

#endif /* FASTVERBS_CQ_RUN_H */
