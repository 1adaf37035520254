/*
 * Send-ring bookkeeping (docs/design.md §3.1 and §3.3): free space in WQEBBs, retiring
 * through fv__sq_retire (what the CQ poller calls with a CQE's 16-bit wqe_counter), wr_id per
 * slot, completions fastverbs forces on long unsignaled runs, and long runs of post + retire
 * across many ring wraps and past 2^16 and 2^32 WQEBBs.
 *
 * The device and the poller are simulated here: a FIFO of outstanding WQEs; "one CQE" retires
 * up to the oldest signaled one with fv__sq_retire, as cq.h does.
 */
#include <criterion/criterion.h>
#include <fastverbs/compat/post_send.h>
#include "memqp.h"
#include "wqe-expect.h"

#define QPN   0x0c0ffeu
#define RADDR 0x100000ull
#define RKEY  0x77u

static uint8_t buf[4096];

static struct ibv_sge sges[16];

static void init_sges(void)
{
	for (unsigned i = 0; i < 16; i++)
		sges[i] = (struct ibv_sge){ .addr = (uintptr_t)(buf + 16 * i), .length = 8, .lkey = 5 };
}

static struct memqp_cfg cfg(uint32_t wqebbs, uint32_t start_pi)
{
	return (struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = QPN, .sq_wqe_cnt = wqebbs, .bf_size = 256,
		.max_inline = 60, .max_send_sge = 16, .start_pi = start_pi };
}

static struct fv_rc *rc_of(struct memqp *m)
{
	return (struct fv_rc *)&m->qp;
}

/* One RC RDMA WRITE of nbb WQEBBs (1..5): its SGE count n gives the size (ds = 2 + n). */
static int post_blocks(struct memqp *m, unsigned nbb, uint64_t wr_id, unsigned flags)
{
	static const int nsge[6] = { 0, 1, 3, 7, 11, 15 };	/* ds 3, 5, 9, 13, 17 */

	cr_assert(nbb >= 1 && nbb <= 5);
	return fv_write_sgl(rc_of(m), wr_id, flags, sges, nsge[nbb], RADDR, RKEY);
}

static uint8_t fm_at(const struct memqp *m, uint32_t pi) { return memqp_block(m, pi)[11]; }
static unsigned ds_at(const struct memqp *m, uint32_t pi) { return memqp_block(m, pi)[7] & 0x3f; }
static uint16_t idx_at(const struct memqp *m, uint32_t pi)
{
	const uint8_t *b = memqp_block(m, pi);

	return (uint16_t)(b[1] << 8 | b[2]);
}

/* ---- a simulated device + poller ---- */

struct wqe_rec {
	uint32_t start;
	unsigned nbb;
	uint64_t wr_id;
	bool signaled;
};

struct sim {
	struct memqp *m;
	struct wqe_rec q[4096];		/* outstanding WQEs, oldest first */
	unsigned head, n;
	uint32_t ci;			/* what the poller should have retired up to */
};

static void sim_push(struct sim *s, uint32_t start, unsigned nbb, uint64_t wr_id, bool sig)
{
	cr_assert_lt(s->n, 4096u);
	s->q[(s->head + s->n++) % 4096] = (struct wqe_rec){ start, nbb, wr_id, sig };
}

static bool sim_has_signaled(const struct sim *s)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->q[(s->head + i) % 4096].signaled)
			return true;
	return false;
}

/* The device completes in order up to the oldest signaled WQE; its CQE reaches the poller. */
static bool sim_one_cqe(struct sim *s)
{
	struct fv__sq *sq = &s->m->qp.sq;

	if (!sim_has_signaled(s))
		return false;
	for (;;) {
		struct wqe_rec w = s->q[s->head];

		s->head = (s->head + 1) % 4096;
		s->n--;
		if (!w.signaled)
			continue;
		uint32_t slot = fv__sq_retire(sq, (uint16_t)w.start);

		cr_assert_eq(slot, w.start & sq->mask, "retire %#x: slot %u", w.start, slot);
		cr_assert_eq(sq->ci, w.start + w.nbb, "retire %#x: ci %#x, want %#x", w.start, sq->ci,
			     w.start + w.nbb);
		cr_assert_eq(sq->wr_id[slot].v, w.wr_id, "retire %#x: wr_id", w.start);
		s->ci = sq->ci;
		return true;
	}
}

/* ---- space ---- */

Test(sq_ring, room_counts_wqebbs)
{
	struct memqp m;
	struct memqp_cfg c = cfg(16, 0xfff8);	/* the 16-bit counter wraps inside this test */
	struct fv__sq *sq = &m.qp.sq;

	init_sges();
	memqp_init(&m, &c);
	cr_assert_eq(fv__sq_room(sq), 16);
	cr_assert_eq(post_blocks(&m, 1, 1, 0), 0);
	cr_assert_eq(fv__sq_room(sq), 15);
	cr_assert_eq(post_blocks(&m, 3, 2, 0), 0);
	cr_assert_eq(fv__sq_room(sq), 12);
	cr_assert_eq(post_blocks(&m, 5, 3, FV_SIGNALED), 0);
	cr_assert_eq(fv__sq_room(sq), 7);
	cr_assert_eq(fv__sq_retire(sq, 0xfff8), 8);		/* the first WQE alone */
	cr_assert_eq(fv__sq_room(sq), 8);
	cr_assert_eq(fv__sq_retire(sq, (uint16_t)(0xfff8 + 4)), 12);	/* the 5-WQEBB one, and the 3 before */
	cr_assert_eq(sq->ci, 0xfff8 + 9);
	cr_assert_eq(fv__sq_room(sq), 16);
	memqp_free(&m);
}

