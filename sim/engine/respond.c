/* The responder half of the engine: what the destination HCA does with one message —
 * QP type and state checks, Q_Key, receive WQE selection (RQ, SRQ, XRC SRQ), R_Key and
 * access checks, data placement, atomics, responder CQEs and responder-side errors. */
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../common/be.h"
#include "../common/log.h"
#include "../model/model.h"
#include "cqe.h"
#include "msg.h"
#include "rq_take.h"
#include "synd.h"
#include "umr.h"
#include "xlate.h"

static bool reliable(uint8_t type)
{
	return type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND || type == IBV_QPT_XRC_RECV ||
	       type == IBV_QPT_DRIVER;
}

/* A DCI (IBV_QPT_DRIVER) talks to DCTs only. */
static bool peer_type_ok(uint8_t src, const struct sim_qp *dst)
{
	if (src == IBV_QPT_XRC_SEND)
		return dst->type == IBV_QPT_XRC_RECV;
	if (src == IBV_QPT_DRIVER)
		return dst->dc == SIM_DC_DCT;
	return src == dst->type;
}

/* A responder error takes an RC responder to error; a DCT serves every DCI and stays. */
static bool responder_to_error(struct sim_qp *qp)
{
	if (qp->dc == SIM_DC_DCT || qp->state == IBV_QPS_ERR)
		return false;
	qp->state = IBV_QPS_ERR;
	sim_qp_publish(qp);
	return true;
}

static bool can_receive(uint8_t state)
{
	return state == IBV_QPS_RTR || state == IBV_QPS_RTS || state == IBV_QPS_SQD ||
	       state == IBV_QPS_SQE;
}

/* Where receives for this message go and which PD guards the responder's memory. */
struct rx {
	struct sim_qp *qp;
	struct sim_srq *srq; /* NULL: the QP's own RQ */
	struct sim_pd *pd;
	struct sim_cq *cq;
	uint32_t uidx;
};

/* A responder-detected error on a reliable connection: the responder QP goes to error
 * (with an async event naming the class) and the requester gets the matching NAK. */
static enum sim_resp nak(struct sim_msg *m, struct rx *rx, uint8_t synd, uint32_t event)
{
	if (responder_to_error(rx->qp))
		sim_async_event(rx->qp->ctx, rx->qp->event_chan, rx->qp->user_handle, event);
	m->nak = synd;
	return SIM_R_NAK;
}

static void resp_err_cqe(struct rx *rx, const struct sim_rwqe *w, uint8_t synd)
{
	struct sim_cqe e = { 0 };

	e.op = CQE_RESP_ERR;
	e.syndrome = synd;
	e.qpn = rx->qp->qpn;
	e.wqe_counter = w->wqe_counter;
	e.srqn_uidx = rx->uidx;
	sim_cq_push(rx->cq, &e);
}

static void consume(struct rx *rx, const struct sim_rwqe *w)
{
	if (rx->srq)
		sim_srq_pop(rx->srq, w);
	else
		sim_rq_pop(rx->qp);
}

/* A receive WQE consumed by a message that cannot be placed completes in error and takes
 * the receiving QP to error; reliable requesters see the matching NAK. */
static enum sim_resp recv_error(struct sim_msg *m, struct rx *rx, const struct sim_rwqe *w,
				uint8_t synd)
{
	resp_err_cqe(rx, w, synd);
	consume(rx, w);
	responder_to_error(rx->qp);
	if (!reliable(m->src_type))
		return SIM_R_ACK;
	m->nak = synd == SYND_LOC_LEN ? SYND_REM_INV_REQ : SYND_REM_OP;
	return SIM_R_NAK;
}

/* A copy failed because the requester's own memory vanished under its registration (a
 * local DMA fault at the requester, as its HCA would see fetching the payload or
 * placing a READ/atomic result): the requester fails with a local protection error and
 * the responder stays as it was. */
