/*
 * Blocking fv_rdma_get_send_comp / fv_rdma_get_recv_comp on the software device (its device
 * thread running): one thread sends batches of numbered messages at seeded random moments and
 * waits for each send completion; the other waits for each receive. Both sleep in
 * ibv_get_cq_event whenever their CQ is empty, so every completion must wake its waiter
 * (fastverbs arms the CQ at its own consumer index) and none may be lost or reported twice:
 * the numbers arrive in order, each completion's wr_id is the context it was posted with.
 * Ids are built by hand as rdma_create_qp builds them: a CQ and a channel per direction,
 * the id as CQ context; one CQ and channel for both directions; or two CQs on one channel
 * (whose events either wait takes). Also a ping-pong where each side sends and receives.
 *
 * Each side has its own device context, as two processes would.
 */
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_verbs.h>
#include <fastverbs/compat/rdmacm.h>

#include "diff-util.h"

#define MSGS   3000
#define DEPTH  16
#define MSGLEN 8

struct side {
	struct simt_dev d;
	struct ibv_comp_channel *ch[2];
	struct ibv_cq *cq[2];	/* send, receive (one CQ twice when shared) */
	struct ibv_qp *qp;
	struct rdma_cm_id id;
	struct fv_rdma r;
	uint8_t rbuf[DEPTH][64];	/* receive buffers, one per receive kept posted */
	struct ibv_mr *mr;
};

static struct side a, b;	/* a sends, b receives (both, in the ping-pong) */

/* How a side's id holds its CQs: as rdma_create_qp makes them, one CQ, or one channel. */
enum cqs { SEPARATE, ONE_CQ, ONE_CHANNEL };

static void side_open(struct side *s, enum cqs mode)
{
	for (int k = 0; k < 2; k++) {
		s->ch[k] = k && mode != SEPARATE ? s->ch[0] : ibv_create_comp_channel(s->d.ctx);
		cr_assert(s->ch[k]);
		s->cq[k] = k && mode == ONE_CQ ? s->cq[0] : ibv_create_cq(s->d.ctx, 64, &s->id, s->ch[k], 0);
		cr_assert(s->cq[k]);
	}
	s->mr = simt_mr(&s->d, s->rbuf, sizeof(s->rbuf), SIMT_ACCESS_ALL);
	s->qp = simt_qp(&s->d, &(struct setup_qp_cfg){ .type = IBV_QPT_RC, .scq = s->cq[0], .rcq = s->cq[1],
		.max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_inline = 64 });
	memset(&s->id, 0, sizeof(s->id));
	s->id.verbs = s->d.ctx;
	s->id.pd = s->d.pd;
	s->id.qp = s->qp;
	s->id.send_cq = s->cq[0];
	s->id.recv_cq = s->cq[1];
	s->id.send_cq_channel = s->ch[0];
	s->id.recv_cq_channel = s->ch[1];
}

