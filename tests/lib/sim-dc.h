/* Helpers for the DC tests of the software device (tests/device/dc.c, tests/fabric/xdc.c): DCIs
 * and DCTs made and brought up with libmlx5's own mlx5dv_create_qp, and DCI work requests
 * posted with ibv_wr_* and mlx5dv_wr_set_dc_addr. Plain verbs, no Criterion asserts, so a
 * forked peer can use them too; each returns 0 or an errno. */
#ifndef SIM_DC_H
#define SIM_DC_H

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "../../examples/setup.h"
#include "../../sim/fvsim.h"

#define DC_OPS                                                                              \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |    \
	 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |                    \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

/* What mlx5dv_create_qp is given; the tests vary it to provoke refusals. */
struct dc_cfg {
	bool dct;
	struct ibv_pd *pd;
	struct ibv_cq *cq; /* send and receive CQ */
	struct ibv_srq *srq;
	uint64_t key; /* DCT access key */
	uint32_t max_send_wr, max_recv_wr, max_recv_sge;
};

/* A DCI or DCT: the QP, or NULL with errno set. */
static inline struct ibv_qp *dc_create(struct ibv_context *ctx, const struct dc_cfg *c)
{
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv;

	memset(&a, 0, sizeof(a));
	memset(&dv, 0, sizeof(dv));
	a.qp_type = IBV_QPT_DRIVER;
	a.pd = c->pd;
	a.send_cq = a.recv_cq = c->cq;
	a.srq = c->srq;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.cap.max_recv_wr = c->max_recv_wr;
	a.cap.max_recv_sge = c->max_recv_sge;
	if (!c->dct) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = DC_OPS;
		a.cap.max_send_wr = c->max_send_wr ? c->max_send_wr : 32;
		a.cap.max_send_sge = 1;
	}
	dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	dv.dc_init_attr.dc_type = c->dct ? MLX5DV_DCTYPE_DCT : MLX5DV_DCTYPE_DCI;
	dv.dc_init_attr.dct_access_key = c->key;
	return mlx5dv_create_qp(ctx, &a, &dv);
}

/* A DCT to RTR with access, on port 1 at LID lid, MTU 4096 and min_rnr_timer 1 (examples/setup.h). */
static inline int dct_up(struct ibv_qp *qp, int access, uint16_t lid)
{
	const struct setup_conn c = { .port_num = 1, .access = access, .mtu = IBV_MTU_4096, .min_rnr_timer = 1 };
	struct ibv_ah_attr ah = { .dlid = lid };
	const char *what;

	return setup_dct_ready(qp, &ah, &c, &what);
}

/* A DCI to RTS (from RESET) with short transport timeouts: retry_cnt 2, rnr_retry. */
static inline int dci_up(struct ibv_qp *qp, int rnr_retry)
{
	const struct setup_conn c = {
		.port_num = 1, .mtu = IBV_MTU_4096, .rd_atomic = 1, .timeout = 1, .retry_cnt = 2,
		.rnr_retry = (uint8_t)rnr_retry,
	};
	const char *what;

	return setup_dci_ready(qp, &c, &what);
}

/* Where one DCI WR goes: the AH of the DCT's port, its number and key. */
struct dc_dest {
	struct ibv_ah *ah;
	uint32_t dctn;
	uint64_t key;
};

/* One signaled WR on the DCI, built as libmlx5's users do: opcode, then the DC address,
 * then the SGE (raddr/rkey for WRITE and READ; a send's imm is wr_id's low half). */
static inline int dc_post(struct ibv_qp *qp, const struct dc_dest *d, enum ibv_wr_opcode op,
			  uint64_t wr_id, uint32_t lkey, void *buf, uint32_t len, uint64_t raddr,
			  uint32_t rkey)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	struct mlx5dv_qp_ex *dv = mlx5dv_qp_ex_from_ibv_qp_ex(x);

	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
	switch (op) {
	case IBV_WR_SEND:
		ibv_wr_send(x);
		break;
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(x, htobe32((uint32_t)wr_id));
		break;
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(x, rkey, raddr);
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(x, rkey, raddr);
		break;
	default:
		ibv_wr_abort(x);
		return EINVAL;
	}
	mlx5dv_wr_set_dc_addr(dv, d->ah, d->dctn, d->key);
	ibv_wr_set_sge(x, lkey, (uintptr_t)buf, len);
	return ibv_wr_complete(x);
}

/* Polls cq for one completion, for at most about ms milliseconds: 1, or 0 if none came. */
static inline int dc_wait(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return 0;
		if (fvsim_present() && fvsim_step_mode())
			fvsim_step();
		else
			sched_yield();
	}
}

#endif
