/*
 * Every refusal path of fv_post_send and of the typed builders (docs/design.md §3.4,
 * docs/compat.md §2): the errno libmlx5 gives (or the documented better one), *bad_wr at
 * the refused WR, the WRs before it posted and rung, and the refused WR leaving no trace.
 *
 * "No trace" is checked against a twin QP: both start byte-identical (rings and BlueFlame
 * register filled with the same pattern), the twin gets only the WRs that should have been
 * posted, and afterwards the two must not differ anywhere a device or a later post could
 * look: the whole SQ ring, the doorbell record pair, the 512-byte BlueFlame register, the
 * producer/doorbell/signalling counters, the BF half, the cached fence, wr_id and end (with
 * the asked-for-completion flag) per slot.
 */
#include <limits.h>
#include <criterion/criterion.h>
#include <fastverbs/compat/post_send.h>
#include "memqp.h"
#include "wqe-expect.h"

#define QPN   0x000777u
#define RADDR 0x7000000000001000ull
#define RKEY  0x0000abcdu
#define LKEY  0x00001234u
#define MAX_INLINE 60u
#define MAX_SGE    4

static uint8_t buf[4096];	/* SGE target; inline payloads are read from it */

static struct ibv_sge sge(unsigned i, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)(buf + 64 * i), .length = len, .lkey = LKEY };
}

static void poison(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed ^ (i * 29) ^ (i >> 8));
}

/* a gets the WRs under test, b only those that should have been posted. */
struct pair {
	struct memqp a, b;
	struct fv_ah ah;
};

static const char *const qpt_name[FV__QPT_COUNT] = { "RC", "UC", "UD", "XRC", "RAW" };

static struct memqp_cfg cfg(enum fv_qpt qpt, uint32_t wqebbs)
{
	return (struct memqp_cfg){ .qpt = qpt, .qpn = QPN, .sq_wqe_cnt = wqebbs, .bf_size = 256,
		.max_inline = MAX_INLINE, .max_send_sge = MAX_SGE, .start_pi = 0xfffa };
}

static void pair_open(struct pair *p, const struct memqp_cfg *c)
{
	memset(p, 0, sizeof(*p));
	memqp_init(&p->a, c);
	memqp_init(&p->b, c);
	for (struct memqp *m = &p->a; m; m = m == &p->a ? &p->b : NULL) {
		poison(m->sq, m->sq_bytes, 0xa5);
		poison(m->bf, 512, 0x3c);
		/* a stand-in ibv_ah: seed the QP's one-entry AV cache with it (as tests/unit/vectors.c) */
		m->qp.ah_cache_key = (struct ibv_ah *)&p->ah;
		m->qp.ah_cache_av = &p->ah.av;
	}
	struct mlx5_wqe_av av;

	memset(&av, 0, sizeof(av));
	av.rlid = htobe16(9);
	fv__ah_fill(&p->ah, &av);	/* as fv_ah_init */
}

static void pair_close(struct pair *p)
{
	memqp_free(&p->a);
	memqp_free(&p->b);
}

/* a and b must be indistinguishable. */
static void assert_same(const struct pair *p, const char *what)
{
	const struct memqp *a = &p->a, *b = &p->b;
	const struct fv__sq *x = &a->qp.sq, *y = &b->qp.sq;
	const char *d;

	d = x_diff(a->sq, b->sq, a->sq_bytes);
	cr_assert(!d, "%s: SQ ring written\n%s", what, d ? d : "");
	cr_assert_arr_eq(a->dbrec, b->dbrec, 2 * sizeof(__be32), "%s: doorbell record %#x, want %#x",
			 what, memqp_sq_dbr(a), memqp_sq_dbr(b));
	d = x_diff(a->bf, b->bf, 512);
	cr_assert(!d, "%s: BlueFlame register written\n%s", what, d ? d : "");
	cr_assert_eq(x->pi, y->pi, "%s: pi %#x, want %#x", what, x->pi, y->pi);
	cr_assert_eq(x->ci, y->ci, "%s: ci", what);
	cr_assert_eq(x->rung_pi, y->rung_pi, "%s: rung_pi", what);
	cr_assert_eq(x->last_pi, y->last_pi, "%s: last_pi", what);
	cr_assert_eq(x->sig_pi, y->sig_pi, "%s: sig_pi (unsignaled run)", what);
	cr_assert_eq(x->lim, y->lim, "%s: lim (fast-path limit)", what);
	cr_assert_eq(x->bf->cur - (uintptr_t)a->bf, y->bf->cur - (uintptr_t)b->bf, "%s: BF half", what);
	cr_assert_eq(x->fence_cache, y->fence_cache, "%s: cached fence", what);
	cr_assert_arr_eq(x->wr_id, y->wr_id, (x->mask + 1) * sizeof(*x->wr_id), "%s: wr_id table", what);
	cr_assert_arr_eq(x->meta, y->meta, (x->mask + 1) * sizeof(*x->meta),
			 "%s: per-slot WQE ends and forced-completion marks", what);
}

