/*
 * Differential test on the software device: libmlx5 against fastverbs, byte for byte.
 *
 * Twin QPs with the same type and caps: one is driven by libmlx5 (ibv_post_send +
 * ibv_poll_cq), the other is taken over by fastverbs (fv_post_send + fv_poll_cq). Each twin
 * talks to its own sink QP; all sinks share one MR, so both twins name the same rkey. Every
 * round posts the same seeded random WR list (valid and invalid WRs) on both and compares
 * the return code, *bad_wr, the doorbell record, every meaningful WQE byte and the
 * BlueFlame register; then the device executes everything and both completion lists must
 * match. WRs on which fastverbs deliberately differs from libmlx5 (README, "Differences")
 * are checked against fastverbs' documented errno, and the libmlx5 twin gets the list cut
 * before them. DIFF_TRACE=1 in the environment prints every round's lists and outcomes.
 */
#include <fastverbs/fastverbs.h>
#include "sim-util.h"

#define ROUNDS      600
#define MAX_LIST    6
#define BUF_SIZE    (1u << 16)
#define SINK_RECVS  256
#define RECV_SIZE   4096
#define QKEY        0x11111111u

enum { LIB, FV };

struct twin {
	struct ibv_qp *qp[2], *sink[2];
	struct ibv_cq *cq[2], *sink_cq[2];
	struct mlx5dv_qp dv[2];
	struct fv_qp fq;
	struct fv_cq fc;
	uint32_t sink_posted[2];
	int broken;		/* a completion error moved the twins to the error state */
};

struct env {
	struct simt_dev d;
	uint8_t *local, *remote, *sinkbuf;
	struct ibv_mr *local_mr, *remote_mr, *sink_mr;
	struct ibv_ah *ah;
	uint64_t seed;
};

static uint64_t rnd(struct env *e, uint64_t n)
{
	e->seed = e->seed * 6364136223846793005ull + 1442695040888963407ull;
	return (e->seed >> 33) % n;
}

/* The caps of one twin pair; libmlx5 grants more than asked (read back with ibv_query_qp). */
struct caps { enum ibv_qp_type type; uint32_t wr, sge, inl; int sig_all; };

static void sink_fill(struct env *e, struct twin *t, int s)
{
	while (t->sink_posted[s] < SINK_RECVS) {
		uint32_t i = t->sink_posted[s]++ % SINK_RECVS;

		simt_post_recv(t->sink[s], i, e->sinkbuf + (size_t)i * RECV_SIZE, RECV_SIZE,
			       e->sink_mr->lkey);
	}
}

static void twin_open(struct env *e, struct twin *t, const struct caps *c)
{
	memset(t, 0, sizeof(*t));
	for (int s = LIB; s <= FV; s++) {
		t->cq[s] = simt_cq(&e->d, 1024);
		t->sink_cq[s] = simt_cq(&e->d, 2 * SINK_RECVS);
		t->qp[s] = simt_qp(&e->d, &(struct simt_qp_cfg){ .type = c->type, .scq = t->cq[s],
			.max_send_wr = c->wr, .max_send_sge = c->sge, .max_inline = c->inl,
			.sq_sig_all = c->sig_all, .max_recv_wr = 1, .max_recv_sge = 1 });
		t->sink[s] = simt_qp(&e->d, &(struct simt_qp_cfg){ .type = c->type, .scq = t->sink_cq[s],
			.max_recv_wr = SINK_RECVS, .max_recv_sge = 1 });
		if (c->type == IBV_QPT_UD) {
			simt_ud_ready(t->qp[s], QKEY);
			simt_ud_ready(t->sink[s], QKEY);
		} else {
			simt_connect(t->qp[s], e->d.lid, t->sink[s]->qp_num, SIMT_ACCESS_ALL, 7, 7);
			simt_connect(t->sink[s], e->d.lid, t->qp[s]->qp_num, SIMT_ACCESS_ALL, 7, 7);
		}
		sink_fill(e, t, s);
		struct mlx5dv_obj o = { .qp = { .in = t->qp[s], .out = &t->dv[s] } };
		cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	}
	cr_assert_eq(fv_qp_init(&t->fq, t->qp[FV]), 0);
	cr_assert_eq(fv_cq_init(&t->fc, t->cq[FV]), 0);
	cr_assert_eq(t->dv[LIB].sq.wqe_cnt, t->dv[FV].sq.wqe_cnt, "twins got different rings");
}

