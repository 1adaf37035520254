/* DC transport on the software device, driven by libmlx5 itself (mlx5dv_create_qp,
 * ibv_wr_* and mlx5dv_wr_set_dc_addr): what creation and modification refuse, the DCT's
 * number (0 until RTR), one DCI writing and sending to several DCTs in turn, receive
 * completions that name the DCT and the DCI, and the failures: a wrong DC key and an
 * absent DCT end in retry-exceeded, missing access in a remote access error, an empty SRQ
 * in RNR retry-exceeded. FVSIM_NO_DC=1 refuses DC with EOPNOTSUPP. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>

#include "sim-dc.h"
#include "sim-proc.h"
#include "sim-util.h"

#define KEY 0x1ee7a330c0ffee11ull
#define NDCT 3

struct dct_side {
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct dc_dest dest;
};

static struct simt_dev dev;
static struct ibv_cq *scq;
static struct ibv_mr *mr;
static uint8_t *mem;

static void open_dev(void)
{
	simt_open(&dev, 0);
	scq = simt_cq(&dev, 64);
	mem = simt_mem(&dev, 1 << 16, SIMT_ACCESS_ALL, &mr);
}

static void close_dev(void)
{
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	free(mem);
	cr_assert_eq(ibv_destroy_cq(scq), 0);
	simt_close(&dev);
}

TestSuite(sim_dc, .init = open_dev, .fini = close_dev, .timeout = 60);

static struct ibv_srq *make_srq(void)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(dev.pd, &a);

	cr_assert(srq, "ibv_create_srq: %s", strerror(errno));
	return srq;
}

static struct ibv_ah *make_ah(void)
{
	struct ibv_ah_attr a = { .dlid = dev.lid, .port_num = 1 };
	struct ibv_ah *ah = ibv_create_ah(dev.pd, &a);

	cr_assert(ah, "ibv_create_ah: %s", strerror(errno));
	return ah;
}

static void dct_side_up(struct dct_side *d, uint64_t key, int access)
{
	struct dc_cfg c = { .dct = true, .pd = dev.pd, .key = key };

	d->cq = c.cq = simt_cq(&dev, 32);
	d->srq = c.srq = make_srq();
	d->qp = dc_create(dev.ctx, &c);
	cr_assert(d->qp, "DCT: %s", strerror(errno));
	cr_assert_eq(dct_up(d->qp, access, dev.lid), 0);
	d->dest.ah = make_ah();
	d->dest.dctn = d->qp->qp_num;
	d->dest.key = key;
}

static void dct_side_down(struct dct_side *d)
{
	cr_assert_eq(ibv_destroy_qp(d->qp), 0);
	cr_assert_eq(ibv_destroy_ah(d->dest.ah), 0);
	cr_assert_eq(ibv_destroy_srq(d->srq), 0);
	cr_assert_eq(ibv_destroy_cq(d->cq), 0);
}

static int dct_up_rtr(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.min_rnr_timer = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.dlid = dev.lid;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV |
					     IBV_QP_PATH_MTU);
}

static struct ibv_qp *dci(int rnr_retry)
{
	struct dc_cfg c = { .pd = dev.pd, .cq = scq };
	struct ibv_qp *qp = dc_create(dev.ctx, &c);

	cr_assert(qp, "DCI: %s", strerror(errno));
	cr_assert_eq(dci_up(qp, rnr_retry), 0);
	return qp;
}

static void expect_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st, struct ibv_wc *wc)
{
	cr_assert_eq(dc_wait(cq, wc, 5000), 1, "no completion for WR %llu",
		     (unsigned long long)wr_id);
	cr_expect_eq(wc->wr_id, wr_id);
	cr_expect_eq(wc->status, st, "WR %llu: %s, want %s", (unsigned long long)wr_id,
		     ibv_wc_status_str(wc->status), ibv_wc_status_str(st));
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &i), 0);
	return a.qp_state;
}

/* The refusals the kernel (or libmlx5 before it) gives, each with its errno. */
Test(sim_dc, create_refusals)
{
	struct ibv_srq *srq = make_srq();
	struct dc_cfg c = { .dct = true, .pd = dev.pd, .cq = scq, .key = KEY };
	struct ibv_qp *qp;

	/* A DCT receives through an SRQ only. */
	errno = 0;
	cr_expect_null(dc_create(dev.ctx, &c));
	cr_expect_eq(errno, EINVAL, "DCT without SRQ: %s", strerror(errno));
	/* A DCI has no receive queue. */
	c.dct = false;
	c.max_recv_wr = 4;
	c.max_recv_sge = 1;
	errno = 0;
	cr_expect_null(dc_create(dev.ctx, &c));
	cr_expect_eq(errno, EINVAL, "DCI with receives: %s", strerror(errno));
	/* A DCI with an SRQ is fine (UCX and pyverbs give one); the SRQ is never used. */
	c.max_recv_wr = c.max_recv_sge = 0;
	c.srq = srq;
	qp = dc_create(dev.ctx, &c);
	cr_assert(qp, "DCI with SRQ: %s", strerror(errno));
	cr_expect_neq(qp->qp_num, 0);
	cr_expect_eq(ibv_destroy_qp(qp), 0);
	cr_expect_eq(ibv_destroy_srq(srq), 0);
}

