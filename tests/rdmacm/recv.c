/*
 * fv_rdma_post_recv / _recvv against librdmacm's rdma_post_recv / _recvv (through libmlx5) on
 * twin ids, with an RQ and with an SRQ (id->srq). Each round makes the same seeded random
 * calls on both -- one buffer or a list, zero-length entries (RQ), too many entries (EINVAL
 * for both), more than the queue holds (ENOMEM for both) -- and compares return value,
 * errno, doorbell record and the whole receive buffer (libmlx5 zeroes it at creation). Then
 * senders fill some of the receives on both twins with zero-byte messages (one receive buffer
 * and MR serve both twins, so their WQEs are the same bytes) and the receive completions,
 * libmlx5's against fv_rdma's receive CQ, must match field for field (diff-util.h).
 */
#include <rdma/rdma_verbs.h>
#include <fastverbs/compat/rdmacm.h>

#include "diff-util.h"

#define RR_ROUNDS 3000
#define RR_CALLS  6
#define RR_WR     32
#define RR_SGE    3
#define RR_BUF    (1u << 16)
#define RR_LIST   16		/* room for the granted SGEs and three too many */

struct rr {
	struct simt_dev d;
	uint64_t seed;
	uint8_t *buf;
	struct ibv_mr *mr;
	struct ibv_cq *rcq[2], *txcq;
	struct ibv_srq *srq[2];
	struct ibv_qp *rx[2], *tx[2];
	struct rdma_cm_id id[2];
	struct fv_rdma r;
	uint8_t *rbuf[2];		/* the RQ or SRQ buffer */
	size_t rbytes;
	volatile __be32 *dbrec[2];	/* its doorbell record word */
	uint32_t max_sge;		/* granted */
	uint32_t outstanding;		/* receives posted, not yet filled */
};

struct rr_stats { int calls, posted, einval, full, filled; };

static void rr_open(struct rr *e, int use_srq, uint64_t seed)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;

	memset(e, 0, sizeof(*e));
	e->seed = seed;
	fvsim_set_step_mode(1);
	simt_open(&e->d, 0);
	e->buf = aligned_alloc(4096, RR_BUF);
	memset(e->buf, 0x3c, RR_BUF);
	e->mr = simt_mr(&e->d, e->buf, RR_BUF, SIMT_ACCESS_ALL);
	e->txcq = simt_cq(&e->d, 4 * RR_WR);
	for (int s = LIB; s <= FV; s++) {
		struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .max_recv_wr = RR_WR, .max_recv_sge = RR_SGE };

		e->rcq[s] = simt_cq(&e->d, 4 * RR_WR);
		if (use_srq) {
			struct ibv_srq_init_attr sa = { .attr = { .max_wr = RR_WR, .max_sge = RR_SGE } };
			struct mlx5dv_srq dsrq;
			struct mlx5dv_obj o = { .srq = { .in = NULL, .out = &dsrq } };

			e->srq[s] = ibv_create_srq(e->d.pd, &sa);
			cr_assert(e->srq[s], "ibv_create_srq: %s", strerror(errno));
			o.srq.in = e->srq[s];
			cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_SRQ), 0);
			e->rbuf[s] = dsrq.buf;
			e->rbytes = (size_t)(dsrq.tail + 1) * dsrq.stride;
			e->dbrec[s] = dsrq.dbrec;
			e->max_sge = sa.attr.max_sge;
			cfg.srq = e->srq[s];
		}
		simt_qp_pair(&e->d, cfg, e->rcq[s], e->txcq, SIMT_ACCESS_ALL, 7, 7, &e->rx[s], &e->tx[s]);
		if (!use_srq) {
			struct mlx5dv_qp dqp;
			struct mlx5dv_obj o = { .qp = { .in = e->rx[s], .out = &dqp } };

			cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
			e->rbuf[s] = dqp.rq.buf;
			e->rbytes = (size_t)dqp.rq.wqe_cnt * dqp.rq.stride;
			e->dbrec[s] = &dqp.dbrec[MLX5_RCV_DBR];
			cr_assert_eq(ibv_query_qp(e->rx[s], &attr, IBV_QP_CAP, &init), 0);
			e->max_sge = init.cap.max_recv_sge;
		}
		e->id[s].verbs = e->d.ctx;
		e->id[s].pd = e->d.pd;
		e->id[s].qp = e->rx[s];
		e->id[s].srq = e->srq[s];
		e->id[s].send_cq = e->id[s].recv_cq = e->rcq[s];
	}
	cr_assert_eq(fv_rdma_init(&e->r, &e->id[FV]), 0, "fv_rdma_init: %s", strerror(errno));
	cr_assert_eq(e->r.has_srq, use_srq);
	cr_assert_leq(e->max_sge + 3, RR_LIST, "granted %u SGEs", e->max_sge);
	cr_assert(memcmp(e->rbuf[LIB], e->rbuf[FV], e->rbytes) == 0, "the twins' receive buffers start alike");
}

