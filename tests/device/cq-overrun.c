/* CQs created with IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN (ibv_create_cq_ex, and mlx5dv's
 * through it): the device does not check the consumer index. It never waits for room (the
 * work completes whatever the program polled) and never puts the CQ in error; a new CQE
 * overwrites the oldest unpolled one, as an HCA does with overrun checking off. Runs in
 * step mode so "the device has done everything" is exact. Without the flag the device
 * waits instead (device/errors: full_cq_stalls_instead_of_overrunning). */
#include <poll.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

#define BUF 16384
#define POSTED 10

static struct simt_dev d;
static uint8_t *buf;
static struct ibv_mr *mr;

static void setup(void)
{
	cr_assert(fvsim_present(), "run through sim/fvsim-run");
	fvsim_set_step_mode(1);
	simt_open(&d, 0);
	buf = simt_mem(&d, BUF, SIMT_ACCESS_ALL, &mr);
}

static void teardown(void)
{
	ibv_dereg_mr(mr);
	simt_close(&d);
	free(buf);
}

TestSuite(sim_cq_overrun, .init = setup, .fini = teardown, .timeout = 60);

static struct ibv_cq *tiny_cq(bool dv, uint32_t flags)
{
	struct ibv_cq_init_attr_ex a;
	struct ibv_cq_ex *cq;

	memset(&a, 0, sizeof(a));
	a.cqe = 3;
	a.wc_flags = IBV_WC_STANDARD_FLAGS;
	a.comp_mask = flags ? IBV_CQ_INIT_ATTR_MASK_FLAGS : 0;
	a.flags = flags;
	cq = dv ? mlx5dv_create_cq(d.ctx, &a, NULL) : ibv_create_cq_ex(d.ctx, &a);
	cr_assert(cq, "create_cq_ex: %s", strerror(errno));
	cr_assert_eq(ibv_cq_ex_to_cq(cq)->cqe, 3);
	return ibv_cq_ex_to_cq(cq);
}

static bool readable(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, 0) == 1;
}

/* POSTED signaled writes, each of its own byte, on a 4-entry CQ nobody polls. */
static struct ibv_qp *write_all(struct ibv_cq *cq)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cq, .max_send_wr = 64 };
	struct ibv_qp *qp = simt_qp(&d, &cfg);

	simt_connect(qp, d.lid, qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	for (int i = 0; i < POSTED; i++) {
		buf[i] = (uint8_t)(0x40 + i);
		simt_post_send(qp, (uint64_t)i, IBV_WR_RDMA_WRITE, buf + i, 1, mr->lkey,
			       (uintptr_t)buf + 4096 + i, mr->rkey, IBV_SEND_SIGNALED);
	}
	return qp;
}

static void overwrites(bool dv)
{
	struct ibv_cq *cq = tiny_cq(dv, IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN);
	struct ibv_qp *qp = write_all(cq);
	struct ibv_wc wc[4];
	int n;

	cr_expect_eq(fvsim_run_until_idle(), POSTED, "every write done without a poll");
	cr_expect_eq(memcmp(buf + 4096, buf, POSTED), 0);
	/* Ten CQEs went round a ring of four: slots 0 and 1 hold the last two (the ring's
	 * third pass), slots 2 and 3 the two before, from the second pass. Polling from
	 * consumer index 0 finds the third-pass owner bit in slots 0-1 only: completions 8
	 * and 9, then nothing. */
	n = ibv_poll_cq(cq, 4, wc);
	cr_assert_eq(n, 2, "polled %d", n);
	cr_expect_eq(wc[0].wr_id, 8u);
	cr_expect_eq(wc[1].wr_id, 9u);
	cr_expect_eq(wc[0].status, IBV_WC_SUCCESS);
	cr_expect_eq(wc[1].status, IBV_WC_SUCCESS);
	cr_expect_not(readable(d.ctx->async_fd), "no IBV_EVENT_CQ_ERR");
	/* The CQ and the QP still work. */
	simt_post_send(qp, 77, IBV_WR_RDMA_WRITE, buf, 1, mr->lkey, (uintptr_t)buf + 4096,
		       mr->rkey, IBV_SEND_SIGNALED);
	fvsim_run_until_idle();
	cr_expect_eq(ibv_poll_cq(cq, 1, wc), 1);
	cr_expect_eq(wc[0].wr_id, 77u);
	cr_expect_eq(wc[0].status, IBV_WC_SUCCESS);
	cr_expect_eq(ibv_destroy_qp(qp), 0);
	cr_expect_eq(ibv_destroy_cq(cq), 0);
}

Test(sim_cq_overrun, ignore_overrun_overwrites)
{
	overwrites(false);
}

Test(sim_cq_overrun, ignore_overrun_mlx5dv)
{
	overwrites(true);
}

/* The same CQ without the flag: four CQEs, then the device waits for the program. */
Test(sim_cq_overrun, checked_cq_waits)
{
	struct ibv_cq *cq = tiny_cq(false, 0);
	struct ibv_qp *qp = write_all(cq);
	struct ibv_wc wc[4];

	cr_expect_eq(fvsim_run_until_idle(), 4);
	cr_expect_eq(ibv_poll_cq(cq, 4, wc), 4);
	cr_expect_eq(wc[0].wr_id, 0u);
	cr_expect_eq(wc[3].wr_id, 3u);
	cr_expect_not(readable(d.ctx->async_fd));
	fvsim_run_until_idle();
	cr_expect_eq(ibv_poll_cq(cq, 4, wc), 4);
	cr_expect_eq(wc[0].wr_id, 4u);
	cr_expect_eq(ibv_destroy_qp(qp), 0);
	cr_expect_eq(ibv_destroy_cq(cq), 0);
}
