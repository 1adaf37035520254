/* QP commands. CREATE_QP's mlx5 driver request describes the QP buffer (RQ first, then
 * SQ), the doorbell record, both ring sizes and the user index; QUERY_QP reports the
 * attributes kept by the model, including sq_sig_all. */
#include <errno.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>

#include "../common/log.h"
#include "../engine/remote.h"
#include "../engine/sq_decode.h"
#include "../fabric/segment.h"
#include "../model/model.h"
#include "../model/world.h"
#include "handles.h"
#include "uverbs.h"

/* The kernel hands out BlueFlame registers skipping index 0 (doorbell only) and the
 * fast-path slots 2 and 3 of each UAR page: register n lives at (n/2)*4 + n%2. With
 * FVSIM_NO_BLUEFLAME every QP gets register 0, which libmlx5 reports as bf.size 0: the
 * 8-byte-doorbell path a real HCA gives once its BlueFlame registers run out. */
static uint32_t bfreg_for(struct sim_ctx *ctx)
{
	uint32_t n = 1 + ctx->nqp_created % 15;

	if (sim_world.cfg.no_blueflame)
		return 0;
	return (n / 2) * 4 + n % 2;
}

/* The create flags the kernel's uverbs core passes on to the driver (ib_verbs.h
 * IB_QP_CREATE_*): block multicast loopback, cross channel, managed send and receive,
 * scatter FCS, CVLAN stripping, source QPN, PCI write end padding. */
#define CORE_CREATE_FLAGS (1u << 1 | 1u << 2 | 1u << 3 | 1u << 4 | 1u << 8 | 1u << 9 | \
			   1u << 10 | 1u << 11)

static int create(struct sim_cmd *c, const struct ib_uverbs_create_qp *req, uint32_t flags,
		  struct sim_qp **out)
{
	struct mlx5_ib_create_qp dreq;
	struct sim_qp_init in = { 0 };
	struct sim_ctx *ctx = c->ctx;
	int err;

	if (c->drv_len < offsetof(struct mlx5_ib_create_qp, flags))
		return EINVAL;
	CMD_DRV(c, dreq);
	if (flags & ~CORE_CREATE_FLAGS)
		return EINVAL; /* the uverbs core knows no such flag */
	/* DC: the driver decides on its vendor flags before it looks at the core ones. */
	if (req->qp_type == IBV_QPT_DRIVER && (err = sim_dc_create_flags(dreq.flags, flags)))
		return err;
	/* Blocking multicast loopback holds trivially: the device has no multicast. The
	 * others (cross-channel, scatter FCS, VLAN stripping, source QPN, end padding) are
	 * capabilities it lacks. */
	if (flags & ~(uint32_t)IB_UVERBS_QP_CREATE_BLOCK_MULTICAST_LOOPBACK)
		return EOPNOTSUPP;
	/* Raw Ethernet: only for CAP_NET_RAW, as the kernel's uverbs layer demands. */
	if (req->qp_type == IBV_QPT_RAW_PACKET && !sim_cap_net_raw())
		return EPERM;
	in.user_handle = req->user_handle;
	in.type = req->qp_type;
	in.sq_sig_all = req->sq_sig_all;
	if (in.type == IBV_QPT_XRC_RECV) {
		/* An XRC target hangs off its XRC domain, passed in the PD handle slot. */
		in.xrcd = sim_handle_get(ctx, req->pd_handle, SIM_UOBJ_XRCD);
		if (!in.xrcd)
			return EINVAL;
	} else {
		in.pd = sim_handle_get(ctx, req->pd_handle, SIM_UOBJ_PD);
		in.scq = sim_handle_get(ctx, req->send_cq_handle, SIM_UOBJ_CQ);
		if (in.type != IBV_QPT_XRC_SEND)
			in.rcq = sim_handle_get(ctx, req->recv_cq_handle, SIM_UOBJ_CQ);
		if (req->is_srq) {
			in.srq = sim_handle_get(ctx, req->srq_handle, SIM_UOBJ_SRQ);
			if (!in.srq)
				return EINVAL;
		}
	}
	in.buf = dreq.buf_addr;
	in.sq_buf = dreq.sq_buf_addr;
	in.dc_key = dreq.access_key; /* the same bytes: a DCT has no SQ buffer */
	in.dbrec = dreq.db_addr;
	in.sq_wqe_cnt = dreq.sq_wqe_count;
	in.rq_wqe_cnt = dreq.rq_wqe_count;
	in.rq_wqe_shift = dreq.rq_wqe_shift;
	in.flags = dreq.flags;
	in.uidx = dreq.uidx;
	in.max_send_wr = req->max_send_wr;
	in.max_recv_wr = req->max_recv_wr;
	in.max_send_sge = req->max_send_sge;
	in.max_recv_sge = req->max_recv_sge;
	in.max_inline = req->max_inline_data;
	in.inflight_size = sim_fabric_on() ? sizeof(struct sim_wqe) : 0;
	err = sim_qp_create(ctx, &in, out);
	return err ? err : sim_handle_bind(ctx, SIM_UOBJ_QP, *out, &(*out)->handle);
}

