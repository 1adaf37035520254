/*
 * libmlx5's threading contract, kept by fastverbs' compat calls, on the software device:
 * several threads post on one QP (fv_post_send, fv_wr_* batches), receives are posted by
 * threads other than the poller (fv_post_recv, fv_post_srq_recv), a typed poster and a typed
 * poller split one QP, all while a poller thread drains the CQ. Every WR tags its own remote
 * slot or carries its own sequence number, so the checks see a lost, doubled or misplaced WR.
 *
 * Negative controls: the same runs with the locks switched off (fv_set_lock) and a yield
 * inside each critical section (FV__TEST_YIELD), which makes the race happen on two CPUs;
 * the checks must then report loss. Every run is bounded: a stall of STALL_MS ends it.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

static int mt_yield;	/* yield inside the compat calls' critical sections */
#define FV__TEST_YIELD() (mt_yield ? (void)sched_yield() : (void)0)

#include <fastverbs/fastverbs.h>
#include <criterion/criterion.h>

#include "sim-util.h"

#define T_MAX 4
#define M 20000		/* WRs per posting thread */
#define SIG 16		/* every SIG-th WR of a thread is signaled: its last one too */
#define STALL_MS 4000
#define SLOT 8

static struct simt_dev d;
static struct ibv_cq *cqa, *cqb;
static struct ibv_qp *qa, *qb;
static uint8_t *buf;	/* [0, HALF): sources, [HALF, 2 HALF): targets */
static struct ibv_mr *mr;
static const struct simt_pair fx = SIMT_PAIR;
static struct fv_qp fqa, fqb;
static struct fv_cq fcqa, fcqb;

#define HALF (((size_t)T_MAX * M * SLOT + 4095) & ~(size_t)4095)	/* whole pages: aligned_alloc */

static void setup(void)
{
	struct setup_qp_cfg cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.type = IBV_QPT_RC, cfg.max_send_wr = 256, cfg.max_recv_wr = 256;
	simt_pair_open(&fx, 2 * HALF, 2 * HALF, SIMT_ACCESS_ALL, 1024);
	simt_pair_connect(&fx, cfg, SIMT_ACCESS_ALL, 7, 7);
	cr_assert_eq(fv_qp_init(&fqa, qa), 0);
	cr_assert_eq(fv_qp_init(&fqb, qb), 0);
	cr_assert_eq(fv_cq_init(&fcqa, cqa), 0);
	cr_assert_eq(fv_cq_init(&fcqb, cqb), 0);
}

static void teardown(void)
{
	fv_qp_cleanup(&fqa);
	fv_qp_cleanup(&fqb);
	simt_pair_close(&fx);
}

TestSuite(sim_threads, .init = setup, .fini = teardown, .timeout = 120);

static uint64_t tag(unsigned t, unsigned seq)
{
	return (uint64_t)(t + 1) << 32 | seq;
}

static uint8_t *src(unsigned t, unsigned seq) { return buf + ((size_t)t * M + seq) * SLOT; }
static uint8_t *dst(unsigned t, unsigned seq) { return buf + HALF + ((size_t)t * M + seq) * SLOT; }

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What a run saw; the test asserts on it (or, for a negative control, that it is not clean). */
struct result {
	unsigned completions, dup, bad_status, bad_id, post_err, missing, stalled;
};

static struct result res;
static unsigned n_threads, expect_comp;
static volatile int posters_done, stop;
static long last_progress;
static uint8_t seen[T_MAX][M / SIG];

static void progress(void)
{
	__atomic_store_n(&last_progress, now_ms(), __ATOMIC_RELAXED);
}

static int stalled(void)
{
	return now_ms() - __atomic_load_n(&last_progress, __ATOMIC_RELAXED) > STALL_MS;
}

enum mode { BY_POST_SEND, BY_WR_BATCH, BY_TYPED };
static enum mode mode;

/* The tag of every WR of threads [0, threads), count each, into its source slot. */
static void fill_src(unsigned threads, unsigned count)
{
	for (unsigned t = 0; t < threads; t++)
		for (unsigned seq = 0; seq < count; seq++) {
			uint64_t v = tag(t, seq);

			memcpy(src(t, seq), &v, SLOT);
		}
}

