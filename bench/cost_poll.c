/*
 * Instructions per polled CQE, on plain memory: a CQ pre-filled with valid requester CQEs
 * (RC SEND completions, every WQE signaled) for a QP registered with fv_qp_init_geom, drained
 * by fv_poll (or fv_poll_cq) PER_CALL entries at a time. Run under callgrind with
 * --collect-atstart=no (bench/cost.sh): only the calls of drain_*() after the warm-up pass
 * are counted, with everything they run.
 *
 *   cost_poll 1|16 [ibv] [alt]   CQEs per call; ibv: poll with fv_poll_cq into struct ibv_wc;
 *                                alt: the CQEs of two QPs taking turns
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
static uint8_t sq2[N * 64] __attribute__((aligned(4096)));
static uint8_t cqbuf[N * 64] __attribute__((aligned(4096)));
static __be32 qp_db[16] __attribute__((aligned(64)));
static __be32 cq_db[16] __attribute__((aligned(64)));
static uint8_t bf[512] __attribute__((aligned(64)));
static uint8_t data[64];
static struct fv_wc wc[16];
static struct ibv_wc iwc[16];

/* The measured loops: poll until n completions came back, k per call, a constant in each
 * instance (as in bench/poll.c). */
#define DRAIN(name, k, call)                                                                       \
	__attribute__((noinline)) static int name(struct fv_cq *cq, int n)                       \
	{                                                                                          \
		int got = 0;                                                                       \
		while (got < n) {                                                                  \
			int r = call;                                                              \
			if (r <= 0)                                                                \
				return -1;                                                         \
			got += r;                                                                  \
		}                                                                                  \
		return got;                                                                        \
	}

DRAIN(drain_fv_1, 1, fv_poll(cq, wc, 1))
DRAIN(drain_fv_16, 16, fv_poll(cq, wc, 16))
DRAIN(drain_ibv_1, 1, fv_poll_cq(cq, 1, iwc))
DRAIN(drain_ibv_16, 16, fv_poll_cq(cq, 16, iwc))

/* Post N signaled SENDs and write the CQE the device would write for each. */
static void fill(struct fv_rc *rc, uint32_t cq_pi, int alt)
{
	struct ibv_sge s = { .addr = (uintptr_t)data, .length = sizeof(data), .lkey = 0x1234 };

	for (uint32_t i = 0; i < N; i++, cq_pi++) {
		struct fv_rc *q = &rc[alt ? i & 1 : 0];
		uint32_t at = q->qp.sq.pi;
		struct mlx5_cqe64 *e = (struct mlx5_cqe64 *)(cqbuf + (cq_pi & (N - 1)) * 64);

		if (fv_send(q, i, FV_SIGNALED, &s))
			abort();
		memset(e, 0, sizeof(*e));
		e->sop_drop_qpn = htobe32((uint32_t)MLX5_OPCODE_SEND << 24 | q->qp.qpn);
		e->wqe_counter = htobe16((uint16_t)at);
		e->op_own = (uint8_t)(MLX5_CQE_REQ << 4 | !!(cq_pi & N));
	}
	fv_ring(&rc[0]);
	fv_ring(&rc[1]);
}

int main(int argc, char **argv)
{
	int per_call = argc > 1 ? atoi(argv[1]) : 1, ibv = 0, alt = 0;
	struct fv_rc rc[2];
	struct fv_cq cq;

	for (int i = 2; i < argc; i++) {
		ibv |= !strcmp(argv[i], "ibv");
		alt |= !strcmp(argv[i], "alt");
	}

	int (*drain)(struct fv_cq *, int) = per_call == 1 ? (ibv ? drain_ibv_1 : drain_fv_1) :
					     (ibv ? drain_ibv_16 : drain_fv_16);

	if (per_call != 1 && per_call != 16) {
		fprintf(stderr, "usage: %s 1|16 [ibv] [alt]\n", argv[0]);
		return 2;
	}
	if (fv_qp_init_geom(&rc[0].qp, &(struct fv_qp_geom){ .qpt = FV_QPT_RC, .qpn = 0x100,
			    .sq_buf = sq, .sq_wqe_cnt = N, .dbrec = qp_db, .bf_reg = bf, .bf_size = 256,
			    .max_inline = 60, .max_send_sge = 1 }) ||
	    fv_qp_init_geom(&rc[1].qp, &(struct fv_qp_geom){ .qpt = FV_QPT_RC, .qpn = 0x101,
			    .sq_buf = sq2, .sq_wqe_cnt = N, .dbrec = qp_db + 2, .bf_reg = bf + 256,
			    .bf_size = 128, .max_inline = 60, .max_send_sge = 1 }) ||
	    fv_cq_init_geom(&cq, &(struct fv_cq_geom){ .buf = cqbuf, .cqe_cnt = N, .cqe_size = 64,
			    .dbrec = cq_db, .cqn = 1 }))
		return 1;
	for (int p = 0; p < PASSES; p++) {
		int got;

		fill(rc, (uint32_t)p * N, alt);
		if (p)	/* pass 0 warms up */
			CALLGRIND_TOGGLE_COLLECT;
		got = drain(&cq, N);
		if (p)
			CALLGRIND_TOGGLE_COLLECT;
		if (got != N)
			return 1;
	}
	printf("cqes %d\n", (PASSES - 1) * N);
	fv_qp_cleanup(&rc[0].qp);
	fv_qp_cleanup(&rc[1].qp);
	return 0;
}
