/* The ioctl forms of CQ_CREATE, QP_CREATE and SRQ_CREATE. libibverbs takes them for every
 * context once the kernel has them, and an imported context has no other way: its
 * creations must name its own async fd (EVENT_FD), which only the ioctl carries. Each is
 * decoded as the kernel's handler decodes it (uverbs_std_types_cq.c, _qp.c, _srq.c) into
 * the request of the extended write() command, whose handler (cmd_*.c) then does the
 * work; its answer goes back into the output attributes and UHW_OUT. */
#include <errno.h>
#include <stdlib.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>

#include "../model/obj.h"
#include "handles.h"
#include "ioctl.h"
#include "uverbs.h"

/* Runs write() handler fn on the core request req and the UHW_IN bytes as the driver
 * request. */
static int run_cmd(struct sim_bundle *b, struct sim_cmd *c, const void *req, size_t req_len,
		   size_t core_room, int (*fn)(struct sim_cmd *c))
{
	size_t n = sim_ioctl_len(b, UVERBS_ATTR_UHW_IN);
	uint8_t *drv = NULL;
	int err;

	memset(c, 0, sizeof(*c));
	c->ctx = b->ctx;
	c->ex = true;
	c->req = req;
	c->req_len = req_len;
	c->out_core = core_room;
	if (n) {
		if (!(drv = malloc(n)))
			return ENOMEM;
		if (sim_ioctl_read(b, UVERBS_ATTR_UHW_IN, drv, n)) {
			free(drv);
			return EFAULT;
		}
	}
	c->drv = drv;
	c->drv_len = n;
	err = fn(c);
	free(drv);
	return err;
}

/* The driver's answer: as much as UHW_OUT has room for. */
static int uhw_out(struct sim_bundle *b, const struct sim_cmd *c)
{
	int err = sim_ioctl_copy_to(b, UVERBS_ATTR_UHW_OUT, c->drv_resp, c->drv_resp_len);

	return err == ENOENT ? 0 : err;
}

/* uverbs_get_flags32(): absent is 0; a bit outside allowed is EINVAL. */
static int get_flags(const struct sim_bundle *b, uint16_t id, uint64_t allowed, uint32_t *out)
{
	uint64_t f = 0;

	*out = 0;
	if (!sim_ioctl_has(b, id))
		return 0;
	if (sim_ioctl_read(b, id, &f, sizeof(f)))
		return EFAULT;
	if (f & ~allowed)
		return EINVAL;
	*out = (uint32_t)f;
	return 0;
}

/* The further async fd (ASYNC_EVENT_ALLOC) an EVENT_FD attribute names; NULL for the
 * context's first one, or none. */
static struct sim_channel *event_chan(const struct sim_bundle *b, uint16_t id)
{
	struct sim_list *pos, *tmp;
	int fd;

	if (!sim_ioctl_has(b, id))
		return NULL;
	fd = (int)sim_ioctl_handle(b, id);
	sim_list_for_each_safe(pos, tmp, &b->ctx->channels) {
		struct sim_channel *ch = sim_container_of(pos, struct sim_channel, link);

		if (ch->async && ch->rd == fd)
			return ch;
	}
	return NULL;
}

/* A handle just created for the caller, or the object undone if it cannot be told. */
static int give_handle(struct sim_bundle *b, uint16_t id, uint32_t handle, int uobj, int err)
{
	if (!err)
		err = sim_ioctl_set_id(b, id, handle);
	if (err)
		sim_handle_destroy(b->ctx, handle, uobj);
	return err;
}

