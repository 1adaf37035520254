/*
 * Cost of the receive side, on the device (the software one under sim/fvsim-run in
 * single-step mode, or a real mlx5 HCA): posting receive WQEs to an RQ ("rq") or an SRQ
 * ("srq") and polling their completions from a CQ that NQP QPs share ("rq_poll": the QPs'
 * own RQs; "srq_poll": the QPs on one SRQ). Four lanes, each with its own QPs, SRQ and CQs:
 *
 *   ibv      libmlx5 ibv_post_recv / ibv_post_srq_recv (a list of batch WRs); ibv_poll_cq
 *   fvpr     fastverbs fv_post_recv / fv_post_srq_recv (the same list); fv_poll_cq
 *   typed    fastverbs fv_recv + fv_recv_ring, fv_srq_recv + fv_srq_ring; fv_poll
 *   floor    written here, not in the library, on the geometry the QPs and CQ report:
 *            posting stores a WQE's data segment (and the terminator when the WQE has room
 *            for more; on an SRQ at the head of its free list, which it then follows) and,
 *            per batch, the doorbell record; polling tests a CQE's owner bit and opcode,
 *            takes the wr_id (RQ: of the QP found from the QPN's low bits, a table the
 *            bench checks is unambiguous for its QPs, at its consumer index, which moves;
 *            SRQ: at the WQE index the CQE names, the WQE then linked after the free
 *            list's tail), and writes the CQ's consumer index once per call. Nothing else:
 *            no room test, no wr_id kept when posting, no other opcode decoded.
 *
 * Application-shaped, as the posting bench's loops: each receive's buffer address advances
 * 64 B (in a 4 KiB window) and its wr_id is the round's running id; completions of the NQP
 * QPs interleave on the CQ (one SEND of each QP's peer in turn, the device run after each
 * turn). SENDs carry 64 bytes (over 32: no data in the CQE).
 *
 *   recv count   under callgrind (bench/run.sh): dumps "recv rq|srq <path> <batch> <WRs>" and
 *                "recv rq_poll|srq_poll <path> <per call> <CQEs>"
 *   recv time    prints "time recv <op> <path> <n> <ns per WR or CQE, median of REPS>"
 */
#include <fastverbs/fastverbs.h>
#include "bench.h"

#define NQP 4			/* receiving QPs per lane, on one CQ */
#define ROUND 128		/* receives posted per measured call, all on one QP */
#define PROUND (NQP * 64)	/* completions polled per measured call */
#define RECV_WR 256
#define WINDOW 4096
#define WARM_ROUNDS 1
#define COUNT_ROUNDS 4
#define TIME_ROUNDS 32
#define REPS 5
#define FLOOR_QPN_BITS 6	/* the floor's QP table: indexed by the QPN's low bits */

enum path { P_IBV, P_FVPR, P_TYPED, P_FLOOR, P_COUNT };

static const char *const path_name[P_COUNT] = { "ibv", "fvpr", "typed", "floor" };
static const char *const poll_name[P_COUNT] = { "ibv_poll_cq", "fv_poll_cq", "fv_poll", "floor" };
static const int batches[2] = { 1, 32 };
static const int per_call[2] = { 1, 16 };

/* The floor's view of one RQ, and of the CQ. */
struct floor_rq {
	uint8_t *buf;
	uint32_t stride_shift, mask, max_gs;
	uint32_t head, tail;	/* posted, completed */
	volatile __be32 *dbrec;	/* the RQ's word of the QP's doorbell record */
	uint64_t wrid[RECV_WR];	/* filled outside the measured posting (the floor keeps none) */
};

struct floor_srq {
	uint8_t *buf;
	uint32_t stride_shift, mask, max_gs;
	uint32_t head, tail;	/* the free list's ends */
	uint16_t counter;	/* WQEs posted */
	volatile __be32 *dbrec;
	uint64_t wrid[4 * RECV_WR];	/* libmlx5 makes room for max_wr + 1, a power of two */
};

struct floor_cq {
	uint8_t *buf64;		/* entry 0's struct mlx5_cqe64 */
	uint32_t ci, mask, shift, log_entries;
	volatile __be32 *dbrec;
	struct floor_rq *qp[1u << FLOOR_QPN_BITS];
	struct floor_srq *srq;	/* the CQ of the SRQ's QPs */
};

/* The floor's completion: what an application needs of a successful receive. */
struct floor_wc {
	uint64_t wr_id;
	uint32_t byte_len;
};