static void fill_create_resp(struct sim_cmd *c, struct sim_qp *qp,
			     struct ib_uverbs_create_qp_resp *r)
{
	struct mlx5_ib_create_qp_resp dresp = { 0 };

	/* Capabilities echo the request: libmlx5 already sized everything and overrides
	 * what it reports to the user with its own numbers. */
	r->qp_handle = qp->handle;
	r->qpn = qp->qpn;
	r->max_send_wr = qp->cap.max_send_wr;
	r->max_recv_wr = qp->cap.max_recv_wr;
	r->max_send_sge = qp->cap.max_send_sge;
	r->max_recv_sge = qp->cap.max_recv_sge;
	r->max_inline_data = qp->cap.max_inline;
	dresp.bfreg_index = qp->sq_cnt ? bfreg_for(c->ctx) : 0;
	CMD_DRV_RESP(c, dresp);
}

int sim_cmd_create_qp(struct sim_cmd *c)
{
	struct ib_uverbs_create_qp req;
	struct ib_uverbs_create_qp_resp resp = { 0 };
	struct sim_qp *qp;
	int err;

	CMD_REQ(c, req);
	err = create(c, &req, 0, &qp);
	if (err)
		return err;
	fill_create_resp(c, qp, &resp);
	CMD_RESP(c, resp);
	return 0;
}

int sim_cmd_create_qp_ex(struct sim_cmd *c)
{
	struct ib_uverbs_ex_create_qp ex;
	struct ib_uverbs_create_qp req = { 0 };
	struct ib_uverbs_ex_create_qp_resp resp = { 0 };
	struct sim_qp *qp;
	int err;

	CMD_REQ(c, ex);
	if (ex.comp_mask)
		return EOPNOTSUPP; /* RSS indirection tables */
	req.user_handle = ex.user_handle;
	req.pd_handle = ex.pd_handle;
	req.send_cq_handle = ex.send_cq_handle;
	req.recv_cq_handle = ex.recv_cq_handle;
	req.srq_handle = ex.srq_handle;
	req.max_send_wr = ex.max_send_wr;
	req.max_recv_wr = ex.max_recv_wr;
	req.max_send_sge = ex.max_send_sge;
	req.max_recv_sge = ex.max_recv_sge;
	req.max_inline_data = ex.max_inline_data;
	req.sq_sig_all = ex.sq_sig_all;
	req.qp_type = ex.qp_type;
	req.is_srq = ex.is_srq;
	err = create(c, &req, ex.create_flags, &qp);
	if (err)
		return err;
	fill_create_resp(c, qp, &resp.base);
	resp.response_length = sizeof(resp);
	CMD_RESP(c, resp);
	return 0;
}

/* An address vector's fields, the uverbs name then ours (the GID apart): one list for both
 * directions. */