static int cq_create(struct sim_bundle *b)
{
	struct ib_uverbs_ex_create_cq req = { 0 };
	const struct ib_uverbs_ex_create_cq_resp *resp;
	struct sim_cmd c;
	uint32_t flags;
	int err;

	if (!b->ctx->live)
		return EINVAL;
	sim_ioctl_read(b, UVERBS_ATTR_CREATE_CQ_CQE, &req.cqe, sizeof(req.cqe));
	sim_ioctl_read(b, UVERBS_ATTR_CREATE_CQ_USER_HANDLE, &req.user_handle,
		       sizeof(req.user_handle));
	sim_ioctl_read(b, UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, &req.comp_vector,
		       sizeof(req.comp_vector));
	err = get_flags(b, UVERBS_ATTR_CREATE_CQ_FLAGS,
			IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION | IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN,
			&flags);
	if (err)
		return err;
	/* Every CQE carries the device clock already. */
	req.flags = flags & ~(uint32_t)IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	req.comp_channel = sim_ioctl_has(b, UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL) ?
				   (int32_t)sim_ioctl_handle(b, UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL) :
				   -1;
	err = run_cmd(b, &c, &req, sizeof(req), sizeof(*resp), sim_cmd_create_cq_ex);
	if (err)
		return err;
	resp = (const void *)c.resp;
	((struct sim_cq *)sim_handle_get(b->ctx, resp->base.cq_handle, SIM_UOBJ_CQ))->event_chan =
		event_chan(b, UVERBS_ATTR_CREATE_CQ_EVENT_FD);
	err = sim_ioctl_copy_to(b, UVERBS_ATTR_CREATE_CQ_RESP_CQE, &resp->base.cqe,
				sizeof(resp->base.cqe));
	if (!err)
		err = uhw_out(b, &c);
	return give_handle(b, UVERBS_ATTR_CREATE_CQ_HANDLE, resp->base.cq_handle, SIM_UOBJ_CQ,
			   err);
}

/* What the ioctl accepts in FLAGS; SQ_SIG_ALL is its own, the rest go to the driver. */
#define QP_FLAGS                                                                         \
	(IB_UVERBS_QP_CREATE_BLOCK_MULTICAST_LOOPBACK | IB_UVERBS_QP_CREATE_SCATTER_FCS |   \
	 IB_UVERBS_QP_CREATE_CVLAN_STRIPPING | IB_UVERBS_QP_CREATE_PCI_WRITE_END_PADDING |  \
	 IB_UVERBS_QP_CREATE_SQ_SIG_ALL)
#define QP_CREATE_SOURCE_QPN (1u << 10) /* the kernel's IB_QP_CREATE_SOURCE_QPN */

