/* rdma_cm on the software device, listener and connector in one process: librdmacm 44
 * unchanged over /dev/infiniband/rdma_cm. Address and route resolution, the RC
 * handshake with private data both ways and data over the connected QPs, disconnect,
 * reject, nobody listening, UD with the address vector librdmacm builds, the
 * synchronous endpoint API across two threads, and malformed commands. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

/* The raw command ABI (kernel rdma/rdma_user_cm.h, which clashes with rdma_cma.h). */
enum {
	CMD_CREATE_ID = 0,
	CMD_RESOLVE_ROUTE = 4,
	CMD_CONNECT = 6,
	CMD_GET_EVENT = 12,
	CMD_GET_OPTION = 13,
};

struct cmd_hdr {
	uint32_t cmd;
	uint16_t in, out;
};

struct cmd_create_id {
	uint64_t uid, response;
	uint16_t ps;
	uint8_t qp_type, reserved[5];
};

struct cmd_id_timeout {
	uint32_t id, timeout_ms;
};

struct cmd_connect {
	uint8_t conn_param[264]; /* the last byte is "valid" */
	uint32_t id, reserved;
	uint32_t ece[2];
};

#define EVENT_RESP_SIZE 336

TestSuite(sim_rdmacm, .timeout = 30);

static struct sockaddr_in ip4(const char *a, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };

	cr_assert_eq(inet_pton(AF_INET, a, &s.sin_addr), 1);
	return s;
}

/* The next event, which must be of type want; the fd must poll readable first. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *e;

	cr_assert_eq(poll(&p, 1, 5000), 1, "no event (waiting for %s)", rdma_event_str(want));
	cr_assert_eq(rdma_get_cm_event(ch, &e), 0, "rdma_get_cm_event: %s", strerror(errno));
	cr_assert_eq(e->event, want, "got %s (status %d), want %s", rdma_event_str(e->event),
		     e->status, rdma_event_str(want));
	return e;
}

static void ack(struct rdma_cm_event *e)
{
	cr_assert_eq(rdma_ack_cm_event(e), 0);
}

static void no_event(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	cr_assert_eq(poll(&p, 1, 0), 0, "unexpected event queued");
}

static struct rdma_cm_id *listener(struct rdma_event_channel *ch, enum rdma_port_space ps,
				   const char *addr, uint16_t port)
{
	struct sockaddr_in a = ip4(addr, port);
	struct rdma_cm_id *id;

	cr_assert_eq(rdma_create_id(ch, &id, NULL, ps), 0);
	cr_assert_eq(rdma_bind_addr(id, (struct sockaddr *)&a), 0, "bind: %s", strerror(errno));
	cr_assert_eq(rdma_listen(id, 4), 0, "listen: %s", strerror(errno));
	cr_assert_eq(ntohs(rdma_get_src_port(id)), port);
	return id;
}

/* An active id with its route resolved to addr:port. */
static struct rdma_cm_id *resolved(struct rdma_event_channel *ch, enum rdma_port_space ps,
				   const char *addr, uint16_t port)
{
	struct sockaddr_in d = ip4(addr, port);
	struct rdma_cm_id *id;

	cr_assert_eq(rdma_create_id(ch, &id, NULL, ps), 0);
	cr_assert_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&d, 1000), 0,
		     "resolve_addr: %s", strerror(errno));
	ack(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	cr_assert(id->verbs, "no device after address resolution");
	cr_assert_eq(id->port_num, 1);
	cr_assert_eq(rdma_resolve_route(id, 1000), 0, "resolve_route: %s", strerror(errno));
	ack(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	cr_assert_eq(id->route.num_paths, 1);
	return id;
}

static void make_qp(struct rdma_cm_id *id, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = type,
		.sq_sig_all = 1,
	};

	cr_assert_eq(rdma_create_qp(id, NULL, &a), 0, "rdma_create_qp: %s", strerror(errno));
}

/* Destroys ids (and their QPs) and, last, the channel: each destroy must succeed. */
static void teardown(struct rdma_event_channel *ch, struct rdma_cm_id *const ids[], int n)
{
	for (int i = 0; i < n; i++) {
		if (ids[i]->qp)
			rdma_destroy_qp(ids[i]);
		cr_assert_eq(rdma_destroy_id(ids[i]), 0, "rdma_destroy_id: %s", strerror(errno));
	}
	if (ch)
		rdma_destroy_event_channel(ch);
}

