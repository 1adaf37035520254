/* Control path on the software device through unmodified libibverbs + libmlx5: device
 * discovery, context, PD, MR, CQ, QP creation, the QP state machine, QUERY_QP, direct
 * verbs objects, and the errors the kernel would return for bad requests. */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

TestSuite(sim_objects, .timeout = 60);

Test(sim_objects, device_is_mlx5)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_port_attr pa;
	struct mlx5dv_context dv = { 0 };
	int n;

	list = ibv_get_device_list(&n);
	cr_assert(list && n == 1);
	cr_assert_str_eq(ibv_get_device_name(list[0]), "mlx5_0");
	cr_assert(mlx5dv_is_supported(list[0]));
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	cr_assert(ctx);
	cr_assert_eq(ibv_query_device(ctx, &attr), 0);
	cr_expect_eq(attr.vendor_id, 0x02c9);
	cr_expect_eq(attr.vendor_part_id, 4119);
	cr_expect_eq(attr.phys_port_cnt, 1);
	cr_expect_eq(attr.atomic_cap, IBV_ATOMIC_HCA);
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	cr_expect_eq(pa.state, IBV_PORT_ACTIVE);
	cr_expect_eq(pa.link_layer, IBV_LINK_LAYER_INFINIBAND);
	cr_expect_eq(pa.lid, 1);
	cr_expect_eq(ibv_query_port(ctx, 2, &pa), EINVAL);
	cr_assert_eq(mlx5dv_query_device(ctx, &dv), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

Test(sim_objects, memory_regions)
{
	struct simt_dev d;
	static char buf[8192];
	struct ibv_mr *a, *b;

	simt_open(&d, 0);
	a = simt_mr(&d, buf, sizeof(buf), SIMT_ACCESS_ALL);
	b = simt_mr(&d, buf + 100, 10, IBV_ACCESS_LOCAL_WRITE);
	cr_expect_eq(a->lkey, a->rkey);
	cr_expect_neq(a->lkey, b->lkey);
	cr_expect_neq(a->lkey, 0x100u, "the receive terminator key must never be valid");
	/* Remote write without local write is refused, as by the kernel. */
	errno = 0;
	cr_expect_null(ibv_reg_mr(d.pd, buf, 64, IBV_ACCESS_REMOTE_WRITE));
	cr_expect_eq(errno, EINVAL);
	/* Unmapped memory cannot be pinned (0x1000 is below mmap_min_addr: never mapped). */
	errno = 0;
	cr_expect_null(ibv_reg_mr(d.pd, (void *)(uintptr_t)0x1000, 4096, IBV_ACCESS_LOCAL_WRITE));
	cr_expect_eq(errno, EFAULT);
	/* A PD with registrations cannot go away. */
	cr_expect_eq(ibv_dealloc_pd(d.pd), EBUSY);
	cr_assert_eq(ibv_dereg_mr(a), 0);
	cr_assert_eq(ibv_dereg_mr(b), 0);
	simt_close(&d);
}

Test(sim_objects, cq_and_qp_direct_verbs)
{
	struct simt_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct mlx5dv_obj obj;
	struct mlx5dv_cq dcq;
	struct mlx5dv_qp dqp;
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .max_send_wr = 256, .max_recv_wr = 16 };

	simt_open(&d, 0);
	cq = simt_cq(&d, 100);
	cr_expect_eq(cq->cqe, 127, "libmlx5 rounds to a power of two minus one");
	cfg.scq = cq;
	qp = simt_qp(&d, &cfg);
	memset(&obj, 0, sizeof(obj));
	obj.cq.in = cq;
	obj.cq.out = &dcq;
	obj.qp.in = qp;
	obj.qp.out = &dqp;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ | MLX5DV_OBJ_QP), 0);
	cr_expect_eq(dcq.cqe_cnt, 128);
	cr_expect_eq(dcq.cqe_size, 64);
	cr_expect(dcq.dbrec && dcq.buf);
	cr_expect_eq(dqp.sq.stride, 64);
	cr_expect(dqp.sq.wqe_cnt >= 256 && !(dqp.sq.wqe_cnt & (dqp.sq.wqe_cnt - 1)));
	cr_expect_eq(dqp.rq.wqe_cnt, 16);
	cr_expect_eq((char *)dqp.sq.buf - (char *)dqp.rq.buf, 16 * dqp.rq.stride,
		     "the SQ follows the RQ in one buffer");
	cr_expect_eq(dqp.bf.size, 256, "a BlueFlame register was assigned");
	cr_expect(dqp.dbrec && dqp.bf.reg);
	cr_assert_eq(ibv_destroy_cq(cq), EBUSY, "a CQ in use cannot go away");
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	simt_close(&d);
}