struct lane {
	struct ibv_cq *rcq, *scq;	/* receivers', senders' */
	struct ibv_qp *rqp[NQP], *sqp[NQP];	/* receivers, their peers (the senders) */
	struct fv_rc frc[NQP];	/* the receivers taken over (fvpr, typed) or read (floor) */
	struct fv_rc fsnd[NQP];	/* the senders, posted by fastverbs on every lane */
	struct fv_cq fcq, fscq;
	struct floor_rq frq[NQP];
	struct floor_cq fl;
	/* the same again, the receivers on one SRQ */
	struct ibv_srq *srq;
	struct fv_srq fsrq;
	struct ibv_cq *srcq;
	struct ibv_qp *srqp[NQP], *ssqp[NQP];
	struct fv_rc fsrc[NQP], fssnd[NQP];
	struct fv_cq fsrcq;
	struct floor_srq fsq;
	struct floor_cq fls;
};

struct ctx {
	struct bench_dev d;
	struct lane lane[P_COUNT];
	struct ibv_sge ssge;	/* what the senders send: 64 bytes */
	uint64_t rbase;		/* receive buffers: rbase + (wr_id % 64) * 64 */
	uint32_t lkey;
	uint64_t id;
	unsigned q;		/* the QP the next posting round uses */
};

static struct ibv_wc iwc[16];
static struct fv_wc fwc[16];
static struct floor_wc flwc[16];

#define ALWAYS static inline __attribute__((always_inline))

ALWAYS struct ibv_sge rsge(const struct ctx *c, uint64_t id)
{
	return (struct ibv_sge){ .addr = c->rbase + (id % (WINDOW / 64)) * 64, .length = 64, .lkey = c->lkey };
}

/* ---- posting: ROUND receives on QP q, a doorbell record every batch ---- */

/* ibv_post_recv (fv = 0) or fv_post_recv (fv = 1) of lists of batch WRs. */
ALWAYS void post_list(struct ctx *c, struct lane *l, unsigned q, int batch, uint64_t id, const int fv)
{
	struct ibv_recv_wr wrs[32], *bad;
	struct ibv_sge sges[32];

	for (int i = 0; i < ROUND; i += batch) {
		int err;

		for (int j = 0; j < batch; j++) {
			sges[j] = rsge(c, id);
			wrs[j].wr_id = id++;
			wrs[j].next = j + 1 < batch ? &wrs[j + 1] : NULL;
			wrs[j].sg_list = &sges[j];
			wrs[j].num_sge = 1;
		}
		err = fv ? fv_post_recv(&l->frc[q].qp, wrs, &bad) : ibv_post_recv(l->rqp[q], wrs, &bad);
		if (__builtin_expect(err, 0))
			bench_fail("%s_post_recv: %s", fv ? "fv" : "ibv", strerror(err));
	}
}

ALWAYS void post_typed(struct ctx *c, struct lane *l, unsigned q, int batch, uint64_t id)
{
	struct fv_qp *qp = &l->frc[q].qp;

	for (int i = 0; i < ROUND; i += batch) {
		for (int j = 0; j < batch; j++) {
			const struct ibv_sge s = rsge(c, id);
			int err = fv_recv(qp, id++, &s, 1);

			if (__builtin_expect(err, 0))
				bench_fail("fv_recv: %s", strerror(err));
		}
		fv_recv_ring(qp);
	}
}

/* The floor: the data segment (and terminator), then per batch the doorbell record. */
ALWAYS void post_floor(struct ctx *c, struct lane *l, unsigned q, int batch, uint64_t id)
{
	struct floor_rq *r = &l->frq[q];
	uint8_t *const buf = r->buf;
	const uint32_t mask = r->mask, shift = r->stride_shift, max_gs = r->max_gs;
	uint32_t head = r->head;

	for (int i = 0; i < ROUND; i += batch) {
		for (int j = 0; j < batch; j++) {
			const struct ibv_sge s = rsge(c, id++);
			struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)(buf + ((size_t)(head & mask) << shift));

			d->byte_count = htobe32(s.length);
			d->lkey = htobe32(s.lkey);
			d->addr = htobe64(s.addr);
			if (max_gs > 1) {
				d[1].byte_count = 0;
				d[1].lkey = htobe32(MLX5_INVALID_LKEY);
				d[1].addr = 0;
			}
			head++;
		}
		__asm__ __volatile__("" ::: "memory");	/* the WQEs before the doorbell record */
		r->dbrec[0] = htobe32(head & 0xffff);
	}
	r->head = head;
}

