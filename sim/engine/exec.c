/* The requester half of the engine: take the SQ head WQE, check it like the HCA
 * (structure, opcode for the QP type, local keys), route it to the responder, and
 * complete it — CQE when signaled, error CQE always, RNR and transport retries. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../common/log.h"
#include "../model/model.h"
#include "../model/world.h"
#include "../fabric/segment.h"
#include "cqe.h"
#include "eth_tx.h"
#include "exec.h"
#include "msg.h"
#include "remote.h"
#include "grh.h"
#include "synd.h"
#include "umr.h"
#include "sq_decode.h"
#include "xlate.h"

/* Decoded WQE scratch space; the engine only runs under the world lock. */
static struct sim_wqe wqe;

/* A DCI (the only IBV_QPT_DRIVER QP with a send queue) is acknowledged like RC. */
static bool reliable(uint8_t type)
{
	return type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND || type == IBV_QPT_DRIVER;
}

/* QPs that name the destination in each WQE's address vector: UD and DCI. */
static bool addressed_per_wqe(uint8_t type)
{
	return type == IBV_QPT_UD || type == IBV_QPT_DRIVER;
}

static void req_cqe(struct sim_qp *qp, const struct sim_wqe *w, uint32_t ci, uint8_t synd,
		    uint32_t byte_cnt)
{
	struct sim_cqe e = { 0 };

	e.op = synd ? CQE_REQ_ERR : CQE_REQ;
	e.syndrome = synd;
	e.vendor = synd == SYND_FLUSH ? 0xf9 : 0;
	e.sop = w->opcode;
	e.qpn = qp->qpn;
	e.wqe_counter = (uint16_t)ci;
	e.byte_cnt = byte_cnt;
	e.srqn_uidx = qp->ctx->cqe_version ? qp->uidx : 0;
	sim_cq_push(qp->scq, &e);
}

static void retire(struct sim_qp *qp, const struct sim_wqe *w)
{
	qp->sq_ci += w->nbb;
	qp->retrying = false;
}

/* A failed WQE always reports, whatever its CE bits. Unreliable QPs stop only their send
 * queue (SQE state), reliable ones the whole QP. */
static enum sim_work fail(struct sim_qp *qp, struct sim_wqe *w, uint8_t synd)
{
	sim_info("QP 0x%x: WQE %u (opcode 0x%02x) failed, syndrome 0x%02x", qp->qpn,
		 (unsigned)(qp->sq_ci & 0xffff), w->opcode, synd);
	req_cqe(qp, w, qp->sq_ci, synd, 0);
	retire(qp, w);
	qp->state = reliable(qp->type) || synd == SYND_RETRY_EXC || synd == SYND_RNR_EXC ?
			    IBV_QPS_ERR : IBV_QPS_SQE;
	sim_qp_publish(qp);
	return SIM_W_DONE;
}

static enum sim_work succeed(struct sim_qp *qp, struct sim_wqe *w, uint32_t byte_cnt)
{
	uint8_t ce = w->fm_ce_se & WQE_CE_MASK;

	if (ce == 0x08 || ce == 0x0c)
		req_cqe(qp, w, qp->sq_ci, SYND_OK, byte_cnt);
	retire(qp, w);
	return SIM_W_DONE;
}

/* RNR timer values of the IB spec in microseconds, by the responder's min_rnr_timer;
 * capped so a program that sets 0 (655 ms) does not crawl. */
static const uint32_t rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880,
	163840, 245760, 327680, 491520,
};
#define RETRY_CAP_US 10000u

/* One failed attempt at the head WQE: the first attempt plus `limit` retries are made,
 * then the WQE fails. rnr_retry 7 means retry forever. */
static enum sim_work retry(struct sim_qp *qp, struct sim_wqe *w, bool rnr, uint8_t timer,
			   uint64_t now)
{
	uint8_t limit = rnr ? qp->rnr_retry : qp->retry_cnt;
	bool forever = rnr && limit == 7;
	uint64_t us;

	if (!forever) {
		if (!qp->retrying)
			qp->retries_left = limit;
		if (qp->retries_left == 0)
			return fail(qp, w, rnr ? SYND_RNR_EXC : SYND_RETRY_EXC);
		qp->retries_left--;
	}
	qp->retrying = true;
	if (rnr)
		us = rnr_us[timer & 31];
	else /* local ACK timeout 4.096 us << timeout; 0 disables it: wait the cap */
		us = qp->timeout ? (4096ull << qp->timeout) / 1000 : RETRY_CAP_US;
	if (us > RETRY_CAP_US)
		us = RETRY_CAP_US;
	if (us < 50)
		us = 50;
	qp->retry_at_ns = now + us * 1000;
	return forever ? SIM_W_WAIT : SIM_W_DONE;
}

/* Builds host iovecs for the payload: inline bytes straight from the decoded WQE, pointer
 * segments through their lkeys (local read needs no access bit). */
