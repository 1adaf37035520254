/*
 * Cost of posting send WRs, six ways, on the device (the software one under sim/fvsim-run in
 * single-step mode, or a real mlx5 HCA):
 *
 *   ibv      libmlx5 ibv_post_send, filling the ibv_send_wr list first
 *   wr       libmlx5 ibv_wr_start / ibv_wr_<op> / ibv_wr_set_* / ibv_wr_complete
 *   fvps     fastverbs fv_post_send, filling the same ibv_send_wr list
 *   typed    fastverbs typed builders (fv_write, fv_send_inline, ...) + fv_ring
 *   fvwr     fastverbs fv_wr_start / fv_wr_<op> / fv_wr_set_* / fv_wr_complete on the typed
 *            handles (the wr path's code with fv_ for ibv_; the UD address an fv_ah)
 *   fvwrq    the same on the handles' struct fv_qp (the QP type checked at run time)
 *
 * for six operations (RC RDMA_WRITE with one 64-byte SGE, RC RDMA_WRITE inline 16 B, RC SEND
 * inline 16 B, RC RDMA_READ 64 B, RC FETCH_ADD, UD SEND with one 64-byte SGE) at 1 and 32 WRs
 * per doorbell. Every path posts the same requests on its own QPs.
 *
 * One measured call, m_<path>_<op>_<batch>(), posts ROUND unsignaled WRs (constant flags 0 on
 * every path) with a doorbell every <batch>. Outside it, one signaled WR of the same kind
 * through the same path retires the ring, the device runs until idle and its completion is
 * polled; SENDs get their receives posted (and reaped) outside as well.
 *
 *   post count   under callgrind (bench/run.sh): COUNT_ROUNDS measured calls per case, then
 *                CALLGRIND_DUMP_STATS_AT("post <op> <path> <batch> <WRs>")
 *   post time    clock_gettime around each measured call; REPS repetitions of TIME_ROUNDS
 *                calls per case, paths interleaved; prints "time post <op> <path> <batch>
 *                <ns per WR, median of the repetitions>"
 */
#include <fastverbs/fastverbs.h>
#include "bench.h"

#define ROUND 128		/* WRs per measured call */
#define SEND_WR 512		/* max_send_wr: a round and its retiring WR fit easily */
#define WARM_ROUNDS 2
#define COUNT_ROUNDS 8
#define TIME_ROUNDS 48
#define REPS 5

enum op { OP_WRITE, OP_WRITE_INL, OP_SEND_INL, OP_READ, OP_FADD, OP_UD_SEND, OP_COUNT };
enum path { P_IBV, P_WR, P_FVPS, P_TYPED, P_FVWR, P_FVWRQ, P_COUNT };

static const char *const op_name[OP_COUNT] = {
	"write", "write_inline16", "send_inline16", "read", "fetch_add", "ud_send",
};
static const char *const path_name[P_COUNT] = { "ibv", "wr", "fvps", "typed", "fvwr", "fvwrq" };
static const int batches[2] = { 1, 32 };

#define INL 16			/* inline payload bytes */

/* What every path posts, filled once. */
struct args {
	struct ibv_sge sge;	/* 64 bytes, local (WRITE/READ/UD SEND) */
	struct ibv_sge sge8;	/* 8 bytes, local (fetch-add result) */
	struct ibv_sge inl;	/* 16 bytes, sent inline */
	uint64_t raddr, raddr8;	/* remote: 64-byte area, 8-byte counter */
	uint32_t rkey;
	struct ibv_ah *ah;
	struct fv_ah fah;
	uint32_t ud_qpn;
};

/* One path's QPs: an RC requester connected to its own RC responder, a UD requester. */
struct lane {
	struct ibv_cq *scq;	/* requester completions; taken over (fcq) on the fastverbs paths */
	struct fv_cq fcq;
	struct ibv_qp *rc, *ud, *peer;
	struct ibv_qp_ex *rcx, *udx;
	struct fv_rc frc;
	struct fv_ud fud;
	int fv;			/* posted and polled by fastverbs */
};

struct ctx {
	struct bench_dev d;
	struct args a;
	struct lane lane[P_COUNT];
	struct ibv_cq *rcq;	/* responders' receive completions */
	struct ibv_qp *udt;	/* UD target (no receives: the datagrams are dropped) */
	struct ibv_recv_wr rwr[ROUND + 1];
	struct ibv_sge rsge;
	uint64_t id;
};

#define ALWAYS static inline __attribute__((always_inline))

/* ---- the four paths, one body each; op, n, batch and flags fold in every instance ---- */