/* A WR for op on a QP of type qpt, with valid fields for everything but what the test breaks. */
static void wr_init(struct ibv_send_wr *w, enum fv_qpt qpt, enum ibv_wr_opcode op,
		    struct ibv_sge *sgl, int n, unsigned send_flags, struct fv_ah *ah)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = 0x5000u + (unsigned)op;
	w->opcode = op;
	w->sg_list = sgl;
	w->num_sge = n;
	w->send_flags = send_flags;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w->wr.atomic.remote_addr = RADDR;
		w->wr.atomic.rkey = RKEY;
		w->wr.atomic.compare_add = 1;
		w->wr.atomic.swap = 2;
	} else {
		w->wr.rdma.remote_addr = RADDR;
		w->wr.rdma.rkey = RKEY;
	}
	if (qpt == FV_QPT_UD) {
		w->wr.ud.ah = (struct ibv_ah *)ah;
		w->wr.ud.remote_qpn = 0x42;
		w->wr.ud.remote_qkey = 0x11111111;
	}
	if (qpt == FV_QPT_XRC)
		w->qp_type.xrc.remote_srqn = 0x99;
}

/* Link n WRs into a chain. */
static void chain(struct ibv_send_wr *w, int n)
{
	for (int i = 0; i < n; i++)
		w[i].next = i + 1 < n ? &w[i + 1] : NULL;
}

/*
 * Post the chain at list on a: it must fail with err at its WR number k. The WRs before it
 * go to b (they must have been posted and rung exactly so); then a and b must be the same.
 */
static void expect_refusal(struct pair *p, struct ibv_send_wr *list, int k, int err, const char *what)
{
	struct ibv_send_wr *bad = NULL, *w = list, *prev = NULL;

	for (int i = 0; i < k; i++) {
		prev = w;
		w = w->next;
	}
	int got = fv_post_send(&p->a.qp, list, &bad);
	cr_assert_eq(got, err, "%s: fv_post_send returned %d (%s), want %d (%s)", what, got,
		     strerror(got), err, strerror(err));
	cr_assert_eq(bad, w, "%s: *bad_wr is not the refused WR", what);
	if (prev) {
		struct ibv_send_wr *b_bad = NULL;

		prev->next = NULL;
		cr_assert_eq(fv_post_send(&p->b.qp, list, &b_bad), 0, "%s: the prefix alone failed", what);
		prev->next = w;
	}
	assert_same(p, what);
	/* the doorbell record covers what was posted before the refused WR, nothing more */
	cr_assert_eq(memqp_sq_dbr(&p->a), p->a.qp.sq.pi & 0xffff, "%s: posted WRs not rung", what);
}

/* One WR, refused on its own: a must stay exactly as it was. */
static void expect_refused_alone(enum fv_qpt qpt, uint32_t wqebbs, struct ibv_send_wr *w, int err,
				 const char *what)
{
	struct pair p;
	struct memqp_cfg c = cfg(qpt, wqebbs);

	pair_open(&p, &c);
	if (qpt == FV_QPT_UD && w->wr.ud.ah == (struct ibv_ah *)1)	/* placeholder: this pair's AH */
		w->wr.ud.ah = (struct ibv_ah *)&p.ah;
	w->next = NULL;
	expect_refusal(&p, w, 0, err, what);
	pair_close(&p);
}

#define THE_AH ((struct fv_ah *)1)	/* expect_refused_alone swaps in the pair's AH */

/* ---- opcodes ---- */