static int gather(struct sim_qp *qp, const struct sim_wqe *w, struct sim_iov *iov, int *n)
{
	int k = 0;

	for (int i = 0; i < w->npieces; i++) {
		const struct sim_piece *p = &w->piece[i];
		struct sim_sge sg = { p->lkey, p->len, p->addr };
		int got, synd;

		if (!p->len)
			continue;
		if (p->inl) {
			iov[k].addr = (uint64_t)(uintptr_t)(w->raw + p->addr);
			iov[k].len = p->len;
			k++;
			continue;
		}
		synd = sim_xlate_local(qp->ctx->dev, qp->pd, &sg, 1, 0, p->len, 0, iov + k, &got);
		if (synd)
			return synd;
		k += got;
	}
	*n = k;
	return SYND_OK;
}

/* READ and atomic results land in the data segments: they need local write access. */
static int landing(struct sim_qp *qp, struct sim_wqe *w, uint64_t len, struct sim_iov *iov,
		   int *n)
{
	struct sim_sge sg[63];

	for (int i = 0; i < w->npieces; i++) {
		sg[i].lkey = w->piece[i].lkey;
		sg[i].len = w->piece[i].len;
		sg[i].addr = w->piece[i].addr;
	}
	return sim_xlate_local(qp->ctx->dev, qp->pd, sg, w->npieces, 0, len,
			       IBV_ACCESS_LOCAL_WRITE, iov, n);
}

/* The GRH from our port's GID: GID 0 on InfiniBand, the AV's source GID on RoCE. */
static void build_grh(struct sim_qp *qp, const struct sim_av *av, uint64_t len, uint8_t *g)
{
	const struct sim_port *p = &qp->ctx->dev->port[qp->port];
	const struct sim_gid_entry *e = &p->gids[av->sgid_index % SIM_GID_TBL_LEN];

	if (p->eth)
		sim_grh_build(e->gid, e->type, av, len, g);
	else
		sim_grh_build(p->gid, 0, av, len, g);
}

/* The destination port: by LID on InfiniBand, by destination GID on Ethernet (RoCE has
 * no LIDs; a RoCE AV's rlid field holds the UDP source port instead). */
static struct sim_dev *route(const struct sim_qp *qp, const struct sim_wqe *w, int *port)
{
	bool ud = addressed_per_wqe(qp->type);
	uint8_t sport = ud || !qp->path.port ? qp->port : qp->path.port;

	if (qp->ctx->dev->port[sport].eth)
		return sim_find_gid(ud ? w->av.rgid : qp->path.dgid, port);
	return sim_find_lid(ud ? w->av.rlid : qp->path.dlid, port);
}

/* What the responder's answer means for the head WQE. */
static enum sim_work complete(struct sim_qp *qp, struct sim_wqe *w, const struct sim_msg *m,
			      enum sim_resp r, uint64_t now)
{
	switch (r) {
	case SIM_R_ACK:
		return succeed(qp, w, (uint32_t)m->len);
	case SIM_R_NAK:
		return fail(qp, w, m->nak);
	case SIM_R_RNR:
		return retry(qp, w, true, m->rnr_timer, now);
	case SIM_R_UNREACHABLE:
		return retry(qp, w, false, 0, now);
	case SIM_R_BLOCKED:
	default:
		return SIM_W_WAIT;
	}
}

/* The destination QP lives in another process of the fabric: hand the message to its
 * owner and keep the WQE (and its inline bytes) in flight until the answer comes. */
static enum sim_work post_remote(struct sim_qp *qp, struct sim_wqe *w, struct sim_msg *m,
				 uint64_t now)
{
	struct sim_iov payload[SIM_MAX_IOV];
	int np, err;

	/* Made with the QP (sim_qp_create): this may run in a signal handler (tick.c). */
	if (!qp->inflight)
		return fail(qp, w, SYND_LOC_QP_OP);
	memcpy(qp->inflight, w, sizeof(*w));
	if (m->payload) {
		/* Re-point inline pieces into the copy that outlives this call. */
		gather(qp, qp->inflight, payload, &np);
		m->payload = payload;
		m->npayload = np;
	}
	err = sim_remote_post(qp, m);
	if (err == EAGAIN)
		return SIM_W_WAIT;
	if (err)
		return complete(qp, w, m, reliable(qp->type) ? SIM_R_UNREACHABLE : SIM_R_ACK, now);
	qp->fab_posted_ns = now;
	return SIM_W_DONE;
}

/* No answer for this long: the owner is not serving (stuck, or its pid was reused by
 * another program) and the requester times out as it would waiting for an ACK. */
#define REMOTE_TIMEOUT_NS 2000000000ull

static enum sim_work finish_remote(struct sim_qp *qp, uint64_t now)
{
	struct sim_wqe *w = qp->inflight;
	struct sim_msg m;
	enum sim_resp r;
	int err;

	memset(&m, 0, sizeof(m));
	err = sim_remote_answer(qp, &r, &m);
	if (err == EAGAIN && now - qp->fab_posted_ns > REMOTE_TIMEOUT_NS) {
		sim_warn("QP 0x%x: no answer from pid %d", qp->qpn, (int)qp->fab_peer);
		sim_remote_cancel(qp);
		err = ETIMEDOUT;
	}
	if (err == EAGAIN)
		return SIM_W_WAIT;
	if (err)
		r = SIM_R_UNREACHABLE; /* the owner died or does not answer */
	m.len = w->has_atomic ? 8 : w->len;
	return complete(qp, w, &m, r, now);
}