static void twin_close(struct twin *t)
{
	fv_cq_cleanup(&t->fc);
	fv_qp_cleanup(&t->fq);
	for (int s = LIB; s <= FV; s++) {
		cr_assert_eq(ibv_destroy_qp(t->qp[s]), 0);
		cr_assert_eq(ibv_destroy_qp(t->sink[s]), 0);
		cr_assert_eq(ibv_destroy_cq(t->cq[s]), 0);
		cr_assert_eq(ibv_destroy_cq(t->sink_cq[s]), 0);
	}
}

/* ---- random WR lists ---- */

struct wrl {
	struct ibv_send_wr wr[MAX_LIST];
	struct ibv_sge sge[MAX_LIST][20];
	int n;
	int cut;		/* first WR fastverbs refuses on purpose where libmlx5 does not; n if none */
	int cut_errno;
};

static int allowed(enum ibv_qp_type t, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND: case IBV_WR_SEND_WITH_IMM:
		return 1;
	case IBV_WR_RDMA_WRITE: case IBV_WR_RDMA_WRITE_WITH_IMM:
		return t != IBV_QPT_UD;
	case IBV_WR_RDMA_READ: case IBV_WR_ATOMIC_CMP_AND_SWP: case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return t == IBV_QPT_RC;
	default:
		return 0;
	}
}

static const enum ibv_wr_opcode ops[] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
	IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
};

/*
 * Make the SGEs total exactly want bytes (one past max_inline_data) by resizing the first;
 * if the others already hold more than that, they give up their bytes to the first one.
 * Adding (want - total) to the first length used to wrap it past 2^31 when the others held
 * more. libmlx5 44 (set_data_inl_seg) holds an SGE length in an int: it turned negative,
 * passed the max_inline_data test, memcpy got a size near 2^64 and the write pointer moved
 * back 2^32 - length bytes, so the next SGEs overwrote the WQEs posted before it: the ring
 * "losing bytes" that kept three configurations disabled (UC round 173, RC rounds 167, 349).
 */
static void over_inline(struct ibv_sge *s, int n, uint32_t want)
{
	uint32_t rest = 0;

	for (int k = 1; k < n; k++)
		rest += s[k].length;
	if (rest > want) {
		for (int k = 1; k < n; k++)
			s[k].length = 0;
		rest = 0;
	}
	s[0].length = want - rest;
}

/*
 * One random WR. Most are valid for the QP; some carry mistakes both libraries refuse the
 * same way (bad opcode, too many SGEs, inline too long), and a few carry a mistake only
 * fastverbs refuses (an operation the QP type does not allow, INLINE on READ/atomics).
 */
