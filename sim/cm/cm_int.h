/* Inside the connection manager: ids, channels, events and the CM messages two ids
 * exchange. Everything here is guarded by the one CM lock (cm_lock). */
#ifndef FVSIM_CM_INT_H
#define FVSIM_CM_INT_H

#include "cm.h"

#include "../common/list.h"
#include "../fabric/wire.h"

/* IB CM private data sizes (IBA 12.6) and the 36-byte header the kernel's rdma_cm puts
 * in front of the user's data in REQ and SIDR REQ for IP port spaces. */
enum {
	CM_REQ_PD = 92,
	CM_REP_PD = 196,
	CM_REJ_PD = 148,
	CM_SIDR_REQ_PD = 216,
	CM_SIDR_REP_PD = 136,
	CM_IP_HDR = 36,
};

/* Reject reasons and SIDR statuses that reach the user as event status. */
enum {
	CM_REJ_TIMEOUT = 4,
	CM_REJ_INVALID_SERVICE_ID = 8,
	CM_REJ_CONSUMER_DEFINED = 28,
	CM_SIDR_UNSUPPORTED = 1,
	CM_SIDR_REJECT = 2,
};

/* Event numbers of the user ABI (enum rdma_cm_event_type). */
enum {
	RDMA_CM_EVENT_ADDR_RESOLVED = 0,
	RDMA_CM_EVENT_ADDR_ERROR = 1,
	RDMA_CM_EVENT_ROUTE_RESOLVED = 2,
	RDMA_CM_EVENT_CONNECT_REQUEST = 4,
	RDMA_CM_EVENT_CONNECT_RESPONSE = 5,
	RDMA_CM_EVENT_UNREACHABLE = 7,
	RDMA_CM_EVENT_REJECTED = 8,
	RDMA_CM_EVENT_ESTABLISHED = 9,
	RDMA_CM_EVENT_DISCONNECTED = 10,
};

#define CM_UDP_QKEY 0x01234567u /* RDMA_UDP_QKEY */

/* rdma_cm state and IB CM handshake state in one:
 *   active   IDLE -> BOUND -> ADDR -> ROUTE -> REQ_SENT -> REP_RCVD -> ESTABLISHED
 *            (UD: ROUTE -> SIDR_SENT -> UD_READY)
 *   passive  LISTEN spawns REQ_RCVD -> REP_SENT -> ESTABLISHED (UD: REQ_RCVD -> UD_READY)
 *   either   ESTABLISHED -> DREQ_RCVD (peer disconnected) or CLOSED (we did);
 *            a rejected or unanswered handshake ends in CLOSED. */
enum cm_state {
	CM_IDLE,
	CM_BOUND,
	CM_ADDR,
	CM_ROUTE,
	CM_LISTEN,
	CM_REQ_SENT,
	CM_REQ_RCVD,
	CM_REP_SENT,
	CM_REP_RCVD,
	CM_SIDR_SENT,
	CM_ESTABLISHED,
	CM_UD_READY,
	CM_DREQ_RCVD,
	CM_CLOSED,
};

struct cm_id {
	struct sim_list link; /* all ids of the process */
	struct cm_chan *ch;
	uint32_t handle; /* UINT32_MAX until the user has it (a request not yet read) */
	uint32_t comm; /* CM communication id, the address of CM messages */
	uint64_t uid;
	uint16_t ps;
	uint8_t qp_type; /* IBV_QPT_RC or IBV_QPT_UD */
	enum cm_state state;
	struct sockaddr_storage src, dst;
	bool has_dev; /* bound to a local address: the device port is known */
	bool holds_port; /* bound (explicitly or automatically); ids of accepted requests
			  * share their listener's port and hold none */
	bool reuseaddr, afonly;
	uint8_t tos;
	int backlog; /* listener: requests it may still queue */
	struct cm_id *listener; /* passive id whose request is still queued */
	uint32_t events_reported;
	/* connection, from this side's point of view */
	struct sim_wire_cm_end peer;
	uint32_t qpn, psn, remote_qpn, remote_psn, qkey;
	struct sim_wire_cm_conn conn;
};

