/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Completion polling (docs/formats.md §5): the poll loop. Its parts: cq_init.h (struct fv_cq,
 * taking a CQ over), cq_decode.h (one CQE into a completion), cq_run.h (the run cache).
 *
 * Entry n of the CQ is at buf + (n & mask) * cqe_size; its struct mlx5_cqe64 is the last 64
 * bytes of the entry (a 128-byte entry carries scattered data in its first half):
 *
 *   off size field            (format 1 scatter data overlays bytes 0..31)
 *    17   1  ml_path          DLID path bits 6:0
 *    22   2  slid
 *    24   4  flags_rqpn       src QPN 23:0, SL 27:24, GRH 29:28
 *    32   4  srqn_uidx        SRQ number (CQE v0) or user index (v1), 23:0
 *    36   4  imm_inval_pkey   immediate (raw) / invalidated rkey / pkey index
 *    44   4  byte_cnt
 *    54   1  vendor_err_synd  (error CQEs)     55  1  syndrome (error CQEs)
 *    56   4  sop_drop_qpn     QPN 23:0, send opcode 31:24 (requester)
 *    60   2  wqe_counter      send WQE index / SRQ WQE index
 *    63   1  op_own           opcode 7:4 | format 3:2 (1: data at byte 0, 2: in the 64
 *                             bytes before) | SE 1 | owner 0
 *
 * Entry ci is new iff opcode != INVALID and owner == bit log2(entries) of ci (§5.4); the
 * rest of it is read only after a load barrier (fv__dma_rmb(), or fv__dma_rmb64() for the
 * CQE alone, with a compiler barrier at the end of the call for what the caller reads next).
 * Each poll call that consumed anything writes dbrec[FV__CQ_SET_CI] = BE32(ci & 0xffffff)
 * once.
 *
 * A CQE names its QP by number; fv_registry_qp() finds the fv_qp. The successful requester
 * completions of one QP and send opcode share all but their wr_id: the run cache (struct
 * fv__cq_run) keeps that completion per QP and opcode, and decodes such CQEs from their WQE
 * index alone. A QP's plain receives (RESP_SEND, format 0) share all but their wr_id and
 * byte_len while the sender's fields stay the same: its receive way keeps that completion.
 * Requester CQE: fv__sq_retire(); a completion fastverbs asked for itself
 * (fv__sq_forced) is consumed but not reported, unless it carries an error.
 * Responder CQE: the RQ's next WQE in order, or the SRQ WQE named by wqe_counter (which SRQ:
 * see recv.h). Scatter-to-CQE data is copied into the buffers of the consumed WQE.
 *
 * A CQE fastverbs cannot decode -- a QPN no fv_qp registered (for a responder CQE: nor an SRQ
 * found by the recv.h rule), a responder CQE for a QP with neither RQ nor SRQ, an opcode
 * other than REQ, RESP_* and *_ERR, a compressed CQE -- ends the call before it when
 * completions were already returned; otherwise the call returns -1 with errno EINVAL
 * (ibv_poll_cq reports such CQEs as a poll error too). It is never consumed, so it is not
 * lost: register its QP (fv_qp_init; the CQE names it) and poll again, or take the CQE as it
 * is with fv_cq_take_cqe(). Drain a QP's completions before fv_qp_cleanup().
 *
 * fv_poll locks nothing: poll a CQ from one thread (or under fv_lock, sync.h); fv_poll_cq
 * takes the CQ's lock. A poster of the CQ's queues may be another thread (sync.h).
 */
#ifndef FASTVERBS_CQ_H
#define FASTVERBS_CQ_H

#include "cq_run.h"

FV__EXTERN_C_BEGIN

/*
 * k CQEs were consumed, the next one at off with owner bit own: record it, and tell the
 * device. Then a compiler barrier: the run's load barriers covered only its CQEs, and what
 * the caller reads next (a receive buffer, say) must stay after them too.
 */