static void open_pair(enum cqs mode_a, enum cqs mode_b)
{
	simt_open(&a.d, 0);
	simt_open(&b.d, 0);
	side_open(&a, mode_a);
	side_open(&b, mode_b);
	simt_connect(a.qp, b.d.lid, b.qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	simt_connect(b.qp, a.d.lid, a.qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	cr_assert_eq(fv_rdma_init(&a.r, &a.id), 0);
	cr_assert_eq(fv_rdma_init(&b.r, &b.id), 0);
	cr_assert_eq(fv__rdma_rcq(&a.r) == &a.r.cq[0], mode_a == ONE_CQ);
}

static void side_close(struct side *s)
{
	fv_rdma_cleanup(&s->r);
	cr_assert_eq(ibv_destroy_qp(s->qp), 0);
	cr_assert_eq(ibv_dereg_mr(s->mr), 0);
	cr_assert_eq(ibv_destroy_cq(s->cq[0]), 0);
	if (s->cq[1] != s->cq[0])
		cr_assert_eq(ibv_destroy_cq(s->cq[1]), 0);
	cr_assert_eq(ibv_destroy_comp_channel(s->ch[0]), 0);
	if (s->ch[1] != s->ch[0])
		cr_assert_eq(ibv_destroy_comp_channel(s->ch[1]), 0);
}

static void close_pair(void)
{
	side_close(&a);
	side_close(&b);
	simt_close(&a.d);
	simt_close(&b.d);
}

static void pause_us(uint64_t us)
{
	struct timespec ts = { 0, (long)us * 1000 };

	if (us)
		nanosleep(&ts, NULL);
}

/* (Re)post receive k of side s: wr_id k. */
static int post_recv(struct side *s, uint64_t k)
{
	return fv_rdma_post_recv(&s->r, (void *)(uintptr_t)k, s->rbuf[k], sizeof(s->rbuf[k]), s->mr);
}

/* Sender: batches of 1..4 inline messages, each numbered, then a wait for each completion. */
static void *sender(void *arg)
{
	uint64_t seed = (uintptr_t)arg;
	uint64_t sent = 0;

	while (sent < MSGS) {
		uint64_t n = 1 + diff_rnd(&seed, 4);
		struct ibv_wc wc;

		if (n > MSGS - sent)
			n = MSGS - sent;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t msg = sent + i;

			if (fv_rdma_post_send(&a.r, (void *)(uintptr_t)(msg + 1), &msg, MSGLEN, NULL,
					      IBV_SEND_INLINE | IBV_SEND_SIGNALED))
				return (void *)"post_send failed";
		}
		for (uint64_t i = 0; i < n; i++) {
			if (fv_rdma_get_send_comp(&a.r, &wc) != 1)
				return (void *)"get_send_comp failed";
			if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_SEND || wc.wr_id != sent + i + 1)
				return (void *)"wrong send completion";
		}
		sent += n;
		if (diff_rnd(&seed, 3))		/* now and then at once: the arm races the completion */
			pause_us(diff_rnd(&seed, 400));
	}
	return NULL;
}

/* Receiver: keeps DEPTH receives posted; each completion must be the next message. */
static void receive_all(uint64_t seed)
{
	pthread_t t;
	void *res;

	for (uint64_t k = 0; k < DEPTH; k++)
		cr_assert_eq(post_recv(&b, k), 0);
	cr_assert_eq(pthread_create(&t, NULL, sender, (void *)(uintptr_t)(seed * 7 + 1)), 0);
	for (uint64_t m = 0; m < MSGS; m++) {
		struct ibv_wc wc;
		uint64_t got;

		if (diff_rnd(&seed, 8) == 0)	/* let completions pile up: the first poll finds them */
			pause_us(diff_rnd(&seed, 300));
		cr_assert_eq(fv_rdma_get_recv_comp(&b.r, &wc), 1, "message %llu: %s", (unsigned long long)m,
			     strerror(errno));
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "message %llu: %s", (unsigned long long)m,
			     ibv_wc_status_str(wc.status));
		cr_assert_eq(wc.opcode, IBV_WC_RECV);
		cr_assert_eq(wc.wr_id, m % DEPTH, "message %llu in receive %llu", (unsigned long long)m,
			     (unsigned long long)wc.wr_id);
		cr_assert_eq(wc.byte_len, MSGLEN);
		memcpy(&got, b.rbuf[m % DEPTH], sizeof(got));
		cr_assert_eq(got, m, "message %llu carried %llu", (unsigned long long)m, (unsigned long long)got);
		cr_assert_eq(post_recv(&b, m % DEPTH), 0);
	}
	cr_assert_eq(pthread_join(t, &res), 0);
	cr_assert_null(res, "sender: %s", (const char *)res);
	cr_log_info("%d messages; events taken: receiver %u, sender %u", MSGS, fv__rdma_rcq(&b.r)->arm.sn,
		    a.r.cq[0].arm.sn);
	/* Both waited on their channel, not only polled. */
	cr_assert_gt(fv__rdma_rcq(&b.r)->arm.sn, 0);
	cr_assert_gt(a.r.cq[0].arm.sn, 0);
}

/* One timeout for the suite: criterion 2.4 leaks a watchdog entry in its runner when tests
 * with different timeouts run side by side (LeakSanitizer then fails the run). */
TestSuite(sim_rdmacm_comp, .timeout = 120);

Test(sim_rdmacm_comp, separate_cqs)
{
	open_pair(SEPARATE, SEPARATE);
	receive_all(1);
	close_pair();
}