#ifdef FV_DEBUG
#include <signal.h>

/*
 * With -DFV_DEBUG (make test's debug pass) a broken ring invariant aborts: a retirement past
 * the producer (a CQE naming a WQE never built, as if the meta were corrupt).
 */
Test(sq_ring, debug_retire_past_pi_aborts, .signal = SIGABRT)
{
	struct memqp m;
	struct memqp_cfg c = cfg(16, 0);
	struct fv__sq *sq = &m.qp.sq;

	init_sges();
	memqp_init(&m, &c);
	cr_assert_eq(post_blocks(&m, 1, 1, FV_SIGNALED), 0);
	sq->meta[0].end = 3;	/* past pi (1) */
	fv__sq_asked_end(sq, 0);
	memqp_free(&m);
}
#endif

/*
 * unsig_max is half the ring, less when the largest WQE the caps allow would not fit beside
 * the run: cfg() allows 16 SGEs on RC, ds 19 = 5 WQEBBs.
 */
Test(sq_ring, unsig_max_leaves_room_for_the_largest_wqe)
{
	static const uint32_t sizes[] = { 2, 4, 8, 16, 64, 1024, 32768 };
	static const uint32_t want[] = { 0, 0, 3, 8, 32, 512, 16384 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct memqp m;
		struct memqp_cfg c = cfg(sizes[i], 0);

		memqp_init(&m, &c);
		cr_assert_eq(m.qp.sq.unsig_max, want[i], "%u WQEBBs: %u", sizes[i], m.qp.sq.unsig_max);
		cr_assert_eq(model_unsig_max(&c), want[i]);
		cr_assert_eq(fv__sq_room(&m.qp.sq), sizes[i]);
		memqp_free(&m);
	}
}

/* The 16-bit WQE index names a slot only on rings of at most 2^16 WQEBBs (mlx5: 2^15). */
Test(sq_ring, ring_over_2_16_wqebbs_refused)
{
	struct fv_qp qp;
	__be32 db[2] = { 0, 0 };
	void *ring = (void *)(uintptr_t)0x10000;	/* never touched */
	struct fv_qp_geom g = { .qpt = FV_QPT_RC, .qpn = QPN, .sq_buf = ring, .sq_wqe_cnt = 1u << 17,
				.dbrec = db, .bf_reg = buf };

	cr_assert_eq(fv_qp_init_geom(&qp, &g), EINVAL);
	g.sq_wqe_cnt = 1u << 16;
	cr_assert_eq(fv_qp_init_geom(&qp, &g), 0);
	cr_assert_eq(fv__sq_room(&qp.sq), 1u << 16);
	fv_qp_cleanup(&qp);
}

/* A BlueFlame half is whole 64-byte blocks (what a lone WQE's copy writes), or 0. */
Test(sq_ring, bf_size_not_whole_blocks_refused)
{
	struct fv_qp qp;
	__be32 db[2] = { 0, 0 };
	static uint8_t ring[16 * 64];
	static const uint32_t bad[] = { 32, 100, 257 }, good[] = { 0, 64, 256 };

	for (size_t i = 0; i < 3; i++) {
		struct fv_qp_geom g = { .qpt = FV_QPT_RC, .qpn = QPN, .sq_buf = ring, .sq_wqe_cnt = 16,
					.dbrec = db, .bf_reg = buf, .bf_size = bad[i] };

		cr_assert_eq(fv_qp_init_geom(&qp, &g), EINVAL, "bf_size %u", bad[i]);
		g.bf_size = good[i];
		cr_assert_eq(fv_qp_init_geom(&qp, &g), 0, "bf_size %u", good[i]);
		cr_assert_eq(qp.sq.bf_nbb, good[i] / 64);
		fv_qp_cleanup(&qp);
	}
}

/*
 * A lone WQE is copied to the BlueFlame half whole, however many blocks the half holds: with
 * 512-byte halves, one of 4 blocks and one of 5 (its second block on its own, the rest by the
 * loop), and nothing past either. The second goes to the other half.
 */
