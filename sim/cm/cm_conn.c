/* The connection handshake (IB CM, as the kernel's rdma_cm drives it for user QPs):
 *
 *   active                         passive
 *   CONNECT  ---- REQ ---------->  CONNECT_REQUEST event on the listener, new id
 *                                  (user: QP to RTR, RTS) ACCEPT
 *   CONNECT_RESPONSE  <--- REP --
 *   (user: QP to RTR, RTS) ACCEPT
 *            ---- RTU ---------->  ESTABLISHED
 *   DISCONNECT -- DREQ --------->  DISCONNECTED (and DISCONNECTED on the active side)
 *   REJECT either way: REJ, the other side sees REJECTED with the reason as status.
 *   UD: SIDR REQ -> CONNECT_REQUEST; ACCEPT -> SIDR REP -> ESTABLISHED with the peer's
 *   QPN, Q_Key and address vector (or UNREACHABLE with the SIDR status).
 * Nobody listening: REJ "invalid service id" (8) / SIDR status "unsupported" (1). */
#include "cm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../common/log.h"

static void msg_init(struct sim_wire_cm *m, const struct cm_id *id, uint8_t kind)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->ps = id->ps;
	m->src.proc = cm_self();
	m->src.pid = getpid();
	m->src.comm = id->comm;
}

static void msg_pd(struct sim_wire_cm *m, const uint8_t *pd, uint8_t len)
{
	memcpy(m->pd, pd, len);
	m->pd_len = len;
}

static void reply(const struct cm_id *id, uint8_t kind, uint8_t status)
{
	struct sim_wire_cm m;

	msg_init(&m, id, kind);
	m.status = status;
	cm_send(&id->peer, &m);
}

/* The user's connection parameters as REQ and REP carry them: the IB CM's retry fields
 * are 3 bits wide, and the kernel's cma.c clamps both counts to 7 (libfabric's RxM asks
 * for 15 retries, which would make the QP's RTS transition fail with EINVAL). */
static struct sim_wire_cm_conn conn_of(const struct rdma_ucm_conn_param *p)
{
	return (struct sim_wire_cm_conn){
		.resp_res = p->responder_resources,
		.init_depth = p->initiator_depth,
		.flow_control = p->flow_control,
		.retry = p->retry_count < 7 ? p->retry_count : 7,
		.rnr_retry = p->rnr_retry_count < 7 ? p->rnr_retry_count : 7,
		.srq = p->srq,
	};
}

int cm_listen(struct cm_id *id, int backlog)
{
	if (id->state == CM_IDLE) {
		struct sockaddr_in any = { .sin_family = AF_INET };
		int err = cm_bind(id, (struct sockaddr *)&any);

		if (err)
			return err;
	}
	if (id->state != CM_BOUND)
		return EINVAL;
	if (cm_listens(id->ps, (struct sockaddr *)&id->src))
		return EADDRINUSE; /* a second listener on the same address (reuseaddr ids) */
	id->backlog = backlog;
	id->state = CM_LISTEN;
	cm_listener_publish(id, true);
	return 0;
}

int cm_connect(struct cm_id *id, const struct rdma_ucm_conn_param *p)
{
	bool ud = id->qp_type == IBV_QPT_UD;
	struct sim_wire_cm m;

	if (id->state != CM_ROUTE ||
	    p->private_data_len > (ud ? CM_SIDR_REQ_PD : CM_REQ_PD) - CM_IP_HDR)
		return EINVAL;
	id->qpn = p->qp_num;
	id->psn = cm_initial_psn(id);
	id->conn = conn_of(p);
	id->state = ud ? CM_SIDR_SENT : CM_REQ_SENT;
	msg_init(&m, id, ud ? CM_MSG_SIDR_REQ : CM_MSG_REQ);
	m.qpn = id->qpn;
	m.psn = id->psn;
	m.conn = id->conn;
	memcpy(&m.src_addr, &id->src, sizeof(m.src_addr));
	memcpy(&m.dst_addr, &id->dst, sizeof(m.dst_addr));
	msg_pd(&m, p->private_data, p->private_data_len);
	cm_send_req(&m);
	return 0;
}

