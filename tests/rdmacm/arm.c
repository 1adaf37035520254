/*
 * fv_cq_arm (cq_arm.h) against libmlx5's ibv_req_notify_cq on a twin CQ: after the same
 * completions and the same events, both write the same arm word to the CQ doorbell record
 * and the same 8 bytes (but their CQN) to the UAR's CQ doorbell; and the device then raises
 * (or holds back) the same events on both channels. Seeded rounds: 0..3 completions
 * consumed, solicited or not, messages solicited or not; the 2-bit sequence number wraps.
 */
#include <poll.h>

#include "diff-util.h"

#define AROUNDS 300

static struct simt_dev d;
static uint8_t buf[1 << 14];
static struct ibv_mr *mr;
static struct ibv_comp_channel *ch[2];
static struct ibv_cq *cq[2], *scq;
static struct ibv_qp *qa[2], *qb[2];
static struct mlx5dv_cq dv[2];
static struct fv_qp fqb;	/* qb[FV], taken over: its receives are fastverbs' */
static struct fv_cq fc;
static struct fv_cq_arm arm;
static uint64_t seed = 42;

static void setup(void)
{
	fvsim_set_step_mode(1);
	simt_open(&d, 0);
	mr = simt_mr(&d, buf, sizeof(buf), SIMT_ACCESS_ALL);
	scq = simt_cq(&d, 256);
	for (int s = LIB; s <= FV; s++) {
		struct mlx5dv_obj o = { .cq = { .in = NULL, .out = &dv[s] } };

		ch[s] = ibv_create_comp_channel(d.ctx);
		cr_assert(ch[s]);
		cq[s] = ibv_create_cq(d.ctx, 64, NULL, ch[s], 0);
		cr_assert(cq[s]);
		o.cq.in = cq[s];
		cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
		simt_qp_pair(&d, (struct setup_qp_cfg){ .type = IBV_QPT_RC }, scq, cq[s], SIMT_ACCESS_ALL, 7, 7,
			     &qa[s], &qb[s]);
	}
	cr_assert_eq(dv[LIB].cq_uar, dv[FV].cq_uar, "one context, one CQ UAR page");
	cr_assert_eq(fv_qp_init(&fqb, qb[FV]), 0);
	cr_assert_eq(fv_cq_init(&fc, cq[FV]), 0);
	cr_assert_eq(fv_cq_arm_init(&arm, cq[FV]), 0);
	cr_assert_eq(arm.uar, dv[FV].cq_uar);
}

static void teardown(void)
{
	fv_cq_cleanup(&fc);
	fv_qp_cleanup(&fqb);
	for (int s = LIB; s <= FV; s++) {
		ibv_destroy_qp(qa[s]);
		ibv_destroy_qp(qb[s]);
		ibv_destroy_cq(cq[s]);
		ibv_destroy_comp_channel(ch[s]);
	}
	ibv_destroy_cq(scq);
	ibv_dereg_mr(mr);
	simt_close(&d);
}

TestSuite(sim_rdmacm_arm, .init = setup, .fini = teardown, .timeout = 120);

/* One message to each twin's receiver; their sender completions are drained at once. */
static void message(int solicited)
{
	struct ibv_wc wc[2];

	struct ibv_sge sge = { (uintptr_t)buf + 4096, 64, mr->lkey };

	simt_post_recv(qb[LIB], 7, buf + 4096, 64, mr->lkey);
	cr_assert_eq(fv_recv(&fqb, 7, &sge, 1), 0);
	fv_recv_ring(&fqb);
	for (int s = LIB; s <= FV; s++) {
		simt_post_send(qa[s], 8, IBV_WR_SEND, buf, 16, mr->lkey, 0, 0,
			       IBV_SEND_SIGNALED | (solicited ? IBV_SEND_SOLICITED : 0));
	}
	fvsim_run_until_idle();
	cr_assert_eq(simt_poll(scq, wc, 2), 2);
}

static int has_event(int s)
{
	struct pollfd p = { .fd = ch[s]->fd, .events = POLLIN };

	return poll(&p, 1, 0);
}

