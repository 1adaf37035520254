/* XRC: an initiator QP sends to a target QP in an XRC domain, and each message names the
 * XRC SRQ that receives it; completions come on that SRQ's CQ, carrying its wr_id. */
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

#define BUF 16384

static struct simt_dev d;
static struct ibv_cq *icq, *tcq[2];
static struct ibv_xrcd *xrcd;
static struct ibv_srq *xsrq[2];
static uint32_t srqn[2];
static struct ibv_qp *ini, *tgt;
static uint8_t *buf;
static struct ibv_mr *mr;

static void setup(void)
{
	simt_open(&d, 0);
	buf = simt_mem(&d, BUF, SIMT_ACCESS_ALL, &mr);
	icq = simt_cq(&d, 64);
	tcq[0] = simt_cq(&d, 64);
	tcq[1] = simt_cq(&d, 64);
	xrcd = simt_xrcd(&d);
	for (int i = 0; i < 2; i++) {
		xsrq[i] = simt_xrc_srq(&d, xrcd, tcq[i], 16, 2);
		cr_assert_eq(ibv_get_srq_num(xsrq[i], &srqn[i]), 0);
	}
	simt_xrc_pair(&d, xrcd, icq, 64, 2, &ini, &tgt);
}

static void teardown(void)
{
	ibv_destroy_qp(ini);
	ibv_destroy_qp(tgt);
	for (int i = 0; i < 2; i++)
		ibv_destroy_srq(xsrq[i]);
	ibv_close_xrcd(xrcd);
	ibv_destroy_cq(icq);
	ibv_destroy_cq(tcq[0]);
	ibv_destroy_cq(tcq[1]);
	ibv_dereg_mr(mr);
	free(buf);
	simt_close(&d);
}

TestSuite(sim_xrc, .init = setup, .fini = teardown, .timeout = 60);

static void xrc_post(uint64_t wr_id, enum ibv_wr_opcode op, uint32_t to_srqn, void *p,
		     uint32_t len, uint64_t raddr)
{
	struct ibv_sge sge = { (uintptr_t)p, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.qp_type.xrc.remote_srqn = to_srqn;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = mr->rkey;
	cr_assert_eq(ibv_post_send(ini, &wr, &bad), 0);
}

Test(sim_xrc, send_picks_the_named_srq)
{
	struct ibv_wc wc;

	simt_post_srq_recv(xsrq[0], 10, buf + 4096, 256, mr->lkey);
	simt_post_srq_recv(xsrq[1], 20, buf + 8192, 256, mr->lkey);
	memset(buf, 'x', 100);
	xrc_post(1, IBV_WR_SEND, srqn[1], buf, 100, 0);
	cr_assert_eq(simt_poll(tcq[1], &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, 20);
	cr_expect_eq(wc.opcode, IBV_WC_RECV);
	cr_expect_eq(wc.byte_len, 100);
	cr_expect_eq(wc.qp_num, tgt->qp_num);
	cr_expect_eq(wc.src_qp, ini->qp_num);
	cr_expect_eq(buf[8192 + 99], 'x');
	cr_expect_eq(buf[4096], 0);
	simt_expect_empty(tcq[0]);
	cr_assert_eq(simt_poll(icq, &wc, 1), 1);
	cr_expect_eq(wc.wr_id, 1);
	cr_expect_eq(wc.opcode, IBV_WC_SEND);

	memset(buf, 'y', 10);
	xrc_post(2, IBV_WR_SEND, srqn[0], buf, 10, 0);
	cr_assert_eq(simt_poll(tcq[0], &wc, 1), 1);
	cr_expect_eq(wc.wr_id, 10);
	cr_expect_eq(buf[4096 + 9], 'y');
	cr_assert_eq(simt_poll(icq, &wc, 1), 1);
}

Test(sim_xrc, rdma_and_atomics)
{
	struct ibv_wc wc;
	uint64_t *remote = (uint64_t *)(buf + 12288), *res = (uint64_t *)(buf + 12800);

	memset(buf, 'w', 64);
	xrc_post(1, IBV_WR_RDMA_WRITE, srqn[0], buf, 64, (uintptr_t)buf + 6000);
	cr_assert_eq(simt_poll(icq, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(buf[6063], 'w');
	xrc_post(2, IBV_WR_RDMA_READ, srqn[0], buf + 7000, 64, (uintptr_t)buf + 6000);
	cr_assert_eq(simt_poll(icq, &wc, 1), 1);
	cr_expect_eq(wc.opcode, IBV_WC_RDMA_READ);
	cr_expect_arr_eq(buf + 7000, buf + 6000, 64);
	*remote = 40;
	{
		struct ibv_sge sge = { (uintptr_t)res, 8, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.qp_type.xrc.remote_srqn = srqn[0];
		wr.wr.atomic.remote_addr = (uintptr_t)remote;
		wr.wr.atomic.rkey = mr->rkey;
		wr.wr.atomic.compare_add = 2;
		cr_assert_eq(ibv_post_send(ini, &wr, &bad), 0);
	}
	cr_assert_eq(simt_poll(icq, &wc, 1), 1);
	cr_expect_eq(wc.opcode, IBV_WC_FETCH_ADD);
	cr_expect_eq(*res, 40);
	cr_expect_eq(*remote, 42);
}

Test(sim_xrc, unknown_srqn_is_an_invalid_request)
{
	struct ibv_wc wc;

	xrc_post(1, IBV_WR_SEND, 0x7abcd, buf, 8, 0);
	cr_assert_eq(simt_poll(icq, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
}
