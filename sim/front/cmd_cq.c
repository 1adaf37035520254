/* CQ commands: the mlx5 driver request names the CQE ring, its doorbell record and the
 * CQE size; libmlx5 passes the entry count minus one. */
#include <errno.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>

#include "../engine/cqe.h"
#include "../engine/engine.h"
#include "../model/model.h"
#include "../model/world.h"
#include "handles.h"
#include "uverbs.h"

/* Both CREATE_CQ commands: the CQ, its handle, the driver response and the core response's
 * common part r. */
static int create(struct sim_cmd *c, uint64_t user_handle, uint32_t cqe, int32_t channel,
		  uint32_t comp_vector, uint32_t flags, struct ib_uverbs_create_cq_resp *r)
{
	struct mlx5_ib_create_cq dreq;
	struct mlx5_ib_create_cq_resp dresp = { 0 };
	struct sim_cq_init in = { 0 };
	struct sim_cq *cq;
	int err;

	if (comp_vector >= SIM_COMP_VECTORS)
		return EINVAL; /* the uverbs core checks it before the driver runs */
	if (c->drv_len < offsetof(struct mlx5_ib_create_cq, flags))
		return EINVAL;
	CMD_DRV(c, dreq);
	in.user_handle = user_handle;
	in.buf = dreq.buf_addr;
	in.dbrec = dreq.db_addr;
	in.cqe = cqe;
	in.cqe_size = dreq.cqe_size;
	in.comp_channel = channel;
	in.comp_en = dreq.cqe_comp_en;
	in.ignore_overrun = flags & IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN;
	err = sim_cq_create(c->ctx, &in, &cq);
	if (err)
		return err;
	sim_cq_arm_init(cq);
	err = sim_handle_bind(c->ctx, SIM_UOBJ_CQ, cq, &cq->handle);
	if (err)
		return err;
	r->cq_handle = cq->handle;
	r->cqe = cq->cqe_cnt - 1;
	dresp.cqn = cq->cqn;
	CMD_DRV_RESP(c, dresp);
	return 0;
}

int sim_cmd_create_cq(struct sim_cmd *c)
{
	struct ib_uverbs_create_cq req;
	struct ib_uverbs_create_cq_resp resp = { 0 };
	int err;

	CMD_REQ(c, req);
	err = create(c, req.user_handle, req.cqe, req.comp_channel, req.comp_vector, 0, &resp);
	if (err)
		return err;
	CMD_RESP(c, resp);
	return 0;
}

int sim_cmd_create_cq_ex(struct sim_cmd *c)
{
	struct ib_uverbs_ex_create_cq req;
	struct ib_uverbs_ex_create_cq_resp resp = { 0 };
	int err;

	CMD_REQ(c, req);
	/* Completion timestamps need a device clock the model does not have. */
	if (req.comp_mask || (req.flags & ~IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN))
		return EOPNOTSUPP;
	err = create(c, req.user_handle, req.cqe, req.comp_channel, req.comp_vector, req.flags,
		     &resp.base);
	if (err)
		return err;
	resp.response_length = sizeof(resp);
	CMD_RESP(c, resp);
	return 0;
}

int sim_cmd_resize_cq(struct sim_cmd *c)
{
	struct ib_uverbs_resize_cq req;
	struct ib_uverbs_resize_cq_resp resp = { 0 };
	struct mlx5_ib_resize_cq dreq;
	struct sim_cq *cq;
	int err;

	CMD_REQ(c, req);
	if (c->drv_len < offsetof(struct mlx5_ib_resize_cq, reserved0))
		return EINVAL;
	CMD_DRV(c, dreq);
	CMD_OBJ(c, req.cq_handle, SIM_UOBJ_CQ, cq);
	/* The CQEs of the work posted before the resize count against the new size. */
	sim_engine_settle();
	err = sim_cq_resize(cq, req.cqe, dreq.buf_addr, dreq.cqe_size);
	if (err)
		return err;
	resp.cqe = cq->cqe_cnt - 1;
	CMD_RESP(c, resp);
	return 0;
}

int sim_cmd_destroy_cq(struct sim_cmd *c)
{
	struct ib_uverbs_destroy_cq req;
	struct ib_uverbs_destroy_cq_resp resp = { 0 };
	struct sim_cq *cq;
	uint32_t events, async;
	int err;

	CMD_REQ(c, req);
	CMD_OBJ(c, req.cq_handle, SIM_UOBJ_CQ, cq);
	events = cq->comp_events;
	async = cq->async_events;
	err = sim_handle_destroy(c->ctx, req.cq_handle, SIM_UOBJ_CQ);
	if (err)
		return err;
	/* libibverbs waits until the user acked this many completion events. */
	resp.comp_events_reported = events;
	resp.async_events_reported = async;
	CMD_RESP(c, resp);
	return 0;
}