static int qp_create(struct sim_bundle *b)
{
	struct ib_uverbs_ex_create_qp req = { 0 };
	const struct ib_uverbs_ex_create_qp_resp *resp;
	struct ib_uverbs_qp_cap cap;
	struct sim_cmd c;
	uint32_t flags;
	int err;

	if (!b->ctx->live)
		return EINVAL;
	sim_ioctl_read(b, UVERBS_ATTR_CREATE_QP_CAP, &cap, sizeof(cap));
	sim_ioctl_read(b, UVERBS_ATTR_CREATE_QP_USER_HANDLE, &req.user_handle,
		       sizeof(req.user_handle));
	req.qp_type = (uint8_t)sim_ioctl_const(b, UVERBS_ATTR_CREATE_QP_TYPE);
	switch (sim_ioctl_const(b, UVERBS_ATTR_CREATE_QP_TYPE)) {
	case IB_UVERBS_QPT_XRC_TGT:
		if (sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE) ||
		    sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE) ||
		    sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_PD_HANDLE) ||
		    sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE))
			return EINVAL;
		if (!sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_XRCD_HANDLE))
			return ENOENT;
		/* The write() command passes the XRC domain in the PD's place. */
		req.pd_handle = sim_ioctl_handle(b, UVERBS_ATTR_CREATE_QP_XRCD_HANDLE);
		break;
	case IB_UVERBS_QPT_RAW_PACKET:
	case IB_UVERBS_QPT_RC:
	case IB_UVERBS_QPT_UC:
	case IB_UVERBS_QPT_UD:
	case IB_UVERBS_QPT_XRC_INI:
	case IB_UVERBS_QPT_DRIVER:
		if (sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_XRCD_HANDLE) ||
		    (sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_SOURCE_QPN) &&
		     req.qp_type == IB_UVERBS_QPT_XRC_INI))
			return EINVAL;
		if (!sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_PD_HANDLE))
			return ENOENT;
		req.pd_handle = sim_ioctl_handle(b, UVERBS_ATTR_CREATE_QP_PD_HANDLE);
		if (sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE))
			return EOPNOTSUPP; /* no RSS indirection tables, as the write() form */
		if (!sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE) ||
		    (req.qp_type != IB_UVERBS_QPT_XRC_INI &&
		     !sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE)))
			return ENOENT;
		req.send_cq_handle = sim_ioctl_handle(b, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE);
		req.recv_cq_handle = sim_ioctl_handle(b, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE);
		break;
	default:
		return EINVAL;
	}
	if ((err = get_flags(b, UVERBS_ATTR_CREATE_QP_FLAGS, QP_FLAGS, &flags)))
		return err;
	req.sq_sig_all = !!(flags & IB_UVERBS_QP_CREATE_SQ_SIG_ALL);
	req.create_flags = flags & ~(uint32_t)IB_UVERBS_QP_CREATE_SQ_SIG_ALL;
	if (sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_SOURCE_QPN)) {
		sim_ioctl_read(b, UVERBS_ATTR_CREATE_QP_SOURCE_QPN, &req.source_qpn,
			       sizeof(req.source_qpn));
		req.create_flags |= QP_CREATE_SOURCE_QPN;
	}
	if (sim_ioctl_has(b, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE)) {
		const struct sim_srq *srq = sim_ioctl_obj(b, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE);

		/* XRC SRQs serve XRC targets alone, and those take no other. */
		if (srq->xrc != (req.qp_type == IB_UVERBS_QPT_XRC_TGT))
			return EINVAL;
		req.is_srq = 1;
		req.srq_handle = sim_ioctl_handle(b, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE);
	}
	req.max_send_wr = cap.max_send_wr;
	req.max_recv_wr = cap.max_recv_wr;
	req.max_send_sge = cap.max_send_sge;
	req.max_recv_sge = cap.max_recv_sge;
	req.max_inline_data = cap.max_inline_data;
	err = run_cmd(b, &c, &req, sizeof(req), sizeof(*resp), sim_cmd_create_qp_ex);
	if (err)
		return err;
	resp = (const void *)c.resp;
	((struct sim_qp *)sim_handle_get(b->ctx, resp->base.qp_handle, SIM_UOBJ_QP))->event_chan =
		event_chan(b, UVERBS_ATTR_CREATE_QP_EVENT_FD);
	cap.max_send_wr = resp->base.max_send_wr;
	cap.max_recv_wr = resp->base.max_recv_wr;
	cap.max_send_sge = resp->base.max_send_sge;
	cap.max_recv_sge = resp->base.max_recv_sge;
	cap.max_inline_data = resp->base.max_inline_data;
	err = sim_ioctl_copy_to_zero(b, UVERBS_ATTR_CREATE_QP_RESP_CAP, &cap, sizeof(cap));
	if (!err)
		err = sim_ioctl_copy_to(b, UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, &resp->base.qpn,
					sizeof(resp->base.qpn));
	if (!err)
		err = uhw_out(b, &c);
	return give_handle(b, UVERBS_ATTR_CREATE_QP_HANDLE, resp->base.qp_handle, SIM_UOBJ_QP,
			   err);
}

