/* FVSIM_MODE=poll: no device thread; the program's polls run the device. Not only
 * ibv_poll_cq: an extended CQ's ibv_start_poll (ibv_create_cq_ex, mlx5dv_create_cq) drives
 * it too, and a program that takes a CQ over with mlx5dv_init_obj and reads the CQEs from
 * memory (as fastverbs does) gets a device thread, since its polls never reach us. Each
 * test posts an RDMA WRITE on a loopback pair and waits for its completion. */
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

static struct simt_dev d;
static uint8_t buf[8192];
static struct ibv_mr *mr;
static struct ibv_qp *qa, *qb;
static struct ibv_cq *other;

static void setup(void)
{
	setenv("FVSIM_MODE", "poll", 1);
	simt_open(&d, 0);
	mr = simt_mr(&d, buf, sizeof(buf), SIMT_ACCESS_ALL);
	other = simt_cq(&d, 16);
}

static void teardown(void)
{
	if (qa) {
		ibv_destroy_qp(qa);
		ibv_destroy_qp(qb);
	}
	ibv_destroy_cq(other);
	ibv_dereg_mr(mr);
	simt_close(&d);
}

TestSuite(sim_poll_drive, .init = setup, .fini = teardown, .timeout = 60);

/* qa completes on cq; one signaled WRITE of 8 bytes from buf to buf + 4096. */
static void write_on(struct ibv_cq *cq)
{
	simt_qp_pair(&d, (struct setup_qp_cfg){ .type = IBV_QPT_RC }, cq, other, SIMT_ACCESS_ALL,
		     7, 7, &qa, &qb);
	memcpy(buf, "polldrv", 8);
	simt_post_send(qa, 42, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey, (uintptr_t)buf + 4096,
		       mr->rkey, IBV_SEND_SIGNALED);
}

static void expect_start_poll(struct ibv_cq_ex *cq)
{
	struct ibv_poll_cq_attr attr = { 0 };
	int err = ENOENT;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (err == ENOENT && simt_ms_since(&t0) < SIMT_WAIT_MS)
		err = ibv_start_poll(cq, &attr);
	cr_assert_eq(err, 0, "ibv_start_poll: %d (nothing ran the device)", err);
	cr_expect_eq(cq->wr_id, 42);
	cr_expect_eq(cq->status, IBV_WC_SUCCESS);
	ibv_end_poll(cq);
	cr_expect_str_eq((char *)buf + 4096, "polldrv");
}

/* An extended CQ (made by how): a WRITE completes on it through start_poll alone; then the
 * QPs and the CQ go, in that order. */
static void expect_driven_cq_ex(struct ibv_cq_ex *cq, const char *how)
{
	cr_assert(cq, "%s: %s", how, strerror(errno));
	write_on(ibv_cq_ex_to_cq(cq));
	expect_start_poll(cq);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	qa = qb = NULL;
	cr_expect_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

Test(sim_poll_drive, ibv_create_cq_ex_start_poll)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };

	expect_driven_cq_ex(ibv_create_cq_ex(d.ctx, &a), "ibv_create_cq_ex");
}

Test(sim_poll_drive, mlx5dv_create_cq_start_poll)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct mlx5dv_cq_init_attr dv = { 0 };

	expect_driven_cq_ex(mlx5dv_create_cq(d.ctx, &a, &dv), "mlx5dv_create_cq");
}

/* The CQE's op_own byte turns valid (opcode not 0xf) once the device wrote it. */
Test(sim_poll_drive, mlx5dv_cq_polled_in_memory)
{
	struct ibv_cq *cq = simt_cq(&d, 16);
	struct mlx5dv_cq dvcq;
	struct mlx5dv_obj obj = { .cq = { .in = cq, .out = &dvcq } };
	volatile uint8_t *op_own;
	struct timespec t0;

	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ), 0);
	op_own = (volatile uint8_t *)dvcq.buf + dvcq.cqe_size - 1;
	write_on(cq);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((*op_own >> 4) == 0xf && simt_ms_since(&t0) < SIMT_WAIT_MS)
		;
	cr_assert_neq(*op_own >> 4, 0xf, "no CQE in memory (nothing ran the device)");
	cr_expect_eq(*op_own >> 4, 0, "opcode %u, not a requester CQE", *op_own >> 4);
	cr_expect_str_eq((char *)buf + 4096, "polldrv");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	qa = qb = NULL;
	cr_expect_eq(ibv_destroy_cq(cq), 0);
}