/* The same on the SRQ. */
ALWAYS void post_list_srq(struct ctx *c, struct lane *l, int batch, uint64_t id, const int fv)
{
	struct ibv_recv_wr wrs[32], *bad;
	struct ibv_sge sges[32];

	for (int i = 0; i < ROUND; i += batch) {
		int err;

		for (int j = 0; j < batch; j++) {
			sges[j] = rsge(c, id);
			wrs[j].wr_id = id++;
			wrs[j].next = j + 1 < batch ? &wrs[j + 1] : NULL;
			wrs[j].sg_list = &sges[j];
			wrs[j].num_sge = 1;
		}
		err = fv ? fv_post_srq_recv(&l->fsrq, wrs, &bad) : ibv_post_srq_recv(l->srq, wrs, &bad);
		if (__builtin_expect(err, 0))
			bench_fail("%s_post_srq_recv: %s", fv ? "fv" : "ibv", strerror(err));
	}
}

ALWAYS void post_typed_srq(struct ctx *c, struct lane *l, int batch, uint64_t id)
{
	struct fv_srq *srq = &l->fsrq;

	for (int i = 0; i < ROUND; i += batch) {
		for (int j = 0; j < batch; j++) {
			const struct ibv_sge s = rsge(c, id);
			int err = fv_srq_recv(srq, id++, &s, 1);

			if (__builtin_expect(err, 0))
				bench_fail("fv_srq_recv: %s", strerror(err));
		}
		fv_srq_ring(srq);
	}
}

/* The floor on the SRQ: the data segment of the free list's head, which moves to the next. */
ALWAYS void post_floor_srq(struct ctx *c, struct lane *l, int batch, uint64_t id)
{
	struct floor_srq *r = &l->fsq;
	uint8_t *const buf = r->buf;
	const uint32_t mask = r->mask, shift = r->stride_shift, max_gs = r->max_gs;
	uint32_t head = r->head;
	uint16_t counter = r->counter;

	for (int i = 0; i < ROUND; i += batch) {
		for (int j = 0; j < batch; j++) {
			const struct ibv_sge s = rsge(c, id++);
			struct mlx5_wqe_srq_next_seg *n = (struct mlx5_wqe_srq_next_seg *)(buf + ((size_t)head << shift));
			struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)(n + 1);

			d->byte_count = htobe32(s.length);
			d->lkey = htobe32(s.lkey);
			d->addr = htobe64(s.addr);
			if (max_gs > 1) {
				d[1].byte_count = 0;
				d[1].lkey = htobe32(MLX5_INVALID_LKEY);
				d[1].addr = 0;
			}
			head = be16toh(n->next_wqe_index) & mask;
			counter++;
		}
		__asm__ __volatile__("" ::: "memory");	/* the WQEs before the doorbell record */
		r->dbrec[0] = htobe32(counter);
	}
	r->head = head;
	r->counter = counter;
}

/* ---- polling: until n completions came back (into the global arrays) ---- */

/* The floor poller: k completions at most into flwc; returns how many. */
ALWAYS int poll_floor(struct floor_cq *f, int k)
{
	uint32_t ci = f->ci;
	const uint32_t mask = f->mask, shift = f->shift, lg = f->log_entries;
	int got = 0;

	while (got < k) {
		const struct mlx5_cqe64 *cqe = (const struct mlx5_cqe64 *)(f->buf64 + ((size_t)(ci & mask) << shift));
		const uint8_t op_own = cqe->op_own;
		struct floor_rq *r;

		if ((op_own & 1) != ((ci >> lg) & 1) || (op_own >> 4) != MLX5_CQE_RESP_SEND)
			break;	/* not new (or not a plain receive: not the floor's business) */
		__asm__ __volatile__("" ::: "memory");	/* the CQE after its owner bit (x86: loads in order) */
		r = f->qp[be32toh(cqe->sop_drop_qpn) & ((1u << FLOOR_QPN_BITS) - 1)];
		flwc[got].wr_id = r->wrid[r->tail++ & r->mask];
		flwc[got].byte_len = be32toh(cqe->byte_cnt);
		got++;
		ci++;
	}
	if (got) {
		f->ci = ci;
		f->dbrec[FV__CQ_SET_CI] = htobe32(ci & 0xffffff);
	}
	return got;
}

