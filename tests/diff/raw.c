/*
 * Differential test on the software device, raw Ethernet: two RAW_PACKET QPs of one geometry,
 * one posted by libmlx5 (ibv_post_send), one by fastverbs (fv_post_send), get the same seeded
 * random WR lists: SEND and TSO, IBV_SEND_IP_CSUM, IBV_SEND_INLINE, SGE lists whose first
 * pieces the inline header takes whole or in part, empty SGEs, TSO headers of every TCP
 * header size and some outside [14, max_tso_header], too many SGEs, too much inline data,
 * frames shorter than the inline header. Small rings make the WQEs run across the ring end.
 * Each round both return the same errno for the same WR, their doorbell records agree and
 * the WQEBBs they wrote are equal byte for byte; every frame sent completes successfully.
 *
 * Between rounds both rings are drained and cleared (no WQE is outstanding then, so the
 * device reads none of it): bytes neither writes compare equal, and what libmlx5 leaves of a
 * refused WR (README, Differences) does not leak into the next round's comparison. Not
 * generated: a TSO header across the ring end (libmlx5 44 then puts the data segments 32
 * bytes past its ds: tests/e2e/raw.c shows fastverbs there), and a TSO header with
 * inline data ending right at the ring end (libmlx5 writes past the ring).
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <fastverbs/fastverbs.h>

#include "memqp.h"
#include "sim-util.h"

#define ROUNDS   20000
#define MAX_LIST 4
#define BUF_SIZE (1u << 16)
#define MAX_HDR  130

struct twin {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct mlx5dv_qp dv;
	struct fv_cq fcq;	/* the fastverbs twin's */
	struct fv_raw raw;
};

struct env {
	struct simt_dev d;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint64_t rng;
	struct twin lib, fv;
	struct ibv_qp_cap cap;
};

static uint64_t rnd(struct env *e, uint64_t n)
{
	e->rng = e->rng * 6364136223846793005ull + 1442695040888963407ull;
	return (e->rng >> 33) % n;
}

static void twin_open(struct env *e, struct twin *t, uint32_t wr, uint32_t sge, uint32_t inl, bool fv)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = wr, .max_recv_wr = 1, .max_send_sge = sge, .max_recv_sge = 1,
			 .max_inline_data = inl },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
		.pd = e->d.pd, .max_tso_header = 128,
	};
	struct ibv_qp_attr m;
	const char *what;
	struct ibv_qp_init_attr init;
	struct mlx5dv_obj o;

	t->cq = simt_cq(&e->d, 256);
	a.send_cq = a.recv_cq = t->cq;
	t->qp = ibv_create_qp_ex(e->d.ctx, &a);
	cr_assert(t->qp, "ibv_create_qp_ex(RAW_PACKET): %s", strerror(errno));
	cr_assert_eq(setup_raw_ready(t->qp, 1, &what), 0, "ibv_modify_qp(%s)", what);
	memset(&o, 0, sizeof(o));
	o.qp.in = t->qp;
	o.qp.out = &t->dv;
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	cr_assert_eq(ibv_query_qp(t->qp, &m, IBV_QP_CAP, &init), 0);
	e->cap = init.cap;
	if (fv) {
		cr_assert_eq(fv_raw_init(&t->raw, t->qp, 128), 0);
		cr_assert_eq(fv_cq_init(&t->fcq, t->cq), 0);
	}
}

static void twin_close(struct twin *t, bool fv)
{
	if (fv) {
		fv_qp_cleanup(&t->raw.qp);
		fv_cq_cleanup(&t->fcq);
	}
	cr_assert_eq(ibv_destroy_qp(t->qp), 0);
	cr_assert_eq(ibv_destroy_cq(t->cq), 0);
}

/* A TCP header of n bytes (54 + options, n - 54 a multiple of 4) at p; any other n: junk. */
static void tcp_header(uint8_t *p, unsigned n)
{
	static const uint8_t eth[14] = { 2, 0, 0, 0, 0, 0x77, 2, 0, 0, 0, 0, 1, 0x08, 0x00 };

	memset(p, 0, n);
	memcpy(p, eth, n < 14 ? n : 14);
	if (n < 54)
		return;
	p[14] = 0x45, p[22] = 64, p[23] = 6;
	p[26] = 10, p[29] = 1, p[30] = 10, p[33] = 9;
	p[34] = 0x30, p[35] = 0x39, p[37] = 80;
	p[46] = (uint8_t)(((n - 34) / 4) << 4), p[47] = 0x18, p[48] = 0xff;
	for (unsigned i = 54; i < n; i++)
		p[i] = 1;
}