#define TEARDOWN(ch, ...)                                                               \
	teardown((ch), (struct rdma_cm_id *const[]){ __VA_ARGS__ },                     \
		 sizeof((struct rdma_cm_id *const[]){ __VA_ARGS__ }) / sizeof(struct rdma_cm_id *))

static uint64_t poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (int i = 0; i < 500000; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		cr_assert_geq(n, 0);
		if (n) {
			cr_assert_eq(wc->status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc->status));
			return wc->wr_id;
		}
		usleep(10);
	}
	cr_assert_fail("no completion");
	return 0;
}

Test(sim_rdmacm, rc_connect_send_disconnect)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *l, *c, *s;
	struct rdma_cm_event *e;
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	char rbuf[64] = { 0 }, sbuf[64] = "over the rdma_cm connection";
	struct ibv_mr *rmr, *smr;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *brw;
	struct ibv_send_wr swr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND }, *bsw;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_wc wc;
	uint32_t client_qpn;

	cr_assert(ch);
	l = listener(ch, RDMA_PS_TCP, "127.0.0.1", 7471);
	c = resolved(ch, RDMA_PS_TCP, "127.0.0.1", 7471);
	make_qp(c, IBV_QPT_RC);
	client_qpn = c->qp->qp_num;
	cp.private_data = "hello";
	cp.private_data_len = 6;
	cr_assert_eq(rdma_connect(c, &cp), 0, "connect: %s", strerror(errno));

	e = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	cr_assert_eq(e->listen_id, l);
	s = e->id;
	cr_assert_neq(s, l);
	cr_assert_eq(e->param.conn.private_data_len, 56); /* 92 bytes of REQ minus the IP header */
	cr_assert_str_eq(e->param.conn.private_data, "hello");
	cr_assert_eq(e->param.conn.qp_num, client_qpn);
	cr_assert_eq(e->param.conn.responder_resources, 1);
	cr_assert_eq(e->param.conn.initiator_depth, 1);
	cr_assert_eq(ntohs(rdma_get_dst_port(s)), ntohs(rdma_get_src_port(c)));
	cr_assert_eq(ntohs(rdma_get_src_port(s)), 7471);
	ack(e);
	make_qp(s, IBV_QPT_RC);
	rmr = ibv_reg_mr(s->pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert(rmr);
	sge = (struct ibv_sge){ (uintptr_t)rbuf, sizeof(rbuf), rmr->lkey };
	cr_assert_eq(ibv_post_recv(s->qp, &rwr, &brw), 0);
	cp.private_data = "welcome";
	cp.private_data_len = 8;
	cr_assert_eq(rdma_accept(s, &cp), 0, "accept: %s", strerror(errno));

	/* librdmacm turns CONNECT_RESPONSE into ESTABLISHED after moving the QP to RTS. */
	e = expect(ch, RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(e->id, c);
	cr_assert_eq(e->param.conn.private_data_len, 196);
	cr_assert_str_eq(e->param.conn.private_data, "welcome");
	cr_assert_eq(e->param.conn.qp_num, s->qp->qp_num);
	ack(e);
	e = expect(ch, RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(e->id, s);
	ack(e);

	/* Both QPs are connected to each other with the same PSNs on the two ends. */
	cr_assert_eq(ibv_query_qp(c->qp, &qa, IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_SQ_PSN, &qia), 0);
	cr_assert_eq(qa.qp_state, IBV_QPS_RTS);
	cr_assert_eq(qa.dest_qp_num, s->qp->qp_num);
	{
		uint32_t c_sq = qa.sq_psn;

		cr_assert_eq(ibv_query_qp(s->qp, &qa, IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN, &qia), 0);
		cr_assert_eq(qa.qp_state, IBV_QPS_RTS);
		cr_assert_eq(qa.dest_qp_num, client_qpn);
		cr_assert_eq(qa.rq_psn, c_sq);
	}

	smr = ibv_reg_mr(c->pd, sbuf, sizeof(sbuf), 0);
	cr_assert(smr);
	sge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
	cr_assert_eq(ibv_post_send(c->qp, &swr, &bsw), 0);
	cr_assert_eq(poll_one(c->send_cq, &wc), 9);
	cr_assert_eq(poll_one(s->recv_cq, &wc), 7);
	cr_assert_eq(wc.byte_len, sizeof(sbuf));
	cr_assert_str_eq(rbuf, "over the rdma_cm connection");

	/* The passive side hears the DREQ, then the active side the DREP. */
	cr_assert_eq(rdma_disconnect(c), 0, "disconnect: %s", strerror(errno));
	e = expect(ch, RDMA_CM_EVENT_DISCONNECTED);
	cr_assert_eq(e->id, s);
	ack(e);
	e = expect(ch, RDMA_CM_EVENT_DISCONNECTED);
	cr_assert_eq(e->id, c);
	ack(e);
	cr_assert_eq(rdma_disconnect(s), 0);
	no_event(ch);
	cr_assert_eq(ibv_query_qp(c->qp, &qa, IBV_QP_STATE, &qia), 0);
	cr_assert_eq(qa.qp_state, IBV_QPS_ERR);

	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	TEARDOWN(ch, s, c, l);
}

/* Retry counts above the IB CM's 3 bits (libfabric's RxM asks for 15) connect, clamped to
 * 7 on both QPs as the kernel's cma.c does, instead of failing the RTS transition. */
Test(sim_rdmacm, retry_counts_over_7_are_clamped)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *l, *c, *s;
	struct rdma_cm_event *e;
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 15, .rnr_retry_count = 15 };
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;

	cr_assert(ch);
	l = listener(ch, RDMA_PS_TCP, "127.0.0.1", 7477);
	c = resolved(ch, RDMA_PS_TCP, "127.0.0.1", 7477);
	make_qp(c, IBV_QPT_RC);
	cr_assert_eq(rdma_connect(c, &cp), 0, "connect: %s", strerror(errno));
	e = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	s = e->id;
	ack(e);
	make_qp(s, IBV_QPT_RC);
	cr_assert_eq(rdma_accept(s, &cp), 0, "accept: %s", strerror(errno));
	ack(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	ack(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	for (int i = 0; i < 2; i++) {
		struct ibv_qp *qp = i ? s->qp : c->qp;

		cr_assert_eq(ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY,
					  &qia), 0);
		cr_assert_eq(qa.qp_state, IBV_QPS_RTS);
		cr_assert_eq(qa.retry_cnt, 7, "%s: retry_cnt %u", i ? "server" : "client", qa.retry_cnt);
		cr_assert_eq(qa.rnr_retry, 7, "%s: rnr_retry %u", i ? "server" : "client", qa.rnr_retry);
	}
	cr_assert_eq(rdma_disconnect(c), 0);
	ack(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
	ack(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
	TEARDOWN(ch, s, c, l);
}

Test(sim_rdmacm, reject_carries_reason_and_data)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *l, *c;
	struct rdma_cm_event *e;
	struct rdma_conn_param cp = { .retry_count = 7 };

	l = listener(ch, RDMA_PS_TCP, "127.0.0.1", 7472);
	c = resolved(ch, RDMA_PS_TCP, "127.0.0.1", 7472);
	make_qp(c, IBV_QPT_RC);
	cr_assert_eq(rdma_connect(c, &cp), 0);
	e = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	cr_assert_eq(rdma_reject(e->id, "go away", 8), 0, "reject: %s", strerror(errno));
	cr_assert_eq(rdma_destroy_id(e->id), 0);
	ack(e);
	e = expect(ch, RDMA_CM_EVENT_REJECTED);
	cr_assert_eq(e->id, c);
	cr_assert_eq(e->status, 28); /* IB_CM_REJ_CONSUMER_DEFINED */
	cr_assert_eq(e->param.conn.private_data_len, 148);
	cr_assert_str_eq(e->param.conn.private_data, "go away");
	ack(e);
	/* The rejected id cannot connect again. */
	cr_assert_eq(rdma_connect(c, &cp), -1);
	cr_assert_eq(errno, EINVAL);
	TEARDOWN(ch, c, l);
}

Test(sim_rdmacm, nobody_listening)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *l, *c, *u;
	struct rdma_cm_event *e;
	struct rdma_conn_param cp = { .retry_count = 7 };

	/* A listener on another port does not take it. */
	l = listener(ch, RDMA_PS_TCP, "127.0.0.1", 7473);
	c = resolved(ch, RDMA_PS_TCP, "127.0.0.1", 7474);
	make_qp(c, IBV_QPT_RC);
	cr_assert_eq(rdma_connect(c, &cp), 0);
	e = expect(ch, RDMA_CM_EVENT_REJECTED);
	cr_assert_eq(e->status, 8); /* IB_CM_REJ_INVALID_SERVICE_ID */
	ack(e);

	u = resolved(ch, RDMA_PS_UDP, "127.0.0.1", 7473);
	make_qp(u, IBV_QPT_UD);
	cr_assert_eq(rdma_connect(u, &cp), 0);
	e = expect(ch, RDMA_CM_EVENT_UNREACHABLE);
	cr_assert_eq(e->status, 1); /* IB_SIDR_UNSUPPORTED */
	ack(e);
	no_event(ch);
	TEARDOWN(ch, u, c, l);
}

Test(sim_rdmacm, ud_address_vector)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *l, *c, *s;
	struct rdma_cm_event *e;
	struct rdma_conn_param cp = { 0 };
	char rbuf[40 + 32] = { 0 }, sbuf[32] = "datagram";
	struct ibv_mr *rmr, *smr;
	struct ibv_sge rsge, ssge;
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 }, *brw;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND }, *bsw;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	l = listener(ch, RDMA_PS_UDP, "0.0.0.0", 7475);
	c = resolved(ch, RDMA_PS_UDP, "127.0.0.1", 7475);
	make_qp(c, IBV_QPT_UD);
	cp.private_data = "sidr";
	cp.private_data_len = 5;
	cr_assert_eq(rdma_connect(c, &cp), 0);
	e = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	s = e->id;
	cr_assert_eq(e->param.ud.private_data_len, 180); /* SIDR REQ 216 minus the IP header */
	cr_assert_str_eq(e->param.ud.private_data, "sidr");
	ack(e);
	make_qp(s, IBV_QPT_UD);
	rmr = ibv_reg_mr(s->pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	rsge = (struct ibv_sge){ (uintptr_t)rbuf, sizeof(rbuf), rmr->lkey };
	cr_assert_eq(ibv_post_recv(s->qp, &rwr, &brw), 0);
	cr_assert_eq(rdma_accept(s, NULL), 0, "accept: %s", strerror(errno));

	e = expect(ch, RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(e->id, c);
	cr_assert_eq(e->param.ud.qp_num, s->qp->qp_num);
	cr_assert_eq(e->param.ud.qkey, 0x01234567); /* RDMA_UDP_QKEY */
	cr_assert_eq(e->param.ud.private_data_len, 136);
	cr_assert_eq(e->param.ud.ah_attr.port_num, 1);
	ah = ibv_create_ah(c->pd, &e->param.ud.ah_attr);
	cr_assert(ah, "ibv_create_ah: %s", strerror(errno));
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = e->param.ud.qp_num;
	swr.wr.ud.remote_qkey = e->param.ud.qkey;
	ack(e);
	smr = ibv_reg_mr(c->pd, sbuf, sizeof(sbuf), 0);
	ssge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
	cr_assert_eq(ibv_post_send(c->qp, &swr, &bsw), 0);
	cr_assert_eq(poll_one(c->send_cq, &wc), 2);
	cr_assert_eq(poll_one(s->recv_cq, &wc), 1);
	cr_assert_eq(wc.byte_len, 40 + sizeof(sbuf));
	cr_assert_eq(wc.src_qp, c->qp->qp_num);
	cr_assert_str_eq(rbuf + 40, "datagram");
	no_event(ch); /* UD ids see no ESTABLISHED on the passive side */

	ibv_destroy_ah(ah);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	TEARDOWN(ch, s, c, l);
}

Test(sim_rdmacm, addresses)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *a, *b;
	struct sockaddr_in s = ip4("127.0.0.1", 7476), far = ip4("192.0.2.1", 7476);
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(7477),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct rdma_cm_event *e;

	cr_assert_eq(rdma_create_id(ch, &a, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_create_id(ch, &b, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_bind_addr(a, (struct sockaddr *)&s), 0);
	cr_assert_eq(a->port_num, 1);
	cr_assert(a->verbs);
	cr_assert_eq(rdma_bind_addr(b, (struct sockaddr *)&s), -1);
	cr_assert_eq(errno, EADDRINUSE);
	/* The same port in another port space is free. */
	{
		struct rdma_cm_id *u;

		cr_assert_eq(rdma_create_id(ch, &u, NULL, RDMA_PS_UDP), 0);
		cr_assert_eq(rdma_bind_addr(u, (struct sockaddr *)&s), 0);
		rdma_destroy_id(u);
	}
	/* Not an address of this machine. */
	cr_assert_eq(rdma_bind_addr(b, (struct sockaddr *)&far), -1);
	cr_assert_eq(errno, EADDRNOTAVAIL);
	cr_assert_eq(rdma_bind_addr(b, (struct sockaddr *)&s6), 0, "bind ::1: %s", strerror(errno));
	cr_assert_eq(b->route.addr.src_addr.sa_family, AF_INET6);
	/* Resolving needs a route first; a second bind is refused. */
	cr_assert_eq(rdma_resolve_route(b, 100), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(rdma_bind_addr(b, (struct sockaddr *)&s6), -1);
	cr_assert_eq(errno, EINVAL);
	rdma_destroy_id(b);

	/* No host has this address: ADDR_ERROR, and the id stays usable. */
	cr_assert_eq(rdma_create_id(ch, &b, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_resolve_addr(b, NULL, (struct sockaddr *)&far, 100), 0);
	e = expect(ch, RDMA_CM_EVENT_ADDR_ERROR);
	cr_assert_eq(e->status, -EHOSTUNREACH);
	ack(e);
	cr_assert_eq(rdma_resolve_addr(b, NULL, (struct sockaddr *)&s, 100), 0);
	ack(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	cr_assert_eq(((struct sockaddr_in *)&b->route.addr.src_addr)->sin_addr.s_addr,
		     htonl(INADDR_LOOPBACK));
	cr_assert_neq(rdma_get_src_port(b), 0);
	/* Disconnecting what never connected. */
	cr_assert_eq(rdma_disconnect(b), -1);
	cr_assert_eq(errno, EINVAL);
	TEARDOWN(ch, b, a);
}

/* select and epoll see the channel fd readable exactly while an event is queued. */
Test(sim_rdmacm, select_and_epoll)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in d = ip4("127.0.0.1", 7479);
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct timeval tv = { 0, 0 };
	struct rdma_cm_event *e;
	struct rdma_cm_id *id;
	fd_set rd;
	int ep = epoll_create1(0);

	cr_assert_geq(ep, 0);
	cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, ch->fd, &ev), 0);
	cr_assert_eq(epoll_wait(ep, &out, 1, 0), 0);
	cr_assert_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&d, 100), 0);
	cr_assert_eq(epoll_wait(ep, &out, 1, 1000), 1);
	cr_assert(out.events & EPOLLIN);
	FD_ZERO(&rd);
	FD_SET(ch->fd, &rd);
	cr_assert_eq(select(ch->fd + 1, &rd, NULL, NULL, &tv), 1);
	cr_assert(FD_ISSET(ch->fd, &rd));
	cr_assert_eq(rdma_get_cm_event(ch, &e), 0);
	cr_assert_eq(e->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	ack(e);
	cr_assert_eq(epoll_wait(ep, &out, 1, 0), 0);
	FD_ZERO(&rd);
	FD_SET(ch->fd, &rd);
	cr_assert_eq(select(ch->fd + 1, &rd, NULL, NULL, &tv), 0);
	close(ep);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

/* Connects to dst through a listener bound to the IPv6 wildcard, and disconnects. */
static void connect_to(struct rdma_event_channel *ch, const struct sockaddr *dst)
{
	struct rdma_conn_param cp = { .retry_count = 7 };
	struct rdma_cm_event *e;
	struct rdma_cm_id *c, *s;

	cr_assert_eq(rdma_create_id(ch, &c, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_resolve_addr(c, NULL, (struct sockaddr *)dst, 1000), 0);
	ack(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	cr_assert_eq(c->route.addr.src_addr.sa_family, dst->sa_family);
	cr_assert_eq(rdma_resolve_route(c, 1000), 0);
	ack(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	make_qp(c, IBV_QPT_RC);
	cr_assert_eq(rdma_connect(c, &cp), 0);
	e = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	s = e->id;
	cr_assert_eq(s->route.addr.dst_addr.sa_family, dst->sa_family);
	ack(e);
	make_qp(s, IBV_QPT_RC);
	cr_assert_eq(rdma_accept(s, &cp), 0);
	ack(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	ack(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	cr_assert_eq(rdma_disconnect(s), 0);
	ack(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
	ack(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
	TEARDOWN(NULL, s, c);
}

/* ::1 and the interfaces' own addresses reach the device too. */
Test(sim_rdmacm, ipv6_and_interface_addresses)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_port = htons(7480) };
	struct sockaddr_in6 lo6 = { .sin6_family = AF_INET6, .sin6_port = htons(7480),
				    .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct ifaddrs *ifs, *i;
	struct rdma_cm_id *l;
	int others = 0;

	cr_assert_eq(rdma_create_id(ch, &l, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_bind_addr(l, (struct sockaddr *)&any6), 0);
	cr_assert_eq(rdma_listen(l, 4), 0);
	connect_to(ch, (struct sockaddr *)&lo6);
	cr_assert_eq(getifaddrs(&ifs), 0);
	for (i = ifs; i; i = i->ifa_next) {
		struct sockaddr_in a;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		memcpy(&a, i->ifa_addr, sizeof(a));
		if ((ntohl(a.sin_addr.s_addr) >> 24) == 127)
			continue;
		a.sin_port = htons(7480); /* an IPv6 wildcard listener takes IPv4 too */
		connect_to(ch, (struct sockaddr *)&a);
		others++;
	}
	freeifaddrs(ifs);
	cr_log_info("%d interface addresses besides loopback", others);
	no_event(ch);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(ch);
}

/* Raw commands on the channel fd: the kernel's errno for each malformed one. */
static int raw(int fd, uint32_t cmd, const void *body, uint16_t in, uint16_t out)
{
	uint8_t buf[600];
	struct cmd_hdr h = { .cmd = cmd, .in = in, .out = out };

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), body, in);
	return write(fd, buf, sizeof(h) + in) == (ssize_t)(sizeof(h) + in) ? 0 : errno;
}

Test(sim_rdmacm, malformed_commands)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_event_channel *other = rdma_create_event_channel();
	uint8_t ev[EVENT_RESP_SIZE];
	uint64_t ge = (uintptr_t)ev;
	uint32_t id;
	struct cmd_create_id cid = { .response = (uintptr_t)&id, .ps = RDMA_PS_TCP };
	struct cmd_id_timeout rr = { .id = 999 };
	struct cmd_connect cn = { .id = 0 };
	struct cmd_hdr h = { .cmd = CMD_RESOLVE_ROUTE, .in = 64 };
	int fl;

	cr_assert_eq(raw(ch->fd, 99, &rr, sizeof(rr), 0), EINVAL); /* no such command */
	cr_assert_eq(raw(ch->fd, CMD_GET_OPTION, &rr, sizeof(rr), 0), ENOSYS);
	cr_assert_eq(raw(ch->fd, CMD_RESOLVE_ROUTE, &rr, sizeof(rr), 0), ENOENT);
	cr_assert_eq(raw(ch->fd, CMD_CREATE_ID, &cid, sizeof(cid), 0), ENOSPC);
	cid.ps = 0x999;
	cr_assert_eq(raw(ch->fd, CMD_CREATE_ID, &cid, sizeof(cid), sizeof(id)), EINVAL);
	cid.ps = RDMA_PS_TCP;
	cid.response = 8; /* unmapped */
	cr_assert_eq(raw(ch->fd, CMD_CREATE_ID, &cid, sizeof(cid), sizeof(id)), EFAULT);
	cid.response = (uintptr_t)&id;
	cr_assert_eq(raw(ch->fd, CMD_CREATE_ID, &cid, sizeof(cid), sizeof(id)), 0);
	/* Another file's id. */
	rr.id = id;
	cr_assert_eq(raw(other->fd, CMD_RESOLVE_ROUTE, &rr, sizeof(rr), 0), EINVAL);
	/* Route before address. */
	cr_assert_eq(raw(ch->fd, CMD_RESOLVE_ROUTE, &rr, sizeof(rr), 0), EINVAL);
	cn.id = id;
	cr_assert_eq(raw(ch->fd, CMD_CONNECT, &cn, sizeof(cn), 0), EINVAL); /* not valid */
	/* The header claims more than was written. */
	cr_assert_eq(write(ch->fd, &h, sizeof(h)), -1);
	cr_assert_eq(errno, EINVAL);
	/* No event and a non-blocking fd: EAGAIN instead of sleeping. */
	fl = fcntl(ch->fd, F_GETFL);
	cr_assert_eq(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	cr_assert_eq(raw(ch->fd, CMD_GET_EVENT, &ge, sizeof(ge), sizeof(ev)), EAGAIN);
	cr_assert_eq(raw(ch->fd, CMD_GET_EVENT, &ge, sizeof(ge), 8), ENOSPC);
	rdma_destroy_event_channel(other);
	rdma_destroy_event_channel(ch);
}

/* The synchronous endpoint API (rdma_server / rdma_client style): the passive side
 * blocks in rdma_get_request and rdma_accept on its own thread. */
static void *passive(void *arg)
{
	struct rdma_cm_id *l = arg, *s;
	char buf[16] = { 0 };
	struct ibv_mr *mr;
	struct ibv_wc wc;
	intptr_t ok = 0;

	if (rdma_get_request(l, &s))
		return (void *)0;
	/* rdma_get_request made the QP from the listener's attributes. */
	if (!s->qp || !(mr = rdma_reg_msgs(s, buf, sizeof(buf))) ||
	    rdma_post_recv(s, NULL, buf, sizeof(buf), mr) || rdma_accept(s, NULL))
		return (void *)0;
	/* Polled, not waited for: both threads arm CQs of one context, and the device tells
	 * arms apart only by the last CQ doorbell written (sim/README.md). */
	for (int i = 0; i < 500000 && !ok; i++) {
		int n = ibv_poll_cq(s->recv_cq, 1, &wc);

		if (n < 0)
			break;
		if (n)
			ok = wc.status == IBV_WC_SUCCESS && !strcmp(buf, "sync ping");
		else
			usleep(10);
	}
	rdma_disconnect(s);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(s);
	return (void *)ok;
}

Test(sim_rdmacm, sync_endpoints)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr a = { .cap = { 4, 4, 1, 1, 16 }, .sq_sig_all = 1 };
	struct rdma_cm_id *l, *c;
	char msg[16] = "sync ping";
	struct ibv_wc wc;
	pthread_t t;
	void *ok;

	hints.ai_flags = RAI_PASSIVE;
	cr_assert_eq(rdma_getaddrinfo("127.0.0.1", "7478", &hints, &res), 0);
	cr_assert_eq(rdma_create_ep(&l, res, NULL, &a), 0, "create_ep: %s", strerror(errno));
	rdma_freeaddrinfo(res);
	cr_assert_eq(rdma_listen(l, 2), 0);
	cr_assert_eq(pthread_create(&t, NULL, passive, l), 0);

	hints.ai_flags = 0;
	cr_assert_eq(rdma_getaddrinfo("127.0.0.1", "7478", &hints, &res), 0);
	cr_assert_eq(rdma_create_ep(&c, res, NULL, &a), 0, "create_ep: %s", strerror(errno));
	rdma_freeaddrinfo(res);
	cr_assert_eq(rdma_connect(c, NULL), 0, "connect: %s", strerror(errno));
	cr_assert_eq(rdma_post_send(c, NULL, msg, sizeof(msg), NULL, IBV_SEND_INLINE), 0);
	cr_assert_eq(rdma_get_send_comp(c, &wc), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(pthread_join(t, &ok), 0);
	cr_assert_eq((intptr_t)ok, 1, "passive side failed");
	/* The peer disconnected: our DISCONNECTED is waiting on the id's own channel. */
	cr_assert_eq(rdma_disconnect(c), 0);
	rdma_destroy_ep(c);
	rdma_destroy_ep(l);
}
