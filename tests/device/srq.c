/* Shared receive queues: several QPs drain one SRQ through ibv_post_srq_recv, the
 * completions name the receiving QP and the SRQ's wr_id, the SRQ's free list wraps, an
 * empty SRQ makes RC senders retry, and the limit event fires. */
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

#define BUF 65536

static struct simt_dev d;
static struct ibv_cq *scq, *rcq;
static struct ibv_srq *srq;
static struct ibv_qp *tx[2], *rx[2];
static uint8_t *buf;
static struct ibv_mr *mr;

static void setup(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC };

	simt_open(&d, 0);
	buf = simt_mem(&d, BUF, SIMT_ACCESS_ALL, &mr);
	scq = simt_cq(&d, 256);
	rcq = simt_cq(&d, 256);
	srq = ibv_create_srq(d.pd, &sa);
	cr_assert(srq);
	for (int i = 0; i < 2; i++) {
		cfg.scq = scq;
		cfg.srq = NULL;
		tx[i] = simt_qp(&d, &cfg);
		cfg.scq = rcq;
		cfg.srq = srq;
		rx[i] = simt_qp(&d, &cfg);
		simt_connect(tx[i], d.lid, rx[i]->qp_num, SIMT_ACCESS_ALL, 7, 7);
		simt_connect(rx[i], d.lid, tx[i]->qp_num, SIMT_ACCESS_ALL, 7, 7);
	}
}

static void teardown(void)
{
	for (int i = 0; i < 2; i++) {
		ibv_destroy_qp(tx[i]);
		ibv_destroy_qp(rx[i]);
	}
	ibv_destroy_srq(srq);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(mr);
	free(buf);
	simt_close(&d);
}

TestSuite(sim_srq, .init = setup, .fini = teardown, .timeout = 60);

Test(sim_srq, two_qps_share_one_srq)
{
	struct ibv_wc wc[4];

	for (int i = 0; i < 4; i++)
		simt_post_srq_recv(srq, 100 + i, buf + 4096 + i * 256, 256, mr->lkey);
	memset(buf, 'a', 64);
	memset(buf + 64, 'b', 64);
	simt_post_send(tx[0], 1, IBV_WR_SEND, buf, 64, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(rcq, wc, 1), 1);
	simt_post_send(tx[1], 2, IBV_WR_SEND, buf + 64, 64, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(rcq, wc + 1, 1), 1);
	/* SRQ WQEs are taken in posting order whichever QP receives. */
	cr_expect_eq(wc[0].wr_id, 100);
	cr_expect_eq(wc[0].qp_num, rx[0]->qp_num);
	cr_expect_eq(wc[0].src_qp, tx[0]->qp_num);
	cr_expect_eq(wc[1].wr_id, 101);
	cr_expect_eq(wc[1].qp_num, rx[1]->qp_num);
	cr_expect_eq(wc[1].src_qp, tx[1]->qp_num);
	cr_expect_eq(buf[4096], 'a');
	cr_expect_eq(buf[4096 + 256], 'b');
	cr_assert_eq(simt_poll(scq, wc, 2), 2);
}

Test(sim_srq, free_list_wraps)
{
	struct ibv_wc wc;
	int posted = 0;

	/* 200 messages through 16 SRQ entries: each completion frees its WQE for reuse. */
	for (; posted < 16; posted++)
		simt_post_srq_recv(srq, (uint64_t)posted, buf + 4096 + (posted % 16) * 256, 256,
				   mr->lkey);
	for (int m = 0; m < 200; m++) {
		buf[0] = (uint8_t)m;
		simt_post_send(tx[m & 1], (uint64_t)m, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0,
			       IBV_SEND_SIGNALED);
		cr_assert_eq(simt_poll(rcq, &wc, 1), 1, "message %d", m);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cr_expect_eq(wc.wr_id, (uint64_t)m);
		cr_expect_eq(buf[4096 + (m % 16) * 256], (uint8_t)m);
		cr_assert_eq(simt_poll(scq, &wc, 1), 1);
		simt_post_srq_recv(srq, (uint64_t)posted, buf + 4096 + (posted % 16) * 256, 256,
				   mr->lkey);
		posted++;
	}
}

Test(sim_srq, write_with_imm_consumes_srq_entry)
{
	struct ibv_sge sge = { (uintptr_t)buf, 32, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .imm_data = 0x01020304,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = (uintptr_t)buf + 8192;
	wr.wr.rdma.rkey = mr->rkey;
	simt_post_srq_recv(srq, 55, buf + 4096, 16, mr->lkey);
	cr_assert_eq(ibv_post_send(tx[1], &wr, &bad), 0);
	cr_assert_eq(simt_poll(rcq, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 55);
	cr_expect_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_expect_eq(wc.imm_data, 0x01020304);
	cr_expect_eq(wc.qp_num, rx[1]->qp_num);
}

Test(sim_srq, empty_srq_means_rnr)
{
	struct ibv_wc wc;

	fvsim_set_step_mode(1);
	simt_post_send(tx[0], 1, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	for (int i = 0; i < 10; i++)
		fvsim_step();
	cr_expect_eq(ibv_poll_cq(scq, 1, &wc), 0, "waiting for a receive (rnr_retry 7)");
	simt_post_srq_recv(srq, 9, buf + 4096, 64, mr->lkey);
	cr_assert_eq(simt_poll(rcq, &wc, 1), 1);
	cr_expect_eq(wc.wr_id, 9);
	cr_assert_eq(simt_poll(scq, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
}

Test(sim_srq, limit_event)
{
	struct ibv_srq_attr attr = { .srq_limit = 3 };
	struct ibv_async_event ev;
	struct ibv_wc wc;

	for (int i = 0; i < 4; i++)
		simt_post_srq_recv(srq, (uint64_t)i, buf + 4096 + i * 64, 64, mr->lkey);
	cr_assert_eq(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), 0);
	simt_post_send(tx[0], 1, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	simt_post_send(tx[0], 2, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(rcq, &wc, 1), 1);
	cr_assert_eq(ibv_get_async_event(d.ctx, &ev), 0);
	cr_expect_eq(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	cr_expect_eq(ev.element.srq, srq);
	ibv_ack_async_event(&ev);
	cr_assert_eq(ibv_query_srq(srq, &attr), 0);
	cr_expect_eq(attr.srq_limit, 0, "the limit disarms once it fired");
	cr_assert_eq(simt_poll(rcq, &wc, 1), 1);
	cr_assert_eq(simt_poll(scq, &wc, 1), 1);
}