Test(sim_rdmacm_comp, one_cq_for_both_directions)
{
	open_pair(ONE_CQ, ONE_CQ);
	receive_all(2);
	close_pair();
}

/*
 * One side of a ping-pong on one CQ per side: a sends ping i (payload i) once it has b's
 * reply i - 1; b answers ping i with reply i. Each wait asks at random for a send or a
 * receive completion: on one CQ either call returns whichever comes first, so the side sorts
 * them by opcode, and each kind must come in order. Returns NULL or what went wrong.
 */
#define PINGS 1000

static const char *pingpong(struct side *s, int starts, uint64_t seed)
{
	uint64_t sends = 0, sent = 0, recvs = 0;

	for (uint64_t k = 0; k < DEPTH; k++)
		if (post_recv(s, k))
			return "post_recv failed";
	if (starts && fv_rdma_post_send(&s->r, (void *)(uintptr_t)++sends, &recvs, MSGLEN, NULL,
					IBV_SEND_INLINE | IBV_SEND_SIGNALED))
		return "post_send failed";
	while (recvs < PINGS || sent < sends) {
		struct ibv_wc wc;
		uint64_t got;
		int rc;

		if (diff_rnd(&seed, 8) == 0)
			pause_us(diff_rnd(&seed, 200));
		if (fv__rdma_rcq(&s->r) == &s->r.cq[0])	/* one CQ: either call returns either kind */
			rc = diff_rnd(&seed, 2) ? fv_rdma_get_recv_comp(&s->r, &wc) : fv_rdma_get_send_comp(&s->r, &wc);
		else	/* two: the send completion is due first (one message in flight) */
			rc = sent < sends ? fv_rdma_get_send_comp(&s->r, &wc) : fv_rdma_get_recv_comp(&s->r, &wc);
		if (rc != 1)
			return "get_comp failed";
		if (wc.status != IBV_WC_SUCCESS)
			return "an error completion";
		if (wc.opcode == IBV_WC_SEND) {
			if (wc.wr_id != ++sent || sent > sends)
				return "send completion out of order";
			continue;
		}
		if (wc.opcode != IBV_WC_RECV || wc.wr_id != recvs % DEPTH)
			return "receive completion out of order";
		memcpy(&got, s->rbuf[recvs % DEPTH], sizeof(got));
		if (got != recvs)
			return "wrong message";
		if (post_recv(s, recvs % DEPTH))
			return "post_recv failed";
		recvs++;
		got = starts ? recvs : got;	/* the next ping, or the reply to this one */
		if ((!starts || recvs < PINGS) &&
		    fv_rdma_post_send(&s->r, (void *)(uintptr_t)++sends, &got, MSGLEN, NULL,
				      IBV_SEND_INLINE | IBV_SEND_SIGNALED))
			return "post_send failed";
	}
	return sends == PINGS ? NULL : "wrong number of sends";
}

static void *ponger(void *arg)
{
	return (void *)pingpong(&b, 0, (uintptr_t)arg);
}

static void run_pingpong(enum cqs mode_a, enum cqs mode_b)
{
	pthread_t t;
	void *res;
	const char *err;

	open_pair(mode_a, mode_b);
	cr_assert_eq(pthread_create(&t, NULL, ponger, (void *)(uintptr_t)5), 0);
	err = pingpong(&a, 1, 6);
	cr_assert_eq(pthread_join(t, &res), 0);
	cr_assert_null(err, "pinger: %s", err);
	cr_assert_null(res, "ponger: %s", (const char *)res);
	cr_log_info("%d round trips; events taken: %u + %u and %u + %u", PINGS, a.r.cq[0].arm.sn, a.r.cq[1].arm.sn,
		    b.r.cq[0].arm.sn, b.r.cq[1].arm.sn);
	cr_assert_gt(a.r.cq[0].arm.sn + a.r.cq[1].arm.sn, 0);
	cr_assert_gt(b.r.cq[0].arm.sn + b.r.cq[1].arm.sn, 0);
	close_pair();
}

Test(sim_rdmacm_comp, ping_pong_one_cq_per_side)
{
	run_pingpong(ONE_CQ, ONE_CQ);
}

