/*
 * Two QPs on one BlueFlame register (libmlx5 gives one register to several QPs): the half a
 * doorbell writes alternates per register, and the register's lock keeps the doorbells of
 * QPs posted from two threads from interleaving in one half. The register is plain memory
 * here, so a test can look at it: while the lock is held, each doorbell checks that the half
 * holds exactly the blocks it copied, after a yield that lets the other thread in. The
 * negative control runs the same with the lock left out and must see a torn half.
 */
#include <pthread.h>
#include <stdint.h>
#include <sched.h>
#include <string.h>

#include <criterion/criterion.h>

struct fv__sq;
static uint8_t *bf_check(const struct fv__sq *sq, uint8_t *reg, unsigned nbb);
static int bf_nolock;		/* the negative control: the register is not locked */
#define FV__TEST_BF_NOLOCK bf_nolock
#define FV__TEST_BF_RUNG(sq, reg, nbb) bf_check(sq, reg, nbb)

#include <fastverbs/fastverbs.h>

#include "memqp.h"

static unsigned bf_torn;	/* doorbells whose half held other bytes than theirs */
static unsigned bf_rings;

static uint8_t *bf_check(const struct fv__sq *sq, uint8_t *reg, unsigned nbb)
{
	int torn = 0;

	/* the other thread's doorbell may land now, unless the lock keeps it out */
	for (int i = 0; i < 200; i++)
		fv__cpu_relax();
	sched_yield();
	if (!nbb) {
		torn = memcmp(reg, fv__sq_wqe(sq, sq->last_pi), 8) != 0;
	} else {
		for (unsigned i = 0; i < nbb; i++)
			torn |= memcmp(reg + i * 64, fv__sq_wqe(sq, sq->last_pi + i), 64) != 0;
	}
	__atomic_fetch_add(&bf_torn, (unsigned)torn, __ATOMIC_RELAXED);
	__atomic_fetch_add(&bf_rings, 1, __ATOMIC_RELAXED);
	__asm__ __volatile__("" : "+r"(reg));	/* the lock's release cannot move before the check */
	return reg;
}

static struct memqp_cfg cfg(uint32_t qpn)
{
	struct memqp_cfg c;

	memset(&c, 0, sizeof(c));
	c.qpt = FV_QPT_RC, c.qpn = qpn, c.sq_wqe_cnt = 64, c.bf_size = 256;
	c.max_inline = 128, c.max_send_sge = 4;
	return c;
}

/* QP b taken over again on a's register: the two share it, as two QPs libmlx5 put on one. */
static void share_register(struct memqp *a, struct memqp *b, const struct memqp_cfg *cb)
{
	struct fv_qp_geom g;

	memset(&g, 0, sizeof(g));
	fv_qp_cleanup(&b->qp);
	g.qpt = cb->qpt, g.qpn = cb->qpn, g.sq_buf = b->sq, g.sq_wqe_cnt = cb->sq_wqe_cnt;
	g.dbrec = b->dbrec, g.bf_reg = a->bf, g.bf_size = cb->bf_size;
	g.max_inline = cb->max_inline, g.max_send_sge = cb->max_send_sge;
	cr_assert_eq(fv_qp_init_geom(&b->qp, &g), 0);
	cr_assert_eq(a->qp.sq.bf, b->qp.sq.bf, "one record for the register");
	cr_assert_eq(a->qp.sq.bf->users, 2);
}

/* A lone SEND of 64 inline bytes (two blocks, a BlueFlame copy), tagged, rung, retired. */
static void send_one(struct memqp *m, uint8_t tag)
{
	uint8_t data[64];

	memset(data, tag, sizeof(data));
	cr_assert_eq(fv_send_inline((struct fv_rc *)&m->qp, tag, FV_SIGNALED, data, sizeof(data)), 0);
	fv_ring((struct fv_rc *)&m->qp);
	fv__sq_set_ci(&m->qp.sq, m->qp.sq.pi);	/* no device here: done at once */
}

Test(threads_bf, two_qps_alternate_the_halves_together)
{
	struct memqp a, b;
	struct memqp_cfg ca = cfg(0x10), cb = cfg(0x11);

	memqp_init(&a, &ca);
	memqp_init(&b, &cb);
	share_register(&a, &b, &cb);
	send_one(&a, 0xa1);
	cr_assert_eq(a.bf[20], 0xa1, "A's first doorbell: half 0");
	send_one(&b, 0xb1);
	cr_assert_eq(a.bf[256 + 20], 0xb1, "B's next: half 1, not B's own half 0");
	cr_assert_eq(a.bf[20], 0xa1, "half 0 untouched");
	send_one(&a, 0xa2);
	cr_assert_eq(a.bf[20], 0xa2, "A again: half 0");
	cr_assert_eq((uintptr_t)a.qp.sq.bf->cur, (uintptr_t)a.bf + 256);
	cr_assert_eq(bf_torn, 0);
	memqp_free(&b);
	cr_assert_eq(a.qp.sq.bf->users, 1, "B's cleanup let go of the register");
	memqp_free(&a);
}

struct poster {
	struct memqp *m;
	uint8_t tag0;
	int n;
};

static pthread_barrier_t start;

static void *post_loop(void *arg)
{
	struct poster *p = (struct poster *)arg;

	pthread_barrier_wait(&start);	/* both post at once */
	for (int i = 0; i < p->n; i++)
		send_one(p->m, (uint8_t)(p->tag0 + (i & 63)));
	return NULL;
}

/* Two threads, each on its own QP, both on one register: n doorbells each. The torn count. */
static unsigned race(int n)
{
	struct memqp a, b;
	struct memqp_cfg ca = cfg(0x20), cb = cfg(0x21);
	struct poster pa = { &a, 0x00, n }, pb = { &b, 0x80, n };
	pthread_t ta, tb;

	memqp_init(&a, &ca);
	memqp_init(&b, &cb);
	share_register(&a, &b, &cb);
	bf_torn = bf_rings = 0;
	pthread_barrier_init(&start, NULL, 2);
	cr_assert_eq(pthread_create(&ta, NULL, post_loop, &pa), 0);
	cr_assert_eq(pthread_create(&tb, NULL, post_loop, &pb), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_barrier_destroy(&start);
	cr_assert_eq(bf_rings, (unsigned)(2 * n));
	if (!bf_nolock)
		cr_assert_eq((uintptr_t)a.qp.sq.bf->cur, (uintptr_t)a.bf, "2n toggles under the lock: half 0");
	memqp_free(&b);
	memqp_free(&a);
	return bf_torn;
}

Test(threads_bf, locked_register_keeps_doorbells_whole)
{
	cr_assert_eq(race(3000), 0, "a half held another doorbell's bytes");
}

/* Negative control: the same without the register's lock tears halves. */
Test(threads_bf, unlocked_register_tears_a_half)
{
	bf_nolock = 1;
	cr_assert_gt(race(3000), 0, "no torn half without the lock: the test cannot see the race");
}