static void make_wr(struct env *e, struct wrl *l, int i, enum ibv_qp_type type,
		    const struct ibv_qp_cap *cap, int *cut)
{
	struct ibv_send_wr *w = &l->wr[i];
	struct ibv_sge *s = l->sge[i];
	uint32_t kind = (uint32_t)rnd(e, 100);

	memset(w, 0, sizeof(*w));
	w->wr_id = 0x1000 + rnd(e, 1u << 20);
	w->sg_list = s;
	do
		w->opcode = ops[rnd(e, sizeof(ops) / sizeof(ops[0]))];
	while (kind >= 4 && !allowed(type, w->opcode));
	if (kind < 4 && !allowed(type, w->opcode))
		*cut = 1;		/* fastverbs: EINVAL */
	w->send_flags = (rnd(e, 3) == 0 ? IBV_SEND_SIGNALED : 0) | (rnd(e, 8) == 0 ? IBV_SEND_SOLICITED : 0) |
			(rnd(e, 8) == 0 ? IBV_SEND_FENCE : 0);
	w->imm_data = htobe32((uint32_t)rnd(e, 1u << 31));
	int atomic = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
	int max_sge = (int)cap->max_send_sge;

	w->num_sge = atomic ? 1 : (int)rnd(e, (uint64_t)max_sge + 1);
	if (kind == 10)
		w->num_sge = max_sge + 1 + (int)rnd(e, 3);	/* both: ENOMEM */
	for (int k = 0; k < w->num_sge && k < 20; k++) {
		uint32_t len = atomic ? 8 : (uint32_t)(rnd(e, 4) ? rnd(e, 200) : 0);

		s[k] = (struct ibv_sge){ .addr = (uintptr_t)e->local + rnd(e, BUF_SIZE / 2) / 8 * 8,
					 .length = len, .lkey = e->local_mr->lkey };
	}
	if (w->opcode != IBV_WR_RDMA_READ && !atomic && w->num_sge <= max_sge && rnd(e, 3) == 0) {
		uint32_t total = 0;

		for (int k = 0; k < w->num_sge; k++)
			total += s[k].length;
		w->send_flags |= IBV_SEND_INLINE;
		if (kind == 11 && w->num_sge)	/* both: ENOMEM */
			over_inline(s, w->num_sge, cap->max_inline_data + 1);
		else if (total > cap->max_inline_data)
			w->send_flags &= ~(unsigned)IBV_SEND_INLINE;
	}
	if ((w->opcode == IBV_WR_RDMA_READ || atomic) && kind == 12 && w->num_sge) {
		w->send_flags |= IBV_SEND_INLINE;	/* fastverbs: EINVAL */
		*cut = 1;
	}
	if (kind == 13)
		w->opcode = (enum ibv_wr_opcode)(12 + rnd(e, 8));	/* both: EINVAL */
	uint64_t raddr = (uintptr_t)e->remote + rnd(e, BUF_SIZE / 2) / 8 * 8;
	if (atomic) {
		w->wr.atomic.remote_addr = raddr;
		w->wr.atomic.rkey = e->remote_mr->rkey;
		w->wr.atomic.compare_add = rnd(e, 1000);
		w->wr.atomic.swap = rnd(e, 1000);
	} else if (type == IBV_QPT_UD) {
		w->wr.ud.ah = e->ah;
		w->wr.ud.remote_qkey = QKEY;	/* remote_qpn: filled per twin */
	} else {
		w->wr.rdma.remote_addr = raddr;
		w->wr.rdma.rkey = e->remote_mr->rkey;
	}
}

static void make_list(struct env *e, struct wrl *l, enum ibv_qp_type type, const struct ibv_qp_cap *cap)
{
	l->n = 1 + (int)rnd(e, MAX_LIST);
	l->cut = l->n;
	for (int i = 0; i < l->n; i++) {
		int cut = 0;

		make_wr(e, l, i, type, cap, &cut);
		if (cut && l->cut == l->n) {
			l->cut = i;
			l->cut_errno = EINVAL;
		}
		l->wr[i].next = i + 1 < l->n ? &l->wr[i + 1] : NULL;
	}
	/* End every list signaled so both twins retire everything each round. */
	l->wr[l->n - 1].send_flags |= IBV_SEND_SIGNALED;
}

/* ---- comparison ---- */

/* Bytes of the WQE at ring offset off (mod the ring), up to n. */
static void ring_read(const struct mlx5dv_qp *dv, uint32_t off, uint8_t *out, uint32_t n)
{
	uint32_t size = dv->sq.wqe_cnt * 64;

	for (uint32_t i = 0; i < n; i++)
		out[i] = ((const uint8_t *)dv->sq.buf)[(off + i) % size];
}

/*
 * Bytes libmlx5 leaves unspecified or that name the twin itself, zeroed before comparing:
 * the QPN in ctrl, an inline segment's pad after its payload, a fetch-and-add's compare half.
 */