static FV__ALWAYS_INLINE void
fv__cq_consumed(struct fv_cq *cq, uint32_t off, uint32_t own, uint32_t k)
{
	if (off == cq->ring) {	/* a run stopped at the ring end */
		off = 0;
		own ^= 1;
	}
	if (k) {
		cq->ci += k;
		cq->off = off;
		cq->own = own;
		fv__dbrec_write32(&cq->dbrec[FV__CQ_SET_CI], htobe32(cq->ci & 0xffffff));
	}
	fv__compiler_barrier();
}

/*
 * The one poll loop behind fv_poll (ibv = 0: out is struct fv_wc[]) and fv_poll_cq (ibv = 1:
 * out is struct ibv_wc[]); ibv is a constant in each, so the other form folds away.
 * CQEs the run cache holds go to it (fv__cq_run; plain receives fv__cq_rrun_out), any other
 * through the general path (fv__cqe_decode), which may fill the run cache. One completion at a
 * time (a ping-pong) takes a straight path.
 */
static FV__ALWAYS_INLINE int
fv__cq_poll_core(struct fv_cq *cq, void *out, int n, const int ibv)
{
	const size_t osz = ibv ? sizeof(struct ibv_wc) : sizeof(struct fv_wc);
	uint32_t off = cq->off, own = cq->own;
	uint32_t extra = 0;	/* CQEs consumed without an entry: forced or bad */
	uint8_t *o = (uint8_t *)out, *end = o + (n > 0 ? (size_t)n * osz : 0);	/* o: the next entry */
	struct fv_registry *reg = cq->reg;
	uint32_t tag;
	int bad = 0;

	FV__ASSERT_MSG(reg, "polling a struct fv_cq that fv_cq_init (or fv_cq_init_geom) did not set up");
	tag = __atomic_load_n(&reg->gen, __ATOMIC_RELAXED) | (uint32_t)ibv;

	/* The ways hold while their tag is the call's; a way filled in this call takes it. */
	if (__builtin_expect(cq->run.tag != tag, 0))
		fv__cq_reset(cq, tag);	/* a QP came or went, or the other form */
	/* A ping-pong: straight. Said to be likely, gcc keeps the CQ's address in a register on
	 * this path, where it read it back from the stack (docs/performance.md §8.2.3). */
	if (n == 1 && __builtin_expect(fv__cq_run1(cq, cq->buf64 + off, own, out, ibv), 1)) {
		off += cq->cqe_size;
		if (off == cq->ring) {	/* the owner bit changes only here */
			off = 0;
			cq->own = own ^ 1;
		}
		cq->off = off;
		cq->ci++;
		fv__dbrec_write32(&cq->dbrec[FV__CQ_SET_CI], htobe32(cq->ci & 0xffffff));
		fv__compiler_barrier();
		return 1;
	}
	while (o != end) {
		const struct mlx5_cqe64 *cqe = (const struct mlx5_cqe64 *)(cq->buf64 + off);

		/* n == 1: just tried. The test first: a receive CQE sets no run up. */
		if (n != 1 && cqe->op_own == own) {
			fv__cq_run(cq, &off, own, &o, end, ibv);
			if (off == cq->ring) {
				off = 0;
				own ^= 1;	/* the next pass */
				continue;
			}
			if (o == end)
				break;
			cqe = (const struct mlx5_cqe64 *)(cq->buf64 + off);
		} else if (n != 1 && cqe->op_own == (MLX5_CQE_RESP_SEND << 4 | own)) {
			/* Plain receives their QPs' receive ways hold: no lookup, no decoding. */
			uint32_t k = fv__cq_rrun_out(cq, off, own, o, end, ibv);

			if (k) {
				o += k * osz;
				off += k << cq->shift;
				if (off == cq->ring) {
					off = 0;
					own ^= 1;
				}
				continue;
			}
		}

		uint8_t op_own = cqe->op_own, y = op_own ^ own;

		/* The general path. New iff the owner bit (y bit 0, flipped to 0 on a match) is 0
		 * and the opcode (bits 7:4) is not INVALID (0xf): y rotated right by one is then
		 * 0x00..0x77. */
		struct fv_qp *qp;
		int r;

		if ((uint8_t)(y >> 1 | y << 7) > 0x77)
			break;
		fv__dma_rmb();	/* the rest of the CQE only after its owner bit */
		qp = fv_registry_qp_in(reg, be32toh(cqe->sop_drop_qpn) & 0xffffff);
		/* A plain receive (RESP_SEND, no immediate, no scattered data, no solicited event)
		 * on a QP's RQ or its SRQ found before: straight to its decoding, none of the
		 * general path's tests; its opcode a constant there. Its receive way keeps it. */
		if (y == MLX5_CQE_RESP_SEND << 4 && qp && (qp->rq.entries || qp->srq)) {
			if (qp->rq.entries)
				fv__cqe_resp(cq, qp, cqe, MLX5_CQE_RESP_SEND << 4, o, ibv, 0, FV__RX_RQ);
			else
				fv__cqe_resp(cq, qp, cqe, MLX5_CQE_RESP_SEND << 4, o, ibv, 0, FV__RX_SRQ);
			fv__cq_rway_fill_out(cq, qp, cqe, o, ibv);
			o += osz;
			goto next;
		}
		r = fv__cqe_decode(cq, qp, cqe, op_own, o, ibv, 0);
		if (__builtin_expect(r == FV__CQE_BAD, 0)) {
			/* Left where it is, never consumed: what the caller has, or -1 / EINVAL first;
			 * the caller registers the QP and polls again, or takes it (fv_cq_take_cqe). */
			bad = o == out;
			break;
		}
		if (r == FV__CQE_REPORT) {
			fv__cq_way_fill(&cq->run, qp, cqe, op_own, own, o, ibv);
			o += osz;
		} else {
			extra++;
		}
next:
		off += cq->cqe_size;
		if (off == cq->ring) {
			off = 0;
			own ^= 1;
		}
	}

	uint32_t got = (uint32_t)((size_t)(o - (uint8_t *)out) / osz);

	fv__cq_consumed(cq, off, own, got + extra);
	if (__builtin_expect(bad, 0)) {
		errno = EINVAL;
		return -1;
	}
	return (int)got;
}