/* Beyond the verbs table (12, 13, 14), ATOMIC_WRITE (15), >= 16, garbage: EINVAL everywhere. */
Test(send_refuse, bad_opcode_is_einval)
{
	static const unsigned ops[] = { 12, 13, 14, IBV_WR_ATOMIC_WRITE, 16, 17, 31, 255, 0x10000,
					0x7fffffff, 0xffffffffu };
	struct ibv_sge s = sge(0, 16);

	for (enum fv_qpt t = 0; t < FV__QPT_COUNT; t++)
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			struct ibv_send_wr w;
			char what[64];

			wr_init(&w, t, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, THE_AH);
			w.opcode = (enum ibv_wr_opcode)ops[i];
			snprintf(what, sizeof(what), "%s opcode %#x", qpt_name[t], ops[i]);
			expect_refused_alone(t, 64, &w, EINVAL, what);
		}
}

/* An operation the QP type does not allow: EINVAL before touching the ring (libmlx5 builds a
 * WQE the HCA fails; fastverbs refuses, as its typed API refuses at compile time). */
Test(send_refuse, op_not_allowed_for_qp_type_is_einval)
{
	static const struct { enum fv_qpt qpt; enum ibv_wr_opcode op; } k[] = {
		{ FV_QPT_UC, IBV_WR_RDMA_READ }, { FV_QPT_UC, IBV_WR_ATOMIC_CMP_AND_SWP },
		{ FV_QPT_UC, IBV_WR_ATOMIC_FETCH_AND_ADD },
		{ FV_QPT_UD, IBV_WR_RDMA_WRITE }, { FV_QPT_UD, IBV_WR_RDMA_WRITE_WITH_IMM },
		{ FV_QPT_UD, IBV_WR_RDMA_READ }, { FV_QPT_UD, IBV_WR_ATOMIC_CMP_AND_SWP },
		{ FV_QPT_UD, IBV_WR_ATOMIC_FETCH_AND_ADD }, { FV_QPT_UD, IBV_WR_SEND_WITH_INV },
		{ FV_QPT_UD, IBV_WR_LOCAL_INV }, { FV_QPT_UD, IBV_WR_BIND_MW },
		{ FV_QPT_RC, IBV_WR_TSO }, { FV_QPT_UC, IBV_WR_TSO }, { FV_QPT_UD, IBV_WR_TSO },
		{ FV_QPT_XRC, IBV_WR_TSO },
		{ FV_QPT_RC, IBV_WR_DRIVER1 }, { FV_QPT_UC, IBV_WR_DRIVER1 }, { FV_QPT_UD, IBV_WR_DRIVER1 },
		{ FV_QPT_XRC, IBV_WR_DRIVER1 },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct ibv_sge s = sge(0, 8);
		struct ibv_send_wr w;
		char what[64];

		wr_init(&w, k[i].qpt, k[i].op, &s, 1, 0, THE_AH);
		snprintf(what, sizeof(what), "%s opcode %d", qpt_name[k[i].qpt], k[i].op);
		expect_refused_alone(k[i].qpt, 64, &w, EINVAL, what);
		/* also with no SGE at all (TSO without data is what libmlx5 would build) */
		wr_init(&w, k[i].qpt, k[i].op, NULL, 0, 0, THE_AH);
		expect_refused_alone(k[i].qpt, 64, &w, EINVAL, what);
	}
}

/* Memory windows: a bind longer than 2 GiB (one KLM's limit) is libmlx5's EOPNOTSUPP and,
 * unlike libmlx5, leaves no fence for the next WQE; a bind without a window, or with a length
 * and no MR (libmlx5 dereferences both), is EINVAL. */
static struct ibv_mw the_mw = { .rkey = 0x4201, .type = IBV_MW_TYPE_2 };
static struct ibv_mr the_mr = { .lkey = LKEY };

static void bind_wr(struct ibv_send_wr *w, enum fv_qpt qpt, uint64_t len)
{
	wr_init(w, qpt, IBV_WR_BIND_MW, NULL, 0, IBV_SEND_SIGNALED, NULL);
	w->bind_mw.mw = &the_mw;
	w->bind_mw.rkey = 0x4202;
	w->bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = &the_mr, .addr = (uintptr_t)buf,
							  .length = len,
							  .mw_access_flags = IBV_ACCESS_REMOTE_READ };
}

