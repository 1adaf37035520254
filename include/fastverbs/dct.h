/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The receive side of DC: a DCT has no queues of its own (no buffer, doorbell record or
 * BlueFlame register; libmlx5's mlx5dv_init_obj dereferences the missing register), only a
 * number from RTR on and an SRQ. Its receive CQEs name it by that number, so fv_dct_init
 * registers a queue-less struct fv_qp under it that points at the SRQ: fv_poll and
 * fv_poll_cq then find the receive WQE as for any QP on an SRQ.
 */
#ifndef FASTVERBS_DCT_H
#define FASTVERBS_DCT_H

#include "recv.h"

FV__EXTERN_C_BEGIN

/* A DCT as polling sees it: its number and its SRQ (fv_dct_init). */
struct fv_dct {
	struct fv_qp qp;	/* qpn and srq only: no send or receive queue */
};

/*
 * Register the DCT ibqp (IBV_QPT_DRIVER, created with mlx5dv_create_qp, in RTR: its number
 * exists from then on) with srq, the fv_srq of the SRQ it was created with. 0; EINVAL for a
 * QP that is no DCT (a DCI answers a query of its caps, a DCT does not), a DCT not yet in RTR
 * (number 0) or another SRQ; ENOMEM. Never calls mlx5dv_init_obj on the DCT.
 */
static inline int fv_dct_init(struct fv_dct *d, struct ibv_qp *ibqp, struct fv_srq *srq)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	if (!ibqp || !srq || ibqp->qp_type != IBV_QPT_DRIVER || !ibqp->qp_num ||
	    (srq->ibsrq && srq->ibsrq != ibqp->srq))
		return EINVAL;
	if (!ibv_query_qp(ibqp, &a, IBV_QP_CAP, &i))
		return EINVAL;	/* a DCI */
	memset(d, 0, sizeof(*d));
	d->qp.qpn = ibqp->qp_num;
	d->qp.qpt = FV_QPT_DCI;	/* never posted on: no send queue */
	d->qp.srq = srq;
	return fv_registry_set(d->qp.qpn, &d->qp) ? ENOMEM : 0;
}

/* Forget the DCT: its CQEs are fastverbs' no more (fv_poll: EINVAL). The ibv_qp stays the caller's. */
static inline void fv_dct_cleanup(struct fv_dct *d)
{
	if (d->qp.qpn && fv_registry_qp(d->qp.qpn) == &d->qp)
		fv_registry_set(d->qp.qpn, NULL);
	d->qp.qpn = 0;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_DCT_H */
