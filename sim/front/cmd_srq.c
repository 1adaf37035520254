/* SRQ commands, basic (CREATE_SRQ) and XRC (CREATE_XSRQ); the mlx5 driver request names
 * the WQE buffer and doorbell record and, with CQE version 1, the user index. */
#include <errno.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>

#include "../model/model.h"
#include "../model/world.h"
#include "handles.h"
#include "uverbs.h"

static int respond(struct sim_cmd *c, struct sim_srq *srq)
{
	struct ib_uverbs_create_srq_resp resp = { 0 };
	struct mlx5_ib_create_srq_resp dresp = { 0 };

	resp.srq_handle = srq->handle;
	resp.max_wr = srq->max_wr;
	resp.max_sge = srq->max_gs;
	resp.srqn = srq->srqn;
	dresp.srqn = srq->srqn;
	CMD_RESP(c, resp);
	CMD_DRV_RESP(c, dresp);
	return 0;
}

static void drv_fields(struct sim_cmd *c, struct sim_srq_init *in)
{
	struct mlx5_ib_create_srq dreq;

	CMD_DRV(c, dreq);
	in->buf = dreq.buf_addr;
	in->dbrec = dreq.db_addr;
	in->uidx = c->ctx->cqe_version ? dreq.uidx & 0xffffff : 0;
}

/* What both CREATE_SRQ forms check first: the driver request, then the PD. */
static int srq_pd(struct sim_cmd *c, uint32_t pd_handle, struct sim_srq_init *in)
{
	if (c->drv_len < offsetof(struct mlx5_ib_create_srq, flags))
		return EINVAL;
	in->pd = sim_handle_get(c->ctx, pd_handle, SIM_UOBJ_PD);
	return in->pd ? 0 : EINVAL;
}

/* And what they do last: the SRQ, its handle and the responses. */
static int srq_create(struct sim_cmd *c, struct sim_srq_init *in, uint64_t user_handle,
		      uint32_t max_wr, uint32_t max_sge, uint32_t limit)
{
	struct sim_srq *srq;
	int err;

	in->user_handle = user_handle;
	in->max_wr = max_wr;
	in->max_sge = max_sge;
	in->limit = limit;
	drv_fields(c, in);
	err = sim_srq_create(c->ctx, in, &srq);
	if (!err)
		err = sim_handle_bind(c->ctx, SIM_UOBJ_SRQ, srq, &srq->handle);
	return err ? err : respond(c, srq);
}

int sim_cmd_create_srq(struct sim_cmd *c)
{
	struct ib_uverbs_create_srq req;
	struct sim_srq_init in = { 0 };
	int err;

	CMD_REQ(c, req);
	if ((err = srq_pd(c, req.pd_handle, &in)))
		return err;
	return srq_create(c, &in, req.user_handle, req.max_wr, req.max_sge, req.srq_limit);
}

int sim_cmd_create_xsrq(struct sim_cmd *c)
{
	struct ib_uverbs_create_xsrq req;
	struct sim_srq_init in = { 0 };
	int err;

	CMD_REQ(c, req);
	if ((err = srq_pd(c, req.pd_handle, &in)))
		return err;
	if (req.srq_type == IBV_SRQT_XRC) {
		in.xrc = true;
		in.xrcd = sim_handle_get(c->ctx, req.xrcd_handle, SIM_UOBJ_XRCD);
		in.cq = sim_handle_get(c->ctx, req.cq_handle, SIM_UOBJ_CQ);
		if (!in.xrcd || !in.cq)
			return EINVAL;
	} else if (req.srq_type != IBV_SRQT_BASIC) {
		return EOPNOTSUPP; /* tag matching */
	}
	return srq_create(c, &in, req.user_handle, req.max_wr, req.max_sge, req.srq_limit);
}

int sim_cmd_modify_srq(struct sim_cmd *c)
{
	struct ib_uverbs_modify_srq req;
	struct sim_srq *srq;

	CMD_REQ(c, req);
	srq = sim_handle_get(c->ctx, req.srq_handle, SIM_UOBJ_SRQ);
	return srq ? sim_srq_modify(srq, req.attr_mask, req.max_wr, req.srq_limit) : EINVAL;
}

int sim_cmd_query_srq(struct sim_cmd *c)
{
	struct ib_uverbs_query_srq req;
	struct ib_uverbs_query_srq_resp resp = { 0 };
	struct sim_srq *srq;

	CMD_REQ(c, req);
	CMD_OBJ(c, req.srq_handle, SIM_UOBJ_SRQ, srq);
	resp.max_wr = srq->max_wr;
	resp.max_sge = srq->max_gs;
	resp.srq_limit = srq->limit;
	CMD_RESP(c, resp);
	return 0;
}

int sim_cmd_destroy_srq(struct sim_cmd *c)
{
	struct ib_uverbs_destroy_srq req;
	struct ib_uverbs_destroy_srq_resp resp = { 0 };
	struct sim_srq *srq;
	int err;

	CMD_REQ(c, req);
	CMD_OBJ(c, req.srq_handle, SIM_UOBJ_SRQ, srq);
	resp.events_reported = srq->events_reported;
	err = sim_handle_destroy(c->ctx, req.srq_handle, SIM_UOBJ_SRQ);
	if (!err)
		CMD_RESP(c, resp);
	return err;
}