Test(send_refuse, bind_mw_refusals)
{
	static const enum fv_qpt qpts[] = { FV_QPT_RC, FV_QPT_UC, FV_QPT_XRC };

	for (size_t i = 0; i < 3; i++) {
		struct ibv_send_wr w;
		char what[64];

		snprintf(what, sizeof(what), "%s bind of 2 GiB + 1", qpt_name[qpts[i]]);
		bind_wr(&w, qpts[i], (1ull << 31) + 1);
		expect_refused_alone(qpts[i], 64, &w, EOPNOTSUPP, what);
		/* too long and inline too long: the length is tested first, as libmlx5 does */
		struct ibv_sge big = { (uintptr_t)buf, 4096, LKEY };

		snprintf(what, sizeof(what), "%s bind of 2 GiB + 1, inline SGE too long", qpt_name[qpts[i]]);
		bind_wr(&w, qpts[i], (1ull << 31) + 1);
		w.send_flags |= IBV_SEND_INLINE;
		w.sg_list = &big;
		w.num_sge = 1;
		expect_refused_alone(qpts[i], 64, &w, EOPNOTSUPP, what);
		snprintf(what, sizeof(what), "%s bind without a window", qpt_name[qpts[i]]);
		bind_wr(&w, qpts[i], 4096);
		w.bind_mw.mw = NULL;
		expect_refused_alone(qpts[i], 64, &w, EINVAL, what);
		snprintf(what, sizeof(what), "%s bind without an MR", qpt_name[qpts[i]]);
		bind_wr(&w, qpts[i], 4096);
		w.bind_mw.bind_info.mr = NULL;
		expect_refused_alone(qpts[i], 64, &w, EINVAL, what);
	}
}

/* The typed builder refuses the same bind alike. */
Test(send_refuse, typed_bind_mw_over_2gib)
{
	struct pair p;
	struct memqp_cfg c = cfg(FV_QPT_RC, 64);
	struct ibv_mw_bind_info bi = { .mr = &the_mr, .addr = (uintptr_t)buf, .length = (1ull << 31) + 1 };

	pair_open(&p, &c);
	cr_assert_eq(fv_bind_mw((struct fv_rc *)&p.a.qp, 1, FV_SIGNALED, &the_mw, 0x4202, &bi), EOPNOTSUPP);
	assert_same(&p, "typed bind over 2 GiB");
	bi.length = 1ull << 31;	/* exactly 2 GiB is accepted */
	cr_assert_eq(fv_bind_mw((struct fv_rc *)&p.a.qp, 1, FV_SIGNALED, &the_mw, 0x4202, &bi), 0);
	pair_close(&p);
}

/* ---- scatter/gather ---- */

Test(send_refuse, too_many_sges_is_enomem)
{
	static const struct { enum fv_qpt qpt; enum ibv_wr_opcode op; } k[] = {
		{ FV_QPT_RC, IBV_WR_SEND }, { FV_QPT_RC, IBV_WR_RDMA_READ }, { FV_QPT_RC, IBV_WR_ATOMIC_CMP_AND_SWP },
		{ FV_QPT_UC, IBV_WR_RDMA_WRITE }, { FV_QPT_UD, IBV_WR_SEND_WITH_IMM }, { FV_QPT_XRC, IBV_WR_SEND },
	};
	struct ibv_sge s[64];

	for (unsigned i = 0; i < 64; i++)
		s[i] = sge(i, 8);
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		for (int n = MAX_SGE + 1; n <= 64; n += 59) {	/* max + 1, and far over */
			struct ibv_send_wr w;
			char what[64];

			wr_init(&w, k[i].qpt, k[i].op, s, n, 0, THE_AH);
			snprintf(what, sizeof(what), "%s opcode %d, %d SGEs", qpt_name[k[i].qpt], k[i].op, n);
			expect_refused_alone(k[i].qpt, 64, &w, ENOMEM, what);
			/* the SGE count is checked whether or not the payload goes inline */
			if (k[i].op == IBV_WR_SEND) {
				wr_init(&w, k[i].qpt, k[i].op, s, n, IBV_SEND_INLINE, THE_AH);
				expect_refused_alone(k[i].qpt, 64, &w, ENOMEM, what);
			}
		}
}

Test(send_refuse, negative_num_sge_is_einval)
{
	static const int counts[] = { -1, -2, INT_MIN };
	struct ibv_sge s = sge(0, 8);

	for (enum fv_qpt t = 0; t < FV__QPT_COUNT; t++)
		for (size_t i = 0; i < 3; i++) {
			struct ibv_send_wr w;
			char what[64];

			wr_init(&w, t, IBV_WR_SEND, &s, counts[i], 0, THE_AH);
			snprintf(what, sizeof(what), "%s num_sge %d", qpt_name[t], counts[i]);
			expect_refused_alone(t, 64, &w, EINVAL, what);
			wr_init(&w, t, IBV_WR_SEND, &s, counts[i], IBV_SEND_INLINE, THE_AH);
			expect_refused_alone(t, 64, &w, EINVAL, what);
		}
}

