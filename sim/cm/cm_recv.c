/* What arrives at this process's ids: a message from one of its own ids (cm_send takes
 * the short way) or from another process (cm_deliver), the state change it makes and
 * the event it raises; and what the end of a peer process means for its connections.
 * The handshake these messages carry is drawn in cm_conn.c. */
#include "cm_int.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "../common/log.h"

void cm_send(const struct sim_wire_cm_end *to, struct sim_wire_cm *m)
{
	m->dst_comm = to->comm;
	if (to->proc == cm_self())
		cm_recv(m);
	else
		cm_send_out(to->proc, m);
}

void cm_send_req(struct sim_wire_cm *m)
{
	int inbox = -1;

	if (!cm_listens(m->ps, (struct sockaddr *)&m->dst_addr))
		inbox = cm_listener_inbox(m->ps, (struct sockaddr *)&m->dst_addr);
	if (inbox >= 0) {
		cm_send_out((uint32_t)inbox + 1, m);
		return;
	}
	/* Without a fabric a server in another process is out of reach: say how to reach it. */
	if (!cm_self() && !cm_listens(m->ps, (struct sockaddr *)&m->dst_addr))
		sim_warn("rdma_cm: no listener on that address in this process; a server in another "
			 "process is reached only when both run with the same FVSIM_FABRIC=name");
	cm_recv(m); /* ours, or nobody's: cm_recv refuses it */
}

/* The peer's depths, seen from this side: IB CM swaps them on receipt. */
static void take_depths(struct cm_id *id, const struct sim_wire_cm_conn *peer)
{
	id->conn.resp_res = peer->init_depth;
	id->conn.init_depth = peer->resp_res;
}

/* The conn part of a CONNECT_REQUEST / CONNECT_RESPONSE event: private data padded to
 * the message's room (pd_room), the depths from this side. */
static void conn_event(struct rdma_ucm_event_resp *ev, const struct cm_id *id,
		       const struct sim_wire_cm *m, uint8_t pd_room)
{
	struct rdma_ucm_conn_param *c = &ev->param.conn;

	memset(ev, 0, sizeof(*ev));
	memcpy(c->private_data, m->pd, m->pd_len);
	c->private_data_len = pd_room;
	c->responder_resources = id->conn.resp_res;
	c->initiator_depth = id->conn.init_depth;
	c->flow_control = m->conn.flow_control;
	c->retry_count = m->conn.retry;
	c->rnr_retry_count = m->conn.rnr_retry;
	c->srq = m->conn.srq;
	c->qp_num = m->qpn;
}

bool cm_listens(uint16_t ps, const struct sockaddr *addr)
{
	for (struct cm_id *l = cm_id_first(); l; l = cm_id_next(l))
		if (l->state == CM_LISTEN && l->ps == ps &&
		    cm_addr_match((struct sockaddr *)&l->src, addr))
			return true;
	return false;
}

static struct cm_id *find_listener(const struct sim_wire_cm *m)
{
	for (struct cm_id *l = cm_id_first(); l; l = cm_id_next(l))
		if (l->state == CM_LISTEN && l->ps == m->ps &&
		    cm_addr_match((struct sockaddr *)&l->src, (const struct sockaddr *)&m->dst_addr))
			return l;
	return NULL;
}

/* Answers a request nobody takes, from a stand-in for the missing listener. */
static void refuse(const struct sim_wire_cm *m, uint8_t status)
{
	struct sim_wire_cm r;

	memset(&r, 0, sizeof(r));
	r.kind = m->kind == CM_MSG_REQ ? CM_MSG_REJ : CM_MSG_SIDR_REP;
	r.status = status;
	r.ps = m->ps;
	r.src.proc = cm_self();
	r.src.pid = getpid();
	cm_send(&m->src, &r);
}

