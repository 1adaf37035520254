/* UC on the software device: sends and writes arrive; a message the responder cannot
 * take is dropped without telling the requester, as on an unreliable connection. */
#include <endian.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

#define BUF 16384

static struct simt_dev d;
static struct ibv_cq *cqa, *cqb;
static struct ibv_qp *qa, *qb;
static uint8_t *buf;
static struct ibv_mr *mr;
static const struct simt_pair fx = SIMT_PAIR;

static void setup(void)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_UC };

	simt_pair_open(&fx, BUF, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 64);
	simt_pair_connect(&fx, cfg, IBV_ACCESS_REMOTE_WRITE, 0, 0);
}

static void teardown(void)
{
	simt_pair_close(&fx);
}

TestSuite(sim_uc, .init = setup, .fini = teardown, .timeout = 60);

Test(sim_uc, send_and_write_with_imm)
{
	struct ibv_sge sge = { (uintptr_t)buf, 128, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(7) }, *bad;
	struct ibv_wc wc;

	for (int i = 0; i < 128; i++)
		buf[i] = (uint8_t)(i ^ 0x5a);
	simt_post_recv(qb, 10, buf + 1024, 256, mr->lkey);
	simt_post_send(qa, 1, IBV_WR_SEND, buf, 128, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_RECV);
	cr_expect_eq(wc.byte_len, 128);
	cr_expect_eq(wc.src_qp, qa->qp_num);
	cr_expect_arr_eq(buf + 1024, buf, 128);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);

	wr.wr.rdma.remote_addr = (uintptr_t)buf + 4096;
	wr.wr.rdma.rkey = mr->rkey;
	simt_post_recv(qb, 11, buf + 1024, 256, mr->lkey);
	cr_assert_eq(ibv_post_send(qa, &wr, &bad), 0);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	cr_expect_eq(wc.wr_id, 11);
	cr_expect_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_expect_eq(be32toh(wc.imm_data), 7);
	cr_expect_eq(wc.byte_len, 128);
	cr_expect_arr_eq(buf + 4096, buf, 128);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.opcode, IBV_WC_RDMA_WRITE);
}

Test(sim_uc, rdma_write)
{
	struct ibv_wc wc;

	memset(buf, 0x3c, 1000);
	simt_post_send(qa, 1, IBV_WR_RDMA_WRITE, buf, 1000, mr->lkey, (uintptr_t)buf + 8192,
		       mr->rkey, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_arr_eq(buf + 8192, buf, 1000);
}

Test(sim_uc, drops_are_silent)
{
	struct ibv_wc wc;

	/* No receive posted. */
	simt_post_send(qa, 1, IBV_WR_SEND, buf, 16, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	/* A bad rkey. */
	buf[8192] = 0;
	buf[0] = 1;
	simt_post_send(qa, 2, IBV_WR_RDMA_WRITE, buf, 16, mr->lkey, (uintptr_t)buf + 8192,
		       0x7777700, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(buf[8192], 0);
	simt_expect_empty(cqb);
	/* The connection still works. */
	simt_post_recv(qb, 3, buf + 1024, 64, mr->lkey);
	simt_post_send(qa, 4, IBV_WR_SEND, buf, 16, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 3);
}