/* ---- inline ---- */

Test(send_refuse, inline_over_max_is_enomem)
{
	for (enum fv_qpt t = 0; t < FV_QPT_RAW; t++) {	/* raw Ethernet: tests/e2e/raw.c */
		struct ibv_sge one = sge(0, MAX_INLINE + 1);
		struct ibv_sge split[3] = { sge(0, 20), sge(1, 0), sge(2, MAX_INLINE - 19) };	/* 61 */
		/* 2 x 2 GiB: a 32-bit sum would wrap to 0 and build an empty inline WQE */
		struct ibv_sge huge[2] = { sge(0, 0x80000000u), sge(1, 0x80000000u) };
		struct ibv_send_wr w;
		char what[64];

		snprintf(what, sizeof(what), "%s inline %u", qpt_name[t], MAX_INLINE + 1);
		wr_init(&w, t, IBV_WR_SEND, &one, 1, IBV_SEND_INLINE, THE_AH);
		expect_refused_alone(t, 64, &w, ENOMEM, what);
		snprintf(what, sizeof(what), "%s inline 20+0+41", qpt_name[t]);
		wr_init(&w, t, IBV_WR_SEND_WITH_IMM, split, 3, IBV_SEND_INLINE | IBV_SEND_SIGNALED, THE_AH);
		expect_refused_alone(t, 64, &w, ENOMEM, what);
		snprintf(what, sizeof(what), "%s inline 2 x 2 GiB", qpt_name[t]);
		wr_init(&w, t, IBV_WR_SEND, huge, 2, IBV_SEND_INLINE, THE_AH);
		expect_refused_alone(t, 64, &w, ENOMEM, what);
	}
}

/* INLINE on an operation whose SGEs are a scatter list: EINVAL (libmlx5 would copy them). */
Test(send_refuse, inline_on_read_or_atomic_is_einval)
{
	static const enum fv_qpt qpts[] = { FV_QPT_RC, FV_QPT_XRC };
	static const enum ibv_wr_opcode ops[] = { IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
						  IBV_WR_ATOMIC_FETCH_AND_ADD };

	for (size_t i = 0; i < 2; i++)
		for (size_t j = 0; j < 3; j++) {
			struct ibv_sge s = sge(0, 8);
			struct ibv_send_wr w;
			char what[64];

			wr_init(&w, qpts[i], ops[j], &s, 1, IBV_SEND_INLINE, NULL);
			snprintf(what, sizeof(what), "%s opcode %d INLINE", qpt_name[qpts[i]], ops[j]);
			expect_refused_alone(qpts[i], 64, &w, EINVAL, what);
		}
}

/* ---- UD address handle ---- */

Test(send_refuse, ud_without_ah_is_einval)
{
	static const enum ibv_wr_opcode ops[] = { IBV_WR_SEND, IBV_WR_SEND_WITH_IMM };
	struct ibv_sge s = sge(0, 8);

	for (size_t i = 0; i < 2; i++) {
		struct ibv_send_wr w;

		wr_init(&w, FV_QPT_UD, ops[i], &s, 1, IBV_SEND_SIGNALED, NULL);
		expect_refused_alone(FV_QPT_UD, 64, &w, EINVAL, "UD, NULL ah");
		wr_init(&w, FV_QPT_UD, ops[i], &s, 1, IBV_SEND_INLINE, NULL);
		expect_refused_alone(FV_QPT_UD, 64, &w, EINVAL, "UD inline, NULL ah");
	}
}

/* ---- SQ space ---- */

/* Fill the ring of both QPs with n one-WQEBB NOPs (typed, rung). */
static void fill_nops(struct pair *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		cr_assert_eq(fv_nop((struct fv_rc *)&p->a.qp, 100 + i, FV_SIGNALED), 0);
		cr_assert_eq(fv_nop((struct fv_rc *)&p->b.qp, 100 + i, FV_SIGNALED), 0);
	}
	fv_ring((struct fv_rc *)&p->a.qp);
	fv_ring((struct fv_rc *)&p->b.qp);
}