static void rr_close(struct rr *e)
{
	fv_rdma_cleanup(&e->r);
	for (int s = LIB; s <= FV; s++) {
		cr_assert_eq(ibv_destroy_qp(e->rx[s]), 0);
		cr_assert_eq(ibv_destroy_qp(e->tx[s]), 0);
		if (e->srq[s])
			cr_assert_eq(ibv_destroy_srq(e->srq[s]), 0);
		cr_assert_eq(ibv_destroy_cq(e->rcq[s]), 0);
	}
	cr_assert_eq(ibv_destroy_cq(e->txcq), 0);
	ibv_dereg_mr(e->mr);
	free(e->buf);
	simt_close(&e->d);
}

/* One random call on both twins; compares what each returned and the doorbell record. */
static void rr_call(struct rr *e, int use_srq, int round, struct rr_stats *st)
{
	uint32_t kind = (uint32_t)diff_rnd(&e->seed, 100);
	void *ctx = (void *)(uintptr_t)(0x2000 + diff_rnd(&e->seed, 1u << 20));
	struct ibv_sge sgl[RR_LIST];
	int rc[2], err[2], nsge = 0, vec = kind >= 40;
	uint8_t *addr = e->buf + diff_rnd(&e->seed, RR_BUF / 2);
	size_t len = 1 + diff_rnd(&e->seed, 512);

	if (vec) {
		nsge = (int)diff_rnd(&e->seed, e->max_sge + 1);
		if (kind >= 90)
			nsge = (int)e->max_sge + 1 + (int)diff_rnd(&e->seed, 3);	/* both: EINVAL */
		for (int k = 0; k < nsge; k++) {
			/* zero-length entries: both drop them on an RQ; on an SRQ libmlx5 writes them */
			uint32_t l = !use_srq && diff_rnd(&e->seed, 4) == 0 ? 0 : 1 + (uint32_t)diff_rnd(&e->seed, 256);

			sgl[k] = (struct ibv_sge){ (uintptr_t)e->buf + diff_rnd(&e->seed, RR_BUF / 2), l, e->mr->lkey };
		}
	}
	for (int s = LIB; s <= FV; s++) {
		errno = 0;
		if (s == LIB)
			rc[s] = vec ? rdma_post_recvv(&e->id[LIB], ctx, sgl, nsge)
				    : rdma_post_recv(&e->id[LIB], ctx, addr, len, e->mr);
		else
			rc[s] = vec ? fv_rdma_post_recvv(&e->r, ctx, sgl, nsge)
				    : fv_rdma_post_recv(&e->r, ctx, addr, len, e->mr);
		err[s] = errno;
	}
	st->calls++;
	cr_assert_eq(rc[FV], rc[LIB], "round %d: returned %d, librdmacm %d (errno %d / %d, nsge %d)", round, rc[FV],
		     rc[LIB], err[FV], err[LIB], vec ? nsge : 1);
	if (rc[LIB]) {
		cr_assert_eq(err[FV], err[LIB], "round %d: errno %d, librdmacm %d", round, err[FV], err[LIB]);
		st->einval += err[LIB] == EINVAL;
		st->full += err[LIB] == ENOMEM;
	} else {
		e->outstanding++;
		st->posted++;
	}
	cr_assert_eq(be32toh(*e->dbrec[FV]), be32toh(*e->dbrec[LIB]), "round %d: doorbell record %#x vs %#x", round,
		     be32toh(*e->dbrec[FV]), be32toh(*e->dbrec[LIB]));
}

