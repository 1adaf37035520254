/* Two threads arm CQs of one context at the same moment, many times. libmlx5 rings one
 * CQ doorbell register per context for every arm, so the second ring overwrites the
 * first before the device may look: the device must still see both arms (each CQ's own
 * arm word in its doorbell record tells), and every arm must give its event. New CQs
 * come in often: their first arm writes the same word a new CQ starts with. */
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

#define ROUNDS 400
#define FRESH_EVERY 8

static struct simt_dev d;
static pthread_barrier_t together;
static uint8_t buf[2][4096];
static struct ibv_mr *mr[2];
static volatile bool stop;

struct lane {
	int i;
	int lost, bad;
	char why[128];
};

static void *run(void *arg)
{
	struct lane *l = arg;
	struct ibv_comp_channel *ch = ibv_create_comp_channel(d.ctx);
	struct ibv_cq *scq = NULL, *rcq = NULL;
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC };

	for (int r = 0; r < ROUNDS; r++) {
		struct ibv_sge sge = { (uintptr_t)buf[l->i], 8, mr[l->i]->lkey };
		struct ibv_recv_wr rwr = { .wr_id = r, .sg_list = &sge, .num_sge = 1 }, *rbad;
		struct ibv_send_wr swr = { .wr_id = r, .sg_list = &sge, .num_sge = 1,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED }, *sbad;
		struct pollfd pfd = { ch->fd, POLLIN, 0 };
		struct ibv_cq *evcq;
		struct ibv_wc wc;
		void *evctx;

		if (r % FRESH_EVERY == 0) {
			if (qa) {
				ibv_destroy_qp(qa);
				ibv_destroy_qp(qb);
				ibv_destroy_cq(scq);
				ibv_destroy_cq(rcq);
			}
			scq = ibv_create_cq(d.ctx, 8, NULL, NULL, 0);
			rcq = ibv_create_cq(d.ctx, 8, NULL, ch, 0);
			cfg.scq = scq;
			cfg.rcq = rcq;
			qa = simt_qp(&d, &cfg);
			qb = simt_qp(&d, &cfg);
			simt_connect(qa, d.lid, qb->qp_num, SIMT_ACCESS_ALL, 7, 7);
			simt_connect(qb, d.lid, qa->qp_num, SIMT_ACCESS_ALL, 7, 7);
		}
		if (ibv_post_recv(qb, &rwr, &rbad))
			l->bad++;
		pthread_barrier_wait(&together);
		if (stop)
			break; /* the other lane lost one: it waits no more */
		if (ibv_req_notify_cq(rcq, 0))
			l->bad++;
		pthread_barrier_wait(&together);
		if (ibv_post_send(qa, &swr, &sbad))
			l->bad++;
		if (poll(&pfd, 1, 2000) != 1) {
			l->lost++;
			snprintf(l->why, sizeof(l->why), "round %d: no event", r);
			stop = true;
		} else if (ibv_get_cq_event(ch, &evcq, &evctx) || evcq != rcq) {
			l->bad++;
		} else {
			ibv_ack_cq_events(rcq, 1);
		}
		for (int got = 0, n = 0; got < 2 && n < 5000000; n++) {
			if (ibv_poll_cq(rcq, 1, &wc) == 1 || ibv_poll_cq(scq, 1, &wc) == 1) {
				got++;
				if (wc.status != IBV_WC_SUCCESS)
					l->bad++;
			}
		}
	}
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_destroy_comp_channel(ch);
	return NULL;
}

Test(sim_arm_race, two_threads_arm_at_once, .timeout = 120)
{
	struct lane lane[2] = { { .i = 0 }, { .i = 1 } };
	pthread_t th[2];

	simt_open(&d, 0);
	for (int i = 0; i < 2; i++)
		mr[i] = simt_mr(&d, buf[i], sizeof(buf[i]), SIMT_ACCESS_ALL);
	pthread_barrier_init(&together, NULL, 2);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, run, &lane[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++) {
		cr_expect_eq(lane[i].lost, 0, "thread %d lost %d events (%s)", i, lane[i].lost,
			     lane[i].why);
		cr_expect_eq(lane[i].bad, 0, "thread %d: %d verbs failed", i, lane[i].bad);
	}
	for (int i = 0; i < 2; i++)
		ibv_dereg_mr(mr[i]);
	simt_close(&d);
}

/* The mark a new CQ gets in its arm word is not an arm: a completion on a CQ never armed
 * raises no event; its first arm (the word libmlx5 writes is 0 then) does. */
Test(sim_arm_race, new_cq_is_not_armed)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq, *evcq;
	struct ibv_qp *qa, *qb;
	struct ibv_wc wc;
	struct pollfd pfd;
	void *evctx;

	simt_open(&d, 0);
	mr[0] = simt_mr(&d, buf[0], sizeof(buf[0]), SIMT_ACCESS_ALL);
	ch = ibv_create_comp_channel(d.ctx);
	cr_assert(ch);
	scq = simt_cq(&d, 8);
	rcq = ibv_create_cq(d.ctx, 8, NULL, ch, 0);
	cr_assert(rcq);
	simt_qp_pair(&d, (struct setup_qp_cfg){ .type = IBV_QPT_RC }, scq, rcq, SIMT_ACCESS_ALL,
		     7, 7, &qa, &qb);
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	simt_post_recv(qb, 1, buf[0] + 64, 8, mr[0]->lkey);
	simt_post_send(qa, 2, IBV_WR_SEND, buf[0], 8, mr[0]->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(rcq, &wc, 1), 1);
	cr_expect_eq(poll(&pfd, 1, 50), 0, "a CQ never armed fired");
	cr_assert_eq(ibv_req_notify_cq(rcq, 0), 0);
	simt_post_recv(qb, 3, buf[0] + 64, 8, mr[0]->lkey);
	simt_post_send(qa, 4, IBV_WR_SEND, buf[0], 8, mr[0]->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(poll(&pfd, 1, 5000), 1, "no event after the first arm");
	cr_assert_eq(ibv_get_cq_event(ch, &evcq, &evctx), 0);
	cr_expect_eq(evcq, rcq);
	ibv_ack_cq_events(rcq, 1);
	cr_assert_eq(simt_poll(rcq, &wc, 1), 1);
	cr_assert_eq(simt_poll(scq, &wc, 1), 1);
	cr_assert_eq(simt_poll(scq, &wc, 1), 1);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_destroy_comp_channel(ch);
	ibv_dereg_mr(mr[0]);
	simt_close(&d);
}
