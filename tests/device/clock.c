/* CQE timestamps and the clock-info page: the device writes its free-running clock into
 * every completion, and mlx5dv_get_clock_info() converts it to wall-clock time. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <rdma/mlx5-abi.h>

#include "sim-util.h"

static struct simt_dev d;

static void setup(void)
{
	simt_open(&d, 0);
}

static void teardown(void)
{
	simt_close(&d);
}

TestSuite(sim_clock, .init = setup, .fini = teardown, .timeout = 60);

static uint64_t wall_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

Test(sim_clock, device_reports_its_clock)
{
	struct ibv_device_attr_ex a;
	struct mlx5dv_context dv = { .comp_mask = MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE };
	struct mlx5dv_clock_info ci;

	cr_assert_eq(ibv_query_device_ex(d.ctx, NULL, &a), 0);
	cr_expect_eq(a.completion_timestamp_mask, ~0ull, "a 64-bit counter");
	cr_expect_eq(a.hca_core_clock, 1000000, "1 GHz, in kHz");
	cr_assert_eq(mlx5dv_get_clock_info(d.ctx, &ci), 0, "libmlx5 mapped no clock-info page");
	cr_expect_eq(ci.mask, ~0ull);
	cr_expect_eq(ci.mult, 1);
	cr_expect_eq(ci.shift, 0);
	cr_assert_eq(mlx5dv_query_device(d.ctx, &dv), 0);
	cr_expect(dv.comp_mask & MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE);
	cr_expect_neq(dv.max_clock_info_update_nsec, 0);
}

/* An RDMA write's completion timestamp, converted through the page, lies between the wall
 * clock before the post and after the poll; so does the wall-clock reading libmlx5 makes
 * of it. */
Test(sim_clock, completion_timestamp_is_wall_time)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_poll_cq_attr pa = { 0 };
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC };
	struct mlx5dv_clock_info ci;
	static uint8_t buf[64];
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint64_t t0, t1, ts, ns, wall;
	struct timespec start;
	int r;

	cq = ibv_create_cq_ex(d.ctx, &ca);
	cr_assert(cq, "ibv_create_cq_ex: %s", strerror(errno));
	cfg.scq = ibv_cq_ex_to_cq(cq);
	qp = simt_qp(&d, &cfg);
	mr = simt_mr(&d, buf, sizeof(buf), SIMT_ACCESS_ALL);
	simt_connect(qp, d.lid, qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	t0 = wall_ns();
	simt_post_send(qp, 1, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey, (uintptr_t)buf + 32, mr->rkey,
		       IBV_SEND_SIGNALED);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((r = ibv_start_poll(cq, &pa)) == ENOENT && simt_ms_since(&start) < SIMT_WAIT_MS)
		simt_kick();
	cr_assert_eq(r, 0, "no completion");
	t1 = wall_ns();
	cr_expect_eq(cq->status, IBV_WC_SUCCESS);
	cr_expect_eq(cq->wr_id, 1);
	ts = ibv_wc_read_completion_ts(cq);
	wall = ibv_wc_read_completion_wallclock_ns(cq);
	ibv_end_poll(cq);
	cr_assert_eq(mlx5dv_get_clock_info(d.ctx, &ci), 0);
	ns = mlx5dv_ts_to_ns(&ci, ts);
	/* 1 ms of slack: the wall clock may be slewed between the page and now. */
	cr_expect(ns + 1000000 >= t0 && ns <= t1 + 1000000,
		  "timestamp %llu ns not within [%llu, %llu]", (unsigned long long)ns,
		  (unsigned long long)t0, (unsigned long long)t1);
	cr_expect(wall + 1000000 >= t0 && wall <= t1 + 1000000, "wall clock %llu",
		  (unsigned long long)wall);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

/* The page is mapped as the kernel maps it: one page, read-only, version 1 only. */
Test(sim_clock, clock_info_mmap_checks)
{
	long page = sysconf(_SC_PAGESIZE);
	off_t off = (off_t)(MLX5_IB_MMAP_CLOCK_INFO << 8 | MLX5_IB_CLOCK_INFO_V1) * page;
	void *p;

	p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, d.ctx->cmd_fd, off);
	cr_assert_neq(p, MAP_FAILED, "%s", strerror(errno));
	cr_expect_eq(((const struct mlx5_ib_clock_info *)p)->mult, 1);
	munmap(p, (size_t)page);
	errno = 0;
	cr_expect_eq(mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, d.ctx->cmd_fd, off),
		     MAP_FAILED);
	cr_expect_eq(errno, EPERM);
	errno = 0;
	cr_expect_eq(mmap(NULL, 2 * (size_t)page, PROT_READ, MAP_SHARED, d.ctx->cmd_fd, off),
		     MAP_FAILED);
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_eq(mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, d.ctx->cmd_fd, off + page),
		     MAP_FAILED);
	cr_expect_eq(errno, EOPNOTSUPP);
}