ALWAYS void fill_wr(struct ibv_send_wr *w, struct ibv_send_wr *next, const struct args *a, enum op op,
		    uint64_t id, int sig)
{
	unsigned f = sig ? IBV_SEND_SIGNALED : 0;

	w->wr_id = id;
	w->next = next;
	w->num_sge = 1;
	switch (op) {
	case OP_WRITE:
	case OP_WRITE_INL:
		w->opcode = IBV_WR_RDMA_WRITE;
		w->send_flags = f | (op == OP_WRITE_INL ? IBV_SEND_INLINE : 0);
		w->sg_list = op == OP_WRITE_INL ? (struct ibv_sge *)&a->inl : (struct ibv_sge *)&a->sge;
		w->wr.rdma.remote_addr = a->raddr;
		w->wr.rdma.rkey = a->rkey;
		break;
	case OP_SEND_INL:
		w->opcode = IBV_WR_SEND;
		w->send_flags = f | IBV_SEND_INLINE;
		w->sg_list = (struct ibv_sge *)&a->inl;
		break;
	case OP_READ:
		w->opcode = IBV_WR_RDMA_READ;
		w->send_flags = f;
		w->sg_list = (struct ibv_sge *)&a->sge;
		w->wr.rdma.remote_addr = a->raddr;
		w->wr.rdma.rkey = a->rkey;
		break;
	case OP_FADD:
		w->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		w->send_flags = f;
		w->sg_list = (struct ibv_sge *)&a->sge8;
		w->wr.atomic.remote_addr = a->raddr8;
		w->wr.atomic.compare_add = 1;
		w->wr.atomic.rkey = a->rkey;
		break;
	case OP_UD_SEND:
	default:
		w->opcode = IBV_WR_SEND;
		w->send_flags = f;
		w->sg_list = (struct ibv_sge *)&a->sge;
		w->wr.ud.ah = a->ah;
		w->wr.ud.remote_qpn = a->ud_qpn;
		w->wr.ud.remote_qkey = BENCH_QKEY;
		break;
	}
}

/* ibv_post_send (fv = 0) or fv_post_send (fv = 1) of lists of batch WRs. */
ALWAYS void body_list(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig,
		      uint64_t id, const int fv)
{
	struct ibv_send_wr wrs[32], *bad;

	for (int i = 0; i < n; i += batch) {
		int err;

		for (int j = 0; j < batch; j++)
			fill_wr(&wrs[j], j + 1 < batch ? &wrs[j + 1] : NULL, a, op, id++, sig);
		if (fv)
			err = fv_post_send(op == OP_UD_SEND ? &l->fud.qp : &l->frc.qp, wrs, &bad);
		else
			err = ibv_post_send(op == OP_UD_SEND ? l->ud : l->rc, wrs, &bad);
		if (__builtin_expect(err, 0))
			bench_fail("%s_post_send (%s): %s", fv ? "fv" : "ibv", op_name[op], strerror(err));
	}
}

ALWAYS void body_ibv(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	body_list(l, a, op, n, batch, sig, id, 0);
}

ALWAYS void body_fvps(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	body_list(l, a, op, n, batch, sig, id, 1);
}

/* Where the wr_id and wr_flags members are: the struct ibv_qp_ex, the handle's struct fv_qp. */
#define QX_ibv(q) (q)
#define QX_fv(q)  fv_wr_qp(q)
#define AH_ibv(a) ((a)->ah)
#define AH_fv(a)  (&(a)->fah)

/*
 * P_wr_start, batch x (wr_id, wr_flags, P_wr_<op>, P_wr_set_*), P_wr_complete, where P is ibv
 * (q_rc, q_ud: struct ibv_qp_ex *) or fv (the typed handles struct fv_rc *, struct fv_ud *, or
 * their struct fv_qp *): the two APIs share names and arguments.
 */