#define PATH_FIELDS(X)                                                                            \
	X(dlid, dlid) X(sl, sl) X(src_path_bits, src_path_bits) X(static_rate, static_rate)        \
	X(port_num, port) X(is_global, grh) X(flow_label, flow_label) X(sgid_index, sgid_index)   \
	X(hop_limit, hop_limit) X(traffic_class, tclass)

static void path_from_uverbs(struct sim_path *p, const struct ib_uverbs_qp_dest *d)
{
#define FROM(u, s) p->s = d->u;
	PATH_FIELDS(FROM)
#undef FROM
	memcpy(p->dgid, d->dgid, 16);
}

static void path_to_uverbs(struct ib_uverbs_qp_dest *d, const struct sim_path *p)
{
#define TO(u, s) d->u = p->s;
	PATH_FIELDS(TO)
#undef TO
	memcpy(d->dgid, p->dgid, 16);
}

/* A DCT's move to RTR answers its new number in the driver response, which needs room
 * for at least the length and the number (the legacy command has none). */
static int dct_rtr_room(const struct sim_cmd *c, const struct sim_qp *qp,
			const struct ib_uverbs_modify_qp *r)
{
	bool to_rtr = (r->attr_mask & IBV_QP_STATE) && r->qp_state == IBV_QPS_RTR;

	if (qp->dc != SIM_DC_DCT || !to_rtr || qp->state != IBV_QPS_INIT)
		return 0;
	return c->out_drv < offsetof(struct mlx5_ib_modify_qp_resp, ece_options) ? EINVAL : 0;
}

static void dct_rtr_resp(struct sim_cmd *c, const struct sim_qp *qp)
{
	struct mlx5_ib_modify_qp_resp dresp = { 0 };

	dresp.response_length = c->out_drv < sizeof(dresp) ?
					offsetof(struct mlx5_ib_modify_qp_resp, ece_options) :
					sizeof(dresp);
	dresp.dctn = qp->qpn;
	CMD_DRV_RESP(c, dresp);
}

static int modify(struct sim_cmd *c, const struct ib_uverbs_modify_qp *r)
{
	struct sim_qp_attr a = { 0 };
	struct sim_qp *qp;
	uint8_t before;
	int err;

	CMD_OBJ(c, r->qp_handle, SIM_UOBJ_QP, qp);
	if ((err = dct_rtr_room(c, qp, r)))
		return err;
	before = qp->state;
	a.mask = r->attr_mask;
	a.state = r->qp_state;
	a.cur_state = r->cur_qp_state;
	a.path_mtu = r->path_mtu;
	a.path_mig_state = r->path_mig_state;
	a.en_sqd_async = r->en_sqd_async_notify;
	a.max_rd_atomic = r->max_rd_atomic;
	a.max_dest_rd_atomic = r->max_dest_rd_atomic;
	a.min_rnr_timer = r->min_rnr_timer;
	a.port = r->port_num;
	a.timeout = r->timeout;
	a.retry_cnt = r->retry_cnt;
	a.rnr_retry = r->rnr_retry;
	a.alt_port = r->alt_port_num;
	a.alt_timeout = r->alt_timeout;
	a.qkey = r->qkey;
	a.rq_psn = r->rq_psn;
	a.sq_psn = r->sq_psn;
	a.dest_qpn = r->dest_qp_num;
	a.access = r->qp_access_flags;
	a.pkey_index = r->pkey_index;
	a.alt_pkey_index = r->alt_pkey_index;
	path_from_uverbs(&a.path, &r->dest);
	path_from_uverbs(&a.alt_path, &r->alt_dest);
	err = sim_qp_modify(qp, &a);
	/* Which attribute was refused is what a user debugging a stock program needs. */
	if (err)
		sim_dbg("QP 0x%x: MODIFY_QP %d -> %d (mask 0x%x) refused: rd_atomic %u/%u, "
			"timeout %u, retry %u, rnr %u/%u, access 0x%x", qp->qpn, qp->state, a.state,
			a.mask, a.max_rd_atomic, a.max_dest_rd_atomic, a.timeout, a.retry_cnt,
			a.rnr_retry, a.min_rnr_timer, a.access);
	/* A message still out at another process is forgotten when the QP stops; in ERR the
	 * flush first looks whether the owner acknowledged it already (sim_exec_acked). */
	if (!err && qp->state == IBV_QPS_RESET)
		sim_remote_cancel(qp);
	if (!err && qp->dc == SIM_DC_DCT && before == IBV_QPS_INIT)
		dct_rtr_resp(c, qp);
	return err;
}

