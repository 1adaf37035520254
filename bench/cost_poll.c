/*
 * Instructions per polled CQE, on plain memory: a CQ pre-filled with valid requester CQEs
 * (RC SEND completions, every WQE signaled) for a QP registered with fv_qp_init_geom, drained
 * by fv_poll (or fv_poll_cq) PER_CALL entries at a time. Run under callgrind with
 * --collect-atstart=no (bench/cost.sh): only the calls of drain_*() after the warm-up pass
 * are counted, with everything they run.
 *
 *   cost_poll PER_CALL [ibv]     ibv: poll with fv_poll_cq into struct ibv_wc
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>
#include <fastverbs/ops.h>
#include <fastverbs/compat/poll_cq.h>

#define N 4096		/* CQEs per pass = CQ entries = SQ WQEBBs */
#define PASSES 4

static uint8_t sq[N * 64] __attribute__((aligned(4096)));
static uint8_t cqbuf[N * 64] __attribute__((aligned(4096)));
static __be32 qp_db[16] __attribute__((aligned(64)));
static __be32 cq_db[16] __attribute__((aligned(64)));
static uint8_t bf[512] __attribute__((aligned(64)));
static uint8_t data[64];
static struct fv_wc wc[16];
static struct ibv_wc iwc[16];

/* The measured loops: poll until n completions came back (one function per poller, as a
 * program would call one of them). */
__attribute__((noinline)) static int drain_fv(struct fv_cq *cq, int n, int per_call)
{
	int got = 0;

	while (got < n) {
		int r = fv_poll(cq, wc, per_call);

		if (r <= 0)
			return -1;
		got += r;
	}
	return got;
}

__attribute__((noinline)) static int drain_ibv(struct fv_cq *cq, int n, int per_call)
{
	int got = 0;

	while (got < n) {
		int r = fv_poll_cq(cq, per_call, iwc);

		if (r <= 0)
			return -1;
		got += r;
	}
	return got;
}

/* Post N signaled SENDs and write the CQE the device would write for each. */
static void fill(struct fv_rc *rc, uint32_t cq_pi)
{
	struct ibv_sge s = { .addr = (uintptr_t)data, .length = sizeof(data), .lkey = 0x1234 };

	for (uint32_t i = 0; i < N; i++, cq_pi++) {
		uint32_t at = rc->qp.sq.pi;
		struct mlx5_cqe64 *e = (struct mlx5_cqe64 *)(cqbuf + (cq_pi & (N - 1)) * 64);

		if (fv_send(rc, i, FV_SIGNALED, &s))
			abort();
		memset(e, 0, sizeof(*e));
		e->sop_drop_qpn = htobe32((uint32_t)MLX5_OPCODE_SEND << 24 | rc->qp.qpn);
		e->wqe_counter = htobe16((uint16_t)at);
		e->op_own = (uint8_t)(MLX5_CQE_REQ << 4 | !!(cq_pi & N));
	}
	fv_ring(rc);
}

int main(int argc, char **argv)
{
	int per_call = argc > 1 ? atoi(argv[1]) : 1, ibv = argc > 2 && !strcmp(argv[2], "ibv");
	struct fv_rc rc;
	struct fv_cq cq;

	if (per_call < 1 || per_call > 16) {
		fprintf(stderr, "usage: %s PER_CALL(1..16) [ibv]\n", argv[0]);
		return 2;
	}
	if (fv_qp_init_geom(&rc.qp, &(struct fv_qp_geom){ .qpt = FV_QPT_RC, .qpn = 0x100,
			    .sq_buf = sq, .sq_wqe_cnt = N, .dbrec = qp_db, .bf_reg = bf, .bf_size = 256,
			    .max_inline = 60, .max_send_sge = 1 }) ||
	    fv_cq_init_geom(&cq, &(struct fv_cq_geom){ .buf = cqbuf, .cqe_cnt = N, .cqe_size = 64,
			    .dbrec = cq_db, .cqn = 1 }))
		return 1;
	for (int p = 0; p < PASSES; p++) {
		int got;

		fill(&rc, (uint32_t)p * N);
		if (p)	/* pass 0 warms up */
			CALLGRIND_TOGGLE_COLLECT;
		got = ibv ? drain_ibv(&cq, N, per_call) : drain_fv(&cq, N, per_call);
		if (p)
			CALLGRIND_TOGGLE_COLLECT;
		if (got != N)
			return 1;
	}
	printf("cqes %d\n", (PASSES - 1) * N);
	fv_qp_cleanup(&rc.qp);
	return 0;
}
