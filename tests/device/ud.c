/* UD on the software device: address handles built by libmlx5 in user space, Q_Keys,
 * the 40-byte GRH area at the head of every receive buffer, and silent drops. */
#include <endian.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

#define BUF 16384
#define QKEY 0x11111111

static struct simt_dev d;
static struct ibv_cq *cqa, *cqb;
static struct ibv_qp *qa, *qb;
static uint8_t *buf;
static struct ibv_mr *mr;
static struct ibv_ah *ah;
static const struct simt_pair fx = SIMT_PAIR;

static void setup(void)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_UD, .max_inline = 64 };
	struct ibv_ah_attr aa = { .port_num = 1 };

	simt_pair_open(&fx, BUF, BUF, IBV_ACCESS_LOCAL_WRITE, 64);
	cfg.scq = cqa;
	qa = simt_qp(&d, &cfg);
	cfg.scq = cqb;
	qb = simt_qp(&d, &cfg);
	simt_ud_ready(qa, QKEY);
	simt_ud_ready(qb, QKEY);
	aa.dlid = d.lid;
	ah = ibv_create_ah(d.pd, &aa);
	cr_assert(ah);
}

static void teardown(void)
{
	ibv_destroy_ah(ah);
	simt_pair_close(&fx);
}

TestSuite(sim_ud, .init = setup, .fini = teardown, .timeout = 60);

static void ud_send(struct ibv_ah *to, uint32_t qpn, uint32_t qkey, uint64_t wr_id, void *p,
		    uint32_t len, enum ibv_wr_opcode op, uint32_t imm, int flags)
{
	struct ibv_sge sge = { (uintptr_t)p, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED | flags,
				  .imm_data = htobe32(imm) }, *bad;

	wr.wr.ud.ah = to;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	cr_assert_eq(ibv_post_send(qa, &wr, &bad), 0);
}

Test(sim_ud, datagram_lands_after_grh_area)
{
	struct ibv_wc wc;

	for (int i = 0; i < 200; i++)
		buf[i] = (uint8_t)i;
	memset(buf + 4096, 0xee, 40);
	simt_post_recv(qb, 5, buf + 4096, 40 + 512, mr->lkey);
	ud_send(ah, qb->qp_num, QKEY, 6, buf, 200, IBV_WR_SEND, 0, 0);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_SEND);
	cr_expect_eq(wc.wr_id, 6);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 5);
	cr_expect_eq(wc.opcode, IBV_WC_RECV);
	cr_expect_eq(wc.byte_len, 240, "byte_len counts the 40-byte GRH area");
	cr_expect_eq(wc.src_qp, qa->qp_num);
	cr_expect_eq(wc.slid, d.lid);
	cr_expect_eq(wc.wc_flags & IBV_WC_GRH, 0, "no GRH on a local IB path");
	cr_expect_arr_eq(buf + 4096 + 40, buf, 200);
}

Test(sim_ud, global_route_header)
{
	struct ibv_ah_attr aa = { .port_num = 1, .is_global = 1 };
	struct ibv_ah *gah;
	union ibv_gid gid;
	struct ibv_wc wc;
	uint8_t *grh = buf + 8192;

	cr_assert_eq(ibv_query_gid(d.ctx, 1, 0, &gid), 0);
	aa.dlid = d.lid;
	aa.grh.dgid = gid;
	aa.grh.hop_limit = 64;
	aa.grh.traffic_class = 0x20;
	aa.grh.flow_label = 0x12345;
	gah = ibv_create_ah(d.pd, &aa);
	cr_assert(gah);
	simt_post_recv(qb, 1, grh, 40 + 64, mr->lkey);
	ud_send(gah, qb->qp_num, QKEY, 2, buf, 64, IBV_WR_SEND, 0, 0);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect(wc.wc_flags & IBV_WC_GRH);
	cr_expect_eq(wc.byte_len, 104);
	cr_expect_eq(grh[0] >> 4, 6, "IP version 6");
	cr_expect_eq(grh[6], 0x1b, "next header: BTH");
	cr_expect_eq(grh[7], 64);
	cr_expect_arr_eq(grh + 8, gid.raw, 16, "source GID");
	cr_expect_arr_eq(grh + 24, gid.raw, 16, "destination GID");
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	ibv_destroy_ah(gah);
}

Test(sim_ud, send_with_imm_and_inline)
{
	struct ibv_wc wc;

	memcpy(buf, "hello, datagram", 16);
	simt_post_recv(qb, 1, buf + 1024, 100, mr->lkey);
	ud_send(ah, qb->qp_num, QKEY, 2, buf, 16, IBV_WR_SEND_WITH_IMM, 0xfeed, IBV_SEND_INLINE);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_expect_eq(be32toh(wc.imm_data), 0xfeed);
	cr_expect_eq(wc.byte_len, 56);
	cr_expect_str_eq((char *)buf + 1024 + 40, "hello, datagram");
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
}

Test(sim_ud, qkey_mismatch_is_dropped)
{
	struct ibv_wc wc;

	simt_post_recv(qb, 1, buf + 1024, 100, mr->lkey);
	ud_send(ah, qb->qp_num, QKEY + 1, 2, buf, 16, IBV_WR_SEND, 0, 0);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "the sender never learns");
	simt_expect_empty(cqb);
	/* The receive is still there for the next good datagram. */
	ud_send(ah, qb->qp_num, QKEY, 3, buf, 16, IBV_WR_SEND, 0, 0);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	cr_expect_eq(wc.wr_id, 1);
}

Test(sim_ud, no_receive_posted_is_dropped)
{
	struct ibv_wc wc;

	ud_send(ah, qb->qp_num, QKEY, 2, buf, 16, IBV_WR_SEND, 0, 0);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	simt_post_recv(qb, 1, buf + 1024, 100, mr->lkey);
	simt_expect_empty(cqb);
}

Test(sim_ud, unknown_qpn_is_dropped)
{
	struct ibv_wc wc;

	ud_send(ah, 0xfedcb, QKEY, 2, buf, 16, IBV_WR_SEND, 0, 0);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
}

Test(sim_ud, larger_than_mtu_fails_locally)
{
	struct ibv_wc wc;

	ud_send(ah, qb->qp_num, QKEY, 2, buf, 4097, IBV_WR_SEND, 0, 0);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR);
}

Test(sim_ud, buffer_too_small_for_datagram)
{
	struct ibv_wc wc;

	simt_post_recv(qb, 1, buf + 1024, 40 + 8, mr->lkey);
	ud_send(ah, qb->qp_num, QKEY, 2, buf, 16, IBV_WR_SEND, 0, 0);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
}