Test(sq_ring, bf_half_of_512_bytes_copies_a_lone_wqe_whole)
{
	static uint8_t ring[64 * 64] __attribute__((aligned(64)));
	static uint8_t bf[2 * 512] __attribute__((aligned(64)));
	__be32 db[2] = { 0, 0 };
	struct fv_qp qp;
	struct fv_qp_geom g = { .qpt = FV_QPT_RC, .qpn = QPN, .sq_buf = ring, .sq_wqe_cnt = 64,
				.dbrec = db, .bf_reg = bf, .bf_size = 512, .max_send_sge = 16 };
	struct fv_rc *rc = (struct fv_rc *)&qp;

	init_sges();
	memset(bf, 0xa5, sizeof(bf));
	cr_assert_eq(fv_qp_init_geom(&qp, &g), 0);
	cr_assert_eq(qp.sq.bf_nbb, 8u);

	cr_assert_eq(fv_write_sgl(rc, 1, 0, sges, 11, RADDR, RKEY), 0);	/* ds 13: 4 blocks */
	fv_ring(rc);
	cr_assert_eq(qp.sq.pi, 4u);
	cr_assert_eq(be32toh(db[MLX5_SND_DBR]), 4u);
	cr_assert_arr_eq(bf, ring, 4 * 64, "4 blocks by BlueFlame");
	for (size_t i = 4 * 64; i < sizeof(bf); i++)
		cr_assert_eq(bf[i], 0xa5, "byte %zu of the register written", i);

	cr_assert_eq(fv_write_sgl(rc, 2, 0, sges, 15, RADDR, RKEY), 0);	/* ds 17: 5 blocks */
	fv_ring(rc);
	cr_assert_eq(qp.sq.pi, 9u);
	cr_assert_eq(be32toh(db[MLX5_SND_DBR]), 9u);
	cr_assert_arr_eq(bf + 512, ring + 4 * 64, 5 * 64, "5 blocks by BlueFlame, in the other half");
	for (size_t i = 512 + 5 * 64; i < sizeof(bf); i++)
		cr_assert_eq(bf[i], 0xa5, "byte %zu of the register written", i);
	fv_qp_cleanup(&qp);
}

/* ---- retire ---- */

/* fv__sq_retire: returns the WQE's slot, moves ci just past it, keeps wr_id. */
static void retire_each(uint32_t start_pi)
{
	static const unsigned sizes[] = { 1, 2, 5, 3, 1, 4, 2 };
	struct memqp m;
	struct memqp_cfg c = cfg(32, start_pi);
	struct fv__sq *sq = &m.qp.sq;
	uint32_t starts[7];

	init_sges();
	memqp_init(&m, &c);
	for (int i = 0; i < 7; i++) {
		starts[i] = sq->pi;
		cr_assert_eq(post_blocks(&m, sizes[i], 0xabc0 + (uint64_t)i, FV_SIGNALED), 0);
		cr_assert_eq(sq->pi - starts[i], sizes[i]);
		cr_assert_eq(sq->wr_id[starts[i] & sq->mask].v, 0xabc0 + (uint64_t)i, "wr_id at slot");
	}
	fv__sq_ring(sq);
	cr_assert_eq(memqp_sq_dbr(&m), sq->pi & 0xffff);
	for (int i = 0; i < 7; i++) {
		uint32_t slot = fv__sq_retire(sq, (uint16_t)starts[i]);

		cr_assert_eq(slot, starts[i] & sq->mask, "start %#x: slot %u", starts[i], slot);
		cr_assert_eq(sq->ci, starts[i] + sizes[i], "start %#x: ci %#x", starts[i], sq->ci);
		cr_assert_eq(sq->wr_id[slot].v, 0xabc0 + (uint64_t)i);
		cr_assert_eq(fv__sq_room(sq), 32 - (sq->pi - sq->ci));
	}
	cr_assert_eq(sq->ci, sq->pi);
	memqp_free(&m);
}

Test(sq_ring, retire_each_wqe)                { retire_each(0); }
Test(sq_ring, retire_each_wqe_across_2_16)    { retire_each(0xfff3); }
Test(sq_ring, retire_each_wqe_across_2_32)    { retire_each(0xfffffff1u); }
Test(sq_ring, retire_wqe_wrapping_ring_end)   { retire_each(0x1001e); }	/* the 2-WQEBB WQE at slot 31 wraps */

/* One completion retires its WQE and every unsignaled one before it. */
Test(sq_ring, retire_later_wqe_retires_earlier_ones)
{
	struct memqp m;
	struct memqp_cfg c = cfg(16, 0x2fffe);
	struct fv__sq *sq = &m.qp.sq;

	init_sges();
	memqp_init(&m, &c);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(post_blocks(&m, 2, (uint64_t)i, 0), 0);
	cr_assert_eq(post_blocks(&m, 3, 99, FV_SIGNALED), 0);	/* at 0x30006 */
	cr_assert_eq(fv__sq_room(sq), 5);
	cr_assert_eq(fv__sq_retire(sq, 0x0006), 0x30006 & 15);
	cr_assert_eq(sq->ci, 0x30009);
	cr_assert_eq(fv__sq_room(sq), 16);
	memqp_free(&m);
}

/* ---- forced completions ---- */

/* Unsignaled NOPs on 16 WQEBBs (unsig_max 8): the 9th would end the run 9 long, so it is signaled
 * by fastverbs and marked forced; the run restarts after it. */
