/* Several devices and ports in one process (FVSIM_DEVICES, FVSIM_PORTS): packets route by
 * LID between them, and keys, QPNs and PDs stay per device. Each test regenerates the
 * sysfs tree for two dual-port devices before libibverbs first looks at it. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

static struct simt_dev d0, d1;

static void two_devices(void)
{
	simt_sysfs(2, 2, NULL);
	simt_open(&d0, 0);
	simt_open(&d1, 1);
}

static void teardown(void)
{
	simt_close(&d0);
	simt_close(&d1);
}

TestSuite(sim_fabric, .init = two_devices, .fini = teardown, .timeout = 60);

static void connect_port(struct ibv_qp *qp, int port, uint16_t dlid, uint32_t dqpn)
{
	const struct setup_conn c = { .port_num = (uint8_t)port, .access = SIMT_ACCESS_ALL,
				      .mtu = IBV_MTU_4096, .rd_atomic = 1, .min_rnr_timer = 1,
				      .timeout = 1, .retry_cnt = 1, .rnr_retry = 7 };
	struct ibv_ah_attr ah;
	const char *what;
	int err;

	setup_path(&ah, dlid, (uint8_t)port, NULL, 0, 0);
	err = setup_connect(qp, &ah, dqpn, &c, &what);
	cr_assert_eq(err, 0, "to %s: %s", what, strerror(err));
}

Test(sim_fabric, ports_have_their_own_lids)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;

	cr_assert_eq(ibv_query_device(d1.ctx, &da), 0);
	cr_expect_eq(da.phys_port_cnt, 2);
	cr_assert_eq(ibv_query_port(d0.ctx, 2, &pa), 0);
	cr_expect_eq(pa.lid, 2);
	cr_assert_eq(ibv_query_port(d1.ctx, 1, &pa), 0);
	cr_expect_eq(pa.lid, 3);
	cr_assert_eq(ibv_query_port(d1.ctx, 2, &pa), 0);
	cr_expect_eq(pa.lid, 4);
	cr_expect_str_eq(ibv_get_device_name(d1.ctx->device), "mlx5_1");
}

Test(sim_fabric, rc_between_devices)
{
	static uint8_t m0[4096], m1[4096];
	struct ibv_mr *r0 = simt_mr(&d0, m0, sizeof(m0), SIMT_ACCESS_ALL);
	struct ibv_mr *r1 = simt_mr(&d1, m1, sizeof(m1), SIMT_ACCESS_ALL);
	struct ibv_cq *c0 = simt_cq(&d0, 16), *c1 = simt_cq(&d1, 16);
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = c0 };
	struct ibv_qp *a = simt_qp(&d0, &cfg), *b;
	struct ibv_wc wc;

	cfg.scq = c1;
	b = simt_qp(&d1, &cfg);
	/* mlx5_0 port 1 (LID 1) <-> mlx5_1 port 2 (LID 4). */
	connect_port(a, 1, 4, b->qp_num);
	connect_port(b, 2, 1, a->qp_num);
	memcpy(m0, "across devices", 15);
	simt_post_recv(b, 1, m1, 64, r1->lkey);
	simt_post_send(a, 2, IBV_WR_SEND, m0, 15, r0->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(c1, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.slid, 1);
	cr_expect_eq(wc.src_qp, a->qp_num);
	cr_expect_str_eq((char *)m1, "across devices");
	cr_assert_eq(simt_poll(c0, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	/* An rkey of mlx5_0 means nothing on mlx5_1. */
	simt_post_send(a, 3, IBV_WR_RDMA_WRITE, m0, 8, r0->lkey, (uintptr_t)m0 + 100, r0->rkey,
		       IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(c0, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(c0);
	ibv_destroy_cq(c1);
	ibv_dereg_mr(r0);
	ibv_dereg_mr(r1);
}

Test(sim_fabric, wrong_lid_is_unreachable)
{
	struct ibv_cq *c0 = simt_cq(&d0, 16);
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = c0 };
	struct ibv_qp *a = simt_qp(&d0, &cfg), *b = simt_qp(&d0, &cfg);
	static uint8_t m[64];
	struct ibv_mr *r = simt_mr(&d0, m, sizeof(m), SIMT_ACCESS_ALL);
	struct ibv_wc wc;

	/* b exists on mlx5_0 but the path names LID 3 (mlx5_1): nobody answers. */
	connect_port(a, 1, 3, b->qp_num);
	simt_post_send(a, 1, IBV_WR_RDMA_WRITE, m, 8, r->lkey, (uintptr_t)m, r->rkey,
		       IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(c0, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(c0);
	ibv_dereg_mr(r);
}