bool sim_exec_acked(struct sim_qp *qp)
{
	struct sim_wqe *w = qp->inflight;
	struct sim_msg m;
	enum sim_resp r;

	memset(&m, 0, sizeof(m));
	if (qp->fab_ticket < 0 || sim_remote_answer(qp, &r, &m) || r != SIM_R_ACK)
		return false;
	succeed(qp, w, w->has_atomic ? 8 : (uint32_t)w->len);
	return true;
}

enum sim_work sim_exec_head(struct sim_qp *qp, bool step, uint64_t now)
{
	struct sim_iov payload[SIM_MAX_IOV], result[SIM_MAX_IOV];
	struct sim_wqe *w = &wqe;
	struct sim_msg m;
	struct sim_dev *src_dev = qp->ctx->dev;
	int np = 0, nr = 0, synd, port;
	bool rel = reliable(qp->type);

	if (qp->fab_ticket >= 0)
		return finish_remote(qp, now);
	if (qp->fab_synd) {
		/* Its message was withdrawn (the MR it names was deregistered). */
		uint8_t synd = qp->fab_synd;

		if (!sim_cq_room(qp->scq, 1))
			return SIM_W_WAIT;
		qp->fab_synd = 0;
		return fail(qp, qp->inflight, synd);
	}
	if (qp->retrying && !step && now < qp->retry_at_ns)
		return SIM_W_WAIT;
	/* Room for our CQE first: even an unsignaled WQE may fail and must report. */
	if (!sim_cq_room(qp->scq, 1))
		return SIM_W_WAIT;
	synd = sim_wqe_parse(qp, qp->sq_ci, w);
	if (synd)
		return fail(qp, w, (uint8_t)synd);
	if (w->opcode == OP_NOP)
		return succeed(qp, w, 0);
	if (w->opcode == OP_UMR) { /* local work: nothing goes on the wire */
		synd = sim_umr_exec(qp, w);
		return synd ? fail(qp, w, (uint8_t)synd) : succeed(qp, w, 0);
	}

	memset(&m, 0, sizeof(m));
	m.peer = getpid();
	m.src_type = qp->type;
	m.src_qpn = qp->qpn;
	m.src_qkey = qp->qkey;
	m.src_cq = qp->scq;
	m.op = w->opcode;
	m.se = w->fm_ce_se & WQE_SOLICITED;
	memcpy(m.imm, w->imm, 4);
	m.len = w->len;
	m.raddr = w->raddr;
	m.rkey = w->rkey;
	m.swap_add = w->swap_add;
	m.compare = w->compare;
	m.xrc_srqn = w->xrc_srqn;
	if (w->opcode == OP_RDMA_READ || w->has_atomic) {
		if (w->has_atomic)
			m.len = 8;
		synd = landing(qp, w, m.len, result, &nr);
		m.result = result;
		m.nresult = nr;
	} else {
		synd = gather(qp, w, payload, &np);
		m.payload = payload;
		m.npayload = np;
	}
	if (!synd && qp->type == IBV_QPT_RAW_PACKET)
		synd = sim_eth_send(qp, w, payload, np); /* frames go on the wire, not to a QP */
	if (synd)
		return fail(qp, w, (uint8_t)synd);
	if (qp->type == IBV_QPT_RAW_PACKET)
		return succeed(qp, w, (uint32_t)w->len);

	if (qp->type == IBV_QPT_UD) {
		m.dqpn = w->av.dqpn;
		m.qkey = w->av.qkey;
		m.sl = w->av.sl;
		m.slid = src_dev->port[qp->port].lid;
		/* Every RoCE packet carries its L3 header (the AV's GRH bit is reserved there). */
		if (w->av.grh || src_dev->port[qp->port].eth) {
			m.grh = true;
			build_grh(qp, &w->av, m.len, m.grh_bytes);
		}
	} else if (qp->type == IBV_QPT_DRIVER) {
		/* DC: the DCT and its key from the AV; the DCT's CQE reports this DCI. */
		m.dqpn = w->av.dqpn;
		m.dc_key = w->av.dc_key;
		m.sl = w->av.sl;
		m.slid = src_dev->port[qp->port].lid;
	} else {
		m.dqpn = qp->dest_qpn;
		m.sl = qp->path.sl;
		m.slid = src_dev->port[qp->path.port ? qp->path.port : qp->port].lid;
	}
	m.dst_dev = route(qp, w, &port);
	if (!m.dst_dev)
		return complete(qp, w, &m, rel ? SIM_R_UNREACHABLE : SIM_R_ACK, now);
	if (sim_fabric_on() && !sim_idmap_get(&m.dst_dev->qps, m.dqpn)) {
		if (sim_remote_direct(qp, &m))
			return complete(qp, w, &m, SIM_R_ACK, now);
		return post_remote(qp, w, &m, now);
	}
	return complete(qp, w, &m, sim_respond(&m), now);
}