struct cm_chan {
	struct sim_list events;
	int efd;
};

struct cm_event {
	struct sim_list link;
	struct cm_id *id; /* CONNECT_REQUEST: the new id, reported under the listener's uid */
	struct cm_id *owner; /* whose events_reported counts it (the listener for requests) */
	struct rdma_ucm_event_resp resp;
};

/* CM message kinds (struct sim_wire_cm, the IB CM MADs reduced to what the two ends
 * need). */
enum cm_msg_kind {
	CM_MSG_REQ = 1,
	CM_MSG_REP,
	CM_MSG_RTU,
	CM_MSG_REJ,
	CM_MSG_DREQ,
	CM_MSG_SIDR_REQ,
	CM_MSG_SIDR_REP,
};

/* cm_id.c */
struct cm_id *cm_id_by_comm(uint32_t comm);
struct cm_id *cm_id_new(struct cm_chan *ch, uint64_t uid, uint16_t ps, uint8_t qp_type);
void cm_id_free(struct cm_id *id); /* drops its queued events too */
/* Drops the queued events that concern id; returns the new id of an unread request it
 * dropped (one per call: the caller loops until NULL and disposes of each). */
struct cm_id *cm_id_drop_events(struct cm_id *id);
struct cm_id *cm_id_first(void); /* iteration over every id: first, then next */
struct cm_id *cm_id_next(struct cm_id *id);
/* Queues an event for id (dropped, like the kernel does, while the user does not know
 * the id yet); for CONNECT_REQUEST id is the new id and owner the listener. */
void cm_event_post(struct cm_id *id, uint32_t event, int32_t status,
		   const struct rdma_ucm_event_resp *param);
void cm_event_post_req(struct cm_id *listener, struct cm_id *id,
		       const struct rdma_ucm_event_resp *param);

/* The initial packet sequence number of the id's QP, fixed by its communication id. */
static inline uint32_t cm_initial_psn(const struct cm_id *id)
{
	return (id->comm * 0x9e3779b1u) & 0xffffff;
}

/* cm_ip.c */
int cm_addr_size(const struct sockaddr *a);
bool cm_addr_any(const struct sockaddr *a);
uint16_t cm_addr_port(const struct sockaddr *a);
bool cm_addr_same_ip(const struct sockaddr *a, const struct sockaddr *b);
bool cm_addr_match(const struct sockaddr *listen, const struct sockaddr *dst);
bool cm_addr_local(const struct sockaddr *a);

/* cm_addr.c */
void cm_port_lid_gid(uint16_t *lid, uint8_t gid[16]);

/* cm_route.c: the fabric side. */
uint32_t cm_self(void); /* this process on the fabric (its inbox + 1), 0 without one */
/* Queues m for the process to (inbox + 1); the engine moves it (cm.h: cm_flush). */
void cm_send_out(uint32_t to, const struct sim_wire_cm *m);
/* The inbox of the other process listening on (ps, a), -1 if none. */
int cm_listener_inbox(uint16_t ps, const struct sockaddr *a);
/* A listener of another process holds (ps, port of a) on an overlapping address. */
bool cm_listener_elsewhere(uint16_t ps, const struct sockaddr *a);
/* This process starts or stops listening on the listener's address. */
void cm_listener_publish(const struct cm_id *listener, bool on);

/* cm_recv.c: a message arrives for this process; whether it has a listener for a
 * request to (ps, addr). */
void cm_recv(const struct sim_wire_cm *m);
/* The process of peer ended: its kernel would have torn its ids down (DREQ). */
void cm_peer_gone(const struct sim_wire_cm_end *peer);
bool cm_listens(uint16_t ps, const struct sockaddr *addr);
/* Sends m to the id at to: this process's straight to cm_recv, another's queued. */
void cm_send(const struct sim_wire_cm_end *to, struct sim_wire_cm *m);
/* REQ / SIDR REQ: to the process listening on m->dst_addr (this one first); answers
 * the sender itself when nobody listens. */
void cm_send_req(struct sim_wire_cm *m);

#endif