/* write() of a command, legacy or extended (the core request then the driver request):
 * 0 or errno. */
static int raw_cmd(uint32_t command, bool ex, const void *core, size_t core_len, const void *drv,
		   size_t drv_len, uint64_t resp, size_t out_core, size_t out_drv)
{
	uint8_t msg[1024];
	struct ib_uverbs_cmd_hdr *h = (void *)msg;
	struct ib_uverbs_ex_cmd_hdr *x = (void *)(msg + sizeof(*h));
	size_t off = sizeof(*h) + (ex ? sizeof(*x) : 0);

	cr_assert(off + core_len + drv_len <= sizeof(msg));
	memset(msg, 0, off);
	h->command = command | (ex ? IB_USER_VERBS_CMD_FLAG_EXTENDED : 0);
	memcpy(msg + off, core, core_len);
	memcpy(msg + off + core_len, drv, drv_len);
	if (ex) {
		cr_assert(core_len % 8 == 0 && drv_len % 8 == 0 && out_core % 8 == 0 &&
			  out_drv % 8 == 0);
		h->in_words = (uint16_t)(core_len / 8);
		h->out_words = (uint16_t)(out_core / 8);
		x->response = resp;
		x->provider_in_words = (uint16_t)(drv_len / 8);
		x->provider_out_words = (uint16_t)(out_drv / 8);
	} else {
		h->in_words = (uint16_t)((off + core_len + drv_len) / 4);
		h->out_words = (uint16_t)((out_core + out_drv) / 4);
	}
	if (write(dev.ctx->cmd_fd, msg, off + core_len + drv_len) ==
	    (ssize_t)(off + core_len + drv_len))
		return 0;
	return errno;
}

/* The device's own checks of a DC create, which libmlx5 never lets a request reach:
 * neither or both type flags, DCI streams, core create flags on a DCT. And a DCT cannot
 * reach RTR through the legacy MODIFY_QP, which has no room for its number. */