/* What the checks read of a completion, whether fv_poll_cq or fv_poll returned it. */
struct done {
	uint64_t wr_id;
	enum ibv_wc_status status;
};

static int poll16(struct fv_cq *cq, int typed, struct done *c)
{
	struct ibv_wc wc[16];
	struct fv_wc tw[16];
	int n = typed ? fv_poll(cq, tw, 16) : fv_poll_cq(cq, 16, wc);

	for (int i = 0; i < n; i++)
		c[i] = typed ? (struct done){ tw[i].wr_id, tw[i].status }
			     : (struct done){ wc[i].wr_id, wc[i].status };
	return n;
}

/* The pollers' loop: drains cq until want completions, a stop or a stall, counting them and
 * error statuses in res and handing each successful one to check; then stops the others. */
static void drain(struct fv_cq *cq, int typed, unsigned want, void (*check)(uint64_t wr_id))
{
	struct done c[16];

	while (res.completions < want && !stop && !stalled()) {
		int n = poll16(cq, typed, c);

		if (n < 0) {
			res.bad_status++;
			break;
		}
		if (n)
			progress();
		else
			sched_yield();
		for (int i = 0; i < n; i++) {
			res.completions++;
			if (c[i].status != IBV_WC_SUCCESS)
				res.bad_status++;
			else
				check(c[i].wr_id);
		}
	}
	stop = 1;
}

/* WR seq of thread t: an 8-byte RDMA WRITE of its tag to its own slot. */
static int post_write(unsigned t, unsigned seq)
{
	struct ibv_sge s = { (uintptr_t)src(t, seq), SLOT, mr->lkey };
	struct ibv_send_wr w, *bad;

	memset(&w, 0, sizeof(w));
	w.wr_id = tag(t, seq), w.sg_list = &s, w.num_sge = 1, w.opcode = IBV_WR_RDMA_WRITE;
	w.send_flags = seq % SIG == SIG - 1 ? IBV_SEND_SIGNALED : 0;
	w.wr.rdma.remote_addr = (uintptr_t)dst(t, seq), w.wr.rdma.rkey = mr->rkey;
	return fv_post_send(&fqa, &w, &bad);
}

/* WRs seq .. seq + 3 of thread t as one fv_wr_* batch. */
static int post_batch(unsigned t, unsigned seq)
{
	fv_wr_start(&fqa);
	for (unsigned k = seq; k < seq + 4; k++) {
		fqa.wr_id = tag(t, k);
		fqa.wr_flags = k % SIG == SIG - 1 ? IBV_SEND_SIGNALED : 0;
		fv_wr_rdma_write(&fqa, mr->rkey, (uintptr_t)dst(t, k));
		fv_wr_set_sge(&fqa, mr->lkey, (uintptr_t)src(t, k), SLOT);
	}
	return fv_wr_complete(&fqa);
}

/* WR seq of thread t by the typed fv_write, rung every 8 WRs and whenever the ring is full
 * (the poller frees only what the device has seen). */
static int post_typed(unsigned t, unsigned seq)
{
	struct fv_rc *rc = (struct fv_rc *)(void *)&fqa;
	struct ibv_sge s = { (uintptr_t)src(t, seq), SLOT, mr->lkey };
	int err = fv_write(rc, tag(t, seq), seq % SIG == SIG - 1 ? FV_SIGNALED : 0, &s,
			   (uintptr_t)dst(t, seq), mr->rkey);

	if (err == ENOMEM || (!err && ((seq + 1) % 8 == 0 || seq + 1 == M)))
		fv_ring(rc);
	return err;
}