Test(send_refuse, sq_full_is_enomem)
{
	struct pair p;
	struct memqp_cfg c = cfg(FV_QPT_RC, 8);
	struct ibv_sge s = sge(0, 8);
	struct ibv_send_wr w;

	pair_open(&p, &c);
	fill_nops(&p, 8);
	cr_assert_eq(fv__sq_room(&p.a.qp.sq), 0);
	wr_init(&w, FV_QPT_RC, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, NULL);
	expect_refusal(&p, &w, 0, ENOMEM, "send on a full ring");
	cr_assert_eq(fv_nop((struct fv_rc *)&p.a.qp, 1, FV_SIGNALED), ENOMEM);
	cr_assert_eq(fv_write((struct fv_rc *)&p.a.qp, 1, 0, &s, RADDR, RKEY), ENOMEM);
	fv_ring((struct fv_rc *)&p.a.qp);
	assert_same(&p, "typed builders on a full ring");
	pair_close(&p);
}

/* Space is counted in WQEBBs: no room for a 2-WQEBB WQE, room for a 1-WQEBB one. */
Test(send_refuse, full_for_two_wqebbs_still_takes_one)
{
	struct pair p;
	struct memqp_cfg c = cfg(FV_QPT_RC, 8);
	struct ibv_sge s[3] = { sge(0, 8), sge(1, 8), sge(2, 8) };
	struct ibv_send_wr big, small, *bad = NULL;
	struct fv_rc *rc = (struct fv_rc *)&p.a.qp;

	pair_open(&p, &c);
	fill_nops(&p, 7);
	cr_assert_eq(fv__sq_room(&p.a.qp.sq), 1);
	wr_init(&big, FV_QPT_RC, IBV_WR_RDMA_WRITE, s, 3, 0, NULL);	/* ds 5: 2 WQEBBs */
	big.next = NULL;
	expect_refusal(&p, &big, 0, ENOMEM, "2-WQEBB write, 1 WQEBB free");
	cr_assert_eq(fv_write_sgl(rc, 1, 0, s, 3, RADDR, RKEY), ENOMEM);
	cr_assert_eq(fv_send_inline(rc, 1, 0, buf, MAX_INLINE), ENOMEM);	/* ds 1 + 4: 2 WQEBBs */
	assert_same(&p, "typed 2-WQEBB WQEs, 1 WQEBB free");

	wr_init(&small, FV_QPT_RC, IBV_WR_RDMA_WRITE, s, 2, 0, NULL);	/* ds 4: 1 WQEBB */
	small.next = NULL;
	cr_assert_eq(fv_post_send(&p.a.qp, &small, &bad), 0);
	cr_assert_eq(fv__sq_room(&p.a.qp.sq), 0);
	cr_assert_eq(memqp_sq_dbr(&p.a), p.a.qp.sq.pi & 0xffff);
	pair_close(&p);
}

/* ---- chains ---- */

