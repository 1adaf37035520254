/* Queue pairs: creation from the buffers libmlx5 allocated, and destruction. The state
 * machine lives in qp_state.c. */
#include <errno.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

#include "../common/log.h"
#include "../common/mapped.h"
#include "../fabric/mrtab.h"
#include "../fabric/owners.h"
#include "model.h"
#include "world.h"

#define MAX_WQE_CNT 32768u /* log_max_qp_sz 15, also what we report as max_send_wqebb */
#define MLX5_QP_FLAG_SIGNATURE 1u

static bool pow2_or_zero(uint32_t v)
{
	return (v & (v - 1)) == 0;
}

static int check_geometry(const struct sim_qp_init *in)
{
	uint64_t rq_bytes, sq_bytes;
	int err;

	if (!pow2_or_zero(in->sq_wqe_cnt) || in->sq_wqe_cnt > MAX_WQE_CNT ||
	    !pow2_or_zero(in->rq_wqe_cnt) || in->rq_wqe_cnt > MAX_WQE_CNT)
		return EINVAL;
	if (in->rq_wqe_cnt && (in->rq_wqe_shift < 4 || in->rq_wqe_shift > 10))
		return EINVAL;
	/* A QP on an SRQ, an XRC initiator or target has no receive ring of its own. */
	if (in->rq_wqe_cnt && (in->srq || in->type == IBV_QPT_XRC_SEND || in->type == IBV_QPT_XRC_RECV))
		return EINVAL;
	if (in->sq_wqe_cnt && in->type == IBV_QPT_XRC_RECV)
		return EINVAL;
	rq_bytes = (uint64_t)in->rq_wqe_cnt << (in->rq_wqe_cnt ? in->rq_wqe_shift : 0);
	sq_bytes = (uint64_t)in->sq_wqe_cnt * 64;
	if (in->type == IBV_QPT_RAW_PACKET) {
		/* Separate SQ buffer: the kernel creates the SQ and RQ as two objects. */
		if ((err = sim_range_mapped(in->buf, rq_bytes)) ||
		    (err = sim_range_mapped(in->sq_buf, sq_bytes)))
			return err;
	} else if ((err = sim_range_mapped(in->buf, rq_bytes + sq_bytes))) {
		return err;
	}
	if ((err = sim_range_mapped(in->dbrec, 8)))
		return err;
	if (in->dbrec & 3)
		return EINVAL;
	return 0;
}

static bool has_eth_port(const struct sim_dev *dev)
{
	for (int p = 1; dev && p <= dev->nports; p++)
		if (dev->port[p].eth)
			return true;
	return false;
}

/* The kernel's check_qp_attr: a DCT receives through an SRQ and its CQ only; a DCI has
 * no receive side (an SRQ it is given is never used). */
static int check_dc(const struct sim_qp_init *in)
{
	if (!in->pd || (in->srq && in->srq->xrc))
		return EINVAL;
	if (sim_dc_role(in->flags) == SIM_DC_DCT)
		return in->srq && in->rcq ? 0 : EINVAL;
	if (in->max_recv_wr || in->max_recv_sge || in->rq_wqe_cnt)
		return EINVAL;
	return in->scq ? 0 : EINVAL;
}

static int check_type(const struct sim_qp_init *in)
{
	switch (in->type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		if (!in->pd || !in->scq || !in->rcq)
			return EINVAL;
		if (in->srq && in->srq->xrc)
			return EINVAL;
		return 0;
	case IBV_QPT_XRC_SEND:
		return in->pd && in->scq && !in->srq ? 0 : EINVAL;
	case IBV_QPT_XRC_RECV:
		return in->xrcd && !in->srq ? 0 : EINVAL;
	case IBV_QPT_RAW_PACKET:
		if (!has_eth_port(in->pd ? in->pd->ctx->dev : NULL))
			return EOPNOTSUPP; /* raw Ethernet needs an Ethernet port */
		return in->pd && in->scq && in->rcq && !(in->srq && in->srq->xrc) ? 0 : EINVAL;
	case IBV_QPT_DRIVER:
		return check_dc(in);
	default:
		return EINVAL;
	}
}