Test(sim_dc, device_refusals)
{
	static uint8_t qbuf[16384] __attribute__((aligned(4096)));
	static uint32_t db[16] __attribute__((aligned(64)));
	struct ibv_srq *srq = make_srq();
	struct ib_uverbs_create_qp core;
	struct ib_uverbs_ex_create_qp ex;
	struct mlx5_ib_create_qp drv;
	struct {
		struct ib_uverbs_ex_create_qp_resp core;
		struct mlx5_ib_create_qp_resp drv;
	} resp;
	struct dc_cfg c = { .dct = true, .pd = dev.pd, .cq = scq, .srq = srq, .key = KEY };
	struct ibv_qp *dct;
	struct ibv_qp_attr a;

	memset(&core, 0, sizeof(core));
	memset(&drv, 0, sizeof(drv));
	core.response = (uintptr_t)&resp;
	core.pd_handle = dev.pd->handle;
	core.send_cq_handle = core.recv_cq_handle = scq->handle;
	core.max_send_wr = 16;
	core.max_send_sge = 1;
	core.qp_type = IBV_QPT_DRIVER;
	drv.buf_addr = (uintptr_t)qbuf;
	drv.db_addr = (uintptr_t)db;
	drv.sq_wqe_count = 64;
	drv.flags = 0;
	cr_expect_eq(raw_cmd(IB_USER_VERBS_CMD_CREATE_QP, false, &core, sizeof(core), &drv,
			     sizeof(drv), 0, sizeof(resp.core.base), sizeof(resp.drv)),
		     EINVAL, "no DC type flag");
	drv.flags = MLX5_QP_FLAG_TYPE_DCI | MLX5_QP_FLAG_TYPE_DCT;
	cr_expect_eq(raw_cmd(IB_USER_VERBS_CMD_CREATE_QP, false, &core, sizeof(core), &drv,
			     sizeof(drv), 0, sizeof(resp.core.base), sizeof(resp.drv)),
		     EINVAL, "both DC type flags");
	drv.flags = MLX5_QP_FLAG_TYPE_DCI | MLX5_QP_FLAG_DCI_STREAM;
	cr_expect_eq(raw_cmd(IB_USER_VERBS_CMD_CREATE_QP, false, &core, sizeof(core), &drv,
			     sizeof(drv), 0, sizeof(resp.core.base), sizeof(resp.drv)),
		     EINVAL, "DCI streams");

	memset(&ex, 0, sizeof(ex));
	ex.pd_handle = dev.pd->handle;
	ex.send_cq_handle = ex.recv_cq_handle = scq->handle;
	ex.srq_handle = srq->handle;
	ex.is_srq = 1;
	ex.qp_type = IBV_QPT_DRIVER;
	ex.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	memset(&drv, 0, sizeof(drv));
	drv.flags = MLX5_QP_FLAG_TYPE_DCT;
	drv.access_key = KEY;
	cr_expect_eq(raw_cmd(IB_USER_VERBS_EX_CMD_CREATE_QP, true, &ex, sizeof(ex), &drv,
			     sizeof(drv), (uintptr_t)&resp, sizeof(resp.core), sizeof(resp.drv)),
		     EINVAL, "core create flags on a DCT");

	dct = dc_create(dev.ctx, &c);
	cr_assert(dct);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	cr_assert_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						    IBV_QP_ACCESS_FLAGS),
		     0);
	{
		struct ib_uverbs_modify_qp m;
		struct mlx5_ib_modify_qp dm;

		memset(&m, 0, sizeof(m));
		memset(&dm, 0, sizeof(dm));
		m.qp_handle = dct->handle;
		m.attr_mask = IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU;
		m.qp_state = IBV_QPS_RTR;
		m.path_mtu = IBV_MTU_4096;
		m.min_rnr_timer = 1;
		m.dest.port_num = 1;
		m.dest.dlid = dev.lid;
		cr_expect_eq(raw_cmd(IB_USER_VERBS_CMD_MODIFY_QP, false, &m, sizeof(m), &dm,
				     sizeof(dm), 0, 0, 0),
			     EINVAL, "legacy MODIFY_QP to RTR: nowhere to put the DCT number");
	}
	cr_expect_eq(dct->qp_num, 0);
	cr_expect_eq(dct_up_rtr(dct), 0);
	cr_expect_neq(dct->qp_num, 0);
	cr_expect_eq(ibv_destroy_qp(dct), 0);
	cr_expect_eq(ibv_destroy_srq(srq), 0);
}

/* DCI streams need a capability a ConnectX-5 does not have: libmlx5 refuses them against
 * the zero dci_streams_caps the device reports. */
