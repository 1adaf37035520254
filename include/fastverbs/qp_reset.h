/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A QP taken over again after a reset. ibv_modify_qp to RESET makes libmlx5 start its queues
 * over (its indices and both doorbell records 0) and the device expects WQE index 0 at block
 * 0 from then on; fastverbs' handle would go on from where it was. UCX resets and reconnects a
 * DCI after an error this way (ERR -> RESET -> INIT -> RTR -> RTS).
 */
#ifndef FASTVERBS_QP_RESET_H
#define FASTVERBS_QP_RESET_H

#include "qp.h"

FV__EXTERN_C_BEGIN

/*
 * fv_qp_reset(h): h (a typed handle or a struct fv_qp *) starts over from the doorbell records,
 * as fv_qp_init does: call it after ibv_modify_qp took the QP to RESET and before posting
 * again, once every completion of the QP has been polled. What was outstanding is forgotten
 * (its completions came as flush errors). 0; EINVAL inside an fv_wr_* batch or fv_lock.
 */
#define fv_qp_reset(h) fv__qp_reset(fv__ring_qp(h))

static inline int fv__qp_reset(struct fv_qp *qp)
{
	if (qp->wr_open || qp->sq_lock)
		return EINVAL;
	fv__sq_set_pi(&qp->sq, be32toh(*qp->sq.dbrec) & 0xffff);
	qp->sq.fence_cache = 0;
	qp->sq.lim = fv__sq_lim(&qp->sq);
	if (qp->rq.entries) {
		qp->rq.head.v = qp->rq.tail = be32toh(*qp->rq.dbrec) & 0xffff;
		qp->rq.lim.v = qp->rq.head.v + qp->rq.entries;
	}
	return 0;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_QP_RESET_H */