static void mask_wqe(uint8_t *w, unsigned ds, enum ibv_qp_type type)
{
	uint8_t opcode = w[3];
	unsigned at = 16 + (type == IBV_QPT_UD ? 48 : 0);

	memset(w + 4, 0, 3);
	if (opcode == MLX5_OPCODE_RDMA_WRITE || opcode == MLX5_OPCODE_RDMA_WRITE_IMM ||
	    opcode == MLX5_OPCODE_RDMA_READ || opcode == MLX5_OPCODE_ATOMIC_CS ||
	    opcode == MLX5_OPCODE_ATOMIC_FA)
		at += 16;
	if (opcode == MLX5_OPCODE_ATOMIC_CS || opcode == MLX5_OPCODE_ATOMIC_FA) {
		if (opcode == MLX5_OPCODE_ATOMIC_FA)
			memset(w + at + 8, 0, 8);
		at += 16;
	}
	if (at < ds * 16 && (w[at] & 0x80)) {
		uint32_t len = ((uint32_t)w[at] << 24 | (uint32_t)w[at + 1] << 16 | (uint32_t)w[at + 2] << 8 | w[at + 3]) & 0x3ff;

		memset(w + at + 4 + len, 0, ds * 16 - (at + 4 + len));
	}
}

static const char *hex64(const uint8_t *p)
{
	static char out[2][200];
	static int k;
	char *o = out[k ^= 1];

	for (int i = 0; i < 64; i++)
		sprintf(o + 3 * i, "%02x%c", p[i], i % 16 == 15 ? '|' : ' ');
	return o;
}

static void compare_rings(struct twin *t, uint32_t from, uint32_t to, enum ibv_qp_type type, int round)
{
	uint8_t a[1024], b[1024];

	for (uint32_t pi = from; pi != to;) {
		uint32_t off = (pi & (t->dv[LIB].sq.wqe_cnt - 1)) * 64;
		unsigned ds;

		ring_read(&t->dv[LIB], off, a, 16);
		ds = a[7] & 0x3f;
		if (!ds) {
			uint8_t f[64];

			ring_read(&t->dv[LIB], off, a, 64);
			ring_read(&t->dv[FV], off, f, 64);
			cr_assert_fail("round %d: libmlx5 WQE at %#x has ds 0 (from %#x to %#x)\nlib %s\nfv  %s", round, pi,
				       from, to, hex64(a), hex64(f));
		}
		ring_read(&t->dv[LIB], off, a, ds * 16);
		ring_read(&t->dv[FV], off, b, ds * 16);
		mask_wqe(a, ds, type);
		mask_wqe(b, ds, type);
		unsigned first = 0;

		while (first < ds * 16 && a[first] == b[first])
			first++;
		cr_assert_eq(first, ds * 16, "round %d: WQE at %#x (opcode %#x, ds %u) differs at byte %u: %02x vs %02x\n"
			     "lib %s\nfv  %s", round, pi, a[3], ds, first, a[first], b[first], hex64(a + first / 64 * 64),
			     hex64(b + first / 64 * 64));
		pi += (ds + 3) / 4;
	}
}

static uint32_t sq_dbr(const struct mlx5dv_qp *dv)
{
	return be32toh(dv->dbrec[MLX5_SND_DBR]) & 0xffff;
}

/*
 * Both twins' BlueFlame registers after a post. Each half starts with a control segment (an
 * 8-byte doorbell or a whole WQE copy): mask it like a WQE in the ring. A copy carries whole
 * 64-byte blocks; past ds the bytes are old ring contents the device never reads.
 */
static void compare_bf(struct twin *t, enum ibv_qp_type type, int round)
{
	uint8_t a[512], b[512];

	memcpy(a, t->dv[LIB].bf.reg, 512);
	memcpy(b, t->dv[FV].bf.reg, 512);
	for (int half = 0; half < 512; half += 256) {
		unsigned ds = a[half + 7] & 0x3f;

		if (ds * 16 > 256)
			ds = 1;
		mask_wqe(a + half, ds, type);
		mask_wqe(b + half, ds, type);
		memset(a + half + ds * 16, 0, 256 - ds * 16);
		memset(b + half + ds * 16, 0, 256 - ds * 16);
	}
	int first = 0;

	while (first < 512 && a[first] == b[first])
		first++;
	cr_assert_eq(first, 512, "round %d: BlueFlame writes differ at +%#x: libmlx5 %02x, fastverbs %02x",
		     round, first, first < 512 ? a[first] : 0, first < 512 ? b[first] : 0);
}