Test(sim_dc, no_dci_streams)
{
	struct mlx5dv_context dc = { .comp_mask = MLX5DV_CONTEXT_MASK_DCI_STREAMS };
	struct ibv_qp_init_attr_ex a = { .qp_type = IBV_QPT_DRIVER, .pd = dev.pd, .send_cq = scq,
					 .recv_cq = scq, .comp_mask = IBV_QP_INIT_ATTR_PD,
					 .cap = { .max_send_wr = 8, .max_send_sge = 1 } };
	struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC |
						       MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS };

	cr_assert_eq(mlx5dv_query_device(dev.ctx, &dc), 0);
	cr_expect_eq(dc.dci_streams_caps.max_log_num_concurent, 0);
	cr_expect_eq(dc.dci_streams_caps.max_log_num_errored, 0);
	dv.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
	dv.dc_init_attr.dci_streams.log_num_concurent = 1;
	errno = 0;
	cr_expect_null(mlx5dv_create_qp(dev.ctx, &a, &dv));
	cr_expect_eq(errno, EINVAL, "%s", strerror(errno));
}

/* The DCT has no number until RTR; QUERY_QP answers only there, with its own mask. */
Test(sim_dc, dct_number_from_rtr)
{
	struct dc_cfg c = { .dct = true, .pd = dev.pd, .cq = scq, .key = KEY };
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;
	struct ibv_qp *qp, *dci_qp;

	c.srq = make_srq();
	qp = dc_create(dev.ctx, &c);
	cr_assert(qp, "%s", strerror(errno));
	cr_expect_eq(qp->qp_num, 0, "a DCT has no number before RTR");
	cr_expect_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &i), EINVAL);
	cr_assert_eq(dct_up(qp, IBV_ACCESS_REMOTE_WRITE, dev.lid), 0);
	cr_expect_neq(qp->qp_num, 0, "the modify response carries the DCT number");
	dci_qp = dci(7);
	cr_expect_neq(qp->qp_num, dci_qp->qp_num);
	memset(&a, 0, sizeof(a));
	cr_expect_eq(ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT |
					      IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MTU,
				  &i),
		     0);
	cr_expect_eq(a.qp_state, IBV_QPS_RTR);
	cr_expect_eq(a.qp_access_flags, IBV_ACCESS_REMOTE_WRITE);
	cr_expect_eq(a.port_num, 1);
	cr_expect_eq(a.min_rnr_timer, 1);
	cr_expect_eq(a.path_mtu, IBV_MTU_4096);
	cr_expect_eq(ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_CAP, &i), EINVAL);
	cr_expect_eq(ibv_destroy_qp(dci_qp), 0);
	cr_expect_eq(ibv_destroy_qp(qp), 0);
	cr_expect_eq(ibv_destroy_srq(c.srq), 0);
}