int sim_cmd_modify_qp(struct sim_cmd *c)
{
	struct ib_uverbs_modify_qp req;

	CMD_REQ(c, req);
	return modify(c, &req);
}

int sim_cmd_modify_qp_ex(struct sim_cmd *c)
{
	struct ib_uverbs_ex_modify_qp req;
	struct ib_uverbs_ex_modify_qp_resp resp = { 0 };
	int err;

	CMD_REQ(c, req);
	if (req.base.attr_mask & IBV_QP_RATE_LIMIT)
		return EOPNOTSUPP;
	err = modify(c, &req.base);
	if (err)
		return err;
	resp.response_length = sizeof(resp);
	CMD_RESP(c, resp);
	return 0;
}

int sim_cmd_query_qp(struct sim_cmd *c)
{
	struct ib_uverbs_query_qp req;
	struct ib_uverbs_query_qp_resp r = { 0 };
	struct sim_qp *qp;

	CMD_REQ(c, req);
	CMD_OBJ(c, req.qp_handle, SIM_UOBJ_QP, qp);
	if (qp->dc == SIM_DC_DCT && sim_dct_query_mask(qp, req.attr_mask))
		return EINVAL;
	path_to_uverbs(&r.dest, &qp->path);
	path_to_uverbs(&r.alt_dest, &qp->alt_path);
	r.max_send_wr = qp->cap.max_send_wr;
	r.max_recv_wr = qp->cap.max_recv_wr;
	r.max_send_sge = qp->cap.max_send_sge;
	r.max_recv_sge = qp->cap.max_recv_sge;
	r.max_inline_data = qp->cap.max_inline;
	r.qkey = qp->qkey;
	r.rq_psn = qp->rq_psn;
	r.sq_psn = qp->sq_psn;
	r.dest_qp_num = qp->dest_qpn;
	r.qp_access_flags = qp->access;
	r.pkey_index = qp->pkey_index;
	r.alt_pkey_index = qp->alt_pkey_index;
	r.qp_state = qp->state;
	r.cur_qp_state = qp->state;
	r.path_mtu = qp->path_mtu;
	r.path_mig_state = qp->path_mig_state;
	r.max_rd_atomic = qp->max_rd_atomic;
	r.max_dest_rd_atomic = qp->max_dest_rd_atomic;
	r.min_rnr_timer = qp->min_rnr_timer;
	r.port_num = qp->port;
	r.timeout = qp->timeout;
	r.retry_cnt = qp->retry_cnt;
	r.rnr_retry = qp->rnr_retry;
	r.alt_port_num = qp->alt_port;
	r.alt_timeout = qp->alt_timeout;
	r.sq_sig_all = qp->sq_sig_all;
	CMD_RESP(c, r);
	return 0;
}

int sim_cmd_destroy_qp(struct sim_cmd *c)
{
	struct ib_uverbs_destroy_qp req;
	struct ib_uverbs_destroy_qp_resp resp = { 0 };
	struct sim_qp *qp;
	int err;

	CMD_REQ(c, req);
	CMD_OBJ(c, req.qp_handle, SIM_UOBJ_QP, qp);
	resp.events_reported = qp->events_reported;
	/* EBUSY while steering rules still name the QP. */
	if ((err = sim_handle_destroy(c->ctx, req.qp_handle, SIM_UOBJ_QP)))
		return err;
	CMD_RESP(c, resp);
	return 0;
}