/* Arm twin s; return the arm word it put in the doorbell record and what it wrote to the UAR. */
static void arm_one(int s, int solicited, uint32_t *rec, uint64_t *reg)
{
	volatile uint64_t *db = (volatile uint64_t *)((uint8_t *)dv[s].cq_uar + FV__CQ_DOORBELL);

	*db = 0;
	if (s == LIB)
		cr_assert_eq(ibv_req_notify_cq(cq[LIB], solicited), 0);
	else
		fv_cq_arm(&fc, &arm, solicited);
	*rec = be32toh(dv[s].dbrec[FV__CQ_ARM_DB]);
	*reg = be64toh(*db);
	fvsim_run_until_idle();	/* the device sees this arm before the next clears the register */
}

Test(sim_rdmacm_arm, same_bytes_and_events_as_ibv_req_notify_cq)
{
	int events = 0, held = 0, consumed = 0;

	for (int round = 0; round < AROUNDS; round++) {
		int n = (int)diff_rnd(&seed, 4), solicited = (int)diff_rnd(&seed, 3) == 0;
		struct ibv_wc wc[4];
		uint32_t rec[2];
		uint64_t reg[2];

		for (int i = 0; i < n; i++)
			message(0);
		/* Events from the last round's arms were taken; these completions raise none. */
		cr_assert_eq(ibv_poll_cq(cq[LIB], 4, wc), n);
		cr_assert_eq(fv_poll_cq(&fc, 4, wc), n);
		consumed += n;
		arm_one(LIB, solicited, &rec[LIB], &reg[LIB]);
		arm_one(FV, solicited, &rec[FV], &reg[FV]);
		cr_assert_eq(rec[FV], rec[LIB], "round %d: arm word %#x, libmlx5 %#x", round, rec[FV], rec[LIB]);
		cr_assert_eq(reg[LIB] & 0xffffff, dv[LIB].cqn);
		cr_assert_eq(reg[FV], (reg[LIB] & ~0xffffffull) | dv[FV].cqn,
			     "round %d: UAR %#llx, libmlx5 %#llx", round, (unsigned long long)reg[FV],
			     (unsigned long long)reg[LIB]);
		cr_assert_eq(rec[LIB] & 0xffffff, (uint32_t)consumed & 0xffffff, "round %d: consumer index", round);

		/* A message, solicited or not: both twins get an event, or neither. */
		int sol_msg = (int)diff_rnd(&seed, 2);

		message(sol_msg);
		cr_assert_eq(has_event(FV), has_event(LIB), "round %d: events differ", round);
		if (has_event(LIB)) {
			struct ibv_cq *ev;
			void *ctx;

			for (int s = LIB; s <= FV; s++) {
				cr_assert_eq(ibv_get_cq_event(ch[s], &ev, &ctx), 0);
				cr_assert_eq(ev, cq[s]);
				ibv_ack_cq_events(ev, 1);
			}
			fv_cq_arm_event(&arm);
			events++;
		} else {
			cr_assert(solicited && !sol_msg, "round %d: an armed CQ raised no event", round);
			held++;
			/* Still armed: a solicited message now fires both. */
			message(1);
			cr_assert(has_event(LIB) && has_event(FV), "round %d: the held arm did not fire", round);
			for (int s = LIB; s <= FV; s++) {
				struct ibv_cq *ev;
				void *ctx;

				cr_assert_eq(ibv_get_cq_event(ch[s], &ev, &ctx), 0);
				ibv_ack_cq_events(ev, 1);
			}
			fv_cq_arm_event(&arm);
			events++;
			cr_assert_eq(ibv_poll_cq(cq[LIB], 1, wc), 1);
			cr_assert_eq(fv_poll_cq(&fc, 1, wc), 1);
			consumed++;
		}
		cr_assert_eq(ibv_poll_cq(cq[LIB], 1, wc), 1);
		cr_assert_eq(fv_poll_cq(&fc, 1, wc), 1);
		consumed++;
	}
	cr_log_info("%d rounds: %d events, %d solicited-only arms held back, %d completions",
		    AROUNDS, events, held, consumed);
	cr_assert_gt(held, 0);
	cr_assert_gt(events, 8, "the sequence number should wrap");
}