Test(sq_ring, long_unsignaled_run_gets_a_forced_completion)
{
	struct memqp m;
	struct memqp_cfg c = cfg(16, 0xfffc);
	struct fv__sq *sq = &m.qp.sq;

	memqp_init(&m, &c);
	for (uint32_t i = 0; i < 16; i++) {
		uint32_t pi = sq->pi;
		bool forced = i == 8;

		cr_assert_eq(fv_nop(rc_of(&m), i, 0), 0);
		cr_assert_eq(fm_at(&m, pi), forced ? 0x08 : 0x00, "NOP %u: fm_ce_se %#x", i, fm_at(&m, pi));
		cr_assert_eq(memqp_forced(&m, pi), forced, "NOP %u: forced flag", i);
	}
	cr_assert_eq(fv_nop(rc_of(&m), 16, 0), ENOMEM);
	memqp_free(&m);
}

/* Multi-WQEBB WQEs count by WQEBBs: 2-WQEBB WQEs, the 5th would end 10 past the last signal. */
Test(sq_ring, forced_completion_counts_wqebbs)
{
	struct memqp m;
	struct memqp_cfg c = cfg(16, 0);
	struct fv__sq *sq = &m.qp.sq;

	init_sges();
	memqp_init(&m, &c);
	for (uint32_t i = 0; i < 8; i++) {
		uint32_t pi = sq->pi;

		cr_assert_eq(post_blocks(&m, 2, i, FV_SOLICITED), 0);
		cr_assert_eq(fm_at(&m, pi), i == 4 ? 0x0a : 0x02, "WQE %u: fm_ce_se %#x", i, fm_at(&m, pi));
		cr_assert_eq(memqp_forced(&m, pi), i == 4, "WQE %u: forced flag", i);
	}
	memqp_free(&m);
}

/* An explicitly signaled WQE ends the run (and is not marked forced); SOLICITED alone does not. */
Test(sq_ring, explicit_signal_resets_the_run)
{
	struct memqp m;
	struct memqp_cfg c = cfg(16, 0x7fff0);
	struct fv__sq *sq = &m.qp.sq;
	uint32_t pi0 = 0x7fff0;

	memqp_init(&m, &c);
	for (uint32_t i = 0; i < 14; i++) {
		unsigned f = i == 5 ? FV_SIGNALED : i == 2 ? FV_SOLICITED : 0;

		cr_assert_eq(fv_nop(rc_of(&m), i, f), 0);
	}
	for (uint32_t i = 0; i < 14; i++) {
		/* signaled: #5 by the caller; then the run restarts at 6 and #14 would be the 9th */
		uint8_t want = i == 5 ? 0x08 : i == 2 ? 0x02 : 0;

		cr_assert_eq(fm_at(&m, pi0 + i), want, "NOP %u: fm_ce_se %#x", i, fm_at(&m, pi0 + i));
		cr_assert_eq(memqp_forced(&m, pi0 + i), 0, "NOP %u: forced", i);
	}
	sq->ci = sq->pi;	/* make room; this test is about the run only */
	cr_assert_eq(fv_nop(rc_of(&m), 14, 0), 0);
	cr_assert_eq(fm_at(&m, pi0 + 14), 0x08, "the 9th after the signal is forced");
	cr_assert_eq(memqp_forced(&m, pi0 + 14), 1);
	memqp_free(&m);
}

/* A cached initiator fence goes to the next WQE only, also in the middle of a run that needs
 * no forced completion (the fast path), and FV_FENCE on that WQE overrides it. */
Test(sq_ring, cached_fence_goes_to_the_next_wqe_only)
{
	struct memqp m;
	struct memqp_cfg c = cfg(64, 0x1fffe);
	struct fv__sq *sq = &m.qp.sq;
	static const struct { unsigned flags; uint8_t cache, want; } k[] = {
		{ 0, 0x20, 0x20 }, { 0, 0, 0 }, { FV_SIGNALED, 0x20, 0x28 }, { FV_FENCE, 0x20, 0x80 },
		{ FV_SOLICITED, 0, 0x02 },
	};

	memqp_init(&m, &c);
	cr_assert_eq(fv_nop(rc_of(&m), 0, 0), 0);
	for (uint32_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		uint32_t pi = sq->pi;

		if (k[i].cache)
			fv__sq_cache_fence(sq, k[i].cache);
		cr_assert_eq(fv_nop(rc_of(&m), i, k[i].flags), 0);
		cr_assert_eq(fm_at(&m, pi), k[i].want, "NOP %u: fm_ce_se %#x", i, fm_at(&m, pi));
		cr_assert_eq(sq->fence_cache, 0, "NOP %u took the cached fence", i);
	}
	memqp_free(&m);
}

/* sq_sig_all: every WQE asks for a completion itself, none is ever forced. */
Test(sq_ring, sq_sig_all_never_forces)
{
	struct memqp m;
	struct memqp_cfg c = cfg(8, 0xfff0);
	struct fv__sq *sq = &m.qp.sq;

	c.sq_sig_all = 1;
	memqp_init(&m, &c);
	for (uint32_t i = 0; i < 40; i++) {
		uint32_t pi = sq->pi;

		cr_assert_eq(fv_nop(rc_of(&m), i, 0), 0);
		cr_assert_eq(fm_at(&m, pi), 0x08);
		cr_assert_eq(memqp_forced(&m, pi), 0, "NOP %u forced", i);
		cr_assert_eq(fv__sq_retire(sq, (uint16_t)pi), pi & 7);
	}
	memqp_free(&m);
}

