/*
 * Cost of polling completions, four ways, on the device (the software one under
 * sim/fvsim-run in single-step mode, or a real mlx5 HCA):
 *
 *   ibv_poll_cq     libmlx5 ibv_poll_cq into struct ibv_wc[]
 *   start_poll      libmlx5 ibv_start_poll / ibv_next_poll / ibv_end_poll on an ibv_cq_ex
 *   fv_poll_cq      fastverbs fv_poll_cq into struct ibv_wc[] (drop-in)
 *   fv_poll         fastverbs fv_poll into struct fv_wc[]
 *
 * at 1 and 16 completions per call, on two CQs: one QP's ("cqe"), and one that NQP QPs share
 * ("shared"), their completions interleaved (one WR of each QP in turn). Each round posts N
 * signaled RC RDMA WRITEs (8 bytes) outside the measurement, lets the device write all N
 * CQEs, then one measured call, m_<path>_<per call>(), polls until all N came back. The output
 * arrays are global, so every field a poll writes is really written; the last completion is
 * checked afterwards.
 *
 *   poll count   under callgrind (bench/run.sh): dumps "poll <cq> <path> <per call> <CQEs>"
 *   poll time    prints "time poll <cq> <path> <per call> <ns per CQE, median of REPS>"
 */
#include <fastverbs/fastverbs.h>
#include "bench.h"

#define N 256			/* CQEs per round */
#define SEND_WR 512
#define WARM_ROUNDS 1
#define COUNT_ROUNDS 4
#define TIME_ROUNDS 64
#define REPS 5
#define NQP 4			/* QPs on the shared CQ */

enum path { P_IBV, P_START, P_FVCQ, P_FV, P_FVCQL, P_COUNT };

static const char *const path_name[P_COUNT] = { "ibv_poll_cq", "start_poll", "fv_poll_cq", "fv_poll",
						  "fv_poll_cq_locked" };
static const int per_call[2] = { 1, 16 };

static struct ibv_wc iwc[16];
static struct fv_wc fwc[16];

struct lane {
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;	/* P_START */
	struct fv_cq fcq;	/* P_FVCQ, P_FV, P_FVCQL: its lock taken for P_FVCQL only */
	int nqp;		/* 1, or NQP on the shared CQ */
	struct ibv_qp *qp[NQP], *peer[NQP];
	struct fv_rc frc[NQP];
	int fv;
};

static const char *const cq_name[2] = { "cqe", "shared" };

struct ctx {
	struct bench_dev d;
	struct lane lanes[2][3];
	struct lane *lane[2][P_COUNT];	/* [one QP's CQ, shared]: fv_poll_cq and fv_poll share lanes */
	struct ibv_cq *pcq;	/* the responders' (nothing arrives there: WRITEs) */
	struct ibv_sge sge;
	uint64_t raddr;
	uint64_t id;
};

/* ---- measured: poll until n completions came back (into the global arrays) ---- */

#define POLL_FNS(k)                                                                                \
	__attribute__((noinline)) static int m_ibv_poll_cq_##k(struct lane *l, int n)              \
	{                                                                                          \
		return BENCH_POLL_UNTIL(n, ibv_poll_cq(l->cq, k, iwc),                             \
					"ibv_poll_cq: %d", r_);                                    \
	}                                                                                          \
	__attribute__((noinline)) static int m_start_poll_##k(struct lane *l, int n)               \
	{                                                                                          \
		struct ibv_poll_cq_attr attr = { .comp_mask = 0 };                                  \
		struct ibv_cq_ex *cq = l->cqx;                                                     \
		int got = 0;                                                                       \
		while (got < n) {                                                                  \
			int r = ibv_start_poll(cq, &attr);                                         \
			if (r == ENOENT)                                                           \
				continue;                                                          \
			if (__builtin_expect(r != 0, 0))                                           \
				bench_fail("ibv_start_poll: %d", r);                                \
			got++;                                                                     \
			for (int j = 1; j < k && !ibv_next_poll(cq); j++)                          \
				got++;                                                             \
			ibv_end_poll(cq);                                                          \
		}                                                                                  \
		return got;                                                                        \
	}                                                                                          \
	__attribute__((noinline)) static int m_fv_poll_cq_##k(struct lane *l, int n)               \
	{                                                                                          \
		return BENCH_POLL_UNTIL(n, fv_poll_cq(&l->fcq, k, iwc),                            \
					"fv_poll_cq: %s", strerror(errno));                        \
	}                                                                                          \
	__attribute__((noinline)) static int m_fv_poll_##k(struct lane *l, int n)                  \
	{                                                                                          \
		return BENCH_POLL_UNTIL(n, fv_poll(&l->fcq, fwc, k),                               \
					"fv_poll: %s", strerror(errno));                           \
	}