static void rr_compare_buf(struct rr *e, int round)
{
	size_t i = 0;

	while (i < e->rbytes && e->rbuf[LIB][i] == e->rbuf[FV][i])
		i++;
	cr_assert_eq(i, e->rbytes, "round %d: receive WQEs differ at byte %zu\nlib %s\nfv  %s", round, i,
		     diff_hex(e->rbuf[LIB] + i / 64 * 64, 64), diff_hex(e->rbuf[FV] + i / 64 * 64, 64));
}

/* Fill m receives of each twin with zero-byte messages and compare the receive completions. */
static void rr_fill(struct rr *e, uint32_t m, int round, struct rr_stats *st)
{
	struct diff_qpns qps = { { { e->rx[LIB]->qp_num, e->rx[FV]->qp_num } }, 1 };
	struct diff_qpns srcs = { { { e->tx[LIB]->qp_num, e->tx[FV]->qp_num } }, 1 };
	struct ibv_wc wc[2 * RR_WR];
	struct diff_wcs w;

	for (uint32_t i = 0; i < m; i++)
		for (int s = LIB; s <= FV; s++)
			simt_post_send(e->tx[s], i, IBV_WR_SEND, e->buf, 0, e->mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(diff_poll_compare(e->rcq[LIB], &fv__rdma_rcq(&e->r)->cq, &w, &qps, &srcs, "recv", round), 0);
	cr_assert_eq(w.n[LIB], (int)m, "round %d: %d receive completions, want %u", round, w.n[LIB], m);
	/* the queue may hold more than RR_WR (the granted size): the send completions in chunks */
	for (int left = (int)(2 * m); left > 0;) {
		int k = left < (int)(sizeof(wc) / sizeof(wc[0])) ? left : (int)(sizeof(wc) / sizeof(wc[0]));

		cr_assert_eq(simt_poll(e->txcq, wc, k), k, "round %d: send completions", round);
		left -= k;
	}
	e->outstanding -= m;
	st->filled += (int)m;
}

static void rr_run(int use_srq, uint64_t seed)
{
	struct rr e;
	struct rr_stats st = { 0 };

	rr_open(&e, use_srq, seed);
	for (int round = 0; round < RR_ROUNDS; round++) {
		int n = 1 + (int)diff_rnd(&e.seed, RR_CALLS);

		for (int i = 0; i < n; i++)
			rr_call(&e, use_srq, round, &st);
		rr_compare_buf(&e, round);
		if (diff_rnd(&e.seed, 4))	/* mostly the receives pile up, until the queue is full */
			continue;
		rr_fill(&e, (uint32_t)diff_rnd(&e.seed, (uint64_t)e.outstanding + 1), round, &st);
		rr_compare_buf(&e, round);	/* an SRQ relinks its free list on completion */
	}
	cr_log_info("%s: %d calls, %d posted, %d EINVAL alike, %d ENOMEM (full) alike, %d filled",
		    use_srq ? "SRQ" : "RQ", st.calls, st.posted, st.einval, st.full, st.filled);
	cr_assert_gt(st.einval, 0);
	cr_assert_gt(st.full, 0);
	rr_close(&e);
}

TestSuite(sim_rdmacm_recv, .timeout = 300);

Test(sim_rdmacm_recv, rq) { rr_run(0, 31); }
Test(sim_rdmacm_recv, srq) { rr_run(1, 32); }
