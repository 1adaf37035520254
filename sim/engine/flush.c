/* Flushing: once a QP is in error every WQE still posted, and every one posted later,
 * completes with WR_FLUSH_ERR — one CQE per WQE, signaled or not, because libmlx5 maps
 * each CQE's wqe_counter back to one work request. */
#include <infiniband/verbs.h>

#include "cqe.h"
#include "exec.h"
#include "flush.h"
#include "rq_take.h"
#include "remote.h"
#include "synd.h"
#include "sq_decode.h"

enum sim_work sim_flush_one(struct sim_qp *qp)
{
	struct sim_cqe e = { 0 };

	e.op = CQE_REQ_ERR;
	e.syndrome = SYND_FLUSH;
	e.vendor = 0xf9;
	e.qpn = qp->qpn;
	if (sim_sq_pending(qp)) {
		uint32_t nbb;

		if (!sim_cq_room(qp->scq, 1))
			return SIM_W_WAIT;
		if (sim_exec_acked(qp))
			return SIM_W_DONE;
		sim_remote_cancel(qp);
		nbb = sim_wqe_peek(qp, qp->sq_ci, &e.sop);
		e.wqe_counter = (uint16_t)qp->sq_ci;
		e.srqn_uidx = qp->ctx->cqe_version ? qp->uidx : 0;
		sim_cq_push(qp->scq, &e);
		qp->sq_ci += nbb;
		qp->retrying = false;
		return SIM_W_DONE;
	}
	/* The receive side flushes only in ERR; in SQE it keeps working. A QP on an SRQ owns
	 * no receive WQEs to flush. */
	if (qp->state == IBV_QPS_ERR && sim_rq_pending(qp)) {
		if (!sim_cq_room(qp->rcq, 1))
			return SIM_W_WAIT;
		e.op = CQE_RESP_ERR;
		e.sop = 0;
		e.wqe_counter = (uint16_t)qp->rq_ci;
		e.srqn_uidx = qp->ctx->cqe_version ? qp->uidx : 0;
		sim_cq_push(qp->rcq, &e);
		sim_rq_pop(qp);
		return SIM_W_DONE;
	}
	return SIM_W_IDLE;
}