static enum sim_resp local_fault(struct sim_msg *m)
{
	m->nak = SYND_LOC_PROT;
	return SIM_R_NAK;
}

/* Whose fault a failed copy from the requester's payload is. */
static bool payload_vanished(const struct sim_msg *m)
{
	return !sim_dma_readable(m->peer, m->payload, m->npayload, m->len);
}

static void resp_cqe(struct sim_msg *m, struct rx *rx, const struct sim_rwqe *w, uint8_t op,
		     uint32_t byte_cnt)
{
	struct sim_cqe e = { 0 };

	e.op = op;
	e.se = m->se;
	e.qpn = rx->qp->qpn;
	e.wqe_counter = w->wqe_counter;
	e.srqn_uidx = rx->uidx;
	e.byte_cnt = byte_cnt;
	e.slid = m->slid;
	e.flags_rqpn = (m->src_qpn & 0xffffff) | (uint32_t)(m->sl & 0xf) << 24 |
		       (m->grh ? 1u << 28 : 0);
	if (op == CQE_RESP_SEND_INV || op == CQE_RESP_SEND_IMM || op == CQE_RESP_WR_IMM)
		memcpy(e.imm, m->imm, 4);
	else
		e.imm[3] = (uint8_t)rx->qp->pkey_index; /* pkey index, low 16 bits, BE */
	sim_cq_push(rx->cq, &e);
}

static int pick_rx(struct sim_msg *m, struct sim_qp *dst, struct rx *rx)
{
	struct sim_ctx *ctx = dst->ctx;

	rx->qp = dst;
	if (dst->type == IBV_QPT_XRC_RECV) {
		struct sim_srq *srq = sim_idmap_get(&m->dst_dev->srqs, m->xrc_srqn);

		if (!srq || !srq->xrc || srq->xrcd != dst->xrcd)
			return -1;
		rx->srq = srq;
		rx->pd = srq->pd;
		rx->cq = srq->cq;
		rx->uidx = srq->ctx->cqe_version ? srq->uidx : srq->srqn;
		return 0;
	}
	rx->srq = dst->srq;
	rx->pd = dst->pd;
	rx->cq = dst->rcq;
	if (ctx->cqe_version)
		rx->uidx = dst->uidx;
	else
		rx->uidx = dst->srq ? dst->srq->srqn : 0;
	return 0;
}

static bool take_wqe(struct rx *rx, struct sim_rwqe *w)
{
	return rx->srq ? sim_srq_peek(rx->srq, w) : sim_rq_peek(rx->qp, w);
}

/* No receive WQE: reliable requesters are told to retry after our RNR timer. */
static enum sim_resp rnr(struct sim_msg *m, const struct rx *rx)
{
	if (!reliable(m->src_type))
		return SIM_R_ACK;
	m->rnr_timer = rx->qp->min_rnr_timer;
	return SIM_R_RNR;
}

/* The responder CQ must hold our CQE and, if the requester shares it, the requester's. */
static bool rx_room(const struct sim_msg *m, const struct rx *rx)
{
	return sim_cq_room(rx->cq, rx->cq == m->src_cq ? 2 : 1);
}

static enum sim_resp do_send(struct sim_msg *m, struct rx *rx)
{
	struct sim_iov dst[SIM_MAX_IOV];
	struct sim_rwqe w;
	uint64_t hdr = rx->qp->type == IBV_QPT_UD ? 40 : 0;
	int nd = 0, synd;
	uint8_t op;