/*
 * a's send and receive CQs share one channel: waiting for one, a takes the other's events
 * too; it must count them for that CQ (its next arm then carries the next sequence number).
 */
Test(sim_rdmacm_comp, ping_pong_one_channel_two_cqs)
{
	run_pingpong(ONE_CHANNEL, SEPARATE);
}

/*
 * An id whose CQ fields are empty (rdma_create_qp given the QP's CQs by the caller leaves
 * them so): fv_rdma_init takes the QP's own CQs and their channels.
 */
Test(sim_rdmacm_comp, cqs_of_the_qp)
{
	open_pair(SEPARATE, SEPARATE);
	fv_rdma_cleanup(&a.r);
	a.id.send_cq = a.id.recv_cq = NULL;
	a.id.send_cq_channel = a.id.recv_cq_channel = NULL;
	cr_assert_eq(fv_rdma_init(&a.r, &a.id), 0, "fv_rdma_init: %s", strerror(errno));
	cr_assert_eq(a.r.cq[0].cq.ibcq, a.cq[0]);
	cr_assert_eq(a.r.cq[0].channel, a.ch[0]);
	cr_assert_eq(fv__rdma_rcq(&a.r)->cq.ibcq, a.cq[1]);
	cr_assert_eq(fv__rdma_rcq(&a.r)->channel, a.ch[1]);
	receive_all(3);
	close_pair();
}

/* After 100 ms, b sends a message to a and waits for its completion. */
static void *late_sender(void *arg)
{
	uint64_t msg = 2;
	struct ibv_wc wc;

	(void)arg;
	pause_us(100000);
	if (fv_rdma_post_send(&b.r, (void *)(uintptr_t)2, &msg, MSGLEN, NULL, IBV_SEND_INLINE | IBV_SEND_SIGNALED))
		return (void *)"post_send failed";
	if (fv_rdma_get_send_comp(&b.r, &wc) != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != 2)
		return (void *)"no send completion";
	return NULL;
}

/*
 * The event of the send CQ waits on the channel a's two CQs share when a blocks for a receive:
 * fv_rdma_get_recv_comp takes it, counts it for the send CQ, acknowledges it and sleeps on
 * until the receive comes.
 */
Test(sim_rdmacm_comp, event_of_the_other_cq)
{
	struct pollfd p;
	pthread_t t;
	uint64_t msg = 1;
	struct ibv_wc wc;
	void *res;

	open_pair(ONE_CHANNEL, SEPARATE);
	cr_assert_eq(post_recv(&b, 0), 0);
	cr_assert_eq(post_recv(&a, 0), 0);
	cr_assert_eq(fv_rdma_post_send(&a.r, (void *)(uintptr_t)1, &msg, MSGLEN, NULL,
				       IBV_SEND_INLINE | IBV_SEND_SIGNALED), 0);
	fv_cq_arm(&a.r.cq[0].cq, &a.r.cq[0].arm, 0);
	p = (struct pollfd){ .fd = a.ch[0]->fd, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, SIMT_WAIT_MS), 1, "no event for the send completion");
	cr_assert_eq(pthread_create(&t, NULL, late_sender, NULL), 0);
	cr_assert_eq(fv_rdma_get_recv_comp(&a.r, &wc), 1, "%s", strerror(errno));
	cr_assert_eq(wc.opcode, IBV_WC_RECV);
	cr_assert_eq(wc.wr_id, 0);
	cr_assert_eq(a.r.cq[0].arm.sn, 1, "the send CQ's events counted for it: %u, not 1", a.r.cq[0].arm.sn);
	cr_assert_eq(a.r.cq[1].arm.sn, 1, "the receive CQ's events: %u, not 1", a.r.cq[1].arm.sn);
	cr_assert_eq(fv_rdma_get_send_comp(&a.r, &wc), 1);
	cr_assert_eq(wc.opcode, IBV_WC_SEND);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(pthread_join(t, &res), 0);
	cr_assert_null(res, "b: %s", (const char *)res);
	cr_assert_eq(fv_rdma_get_recv_comp(&b.r, &wc), 1);
	cr_assert_eq(wc.wr_id, 0);
	close_pair();
}
