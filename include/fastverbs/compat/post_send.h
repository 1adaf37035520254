/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fv_post_send: ibv_post_send(3) as libmlx5 implements it, on fastverbs builders.
 *
 * Same errno as libmlx5 for the same mistake (EINVAL bad opcode, ENOMEM too many SGEs /
 * inline too long / SQ full), stop at the first bad WR and return it in *bad_wr, one
 * doorbell for the WRs before it. Deliberately better (docs/compat.md):
 *  - an operation the QP type does not allow (RDMA/atomic on UD, READ/atomic on UC),
 *    INLINE on READ/atomic, a UD WR without an AH, a negative num_sge: EINVAL;
 *  - LOCAL_INV / BIND_MW (not built by fastverbs yet): EOPNOTSUPP;
 *  - the refused WR leaves no trace in the ring, the doorbell record or the BF register;
 *  - free space is counted in WQEBBs, not worst-case WRs.
 */
#ifndef FASTVERBS_COMPAT_POST_SEND_H
#define FASTVERBS_COMPAT_POST_SEND_H

#include "../ops.h"
#include "../ah.h"

/* fm_ce_se bits for the IBV_SEND_* flags that have one. */
static inline unsigned fv_send_flags(unsigned ibv_flags)
{
	return ((ibv_flags & IBV_SEND_SIGNALED) ? FV_SIGNALED : 0) |
	       ((ibv_flags & IBV_SEND_SOLICITED) ? FV_SOLICITED : 0) |
	       ((ibv_flags & IBV_SEND_FENCE) ? FV_FENCE : 0);
}

/* The AV for a UD WR's ibv_ah, with a one-entry cache per QP. */
static inline const struct mlx5_wqe_av *fv_qp_av(struct fv_qp *qp, struct ibv_ah *ah)
{
	if (ah != qp->ah_cache_key) {
		const struct mlx5_wqe_av *av = fv_ah_av_of(ah);

		if (!av)
			return NULL;
		qp->ah_cache_key = ah;
		qp->ah_cache_av = av;
	}
	return qp->ah_cache_av;
}

/* Total inline bytes of wr's SGEs, or UINT32_MAX if it cannot fit any QP. */
static inline uint32_t fv_sgl_bytes(const struct ibv_sge *sgl, int n)
{
	uint64_t total = 0;

	for (int i = 0; i < n; i++)
		total += sgl[i].length;
	return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

/* Check one WR against the table and the QP's caps and build it. 0 or an errno. */
static inline int fv_post_send_one(struct fv_qp *qp, const struct ibv_send_wr *wr)
{
	const struct fv_op_info *info;

	if ((unsigned)wr->opcode >= FV_WR_OPCODE_SLOTS)
		return EINVAL;
	info = &fv_op_table[qp->qpt][wr->opcode];
	if (!info->allowed)
		return (wr->opcode == IBV_WR_LOCAL_INV || wr->opcode == IBV_WR_BIND_MW) &&
		       qp->qpt != FV_QPT_UD ? EOPNOTSUPP : EINVAL;
	if (wr->num_sge < 0)
		return EINVAL;
	if ((unsigned)wr->num_sge > qp->max_send_sge)
		return ENOMEM;

	/* Initialized, not memset: the compiler then keeps the fields in registers. */
	struct fv_req r = { .wr_id = wr->wr_id, .flags = fv_send_flags(wr->send_flags),
			    .opcode = info->opcode, .segs = info->segs, .payload = FV_PL_SGL,
			    .sgl = wr->sg_list, .nsge = wr->num_sge };

	if ((wr->send_flags & IBV_SEND_INLINE) && wr->num_sge) {
		if (info->payload != FV_PAYLOAD_DATA)
			return EINVAL;
		r.payload = FV_PL_INLINE;
		r.len = fv_sgl_bytes(wr->sg_list, wr->num_sge);
	}
	if (info->imm_kind == FV_IMM_KIND_IMM)
		r.imm = wr->imm_data;
	else if (info->imm_kind == FV_IMM_KIND_INV)
		r.imm = htobe32(wr->invalidate_rkey);
	if (info->segs & FV_SEG_ATOMIC) {
		r.raddr = wr->wr.atomic.remote_addr;
		r.rkey = wr->wr.atomic.rkey;
		if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
			r.swap_add = wr->wr.atomic.swap;
			r.compare = wr->wr.atomic.compare_add;
		} else {
			r.swap_add = wr->wr.atomic.compare_add;
		}
	} else if (info->segs & FV_SEG_RADDR) {
		r.raddr = wr->wr.rdma.remote_addr;
		r.rkey = wr->wr.rdma.rkey;
	}
	if (qp->qpt == FV_QPT_UD) {
		if (!wr->wr.ud.ah || !(r.av = fv_qp_av(qp, wr->wr.ud.ah)))
			return EINVAL;
		r.remote_qpn = wr->wr.ud.remote_qpn;
		r.qkey = wr->wr.ud.remote_qkey;
	} else if (qp->qpt == FV_QPT_XRC) {
		r.srqn = wr->qp_type.xrc.remote_srqn;
	}
	return fv_build_wqe(qp, qp->qpt, &r);	/* nothing is a constant here: one copy of the body */
}

/*
 * ibv_post_send(3) on a QP taken over with fv_qp_init. Returns 0, or the errno of the first
 * refused WR with *bad_wr set to it; the WRs before it are posted and rung.
 */
static inline int fv_post_send(struct fv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	int err = 0;

	for (; wr; wr = wr->next) {
		err = fv_post_send_one(qp, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	fv_sq_ring(&qp->sq);
	return err;
}

#endif /* FASTVERBS_COMPAT_POST_SEND_H */