	if (!take_wqe(rx, &w))
		return rnr(m, rx);
	if (!rx_room(m, rx))
		return SIM_R_BLOCKED;
	/* UD receives reserve the first 40 bytes of the buffer for the GRH. */
	synd = sim_xlate_local(m->dst_dev, rx->pd, w.sge, w.nsge, 0, hdr + m->len,
			       IBV_ACCESS_LOCAL_WRITE, dst, &nd);
	if (synd)
		return recv_error(m, rx, &w, (uint8_t)synd);
	if (m->grh) {
		struct sim_iov g = { (uint64_t)(uintptr_t)m->grh_bytes, 40 };

		if (sim_dma_copy(dst, nd, &g, 1, 40))
			return recv_error(m, rx, &w, SYND_LOC_PROT);
	}
	if (hdr) {
		/* Skip the GRH area in the scatter list before placing the payload. */
		uint64_t skip = hdr;
		int i = 0;

		while (skip && i < nd) {
			uint64_t s = dst[i].len < skip ? dst[i].len : skip;

			dst[i].addr += s;
			dst[i].len -= s;
			skip -= s;
			if (!dst[i].len)
				i++;
		}
		memmove(dst, dst + i, (size_t)(nd - i) * sizeof(dst[0]));
		nd -= i;
	}
	if (sim_dma_from(m->peer, dst, nd, m->payload, m->npayload, m->len))
		return payload_vanished(m) ? local_fault(m) : recv_error(m, rx, &w, SYND_LOC_PROT);
	op = m->op == OP_SEND_IMM ? CQE_RESP_SEND_IMM :
	     m->op == OP_SEND_INVAL ? CQE_RESP_SEND_INV : CQE_RESP_SEND;
	if (op == CQE_RESP_SEND_INV) /* checked in sim_respond before anything was placed */
		sim_mw_remote_inv(m->dst_dev, rx->pd, rx->qp->qpn, ld_be32(m->imm), true);
	resp_cqe(m, rx, &w, op, (uint32_t)(m->len + hdr));
	consume(rx, &w);
	return SIM_R_ACK;
}

static enum sim_resp do_write(struct sim_msg *m, struct rx *rx)
{
	struct sim_iov dst;
	struct sim_rwqe w;
	bool imm = m->op == OP_RDMA_WRITE_IMM;

	/* With immediate data the write needs a receive WQE; without one the responder
	 * answers RNR before touching memory. */
	if (imm) {
		if (!take_wqe(rx, &w))
			return rnr(m, rx);
		if (!rx_room(m, rx))
			return SIM_R_BLOCKED;
	}
	if (m->len) {
		bool ok = (rx->qp->access & IBV_ACCESS_REMOTE_WRITE) &&
			  sim_xlate_remote(m->dst_dev, rx->pd, rx->qp->qpn, m->rkey, m->raddr,
					   m->len, IBV_ACCESS_REMOTE_WRITE, &dst);

		if (ok && sim_dma_from(m->peer, &dst, 1, m->payload, m->npayload, m->len)) {
			if (payload_vanished(m))
				return local_fault(m);
			ok = false;
		}
		if (!ok) {
			if (!reliable(m->src_type))
				return SIM_R_ACK; /* UC: the message is dropped */
			return nak(m, rx, SYND_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR);
		}
	}
	if (imm) {
		resp_cqe(m, rx, &w, CQE_RESP_WR_IMM, (uint32_t)m->len);
		consume(rx, &w);
	}
	return SIM_R_ACK;
}

static enum sim_resp do_read(struct sim_msg *m, struct rx *rx)
{
	struct sim_iov src;

	if (!m->len)
		return SIM_R_ACK;
	if (!(rx->qp->access & IBV_ACCESS_REMOTE_READ) ||
	    !sim_xlate_remote(m->dst_dev, rx->pd, rx->qp->qpn, m->rkey, m->raddr, m->len,
			      IBV_ACCESS_REMOTE_READ, &src))
		return nak(m, rx, SYND_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR);
	if (sim_dma_to(m->peer, m->result, m->nresult, &src, 1, m->len)) {
		/* Our memory vanished under the MR, or the requester's landing area did. */
		if (!sim_dma_readable(getpid(), &src, 1, m->len))
			return nak(m, rx, SYND_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR);
		return local_fault(m);
	}
	return SIM_R_ACK;
}

/* 8-byte atomics on host-order operands; the old value goes back in host order (verbs
 * QPs on mlx5 use host-endian atomic responses, docs/formats.md §3.2). */