/* The floor poller of the SRQ's CQ: the wr_id at the CQE's WQE index, the WQE freed. */
ALWAYS int poll_floor_srq(struct floor_cq *f, int k)
{
	struct floor_srq *r = f->srq;
	uint32_t ci = f->ci, tail = r->tail;
	const uint32_t mask = f->mask, shift = f->shift, lg = f->log_entries, smask = r->mask;
	uint8_t *const sbuf = r->buf;
	const uint32_t sshift = r->stride_shift;
	int got = 0;

	while (got < k) {
		const struct mlx5_cqe64 *cqe = (const struct mlx5_cqe64 *)(f->buf64 + ((size_t)(ci & mask) << shift));
		const uint8_t op_own = cqe->op_own;
		uint32_t idx;

		if ((op_own & 1) != ((ci >> lg) & 1) || (op_own >> 4) != MLX5_CQE_RESP_SEND)
			break;
		__asm__ __volatile__("" ::: "memory");
		idx = be16toh(cqe->wqe_counter) & smask;
		flwc[got].wr_id = r->wrid[idx];
		flwc[got].byte_len = be32toh(cqe->byte_cnt);
		((struct mlx5_wqe_srq_next_seg *)(sbuf + ((size_t)tail << sshift)))->next_wqe_index = htobe16((uint16_t)idx);
		tail = idx;
		got++;
		ci++;
	}
	if (got) {
		r->tail = tail;
		f->ci = ci;
		f->dbrec[FV__CQ_SET_CI] = htobe32(ci & 0xffffff);
	}
	return got;
}

#define POLL_FNS(k, x, cq, fcq, fl, floor_fn)                                                      \
	__attribute__((noinline)) static int m_ibv_poll_cq##x##_##k(struct lane *l, int n)         \
	{                                                                                          \
		return BENCH_POLL_UNTIL(n, ibv_poll_cq(l->cq, k, iwc),                             \
					"ibv_poll_cq: %d", r_);                                    \
	}                                                                                          \
	__attribute__((noinline)) static int m_fv_poll_cq##x##_##k(struct lane *l, int n)          \
	{                                                                                          \
		return BENCH_POLL_UNTIL(n, fv_poll_cq(&l->fcq, k, iwc),                            \
					"fv_poll_cq: %s", strerror(errno));                        \
	}                                                                                          \
	__attribute__((noinline)) static int m_fv_poll##x##_##k(struct lane *l, int n)             \
	{                                                                                          \
		return BENCH_POLL_UNTIL(n, fv_poll(&l->fcq, fwc, k),                               \
					"fv_poll: %s", strerror(errno));                           \
	}                                                                                          \
	__attribute__((noinline)) static int m_floor_poll##x##_##k(struct lane *l, int n)          \
	{                                                                                          \
		int got = 0;                                                                       \
		while (got < n)                                                                    \
			got += floor_fn(&l->fl, k);                                                \
		return got;                                                                        \
	}

POLL_FNS(1, , rcq, fcq, fl, poll_floor)
POLL_FNS(16, , rcq, fcq, fl, poll_floor)
POLL_FNS(1, _srq, srcq, fsrcq, fls, poll_floor_srq)
POLL_FNS(16, _srq, srcq, fsrcq, fls, poll_floor_srq)

typedef int poll_fn(struct lane *, int);

/* polls[kind][path][per call index]: kind 0 the RQs' CQ, 1 the SRQ's */
static poll_fn *const polls[2][P_COUNT][2] = {
	{ { m_ibv_poll_cq_1, m_ibv_poll_cq_16 }, { m_fv_poll_cq_1, m_fv_poll_cq_16 },
	  { m_fv_poll_1, m_fv_poll_16 }, { m_floor_poll_1, m_floor_poll_16 } },
	{ { m_ibv_poll_cq_srq_1, m_ibv_poll_cq_srq_16 }, { m_fv_poll_cq_srq_1, m_fv_poll_cq_srq_16 },
	  { m_fv_poll_srq_1, m_fv_poll_srq_16 }, { m_floor_poll_srq_1, m_floor_poll_srq_16 } },
};

#define POST_FNS(b)                                                                                \
	__attribute__((noinline)) static void m_ibv_rq_##b(struct ctx *c, struct lane *l, unsigned q, uint64_t id) \
	{                                                                                          \
		post_list(c, l, q, b, id, 0);                                                      \
	}                                                                                          \
	__attribute__((noinline)) static void m_fvpr_rq_##b(struct ctx *c, struct lane *l, unsigned q, uint64_t id) \
	{                                                                                          \
		post_list(c, l, q, b, id, 1);                                                      \
	}                                                                                          \
	__attribute__((noinline)) static void m_typed_rq_##b(struct ctx *c, struct lane *l, unsigned q, uint64_t id) \
	{                                                                                          \
		post_typed(c, l, q, b, id);                                                        \
	}                                                                                          \
	__attribute__((noinline)) static void m_floor_rq_##b(struct ctx *c, struct lane *l, unsigned q, uint64_t id) \
	{                                                                                          \
		post_floor(c, l, q, b, id);                                                        \
	}                                                                                          \
	__attribute__((noinline)) static void m_ibv_srq_##b(struct ctx *c, struct lane *l, unsigned q, uint64_t id) \
	{                                                                                          \
		(void)q;                                                                           \
		post_list_srq(c, l, b, id, 0);                                                     \
	}                                                                                          \
	__attribute__((noinline)) static void m_fvpr_srq_##b(struct ctx *c, struct lane *l, unsigned q, uint64_t id) \
	{                                                                                          \
		(void)q;                                                                           \
		post_list_srq(c, l, b, id, 1);                                                     \
	}                                                                                          \
	__attribute__((noinline)) static void m_typed_srq_##b(struct ctx *c, struct lane *l, unsigned q, uint64_t id) \
	{                                                                                          \
		(void)q;                                                                           \
		post_typed_srq(c, l, b, id);                                                       \
	}                                                                                          \
	__attribute__((noinline)) static void m_floor_srq_##b(struct ctx *c, struct lane *l, unsigned q, uint64_t id) \
	{                                                                                          \
		(void)q;                                                                           \
		post_floor_srq(c, l, b, id);                                                       \
	}