/*
 * Poll up to n completions into wc. Returns how many (0: none), or -1 with errno EINVAL for
 * a CQE fastverbs cannot decode (see the top of this file). Completions fastverbs requested
 * itself to bound unsignaled runs are consumed silently. Always inlined into the caller's
 * loop (a call costs more than a CQE's decoding).
 */
static FV__ALWAYS_INLINE int fv_poll(struct fv_cq *cq, struct fv_wc *wc, int n)
{
	return fv__cq_poll_core(cq, wc, n, 0);
}

/*
 * Take the CQE at the head of cq as it is, consumed without decoding: into *out (its
 * struct mlx5_cqe64, the last 64 bytes of a 128-byte entry; out may be NULL). For a CQE
 * fv_poll refuses (-1 / EINVAL): one of a QP fastverbs was not given, say. Returns 0, or
 * ENOENT when the CQ holds no new CQE. Nothing else changes: no queue of any QP moves.
 */
static inline int fv_cq_take_cqe(struct fv_cq *cq, struct mlx5_cqe64 *out)
{
	const struct mlx5_cqe64 *cqe = (const struct mlx5_cqe64 *)(cq->buf64 + cq->off);
	uint8_t y = cqe->op_own ^ cq->own;

	if ((uint8_t)(y >> 1 | y << 7) > 0x77)	/* not new: as fv__cq_poll_core */
		return ENOENT;
	fv__dma_rmb();
	if (out)
		memcpy(out, cqe, sizeof(*out));
	fv__cq_consumed(cq, cq->off + cq->cqe_size, cq->own, 1);
	return 0;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_CQ_H */