int cm_accept(struct cm_id *id, uint64_t uid, const struct rdma_ucm_conn_param *p)
{
	bool ud = id->qp_type == IBV_QPT_UD;
	struct sim_wire_cm m;

	if (!p) { /* the active side confirms the REP */
		if (id->state != CM_REP_RCVD)
			return EINVAL;
		id->state = CM_ESTABLISHED;
		reply(id, CM_MSG_RTU, 0);
		return 0;
	}
	if (id->state != CM_REQ_RCVD || p->private_data_len > (ud ? CM_SIDR_REP_PD : CM_REP_PD))
		return EINVAL;
	msg_init(&m, id, ud ? CM_MSG_SIDR_REP : CM_MSG_REP);
	id->uid = uid;
	id->qpn = p->qp_num;
	m.qpn = p->qp_num;
	msg_pd(&m, p->private_data, p->private_data_len);
	if (ud) {
		id->qkey = id->ps == RDMA_PS_IB ? p->qkey : CM_UDP_QKEY;
		m.qkey = id->qkey;
		id->state = CM_UD_READY;
	} else {
		m.conn = conn_of(p);
		id->conn.resp_res = m.conn.resp_res;
		id->conn.init_depth = m.conn.init_depth;
		m.psn = id->psn;
		id->state = CM_REP_SENT;
	}
	cm_send(&id->peer, &m);
	return 0;
}

int cm_reject(struct cm_id *id, uint8_t reason, const uint8_t *pd, uint8_t len)
{
	bool ud = id->qp_type == IBV_QPT_UD;
	struct sim_wire_cm m;

	if ((id->state != CM_REQ_RCVD && (ud || id->state != CM_REP_RCVD)) ||
	    len > (ud ? CM_SIDR_REP_PD : CM_REJ_PD))
		return EINVAL;
	msg_init(&m, id, ud ? CM_MSG_SIDR_REP : CM_MSG_REJ);
	m.status = ud ? CM_SIDR_REJECT : reason ? reason : CM_REJ_CONSUMER_DEFINED;
	msg_pd(&m, pd, len);
	id->state = CM_CLOSED;
	cm_send(&id->peer, &m);
	return 0;
}

int cm_disconnect(struct cm_id *id)
{
	switch (id->state) {
	case CM_IDLE:
	case CM_BOUND:
	case CM_ADDR:
	case CM_ROUTE:
	case CM_LISTEN:
		return EINVAL; /* never had a connection */
	case CM_ESTABLISHED:
	case CM_REP_SENT:
	case CM_REP_RCVD:
		/* DREQ out; the DREP comes at once, so our DISCONNECTED too. */
		id->state = CM_CLOSED;
		reply(id, CM_MSG_DREQ, 0);
		cm_event_post(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
		return 0;
	case CM_DREQ_RCVD:
		id->state = CM_CLOSED; /* the DREP */
		return 0;
	default:
		return 0; /* nothing to disconnect; the kernel reports success */
	}
}

/* What a destroyed id tells its peer (kernel cm_destroy_id). */
static void abort_id(struct cm_id *id)
{
	switch (id->state) {
	case CM_REQ_SENT:
		reply(id, CM_MSG_REJ, CM_REJ_TIMEOUT);
		break;
	case CM_REQ_RCVD:
		if (id->qp_type == IBV_QPT_UD)
			reply(id, CM_MSG_SIDR_REP, CM_SIDR_REJECT);
		else
			reply(id, CM_MSG_REJ, CM_REJ_CONSUMER_DEFINED);
		break;
	case CM_REP_SENT:
	case CM_REP_RCVD:
		reply(id, CM_MSG_REJ, CM_REJ_CONSUMER_DEFINED);
		break;
	case CM_ESTABLISHED:
		reply(id, CM_MSG_DREQ, 0);
		break;
	case CM_LISTEN:
		cm_listener_publish(id, false);
		break;
	default:
		break;
	}
	id->state = CM_CLOSED;
}

void cm_destroy_id(struct cm_id *id, uint32_t *events_reported)
{
	struct cm_id *orphan;

	while ((orphan = cm_id_drop_events(id))) {
		abort_id(orphan);
		cm_id_free(orphan);
	}
	abort_id(id);
	*events_reported = id->events_reported;
	cm_id_free(id);
}

void cm_chan_free(struct cm_chan *ch)
{
	struct cm_id *id = cm_id_first(), *next;

	/* Destroying an id may free others (its unread requests): start over each time. */
	while (id) {
		next = cm_id_next(id);
		if (id->ch == ch && id->handle != UINT32_MAX) {
			uint32_t n;

			cm_destroy_id(id, &n);
			next = cm_id_first();
		}
		id = next;
	}
	free(ch);
}