#define BODY_WR(P, q_rc, q_ud)                                                                     \
	do {                                                                                       \
		const struct ibv_sge *s = op == OP_FADD ? &a->sge8 : &a->sge;                      \
		for (int i = 0; i < n; i += batch) {                                               \
			int err;                                                                   \
			if (op == OP_UD_SEND)                                                      \
				P##_wr_start(q_ud);                                                \
			else                                                                       \
				P##_wr_start(q_rc);                                                \
			for (int j = 0; j < batch; j++) {                                          \
				__typeof__(q_rc) q = q_rc;                                         \
				(op == OP_UD_SEND ? QX_##P(q_ud) : QX_##P(q_rc))->wr_id = id++;  \
				(op == OP_UD_SEND ? QX_##P(q_ud) : QX_##P(q_rc))->wr_flags =  \
					sig ? IBV_SEND_SIGNALED : 0;                               \
				switch (op) {                                                      \
				case OP_WRITE:                                                     \
					P##_wr_rdma_write(q, a->rkey, a->raddr);                   \
					P##_wr_set_sge(q, s->lkey, s->addr, s->length);            \
					break;                                                     \
				case OP_WRITE_INL:                                                 \
					P##_wr_rdma_write(q, a->rkey, a->raddr);                   \
					P##_wr_set_inline_data(q, (void *)(uintptr_t)a->inl.addr, INL); \
					break;                                                     \
				case OP_SEND_INL:                                                  \
					P##_wr_send(q);                                            \
					P##_wr_set_inline_data(q, (void *)(uintptr_t)a->inl.addr, INL); \
					break;                                                     \
				case OP_READ:                                                      \
					P##_wr_rdma_read(q, a->rkey, a->raddr);                    \
					P##_wr_set_sge(q, s->lkey, s->addr, s->length);            \
					break;                                                     \
				case OP_FADD:                                                      \
					P##_wr_atomic_fetch_add(q, a->rkey, a->raddr8, 1);         \
					P##_wr_set_sge(q, s->lkey, s->addr, s->length);            \
					break;                                                     \
				case OP_UD_SEND:                                                   \
				default:                                                           \
					P##_wr_send(q_ud);                                         \
					P##_wr_set_ud_addr(q_ud, AH_##P(a), a->ud_qpn, BENCH_QKEY); \
					P##_wr_set_sge(q_ud, s->lkey, s->addr, s->length);         \
					break;                                                     \
				}                                                                  \
			}                                                                          \
			err = op == OP_UD_SEND ? P##_wr_complete(q_ud) : P##_wr_complete(q_rc);    \
			if (__builtin_expect(err, 0))                                              \
				bench_fail(#P "_wr_complete (%s): %s", op_name[op], strerror(err)); \
		}                                                                                  \
	} while (0)

ALWAYS void body_wr(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	BODY_WR(ibv, l->rcx, l->udx);
}

ALWAYS void body_fvwr(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	BODY_WR(fv, &l->frc, &l->fud);
}

ALWAYS void body_fvwrq(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	BODY_WR(fv, &l->frc.qp, &l->fud.qp);
}

/* The typed builders, one fv_ring per batch. */
ALWAYS void body_typed(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	struct fv_rc *rc = &l->frc;
	struct fv_ud *ud = &l->fud;
	const struct ibv_sge *s = &a->sge, *s8 = &a->sge8;
	const void *data = (const void *)(uintptr_t)a->inl.addr;
	const uint64_t raddr = a->raddr, raddr8 = a->raddr8;
	const uint32_t rkey = a->rkey, qpn = a->ud_qpn;
	const unsigned flags = sig ? FV_SIGNALED : 0;

	for (int i = 0; i < n; i += batch) {
		for (int j = 0; j < batch; j++) {
			int err;

			switch (op) {
			case OP_WRITE:     err = fv_write(rc, id++, flags, s, raddr, rkey); break;
			case OP_WRITE_INL: err = fv_write_inline(rc, id++, flags, data, INL, raddr, rkey); break;
			case OP_SEND_INL:  err = fv_send_inline(rc, id++, flags, data, INL); break;
			case OP_READ:      err = fv_read(rc, id++, flags, s, raddr, rkey); break;
			case OP_FADD:      err = fv_fadd(rc, id++, flags, s8, raddr8, rkey, 1); break;
			case OP_UD_SEND:
			default:           err = fv_send(ud, id++, flags, s, &a->fah, qpn, BENCH_QKEY); break;
			}
			if (__builtin_expect(err, 0))
				bench_fail("typed %s: %s", op_name[op], strerror(err));
		}
		if (op == OP_UD_SEND)
			fv_ring(ud);
		else
			fv_ring(rc);
	}
}

/* ---- instances: m_* measured (ROUND unsignaled WRs), r_* the signaled WR that retires them ---- */

typedef void fn_t(struct lane *, const struct args *, uint64_t);

#define INSTANCES(path, op)                                                                        \
	__attribute__((noinline)) static void m_##path##_##op##_1(struct lane *l, const struct args *a, \
								   uint64_t id)                   \
	{                                                                                          \
		body_##path(l, a, op, ROUND, 1, 0, id);                                            \
	}                                                                                          \
	__attribute__((noinline)) static void m_##path##_##op##_32(struct lane *l, const struct args *a,\
								    uint64_t id)                  \
	{                                                                                          \
		body_##path(l, a, op, ROUND, 32, 0, id);                                           \
	}                                                                                          \
	__attribute__((noinline)) static void r_##path##_##op(struct lane *l, const struct args *a,     \
							       uint64_t id)                       \
	{                                                                                          \
		body_##path(l, a, op, 1, 1, 1, id);                                                \
	}

