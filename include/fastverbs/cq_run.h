/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The run cache of a CQ (struct fv__cq_run, cq_init.h): per QP, the completion its successful
 * requester CQEs of one send opcode share (they differ only in their WQE), so that each is
 * decoded from its WQE index alone, whether a QP's CQEs come in a row or interleave with
 * other QPs'; and per QP the completion its plain receives share while the sender's fields
 * stay the same (a receive way: wr_id and byte_len are each CQE's).
 */
#ifndef FASTVERBS_CQ_RUN_H
#define FASTVERBS_CQ_RUN_H

#include "cq_decode.h"

FV__EXTERN_C_BEGIN

/*
 * After the general path reported the completion cqe at o for qp: if it is a successful
 * requester completion (op_own exactly REQ, format 0, the owner bit own) whose byte_len the
 * WQE does not decide, its QP's way keeps it (the wr_id is each CQE's own). Not for
 * sq_sig_all QPs, whose WQEs' ends are not written (sq.h).
 */
static FV__ALWAYS_INLINE void
fv__cq_way_fill(struct fv__cq_run *run, struct fv_qp *qp, const struct mlx5_cqe64 *cqe, uint8_t op_own,
		uint32_t own, const void *o, const int ibv)
{
	const unsigned np = (ibv ? sizeof(struct ibv_wc) : sizeof(struct fv_wc)) / 16;
	__be32 key = cqe->sop_drop_qpn;

	if (op_own != own || !qp || qp->sq.sig_all ||
	    (fv__sq_wc_op[*(const uint8_t *)&cqe->sop_drop_qpn] & (FV__WC_CNT | FV__WC_UMR)))
		return;

	struct fv__cq_way *w = (struct fv__cq_way *)(uintptr_t)fv__cq_way_at(run, key);

	w->key = key;	/* its tag is already the call's (fv__cq_poll_core) */
	w->qp = qp;
	for (unsigned i = 0; i < np; i++)
		w->t[i] = *fv__wc_piece((void *)(uintptr_t)o, ibv, i);
}

/*
 * Store the way's completion t with wr_id at o (struct ibv_wc if ibv): the pieces as they
 * are, then the wr_id over the first's first word. In a loop the pieces stay in vector
 * registers.
 */
static FV__ALWAYS_INLINE void
fv__cqe_put_run(void *o, const int ibv, uint64_t wr_id, const fv_u64x2 *t)
{
	*fv__wc_piece(o, ibv, 0) = t[0];
	*fv__wc_word(o, ibv, 0) = wr_id;
	*fv__wc_piece(o, ibv, 1) = t[1];
	if (ibv)
		*fv__wc_piece(o, ibv, 2) = t[2];
}

/*
 * The slot of the WQE a CQE completes, from the 32-bit word at byte 58 (QPN bits 15:0, then
 * wqe_counter): its low half is wqe_counter once in host order, and mask < 2^16. One byte
 * swap, no 16-bit arithmetic.
 */
static FV__ALWAYS_INLINE uint32_t fv__cqe_slot(const uint8_t *cqe, uint32_t mask)
{
	uint32_t w;

	memcpy(&w, cqe + offsetof(struct mlx5_cqe64, wqe_counter) - 2, sizeof(w));
	return be32toh(w) & mask;
}

/*
 * The CQE at c, new and of w's key, by its way: unless fastverbs forced its WQE's completion
 * (the general path hides it), store its completion at o, retire its WQE and return 1; else 0,
 * nothing changed.
 *
 * A WQE a way completes asked for a completion (sq_sig_all QPs have no ways), so its end
 * (the SQ's ci once retired) was written (sq.h).
 */
static FV__ALWAYS_INLINE int
fv__cq_way_take(const struct fv__cq_way *w, const uint8_t *c, void *o, const int ibv)
{
	struct fv__sq *sq = &w->qp->sq;
	uint32_t slot = fv__cqe_slot(c, sq->mask);

	uint32_t end = sq->meta[slot].end;
	uint64_t wr_id;

	if (sq->meta[slot].forced == end)
		return 0;
	wr_id = sq->wr_id[slot].v;
	fv__sq_set_ci(sq, end);	/* after the slot's last read: a poster may reuse it from now on */
	fv__cqe_put_run(o, ibv, wr_id, w->t);
	return 1;
}

/*
 * The plain receive CQE at c (new, op_own RESP_SEND with the owner bit), of w's key, by its
 * receive way: if the fields its completion is made of are the way's, store the completion at
 * o with the wr_id of the WQE it consumed and its byte_len, give the WQE back (the RQ's tail
 * past it, or linked after the SRQ's free list's tail) and return 1; else 0, nothing changed.
 */
static FV__ALWAYS_INLINE int
fv__cq_rway_take(const struct fv__cq_rway *w, const uint8_t *c, void *o, const int ibv)
{
	uint32_t rqpn, len;
	uint64_t m, p, wr_id;

	memcpy(&rqpn, c + offsetof(struct mlx5_cqe64, flags_rqpn), 4);
	memcpy(&m, c + 32, 8);
	if (rqpn != w->rqpn || m != w->m)
		return 0;
	if (ibv) {
		memcpy(&p, c + 16, 8);
		if (p != w->p)
			return 0;
	}
	if (!w->srq) {
		struct fv__rq *rq = (struct fv__rq *)w->q;
		uint32_t tail = rq->tail;

		wr_id = rq->wrid[tail & rq->mask];
		fv__rq_set_tail(rq, tail + 1);	/* after the slot's last read */
	} else {
		struct fv_srq *srq = (struct fv_srq *)w->q;
		uint32_t idx = fv__cqe_slot(c, srq->mask);

		wr_id = srq->wrid[idx];
		fv__srq_free_locked(srq, idx, ibv);
	}
	len = be32toh(((const struct mlx5_cqe64 *)c)->byte_cnt);
	fv__cqe_put_run(o, ibv, wr_id, w->t);
	if (ibv)
		((union fv__ibv_wc_words *)o)->wc.byte_len = len;
	else
		((union fv__wc_words *)o)->wc.byte_len = len;
	return 1;
}

/*
 * Where a run of completions from the CQE at off on must stop in the output o: at end, or
 * earlier at the CQE ring's end (the caller goes on from the ring's start).
 */
static FV__ALWAYS_INLINE uint8_t *
fv__cq_out_stop(const struct fv_cq *cq, uint32_t off, uint8_t *o, const uint8_t *end, size_t osz)
{
	uint8_t *stop = o + (size_t)((cq->ring - off) >> cq->shift) * osz;

	return stop > end ? (uint8_t *)end : stop;
}

/*
 * The plain receive CQEs its receive ways hold, from off on (the caller saw that the CQE at off
 * is one, new), into o up to end and up to the ring end. Moves off and o past what it
 * consumed (nothing if the first CQE's way does not hold it).
 */
static FV__ALWAYS_INLINE void
fv__cq_rrun(const struct fv_cq *cq, uint32_t *offp, uint32_t own, uint8_t **op, const uint8_t *end,
	    const int ibv)
{
	const size_t osz = ibv ? sizeof(struct ibv_wc) : sizeof(struct fv_wc);
	const uint8_t *c = cq->buf64 + *offp;	/* the next CQE */
	uint32_t size = cq->cqe_size;
	uint8_t *o = *op, *stop;
	uint32_t rown = MLX5_CQE_RESP_SEND << 4 | own;
	const struct fv__cq_rway *rway = cq->rway;

	if (!rway)
		return;	/* no plain receive filled a way yet */
	stop = fv__cq_out_stop(cq, *offp, o, end, osz);
	do {
		fv__dma_rmb64(c);	/* the rest of the CQE only after its owner bit */

		__be32 key = ((const struct mlx5_cqe64 *)c)->sop_drop_qpn;
		const struct fv__cq_rway *w = fv__cq_rway_at(rway, key);

		if (w->key != key || !fv__cq_rway_take(w, c, o, ibv))
			break;
		o += osz;
		c += size;
	} while (o != stop && ((const struct mlx5_cqe64 *)c)->op_own == rown);
	*offp = (uint32_t)(c - cq->buf64);
	*op = o;
}

/*
 * fv__cq_rrun out of line, from off on into o: returns how many CQEs it consumed. Called once
 * per run of receives; inlined, its loop took registers the requester runs of the same poll
 * loop had (bench/poll ×16 +0.3 instructions a CQE, docs/performance.md §8.2.4).
 */
static FV__NOINLINE uint32_t
fv__cq_rrun_out(const struct fv_cq *cq, uint32_t off, uint32_t own, uint8_t *o, const uint8_t *end, int ibv)
{
	uint8_t *o0 = o;

	if (ibv) {
		fv__cq_rrun(cq, &off, own, &o, end, 1);
		return (uint32_t)((size_t)(o - o0) / sizeof(struct ibv_wc));
	}
	fv__cq_rrun(cq, &off, own, &o, end, 0);
	return (uint32_t)((size_t)(o - o0) / sizeof(struct fv_wc));
}

/*
 * One CQE at c by the run cache (poll calls for one completion: a ping-pong): if it is new
 * (op_own: REQ, format 0, the owner bit own) and its way holds its sop_drop_qpn, as
 * fv__cq_way_take. Else 0, nothing changed: the general path decides.
 */
static FV__ALWAYS_INLINE int
fv__cq_run1(const struct fv_cq *cq, const uint8_t *c, uint32_t own, void *o, const int ibv)
{
	const struct mlx5_cqe64 *cqe = (const struct mlx5_cqe64 *)c;

	if (cqe->op_own != own) {
		const struct fv__cq_rway *rway = cq->rway;

		if (cqe->op_own != (MLX5_CQE_RESP_SEND << 4 | own) || !rway)
			return 0;
		fv__dma_rmb64(cqe);	/* the rest of the CQE only after its owner bit */

		__be32 key = cqe->sop_drop_qpn;
		const struct fv__cq_rway *w = fv__cq_rway_at(rway, key);

		return w->key == key && fv__cq_rway_take(w, c, o, ibv);
	}
	fv__dma_rmb64(cqe);	/* the rest of the CQE only after its owner bit */

	__be32 key = cqe->sop_drop_qpn;
	const struct fv__cq_way *w = fv__cq_way_at(&cq->run, key);

	return w->key == key && fv__cq_way_take(w, c, o, ibv);
}

/*
 * The CQEs the run cache decodes from off on, into o up to end, and up to the ring end; the
 * caller saw that the CQE at off is new, and room for one completion. Moves off and o past
 * what it consumed, and each SQ's ci past their WQEs.
 *
 * When the call's second CQE is of the first's QP and opcode, a run: the QP's fields and its
 * completion stay in registers while it lasts. Other CQEs (the QPs on the CQ taking turns)
 * each look their way up; the run is not looked for again in the call, which keeps that loop
 * short.
 */
static FV__ALWAYS_INLINE void
fv__cq_run(const struct fv_cq *cq, uint32_t *offp, uint32_t own, uint8_t **op, const uint8_t *end,
	   const int ibv)
{
	const size_t osz = ibv ? sizeof(struct ibv_wc) : sizeof(struct fv_wc);
	const uint8_t *c = cq->buf64 + *offp;	/* the next CQE */
	uint32_t size = cq->cqe_size;
	uint8_t *o = *op, *stop;

	fv__dma_rmb64(c);	/* the rest of the CQE only after its owner bit */

	__be32 key = ((const struct mlx5_cqe64 *)c)->sop_drop_qpn, k;
	const struct fv__cq_way *w = fv__cq_way_at(&cq->run, key);

	if (w->key != key || !fv__cq_way_take(w, c, o, ibv))
		return;	/* nothing set up for a CQE the general path takes */
	stop = fv__cq_out_stop(cq, *offp, o, end, osz);
	/* Past the completion just stored: the call ends (out) at stop or at a CQE not new, else
	 * k is the new CQE's sop_drop_qpn. A macro, as an inline function of the same lines made
	 * gcc 12 allocate the loops' registers worse (+0.8 instructions per CQE, 16 per call). */
#define FV__CQ_RUN_NEXT()                                                                          \
	do {                                                                                       \
		o += osz;                                                                          \
		c += size;                                                                         \
		if (o == stop || ((const struct mlx5_cqe64 *)c)->op_own != own)                    \
			goto out;                                                                  \
		fv__dma_rmb64(c);                                                                  \
		k = ((const struct mlx5_cqe64 *)c)->sop_drop_qpn;                                  \
	} while (0)
	FV__CQ_RUN_NEXT();
	if (k == key) {	/* a run */
		struct fv__sq *sq = &w->qp->sq;
		uint32_t mask = sq->mask;
		const struct fv__sq_meta *meta = sq->meta;
		const struct fv__wr_id *wr_id = sq->wr_id;
		fv_u64x2 t[3] = { w->t[0], w->t[1], ibv ? w->t[2] : w->t[1] };

		do {
			uint32_t slot = fv__cqe_slot(c, mask);

			uint32_t e = meta[slot].end;
			uint64_t id;

			if (meta[slot].forced == e)
				goto out;
			id = wr_id[slot].v;
			fv__sq_set_ci(sq, e);	/* after the slot's last read (fv__cq_way_take) */
			fv__cqe_put_run(o, ibv, id, t);
			FV__CQ_RUN_NEXT();
		} while (k == key);
	}
	for (;;) {	/* the CQE at c is new, its sop_drop_qpn k */
		w = fv__cq_way_at(&cq->run, k);
		if (w->key != k || !fv__cq_way_take(w, c, o, ibv))
			break;
		FV__CQ_RUN_NEXT();
	}
#undef FV__CQ_RUN_NEXT
out:
	*offp = (uint32_t)(c - cq->buf64);
	*op = o;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_CQ_RUN_H */