static int srq_create(struct sim_bundle *b)
{
	struct ib_uverbs_create_xsrq req = { 0 };
	const struct ib_uverbs_create_srq_resp *resp;
	struct sim_cmd c;
	int err;

	if (!b->ctx->live)
		return EINVAL;
	req.srq_type = (uint32_t)sim_ioctl_const(b, UVERBS_ATTR_CREATE_SRQ_TYPE);
	sim_ioctl_read(b, UVERBS_ATTR_CREATE_SRQ_USER_HANDLE, &req.user_handle,
		       sizeof(req.user_handle));
	sim_ioctl_read(b, UVERBS_ATTR_CREATE_SRQ_MAX_WR, &req.max_wr, sizeof(req.max_wr));
	sim_ioctl_read(b, UVERBS_ATTR_CREATE_SRQ_MAX_SGE, &req.max_sge, sizeof(req.max_sge));
	sim_ioctl_read(b, UVERBS_ATTR_CREATE_SRQ_LIMIT, &req.srq_limit, sizeof(req.srq_limit));
	req.pd_handle = sim_ioctl_handle(b, UVERBS_ATTR_CREATE_SRQ_PD_HANDLE);
	switch (req.srq_type) {
	case IB_UVERBS_SRQT_XRC:
		if (!sim_ioctl_has(b, UVERBS_ATTR_CREATE_SRQ_XRCD_HANDLE) ||
		    !sim_ioctl_has(b, UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE))
			return ENOENT;
		req.xrcd_handle = sim_ioctl_handle(b, UVERBS_ATTR_CREATE_SRQ_XRCD_HANDLE);
		req.cq_handle = sim_ioctl_handle(b, UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE);
		break;
	case IB_UVERBS_SRQT_TM:
		return EOPNOTSUPP; /* no tag matching, as the write() form */
	case IB_UVERBS_SRQT_BASIC:
		break;
	default:
		return EINVAL;
	}
	err = run_cmd(b, &c, &req, sizeof(req), sizeof(*resp), sim_cmd_create_xsrq);
	if (err)
		return err;
	resp = (const void *)c.resp;
	((struct sim_srq *)sim_handle_get(b->ctx, resp->srq_handle, SIM_UOBJ_SRQ))->event_chan =
		event_chan(b, UVERBS_ATTR_CREATE_SRQ_EVENT_FD);
	if (!(err = sim_ioctl_copy_to(b, UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR, &resp->max_wr,
				      sizeof(resp->max_wr))) &&
	    !(err = sim_ioctl_copy_to(b, UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE, &resp->max_sge,
				      sizeof(resp->max_sge)))) {
		err = sim_ioctl_copy_to(b, UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM, &resp->srqn,
					sizeof(resp->srqn));
		if (err == ENOENT)
			err = 0;
	}
	if (!err)
		err = uhw_out(b, &c);
	return give_handle(b, UVERBS_ATTR_CREATE_SRQ_HANDLE, resp->srq_handle, SIM_UOBJ_SRQ, err);
}

#define NEW(id_, t) { (id_), SIM_ATTR_IDR_NEW, true, (t), 0, 0 }
#define OBJ(id_, t, m) { (id_), SIM_ATTR_IDR_READ, (m), (t), 0, 0 }
#define IN(id_, m, min, max) { (id_), SIM_ATTR_PTR_IN, (m), 0, (min), (max) }
#define OUT(id_, m, n) { (id_), SIM_ATTR_PTR_OUT, (m), 0, (n), (n) }
#define CONST(id_) { (id_), SIM_ATTR_CONST_IN, true, 0, 8, 8 }
#define EVENT_FD(id_) { (id_), SIM_ATTR_FD_ASYNC, false, 0, 0, 0 }
#define UHW { UVERBS_ATTR_UHW_IN, SIM_ATTR_PTR_IN, false, 0, 0, UINT16_MAX }, \
	    { UVERBS_ATTR_UHW_OUT, SIM_ATTR_PTR_OUT, false, 0, 0, UINT16_MAX }