#define PATH_INSTANCES(path)                                                                       \
	INSTANCES(path, OP_WRITE) INSTANCES(path, OP_WRITE_INL) INSTANCES(path, OP_SEND_INL)       \
	INSTANCES(path, OP_READ) INSTANCES(path, OP_FADD) INSTANCES(path, OP_UD_SEND)

PATH_INSTANCES(ibv)
PATH_INSTANCES(wr)
PATH_INSTANCES(fvps)
PATH_INSTANCES(typed)
PATH_INSTANCES(fvwr)
PATH_INSTANCES(fvwrq)

#define ROW(path, op) { m_##path##_##op##_1, m_##path##_##op##_32, r_##path##_##op }
#define PATH_ROWS(path)                                                                            \
	{ ROW(path, OP_WRITE), ROW(path, OP_WRITE_INL), ROW(path, OP_SEND_INL), ROW(path, OP_READ), \
	  ROW(path, OP_FADD), ROW(path, OP_UD_SEND) }

/* fns[path][op]: measured at batch 1, measured at batch 32, retire */
static fn_t *const fns[P_COUNT][OP_COUNT][3] = {
	PATH_ROWS(ibv), PATH_ROWS(wr), PATH_ROWS(fvps), PATH_ROWS(typed), PATH_ROWS(fvwr), PATH_ROWS(fvwrq),
};

/* ---- setup ---- */

static void lane_open(struct ctx *c, struct lane *l, enum path p)
{
	struct bench_dev *d = &c->d;
	uint64_t rc_ops = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ |
			  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

	l->fv = p == P_FVPS || p == P_TYPED || p == P_FVWR || p == P_FVWRQ;
	l->scq = bench_cq(d, 256);
	l->rc = bench_qp(d, IBV_QPT_RC, l->scq, c->rcq, SEND_WR, 1, p == P_WR ? rc_ops : 0);
	l->ud = bench_qp(d, IBV_QPT_UD, l->scq, c->rcq, SEND_WR, 1, p == P_WR ? IBV_QP_EX_WITH_SEND : 0);
	l->peer = bench_qp(d, IBV_QPT_RC, c->rcq, c->rcq, 1, 2 * ROUND, 0);
	bench_rc_connect(d, l->rc, l->peer->qp_num);
	bench_rc_connect(d, l->peer, l->rc->qp_num);
	bench_ud_ready(l->ud);
	if (p == P_WR) {
		l->rcx = ibv_qp_to_qp_ex(l->rc);
		l->udx = ibv_qp_to_qp_ex(l->ud);
		if (!l->rcx || !l->udx)
			bench_fail("ibv_qp_to_qp_ex");
	}
	if (l->fv) {
		int err = fv_rc_init(&l->frc, l->rc);

		if (!err)
			err = fv_ud_init(&l->fud, l->ud);
		if (!err)
			err = fv_cq_init(&l->fcq, l->scq);
		if (err)
			bench_fail("taking the QPs and CQ over: %s", strerror(err));
	}
}

static void ctx_open(struct ctx *c)
{
	struct bench_dev *d = &c->d;
	uint8_t *b;

	memset(c, 0, sizeof(*c));
	bench_open(d);
	b = d->buf;
	for (int i = 0; i < 256; i++)
		b[i] = (uint8_t)i;
	c->a.sge = (struct ibv_sge){ .addr = (uintptr_t)b, .length = 64, .lkey = d->mr->lkey };
	c->a.inl = (struct ibv_sge){ .addr = (uintptr_t)b + 64, .length = INL, .lkey = d->mr->lkey };
	c->a.sge8 = (struct ibv_sge){ .addr = (uintptr_t)b + 128, .length = 8, .lkey = d->mr->lkey };
	c->a.raddr = (uintptr_t)b + 4096;
	c->a.raddr8 = (uintptr_t)b + 8192;
	c->a.rkey = d->mr->rkey;
	c->rcq = bench_cq(d, 1024);
	c->udt = bench_qp(d, IBV_QPT_UD, c->rcq, c->rcq, 1, 1, 0);
	bench_ud_ready(c->udt);
	c->a.ud_qpn = c->udt->qp_num;
	c->a.ah = bench_ah(d);
	if (fv_ah_init(&c->a.fah, c->a.ah))
		bench_fail("fv_ah_init");
	c->rsge = (struct ibv_sge){ .addr = (uintptr_t)b + 16384, .length = 64, .lkey = d->mr->lkey };
	for (int i = 0; i <= ROUND; i++) {
		c->rwr[i].wr_id = (uint64_t)i;
		c->rwr[i].sg_list = &c->rsge;
		c->rwr[i].num_sge = 1;
		c->rwr[i].next = i < ROUND ? &c->rwr[i + 1] : NULL;
	}
	for (int p = 0; p < P_COUNT; p++)
		lane_open(c, &c->lane[p], (enum path)p);
}