/*
 * sq_sig_all: lim stays at the producer, so every WQE (flags decided per WR too, which the
 * fast path builds without sig_all) goes through fv__sq_take_slow, which sets the
 * completion flag: byte 11 has it, sig_pi follows the producer, nothing is forced.
 */
Test(sq_ring, sq_sig_all_lim_at_producer)
{
	struct memqp m;
	struct memqp_cfg c = cfg(8, 0xfff0);
	struct fv__sq *sq = &m.qp.sq;
	const struct ibv_sge s = { 0x1000, 64, 0x77 };
	volatile unsigned flags = 0;	/* not a constant: the typed builder's per-WR form */

	c.sq_sig_all = 1;
	memqp_init(&m, &c);
	cr_assert_eq(sq->lim, sq->pi);
	for (uint32_t i = 0; i < 40; i++) {
		uint32_t pi = sq->pi;

		cr_assert_eq(fv_write(rc_of(&m), i, flags, &s, 0x2000 + 64 * i, 0x55), 0);
		cr_assert_eq(fm_at(&m, pi), 0x08, "WQE %u: fm_ce_se %#x", i, fm_at(&m, pi));
		cr_assert_eq(sq->lim, sq->pi, "WQE %u: lim %u, pi %u", i, sq->lim, sq->pi);
		cr_assert_eq(sq->sig_pi, sq->pi);
		cr_assert_eq(memqp_forced(&m, pi), 0, "WQE %u forced", i);
		cr_assert_eq(fv__sq_retire(sq, (uint16_t)pi), pi & 7);
	}
	memqp_free(&m);
}

/* ---- draining, many wraps ---- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

/*
 * Post WQEs of 1..max_nbb WQEBBs, mostly unsignaled, on a ring of n WQEBBs, until the
 * producer has moved `total` WQEBBs; the simulated device completes now and then, and when
 * the ring is full. Checks on every WQE: ctrl index = low 16 bits of its counter, ds, the
 * exact forced-completion rule, wr_id; on every doorbell: dbrec = BE32(pi & 0xffff); and that
 * ENOMEM never comes without a signaled WQE outstanding (else nothing could ever free space).
 */
static void churn(uint32_t n, uint32_t start_pi, unsigned max_nbb, uint32_t total, uint64_t seed)
{
	static struct sim s;
	struct memqp m;
	struct memqp_cfg c = cfg(n, start_pi);
	struct fv__sq *sq = &m.qp.sq;
	uint32_t sig_pi = start_pi;	/* model: end of the last signaled WQE */
	uint64_t wr_id = 0;
	unsigned unrung = 0, enomem = 0, forced_seen = 0;

	init_sges();
	memqp_init(&m, &c);
	memset(&s, 0, sizeof(s));
	s.m = &m;
	s.ci = start_pi;
	rng_state = seed;
	while (sq->pi - start_pi < total) {
		unsigned nbb = 1 + rnd(max_nbb);
		bool sig = rnd(32) == 0;
		uint32_t pi = sq->pi;
		int err = post_blocks(&m, nbb, ++wr_id, sig ? FV_SIGNALED : 0);

		if (err) {
			cr_assert_eq(err, ENOMEM);
			cr_assert_lt(fv__sq_room(sq), nbb, "ENOMEM with %u free for %u", fv__sq_room(sq), nbb);
			cr_assert(sim_has_signaled(&s), "ENOMEM at pi %#x with no signaled WQE outstanding: "
				  "the ring can never drain", pi);
			cr_assert_eq(sq->pi, pi);
			fv__sq_ring(sq);
			sim_one_cqe(&s);
			enomem++;
			continue;
		}
		bool forced = !sig && pi + nbb - sig_pi > model_unsig_max(&c);

		if (sig || forced)
			sig_pi = pi + nbb;
		forced_seen += forced;
		cr_assert_eq(idx_at(&m, pi), pi & 0xffff, "WQE at %#x: index %#x", pi, idx_at(&m, pi));
		cr_assert_eq(ds_at(&m, pi), nbb == 1 ? 3 : 1 + 4 * (nbb - 1), "WQE at %#x: ds", pi);
		cr_assert_eq(fm_at(&m, pi), sig || forced ? 0x08 : 0, "WQE at %#x: fm_ce_se %#x (forced %d)",
			     pi, fm_at(&m, pi), forced);
		cr_assert_eq(memqp_forced(&m, pi), forced, "WQE at %#x: forced flag", pi);
		cr_assert_eq(sq->wr_id[pi & sq->mask].v, wr_id);
		sim_push(&s, pi, nbb, wr_id, sig || forced);
		if (++unrung >= 1 + rnd(3)) {
			fv__sq_ring(sq);
			cr_assert_eq(m.dbrec[MLX5_SND_DBR], htobe32(sq->pi & 0xffff), "dbrec at pi %#x", sq->pi);
			unrung = 0;
		}
		if (rnd(4) == 0)
			sim_one_cqe(&s);
		cr_assert_eq(sq->ci, s.ci);
		cr_assert_eq(fv__sq_room(sq), n - (sq->pi - sq->ci));
	}
	cr_assert_gt(enomem, 0, "the ring never filled: the test did not test draining");
	cr_assert_gt(forced_seen, 0);
	memqp_free(&m);
}