POST_FNS(1)
POST_FNS(32)

typedef void post_fn(struct ctx *, struct lane *, unsigned, uint64_t);

/* posts[kind][path][batch index]: kind 0 a QP's RQ, 1 the SRQ */
static post_fn *const posts[2][P_COUNT][2] = {
	{ { m_ibv_rq_1, m_ibv_rq_32 }, { m_fvpr_rq_1, m_fvpr_rq_32 },
	  { m_typed_rq_1, m_typed_rq_32 }, { m_floor_rq_1, m_floor_rq_32 } },
	{ { m_ibv_srq_1, m_ibv_srq_32 }, { m_fvpr_srq_1, m_fvpr_srq_32 },
	  { m_typed_srq_1, m_typed_srq_32 }, { m_floor_srq_1, m_floor_srq_32 } },
};

/* ---- setup ---- */

/* The lane's SRQ, its NQP receivers and their senders, their CQs. */
static void srq_open(struct ctx *c, struct lane *l, enum path p)
{
	struct bench_dev *d = &c->d;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = RECV_WR, .max_sge = 1 } };
	struct ibv_cq *scq = bench_cq(d, 2 * RECV_WR);

	l->srq = ibv_create_srq(d->pd, &sa);
	if (!l->srq)
		bench_fail("ibv_create_srq: %s", strerror(errno));
	l->srcq = bench_cq(d, 2 * RECV_WR);
	for (int i = 0; i < NQP; i++) {
		struct setup_qp_cfg cfg;
		const char *what;
		int err;

		memset(&cfg, 0, sizeof(cfg));
		cfg.type = IBV_QPT_RC;
		cfg.scq = scq;
		cfg.rcq = l->srcq;
		cfg.srq = l->srq;
		cfg.max_send_wr = 1;
		cfg.max_send_sge = 1;
		err = setup_qp(d->pd, &cfg, &l->srqp[i], &what);
		if (err)
			bench_fail("%s: %s", what, strerror(err));
		l->ssqp[i] = bench_qp(d, IBV_QPT_RC, l->scq, l->scq, 2 * RECV_WR, 1, 0);
		bench_rc_connect(d, l->srqp[i], l->ssqp[i]->qp_num);
		bench_rc_connect(d, l->ssqp[i], l->srqp[i]->qp_num);
		err = fv_rc_init(&l->fssnd[i], l->ssqp[i]);
		if (!err && p != P_IBV)
			err = fv_rc_init(&l->fsrc[i], l->srqp[i]);
		if (err)
			bench_fail("taking the QPs over: %s", strerror(err));
		fv_set_lock(&l->fssnd[i], 0);
		if (p != P_IBV)
			fv_set_lock(&l->fsrc[i], 0);
	}
	if (p == P_IBV)
		return;
	if (fv_srq_init(&l->fsrq, l->srq) || fv_cq_init(&l->fsrcq, l->srcq))
		bench_fail("taking the SRQ and its CQ over");
	fv_set_lock(&l->fsrq, 0);
	fv_set_lock(&l->fsrcq, 0);
	if (p == P_FLOOR) {
		struct floor_cq *f = &l->fls;
		struct floor_srq *r = &l->fsq;

		f->buf64 = l->fsrcq.buf64;
		f->ci = l->fsrcq.ci;
		f->mask = l->fsrcq.mask;
		f->shift = l->fsrcq.shift;
		f->log_entries = (uint32_t)__builtin_ctz(l->fsrcq.mask + 1);
		f->dbrec = l->fsrcq.dbrec;
		f->srq = r;
		r->buf = l->fsrq.buf;
		r->stride_shift = l->fsrq.stride_shift;
		r->mask = l->fsrq.mask;
		r->max_gs = l->fsrq.max_gs;
		r->head = l->fsrq.head;
		r->tail = l->fsrq.tail;
		r->counter = l->fsrq.counter;
		r->dbrec = l->fsrq.dbrec;
		if (r->mask >= 4 * RECV_WR)
			bench_fail("the floor's SRQ wr_id table is too small");
	}
}