static void query(struct ibv_qp *qp, struct ibv_qp_attr *a, struct ibv_qp_init_attr *ia)
{
	cr_assert_eq(ibv_query_qp(qp, a, IBV_QP_STATE | IBV_QP_CAP, ia), 0);
}

Test(sim_objects, query_qp_reports_caps_and_sig_all)
{
	struct simt_dev d;
	struct ibv_qp *all, *sel;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .max_inline = 64, .sq_sig_all = 1 };

	simt_open(&d, 0);
	cfg.scq = simt_cq(&d, 16);
	all = simt_qp(&d, &cfg);
	cfg.sq_sig_all = 0;
	sel = simt_qp(&d, &cfg);
	query(all, &a, &ia);
	cr_expect_eq(ia.sq_sig_all, 1);
	cr_expect_eq(a.qp_state, IBV_QPS_RESET);
	cr_expect(a.cap.max_inline_data >= 64, "granted inline %u", a.cap.max_inline_data);
	cr_expect(a.cap.max_send_wr >= 64);
	query(sel, &a, &ia);
	cr_expect_eq(ia.sq_sig_all, 0);
	ibv_destroy_qp(all);
	ibv_destroy_qp(sel);
	ibv_destroy_cq(cfg.scq);
	simt_close(&d);
}

/*
 * ibv_query_qp's receive caps come from the device (libmlx5 reports only the send caps
 * itself): they must be the RQ libmlx5 built, as ibv_create_qp granted them, not the
 * request. The sim once echoed the request: 3 SGEs for a 4-segment stride, and fastverbs,
 * taking the QP over, then refused 4-SGE receives libmlx5 accepts.
 */
Test(sim_objects, query_qp_reports_the_granted_rq)
{
	struct simt_dev d;
	struct ibv_qp_init_attr ca = { .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 8, .max_send_sge = 1, .max_recv_wr = 20,
						.max_recv_sge = 3 } };
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	simt_open(&d, 0);
	ca.send_cq = ca.recv_cq = simt_cq(&d, 16);
	qp = ibv_create_qp(d.pd, &ca);
	cr_assert(qp);
	cr_assert_eq(ca.cap.max_recv_sge, 4, "libmlx5 rounds the stride up: %u", ca.cap.max_recv_sge);
	cr_assert_eq(ca.cap.max_recv_wr, 32, "and the WQE count: %u", ca.cap.max_recv_wr);
	query(qp, &a, &ia);
	cr_expect_eq(a.cap.max_recv_sge, ca.cap.max_recv_sge);
	cr_expect_eq(a.cap.max_recv_wr, ca.cap.max_recv_wr);
	cr_expect_eq(ia.cap.max_recv_sge, ca.cap.max_recv_sge);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(ca.send_cq);
	simt_close(&d);
}