Test(sq_ring, churn_8_wqebbs_past_2_16)          { churn(8, 0, 4, 300000, 1); }
Test(sq_ring, churn_16_wqebbs_from_0xfff0)       { churn(16, 0xfff0, 5, 300000, 2); }
Test(sq_ring, churn_64_wqebbs_across_2_32)       { churn(64, 0xfffe0000u, 5, 400000, 3); }
Test(sq_ring, churn_4_wqebbs_single_block_wqes)  { churn(4, 0xfffe, 1, 200000, 4); }
Test(sq_ring, churn_4_wqebbs_two_block_wqes)     { churn(4, 0, 2, 200000, 5); }

/*
 * The ring drains (docs/design.md §3.3) with WQEs larger than half the ring: bounding the
 * unsignaled run to half the ring alone is not enough; a WQE larger than half the ring could
 * hit ENOMEM with nothing signaled outstanding — no completion will ever come and the QP can
 * never post again. Here: 8 WQEBBs, four unsignaled NOPs
 * (a run of 4 = unsig_max, not forced), then a 5-WQEBB WRITE (16 SGEs, ds 18) finds 4 free.
 * libmlx5's sizing (docs/formats.md §1.2) allows it: RC with max_send_wr 1, max_send_sge 20
 * gives an 8-WQEBB ring whose largest WQE is 6 WQEBBs; UD with max_send_wr 1 and 4 SGEs gives
 * 2 WQEBBs, largest WQE 2.
 */
Test(sq_ring, wqe_over_half_the_ring_never_strands_it)
{
	struct memqp m;
	struct memqp_cfg c = cfg(8, 0);
	struct fv__sq *sq = &m.qp.sq;
	struct ibv_sge s16[16];
	bool signaled_outstanding = false;

	for (int i = 0; i < 16; i++)
		s16[i] = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 8, .lkey = 5 };
	memqp_init(&m, &c);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(fv_nop(rc_of(&m), (uint64_t)i, 0), 0);
	int err = fv_write_sgl(rc_of(&m), 9, 0, s16, 16, RADDR, RKEY);

	for (uint32_t p = sq->ci; p != sq->pi; p += (ds_at(&m, p) + 3) / 4)
		signaled_outstanding |= (fm_at(&m, p) & 0x08) != 0;
	cr_assert(err == 0 || signaled_outstanding,
		  "ENOMEM with only unsignaled WQEs outstanding: the ring can never drain");
	memqp_free(&m);
}

/* The same on the smallest UD geometry: 2 WQEBBs, a 1-WQEBB send then a 2-WQEBB send. */
Test(sq_ring, ud_two_wqebb_ring_never_strands)
{
	struct memqp m;
	struct memqp_cfg c = { .qpt = FV_QPT_UD, .qpn = QPN, .sq_wqe_cnt = 2, .max_send_sge = 4 };
	struct fv_ud *ud = (struct fv_ud *)&m.qp;
	struct fv_ah ah;
	struct ibv_sge empty = { .addr = (uintptr_t)buf, .length = 0, .lkey = 5 };
	struct ibv_sge one = { .addr = (uintptr_t)buf, .length = 8, .lkey = 5 };

	struct mlx5_wqe_av av;

	memset(&av, 0, sizeof(av));
	fv__ah_fill(&ah, &av);	/* as fv_ah_init */
	memqp_init(&m, &c);
	cr_assert_eq(fv_send(ud, 1, 0, &empty, &ah, 1, 1), 0);	/* ds 4: 1 WQEBB, unsignaled */
	int err = fv_send(ud, 2, 0, &one, &ah, 1, 1);		/* ds 5: 2 WQEBBs */

	cr_assert(err == 0 || (fm_at(&m, 0) & 0x08),
		  "ENOMEM with only unsignaled WQEs outstanding: the ring can never drain");
	memqp_free(&m);
}

/*
 * Flags decided at run time take the typed fast path's own slow side past lim (room, a cached
 * fence, a forced completion, then the same stores); constant flags take the general builder
 * there. Both must build the same bytes and bookkeeping: twin QPs, one posting with the flags
 * read at run time, the other with each call's flags a constant, RDMA WRITEs of one SGE and
 * of 16 inline bytes, a fence cached halfway, until the ring refuses.
 */
static int post_rt(struct memqp *m, unsigned i, unsigned flags)
{
	if (i % 3 == 2)
		return fv_write_inline(rc_of(m), i, flags, buf, 16, RADDR + 64 * i, RKEY);
	return fv_write(rc_of(m), i, flags, &sges[i % 16], RADDR + 64 * i, RKEY);
}