static void lane_open(struct ctx *c, struct lane *l, enum path p)
{
	struct bench_dev *d = &c->d;

	l->rcq = bench_cq(d, 2 * RECV_WR);
	l->scq = bench_cq(d, 2 * RECV_WR);
	for (int i = 0; i < NQP; i++) {
		l->rqp[i] = bench_qp(d, IBV_QPT_RC, l->scq, l->rcq, 1, RECV_WR, 0);
		l->sqp[i] = bench_qp(d, IBV_QPT_RC, l->scq, l->scq, 2 * RECV_WR, 1, 0);
		bench_rc_connect(d, l->rqp[i], l->sqp[i]->qp_num);
		bench_rc_connect(d, l->sqp[i], l->rqp[i]->qp_num);
		int err = fv_rc_init(&l->fsnd[i], l->sqp[i]);

		if (!err && p != P_IBV)
			err = fv_rc_init(&l->frc[i], l->rqp[i]);
		if (err)
			bench_fail("taking the QPs over: %s", strerror(err));
		fv_set_lock(&l->fsnd[i], 0);
		if (p != P_IBV)
			fv_set_lock(&l->frc[i], 0);	/* the unlocked form, as MLX5_SINGLE_THREADED=1 */
	}
	if (fv_cq_init(&l->fscq, l->scq))
		bench_fail("taking the senders' CQ over");
	fv_set_lock(&l->fscq, 0);
	if (p != P_IBV) {
		if (fv_cq_init(&l->fcq, l->rcq))
			bench_fail("taking the receive CQ over");
		fv_set_lock(&l->fcq, 0);
	}
	if (p == P_FLOOR) {
		struct floor_cq *f = &l->fl;

		f->buf64 = l->fcq.buf64;
		f->ci = l->fcq.ci;
		f->mask = l->fcq.mask;
		f->shift = l->fcq.shift;
		f->log_entries = (uint32_t)__builtin_ctz(l->fcq.mask + 1);
		f->dbrec = l->fcq.dbrec;
		for (int i = 0; i < NQP; i++) {
			struct fv__rq *rq = &l->frc[i].qp.rq;
			struct floor_rq *r = &l->frq[i];
			struct floor_rq **slot = &f->qp[l->rqp[i]->qp_num & ((1u << FLOOR_QPN_BITS) - 1)];

			if (*slot)
				bench_fail("the floor's QP table: two QPNs share their low bits");
			*slot = r;
			r->buf = rq->buf;
			r->stride_shift = rq->stride_shift;
			r->mask = rq->mask;
			r->max_gs = rq->max_gs;
			r->head = rq->head.v;
			r->tail = rq->tail;
			r->dbrec = rq->dbrec;
			if (rq->entries > RECV_WR)
				bench_fail("the floor's wr_id table is too small for %u receives", rq->entries);
		}
	}
	srq_open(c, l, p);
}

static void ctx_open(struct ctx *c)
{
	struct bench_dev *d = &c->d;

	memset(c, 0, sizeof(*c));
	bench_open(d);
	c->ssge = (struct ibv_sge){ .addr = (uintptr_t)d->buf, .length = 64, .lkey = d->mr->lkey };
	c->rbase = (uintptr_t)d->buf + 8192;
	c->lkey = d->mr->lkey;
	for (int p = 0; p < P_COUNT; p++)
		lane_open(c, &c->lane[p], (enum path)p);
}

/* ---- rounds ---- */

/* Sender q (of the SRQ's receivers if s) sends n SENDs of 64 bytes; the device runs then. */
static void send_n(struct ctx *c, struct lane *l, int s, unsigned q, int n)
{
	struct fv_rc *snd = s ? &l->fssnd[q] : &l->fsnd[q];

	for (int i = 0; i < n; i++)
		if (fv_send(snd, 0, (i & 31) == 31 || i == n - 1 ? FV_SIGNALED : 0, &c->ssge))
			bench_fail("fv_send");
	fv_ring(snd);
	bench_device_run(&c->d);
}