/* Each transition takes exactly the kernel's masks; a DCT never leaves RTR. */
Test(sim_dc, modify_masks)
{
	struct dc_cfg c = { .dct = true, .pd = dev.pd, .cq = scq, .key = KEY };
	struct ibv_qp_attr a;
	struct ibv_qp *dct, *dci_qp;
	struct ibv_srq *srq = make_srq();

	c.srq = srq;
	dct = dc_create(dev.ctx, &c);
	cr_assert(dct);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	cr_expect_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), EINVAL,
		     "DCT INIT without access flags");
	cr_expect_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						    IBV_QP_ACCESS_FLAGS | IBV_QP_QKEY),
		     EINVAL, "DCT INIT with a Q_Key");
	cr_assert_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						    IBV_QP_ACCESS_FLAGS),
		     0);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.ah_attr.port_num = 1;
	a.ah_attr.dlid = dev.lid;
	cr_expect_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU), EINVAL,
		     "DCT RTR without min_rnr_timer");
	cr_expect_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						    IBV_QP_MIN_RNR_TIMER | IBV_QP_DEST_QPN),
		     EINVAL, "DCT RTR with a destination QPN");
	cr_expect_eq(dct->qp_num, 0);
	cr_assert_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						    IBV_QP_MIN_RNR_TIMER),
		     0);
	a.qp_state = IBV_QPS_RTS;
	cr_expect_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE), EINVAL, "DCT to RTS");
	a.qp_state = IBV_QPS_ERR;
	cr_expect_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE), EINVAL, "DCT to ERR");

	c.dct = false;
	c.srq = NULL;
	dci_qp = dc_create(dev.ctx, &c);
	cr_assert(dci_qp);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	cr_expect_eq(ibv_modify_qp(dci_qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						       IBV_QP_ACCESS_FLAGS),
		     EINVAL, "DCI INIT with access flags");
	cr_assert_eq(ibv_modify_qp(dci_qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), 0);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = 5;
	cr_expect_eq(ibv_modify_qp(dci_qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN),
		     EINVAL, "DCI RTR with a destination QPN");
	a.ah_attr.port_num = 1;
	a.ah_attr.dlid = dev.lid;
	cr_assert_eq(ibv_modify_qp(dci_qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_AV), 0,
		     "DCI RTR with a path, as UCX does");
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 1;
	a.retry_cnt = 2;
	a.rnr_retry = 2;
	a.max_rd_atomic = 1;
	cr_expect_eq(ibv_modify_qp(dci_qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RNR_RETRY |
						       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
		     EINVAL, "DCI RTS without retry_cnt");
	cr_assert_eq(ibv_modify_qp(dci_qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
						       IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
						       IBV_QP_MAX_QP_RD_ATOMIC),
		     0);
	/* ERR -> RESET -> RTS again: UCX's recovery of a DCI. */
	a.qp_state = IBV_QPS_ERR;
	cr_expect_eq(ibv_modify_qp(dci_qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RESET;
	cr_expect_eq(ibv_modify_qp(dci_qp, &a, IBV_QP_STATE | IBV_QP_PORT), EINVAL,
		     "to RESET takes the state alone");
	cr_expect_eq(ibv_modify_qp(dci_qp, &a, IBV_QP_STATE), 0);
	cr_expect_eq(dci_up(dci_qp, 2), 0);
	cr_expect_eq(ibv_destroy_qp(dci_qp), 0);
	cr_expect_eq(ibv_destroy_qp(dct), 0);
	cr_expect_eq(ibv_destroy_srq(srq), 0);
}

/* One DCI, three DCTs, each WR to another DCT: writes land, sends arrive in order with
 * completions that name the DCT (qp_num) and the DCI (src_qp), and the DCI's completions
 * come in posting order. */
Test(sim_dc, one_dci_to_several_dcts)
{
	struct dct_side d[NDCT];
	struct ibv_qp *q = dci(7);
	struct ibv_wc wc;
	uint8_t *src = mem, *dst = mem + 8192, *rx = mem + 16384;
	int rounds = 4;

	for (int k = 0; k < NDCT; k++) {
		dct_side_up(&d[k], KEY + (uint64_t)k, IBV_ACCESS_REMOTE_WRITE);
		for (int r = 0; r < rounds; r++)
			simt_post_srq_recv(d[k].srq, (uint64_t)(k * 100 + r),
					   rx + (k * rounds + r) * 64, 64, mr->lkey);
		for (int j = 0; j < k; j++)
			cr_expect_neq(d[j].dest.dctn, d[k].dest.dctn);
	}
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < NDCT; k++) {
			uint64_t id = (uint64_t)(r * NDCT + k) * 2;
			uint8_t *s = src + (r * NDCT + k) * 32;

			memset(s, 'a' + r * NDCT + k, 32);
			cr_assert_eq(dc_post(q, &d[k].dest, IBV_WR_RDMA_WRITE, id, mr->lkey, s, 32,
					     (uintptr_t)(dst + (r * NDCT + k) * 32), mr->rkey),
				     0);
			cr_assert_eq(dc_post(q, &d[k].dest, IBV_WR_SEND_WITH_IMM, id + 1, mr->lkey,
					     s, 20, 0, 0),
				     0);
		}
	}
	for (uint64_t id = 0; id < (uint64_t)rounds * NDCT * 2; id++)
		expect_wc(scq, id, IBV_WC_SUCCESS, &wc);
	for (int k = 0; k < NDCT; k++) {
		for (int r = 0; r < rounds; r++) {
			uint8_t want[32];

			memset(want, 'a' + r * NDCT + k, 32);
			expect_wc(d[k].cq, (uint64_t)(k * 100 + r), IBV_WC_SUCCESS, &wc);
			cr_expect_eq(wc.opcode, IBV_WC_RECV);
			cr_expect_eq(wc.byte_len, 20);
			cr_expect_eq(wc.qp_num, d[k].dest.dctn, "the receive names its DCT");
			cr_expect_eq(wc.src_qp, q->qp_num, "and the DCI it came from");
			cr_expect(wc.wc_flags & IBV_WC_WITH_IMM);
			cr_expect_eq(be32toh(wc.imm_data), (uint32_t)((r * NDCT + k) * 2 + 1));
			cr_expect_arr_eq(rx + (k * rounds + r) * 64, want, 20);
			cr_expect_arr_eq(dst + (r * NDCT + k) * 32, want, 32);
		}
	}
	cr_expect_eq(ibv_destroy_qp(q), 0);
	for (int k = 0; k < NDCT; k++)
		dct_side_down(&d[k]);
}