static int post_const(struct memqp *m, unsigned i, unsigned flags)
{
	struct fv_rc *rc = rc_of(m);
	const bool inl = i % 3 == 2;
	const uint64_t ra = RADDR + 64 * i;

	switch (flags) {
	case 0:
		return inl ? fv_write_inline(rc, i, 0, buf, 16, ra, RKEY) : fv_write(rc, i, 0, &sges[i % 16], ra, RKEY);
	case FV_SIGNALED:
		return inl ? fv_write_inline(rc, i, FV_SIGNALED, buf, 16, ra, RKEY) :
			     fv_write(rc, i, FV_SIGNALED, &sges[i % 16], ra, RKEY);
	default:
		return inl ? fv_write_inline(rc, i, FV_SOLICITED, buf, 16, ra, RKEY) :
			     fv_write(rc, i, FV_SOLICITED, &sges[i % 16], ra, RKEY);
	}
}

/*
 * Flags decided per WR, over a ring full of stale bytes (0xff, as a wrapped ring holds an
 * older WQE's): the ctrl's word at byte 8 (signature, reserved, fm_ce_se) and the immediate
 * are each WQE's own, signaled or not. The typed builders store that word only when it is
 * not 0 (wqe.h, FV__CTRL_A); the vector before it must have cleared it.
 */
Test(sq_ring, flags_at_run_time_clear_stale_bytes)
{
	static const uint8_t zero[8];
	struct memqp m;
	struct memqp_cfg c = cfg(16, 0xfffa);
	const struct ibv_sge s = { 0x1000, 64, 0x77 };
	volatile unsigned flv[12];	/* not constants: the typed builder's per-WR form */
	unsigned signaled = 0;

	memqp_init(&m, &c);
	memset(m.sq, 0xff, m.sq_bytes);
	for (unsigned i = 0; i < 12; i++)
		flv[i] = i % 3 == 2 ? FV_SIGNALED : i == 7 ? FV_SOLICITED : 0;
	for (unsigned i = 0; i < 12; i++) {
		uint32_t pi = m.qp.sq.pi;
		const uint8_t *b = memqp_block(&m, pi);
		uint8_t fm;

		cr_assert_eq(fv_write(rc_of(&m), i, flv[i], &s, 0x2000 + 64 * i, 0x55), 0);
		fm = (uint8_t)(flv[i] | (memqp_forced(&m, pi) ? FV_SIGNALED : 0));
		signaled += (fm & FV_SIGNALED) != 0;
		cr_assert_arr_eq(b + 8, zero, 3, "WQE %u: %s", i, hexstr(b, 64));
		cr_assert_eq(b[11], fm, "WQE %u: fm_ce_se %#x, not %#x", i, b[11], fm);
		cr_assert_arr_eq(b + 12, zero, 4, "WQE %u: immediate: %s", i, hexstr(b, 64));
		cr_assert_eq(idx_at(&m, pi), (uint16_t)pi, "WQE %u: index", i);
	}
	cr_assert_geq(signaled, 4);
	memqp_free(&m);
}

/*
 * Flags and an immediate both decided per WR, over stale bytes: under gcc a WR with neither
 * goes down the copy of the builder in which both are constants (build.h, FV_SPLIT_UNSIG),
 * the others down the per-WR one; either way the ctrl's opcode, ds, flags word and immediate
 * are the WR's own.
 */
Test(sq_ring, flags_and_immediate_at_run_time)
{
	struct memqp m;
	struct memqp_cfg c = cfg(16, 0xfff9);
	const struct ibv_sge s = { 0x1000, 64, 0x77 };
	volatile unsigned flv[12];
	volatile uint32_t immv[12];

	memqp_init(&m, &c);
	memset(m.sq, 0xff, m.sq_bytes);
	for (unsigned i = 0; i < 12; i++) {
		flv[i] = i % 4 == 3 ? FV_SIGNALED : i == 5 ? FV_FENCE : 0;
		immv[i] = i % 3 == 1 ? 0xa0b0c000u + i : 0;
	}
	for (unsigned i = 0; i < 12; i++) {
		uint32_t pi = m.qp.sq.pi, imm = immv[i];
		const uint8_t *b = memqp_block(&m, pi);
		const uint8_t want[4] = { imm >> 24, imm >> 16 & 0xff, imm >> 8 & 0xff, imm & 0xff };
		uint8_t fm;

		cr_assert_eq(fv_send_imm(rc_of(&m), i, flv[i], &s, htobe32(imm)), 0);
		fm = (uint8_t)(flv[i] | (memqp_forced(&m, pi) ? FV_SIGNALED : 0));
		cr_assert_eq(b[3], MLX5_OPCODE_SEND_IMM, "WQE %u: %s", i, hexstr(b, 64));
		cr_assert_eq(b[7] & 0x3f, 2, "WQE %u: ds %u", i, b[7] & 0x3f);
		cr_assert_eq(b[8] | b[9] | b[10], 0, "WQE %u: %s", i, hexstr(b, 64));
		cr_assert_eq(b[11], fm, "WQE %u: fm_ce_se %#x, not %#x", i, b[11], fm);
		cr_assert_arr_eq(b + 12, want, 4, "WQE %u: immediate: %s", i, hexstr(b, 64));
		cr_assert_eq(fv__sq_wr_id_of(&m.qp.sq, pi)->v, i);
	}
	memqp_free(&m);
}

