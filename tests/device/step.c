/* The deterministic single-step API (sim/fvsim.h): in step mode nothing executes until
 * the test steps, and each step is exactly one unit of device work. */
#include <dlfcn.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

static struct simt_dev d;
static struct ibv_cq *cq;
static struct ibv_qp *qa, *qb;
static uint8_t buf[8192];
static struct ibv_mr *mr;

static void setup(void)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC };

	cr_assert(fvsim_present(), "run through sim/fvsim-run");
	fvsim_set_step_mode(1);
	cr_assert(fvsim_step_mode());
	simt_open(&d, 0);
	mr = simt_mr(&d, buf, sizeof(buf), SIMT_ACCESS_ALL);
	cq = simt_cq(&d, 64);
	simt_qp_pair(&d, cfg, cq, cq, SIMT_ACCESS_ALL, 7, 7, &qa, &qb);
}

static void teardown(void)
{
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	simt_close(&d);
}

TestSuite(sim_step, .init = setup, .fini = teardown, .timeout = 60);

Test(sim_step, nothing_runs_without_a_step)
{
	struct ibv_wc wc;
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	simt_post_send(qa, 1, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey, (uintptr_t)buf + 64, mr->rkey,
		       IBV_SEND_SIGNALED);
	nanosleep(&ts, NULL);
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0, "no device thread in step mode");
	cr_expect_eq(fvsim_step(), 1);
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1);
	cr_expect_eq(wc.wr_id, 1);
	cr_expect_eq(fvsim_step(), 0, "idle");
}

Test(sim_step, one_wqe_per_step)
{
	struct ibv_wc wc[4];

	for (int i = 0; i < 3; i++)
		simt_post_send(qa, (uint64_t)i, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey,
			       (uintptr_t)buf + 64, mr->rkey, IBV_SEND_SIGNALED);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(fvsim_step(), 1);
		cr_assert_eq(ibv_poll_cq(cq, 4, wc), 1, "step %d", i);
		cr_expect_eq(wc[0].wr_id, (uint64_t)i);
	}
	cr_expect_eq(fvsim_run_until_idle(), 0);
}

Test(sim_step, run_until_idle_counts_units)
{
	struct ibv_wc wc[8];

	for (int i = 0; i < 4; i++)
		simt_post_recv(qb, (uint64_t)(10 + i), buf + 4096 + i * 64, 64, mr->lkey);
	for (int i = 0; i < 4; i++)
		simt_post_send(qa, (uint64_t)i, IBV_WR_SEND, buf, 16, mr->lkey, 0, 0,
			       IBV_SEND_SIGNALED);
	cr_expect_eq(fvsim_run_until_idle(), 4, "one unit per send, receives included");
	cr_expect_eq(ibv_poll_cq(cq, 8, wc), 8);
}

Test(sim_step, queues_progress_round_robin)
{
	struct ibv_wc wc[4];

	/* Two QPs with work: successive steps alternate between them. */
	for (int i = 0; i < 2; i++) {
		simt_post_send(qa, (uint64_t)(100 + i), IBV_WR_RDMA_WRITE, buf, 8, mr->lkey,
			       (uintptr_t)buf + 64, mr->rkey, IBV_SEND_SIGNALED);
		simt_post_send(qb, (uint64_t)(200 + i), IBV_WR_RDMA_WRITE, buf, 8, mr->lkey,
			       (uintptr_t)buf + 128, mr->rkey, IBV_SEND_SIGNALED);
	}
	for (int i = 0; i < 4; i++)
		cr_assert_eq(fvsim_step(), 1);
	cr_assert_eq(ibv_poll_cq(cq, 4, wc), 4);
	cr_expect_neq(wc[0].qp_num, wc[1].qp_num);
	cr_expect_neq(wc[1].qp_num, wc[2].qp_num);
	cr_expect_neq(wc[2].qp_num, wc[3].qp_num);
}

Test(sim_step, leaving_step_mode_starts_the_device)
{
	struct ibv_wc wc;

	simt_post_send(qa, 7, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey, (uintptr_t)buf + 64, mr->rkey,
		       IBV_SEND_SIGNALED);
	fvsim_set_step_mode(0);
	cr_assert_eq(simt_poll(cq, &wc, 1), 1, "the device thread took over");
	cr_expect_eq(wc.wr_id, 7);
}

/* The file a function of the process comes from. */
static const char *object_of(const void *f)
{
	Dl_info i;

	return dladdr(f, &i) && i.dli_fname ? i.dli_fname : "?";
}

/* In step mode only fvsim_step moves the device, so a program's polls are not wrapped to
 * drive it: a measured ibv_poll_cq or ibv_start_poll (bench/poll.c) runs libmlx5 alone.
 * A context opened outside step mode gets the wrapper. */
Test(sim_step, polls_stay_the_providers_own)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 4 };
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(d.ctx, &a);
	struct simt_dev other;
	const char *in;

	cr_assert(cqx, "ibv_create_cq_ex: %s", strerror(errno));
	in = object_of((const void *)(uintptr_t)d.ctx->ops.poll_cq);
	cr_expect(strstr(in, "libmlx5"), "poll_cq in %s", in);
	in = object_of((const void *)(uintptr_t)cqx->start_poll);
	cr_expect(strstr(in, "libmlx5"), "start_poll in %s", in);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	fvsim_set_step_mode(0);
	simt_open(&other, 0);
	in = object_of((const void *)(uintptr_t)other.ctx->ops.poll_cq);
	cr_expect(strstr(in, "libfvsim"), "poll_cq in %s", in);
	simt_close(&other);
}