/* A chain of three RC WRs whose WR number k is bad in the given way. */
static void chain_case(int k, const char *how)
{
	struct pair p;
	struct memqp_cfg c = cfg(FV_QPT_RC, 64);
	struct ibv_sge s[3] = { sge(0, 16), sge(1, 32), sge(2, 48) };
	struct ibv_sge many[MAX_SGE + 1], big = sge(3, MAX_INLINE + 1);
	struct ibv_send_wr w[3];
	uint8_t bf_before[512];
	uint32_t pi0;
	char what[80];

	for (int i = 0; i <= MAX_SGE; i++)
		many[i] = sge((unsigned)i, 8);
	pair_open(&p, &c);
	pi0 = p.a.qp.sq.pi;
	memcpy(bf_before, p.a.bf, 512);
	wr_init(&w[0], FV_QPT_RC, IBV_WR_RDMA_WRITE, &s[0], 1, 0, NULL);
	wr_init(&w[1], FV_QPT_RC, IBV_WR_SEND_WITH_IMM, &s[1], 1, 0, NULL);
	wr_init(&w[2], FV_QPT_RC, IBV_WR_SEND, &s[2], 1, IBV_SEND_SIGNALED, NULL);
	int err = EINVAL;
	if (!strcmp(how, "opcode 15")) {
		w[k].opcode = IBV_WR_ATOMIC_WRITE;
	} else if (!strcmp(how, "too many SGEs")) {
		w[k].sg_list = many;
		w[k].num_sge = MAX_SGE + 1;
		err = ENOMEM;
	} else if (!strcmp(how, "inline too long")) {
		w[k].sg_list = &big;
		w[k].send_flags |= IBV_SEND_INLINE;
		err = ENOMEM;
	} else {	/* "bind_mw" over 2 GiB */
		bind_wr(&w[k], FV_QPT_RC, (1ull << 31) + 1);
		err = EOPNOTSUPP;
	}
	chain(w, 3);
	snprintf(what, sizeof(what), "chain of 3, WR %d: %s", k, how);
	expect_refusal(&p, w, k, err, what);

	/* what was rung: k one-WQEBB WQEs; BF copy for exactly one, 8-byte doorbell for two */
	cr_assert_eq(p.a.qp.sq.pi - pi0, (uint32_t)k, "%s: WQEs posted", what);
	cr_assert_eq(memqp_sq_dbr(&p.a), (pi0 + (uint32_t)k) & 0xffff, "%s: doorbell record", what);
	if (k == 0)
		cr_assert_arr_eq(p.a.bf, bf_before, 512, "%s: register written", what);
	else if (k == 1)
		cr_assert_arr_eq(p.a.bf, memqp_block(&p.a, pi0), 64, "%s: BF copy of the one WQE", what);
	else
		cr_assert_arr_eq(p.a.bf, memqp_block(&p.a, pi0 + 1), 8, "%s: doorbell of the last WQE", what);
	if (k)
		cr_assert_arr_eq(p.a.bf + 64, bf_before + 64, 512 - 64, "%s: stray register bytes", what);
	pair_close(&p);
}

Test(send_refuse, chain_first_wr_fails)
{
	chain_case(0, "opcode 15");
	chain_case(0, "too many SGEs");
	chain_case(0, "inline too long");
	chain_case(0, "bind_mw");
}

Test(send_refuse, chain_middle_wr_fails)
{
	chain_case(1, "opcode 15");
	chain_case(1, "too many SGEs");
	chain_case(1, "inline too long");
	chain_case(1, "bind_mw");
}

Test(send_refuse, chain_last_wr_fails)
{
	chain_case(2, "opcode 15");
	chain_case(2, "too many SGEs");
	chain_case(2, "inline too long");
	chain_case(2, "bind_mw");
}

/* A chain longer than the free space: the WRs that fit are posted, the first that does not
 * fit is refused with ENOMEM. */
Test(send_refuse, chain_runs_into_full_ring)
{
	struct pair p;
	struct memqp_cfg c = cfg(FV_QPT_UD, 8);
	struct ibv_sge s = sge(0, 8);
	struct ibv_send_wr w[6];

	pair_open(&p, &c);
	for (int i = 0; i < 6; i++)	/* UD send: 2 WQEBBs each; 4 fit in 8 */
		wr_init(&w[i], FV_QPT_UD, IBV_WR_SEND, &s, 1, 0, &p.ah);
	chain(w, 6);
	expect_refusal(&p, w, 4, ENOMEM, "UD chain of 6 x 2 WQEBBs into 8");
	cr_assert_eq(fv__sq_room(&p.a.qp.sq), 0);
	pair_close(&p);
}

/* A refused WR takes neither the cached initiator fence nor a place in the unsignaled run:
 * the next good WR gets what it would have got without the refusal. */
Test(send_refuse, refused_wr_keeps_fence_cache_and_signal_run)
{
	struct pair p;
	struct memqp_cfg c = cfg(FV_QPT_RC, 8);	/* unsig_max 4 */
	struct ibv_sge s = sge(0, 8), many[MAX_SGE + 1];
	struct ibv_send_wr w, *bad = NULL;

	for (int i = 0; i <= MAX_SGE; i++)
		many[i] = sge((unsigned)i, 8);
	pair_open(&p, &c);
	for (int i = 0; i < 4; i++) {	/* an unsignaled run of 4: the next WQE gets forced */
		cr_assert_eq(fv_nop((struct fv_rc *)&p.a.qp, 1, 0), 0);
		cr_assert_eq(fv_nop((struct fv_rc *)&p.b.qp, 1, 0), 0);
	}
	fv_ring((struct fv_rc *)&p.a.qp);
	fv_ring((struct fv_rc *)&p.b.qp);
	fv__sq_cache_fence(&p.a.qp.sq, 0x20);	/* as after a local invalidate */
	fv__sq_cache_fence(&p.b.qp.sq, 0x20);
	wr_init(&w, FV_QPT_RC, IBV_WR_SEND, many, MAX_SGE + 1, 0, NULL);
	expect_refusal(&p, &w, 0, ENOMEM, "refused with a fence cached and a run of 4");
	cr_assert_eq(fv_send_sgl((struct fv_rc *)&p.a.qp, 1, 0, many, MAX_SGE + 1), ENOMEM);
	cr_assert_eq(fv_send_inline((struct fv_rc *)&p.a.qp, 1, 0, buf, MAX_INLINE + 1), ENOMEM);
	assert_same(&p, "typed refusals with a fence cached and a run of 4");

	wr_init(&w, FV_QPT_RC, IBV_WR_SEND, &s, 1, 0, NULL);
	cr_assert_eq(fv_post_send(&p.a.qp, &w, &bad), 0);
	cr_assert_eq(memqp_block(&p.a, 0xfffa + 4)[11], 0x20 | 0x08, "cached fence + forced completion");
	pair_close(&p);
}