POLL_FNS(1)
POLL_FNS(16)

typedef int fn_t(struct lane *, int);

static fn_t *const fns[P_COUNT][2] = {
	{ m_ibv_poll_cq_1, m_ibv_poll_cq_16 },
	{ m_start_poll_1, m_start_poll_16 },
	{ m_fv_poll_cq_1, m_fv_poll_cq_16 },
	{ m_fv_poll_1, m_fv_poll_16 },
	{ m_fv_poll_cq_1, m_fv_poll_cq_16 },	/* P_FVCQL: the same call, its CQ's lock on */
};

/* ---- setup ---- */

static void lane_open(struct ctx *c, struct lane *l, enum path p, int nqp)
{
	struct bench_dev *d = &c->d;

	l->fv = p == P_FVCQ || p == P_FV || p == P_FVCQL;
	if (p == P_START) {
		struct ibv_cq_init_attr_ex a = { .cqe = 2 * N, .wc_flags = 0 };

		l->cqx = ibv_create_cq_ex(d->ctx, &a);
		if (!l->cqx)
			bench_fail("ibv_create_cq_ex: %s", strerror(errno));
		l->cq = ibv_cq_ex_to_cq(l->cqx);
	} else {
		l->cq = bench_cq(d, 2 * N);
	}
	l->nqp = nqp;
	for (int i = 0; i < nqp; i++) {
		l->qp[i] = bench_qp(d, IBV_QPT_RC, l->cq, l->cq, SEND_WR, 1, 0);
		l->peer[i] = bench_qp(d, IBV_QPT_RC, c->pcq, c->pcq, 1, 1, 0);
		bench_rc_connect(d, l->qp[i], l->peer[i]->qp_num);
		bench_rc_connect(d, l->peer[i], l->qp[i]->qp_num);
		int err = l->fv ? fv_rc_init(&l->frc[i], l->qp[i]) : 0;

		if (err)
			bench_fail("taking the QP over: %s", strerror(err));
	}
	if (l->fv) {
		int err = fv_cq_init(&l->fcq, l->cq);

		if (err)
			bench_fail("taking the CQ over: %s", strerror(err));
	}
}

static void ctx_open(struct ctx *c)
{
	struct bench_dev *d = &c->d;

	memset(c, 0, sizeof(*c));
	bench_open(d);
	c->sge = (struct ibv_sge){ .addr = (uintptr_t)d->buf, .length = 8, .lkey = d->mr->lkey };
	c->raddr = (uintptr_t)d->buf + 4096;
	c->pcq = bench_cq(d, 16);
	for (int s = 0; s < 2; s++)
		for (int p = 0; p < P_COUNT; p++) {
			c->lane[s][p] = &c->lanes[s][p == P_FV || p == P_FVCQL ? P_FVCQ : p];
			if (p != P_FV && p != P_FVCQL)
				lane_open(c, c->lane[s][p], (enum path)p, s ? NQP : 1);
		}
}

/*
 * Post N signaled RDMA WRITEs and let the device complete them all: on one QP 32 per doorbell;
 * on the shared CQ one WR of each QP in turn, the device run after every turn, so that their
 * completions interleave.
 */
static void post_writes(struct ctx *c, struct lane *l, int qi, int n)
{
	struct ibv_send_wr wrs[32], *bad;

	if (l->fv) {
		for (int j = 0; j < n; j++)
			if (fv_write(&l->frc[qi], c->id++, FV_SIGNALED, &c->sge, c->raddr, c->d.mr->rkey))
				bench_fail("fv_write");
		fv_ring(&l->frc[qi]);
		return;
	}
	for (int j = 0; j < n; j++) {
		memset(&wrs[j], 0, sizeof(wrs[j]));
		wrs[j].wr_id = c->id++;
		wrs[j].next = j < n - 1 ? &wrs[j + 1] : NULL;
		wrs[j].sg_list = &c->sge;
		wrs[j].num_sge = 1;
		wrs[j].opcode = IBV_WR_RDMA_WRITE;
		wrs[j].send_flags = IBV_SEND_SIGNALED;
		wrs[j].wr.rdma.remote_addr = c->raddr;
		wrs[j].wr.rdma.rkey = c->d.mr->rkey;
	}
	if (ibv_post_send(l->qp[qi], wrs, &bad))
		bench_fail("ibv_post_send: %s", strerror(errno));
}