/* A wrong DC key or an absent DCT draws no answer: the DCI retries retry_cnt times and
 * fails with retry-exceeded, goes to error and flushes what follows. The DCT is not
 * harmed: another DCI with the right key still gets through. */
Test(sim_dc, wrong_key_and_absent_dct)
{
	struct dct_side d;
	struct dc_dest bad;
	struct ibv_qp *q = dci(7), *q2;
	struct ibv_wc wc;

	dct_side_up(&d, KEY, IBV_ACCESS_REMOTE_WRITE);
	simt_post_srq_recv(d.srq, 1, mem + 4096, 64, mr->lkey);
	bad = d.dest;
	bad.key = KEY ^ 1;
	memcpy(mem, "dc", 2);
	cr_assert_eq(dc_post(q, &bad, IBV_WR_SEND, 10, mr->lkey, mem, 2, 0, 0), 0);
	cr_assert_eq(dc_post(q, &d.dest, IBV_WR_SEND, 11, mr->lkey, mem, 2, 0, 0), 0);
	expect_wc(scq, 10, IBV_WC_RETRY_EXC_ERR, &wc);
	expect_wc(scq, 11, IBV_WC_WR_FLUSH_ERR, &wc);
	cr_expect_eq(qp_state(q), IBV_QPS_ERR);
	simt_expect_empty(d.cq);

	q2 = dci(7);
	bad.dctn = d.dest.dctn + 0x1000; /* nobody has that number */
	bad.key = KEY;
	cr_assert_eq(dc_post(q2, &bad, IBV_WR_RDMA_WRITE, 20, mr->lkey, mem, 2,
			     (uintptr_t)mem + 100, mr->rkey),
		     0);
	expect_wc(scq, 20, IBV_WC_RETRY_EXC_ERR, &wc);
	cr_expect_eq(qp_state(q2), IBV_QPS_ERR);
	/* Reset and reconnect, then the right key. */
	cr_expect_eq(ibv_modify_qp(q2, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
				   IBV_QP_STATE),
		     0);
	cr_assert_eq(dci_up(q2, 7), 0);
	cr_assert_eq(dc_post(q2, &d.dest, IBV_WR_SEND, 21, mr->lkey, mem, 2, 0, 0), 0);
	expect_wc(scq, 21, IBV_WC_SUCCESS, &wc);
	expect_wc(d.cq, 1, IBV_WC_SUCCESS, &wc);
	cr_expect_eq(wc.qp_num, d.dest.dctn);
	cr_expect_eq(wc.src_qp, q2->qp_num);
	cr_expect_eq(ibv_destroy_qp(q), 0);
	cr_expect_eq(ibv_destroy_qp(q2), 0);
	dct_side_down(&d);
}

/* The DCT's access flags govern like an RC responder's: a WRITE to a DCT without remote
 * write is a remote access error; a send to an empty SRQ is RNR until the retries run
 * out. Neither moves the DCT out of RTR. */
