#include "rq_take.h"

#include <infiniband/verbs.h>

#include "../common/be.h"
#include "../model/model.h"
#include "synd.h"

/* Scatter entries run until the invalid-lkey terminator or the end of the WQE. */
static void parse_sges(const uint8_t *p, uint32_t max, struct sim_rwqe *w)
{
	w->nsge = 0;
	for (uint32_t i = 0; i < max && i < 64; i++, p += 16) {
		uint32_t lkey = ld_be32(p + 4);

		if (lkey == MLX5_INVALID_LKEY)
			break;
		w->sge[w->nsge].len = ld_be32(p);
		w->sge[w->nsge].lkey = lkey;
		w->sge[w->nsge].addr = ld_be64(p + 8);
		w->nsge++;
	}
}

bool sim_rq_pending(const struct sim_qp *qp)
{
	return qp->rq_cnt && (ld_dbrec(&qp->dbrec[0]) & 0xffff) != (qp->rq_ci & 0xffff);
}

bool sim_rq_peek(struct sim_qp *qp, struct sim_rwqe *w)
{
	uint32_t stride = 1u << qp->rq_shift, skip = qp->rq_sig ? 16 : 0;
	const uint8_t *p;

	if (!sim_rq_pending(qp))
		return false;
	p = qp->rq_buf + (size_t)(qp->rq_ci & (qp->rq_cnt - 1)) * stride;
	w->wqe_counter = (uint16_t)qp->rq_ci;
	parse_sges(p + skip, (stride - skip) / 16, w);
	return true;
}

void sim_rq_pop(struct sim_qp *qp)
{
	qp->rq_ci++;
}

bool sim_srq_peek(struct sim_srq *srq, struct sim_rwqe *w)
{
	const uint8_t *p;

	if ((ld_dbrec(&srq->dbrec[0]) & 0xffff) == srq->consumed)
		return false;
	p = srq->buf + ((size_t)(srq->head & (srq->wqe_cnt - 1)) << srq->wqe_shift);
	w->wqe_counter = (uint16_t)(srq->head & (srq->wqe_cnt - 1));
	w->next = ld_be16(p + 2);
	parse_sges(p + 16, srq->max_gs, w);
	return true;
}

void sim_srq_pop(struct sim_srq *srq, const struct sim_rwqe *w)
{
	uint16_t avail;

	srq->head = w->next;
	srq->consumed++;
	/* An armed limit fires once when the posted-but-unused count drops below it. */
	avail = (uint16_t)((ld_dbrec(&srq->dbrec[0]) & 0xffff) - srq->consumed);
	if (srq->limit && avail < srq->limit) {
		srq->limit = 0;
		sim_async_event(srq->ctx, srq->event_chan, srq->user_handle,
				IBV_EVENT_SRQ_LIMIT_REACHED);
	}
}