Test(sq_ring, flags_at_run_time_build_what_constant_flags_build)
{
	static const unsigned fl[] = { 0, FV_SOLICITED, 0, 0, FV_SIGNALED, 0, 0, 0, 0, 0, 0,
				       0, 0, FV_SOLICITED, 0, 0, 0, 0, 0, 0 };
	volatile unsigned flv[20];
	struct memqp a, b;
	struct memqp_cfg c = cfg(16, 0xfff5);
	int refused = 0;

	init_sges();
	memqp_init(&a, &c);
	memqp_init(&b, &c);
	for (unsigned i = 0; i < 20; i++)
		flv[i] = fl[i];
	for (unsigned i = 0; i < 20; i++) {
		int ea, eb;

		if (i == 7) {	/* as after a memory window's UMR WQE */
			fv__sq_cache_fence(&a.qp.sq, MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE);
			fv__sq_cache_fence(&b.qp.sq, MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE);
		}
		ea = post_rt(&a, i, flv[i]);
		eb = post_const(&b, i, fl[i]);
		cr_assert_eq(ea, eb, "WR %u: %d against %d", i, ea, eb);
		refused += ea == ENOMEM;
		cr_assert_eq(a.qp.sq.pi, b.qp.sq.pi, "WR %u", i);
		cr_assert_eq(a.qp.sq.last_pi, b.qp.sq.last_pi, "WR %u", i);
		cr_assert_eq(a.qp.sq.sig_pi, b.qp.sq.sig_pi, "WR %u", i);
		cr_assert_eq(a.qp.sq.lim, b.qp.sq.lim, "WR %u", i);
		cr_assert_eq(a.qp.sq.fence_cache, b.qp.sq.fence_cache, "WR %u", i);
	}
	cr_assert(refused > 0, "the ring never filled");
	for (uint32_t pi = 0xfff5; pi != a.qp.sq.pi; pi++) {
		cr_assert_arr_eq(memqp_block(&a, pi), memqp_block(&b, pi), 64, "WQEBB %#x: %s", pi,
				 hexstr(memqp_block(&a, pi), 64));
		cr_assert_eq(memqp_forced(&a, pi), memqp_forced(&b, pi), "WQEBB %#x: forced", pi);
		cr_assert_eq(fv__sq_wr_id_of(&a.qp.sq, pi)->v, fv__sq_wr_id_of(&b.qp.sq, pi)->v);
	}
	cr_assert(memqp_forced(&a, 0xfff5 + 13), "the 9th after the signal at 4 is forced");
	cr_assert_eq(memqp_block(&a, 0xfff5 + 7)[11] & 0xe0, MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE,
		     "the fence cached before WR 7");
	memqp_free(&a);
	memqp_free(&b);
}

/*
 * fv_sq_room (qp.h): the free blocks a typed user sees, on the handle and on its struct fv_qp
 * alike; it falls by each WQE's blocks, and at 0 the next builder refuses with ENOMEM. A
 * request past the QP's caps is refused while room remains: fv_sq_room tells the two apart
 * (fv_sq_room(3)).
 */
Test(sq_ring, room_counts_blocks)
{
	struct memqp m;
	struct memqp_cfg c = cfg(16, 0);
	struct ibv_sge many[17];

	init_sges();
	memqp_init(&m, &c);
	cr_assert_eq(fv_sq_room(rc_of(&m)), 16);
	cr_assert_eq(post_blocks(&m, 1, 1, FV_SIGNALED), 0);
	cr_assert_eq(post_blocks(&m, 3, 2, FV_SIGNALED), 0);
	cr_assert_eq(fv_sq_room(rc_of(&m)), 12, "room %u", fv_sq_room(rc_of(&m)));
	cr_assert_eq(fv_sq_room(&m.qp), 12);
	for (unsigned i = 0; i < 17; i++)
		many[i] = sges[0];
	cr_assert_eq(fv_write_sgl(rc_of(&m), 3, 0, many, 17, RADDR, RKEY), ENOMEM);	/* max_send_sge 16 */
	cr_assert_eq(fv_sq_room(rc_of(&m)), 12, "a refused request takes no room");
	for (unsigned i = 0; i < 12; i++)
		cr_assert_eq(post_blocks(&m, 1, 4 + i, FV_SIGNALED), 0);
	cr_assert_eq(fv_sq_room(rc_of(&m)), 0);
	cr_assert_eq(post_blocks(&m, 1, 99, FV_SIGNALED), ENOMEM);
	fv_ring(rc_of(&m));
	fv_ring(&m.qp);		/* a struct fv_qp * rings too: nothing new, nothing written */
	cr_assert_eq(memqp_sq_dbr(&m), 16);
	memqp_free(&m);
}