/* Where the TSO header of n bytes lives in the buffer. */
static uint8_t *hdr_of(struct env *e, unsigned n)
{
	return e->buf + 0x8000 + n * 192;
}

struct wrl {
	struct ibv_send_wr wr[MAX_LIST];
	struct ibv_sge sge[MAX_LIST][8];
	int n;
};

/*
 * A random WR: SEND or (first in the list only) TSO, with SGEs into the buffer. Frames stay
 * under the port MTU; the frames' first bytes are the buffer's (a MAC no rule steers).
 */
static void make_wr(struct env *e, struct wrl *l, int i, uint32_t pi, uint32_t mask)
{
	struct ibv_send_wr *w = &l->wr[i];
	struct ibv_sge *s = l->sge[i];
	uint32_t nmax = e->cap.max_send_sge, total = 0;
	int n = 1 + (int)rnd(e, nmax);
	bool tso = i == 0 && rnd(e, 3) == 0;

	memset(w, 0, sizeof(*w));
	w->wr_id = 0x1000 + (uint64_t)i;
	w->opcode = IBV_WR_SEND;
	if (rnd(e, 40) == 0)
		n = rnd(e, 2) ? (int)nmax + 1 : 0;	/* too many: ENOMEM; none: EINVAL */
	for (int k = 0; k < n && k < 8; k++) {
		uint32_t len = rnd(e, 12) == 0 ? (uint32_t)rnd(e, 24) : (uint32_t)rnd(e, 220);

		if (rnd(e, 12) == 0)
			len = 0;
		if (k == 0 && !tso && rnd(e, 6) == 0)
			len = 18;			/* the header takes the first SGE whole */
		if (total + len > 1000)
			len = 0;			/* frames stay under the port MTU */
		s[k] = (struct ibv_sge){ (uintptr_t)(e->buf + rnd(e, 0x7000)), len, e->mr->lkey };
		total += len;
	}
	w->sg_list = s;
	w->num_sge = n;
	if (rnd(e, 3) == 0) {
		w->send_flags |= IBV_SEND_INLINE;
		if (rnd(e, 8) == 0 && n >= 1 && n <= 8)
			s[0].length += e->cap.max_inline_data;	/* inline too long: ENOMEM */
	}
	if (rnd(e, 2))
		w->send_flags |= IBV_SEND_IP_CSUM;
	if (rnd(e, 3) == 0)
		w->send_flags |= IBV_SEND_SIGNALED;
	if (tso) {
		unsigned h = rnd(e, 12) == 0 ? (unsigned[]){ 10, 13, 129, 130 }[rnd(e, 4)] :
			     54 + 4 * (unsigned)rnd(e, 11);
		bool inl = w->send_flags & IBV_SEND_INLINE;
		uint32_t end = (pi & mask) * 64 + 16 + 16 + 16 * ((h - 2 + 15) / 16);

		w->opcode = IBV_WR_TSO;
		w->tso.hdr = hdr_of(e, h);
		w->tso.hdr_sz = (uint16_t)h;
		w->tso.mss = (uint16_t)(64 + rnd(e, 900));
		if ((pi & mask) == mask && h >= 14 && h <= 128)
			w->opcode = IBV_WR_SEND;	/* header across the ring end: libmlx5 44's bug */
		else if (inl && end == (mask + 1) * 64)
			w->send_flags &= ~(unsigned)IBV_SEND_INLINE;	/* libmlx5 writes past the ring */
	}
}

/* The list, for a failure's message. */
static const char *show(const struct wrl *l)
{
	static char out[2048];
	size_t n = 0;

	for (int i = 0; i < l->n; i++) {
		const struct ibv_send_wr *w = &l->wr[i];

		n += (size_t)snprintf(out + n, sizeof(out) - n, "\n  %s flags 0x%x hdr %u mss %u sges", w->opcode == IBV_WR_TSO ?
				      "TSO" : "SEND", w->send_flags, w->tso.hdr_sz, w->tso.mss);
		for (int k = 0; k < w->num_sge && k < 8; k++)
			n += (size_t)snprintf(out + n, sizeof(out) - n, " %u", w->sg_list[k].length);
	}
	return out;
}

