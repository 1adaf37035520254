/* Addresses and routes: binding and port numbers (every address of the machine reaches
 * the first port of mlx5_0, on every process of a fabric alike), address and route
 * resolution, the QUERY answers and the QP attributes for each transition. */
#include "cm_int.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <ifaddrs.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/ib.h>
#include <infiniband/sa.h>
#include <infiniband/verbs.h>

#include "../common/config.h"
#include "../model/world.h"

#define CM_DEV 0
#define CM_PORT 1
#define CM_MTU IBV_MTU_4096
#define CM_RATE 16 /* IBV_RATE_100_GBPS: 4X EDR, as the port reports */
#define CM_LIFETIME 13 /* path packet lifetime; the QP's ack timeout is one more */

static void set_port(struct sockaddr *a, uint16_t port)
{
	if (a->sa_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = htons(port);
	else if (a->sa_family == AF_INET6)
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
}

void cm_port_lid_gid(uint16_t *lid, uint8_t gid[16])
{
	sim_world_init();
	*lid = sim_port_lid(CM_DEV, CM_PORT, sim_world.cfg.nports);
	sim_port_gid(CM_DEV, CM_PORT, gid);
}

/* Another id holds (ps, port) on an overlapping address: the kernel's cma_check_port. */
static bool port_taken(const struct cm_id *self, const struct sockaddr *a)
{
	uint16_t port = cm_addr_port(a);

	for (struct cm_id *o = cm_id_first(); o; o = cm_id_next(o)) {
		const struct sockaddr *oa = (const struct sockaddr *)&o->src;

		if (o == self || o->ps != self->ps || !o->holds_port || cm_addr_port(oa) != port)
			continue;
		if (self->reuseaddr && o->reuseaddr && o->state != CM_LISTEN)
			continue;
		if (cm_addr_any(oa) || cm_addr_any(a) || cm_addr_same_ip(oa, a))
			return true;
	}
	return cm_listener_elsewhere(self->ps, a);
}

/* Binds id to a (port 0: an ephemeral one). */
static int bind_id(struct cm_id *id, const struct sockaddr *a)
{
	struct sockaddr_storage s;
	uint16_t port;

	if (a->sa_family != AF_INET && a->sa_family != AF_INET6)
		return EAFNOSUPPORT; /* AF_IB is not modelled: librdmacm then speaks IP */
	if (!cm_addr_local(a))
		return EADDRNOTAVAIL;
	memset(&s, 0, sizeof(s));
	memcpy(&s, a, (size_t)cm_addr_size(a));
	port = cm_addr_port(a);
	if (!port) {
		static uint16_t next;
		int tries = 0;

		if (!next)
			next = (uint16_t)(32768 + (getpid() * 37) % 28000);
		do {
			port = next;
			next = next >= 60999 ? 32768 : next + 1;
			set_port((struct sockaddr *)&s, port);
		} while (port_taken(id, (struct sockaddr *)&s) && ++tries < 28232);
		if (tries == 28232)
			return EADDRNOTAVAIL;
	} else if (port_taken(id, (struct sockaddr *)&s)) {
		return EADDRINUSE;
	}
	id->src = s;
	id->holds_port = true;
	id->has_dev = !cm_addr_any(a);
	id->state = CM_BOUND;
	return 0;
}

int cm_bind(struct cm_id *id, const struct sockaddr *addr)
{
	return id->state != CM_IDLE ? EINVAL : bind_id(id, addr);
}

int cm_resolve_addr(struct cm_id *id, const struct sockaddr *src,
		    const struct sockaddr *dst)
{
	int err;

	if (id->state == CM_IDLE) {
		struct sockaddr_storage any;

		if (!src || !src->sa_family) {
			memset(&any, 0, sizeof(any));
			any.ss_family = dst->sa_family;
			src = (struct sockaddr *)&any;
		}
		err = bind_id(id, src);
		if (err)
			return err;
	}
	if (id->state != CM_BOUND || id->src.ss_family != dst->sa_family)
		return EINVAL;
	if (!cm_addr_local(dst)) {
		cm_event_post(id, RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH, NULL);
		return 0;
	}
	memset(&id->dst, 0, sizeof(id->dst));
	memcpy(&id->dst, dst, (size_t)cm_addr_size(dst));
	if (cm_addr_any((struct sockaddr *)&id->src)) {
		/* The route's source: the destination itself, all addresses being ours. */
		uint16_t port = cm_addr_port((struct sockaddr *)&id->src);

		memcpy(&id->src, dst, (size_t)cm_addr_size(dst));
		set_port((struct sockaddr *)&id->src, port);
	}
	id->has_dev = true;
	id->state = CM_ADDR;
	cm_event_post(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL);
	return 0;
}

int cm_resolve_route(struct cm_id *id)
{
	if (id->state != CM_ADDR && id->state != CM_ROUTE)
		return EINVAL;
	id->state = CM_ROUTE;
	cm_event_post(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL);
	return 0;
}

static bool routed(const struct cm_id *id)
{
	return id->state != CM_IDLE && id->state != CM_BOUND && id->state != CM_ADDR &&
	       id->state != CM_LISTEN;
}

static void path_rec(const struct cm_id *id, struct ib_user_path_rec *p)
{
	uint16_t lid;

	cm_port_lid_gid(&lid, p->sgid);
	memcpy(p->dgid, p->sgid, 16);
	p->dlid = p->slid = htobe16(lid);
	p->reversible = 1;
	p->mtu = CM_MTU;
	p->pkey = htobe16(0xffff);
	p->traffic_class = id->tos;
	p->numb_path = 1;
	p->mtu_selector = p->rate_selector = p->packet_life_time_selector = 2;
	p->rate = CM_RATE;
	p->packet_life_time = CM_LIFETIME;
}

static void copy_ip(struct sockaddr_in6 *to, const struct sockaddr_storage *in)
{
	memcpy(to, in, in->ss_family == AF_INET ? sizeof(struct sockaddr_in)
						  : sizeof(struct sockaddr_in6));
}

void cm_query_route(const struct cm_id *id, struct rdma_ucm_query_route_resp *r)
{
	memset(r, 0, sizeof(*r));
	copy_ip(&r->src_addr, &id->src);
	copy_ip(&r->dst_addr, &id->dst);
	if (id->has_dev) {
		r->node_guid = htobe64(sim_node_guid(CM_DEV));
		r->port_num = CM_PORT;
		r->ibdev_index = CM_DEV;
		if (routed(id)) {
			r->num_paths = 1;
			path_rec(id, &r->ib_route[0]);
		} else {
			/* No path yet: the device address only (source GID, pkey). */
			uint16_t lid;

			cm_port_lid_gid(&lid, r->ib_route[0].sgid);
			if (id->state == CM_ADDR)
				memcpy(r->ib_route[0].dgid, r->ib_route[0].sgid, 16);
			r->ib_route[0].pkey = htobe16(0xffff);
		}
	}
}

static void addr_common(const struct cm_id *id, struct rdma_ucm_query_addr_resp *r)
{
	memset(r, 0, sizeof(*r));
	if (id->has_dev) {
		r->node_guid = htobe64(sim_node_guid(CM_DEV));
		r->port_num = CM_PORT;
		r->pkey = htobe16(0xffff);
		r->ibdev_index = CM_DEV;
	}
}

void cm_query_addr(const struct cm_id *id, struct rdma_ucm_query_addr_resp *r)
{
	addr_common(id, r);
	r->src_size = (uint16_t)cm_addr_size((struct sockaddr *)&id->src);
	memcpy(&r->src_addr, &id->src, r->src_size);
	r->dst_size = (uint16_t)cm_addr_size((struct sockaddr *)&id->dst);
	memcpy(&r->dst_addr, &id->dst, r->dst_size);
}

/* The IB service id of an IP port space address (rdma_get_service_id). */
static uint64_t service_id(const struct cm_id *id, const struct sockaddr_storage *a)
{
	return htobe64(((uint64_t)id->ps << 16) + cm_addr_port((const struct sockaddr *)a));
}

void cm_query_gid(const struct cm_id *id, struct rdma_ucm_query_addr_resp *r)
{
	struct sockaddr_ib *s, *d;
	uint16_t lid;

	addr_common(id, r);
	s = (struct sockaddr_ib *)&r->src_addr;
	d = (struct sockaddr_ib *)&r->dst_addr;
	r->src_size = r->dst_size = sizeof(*s);
	s->sib_family = d->sib_family = AF_IB;
	s->sib_pkey = d->sib_pkey = r->pkey;
	if (id->has_dev)
		cm_port_lid_gid(&lid, s->sib_addr.sib_raw);
	if (id->has_dev && id->state != CM_BOUND && id->state != CM_LISTEN)
		memcpy(d->sib_addr.sib_raw, s->sib_addr.sib_raw, 16);
	s->sib_sid = service_id(id, &id->src);
	d->sib_sid = service_id(id, &id->dst);
}

void cm_query_path(const struct cm_id *id, struct rdma_ucm_query_path_resp *r, size_t room,
		   size_t *len)
{
	struct ibv_path_data *pd = (struct ibv_path_data *)r->path_data;
	uint16_t lid;

	memset(r, 0, sizeof(*r));
	*len = sizeof(*r);
	if (!routed(id))
		return;
	r->num_paths = 1;
	if (room < sizeof(*r) + sizeof(*pd))
		return;
	/* IBA 15.2.5.16 PathRecord layout, big-endian fields. */
	memset(pd, 0, sizeof(*pd));
	pd->flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY | IBV_PATH_FLAG_BIDIRECTIONAL;
	cm_port_lid_gid(&lid, pd->path.sgid.raw);
	pd->path.dgid = pd->path.sgid;
	pd->path.dlid = pd->path.slid = htobe16(lid);
	pd->path.tclass = id->tos;
	pd->path.reversible_numpath = 0x81;
	pd->path.pkey = htobe16(0xffff);
	pd->path.mtu = 0x80 | CM_MTU;
	pd->path.rate = 0x80 | CM_RATE;
	pd->path.packetlifetime = 0x80 | CM_LIFETIME;
	*len += sizeof(*pd);
}

/* The attributes for moving the id's QP to state (kernel rdma_init_qp_attr: without a
 * handshake yet, or on UD, only the INIT attributes; then ib_cm_init_qp_attr's). */
int cm_init_qp_attr(const struct cm_id *id, uint32_t state, struct ib_uverbs_qp_attr *r)
{
	bool handshake = id->state >= CM_REQ_SENT && id->state != CM_SIDR_SENT &&
			 id->state != CM_UD_READY && id->state != CM_CLOSED;
	uint16_t lid;

	memset(r, 0, sizeof(*r));
	r->qp_state = state;
	if (!id->has_dev)
		return EINVAL;
	if (!handshake || id->qp_type == IBV_QPT_UD) {
		r->qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		r->port_num = CM_PORT;
		if (id->qp_type == IBV_QPT_UD) {
			r->qkey = id->ps == RDMA_PS_IB ? id->qkey : CM_UDP_QKEY;
			r->qp_attr_mask |= IBV_QP_QKEY;
		} else {
			r->qp_attr_mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	}
	switch (state) {
	case IBV_QPS_INIT:
		r->qp_attr_mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		r->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (id->conn.resp_res)
			r->qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		r->port_num = CM_PORT;
		return 0;
	case IBV_QPS_RTR:
		if (id->state == CM_REQ_SENT)
			return EINVAL; /* no REP yet: the peer's QP is unknown */
		r->qp_attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		cm_port_lid_gid(&lid, r->ah_attr.grh.dgid);
		memset(r->ah_attr.grh.dgid, 0, 16);
		r->ah_attr.dlid = lid;
		r->ah_attr.port_num = CM_PORT;
		r->path_mtu = CM_MTU;
		r->dest_qp_num = id->remote_qpn;
		r->rq_psn = id->remote_psn;
		r->max_dest_rd_atomic = id->conn.resp_res;
		return 0;
	case IBV_QPS_RTS:
		if (id->state == CM_REQ_SENT)
			return EINVAL;
		r->qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		r->sq_psn = id->psn;
		r->timeout = CM_LIFETIME + 1;
		r->retry_cnt = id->conn.retry;
		r->rnr_retry = id->conn.rnr_retry;
		r->max_rd_atomic = id->conn.init_depth;
		return 0;
	default:
		return EINVAL;
	}
}