Test(sim_dc, access_and_rnr)
{
	struct dct_side d;
	struct ibv_qp *q = dci(7), *q2 = dci(1);
	struct ibv_wc wc;

	dct_side_up(&d, KEY, IBV_ACCESS_REMOTE_READ);
	cr_assert_eq(dc_post(q, &d.dest, IBV_WR_RDMA_WRITE, 30, mr->lkey, mem, 8,
			     (uintptr_t)mem + 200, mr->rkey),
		     0);
	expect_wc(scq, 30, IBV_WC_REM_ACCESS_ERR, &wc);
	cr_assert_eq(dc_post(q2, &d.dest, IBV_WR_SEND, 31, mr->lkey, mem, 8, 0, 0), 0);
	expect_wc(scq, 31, IBV_WC_RNR_RETRY_EXC_ERR, &wc);
	cr_expect_eq(qp_state(d.qp), IBV_QPS_RTR);
	/* READ is allowed: it comes back. */
	memcpy(mem + 300, "readme", 6);
	cr_assert_eq(ibv_modify_qp(q, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
				   IBV_QP_STATE),
		     0);
	cr_assert_eq(dci_up(q, 7), 0);
	cr_assert_eq(dc_post(q, &d.dest, IBV_WR_RDMA_READ, 32, mr->lkey, mem + 400, 6,
			     (uintptr_t)mem + 300, mr->rkey),
		     0);
	expect_wc(scq, 32, IBV_WC_SUCCESS, &wc);
	cr_expect_arr_eq(mem + 400, "readme", 6);
	cr_expect_eq(ibv_destroy_qp(q), 0);
	cr_expect_eq(ibv_destroy_qp(q2), 0);
	dct_side_down(&d);
}

/* A DCI's atomics: compare-and-swap and fetch-and-add on a DCT with remote atomics, the
 * old value back in the DCI's buffer. */
Test(sim_dc, atomics)
{
	struct dct_side d;
	struct ibv_qp *q = dci(7);
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(q);
	struct ibv_wc wc;
	uint64_t *target = (uint64_t *)(mem + 512), *old = (uint64_t *)(mem + 520);

	dct_side_up(&d, KEY, IBV_ACCESS_REMOTE_ATOMIC);
	*target = 40;
	ibv_wr_start(x);
	x->wr_id = 40;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(x, mr->rkey, (uintptr_t)target, 2);
	mlx5dv_wr_set_dc_addr(mlx5dv_qp_ex_from_ibv_qp_ex(x), d.dest.ah, d.dest.dctn, KEY);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)old, 8);
	x->wr_id = 41;
	ibv_wr_atomic_cmp_swp(x, mr->rkey, (uintptr_t)target, 42, 7);
	mlx5dv_wr_set_dc_addr(mlx5dv_qp_ex_from_ibv_qp_ex(x), d.dest.ah, d.dest.dctn, KEY);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)old + 8, 8);
	cr_assert_eq(ibv_wr_complete(x), 0);
	expect_wc(scq, 40, IBV_WC_SUCCESS, &wc);
	expect_wc(scq, 41, IBV_WC_SUCCESS, &wc);
	cr_expect_eq(old[0], 40);
	cr_expect_eq(old[1], 42);
	cr_expect_eq(*target, 7);
	cr_expect_eq(ibv_destroy_qp(q), 0);
	dct_side_down(&d);
}

/* A DCI WQE written by hand, as UCX writes them: the AV's reserved word and, without a
 * GRH, its MAC, traffic class, hop limit and GID are left holding garbage. The device
 * reads only the key, the DCT number, SL and LID: the send arrives. */