/* Completions of a posted list: the signaled WRs before bad (all, bad NULL). */
static int signaled(const struct wrl *l, const struct ibv_send_wr *bad)
{
	int n = 0;

	for (int i = 0; i < l->n && &l->wr[i] != bad; i++)
		n += !!(l->wr[i].send_flags & IBV_SEND_SIGNALED);
	return n;
}

static void drain_lib(struct twin *t, int n, const struct wrl *l)
{
	struct ibv_wc wc[8];
	int got = 0;

	while (got < n) {
		int r = simt_poll(t->cq, wc, n - got > 8 ? 8 : n - got);

		cr_assert_gt(r, 0, "libmlx5 twin: %d of %d completions", got, n);
		for (int i = 0; i < r; i++)
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "libmlx5 twin: %s%s", ibv_wc_status_str(wc[i].status), show(l));
		got += r;
	}
}

static void drain_fv(struct twin *t, int n)
{
	struct ibv_wc wc[8];
	struct timespec t0;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		int r = fv_poll_cq(&t->fcq, n - got > 8 ? 8 : n - got, wc);

		cr_assert_geq(r, 0);
		for (int i = 0; i < r; i++)
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "fastverbs twin: %s", ibv_wc_status_str(wc[i].status));
		got += r;
		if (got < n) {
			cr_assert_lt(simt_ms_since(&t0), SIMT_WAIT_MS, "fastverbs twin: %d of %d completions", got, n);
			simt_kick();
		}
	}
}

static uint32_t dbr(const struct twin *t)
{
	return be32toh(t->dv.dbrec[MLX5_SND_DBR]) & 0xffff;
}

/*
 * Post list l on both twins and compare: errno, bad_wr, doorbell record, the WQEBBs written
 * (but for the QPN in control segments); then wait for the completions. Returns the errno.
 */
static int post_both(struct env *e, struct wrl *l, int round, uint32_t mask, int *posted, int *wraps)
{
	struct ibv_send_wr *bad_lib = NULL, *bad_fv = NULL;
	uint32_t before = dbr(&e->lib), pi32 = e->fv.raw.qp.sq.pi;
	int rl, rf;

	cr_assert_eq(before, dbr(&e->fv), "round %d: producers differ", round);
	rl = ibv_post_send(e->lib.qp, l->wr, &bad_lib);
	rf = fv_post_send(&e->fv.raw.qp, l->wr, &bad_fv);
	cr_assert_eq(rf, rl, "round %d: fastverbs %d, libmlx5 %d%s", round, rf, rl, show(l));
	cr_assert_eq(bad_fv, bad_lib, "round %d: bad_wr differs", round);
	cr_assert_eq(dbr(&e->fv), dbr(&e->lib), "round %d: doorbell records %#x / %#x", round, dbr(&e->fv),
		     dbr(&e->lib));
	for (uint32_t b = before; b != dbr(&e->lib); b = (b + 1) & 0xffff) {
		const uint8_t *x = (uint8_t *)e->lib.dv.sq.buf + (b & mask) * 64;
		uint8_t y[64];
		__be32 ql = htobe32(e->lib.qp->qp_num << 8), qf = htobe32(e->fv.qp->qp_num << 8);

		memcpy(y, (uint8_t *)e->fv.dv.sq.buf + (b & mask) * 64, 64);
		if (!memcmp(y + 4, &qf, 3) && !memcmp(x + 4, &ql, 3))
			memcpy(y + 4, &ql, 3);	/* a control segment: the twins' QPNs differ */
		if (y[11] == (x[11] | FV_SIGNALED) && fv__sq_forced_wqe(&e->fv.raw.qp.sq, pi32 + ((b - before) & 0xffff)))
			y[11] = x[11];	/* fastverbs asked for a completion to end a long unsignaled run */
		if (memcmp(x, y, 64)) {
			char lib[256];

			snprintf(lib, sizeof(lib), "%s", hexstr(x, 64));	/* hexstr: one static buffer */
			cr_assert_fail("round %d: WQEBB %u differs\nlibmlx5   %s\nfastverbs %s%s", round, b, lib,
				       hexstr(y, 64), show(l));
		}
		*wraps += (b & mask) == mask && ((b + 1) & 0xffff) != dbr(&e->lib);	/* more after the end */
	}
	*posted += (int)((dbr(&e->lib) - before) & 0xffff);
	drain_lib(&e->lib, signaled(l, bad_lib), l);
	drain_fv(&e->fv, signaled(l, bad_fv));
	return rl;
}

