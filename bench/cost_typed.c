/*
 * Instructions per posted WR, on plain memory: RC RDMA WRITE with one SGE, shaped like
 * bench/post.c (batch a constant, an error check per call). Typed path: fv_write() per WR
 * (the request's fields read into locals first) and one fv_ring() per batch; ps:
 * fv_post_send of a list of batch ibv_send_wr, filled first as bench/post.c fills them; wr:
 * fv_wr_start, per WR wr_id, wr_flags, fv_wr_rdma_write and fv_wr_set_sge, fv_wr_complete, on
 * the typed handle (wrq: on its struct fv_qp), as bench/post.c's fvwr and fvwrq paths. Run
 * under callgrind with --collect-atstart=no (bench/cost.sh): only the measured calls are
 * counted (with everything they run, out of line parts included), after a warm-up call.
 *
 *   cost_typed BATCH [vary] [ps|wr|wrq]   WRs per doorbell: 1 (every WR rung alone, BlueFlame copy
 *                                  included) or 32; vary: a different SGE for every WR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>
#include <fastverbs/compat/verbs.h>

#define ROUND 128	/* WRs per measured call */
#define CALLS 250

static uint8_t sq[64 * 1024] __attribute__((aligned(4096)));
static __be32 db[16] __attribute__((aligned(64)));
static uint8_t bf[512] __attribute__((aligned(64)));
static uint8_t data[64 * 64];

struct args {
	struct ibv_sge sge[ROUND];	/* all the same unless vary */
	uint64_t raddr;
	uint32_t rkey;
};

__attribute__((noreturn, noinline, cold)) static void fail(void)
{
	fprintf(stderr, "cost_typed: fv_write refused\n");
	exit(1);
}

/* ROUND WRs, a doorbell every batch; one = 1: the same SGE for every WR. */
static inline __attribute__((always_inline)) void body(struct fv_rc *rc, const struct args *a,
							uint64_t id, int batch, int one)
{
	const uint64_t raddr = a->raddr;
	const uint32_t rkey = a->rkey;

	for (int i = 0; i < ROUND; i += batch) {
		for (int j = 0; j < batch; j++)
			if (fv_write(rc, id++, 0, &a->sge[one ? 0 : i + j], raddr, rkey))
				fail();
		fv_ring(rc);
	}
}

/* fv_post_send of lists of batch WRs, filled as bench/post.c fills them. */
static inline __attribute__((always_inline)) void body_ps(struct fv_rc *rc, const struct args *a,
							   uint64_t id, int batch, int one)
{
	struct ibv_send_wr wrs[32], *bad;

	for (int i = 0; i < ROUND; i += batch) {
		for (int j = 0; j < batch; j++) {
			struct ibv_send_wr *w = &wrs[j];

			w->wr_id = id++;
			w->next = j + 1 < batch ? &wrs[j + 1] : NULL;
			w->num_sge = 1;
			w->opcode = IBV_WR_RDMA_WRITE;
			w->send_flags = 0;
			w->sg_list = (struct ibv_sge *)&a->sge[one ? 0 : i + j];
			w->wr.rdma.remote_addr = a->raddr;
			w->wr.rdma.rkey = a->rkey;
		}
		if (fv_post_send(&rc->qp, wrs, &bad))
			fail();
	}
}

/* fv_wr_* batches of batch WRs on h, a typed handle or its struct fv_qp. */
#define BODY_WR(h, a, id, batch, one)                                                              \
	do {                                                                                       \
		for (int i = 0; i < ROUND; i += batch) {                                           \
			fv_wr_start(h);                                                            \
			for (int j = 0; j < batch; j++) {                                          \
				const struct ibv_sge *s = &(a)->sge[one ? 0 : i + j];              \
				fv__wr_qp(h)->wr_id = id++;                                         \
				fv__wr_qp(h)->wr_flags = 0;                                         \
				fv_wr_rdma_write(h, (a)->rkey, (a)->raddr);                        \
				fv_wr_set_sge(h, s->lkey, s->addr, s->length);                     \
			}                                                                          \
			if (fv_wr_complete(h))                                                     \
				fail();                                                            \
		}                                                                                  \
	} while (0)

