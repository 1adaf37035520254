/* Events the user read, counted on their objects as the kernel counts them when they are
 * read; the destroy commands report these counts and libibverbs waits for as many acks. */
#include "evcount.h"

#include <string.h>

#include <infiniband/verbs.h>

#include "../model/obj.h"
#include "handles.h"

/* The object of a type whose user handle is element (events name objects that way). */
static void *by_user_handle(struct sim_ctx *ctx, int type, uint64_t element)
{
	for (uint32_t i = 1; i < sim_handle_end(ctx); i++) {
		void *o = sim_handle_get(ctx, i, type);

		if (!o)
			continue;
		if ((type == SIM_UOBJ_QP && ((struct sim_qp *)o)->user_handle == element) ||
		    (type == SIM_UOBJ_CQ && ((struct sim_cq *)o)->user_handle == element) ||
		    (type == SIM_UOBJ_SRQ && ((struct sim_srq *)o)->user_handle == element))
			return o;
	}
	return NULL;
}

void sim_events_read(struct sim_ctx *ctx, bool comp, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	if (comp) {
		for (; n >= 8; n -= 8, p += 8) {
			uint64_t h;
			struct sim_cq *cq;

			memcpy(&h, p, 8);
			if ((cq = by_user_handle(ctx, SIM_UOBJ_CQ, h)))
				cq->comp_events++;
		}
		return;
	}
	for (; n >= 16; n -= 16, p += 16) {
		uint64_t h;
		uint32_t type;
		struct sim_qp *qp;
		struct sim_cq *cq;
		struct sim_srq *srq;

		memcpy(&h, p, 8);
		memcpy(&type, p + 8, 4);
		switch (type) {
		case IBV_EVENT_CQ_ERR:
			if ((cq = by_user_handle(ctx, SIM_UOBJ_CQ, h)))
				cq->async_events++;
			break;
		case IBV_EVENT_SRQ_ERR:
		case IBV_EVENT_SRQ_LIMIT_REACHED:
			if ((srq = by_user_handle(ctx, SIM_UOBJ_SRQ, h)))
				srq->events_reported++;
			break;
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
		case IBV_EVENT_COMM_EST:
		case IBV_EVENT_SQ_DRAINED:
		case IBV_EVENT_PATH_MIG:
		case IBV_EVENT_PATH_MIG_ERR:
		case IBV_EVENT_QP_LAST_WQE_REACHED:
			if ((qp = by_user_handle(ctx, SIM_UOBJ_QP, h)))
				qp->events_reported++;
			break;
		default:
			break; /* port and device events belong to no object */
		}
	}
}