/* Poll n libmlx5 completions and n fastverbs completions and compare them in order. */
static int compare_completions(struct twin *t, int round)
{
	struct ibv_wc wa[64], wb[64];
	int na = 0, nb = 0, errors = 0;
	struct timespec t0;

	fvsim_run_until_idle();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int ra = ibv_poll_cq(t->cq[LIB], 64 - na, wa + na);
		int rb = fv_poll_cq(&t->fc, 64 - nb, wb + nb);

		cr_assert(ra >= 0 && rb >= 0, "round %d: poll failed (%d, %d)", round, ra, rb);
		na += ra;
		nb += rb;
		if (ra == 0 && rb == 0 && !fvsim_run_until_idle())
			break;
		cr_assert(simt_ms_since(&t0) < SIMT_WAIT_MS, "round %d: completions never settle", round);
	}
	cr_assert_eq(na, nb, "round %d: libmlx5 gave %d completions, fastverbs %d", round, na, nb);
	for (int i = 0; i < na; i++) {
		cr_assert_eq(wa[i].wr_id, wb[i].wr_id, "round %d, completion %d: wr_id", round, i);
		cr_assert_eq(wa[i].status, wb[i].status, "round %d, completion %d: status %s vs %s", round, i,
			     ibv_wc_status_str(wa[i].status), ibv_wc_status_str(wb[i].status));
		if (wa[i].status == IBV_WC_SUCCESS) {
			cr_assert_eq(wa[i].opcode, wb[i].opcode, "round %d, completion %d: opcode", round, i);
			/* libmlx5 sets byte_len only for READ, atomics and receives (SEND/WRITE: untouched). */
			if (wa[i].opcode == IBV_WC_RDMA_READ || wa[i].opcode == IBV_WC_COMP_SWAP ||
			    wa[i].opcode == IBV_WC_FETCH_ADD || (wa[i].opcode & IBV_WC_RECV))
				cr_assert_eq(wa[i].byte_len, wb[i].byte_len, "round %d, completion %d: byte_len %u vs %u",
					     round, i, wa[i].byte_len, wb[i].byte_len);
			cr_assert_eq(wa[i].wc_flags, wb[i].wc_flags, "round %d, completion %d: flags", round, i);
		} else {
			cr_assert_eq(wa[i].vendor_err, wb[i].vendor_err);
			errors++;
		}
	}
	return errors;
}

/* Drain what the sinks received and give them their receive buffers back. */
static void sinks_settle(struct env *e, struct twin *t)
{
	struct ibv_wc wc[64];

	for (int s = LIB; s <= FV; s++) {
		int n;

		while ((n = ibv_poll_cq(t->sink_cq[s], 64, wc)) > 0)
			t->sink_posted[s] -= (uint32_t)n;
		sink_fill(e, t, s);
	}
}

struct stats { int refused_both, cut_fv, posted, errored; };

/*
 * Post list l on both twins and compare what each library did: return code, *bad_wr,
 * doorbell record, WQE bytes, BlueFlame bytes. Returns libmlx5's return code.
 */
