/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ibv_post_recv(3) / ibv_post_srq_recv(3) drop-ins, with libmlx5's semantics: walk the list,
 * stop at the first WR that cannot be posted, set *bad_wr to it and return its errno value
 * (EINVAL: too many SGEs or no RQ; ENOMEM: queue full). The WRs before it are posted and
 * published with one doorbell-record write at the end; nothing of the bad WR is written.
 * Each holds its queue's lock over the list and the doorbell record (sync.h), as libmlx5 does:
 * receives may be posted from any thread, the poller's included.
 */
#ifndef FASTVERBS_COMPAT_POST_RECV_H
#define FASTVERBS_COMPAT_POST_RECV_H

#include "../sync.h"

FV__EXTERN_C_BEGIN

/* Post a list of receive WRs on qp's RQ, as ibv_post_recv(qp->ibqp, wr, bad_wr) would. */
static FV__ALWAYS_INLINE int fv_post_recv(struct fv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct ibv_recv_wr *first = wr;	/* wr moved past it: something was posted */
	uint32_t on = qp->locking;
	int err = 0;

	fv__enter(&qp->rq_lock, on, qp);
	FV__TEST_YIELD();

	for (; wr; wr = wr->next) {
		err = fv__recv(qp, wr->wr_id, wr->sg_list, wr->num_sge, 0);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	if (wr != first)
		fv_recv_ring(qp);
	fv__leave_at(&qp->rq_lock, on, qp);
	return err;
}

/* Post a list of receive WRs on srq, as ibv_post_srq_recv(srq->ibsrq, wr, bad_wr) would. */
static FV__ALWAYS_INLINE int fv_post_srq_recv(struct fv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct ibv_recv_wr *first = wr;	/* as in fv_post_recv */
	uint32_t on = srq->locking;
	int err = 0;

	fv__enter(&srq->lock, on, srq);
	FV__TEST_YIELD();

	for (; wr; wr = wr->next) {
		err = fv__srq_recv(srq, wr->wr_id, wr->sg_list, wr->num_sge, 1);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	if (wr != first)
		fv_srq_ring(srq);
	fv__leave(&srq->lock, on, srq);
	return err;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_COMPAT_POST_RECV_H */
