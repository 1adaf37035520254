/* The extended work-request API (ibv_wr_start ... ibv_wr_complete on an ibv_qp_ex), the
 * other way unmodified libmlx5 writes WQEs, executed by the software device. */
#include <endian.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

static struct simt_dev d;
static struct ibv_cq *cq;
static uint8_t *buf;
static struct ibv_mr *mr;

static void setup(void)
{
	simt_open(&d, 0);
	buf = simt_mem(&d, 16384, SIMT_ACCESS_ALL, &mr);
	cq = simt_cq(&d, 64);
}

static void teardown(void)
{
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	free(buf);
	simt_close(&d);
}

TestSuite(sim_wrapi, .init = setup, .fini = teardown, .timeout = 60);

static struct ibv_qp *qp_ex(enum ibv_qp_type type, uint64_t ops)
{
	struct setup_qp_cfg c = { .type = type, .scq = cq, .rcq = cq, .max_send_wr = 32,
				  .max_recv_wr = 32, .max_send_sge = 2, .max_recv_sge = 2,
				  .max_inline = 64, .send_ops = ops };

	return simt_qp(&d, &c);
}

Test(sim_wrapi, rc_operations)
{
	struct ibv_qp *qp = qp_ex(IBV_QPT_RC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
					       IBV_QP_EX_WITH_RDMA_WRITE |
					       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
					       IBV_QP_EX_WITH_RDMA_READ |
					       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
					       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp);
	uint64_t *counter = (uint64_t *)(buf + 8192), *old = (uint64_t *)(buf + 8200);
	struct ibv_wc wc[8];
	int n;

	simt_connect(qp, d.lid, qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	memcpy(buf, "wr-api payload", 15);
	*counter = 5;
	simt_post_recv(qp, 100, buf + 4096, 64, mr->lkey);
	simt_post_recv(qp, 101, buf + 4096 + 64, 64, mr->lkey);

	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 15);
	qx->wr_id = 2;
	ibv_wr_rdma_write(qx, mr->rkey, (uintptr_t)buf + 2048);
	ibv_wr_set_inline_data(qx, buf, 15);
	qx->wr_id = 3;
	ibv_wr_rdma_write_imm(qx, mr->rkey, (uintptr_t)buf + 3072, htobe32(0xabc));
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 15);
	qx->wr_id = 4;
	ibv_wr_rdma_read(qx, mr->rkey, (uintptr_t)buf + 2048);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf + 6000, 15);
	qx->wr_id = 5;
	ibv_wr_atomic_fetch_add(qx, mr->rkey, (uintptr_t)counter, 10);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)old, 8);
	qx->wr_id = 6;
	ibv_wr_atomic_cmp_swp(qx, mr->rkey, (uintptr_t)counter, 15, 99);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)old + 8, 8);
	cr_assert_eq(ibv_wr_complete(qx), 0);

	n = simt_poll(cq, wc, 8);
	cr_assert_eq(n, 8);
	for (int i = 0; i < 8; i++)
		cr_expect_eq(wc[i].status, IBV_WC_SUCCESS, "wc %d: %s", i,
			     ibv_wc_status_str(wc[i].status));
	cr_expect_str_eq((char *)buf + 4096, "wr-api payload");
	cr_expect_str_eq((char *)buf + 2048, "wr-api payload");
	cr_expect_str_eq((char *)buf + 3072, "wr-api payload");
	cr_expect_str_eq((char *)buf + 6000, "wr-api payload");
	cr_expect_eq(old[0], 5);
	cr_expect_eq(old[1], 15);
	cr_expect_eq(*counter, 99);
	ibv_destroy_qp(qp);
}

Test(sim_wrapi, ud_send)
{
	struct ibv_qp *tx = qp_ex(IBV_QPT_UD, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
	struct ibv_qp *rx = qp_ex(IBV_QPT_UD, IBV_QP_EX_WITH_SEND);
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(tx);
	struct ibv_ah_attr aa = { .dlid = d.lid, .port_num = 1 };
	struct ibv_ah *ah = ibv_create_ah(d.pd, &aa);
	struct ibv_wc wc[2];

	cr_assert(ah);
	simt_ud_ready(tx, 99);
	simt_ud_ready(rx, 99);
	memcpy(buf, "datagram", 9);
	simt_post_recv(rx, 7, buf + 4096, 40 + 64, mr->lkey);
	ibv_wr_start(qx);
	qx->wr_id = 8;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(qx, htobe32(5));
	ibv_wr_set_ud_addr(qx, ah, rx->qp_num, 99);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 9);
	cr_assert_eq(ibv_wr_complete(qx), 0);
	cr_assert_eq(simt_poll(cq, wc, 2), 2);
	for (int i = 0; i < 2; i++) {
		cr_expect_eq(wc[i].status, IBV_WC_SUCCESS);
		if (wc[i].opcode == IBV_WC_RECV) {
			cr_expect_eq(wc[i].wr_id, 7);
			cr_expect_eq(wc[i].byte_len, 49);
			cr_expect_eq(be32toh(wc[i].imm_data), 5);
		} else {
			cr_expect_eq(wc[i].wr_id, 8);
		}
	}
	cr_expect_str_eq((char *)buf + 4096 + 40, "datagram");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(tx);
	ibv_destroy_qp(rx);
}