static int post_round(struct twin *t, struct wrl *l, enum ibv_qp_type type, int round, struct stats *st)
{
	struct ibv_send_wr *bad[2] = { NULL, NULL };
	uint32_t before = sq_dbr(&t->dv[LIB]);
	int rc[2];

	cr_assert_eq(sq_dbr(&t->dv[FV]), before, "round %d: twins out of step", round);
	memset(t->dv[LIB].bf.reg, 0, 512);
	memset(t->dv[FV].bf.reg, 0, 512);
	for (int i = 0; i < l->n && type == IBV_QPT_UD; i++)
		l->wr[i].wr.ud.remote_qpn = t->sink[LIB]->qp_num;	/* one sink: same AV bytes */
	if (l->cut == 0) {
		rc[LIB] = 0;
	} else if (l->cut < l->n) {	/* libmlx5 gets the list up to the WR fastverbs refuses */
		l->wr[l->cut - 1].next = NULL;
		rc[LIB] = ibv_post_send(t->qp[LIB], l->wr, &bad[LIB]);
		l->wr[l->cut - 1].next = &l->wr[l->cut];
	} else {
		rc[LIB] = ibv_post_send(t->qp[LIB], l->wr, &bad[LIB]);
	}
	rc[FV] = fv_post_send(&t->fq, l->wr, &bad[FV]);

	int lib_bad = rc[LIB] ? (int)(bad[LIB] - l->wr) : -1, fv_bad = rc[FV] ? (int)(bad[FV] - l->wr) : -1;

	if (getenv("DIFF_TRACE")) {
		fprintf(stderr, "round %d: %#x -> %#x/%#x rc %d/%d bad %d/%d cut %d:", round, before,
			sq_dbr(&t->dv[LIB]), sq_dbr(&t->dv[FV]), rc[LIB], rc[FV], lib_bad, fv_bad, l->cut);
		for (int i = 0; i < l->n; i++) {
			uint32_t tot = 0;

			for (int k = 0; k < l->wr[i].num_sge && k < 20; k++)
				tot += l->wr[i].sg_list[k].length;
			fprintf(stderr, " [op %d fl %#x nsge %d len %u]", l->wr[i].opcode, l->wr[i].send_flags,
				l->wr[i].num_sge, tot);
		}
		fprintf(stderr, "\n");
	}

	if (l->cut < l->n && lib_bad < 0) {
		/* fastverbs stops at the cut with its documented errno; libmlx5 posted the same before it. */
		cr_assert_eq(fv_bad, l->cut, "round %d: fastverbs should refuse WR %d (got %d)", round, l->cut, fv_bad);
		cr_assert_eq(rc[FV], l->cut_errno, "round %d: fastverbs errno %d", round, rc[FV]);
		st->cut_fv++;
	} else {
		cr_assert_eq(rc[LIB], rc[FV], "round %d: libmlx5 returned %d, fastverbs %d (bad WR %d vs %d)",
			     round, rc[LIB], rc[FV], lib_bad, fv_bad);
		cr_assert_eq(lib_bad, fv_bad, "round %d: *bad_wr is WR %d for libmlx5, %d for fastverbs",
			     round, lib_bad, fv_bad);
		st->refused_both += rc[LIB] != 0;
	}
	uint32_t after = sq_dbr(&t->dv[LIB]);

	cr_assert_eq(sq_dbr(&t->dv[FV]), after, "round %d: doorbell record %#x vs %#x", round, after,
		     sq_dbr(&t->dv[FV]));
	compare_rings(t, before, after, type, round);
	/* libmlx5 rings with a failed WR's half-built ctrl when an inline WR fails after others (README). */
	if (!(rc[LIB] == ENOMEM && lib_bad > 0 && (l->wr[lib_bad].send_flags & IBV_SEND_INLINE)))
		compare_bf(t, type, round);
	st->posted += after != before;
	return rc[LIB] | rc[FV];
}

/* A valid, signaled, zero-length WR that retires everything before it on both twins. */
static void make_closing(struct env *e, struct wrl *l, enum ibv_qp_type type)
{
	memset(l->wr, 0, sizeof(l->wr[0]));
	l->n = l->cut = 1;
	l->wr[0].wr_id = 0xc105e;
	l->wr[0].opcode = type == IBV_QPT_UD ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
	l->wr[0].send_flags = IBV_SEND_SIGNALED;
	if (type == IBV_QPT_UD) {
		l->wr[0].wr.ud.ah = e->ah;
		l->wr[0].wr.ud.remote_qkey = QKEY;
	} else {
		l->wr[0].wr.rdma.remote_addr = (uintptr_t)e->remote;
		l->wr[0].wr.rdma.rkey = e->remote_mr->rkey;
	}
}

