/*
 * Blocking fv_rdma_get_send_comp / fv_rdma_get_recv_comp on the software device (its device
 * thread running): one thread sends batches of numbered messages at seeded random moments and
 * waits for each send completion; the other waits for each receive. Both sleep in
 * ibv_get_cq_event whenever their CQ is empty, so every completion must wake its waiter
 * (fastverbs arms the CQ at its own consumer index) and none may be lost or reported twice:
 * the numbers arrive in order, each completion's wr_id is the context it was posted with.
 * Ids are built by hand as rdma_create_qp builds them: a CQ and a channel per direction,
 * the id as CQ context; or one CQ and channel for both directions, also in a ping-pong
 * where each side both sends and receives.
 *
 * Each side has its own device context. The software device learns of an arm by sampling
 * the context's CQ doorbell register and the CQ's doorbell record: when two threads arm CQs
 * of one context at once, the later register write can hide the earlier, and the first arm
 * of a fresh CQ (word 0) leaves its record as it was -- that arm is then never seen (the
 * same happens to libmlx5's ibv_req_notify_cq; an HCA sees every doorbell write).
 */
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

static void side_open(struct side *s, int shared)
{
	for (int k = 0; k < 2; k++) {
		if (shared && k == 1) {
			s->ch[1] = s->ch[0];
			s->cq[1] = s->cq[0];
			break;
		}
		s->ch[k] = ibv_create_comp_channel(s->d.ctx);
		cr_assert(s->ch[k]);
		s->cq[k] = ibv_create_cq(s->d.ctx, 64, &s->id, s->ch[k], 0);
		cr_assert(s->cq[k]);
	}
	s->mr = simt_mr(&s->d, s->rbuf, sizeof(s->rbuf), SIMT_ACCESS_ALL);
	s->qp = simt_qp(&s->d, &(struct simt_qp_cfg){ .type = IBV_QPT_RC, .scq = s->cq[0], .rcq = s->cq[1],
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

static void open_pair(int shared)
{
	simt_open(&a.d, 0);
	simt_open(&b.d, 0);
	side_open(&a, shared);
	side_open(&b, shared);
	simt_connect(a.qp, b.d.lid, b.qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	simt_connect(b.qp, a.d.lid, a.qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	cr_assert_eq(fv_rdma_init(&a.r, &a.id), 0);
	cr_assert_eq(fv_rdma_init(&b.r, &b.id), 0);
	cr_assert_eq(fv_rdma_rcq(&a.r) == &a.r.cq[0], shared);
}

static void side_close(struct side *s)
{
	fv_rdma_cleanup(&s->r);
	cr_assert_eq(ibv_destroy_qp(s->qp), 0);
	cr_assert_eq(ibv_dereg_mr(s->mr), 0);
	for (int k = 0; k < 2 && (k == 0 || s->cq[1] != s->cq[0]); k++) {
		cr_assert_eq(ibv_destroy_cq(s->cq[k]), 0);
		cr_assert_eq(ibv_destroy_comp_channel(s->ch[k]), 0);
	}
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
	cr_log_info("%d messages; events taken: receiver %u, sender %u", MSGS, fv_rdma_rcq(&b.r)->arm.sn,
		    a.r.cq[0].arm.sn);
	/* Both waited on their channel, not only polled. */
	cr_assert_gt(fv_rdma_rcq(&b.r)->arm.sn, 0);
	cr_assert_gt(a.r.cq[0].arm.sn, 0);
}

Test(sim_rdmacm_comp, separate_cqs, .timeout = 120)
{
	open_pair(0);
	receive_all(1);
	close_pair();
}

Test(sim_rdmacm_comp, one_cq_for_both_directions, .timeout = 120)
{
	open_pair(1);
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
		rc = diff_rnd(&seed, 2) ? fv_rdma_get_recv_comp(&s->r, &wc) : fv_rdma_get_send_comp(&s->r, &wc);
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

Test(sim_rdmacm_comp, ping_pong_one_cq_per_side, .timeout = 120)
{
	pthread_t t;
	void *res;
	const char *err;

	open_pair(1);
	cr_assert_eq(pthread_create(&t, NULL, ponger, (void *)(uintptr_t)5), 0);
	err = pingpong(&a, 1, 6);
	cr_assert_eq(pthread_join(t, &res), 0);
	cr_assert_null(err, "pinger: %s", err);
	cr_assert_null(res, "ponger: %s", (const char *)res);
	cr_log_info("%d round trips; events taken: %u and %u", PINGS, a.r.cq[0].arm.sn, b.r.cq[0].arm.sn);
	cr_assert_gt(a.r.cq[0].arm.sn, 0);
	cr_assert_gt(b.r.cq[0].arm.sn, 0);
	close_pair();
}

/*
 * An id whose CQ fields are empty (rdma_create_qp given the QP's CQs by the caller leaves
 * them so): fv_rdma_init takes the QP's own CQs and their channels.
 */
Test(sim_rdmacm_comp, cqs_of_the_qp, .timeout = 120)
{
	open_pair(0);
	fv_rdma_cleanup(&a.r);
	a.id.send_cq = a.id.recv_cq = NULL;
	a.id.send_cq_channel = a.id.recv_cq_channel = NULL;
	cr_assert_eq(fv_rdma_init(&a.r, &a.id), 0, "fv_rdma_init: %s", strerror(errno));
	cr_assert_eq(a.r.cq[0].cq.ibcq, a.cq[0]);
	cr_assert_eq(a.r.cq[0].channel, a.ch[0]);
	cr_assert_eq(fv_rdma_rcq(&a.r)->cq.ibcq, a.cq[1]);
	cr_assert_eq(fv_rdma_rcq(&a.r)->channel, a.ch[1]);
	receive_all(3);
	close_pair();
}