static void *poster(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;

	for (unsigned seq = 0; seq < M && !stop;) {
		int err = mode == BY_POST_SEND ? post_write(t, seq)
			: mode == BY_WR_BATCH  ? post_batch(t, seq)
					       : post_typed(t, seq);

		if (err == ENOMEM) {	/* full: the poller frees room */
			if (stalled())
				break;
			sched_yield();
			continue;
		}
		if (err) {
			__atomic_fetch_add(&res.post_err, 1, __ATOMIC_RELAXED);
			break;
		}
		seq += mode == BY_WR_BATCH ? 4 : 1;
	}
	__atomic_fetch_add(&posters_done, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* A send completion: a signaled WR of a running thread, seen once. */
static void check_write(uint64_t id)
{
	unsigned t = (unsigned)(id >> 32) - 1, seq = (unsigned)id;

	if (t >= n_threads || seq >= M || seq % SIG != SIG - 1)
		res.bad_id++;
	else if (seen[t][seq / SIG]++)
		res.dup++;
}

/* Drains the send CQ (fv_poll in the typed mode) until every signaled WR completed. */
static void *poller(void *arg)
{
	(void)arg;
	drain(&fcqa, mode == BY_TYPED, expect_comp, check_write);
	return NULL;
}

/* T posting threads and a poller on QP A; then every slot's tag is checked. */
static struct result run(unsigned threads, enum mode m)
{
	pthread_t pt[T_MAX], pp;

	mode = m, n_threads = threads, expect_comp = threads * (M / SIG);
	memset(&res, 0, sizeof(res));
	memset(seen, 0, sizeof(seen));
	fill_src(threads, M);
	progress();
	cr_assert_eq(pthread_create(&pp, NULL, poller, NULL), 0);
	for (unsigned t = 0; t < threads; t++)
		cr_assert_eq(pthread_create(&pt[t], NULL, poster, (void *)(uintptr_t)t), 0);
	for (unsigned t = 0; t < threads; t++)
		pthread_join(pt[t], NULL);
	pthread_join(pp, NULL);
	res.stalled = res.completions < expect_comp;
	for (unsigned t = 0; t < threads; t++)
		for (unsigned seq = 0; seq < M; seq++)
			res.missing += memcmp(dst(t, seq), src(t, seq), SLOT) != 0;
	return res;
}

static void expect_clean(struct result r, const char *what)
{
	cr_assert_eq(r.post_err, 0, "%s: a post failed", what);
	cr_assert_eq(r.bad_status, 0, "%s: error completions", what);
	cr_assert_eq(r.bad_id + r.dup, 0, "%s: %u unknown, %u doubled completions", what, r.bad_id, r.dup);
	cr_assert_eq(r.completions, expect_comp, "%s: %u of %u completions", what, r.completions, expect_comp);
	cr_assert_eq(r.missing, 0, "%s: %u WRITEs never landed", what, r.missing);
}

static int dirty(struct result r)
{
	return r.post_err || r.bad_status || r.bad_id || r.dup || r.stalled || r.missing;
}

Test(sim_threads, post_send_2_threads) { expect_clean(run(2, BY_POST_SEND), "2 threads"); }
Test(sim_threads, post_send_4_threads) { expect_clean(run(4, BY_POST_SEND), "4 threads"); }
Test(sim_threads, wr_batches_2_threads) { expect_clean(run(2, BY_WR_BATCH), "2 threads"); }
Test(sim_threads, wr_batches_4_threads) { expect_clean(run(4, BY_WR_BATCH), "4 threads"); }

/*
 * Locks off, the race provoked: the checks above must see the damage. The yields make the
 * race likely, not certain (the scheduler may run the two posters one after the other on a
 * loaded machine), so a negative control gets up to ROUNDS runs; a clean run leaves the
 * queues as the positive tests do, ready for the next.
 */
#define ROUNDS 5

static bool dirty_in_rounds(unsigned threads, enum mode m)
{
	for (unsigned i = 0; i < ROUNDS; i++)
		if (dirty(run(threads, m)))
			return true;
	return false;
}

Test(sim_threads, post_send_unlocked_loses_work)
{
	fv_set_lock(&fqa, 0);
	mt_yield = 1;
	cr_assert(dirty_in_rounds(2, BY_POST_SEND), "no loss without the lock in %d runs: the test cannot see the race",
		  ROUNDS);
}

Test(sim_threads, wr_batches_unlocked_lose_work)
{
	fv_set_lock(&fqa, 0);
	mt_yield = 1;
	cr_assert(dirty_in_rounds(2, BY_WR_BATCH), "no loss without the lock in %d runs: the test cannot see the race",
		  ROUNDS);
}

/* ---- receives posted by threads other than the poller ---- */

#define NRECV 20000
#define RSLOTS 1024	/* receive buffers, each SLOT bytes, from the start of the target half */

static struct ibv_srq *srq;
static struct fv_srq fsrq;
static unsigned recv_posted, sent;
static uint8_t got_seq[NRECV];
static uint32_t slot_free[RSLOTS];	/* 1: a receive may be posted into slot */

/* A receive into a free slot by a receive-posting thread: its own half of the slots. */
static void *recv_poster(void *arg)
{
	unsigned half = (unsigned)(uintptr_t)arg;

	while (!stop && __atomic_load_n(&recv_posted, __ATOMIC_RELAXED) < NRECV) {
		int posted = 0;

		for (unsigned s = half; s < RSLOTS; s += 2) {
			if (!__atomic_load_n(&slot_free[s], __ATOMIC_ACQUIRE))
				continue;
			struct ibv_sge g = { (uintptr_t)buf + HALF + s * SLOT, SLOT, mr->lkey };
			struct ibv_recv_wr w = { s, NULL, &g, 1 }, *bad;
			int err = srq ? fv_post_srq_recv(&fsrq, &w, &bad) : fv_post_recv(&fqb, &w, &bad);

			if (err == ENOMEM)
				break;
			if (err) {
				__atomic_fetch_add(&res.post_err, 1, __ATOMIC_RELAXED);
				stop = 1;
				break;
			}
			__atomic_store_n(&slot_free[s], 0, __ATOMIC_RELAXED);
			__atomic_fetch_add(&recv_posted, 1, __ATOMIC_RELEASE);
			posted = 1;
			if (__atomic_load_n(&recv_posted, __ATOMIC_RELAXED) >= NRECV)
				break;
		}
		if (!posted) {
			if (stalled())
				break;
			sched_yield();
		}
	}
	return NULL;
}

/* Sends seq 0..NRECV-1 as 8-byte SENDs from QP A, never more than receives are posted. */
static void *sender(void *arg)
{
	struct ibv_wc wc[16];

	(void)arg;
	for (unsigned seq = 0; seq < NRECV && !stop;) {
		if (seq >= __atomic_load_n(&recv_posted, __ATOMIC_ACQUIRE) || seq - sent >= 128) {
			int n = fv_poll_cq(&fcqa, 16, wc);	/* its own send CQ */

			for (int i = 0; i < n; i++)
				if (wc[i].status != IBV_WC_SUCCESS)
					res.bad_status++, stop = 1;
			if (n > 0)
				sent += (unsigned)n * SIG;
			if (stalled())
				break;
			sched_yield();
			continue;
		}
		uint64_t v = tag(0, seq);

		memcpy(src(0, seq), &v, SLOT);

		struct ibv_sge s = { (uintptr_t)src(0, seq), SLOT, mr->lkey };
		struct ibv_send_wr w, *bad;

		memset(&w, 0, sizeof(w));
		w.wr_id = seq, w.sg_list = &s, w.num_sge = 1, w.opcode = IBV_WR_SEND;
		w.send_flags = seq % SIG == SIG - 1 ? IBV_SEND_SIGNALED : 0;
		int err = fv_post_send(&fqa, &w, &bad);

		if (err == ENOMEM) {
			sched_yield();
			continue;
		}
		if (err) {
			res.post_err++, stop = 1;
			break;
		}
		seq++;
	}
	return NULL;
}

/* A receive completion names its slot; the slot holds a sequence number, received once. */
static void check_recv(uint64_t wr_id)
{
	unsigned s = (unsigned)wr_id;
	uint64_t v;

	if (s >= RSLOTS) {
		res.bad_id++;
		return;
	}
	memcpy(&v, buf + HALF + s * SLOT, SLOT);
	if ((v >> 32) != 1 || (uint32_t)v >= NRECV)
		res.bad_id++;
	else if (got_seq[(uint32_t)v]++)
		res.dup++;
	__atomic_store_n(&slot_free[s], 1, __ATOMIC_RELEASE);
}

static void *recv_poller(void *arg)
{
	(void)arg;
	drain(&fcqb, 0, NRECV, check_recv);
	return NULL;
}

static struct result run_recv(void)
{
	pthread_t rp[2], snd, pol;

	memset(&res, 0, sizeof(res));
	memset(got_seq, 0, sizeof(got_seq));
	for (unsigned s = 0; s < RSLOTS; s++)
		slot_free[s] = 1;
	progress();
	cr_assert_eq(pthread_create(&pol, NULL, recv_poller, NULL), 0);
	for (unsigned i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&rp[i], NULL, recv_poster, (void *)(uintptr_t)i), 0);
	cr_assert_eq(pthread_create(&snd, NULL, sender, NULL), 0);
	pthread_join(snd, NULL);
	pthread_join(pol, NULL);
	stop = 1;
	for (unsigned i = 0; i < 2; i++)
		pthread_join(rp[i], NULL);
	for (unsigned i = 0; i < NRECV; i++)
		res.missing += got_seq[i] != 1;
	return res;
}

static void expect_recv_clean(struct result r, const char *what)
{
	cr_assert_eq(r.post_err, 0, "%s: a post failed", what);
	cr_assert_eq(r.bad_status, 0, "%s: error completions", what);
	cr_assert_eq(r.bad_id + r.dup, 0, "%s: %u unknown, %u doubled", what, r.bad_id, r.dup);
	cr_assert_eq(r.missing, 0, "%s: %u of %u messages not received once", what, r.missing, NRECV);
}

Test(sim_threads, post_recv_from_two_threads_beside_the_poller)
{
	expect_recv_clean(run_recv(), "RQ");
}

/* The receive side's negative controls, in up to ROUNDS runs as above. */
static bool recv_dirty_in_rounds(void)
{
	for (unsigned i = 0; i < ROUNDS; i++) {
		struct result r = run_recv();

		if (r.post_err || r.bad_status || r.bad_id || r.dup || r.missing)
			return true;
	}
	return false;
}

Test(sim_threads, post_recv_unlocked_loses_work)
{
	fv_set_lock(&fqb, 0);
	mt_yield = 1;
	cr_assert(recv_dirty_in_rounds(), "no loss without the lock in %d runs: the test cannot see the race", ROUNDS);
}

/* QP B again, on an SRQ: the poller frees SRQ WQEs while two threads post to it. */
static void srq_setup(void)
{
	struct ibv_srq_init_attr sa;
	struct setup_qp_cfg cfg;

	setup();
	ibv_destroy_qp(qb);
	fv_qp_cleanup(&fqb);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 256, sa.attr.max_sge = 1;
	srq = ibv_create_srq(d.pd, &sa);
	cr_assert(srq, "ibv_create_srq: %s", strerror(errno));
	cr_assert_eq(fv_srq_init(&fsrq, srq), 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.type = IBV_QPT_RC, cfg.max_send_wr = 256, cfg.srq = srq, cfg.scq = cqb;
	qb = simt_qp(&d, &cfg);
	ibv_destroy_qp(qa);
	fv_qp_cleanup(&fqa);
	cfg.srq = NULL, cfg.max_recv_wr = 16, cfg.scq = cqa;
	qa = simt_qp(&d, &cfg);
	simt_connect(qa, d.lid, qb->qp_num, SIMT_ACCESS_ALL, 7, 7);
	simt_connect(qb, d.lid, qa->qp_num, SIMT_ACCESS_ALL, 7, 7);
	cr_assert_eq(fv_qp_init(&fqa, qa), 0);
	cr_assert_eq(fv_qp_init(&fqb, qb), 0);
}

static void srq_teardown(void)
{
	fv_qp_cleanup(&fqa);
	fv_qp_cleanup(&fqb);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	qa = qb = NULL;
	fv_srq_cleanup(&fsrq);
	ibv_destroy_srq(srq);
	srq = NULL;
	simt_pair_close(&fx);
}

Test(sim_threads_srq, post_srq_recv_from_two_threads_beside_the_poller, .init = srq_setup,
     .fini = srq_teardown, .timeout = 120)
{
	expect_recv_clean(run_recv(), "SRQ");
}

Test(sim_threads_srq, post_srq_recv_unlocked_loses_work, .init = srq_setup, .fini = srq_teardown,
     .timeout = 120)
{
	fv_set_lock(&fsrq, 0);
	mt_yield = 1;
	cr_assert(recv_dirty_in_rounds(), "no loss without the lock in %d runs: the test cannot see the race", ROUNDS);
}

/* ---- a typed poster and a typed poller on two threads, no lock at all ---- */

Test(sim_threads, typed_poster_and_poller_split)
{
	expect_clean(run(1, BY_TYPED), "typed split");
}

/* ---- QPs of two threads on one BlueFlame register ---- */

#define NQP 24	/* libmlx5 gives a context's first QPs registers of their own, then shares */

static struct ibv_qp *xq[NQP], *xp[NQP];
static struct fv_qp fx_q[NQP];

struct shared_poster {
	struct fv_rc *rc;
	unsigned t;
};

/* Lone signaled WRITEs, each rung by itself (a BlueFlame copy), each waited for. */
static void *shared_post(void *arg)
{
	struct shared_poster *p = (struct shared_poster *)arg;
	struct fv_wc wc;
	struct fv_cq *cq = p->t ? &fcqb : &fcqa;

	for (unsigned seq = 0; seq < 2000 && !stop; seq++) {
		struct ibv_sge s = { (uintptr_t)src(p->t, seq), SLOT, mr->lkey };
		int n;

		if (fv_write(p->rc, tag(p->t, seq), FV_SIGNALED, &s, (uintptr_t)dst(p->t, seq), mr->rkey)) {
			__atomic_fetch_add(&res.post_err, 1, __ATOMIC_RELAXED);
			break;
		}
		fv_ring(p->rc);
		long t0 = now_ms();

		while ((n = fv_poll(cq, &wc, 1)) == 0 && now_ms() - t0 < STALL_MS)
			sched_yield();
		if (n != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != tag(p->t, seq)) {
			__atomic_fetch_add(&res.bad_status, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	return NULL;
}

Test(sim_threads, two_threads_on_qps_that_share_a_register)
{
	struct setup_qp_cfg cfg;
	int a = -1, b = -1;

	memset(&cfg, 0, sizeof(cfg));
	cfg.type = IBV_QPT_RC, cfg.max_send_wr = 64;
	for (int i = 0; i < NQP && b < 0; i++) {
		cfg.scq = i % 2 ? cqb : cqa;	/* each poster polls its own CQ */
		xq[i] = simt_qp(&d, &cfg);
		xp[i] = simt_qp(&d, &cfg);
		simt_connect(xq[i], d.lid, xp[i]->qp_num, SIMT_ACCESS_ALL, 7, 7);
		simt_connect(xp[i], d.lid, xq[i]->qp_num, SIMT_ACCESS_ALL, 7, 7);
		cr_assert_eq(fv_qp_init(&fx_q[i], xq[i]), 0);
		for (int j = 0; j < i && b < 0; j++)
			if (fx_q[j].sq.bf == fx_q[i].sq.bf && j % 2 != i % 2)
				a = j, b = i;
	}
	cr_assert(b >= 0, "no two QPs on one BlueFlame register among %d", NQP);
	cr_assert_eq(fx_q[a].sq.bf->users, 2, "the register's record counts both");

	struct shared_poster pa = { (struct fv_rc *)(void *)&fx_q[a], (unsigned)(a % 2) };
	struct shared_poster pb = { (struct fv_rc *)(void *)&fx_q[b], (unsigned)(b % 2) };
	pthread_t ta, tb;

	memset(&res, 0, sizeof(res));
	fill_src(2, 2000);
	cr_assert_eq(pthread_create(&ta, NULL, shared_post, &pa), 0);
	cr_assert_eq(pthread_create(&tb, NULL, shared_post, &pb), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	cr_assert_eq(res.post_err + res.bad_status, 0, "a WRITE failed or did not complete");
	for (unsigned t = 0; t < 2; t++)
		for (unsigned seq = 0; seq < 2000; seq++)
			cr_assert_eq(memcmp(dst(t, seq), src(t, seq), SLOT), 0, "thread %u WRITE %u missing", t, seq);
	for (int i = 0; i <= b; i++) {
		fv_qp_cleanup(&fx_q[i]);
		ibv_destroy_qp(xq[i]);
		ibv_destroy_qp(xp[i]);
	}
}
