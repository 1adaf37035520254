/*
 * fv_rdma_post_ud_send end to end on the software device (device thread running): UD ids
 * built by hand as librdmacm's RDMA_PS_UDP ids are (QPs with Q_Key RDMA_UDP_QKEY), numbered
 * messages from one to the other through an address handle, each waited for with
 * fv_rdma_get_send_comp and fv_rdma_get_recv_comp; the receiver finds the GRH area, then
 * the message, and the sender's QPN in the completion. A message to another Q_Key is dropped.
 */
#include <rdma/rdma_verbs.h>
#include <fastverbs/compat/rdmacm.h>

#include "diff-util.h"

#define UD_MSGS 500
#define GRH_LEN 40

struct ud_side {
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct rdma_cm_id id;
	struct fv_rdma r;
};

static struct simt_dev d;
static struct ud_side s[2];	/* [0] sends, [1] receives */
static uint8_t rbuf[GRH_LEN + 64];
static struct ibv_mr *mr;
static struct ibv_ah *ah;

static void ud_setup(void)
{
	simt_open(&d, 0);
	mr = simt_mr(&d, rbuf, sizeof(rbuf), SIMT_ACCESS_ALL);
	ah = ibv_create_ah(d.pd, &(struct ibv_ah_attr){ .dlid = d.lid, .port_num = 1 });
	cr_assert(ah);
	for (int k = 0; k < 2; k++) {
		s[k].ch = ibv_create_comp_channel(d.ctx);
		cr_assert(s[k].ch);
		s[k].cq = ibv_create_cq(d.ctx, 64, &s[k].id, s[k].ch, 0);
		cr_assert(s[k].cq);
		s[k].qp = simt_qp(&d, &(struct setup_qp_cfg){ .type = IBV_QPT_UD, .scq = s[k].cq, .max_inline = 64 });
		simt_ud_ready(s[k].qp, RDMA_UDP_QKEY);
		s[k].id.verbs = d.ctx;
		s[k].id.pd = d.pd;
		s[k].id.qp = s[k].qp;
		s[k].id.send_cq = s[k].id.recv_cq = s[k].cq;
		s[k].id.send_cq_channel = s[k].id.recv_cq_channel = s[k].ch;
		cr_assert_eq(fv_rdma_init(&s[k].r, &s[k].id), 0, "fv_rdma_init: %s", strerror(errno));
	}
}

static void ud_teardown(void)
{
	for (int k = 0; k < 2; k++) {
		fv_rdma_cleanup(&s[k].r);
		ibv_destroy_qp(s[k].qp);
		ibv_destroy_cq(s[k].cq);
		ibv_destroy_comp_channel(s[k].ch);
	}
	ibv_destroy_ah(ah);
	ibv_dereg_mr(mr);
	simt_close(&d);
}

TestSuite(sim_rdmacm_ud, .init = ud_setup, .fini = ud_teardown, .timeout = 120);

Test(sim_rdmacm_ud, numbered_messages)
{
	uint32_t dqpn = s[1].qp->qp_num;

	for (uint64_t m = 0; m < UD_MSGS; m++) {
		struct ibv_wc wc;
		uint64_t got;
		int inl = m % 2;

		cr_assert_eq(fv_rdma_post_recv(&s[1].r, (void *)(uintptr_t)m, rbuf, sizeof(rbuf), mr), 0);
		memcpy(rbuf + sizeof(rbuf) - 8, &m, 8);	/* sent from there: registered, or inline */
		cr_assert_eq(fv_rdma_post_ud_send(&s[0].r, (void *)(uintptr_t)(m + 1), rbuf + sizeof(rbuf) - 8, 8,
						  inl ? NULL : mr, IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0),
						  ah, dqpn), 0, "message %llu: %s", (unsigned long long)m, strerror(errno));
		cr_assert_eq(fv_rdma_get_send_comp(&s[0].r, &wc), 1);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
		cr_assert_eq(wc.wr_id, m + 1);
		cr_assert_eq(fv_rdma_get_recv_comp(&s[1].r, &wc), 1);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
		cr_assert_eq(wc.opcode, IBV_WC_RECV);
		cr_assert_eq(wc.wr_id, m);
		cr_assert_eq(wc.byte_len, GRH_LEN + 8);
		cr_assert_eq(wc.src_qp, s[0].qp->qp_num);
		memcpy(&got, rbuf + GRH_LEN, 8);
		cr_assert_eq(got, m, "message %llu carried %llu", (unsigned long long)m, (unsigned long long)got);
	}
	cr_log_info("%d UD messages; events taken: %u sender, %u receiver", UD_MSGS, s[0].r.cq[0].arm.sn,
		    s[1].r.cq[0].arm.sn);
}

/* rdma_post_ud_send always names librdmacm's Q_Key: a QP with another one drops the message. */
Test(sim_rdmacm_ud, other_qkey_dropped)
{
	struct ibv_qp *other = simt_qp(&d, &(struct setup_qp_cfg){ .type = IBV_QPT_UD, .scq = s[1].cq });
	struct ibv_sge sge = { (uintptr_t)rbuf, sizeof(rbuf), mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 }, *bad;
	uint64_t m = 7;
	struct ibv_wc wc;

	simt_ud_ready(other, RDMA_UDP_QKEY + 1);
	cr_assert_eq(ibv_post_recv(other, &rwr, &bad), 0);
	cr_assert_eq(fv_rdma_post_ud_send(&s[0].r, (void *)1, &m, 8, NULL, IBV_SEND_INLINE | IBV_SEND_SIGNALED, ah,
					  other->qp_num), 0);
	cr_assert_eq(fv_rdma_get_send_comp(&s[0].r, &wc), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	simt_expect_empty(s[1].cq);
	ibv_destroy_qp(other);
}
