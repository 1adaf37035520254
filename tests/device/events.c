/* Completion channels: ibv_req_notify_cq arms the CQ in user space (libmlx5 writes the arm
 * word and rings the CQ doorbell); the device delivers one event per arm, honours
 * solicited-only arming, and reports delivered events at destroy time. The solicited bit
 * is also checked in the raw CQE. */
#include <poll.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

static struct simt_dev d;
static struct ibv_comp_channel *ch;
static struct ibv_cq *scq, *rcq;
static struct ibv_qp *qa, *qb;
static uint8_t buf[8192];
static struct ibv_mr *mr;

static void setup(void)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC };

	simt_open(&d, 0);
	mr = simt_mr(&d, buf, sizeof(buf), SIMT_ACCESS_ALL);
	ch = ibv_create_comp_channel(d.ctx);
	cr_assert(ch);
	scq = simt_cq(&d, 16);
	rcq = ibv_create_cq(d.ctx, 16, NULL, ch, 0);
	cr_assert(rcq);
	simt_qp_pair(&d, cfg, scq, rcq, SIMT_ACCESS_ALL, 7, 7, &qa, &qb);
}

static void teardown(void)
{
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_destroy_comp_channel(ch);
	ibv_dereg_mr(mr);
	simt_close(&d);
}

TestSuite(sim_events, .init = setup, .fini = teardown, .timeout = 60);

static int event_ready(int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	return poll(&p, 1, ms);
}

static void send(uint64_t id, int flags)
{
	simt_post_send(qa, id, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, IBV_SEND_SIGNALED | flags);
}

Test(sim_events, event_after_arm)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;

	cr_assert_eq(ibv_req_notify_cq(rcq, 0), 0);
	simt_post_recv(qb, 1, buf + 4096, 64, mr->lkey);
	send(2, 0);
	cr_assert_eq(event_ready(5000), 1, "no completion event");
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	cr_expect_eq(ev_cq, rcq);
	cr_assert_eq(simt_poll(rcq, &wc, 1), 1);
	cr_expect_eq(wc.wr_id, 1);
	/* Not re-armed: the next completion raises no event. */
	simt_post_recv(qb, 3, buf + 4096, 64, mr->lkey);
	send(4, 0);
	cr_assert_eq(simt_poll(rcq, &wc, 1), 1);
	cr_expect_eq(event_ready(50), 0, "an unarmed CQ fired");
	ibv_ack_cq_events(rcq, 1);
	cr_assert_eq(simt_poll(scq, &wc, 1), 1);
	cr_assert_eq(simt_poll(scq, &wc, 1), 1);
}

Test(sim_events, solicited_only)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;
	struct mlx5dv_obj obj = { .cq = { .in = rcq } };
	struct mlx5dv_cq dcq;

	obj.cq.out = &dcq;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ), 0);
	cr_assert_eq(ibv_req_notify_cq(rcq, 1), 0);
	simt_post_recv(qb, 1, buf + 4096, 64, mr->lkey);
	simt_post_recv(qb, 2, buf + 4096, 64, mr->lkey);
	send(3, 0);
	cr_assert_eq(simt_poll(rcq, &wc, 1), 1);
	cr_expect_eq(event_ready(50), 0, "an unsolicited message woke a solicited-only arm");
	send(4, IBV_SEND_SOLICITED);
	cr_assert_eq(event_ready(5000), 1);
	/* The solicited bit of the second responder CQE (entry 1): op_own bit 1. */
	cr_expect(((uint8_t *)dcq.buf)[1 * dcq.cqe_size + dcq.cqe_size - 1] & 2,
		  "SE bit in op_own");
	cr_expect_eq(((uint8_t *)dcq.buf)[dcq.cqe_size - 1] & 2, 0, "no SE bit on the first");
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	ibv_ack_cq_events(ev_cq, 1);
	cr_assert_eq(simt_poll(rcq, &wc, 1), 1);
	cr_expect_eq(wc.wr_id, 2);
}

Test(sim_events, arm_with_completions_pending_fires_at_once)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;

	simt_post_recv(qb, 1, buf + 4096, 64, mr->lkey);
	send(2, 0);
	cr_assert_eq(simt_poll(scq, &wc, 1), 1);
	cr_expect_eq(event_ready(20), 0);
	/* A CQE waits unpolled; arming now raises the event right away. */
	cr_assert_eq(ibv_req_notify_cq(rcq, 0), 0);
	cr_assert_eq(event_ready(5000), 1);
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	ibv_ack_cq_events(ev_cq, 1);
	cr_assert_eq(simt_poll(rcq, &wc, 1), 1);
}

/*
 * An arm is written in two steps, the record and then the register (the same word, with the
 * CQN). When the device looks in between, it takes the arm from the record and fires; the
 * register it sees next is that same arm, not a second one.
 */
Test(sim_events, record_then_register_is_one_arm)
{
	struct mlx5dv_obj obj = { .cq = { .in = rcq } };
	struct mlx5dv_cq dcq;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;
	uint32_t word = 0;	/* sequence 0, consumer index 0: the CQE below is past it */

	cr_assert(fvsim_present(), "run through sim/fvsim-run");
	obj.cq.out = &dcq;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ), 0);
	fvsim_set_step_mode(1);
	simt_post_recv(qb, 1, buf + 4096, 64, mr->lkey);
	send(2, 0);
	fvsim_run_until_idle();
	cr_expect_eq(event_ready(0), 0, "not armed yet");
	__atomic_store_n(&dcq.dbrec[1], htobe32(word), __ATOMIC_RELEASE);
	fvsim_step();
	cr_assert_eq(event_ready(0), 1, "the record's arm did not fire");
	__atomic_store_n((uint64_t *)((char *)dcq.cq_uar + 0x20),
			 htobe64((uint64_t)word << 32 | dcq.cqn), __ATOMIC_RELEASE);
	fvsim_step();
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	ibv_ack_cq_events(ev_cq, 1);
	cr_expect_eq(event_ready(0), 0, "the register's copy of the arm fired a second event");
	cr_assert_eq(simt_poll(rcq, &wc, 1), 1);
	cr_assert_eq(simt_poll(scq, &wc, 1), 1);
	fvsim_set_step_mode(0);
}