Test(sim_dc, stale_av_bytes_ignored)
{
	struct dct_side d;
	struct ibv_qp *q = dci(7);
	struct mlx5dv_qp dq;
	struct mlx5dv_obj o = { .qp = { .in = q, .out = &dq } };
	struct ibv_wc wc;
	uint8_t *w;
	uint32_t word;
	uint64_t key;

	dct_side_up(&d, KEY, IBV_ACCESS_REMOTE_WRITE);
	simt_post_srq_recv(d.srq, 7, mem + 1024, 64, mr->lkey);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	w = (uint8_t *)dq.sq.buf;
	memset(w, 0xa5, 128); /* everything not written below is garbage */
	word = htobe32(0x0a); /* index 0, SEND */
	memcpy(w, &word, 4);
	word = htobe32(q->qp_num << 8 | 5); /* ctrl + 48-byte AV + one data segment */
	memcpy(w + 4, &word, 4);
	memset(w + 8, 0, 3);
	w[11] = 0x08; /* CQ update */
	key = htobe64(KEY);
	memcpy(w + 16, &key, 8);
	word = htobe32(d.dest.dctn | 0x80000000u); /* extended AV */
	memcpy(w + 24, &word, 4);
	w[28] = 0; /* rate, SL */
	w[29] = 0;
	word = htobe32(dev.lid); /* fl_mlid 0, rlid */
	memcpy(w + 28, &word, 4);
	word = 0; /* no GRH: the GID index and flow label are zero, the rest stays stale */
	memcpy(w + 44, &word, 4);
	memcpy(mem, "stale bytes", 11);
	word = htobe32(11);
	memcpy(w + 64, &word, 4);
	word = htobe32(mr->lkey);
	memcpy(w + 68, &word, 4);
	key = htobe64((uintptr_t)mem);
	memcpy(w + 72, &key, 8);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	dq.dbrec[MLX5_SND_DBR] = htobe32(2); /* two WQEBBs */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (dq.bf.size)
		memcpy(dq.bf.reg, w, 8);
	else
		*(volatile uint64_t *)dq.bf.reg = *(uint64_t *)w;
	/* (libmlx5 did not post it: the wr_id it reports means nothing) */
	cr_assert_eq(dc_wait(scq, &wc, 5000), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	expect_wc(d.cq, 7, IBV_WC_SUCCESS, &wc);
	cr_expect_eq(wc.byte_len, 11);
	cr_expect_arr_eq(mem + 1024, "stale bytes", 11);
	cr_expect_eq(ibv_destroy_qp(q), 0);
	dct_side_down(&d);
}

/* Run as a child with FVSIM_NO_DC=1 (SIM_DC_PROBE set): both kinds of DC QP are refused
 * with EOPNOTSUPP, the answer of a kernel on an HCA without DC. Exit 0 if so. */
static int probe_no_dc(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = pd ? ibv_create_srq(pd, &sa) : NULL;
	struct dc_cfg c = { .dct = true, .pd = pd, .cq = cq, .srq = srq, .key = KEY };
	int dct_err = -1, dci_err = -1;

	if (srq && cq) {
		errno = 0;
		dct_err = dc_create(ctx, &c) ? 0 : errno;
		c.dct = false;
		c.srq = NULL;
		errno = 0;
		dci_err = dc_create(ctx, &c) ? 0 : errno;
		printf("DCT: %s\nDCI: %s\n", strerror(dct_err), strerror(dci_err));
		fflush(stdout);
	}
	/* (A QP that was made anyway stays: the exit code reports it.) */
	if (srq)
		ibv_destroy_srq(srq);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	if (list)
		ibv_free_device_list(list);
	return dct_err == EOPNOTSUPP && dci_err == EOPNOTSUPP ? 0 : 1;
}

__attribute__((constructor)) static void maybe_probe(void)
{
	if (getenv("SIM_DC_PROBE"))
		exit(probe_no_dc());
}

Test(sim_dc, off_knob_refuses_dc)
{
	char out[64], self[4096];
	char *args[] = { self, NULL };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	cr_assert_gt(n, 0);
	self[n] = 0;
	snprintf(out, sizeof(out), "/tmp/fvsim-dc-%d.out", (int)getpid());
	setenv("SIM_DC_PROBE", "1", 1);
	setenv("FVSIM_NO_DC", "1", 1);
	cr_expect_eq(simt_finish_within(simt_spawn(args, out), 30), 0, "DC not refused with "
								       "EOPNOTSUPP");
	unsetenv("SIM_DC_PROBE");
	unsetenv("FVSIM_NO_DC");
	cr_expect_eq(simt_count_lines(out, "Operation not supported"), 2);
	unlink(out);
}