int sim_qp_create(struct sim_ctx *ctx, const struct sim_qp_init *in, struct sim_qp **out)
{
	struct sim_dev *dev = ctx->dev;
	struct sim_qp *qp;
	int err;

	uint8_t dc = in->type == IBV_QPT_DRIVER ? sim_dc_role(in->flags) : SIM_DC_NONE;

	/* A DCT has no queue buffer or doorbell record: nothing to check. */
	if ((err = check_type(in)) || (dc != SIM_DC_DCT && (err = check_geometry(in))))
		return err;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return ENOMEM;
	/* The copy of a WQE in flight to another process is made here, not at its first post:
	 * a pass may run in a poller's tick, a signal handler, which must not allocate (the
	 * interrupted code may hold the allocator's lock, e.g. in an mmap hook of UCX or
	 * Open MPI called from malloc; that hung an MPI rank for good). */
	if (in->inflight_size && !(qp->inflight = malloc(in->inflight_size))) {
		free(qp);
		return ENOMEM;
	}
	qp->ctx = ctx;
	qp->dc = dc;
	qp->dc_key = dc == SIM_DC_DCT ? in->dc_key : 0;
	/* A DCT gets its number when it reaches RTR (sim_dct_number); until then it is 0. */
	if (dc != SIM_DC_DCT)
		qp->qpn = sim_fabric_on() ? sim_fabric_next_qpn(dev->index) : dev->next_qpn++;
	qp->fab_ticket = -1;
	qp->fab_reg = -1;
	qp->user_handle = in->user_handle;
	qp->type = in->type;
	qp->state = IBV_QPS_RESET;
	qp->pd = in->pd;
	qp->scq = in->scq;
	qp->rcq = in->rcq;
	qp->srq = in->srq;
	qp->xrcd = in->xrcd;
	/* CQE version 1 identifies the QP by its user index; XRC targets have none (their
	 * completions carry the XRC SRQ's index). */
	qp->uidx = ctx->cqe_version && in->type != IBV_QPT_XRC_RECV ? in->uidx & 0xffffff : 0;
	qp->sq_sig_all = in->sq_sig_all;
	qp->rq_sig = in->flags & MLX5_QP_FLAG_SIGNATURE;
	qp->rq_buf = (uint8_t *)(uintptr_t)in->buf;
	qp->rq_cnt = in->rq_wqe_cnt;
	qp->rq_shift = in->rq_wqe_cnt ? in->rq_wqe_shift : 0;
	qp->sq_buf = in->type == IBV_QPT_RAW_PACKET ? (uint8_t *)(uintptr_t)in->sq_buf :
						      qp->rq_buf + ((size_t)qp->rq_cnt << qp->rq_shift);
	sim_list_init(&qp->flows);
	qp->sq_cnt = in->sq_wqe_cnt;
	qp->dbrec = (volatile uint32_t *)(uintptr_t)in->dbrec;
	qp->cap.max_send_wr = in->max_send_wr;
	qp->cap.max_send_sge = in->max_send_sge;
	/* The receive caps are the RQ's, as the mlx5 kernel driver derives them from the
	 * geometry libmlx5 asks for (set_rq_size): every WQE slot, every data segment of a
	 * stride but the signature's. libmlx5 reports the send caps itself but takes these
	 * from QUERY_QP, so echoing the request (max_recv_sge 3 for a 4-segment stride)
	 * would make ibv_query_qp disagree with what libmlx5 accepts. */
	if (qp->rq_cnt) {
		qp->cap.max_recv_wr = qp->rq_cnt;
		qp->cap.max_recv_sge = (1u << qp->rq_shift) / 16 - (qp->rq_sig ? 1 : 0);
	}
	qp->cap.max_inline = in->max_inline;
	qp->port = 1;
	qp->path_mtu = IBV_MTU_4096;
	if (qp->qpn && sim_idmap_put(&dev->qps, qp->qpn, qp)) {
		free(qp->inflight);
		free(qp);
		return ENOMEM;
	}
	if (qp->pd)
		qp->pd->users++;
	if (qp->scq)
		qp->scq->users++;
	if (qp->rcq)
		qp->rcq->users++;
	if (qp->srq)
		qp->srq->users++;
	if (qp->xrcd)
		qp->xrcd->users++;
	sim_list_add_tail(&sim_world.qps, &qp->link);
	if (qp->sq_cnt)
		ctx->nqp_created++;
	/* Everything but an XRC initiator can be addressed by other processes. */
	if (sim_fabric_on() && qp->type != IBV_QPT_XRC_SEND && qp->qpn)
		qp->fab_reg = sim_fabric_add_qp(dev->index, qp->qpn);
	sim_dbg("%s: QP 0x%x type %d sq %u rq %u<<%u uidx %u", dev->name, qp->qpn, qp->type,
		qp->sq_cnt, qp->rq_cnt, qp->rq_shift, qp->uidx);
	*out = qp;
	return 0;
}

int sim_qp_destroy(struct sim_qp *qp)
{
	if (!sim_list_empty(&qp->flows))
		return EBUSY; /* its steering rules hold it, as in the kernel */
	if (sim_fabric_on() && qp->type != IBV_QPT_XRC_SEND && qp->qpn)
		sim_fabric_del_qp(qp->ctx->dev->index, qp->qpn);
	free(qp->inflight);
	sim_list_del(&qp->link);
	if (qp->qpn)
		sim_idmap_del(&qp->ctx->dev->qps, qp->qpn);
	if (qp->pd)
		qp->pd->users--;
	if (qp->scq)
		qp->scq->users--;
	if (qp->rcq)
		qp->rcq->users--;
	if (qp->srq)
		qp->srq->users--;
	if (qp->xrcd)
		sim_xrcd_put(qp->xrcd);
	free(qp);
	return 0;
}

/* Requesters in other processes place RDMA WRITEs into an RC QP's or a DCT's memory
 * themselves only while it can receive; they read that, its access flags, PD and DC key
 * from the registry. */
void sim_qp_publish(const struct sim_qp *qp)
{
	bool rx = qp->state == IBV_QPS_RTR || qp->state == IBV_QPS_RTS ||
		  qp->state == IBV_QPS_SQD || qp->state == IBV_QPS_SQE;

	uint32_t kind = !rx ? SIM_FAB_RX_NONE :
			qp->type == IBV_QPT_RC ? SIM_FAB_RX_RC :
			qp->dc == SIM_DC_DCT ? SIM_FAB_RX_DCT : SIM_FAB_RX_NONE;

	if (qp->fab_reg >= 0)
		sim_fabric_qp_state(qp->fab_reg, kind, qp->access, qp->pd ? qp->pd->pdn : 0,
				    qp->dc_key);
}

int sim_dct_number(struct sim_qp *qp)
{
	struct sim_dev *dev = qp->ctx->dev;
	uint32_t n = sim_fabric_on() ? sim_fabric_next_qpn(dev->index) : dev->next_qpn++;

	if (sim_idmap_put(&dev->qps, n, qp))
		return ENOMEM;
	qp->qpn = n;
	if (sim_fabric_on())
		qp->fab_reg = sim_fabric_add_qp(dev->index, n);
	sim_dbg("%s: DCT 0x%x key 0x%llx", dev->name, n, (unsigned long long)qp->dc_key);
	return 0;
}