/* Reap the senders' completions (outside any measurement). */
static void reap_senders(struct ctx *c, struct lane *l)
{
	struct fv_wc wc[16];
	int r;

	bench_device_run(&c->d);
	while ((r = fv_poll(&l->fscq, wc, 16)) > 0)
		for (int i = 0; i < r; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				bench_fail("send completion: %s", ibv_wc_status_str((enum ibv_wc_status)wc[i].status));
	if (r < 0)
		bench_fail("fv_poll (senders): %s", strerror(errno));
}

/*
 * The floor posted ROUND WQEs from head0 (RQ q, or the SRQ if s): their wr_ids, as the others
 * keep them, outside the measurement.
 */
static void floor_ids(struct lane *l, int s, unsigned q, uint32_t head0, uint64_t id0)
{
	if (!s) {
		struct floor_rq *r = &l->frq[q];

		for (uint32_t h = head0; h != r->head; h++)
			r->wrid[h & r->mask] = id0++;
		return;
	}
	struct floor_srq *r = &l->fsq;

	for (uint32_t h = head0, k = 0; k < ROUND; k++) {
		const struct mlx5_wqe_srq_next_seg *n =
			(const struct mlx5_wqe_srq_next_seg *)(r->buf + ((size_t)h << r->stride_shift));

		r->wrid[h] = id0++;
		h = be16toh(n->next_wqe_index) & r->mask;
	}
}

/* The head the floor's next post starts from (RQ q, or the SRQ). */
static uint32_t floor_head(struct lane *l, int s, unsigned q)
{
	return s ? l->fsq.head : l->frq[q].head;
}

/* Poll n completions of lane p (its RQs' CQ, or the SRQ's if s) with its own poller, checked. */
static void drain(struct ctx *c, enum path p, int s, int n)
{
	struct lane *l = &c->lane[p];
	uint64_t t0 = bench_now_ns();

	while (n > 0) {
		int k = n < 16 ? n : 16;
		/* the fvpr lane drains with fv_poll_cq, the form it measures: a CQ polled with both
		 * forms empties its run cache at each change (cq_run.h), which no round should pay */
		int r = p == P_FLOOR ? (s ? poll_floor_srq(&l->fls, k) : poll_floor(&l->fl, k))
		      : p == P_IBV ? ibv_poll_cq(s ? l->srcq : l->rcq, k, iwc)
		      : p == P_FVPR ? fv_poll_cq(s ? &l->fsrcq : &l->fcq, k, iwc)
				   : fv_poll(s ? &l->fsrcq : &l->fcq, fwc, k);

		if (r < 0)
			bench_fail("%s: poll failed", path_name[p]);
		for (int i = 0; i < r && p != P_FLOOR; i++)
			if ((p == P_IBV || p == P_FVPR ? iwc[i].status : fwc[i].status) != IBV_WC_SUCCESS)
				bench_fail("%s: receive completion failed", path_name[p]);
		n -= r;
		if (!r)
			bench_wait(&c->d, t0, "receive completions");
	}
}

/* Post ROUND receives through path p's poster (RQ of the next QP, or the SRQ), measured. */
static uint64_t post_round(struct ctx *c, enum path p, int s, int bi)
{
	struct lane *l = &c->lane[p];
	unsigned q = c->q++ % NQP;
	uint32_t head0 = floor_head(l, s, q);
	uint64_t t0, t1;

	t0 = bench_now_ns();
	posts[s][p][bi](c, l, q, c->id);
	t1 = bench_now_ns();
	if (p == P_FLOOR)
		floor_ids(l, s, q, head0, c->id);
	c->id += ROUND;
	send_n(c, l, s, q, ROUND);
	drain(c, p, s, ROUND);
	reap_senders(c, l);
	return t1 - t0;
}

/* ROUND receives posted outside the measurement (not through an m_* function, which callgrind counts). */
static void prefill(struct ctx *c, struct lane *l, enum path p, int s, unsigned q)
{
	if (p == P_FLOOR && s)
		post_floor_srq(c, l, 32, c->id);
	else if (p == P_FLOOR)
		post_floor(c, l, q, 32, c->id);
	else if (p == P_IBV && s)
		post_list_srq(c, l, 32, c->id, 0);
	else if (p == P_IBV)
		post_list(c, l, q, 32, c->id, 0);
	else if (s)
		post_typed_srq(c, l, 32, c->id);
	else
		post_typed(c, l, q, 32, c->id);
}

/*
 * Post NQP x ROUND receives (unmeasured; on the SRQ, ROUND), let the NQP senders take turns,
 * PROUND SENDs in all, and poll their completions, measured; the rest consumed outside.
 */
static uint64_t poll_round(struct ctx *c, enum path p, int s, int ki)
{
	struct lane *l = &c->lane[p];
	uint64_t t0, t1, last = 0, want;
	int got;

	for (unsigned q = 0; q < (s ? 2u : NQP); q++) {
		uint32_t head0 = floor_head(l, s, q);

		prefill(c, l, p, s, q);
		if (p == P_FLOOR)
			floor_ids(l, s, q, head0, c->id);
		c->id += ROUND;
	}
	for (int t = 0; t < PROUND / NQP; t++)
		for (unsigned q = 0; q < NQP; q++)
			send_n(c, l, s, q, 1);
	t0 = bench_now_ns();
	got = polls[s][p][ki](l, PROUND);
	t1 = bench_now_ns();
	switch (p) {
	case P_IBV: case P_FVPR: last = iwc[per_call[ki] - 1].wr_id; break;
	case P_TYPED: last = fwc[per_call[ki] - 1].wr_id; break;
	default: last = flwc[per_call[ki] - 1].wr_id; break;
	}
	/* the last: RQ, the last QP's 64th receive of this round; SRQ, the PROUNDth posted */
	want = s ? c->id - 2 * ROUND + PROUND - 1 : c->id - ROUND + PROUND / NQP - 1;
	if (got != PROUND || last != want)
		bench_fail("%s%s: %d completions, the last for wr_id %llu (want %llu)", poll_name[p], s ? " (SRQ)" : "",
			   got, (unsigned long long)last, (unsigned long long)want);
	if (!s) {	/* the ROUND - PROUND / NQP receives left on each QP: consumed outside */
		for (unsigned q = 0; q < NQP; q++)
			send_n(c, l, s, q, ROUND - PROUND / NQP);
		drain(c, p, s, NQP * (ROUND - PROUND / NQP));
	}
	reap_senders(c, l);
	return t1 - t0;
}

static const char *const kind_name[2][2] = { { "rq", "rq_poll" }, { "srq", "srq_poll" } };

static void run_count(struct ctx *c)
{
	char label[128];

	for (int s = 0; s < 2; s++)
		for (int p = 0; p < P_COUNT; p++) {
			fprintf(stderr, "recv: counting instructions: %s %s\n", kind_name[s][0], path_name[p]);
			for (int bi = 0; bi < 2; bi++) {
				for (int r = 0; r < WARM_ROUNDS; r++)
					post_round(c, (enum path)p, s, bi);
				CALLGRIND_ZERO_STATS;
				for (int r = 0; r < COUNT_ROUNDS; r++)
					post_round(c, (enum path)p, s, bi);
				snprintf(label, sizeof(label), "recv %s %s %d %d", kind_name[s][0], path_name[p],
					 batches[bi], COUNT_ROUNDS * ROUND);
				CALLGRIND_DUMP_STATS_AT(label);
			}
			for (int ki = 0; ki < 2; ki++) {
				for (int r = 0; r < WARM_ROUNDS; r++)
					poll_round(c, (enum path)p, s, ki);
				CALLGRIND_ZERO_STATS;
				for (int r = 0; r < COUNT_ROUNDS; r++)
					poll_round(c, (enum path)p, s, ki);
				snprintf(label, sizeof(label), "recv %s %s %d %d", kind_name[s][1], path_name[p],
					 per_call[ki], COUNT_ROUNDS * PROUND);
				CALLGRIND_DUMP_STATS_AT(label);
			}
		}
}

static void run_time(struct ctx *c)
{
	static double ns[2][2][2][P_COUNT][REPS];	/* [srq][poll][batch index][path] */

	for (int rep = 0; rep < REPS; rep++) {
		fprintf(stderr, "recv: timing, repetition %d of %d\n", rep + 1, REPS);
		for (int s = 0; s < 2; s++)
			for (int k = 0; k < 2; k++)
				for (int bi = 0; bi < 2; bi++)
					for (int p = 0; p < P_COUNT; p++) {
						uint64_t t = 0;

						for (int r = 0; r <= TIME_ROUNDS; r++) {	/* the first warms up */
							uint64_t x = k ? poll_round(c, (enum path)p, s, bi)
								       : post_round(c, (enum path)p, s, bi);

							t += r ? x : 0;
						}
						ns[s][k][bi][p][rep] = (double)t / (TIME_ROUNDS * (k ? PROUND : ROUND));
					}
	}
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < 2; k++)
			for (int bi = 0; bi < 2; bi++)
				for (int p = 0; p < P_COUNT; p++)
					printf("time recv %s %s %d %.2f\n", kind_name[s][k], path_name[p],
					       k ? per_call[bi] : batches[bi], bench_median(ns[s][k][bi][p], REPS));
}

static void open_any(void *c)  { ctx_open(c); }
static void count_any(void *c) { run_count(c); }
static void time_any(void *c)  { run_time(c); }

int main(int argc, char **argv)
{
	static struct ctx c;
	static const struct bench_prog prog = { "recv", open_any, count_any, time_any };

	return bench_main(argc, argv, &prog, &c, &c.d);
}