static void run(uint32_t wr, uint32_t sge, uint32_t inl, uint64_t seed)
{
	struct env e;
	int posted = 0, refused = 0, tso = 0, wraps = 0;	/* wraps: posts that ran past the ring end */

	memset(&e, 0, sizeof(e));
	e.rng = seed;
	simt_sysfs(1, 1, "eth");
	simt_open(&e.d, 0);
	fvsim_set_step_mode(1);
	e.buf = aligned_alloc(4096, BUF_SIZE);
	for (uint32_t i = 0; i < BUF_SIZE; i++)
		e.buf[i] = (uint8_t)(i * 7 + 3);
	for (unsigned h = 10; h <= MAX_HDR; h++)
		tcp_header(hdr_of(&e, h), h);
	e.mr = simt_mr(&e.d, e.buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	twin_open(&e, &e.lib, wr, sge, inl, false);
	twin_open(&e, &e.fv, wr, sge, inl, true);
	cr_assert_eq(e.lib.dv.sq.wqe_cnt, e.fv.dv.sq.wqe_cnt);
	uint32_t mask = e.lib.dv.sq.wqe_cnt - 1, bytes = e.lib.dv.sq.wqe_cnt * 64;

	for (int round = 0; round < ROUNDS; round++) {
		struct wrl l;
		int rl;

		fvsim_run_until_idle();		/* nothing outstanding: the device reads none of the rings */
		memset(e.lib.dv.sq.buf, 0, bytes);
		memset(e.fv.dv.sq.buf, 0, bytes);
		l.n = 1 + (int)rnd(&e, MAX_LIST);
		for (int i = 0; i < l.n; i++) {
			make_wr(&e, &l, i, dbr(&e.lib), mask);
			l.wr[i].next = i + 1 < l.n ? &l.wr[i + 1] : NULL;
		}
		l.wr[l.n - 1].send_flags |= IBV_SEND_SIGNALED;	/* the round's end completes */
		tso += l.wr[0].opcode == IBV_WR_TSO;
		rl = post_both(&e, &l, round, mask, &posted, &wraps);
		refused += rl != 0;
		if (rl) {	/* what was posted before the refused WR may not ask for a completion */
			struct ibv_sge s = { (uintptr_t)e.buf, 64, e.mr->lkey };

			l.n = 1;
			memset(&l.wr[0], 0, sizeof(l.wr[0]));
			l.wr[0].wr_id = 0x2000;
			l.wr[0].opcode = IBV_WR_SEND;
			l.wr[0].send_flags = IBV_SEND_SIGNALED;
			l.wr[0].sg_list = &s;
			l.wr[0].num_sge = 1;
			cr_assert_eq(post_both(&e, &l, round, mask, &posted, &wraps), 0);
		}
	}
	cr_log_info("raw diff (%u WRs, %u SGEs, %u inline): %d rounds, %d WQEBBs, %d lists refused, %d TSO, "
		    "%d posts past the ring end", wr, sge, inl, ROUNDS, posted, refused, tso, wraps);
	cr_assert_gt(wraps, 0);
	cr_assert_gt(refused, 0);
	twin_close(&e.fv, true);
	twin_close(&e.lib, false);
	ibv_dereg_mr(e.mr);
	free(e.buf);
	simt_close(&e.d);
}

TestSuite(sim_diff_raw, .timeout = 300);

Test(sim_diff_raw, small_ring_4sge_inline128) { run(4, 4, 128, 11); }
Test(sim_diff_raw, ring_64_2sge_inline64)     { run(64, 2, 64, 12); }
Test(sim_diff_raw, ring_16_8sge_no_inline)    { run(16, 8, 0, 13); }