static void run(const struct caps *c, uint64_t seed)
{
	struct env e = { .seed = seed };
	struct twin t;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct wrl l;
	struct stats st = { 0 };

	fvsim_set_step_mode(1);
	simt_open(&e.d, 0);
	e.local = aligned_alloc(4096, BUF_SIZE);
	e.remote = aligned_alloc(4096, BUF_SIZE);
	e.sinkbuf = aligned_alloc(4096, (size_t)SINK_RECVS * RECV_SIZE);
	e.local_mr = simt_mr(&e.d, e.local, BUF_SIZE, SIMT_ACCESS_ALL);
	e.remote_mr = simt_mr(&e.d, e.remote, BUF_SIZE, SIMT_ACCESS_ALL);
	e.sink_mr = simt_mr(&e.d, e.sinkbuf, (size_t)SINK_RECVS * RECV_SIZE, SIMT_ACCESS_ALL);
	e.ah = ibv_create_ah(e.d.pd, &(struct ibv_ah_attr){ .dlid = e.d.lid, .port_num = 1 });
	cr_assert(e.ah);
	twin_open(&e, &t, c);
	cr_assert_eq(ibv_query_qp(t.qp[LIB], &attr, IBV_QP_CAP, &init), 0);

	for (int round = 0; round < ROUNDS; round++) {
		make_list(&e, &l, c->type, &attr.cap);
		int rc = post_round(&t, &l, c->type, round, &st);

		if (rc || l.cut < l.n) {	/* what was posted may end unsignaled: close it signaled */
			make_closing(&e, &l, c->type);
			post_round(&t, &l, c->type, round, &st);
		}
		if (compare_completions(&t, round)) {	/* an error moved both twins to ERROR: start again */
			st.errored++;
			twin_close(&t);
			twin_open(&e, &t, c);
		}
		sinks_settle(&e, &t);
	}
	cr_log_info("%s sge %u inline %u sig_all %d: %d rounds, %d posted, %d refused alike, %d refused by "
		    "fastverbs only (documented), %d ended in error", c->type == IBV_QPT_RC ? "RC" :
		    c->type == IBV_QPT_UC ? "UC" : "UD", attr.cap.max_send_sge, attr.cap.max_inline_data,
		    c->sig_all, ROUNDS, st.posted, st.refused_both, st.cut_fv, st.errored);
	cr_assert_gt(st.posted, ROUNDS / 2, "too few rounds posted anything");
	cr_assert_gt(st.refused_both, 0, "no shared refusal exercised");
	cr_assert_gt(st.cut_fv, 0, "no deliberate difference exercised");
	twin_close(&t);
	ibv_destroy_ah(e.ah);
	ibv_dereg_mr(e.local_mr);
	ibv_dereg_mr(e.remote_mr);
	ibv_dereg_mr(e.sink_mr);
	free(e.local);
	free(e.remote);
	free(e.sinkbuf);
	simt_close(&e.d);
}

Test(sim_diff, rc_1sge_no_inline)  { run(&(struct caps){ IBV_QPT_RC, 64, 1, 0, 0 }, 1); }
Test(sim_diff, rc_4sge_inline64)   { run(&(struct caps){ IBV_QPT_RC, 64, 4, 64, 0 }, 2); }
Test(sim_diff, rc_16sge_inline256_sig_all) { run(&(struct caps){ IBV_QPT_RC, 256, 16, 256, 1 }, 3); }
Test(sim_diff, uc_4sge_inline64)   { run(&(struct caps){ IBV_QPT_UC, 64, 4, 64, 0 }, 4); }
Test(sim_diff, ud_1sge_inline64)   { run(&(struct caps){ IBV_QPT_UD, 64, 1, 64, 0 }, 5); }
Test(sim_diff, ud_4sge_inline256)  { run(&(struct caps){ IBV_QPT_UD, 1024, 4, 256, 0 }, 6); }