Test(sim_objects, rc_state_machine)
{
	struct simt_dev d;
	struct ibv_qp *qp;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC };

	simt_open(&d, 0);
	cfg.scq = simt_cq(&d, 16);
	qp = simt_qp(&d, &cfg);
	/* RESET -> RTS skips states. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	cr_expect_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	/* RESET -> INIT without the access flags an RC QP requires. */
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	cr_expect_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), EINVAL);
	/* A port that does not exist. */
	a.port_num = 3;
	cr_expect_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						   IBV_QP_ACCESS_FLAGS), EINVAL);
	query(qp, &a, &ia);
	cr_expect_eq(a.qp_state, IBV_QPS_RESET, "a refused modify changes nothing");
	simt_connect(qp, d.lid, qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	query(qp, &a, &ia);
	cr_expect_eq(a.qp_state, IBV_QPS_RTS);
	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_DEST_QPN | IBV_QP_AV | IBV_QP_RNR_RETRY, &ia), 0);
	cr_expect_eq(a.dest_qp_num, qp->qp_num);
	cr_expect_eq(a.ah_attr.dlid, d.lid);
	cr_expect_eq(a.rnr_retry, 7);
	/* Any state -> ERR -> RESET, then the QP can be brought up again. */
	a.qp_state = IBV_QPS_ERR;
	cr_expect_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RESET;
	cr_expect_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	simt_connect(qp, d.lid, qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cfg.scq);
	simt_close(&d);
}

Test(sim_objects, ud_srq_and_xrc_objects)
{
	struct simt_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *ud;
	struct ibv_srq *srq, *xsrq;
	struct ibv_xrcd *xrcd;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 32, .max_sge = 2 } };
	struct ibv_qp *ini, *tgt;
	struct setup_qp_cfg cfg = { .type = IBV_QPT_UD };
	uint32_t srqn;

	simt_open(&d, 0);
	cq = simt_cq(&d, 64);
	cfg.scq = cq;
	ud = simt_qp(&d, &cfg);
	simt_ud_ready(ud, 0x1234);
	srq = ibv_create_srq(d.pd, &sa);
	cr_assert(srq, "ibv_create_srq: %s", strerror(errno));
	cr_expect(sa.attr.max_wr >= 32);
	xrcd = simt_xrcd(&d);
	xsrq = simt_xrc_srq(&d, xrcd, cq, 16, 1);
	cr_assert_eq(ibv_get_srq_num(xsrq, &srqn), 0);
	cr_expect_neq(srqn, 0);
	simt_xrc_pair(&d, xrcd, cq, 16, 1, &ini, &tgt);
	cr_expect_eq(ibv_close_xrcd(xrcd), EBUSY, "the XRC domain is still used");
	cr_assert_eq(ibv_destroy_qp(ini), 0);
	cr_assert_eq(ibv_destroy_qp(tgt), 0);
	cr_assert_eq(ibv_destroy_srq(xsrq), 0);
	cr_assert_eq(ibv_close_xrcd(xrcd), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_destroy_qp(ud), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	simt_close(&d);
}

/* FVSIM_NO_BLUEFLAME hands out the doorbell-only register, and the QP still works. */
Test(sim_objects, doorbell_only_qps)
{
	struct simt_dev d;
	static uint8_t buf[256];
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct mlx5dv_obj obj;
	struct mlx5dv_qp dqp;
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC };
	struct ibv_wc wc;

	setenv("FVSIM_NO_BLUEFLAME", "1", 1); /* read when the device is first opened */
	simt_open(&d, 0);
	mr = simt_mr(&d, buf, sizeof(buf), SIMT_ACCESS_ALL);
	cfg.scq = simt_cq(&d, 16);
	qp = simt_qp(&d, &cfg);
	memset(&obj, 0, sizeof(obj));
	obj.qp.in = qp;
	obj.qp.out = &dqp;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), 0);
	cr_expect_eq(dqp.bf.size, 0);
	simt_connect(qp, d.lid, qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	simt_post_send(qp, 1, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey, (uintptr_t)buf + 64, mr->rkey,
		       IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cfg.scq, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cfg.scq);
	ibv_dereg_mr(mr);
	simt_close(&d);
}