static enum sim_resp do_atomic(struct sim_msg *m, struct rx *rx)
{
	struct sim_iov tgt;
	uint64_t old, val;

	if (m->raddr & 7)
		return nak(m, rx, SYND_REM_INV_REQ, IBV_EVENT_QP_REQ_ERR);
	if (!(rx->qp->access & IBV_ACCESS_REMOTE_ATOMIC) ||
	    !sim_xlate_remote(m->dst_dev, rx->pd, rx->qp->qpn, m->rkey, m->raddr, 8,
			      IBV_ACCESS_REMOTE_ATOMIC, &tgt) ||
	    sim_dma_read(&old, tgt.addr, 8))
		return nak(m, rx, SYND_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR);
	if (m->op == OP_ATOMIC_CS)
		val = old == m->compare ? m->swap_add : old;
	else
		val = old + m->swap_add;
	if (val != old && sim_dma_write(tgt.addr, &val, 8))
		return nak(m, rx, SYND_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR);
	{
		struct sim_iov o = { (uint64_t)(uintptr_t)&old, 8 };

		if (sim_dma_to(m->peer, m->result, m->nresult, &o, 1, 8))
			return local_fault(m);
	}
	return SIM_R_ACK;
}

enum sim_resp sim_respond(struct sim_msg *m)
{
	struct sim_qp *dst = sim_idmap_get(&m->dst_dev->qps, m->dqpn);
	bool rel = reliable(m->src_type);
	struct rx rx = { 0 };

	/* Nobody answers a packet for a missing QP, a QP of another transport or one not
	 * ready to receive: reliable requesters time out, the others never know. */
	if (!dst || !peer_type_ok(m->src_type, dst) || !can_receive(dst->state))
		return rel ? SIM_R_UNREACHABLE : SIM_R_ACK;
	/* A DCT drops a request with the wrong DC key without answering: the DCI retries
	 * and fails with retry-exceeded (sim/README.md, DC transport). */
	if (dst->dc == SIM_DC_DCT && m->dc_key != dst->dc_key) {
		sim_dbg("DCT 0x%x: DC key 0x%llx mismatch from QP 0x%x, dropped", dst->qpn,
			(unsigned long long)m->dc_key, m->src_qpn);
		return SIM_R_UNREACHABLE;
	}
	if (dst->type == IBV_QPT_UD) {
		uint32_t qkey = (m->qkey & 0x80000000u) ? m->src_qkey : m->qkey;

		if (qkey != dst->qkey) {
			sim_dbg("QP 0x%x: Q_Key 0x%x mismatch, datagram dropped", dst->qpn, qkey);
			return SIM_R_ACK;
		}
	}
	if (pick_rx(m, dst, &rx)) {
		rx.qp = dst;
		return nak(m, &rx, SYND_REM_INV_REQ, IBV_EVENT_QP_REQ_ERR);
	}
	switch (m->op) {
	case OP_SEND_INVAL:
		/* Only a bound type 2 window of this QP and PD can be invalidated remotely;
		 * any other key makes the request an invalid one. */
		if (!sim_mw_remote_inv(m->dst_dev, rx.pd, dst->qpn, ld_be32(m->imm), false))
			return rel ? nak(m, &rx, SYND_REM_INV_REQ, IBV_EVENT_QP_REQ_ERR) :
				     SIM_R_ACK;
		/* fall through */
	case OP_SEND:
	case OP_SEND_IMM:
		return do_send(m, &rx);
	case OP_RDMA_WRITE:
	case OP_RDMA_WRITE_IMM:
		return do_write(m, &rx);
	case OP_RDMA_READ:
		return do_read(m, &rx);
	case OP_ATOMIC_CS:
	case OP_ATOMIC_FA:
		return do_atomic(m, &rx);
	default:
		return rel ? nak(m, &rx, SYND_REM_INV_REQ, IBV_EVENT_QP_REQ_ERR) : SIM_R_ACK;
	}
}