const struct sim_ioctl_method sim_ioctl_create_methods[] = {
	{ UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, "CQ_CREATE", cq_create,
	  { NEW(UVERBS_ATTR_CREATE_CQ_HANDLE, SIM_UOBJ_CQ),
	    IN(UVERBS_ATTR_CREATE_CQ_CQE, true, 4, 4),
	    IN(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, true, 8, 8),
	    { UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, SIM_ATTR_FD_COMP, false, 0, 0, 0 },
	    IN(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, true, 4, 4),
	    IN(UVERBS_ATTR_CREATE_CQ_FLAGS, false, 4, 8),
	    OUT(UVERBS_ATTR_CREATE_CQ_RESP_CQE, true, 4),
	    EVENT_FD(UVERBS_ATTR_CREATE_CQ_EVENT_FD),
	    UHW } },
	{ UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE, "QP_CREATE", qp_create,
	  { NEW(UVERBS_ATTR_CREATE_QP_HANDLE, SIM_UOBJ_QP),
	    OBJ(UVERBS_ATTR_CREATE_QP_XRCD_HANDLE, SIM_UOBJ_XRCD, false),
	    OBJ(UVERBS_ATTR_CREATE_QP_PD_HANDLE, SIM_UOBJ_PD, false),
	    OBJ(UVERBS_ATTR_CREATE_QP_SRQ_HANDLE, SIM_UOBJ_SRQ, false),
	    OBJ(UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, SIM_UOBJ_CQ, false),
	    OBJ(UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, SIM_UOBJ_CQ, false),
	    /* No indirection-table objects exist: any handle names nothing. */
	    OBJ(UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE, SIM_UOBJ_FREE, false),
	    IN(UVERBS_ATTR_CREATE_QP_USER_HANDLE, true, 8, 8),
	    IN(UVERBS_ATTR_CREATE_QP_CAP, true, sizeof(struct ib_uverbs_qp_cap),
	       sizeof(struct ib_uverbs_qp_cap)),
	    CONST(UVERBS_ATTR_CREATE_QP_TYPE),
	    IN(UVERBS_ATTR_CREATE_QP_FLAGS, false, 4, 8),
	    IN(UVERBS_ATTR_CREATE_QP_SOURCE_QPN, false, 4, 4),
	    EVENT_FD(UVERBS_ATTR_CREATE_QP_EVENT_FD),
	    OUT(UVERBS_ATTR_CREATE_QP_RESP_CAP, true, sizeof(struct ib_uverbs_qp_cap)),
	    OUT(UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, true, 4),
	    UHW } },
	{ UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_CREATE, "SRQ_CREATE", srq_create,
	  { NEW(UVERBS_ATTR_CREATE_SRQ_HANDLE, SIM_UOBJ_SRQ),
	    OBJ(UVERBS_ATTR_CREATE_SRQ_PD_HANDLE, SIM_UOBJ_PD, true),
	    OBJ(UVERBS_ATTR_CREATE_SRQ_XRCD_HANDLE, SIM_UOBJ_XRCD, false),
	    OBJ(UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE, SIM_UOBJ_CQ, false),
	    IN(UVERBS_ATTR_CREATE_SRQ_USER_HANDLE, true, 8, 8),
	    IN(UVERBS_ATTR_CREATE_SRQ_MAX_WR, true, 4, 4),
	    IN(UVERBS_ATTR_CREATE_SRQ_MAX_SGE, true, 4, 4),
	    IN(UVERBS_ATTR_CREATE_SRQ_LIMIT, true, 4, 4),
	    IN(UVERBS_ATTR_CREATE_SRQ_MAX_NUM_TAGS, false, 4, 4),
	    CONST(UVERBS_ATTR_CREATE_SRQ_TYPE),
	    EVENT_FD(UVERBS_ATTR_CREATE_SRQ_EVENT_FD),
	    OUT(UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR, true, 4),
	    OUT(UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE, true, 4),
	    OUT(UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM, false, 4),
	    UHW } },
	{ 0 },
};