/* ---- typed builders ---- */

/* The typed builders' run-time refusals (SGE count, inline length; ring space above):
 * ENOMEM, nothing written, and a following fv_ring has nothing to ring. */
Test(send_refuse, typed_builders_refuse_without_trace)
{
	struct ibv_sge many[MAX_SGE + 1];

	for (int i = 0; i <= MAX_SGE; i++)
		many[i] = sge((unsigned)i, 8);
	for (enum fv_qpt t = 0; t < FV_QPT_RAW; t++) {	/* raw Ethernet: tests/e2e/raw.c */
		struct pair p;
		struct memqp_cfg c = cfg(t, 64);
		int r1 = -1, r2 = -1, r3 = -1;
		__be32 imm = htobe32(1);

		pair_open(&p, &c);
		switch (t) {
		case FV_QPT_RC: {
			struct fv_rc *h = (struct fv_rc *)&p.a.qp;

			r1 = fv_write_sgl(h, 1, FV_SIGNALED, many, MAX_SGE + 1, RADDR, RKEY);
			r2 = fv_write_imm_inline(h, 1, 0, buf, MAX_INLINE + 1, RADDR, RKEY, imm);
			r3 = fv_read_sgl(h, 1, FV_FENCE, many, 1000, RADDR, RKEY);
			break;
		}
		case FV_QPT_UC: {
			struct fv_uc *h = (struct fv_uc *)&p.a.qp;

			r1 = fv_send_sgl(h, 1, 0, many, MAX_SGE + 1);
			r2 = fv_send_inv_inline(h, 1, 0, buf, MAX_INLINE + 1, 7);
			volatile uint32_t huge = UINT32_MAX;	/* opaque: gcc would flag the refused copy */

			r3 = fv_send_inline(h, 1, 0, buf, huge);
			break;
		}
		case FV_QPT_UD: {
			struct fv_ud *h = (struct fv_ud *)&p.a.qp;

			r1 = fv_send_imm_sgl(h, 1, 0, many, MAX_SGE + 1, imm, &p.ah, 2, 3);
			r2 = fv_send_inline(h, 1, FV_SIGNALED, buf, MAX_INLINE + 1, &p.ah, 2, 3);
			r3 = fv_send_sgl(h, 1, 0, many, 64, &p.ah, 2, 3);
			break;
		}
		case FV_QPT_XRC: {
			struct fv_xrc *h = (struct fv_xrc *)&p.a.qp;

			r1 = fv_cas_sgl(h, 1, 0, many, MAX_SGE + 1, RADDR, RKEY, 1, 2, 9);
			r2 = fv_write_inline(h, 1, 0, buf, MAX_INLINE + 1, RADDR, RKEY, 9);
			r3 = fv_send_imm_inline(h, 1, 0, buf, 4096, imm, 9);
			break;
		}
		default:
			break;
		}
		cr_assert_eq(r1, ENOMEM, "%s: too many SGEs gave %d", qpt_name[t], r1);
		cr_assert_eq(r2, ENOMEM, "%s: inline over max gave %d", qpt_name[t], r2);
		cr_assert_eq(r3, ENOMEM, "%s: third refusal gave %d", qpt_name[t], r3);
		fv__sq_ring(&p.a.qp.sq);
		assert_same(&p, qpt_name[t]);
		pair_close(&p);
	}
}