static void fill(struct ctx *c, struct lane *l)
{
	if (l->nqp == 1) {
		for (int i = 0; i < N; i += 32)
			post_writes(c, l, 0, 32);
	} else {
		for (int i = 0; i < N; i += l->nqp) {
			for (int q = 0; q < l->nqp; q++)
				post_writes(c, l, q, 1);
			if (c->d.step)
				bench_device_run(&c->d);
		}
	}
	if (c->d.step) {
		bench_device_run(&c->d);
	} else {	/* hardware: give it time to write every CQE before we measure */
		struct timespec ts = { 0, 2 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
}

/* One round of path p at per_call[ki]; returns the ns of the measured call. */
static uint64_t round_once(struct ctx *c, int sh, enum path p, int ki)
{
	struct lane *l = c->lane[sh][p];
	uint64_t t0, t1, last = c->id + N - 1, wr_id;
	int got, status;

	fill(c, l);
	if (l->fv)	/* the unlocked form, as libmlx5's MLX5_SINGLE_THREADED=1, but for P_FVCQL */
		fv_set_lock(&l->fcq, p == P_FVCQL);
	t0 = bench_now_ns();
	got = fns[p][ki](l, N);
	t1 = bench_now_ns();
	/* the last call returned per_call[ki] entries (N is a multiple): check the last one */
	switch (p) {
	case P_START: wr_id = l->cqx->wr_id; status = l->cqx->status; break;
	case P_FV:    wr_id = fwc[per_call[ki] - 1].wr_id; status = fwc[per_call[ki] - 1].status; break;
	default:      wr_id = iwc[per_call[ki] - 1].wr_id; status = iwc[per_call[ki] - 1].status; break;
	}
	if (got != N || wr_id != last || status != IBV_WC_SUCCESS)
		bench_fail("%s: %d completions, the last for wr_id %llu (want %llu), status %d", path_name[p],
			   got, (unsigned long long)wr_id, (unsigned long long)last, status);
	return t1 - t0;
}

static void run_count(struct ctx *c)
{
	for (int sh = 0; sh < 2; sh++)
		for (int p = 0; p < P_COUNT; p++) {
			fprintf(stderr, "poll: counting instructions: %s %s\n", cq_name[sh], path_name[p]);
			for (int ki = 0; ki < 2; ki++) {
				char label[128];

				for (int r = 0; r < WARM_ROUNDS; r++)
					round_once(c, sh, (enum path)p, ki);
				CALLGRIND_ZERO_STATS;
				for (int r = 0; r < COUNT_ROUNDS; r++)
					round_once(c, sh, (enum path)p, ki);
				snprintf(label, sizeof(label), "poll %s %s %d %d", cq_name[sh], path_name[p],
					 per_call[ki], COUNT_ROUNDS * N);
				CALLGRIND_DUMP_STATS_AT(label);
			}
		}
}

static void run_time(struct ctx *c)
{
	static double ns[2][P_COUNT][2][REPS];

	for (int rep = 0; rep < REPS; rep++) {
		fprintf(stderr, "poll: timing, repetition %d of %d\n", rep + 1, REPS);
		for (int sh = 0; sh < 2; sh++)
			for (int ki = 0; ki < 2; ki++)
				for (int p = 0; p < P_COUNT; p++) {
					uint64_t t = 0;

					round_once(c, sh, (enum path)p, ki);	/* warm up */
					for (int r = 0; r < TIME_ROUNDS; r++)
						t += round_once(c, sh, (enum path)p, ki);
					ns[sh][p][ki][rep] = (double)t / (TIME_ROUNDS * N);
				}
	}
	for (int sh = 0; sh < 2; sh++)
		for (int ki = 0; ki < 2; ki++)
			for (int p = 0; p < P_COUNT; p++)
				printf("time poll %s %s %d %.2f\n", cq_name[sh], path_name[p], per_call[ki],
				       bench_median(ns[sh][p][ki], REPS));
}

static void open_any(void *c)  { ctx_open(c); }
static void count_any(void *c) { run_count(c); }
static void time_any(void *c)  { run_time(c); }

int main(int argc, char **argv)
{
	static struct ctx c;
	static const struct bench_prog prog = { "poll", open_any, count_any, time_any };

	return bench_main(argc, argv, &prog, &c, &c.d);
}