/* A measured function: body (a function or BODY_WR) on handle h, batch WRs per doorbell, the
 * same SGE for every WR or not (one). */
#define INSTANCE(name, body, h, batch, one)                                                        \
	__attribute__((noinline)) static void name(struct fv_rc *rc, const struct args *a, uint64_t id) \
	{                                                                                          \
		body(h, a, id, batch, one);                                                        \
	}

INSTANCE(m_1, body, rc, 1, 1)
INSTANCE(m_32, body, rc, 32, 1)
INSTANCE(m_1_vary, body, rc, 1, 0)
INSTANCE(m_32_vary, body, rc, 32, 0)
INSTANCE(m_ps_1, body_ps, rc, 1, 1)
INSTANCE(m_ps_32, body_ps, rc, 32, 1)
INSTANCE(m_wr_1, BODY_WR, rc, 1, 1)
INSTANCE(m_wr_32, BODY_WR, rc, 32, 1)
INSTANCE(m_wr_1_vary, BODY_WR, rc, 1, 0)
INSTANCE(m_wr_32_vary, BODY_WR, rc, 32, 0)
INSTANCE(m_wrq_1, BODY_WR, &rc->qp, 1, 1)
INSTANCE(m_wrq_32, BODY_WR, &rc->qp, 32, 1)
INSTANCE(m_wrq_1_vary, BODY_WR, &rc->qp, 1, 0)
INSTANCE(m_wrq_32_vary, BODY_WR, &rc->qp, 32, 0)

int main(int argc, char **argv)
{
	int batch = argc > 1 ? atoi(argv[1]) : 1, vary = 0, ps = 0, wr = 0, wrq = 0;

	for (int i = 2; i < argc; i++) {
		vary |= !strcmp(argv[i], "vary");
		ps |= !strcmp(argv[i], "ps");
		wr |= !strcmp(argv[i], "wr");
		wrq |= !strcmp(argv[i], "wrq");
	}

	void (*m)(struct fv_rc *, const struct args *, uint64_t) =
		ps ? (batch == 1 ? m_ps_1 : m_ps_32) :
		wr ? (batch == 1 ? (vary ? m_wr_1_vary : m_wr_1) : (vary ? m_wr_32_vary : m_wr_32)) :
		wrq ? (batch == 1 ? (vary ? m_wrq_1_vary : m_wrq_1) : (vary ? m_wrq_32_vary : m_wrq_32)) :
		batch == 1 ? (vary ? m_1_vary : m_1) : (vary ? m_32_vary : m_32);
	static struct args a;
	struct fv_rc rc;

	if (batch != 1 && batch != 32) {
		fprintf(stderr, "usage: %s 1|32 [vary] [ps|wr|wrq]\n", argv[0]);
		return 2;
	}
	for (int i = 0; i < ROUND; i++)
		a.sge[i] = (struct ibv_sge){ .addr = (uintptr_t)data + (vary ? 64u * (unsigned)i : 0),
					     .length = 64, .lkey = 0x1234 };
	a.raddr = 0x1000;
	a.rkey = 7;
	if (fv_qp_init_geom(&rc.qp, &(struct fv_qp_geom){ .qpt = FV_QPT_RC, .qpn = 0x100,
			    .sq_buf = sq, .sq_wqe_cnt = 1024, .dbrec = db, .bf_reg = bf, .bf_size = 256,
			    .max_inline = 60, .max_send_sge = 1 }))
		return 1;
	for (int c = 0; c <= CALLS; c++) {
		if (c)	/* call 0 warms up */
			CALLGRIND_TOGGLE_COLLECT;
		m(&rc, &a, (uint64_t)c * ROUND);
		if (c)
			CALLGRIND_TOGGLE_COLLECT;
		rc.qp.sq.ci = rc.qp.sq.pi;	/* pretend the device completed it all */
	}
	printf("wrs %d\n", CALLS * ROUND);
	fv_qp_cleanup(&rc.qp);
	return 0;
}