/* Poll the fastverbs CQ until n successful completions arrived. */
static void fv_drain(struct bench_dev *d, struct fv_cq *cq, int n, const char *what)
{
	struct fv_wc wc[16];
	uint64_t t0 = bench_now_ns();

	while (n > 0) {
		int r = fv_poll(cq, wc, n < 16 ? n : 16);

		if (r < 0)
			bench_fail("fv_poll (%s): %s", what, strerror(errno));
		for (int i = 0; i < r; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				bench_fail("%s: completion %llu: %s", what, (unsigned long long)wc[i].wr_id,
					   ibv_wc_status_str((enum ibv_wc_status)wc[i].status));
		n -= r;
		if (!r)
			bench_wait(d, t0, what);
	}
}

/* One measured call of (path, op, batch index) with everything around it; returns its ns. */
static uint64_t round_once(struct ctx *c, enum path p, enum op op, int bi)
{
	struct lane *l = &c->lane[p];
	struct ibv_recv_wr *bad;
	uint64_t t0, t1;

	if (op == OP_SEND_INL && ibv_post_recv(l->peer, c->rwr, &bad))
		bench_fail("ibv_post_recv: %s", strerror(errno));
	t0 = bench_now_ns();
	fns[p][op][bi](l, &c->a, c->id);
	t1 = bench_now_ns();
	c->id += ROUND;
	fns[p][op][2](l, &c->a, c->id++);
	bench_device_run(&c->d);
	if (l->fv)
		fv_drain(&c->d, &l->fcq, 1, op_name[op]);
	else
		bench_ibv_drain(&c->d, l->scq, 1, op_name[op]);
	if (op == OP_SEND_INL)
		bench_ibv_drain(&c->d, c->rcq, ROUND + 1, "receives");
	return t1 - t0;
}

static void run_count(struct ctx *c)
{
	for (int op = 0; op < OP_COUNT; op++) {
		fprintf(stderr, "post: counting instructions: %s\n", op_name[op]);
		for (int bi = 0; bi < 2; bi++)
			for (int p = 0; p < P_COUNT; p++) {
				char label[128];

				for (int r = 0; r < WARM_ROUNDS; r++)
					round_once(c, (enum path)p, (enum op)op, bi);
				CALLGRIND_ZERO_STATS;
				for (int r = 0; r < COUNT_ROUNDS; r++)
					round_once(c, (enum path)p, (enum op)op, bi);
				snprintf(label, sizeof(label), "post %s %s %d %d", op_name[op], path_name[p],
					 batches[bi], COUNT_ROUNDS * ROUND);
				CALLGRIND_DUMP_STATS_AT(label);
			}
	}
}

static void run_time(struct ctx *c)
{
	static double ns[OP_COUNT][2][P_COUNT][REPS];

	for (int rep = 0; rep < REPS; rep++) {
		fprintf(stderr, "post: timing, repetition %d of %d\n", rep + 1, REPS);
		for (int op = 0; op < OP_COUNT; op++)
			for (int bi = 0; bi < 2; bi++)
				for (int p = 0; p < P_COUNT; p++) {
					uint64_t t = 0;

					round_once(c, (enum path)p, (enum op)op, bi);	/* warm up */
					for (int r = 0; r < TIME_ROUNDS; r++)
						t += round_once(c, (enum path)p, (enum op)op, bi);
					ns[op][bi][p][rep] = (double)t / (TIME_ROUNDS * ROUND);
				}
	}
	for (int op = 0; op < OP_COUNT; op++)
		for (int bi = 0; bi < 2; bi++)
			for (int p = 0; p < P_COUNT; p++)
				printf("time post %s %s %d %.2f\n", op_name[op], path_name[p], batches[bi],
				       bench_median(ns[op][bi][p], REPS));
}

static void open_any(void *c)  { ctx_open(c); }
static void count_any(void *c) { run_count(c); }
static void time_any(void *c)  { run_time(c); }

int main(int argc, char **argv)
{
	static struct ctx c;
	static const struct bench_prog prog = { "post", open_any, count_any, time_any };

	return bench_main(argc, argv, &prog, &c, &c.d);
}