static void recv_req(const struct sim_wire_cm *m)
{
	bool ud = m->kind == CM_MSG_SIDR_REQ;
	struct cm_id *l = find_listener(m), *id;
	struct rdma_ucm_event_resp ev;

	if (!l) {
		refuse(m, ud ? CM_SIDR_UNSUPPORTED : CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	if (l->backlog <= 0 || !(id = cm_id_new(l->ch, 0, l->ps, l->qp_type))) {
		refuse(m, ud ? CM_SIDR_REJECT : CM_REJ_CONSUMER_DEFINED);
		return;
	}
	l->backlog--;
	id->listener = l;
	id->state = CM_REQ_RCVD;
	memcpy(&id->src, &m->dst_addr, sizeof(m->dst_addr));
	memcpy(&id->dst, &m->src_addr, sizeof(m->src_addr));
	id->has_dev = true;
	id->peer = m->src;
	id->psn = cm_initial_psn(id);
	id->remote_qpn = m->qpn;
	id->remote_psn = m->psn;
	id->conn = m->conn;
	take_depths(id, &m->conn);
	if (ud) {
		memset(&ev, 0, sizeof(ev));
		memcpy(ev.param.ud.private_data, m->pd, m->pd_len);
		ev.param.ud.private_data_len = CM_SIDR_REQ_PD - CM_IP_HDR;
	} else {
		conn_event(&ev, id, m, CM_REQ_PD - CM_IP_HDR);
	}
	cm_event_post_req(l, id, &ev);
}

static void recv_rep(struct cm_id *id, const struct sim_wire_cm *m)
{
	struct rdma_ucm_event_resp ev;

	if (id->state != CM_REQ_SENT)
		return;
	id->peer = m->src;
	id->remote_qpn = m->qpn;
	id->remote_psn = m->psn;
	id->conn.rnr_retry = m->conn.rnr_retry; /* the responder's RNR retries apply to us */
	take_depths(id, &m->conn);
	id->state = CM_REP_RCVD;
	conn_event(&ev, id, m, CM_REP_PD);
	cm_event_post(id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, &ev);
}

static void recv_sidr_rep(struct cm_id *id, const struct sim_wire_cm *m)
{
	struct rdma_ucm_event_resp ev;
	struct rdma_ucm_ud_param *u = &ev.param.ud;
	uint16_t lid;
	uint8_t gid[16];

	if (id->state != CM_SIDR_SENT)
		return;
	memset(&ev, 0, sizeof(ev));
	memcpy(u->private_data, m->pd, m->pd_len);
	u->private_data_len = CM_SIDR_REP_PD;
	if (m->status) {
		id->state = CM_CLOSED;
		cm_event_post(id, RDMA_CM_EVENT_UNREACHABLE, m->status, &ev);
		return;
	}
	id->peer = m->src;
	id->remote_qpn = m->qpn;
	id->state = CM_UD_READY;
	u->qp_num = m->qpn;
	u->qkey = m->qkey;
	cm_port_lid_gid(&lid, gid);
	u->ah_attr.dlid = lid;
	u->ah_attr.port_num = 1;
	cm_event_post(id, RDMA_CM_EVENT_ESTABLISHED, 0, &ev);
}

void cm_recv(const struct sim_wire_cm *m)
{
	struct cm_id *id;
	struct rdma_ucm_event_resp ev;

	if (m->kind == CM_MSG_REQ || m->kind == CM_MSG_SIDR_REQ) {
		recv_req(m);
		return;
	}
	id = cm_id_by_comm(m->dst_comm);
	sim_dbg("rdma_cm: message %u for comm %u (%s)", m->kind, m->dst_comm, id ? "found" : "gone");
	if (!id)
		return;
	memset(&ev, 0, sizeof(ev));
	switch (m->kind) {
	case CM_MSG_REP:
		recv_rep(id, m);
		break;
	case CM_MSG_SIDR_REP:
		recv_sidr_rep(id, m);
		break;
	case CM_MSG_RTU:
		if (id->state == CM_REP_SENT) {
			id->state = CM_ESTABLISHED;
			cm_event_post(id, RDMA_CM_EVENT_ESTABLISHED, 0, NULL);
		}
		break;
	case CM_MSG_REJ:
		if (id->state == CM_REQ_SENT || id->state == CM_REQ_RCVD ||
		    id->state == CM_REP_SENT || id->state == CM_REP_RCVD) {
			id->state = CM_CLOSED;
			memcpy(ev.param.conn.private_data, m->pd, m->pd_len);
			ev.param.conn.private_data_len = CM_REJ_PD;
			cm_event_post(id, RDMA_CM_EVENT_REJECTED, m->status, &ev);
		}
		break;
	case CM_MSG_DREQ:
		if (id->state == CM_ESTABLISHED || id->state == CM_REP_SENT ||
		    id->state == CM_REP_RCVD) {
			id->state = CM_DREQ_RCVD;
			cm_event_post(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
		}
		break;
	}
}

/* Connections to a process that ended hear the DREQ its closing file would have sent. */
void cm_peer_gone(const struct sim_wire_cm_end *peer)
{
	struct sim_wire_cm m;

	for (struct cm_id *id = cm_id_first(); id; id = cm_id_next(id)) {
		if (id->peer.proc != peer->proc || id->peer.pid != peer->pid ||
		    (id->state != CM_ESTABLISHED && id->state != CM_REP_SENT &&
		     id->state != CM_REP_RCVD))
			continue; /* a request in flight stays unanswered, as on the wire */
		memset(&m, 0, sizeof(m));
		m.kind = CM_MSG_DREQ;
		m.src = *peer;
		m.dst_comm = id->comm;
		cm_recv(&m);
	}
}

void cm_deliver(const struct sim_wire_cm *m)
{
	cm_lock();
	cm_recv(m);
	cm_unlock();
}

void cm_reap(void)
{
	cm_lock();
	for (struct cm_id *id = cm_id_first(); id; id = cm_id_next(id)) {
		struct sim_wire_cm_end p = id->peer;

		if (p.pid && p.pid != getpid() && kill(p.pid, 0) && errno == ESRCH)
			cm_peer_gone(&p); /* its ids leave the states where that matters */
	}
	cm_unlock();
}
