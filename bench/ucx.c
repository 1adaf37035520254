/*
 * UCX as the peer: UCT's rc_mlx5 transport (UCX 1.13, which also builds mlx5 WQEs inline)
 * against the fastverbs typed path, in application-shaped loops on the same device:
 *
 *   write_a      RC RDMA_WRITE of one 64-byte local buffer, the remote address advancing
 *                64 B per WR; every 64th WR signaled
 *                  uct: uct_ep_put_zcopy (one iov, no completion object)
 *                  typed: fv_write, FV_SIGNALED decided per WR in the loop
 *   inline16_d   RDMA_WRITE of 16 bytes inline, addressed as write_a
 *                  uct: uct_ep_put_short       typed: fv_write_inline
 *   atomic_add   64-bit atomic add, the remote address advancing 64 B per WR
 *                  uct: uct_ep_atomic64_post(UCT_ATOMIC_OP_ADD)
 *                  typed: fv_fadd (verbs have no add without a result: 8-byte local result)
 *
 * UCT decides signalling itself: rc_mlx5's put_short asks for a CQE once a QP has posted
 * UCX_RC_TX_CQ_MODERATION (default 64) WQEs without one, which is this loop's every-64th
 * policy; put_zcopy and atomic64_post ask for one on every WR (UCT has to learn when the
 * caller's buffer, or its atomic result descriptor, is free again). The typed loop makes
 * the every-64th decision per WR in the measured code. UCT rings
 * the doorbell (BlueFlame) on every call and has no batching, so its rows are at one WR
 * per doorbell; the typed rows are given at 1 and at 32 WRs per doorbell.
 *
 * One measured call, m_<path>_<op>_<batch>(), posts ROUND WRs continuing the address and
 * signalling sequence. Outside it the device runs until idle and the completions are
 * reaped (UCT: uct_worker_progress until uct_iface_flush succeeds).
 *
 *   ucx count   under callgrind (bench/run.sh): COUNT_ROUNDS measured calls per case, then
 *               CALLGRIND_DUMP_STATS_AT("ucx <op> <path> <batch> <WRs>")
 *   ucx time    clock_gettime around each measured call; REPS repetitions of TIME_ROUNDS
 *               calls; prints "time ucx <op> <path> <batch> <ns per WR, median>"
 */
#include <fastverbs/fastverbs.h>
#include <uct/api/uct.h>
#include "bench.h"

#define ROUND 128		/* WRs per measured call */
#define SIG_EVERY 64		/* the application's (and UCT's default) signalling period */
#define AREA 4096		/* remote slots: the address wraps within this many bytes */
#define COUNT_ROUNDS 8
#define TIME_ROUNDS 48
#define REPS 5
#define INL 16

enum op { OP_WRITE_A, OP_INLINE16_D, OP_ATOMIC_ADD, OP_COUNT };
enum path { P_UCT, P_TYPED, P_COUNT };

static const char *const op_name[OP_COUNT] = { "write_a", "inline16_d", "atomic_add" };
static const char *const path_name[P_COUNT] = { "uct", "typed" };

/* UCT's side: two rc_mlx5 interfaces on mlx5_0:1, an endpoint on each connected to the
 * other; the buffer's remote key as the peer unpacked it. */
struct uct_side {
	ucs_async_context_t *async;
	uct_worker_h worker;
	uct_component_h comp;
	uct_md_h md;
	uct_iface_h iface[2];
	uct_ep_h ep[2];
	uct_mem_h memh;
	uct_rkey_bundle_t rkey;
};

/* The typed side: an RC QP connected to its own responder on the same device. */
struct typed_side {
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *rc, *peer;
	struct fv_rc frc;
	struct fv_cq fcq;
};

struct ctx {
	struct bench_dev d;		/* the typed side's device and the buffer both sides use */
	struct uct_side u;
	struct typed_side t;
	uint64_t seq[P_COUNT][OP_COUNT]; /* WRs posted so far: address and signalling continue */
	uint64_t local, remote;		/* buffer halves: local payloads, remote slots */
};

/* ---- the measured loops ---- */

#define ALWAYS static inline __attribute__((always_inline))

ALWAYS uint64_t slot(uint64_t base, uint64_t i)
{
	return base + ((i * 64) & (AREA - 1));
}

__attribute__((noinline)) static void m_uct_write_a_1(struct ctx *c, uint64_t i)
{
	const uct_iov_t iov = { (void *)(uintptr_t)c->local, 64, c->u.memh, 0, 1 };
	uct_ep_h ep = c->u.ep[0];
	const uct_rkey_t rkey = c->u.rkey.rkey;

	for (uint64_t n = i + ROUND; i < n; i++) {
		ucs_status_t s = uct_ep_put_zcopy(ep, &iov, 1, slot(c->remote, i), rkey, NULL);

		if (__builtin_expect(UCS_STATUS_IS_ERR(s), 0))
			bench_fail("uct_ep_put_zcopy: %s", ucs_status_string(s));
	}
}

__attribute__((noinline)) static void m_uct_inline16_d_1(struct ctx *c, uint64_t i)
{
	const void *data = (const void *)(uintptr_t)c->local;
	uct_ep_h ep = c->u.ep[0];
	const uct_rkey_t rkey = c->u.rkey.rkey;

	for (uint64_t n = i + ROUND; i < n; i++) {
		ucs_status_t s = uct_ep_put_short(ep, data, INL, slot(c->remote, i), rkey);

		if (__builtin_expect(s != UCS_OK, 0))
			bench_fail("uct_ep_put_short: %s", ucs_status_string(s));
	}
}

__attribute__((noinline)) static void m_uct_atomic_add_1(struct ctx *c, uint64_t i)
{
	uct_ep_h ep = c->u.ep[0];
	const uct_rkey_t rkey = c->u.rkey.rkey;

	for (uint64_t n = i + ROUND; i < n; i++) {
		ucs_status_t s = uct_ep_atomic64_post(ep, UCT_ATOMIC_OP_ADD, 1, slot(c->remote, i), rkey);

		if (__builtin_expect(s != UCS_OK, 0))
			bench_fail("uct_ep_atomic64_post: %s", ucs_status_string(s));
	}
}

/* The typed loop: op and batch fold; signalling and addresses are decided per WR. */
ALWAYS void body_typed(struct ctx *c, uint64_t i, enum op op, int batch)
{
	struct fv_rc *rc = &c->t.frc;
	const struct ibv_sge sge = { c->local, 64, c->d.mr->lkey };
	const struct ibv_sge sge8 = { c->local + 64, 8, c->d.mr->lkey };
	const void *data = (const void *)(uintptr_t)c->local;
	const uint32_t rkey = c->d.mr->rkey;

	for (uint64_t n = i + ROUND; i < n;) {
		for (int j = 0; j < batch; j++, i++) {
			const unsigned flags = (i % SIG_EVERY) == SIG_EVERY - 1 ? FV_SIGNALED : 0;
			int err;

			switch (op) {
			case OP_WRITE_A:    err = fv_write(rc, i, flags, &sge, slot(c->remote, i), rkey); break;
			case OP_INLINE16_D: err = fv_write_inline(rc, i, flags, data, INL, slot(c->remote, i), rkey); break;
			case OP_ATOMIC_ADD:
			default:            err = fv_fadd(rc, i, flags, &sge8, slot(c->remote, i), rkey, 1); break;
			}
			if (__builtin_expect(err, 0))
				bench_fail("typed %s: %s", op_name[op], strerror(err));
		}
		fv_ring(rc);
	}
}

#define TYPED(op, OP)                                                                      \
	__attribute__((noinline)) static void m_typed_##op##_1(struct ctx *c, uint64_t i)  \
	{                                                                                  \
		body_typed(c, i, OP, 1);                                                   \
	}                                                                                  \
	__attribute__((noinline)) static void m_typed_##op##_32(struct ctx *c, uint64_t i) \
	{                                                                                  \
		body_typed(c, i, OP, 32);                                                  \
	}
TYPED(write_a, OP_WRITE_A)
TYPED(inline16_d, OP_INLINE16_D)
TYPED(atomic_add, OP_ATOMIC_ADD)

typedef void fn_t(struct ctx *, uint64_t);

/* [path][op][batch index: 1, 32]; UCT has no batching. */
static fn_t *const fns[P_COUNT][OP_COUNT][2] = {
	{ { m_uct_write_a_1, NULL }, { m_uct_inline16_d_1, NULL }, { m_uct_atomic_add_1, NULL } },
	{ { m_typed_write_a_1, m_typed_write_a_32 },
	  { m_typed_inline16_d_1, m_typed_inline16_d_32 },
	  { m_typed_atomic_add_1, m_typed_atomic_add_32 } },
};
static const int batches[2] = { 1, 32 };

/* ---- setup ---- */

static void uct_check(ucs_status_t s, const char *what)
{
	if (s != UCS_OK)
		bench_fail("%s: %s", what, ucs_status_string(s));
}

/* The UCT component that offers memory domain `name`. */
static uct_component_h find_component(const char *name)
{
	uct_component_h *comps, found = NULL;
	unsigned n;

	uct_check(uct_query_components(&comps, &n), "uct_query_components");
	for (unsigned i = 0; i < n && !found; i++) {
		uct_component_attr_t a = { .field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT };

		uct_check(uct_component_query(comps[i], &a), "uct_component_query");
		a.md_resources = calloc(a.md_resource_count + 1, sizeof(*a.md_resources));
		if (!a.md_resources)
			bench_fail("out of memory");
		a.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
		uct_check(uct_component_query(comps[i], &a), "uct_component_query");
		for (unsigned j = 0; j < a.md_resource_count; j++)
			if (!strcmp(a.md_resources[j].md_name, name))
				found = comps[i];
		free(a.md_resources);
	}
	uct_release_component_list(comps);
	if (!found)
		bench_fail("UCT offers no memory domain %s (is UCX 1.13 installed, libucx0?)", name);
	return found;
}

static void uct_open(struct ctx *c, const char *dev)
{
	struct uct_side *u = &c->u;
	char devname[64];
	uct_md_config_t *mdc;
	uct_iface_config_t *ic;
	uct_iface_attr_t attr[2];
	uct_md_attr_t mda;
	void *dev_addr[2], *ep_addr[2], *packed;

	snprintf(devname, sizeof(devname), "%s:1", dev);
	uct_check(ucs_async_context_create(UCS_ASYNC_MODE_POLL, &u->async), "ucs_async_context_create");
	uct_check(uct_worker_create(u->async, UCS_THREAD_MODE_SINGLE, &u->worker), "uct_worker_create");
	u->comp = find_component(dev);
	uct_check(uct_md_config_read(u->comp, NULL, NULL, &mdc), "uct_md_config_read");
	uct_check(uct_md_open(u->comp, dev, mdc, &u->md), "uct_md_open");
	uct_config_release(mdc);
	uct_check(uct_md_iface_config_read(u->md, "rc_mlx5", NULL, NULL, &ic), "uct_md_iface_config_read");
	for (int k = 0; k < 2; k++) {
		uct_iface_params_t p;
		uct_ep_params_t ep = { .field_mask = UCT_EP_PARAM_FIELD_IFACE };

		memset(&p, 0, sizeof(p));
		p.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE |
			       UCT_IFACE_PARAM_FIELD_STATS_ROOT | UCT_IFACE_PARAM_FIELD_RX_HEADROOM;
		p.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
		p.mode.device.tl_name = "rc_mlx5";
		p.mode.device.dev_name = devname;
		uct_check(uct_iface_open(u->md, u->worker, &p, ic, &u->iface[k]),
			  "uct_iface_open(rc_mlx5)");
		/* Completions are reaped only by interfaces whose progress is enabled. */
		uct_iface_progress_enable(u->iface[k], UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
		uct_check(uct_iface_query(u->iface[k], &attr[k]), "uct_iface_query");
		if (!(attr[k].cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP))
			bench_fail("rc_mlx5 does not connect endpoint to endpoint");
		ep.iface = u->iface[k];
		uct_check(uct_ep_create(&ep, &u->ep[k]), "uct_ep_create");
		dev_addr[k] = calloc(1, attr[k].device_addr_len + 1);
		ep_addr[k] = calloc(1, attr[k].ep_addr_len + 1);
		if (!dev_addr[k] || !ep_addr[k])
			bench_fail("out of memory");
		uct_check(uct_iface_get_device_address(u->iface[k], dev_addr[k]), "uct_iface_get_device_address");
		uct_check(uct_ep_get_address(u->ep[k], ep_addr[k]), "uct_ep_get_address");
	}
	uct_config_release(ic);
	for (int k = 0; k < 2; k++)
		uct_check(uct_ep_connect_to_ep(u->ep[k], dev_addr[1 - k], ep_addr[1 - k]), "uct_ep_connect_to_ep");
	for (int k = 0; k < 2; k++) {
		free(dev_addr[k]);
		free(ep_addr[k]);
	}
	uct_check(uct_md_mem_reg(u->md, c->d.buf, BENCH_BUF, UCT_MD_MEM_ACCESS_ALL, &u->memh), "uct_md_mem_reg");
	uct_check(uct_md_query(u->md, &mda), "uct_md_query");
	packed = calloc(1, mda.rkey_packed_size + 1);
	if (!packed)
		bench_fail("out of memory");
	uct_check(uct_md_mkey_pack(u->md, u->memh, packed), "uct_md_mkey_pack");
	uct_check(uct_rkey_unpack(u->comp, packed, &u->rkey), "uct_rkey_unpack");
	free(packed);
}

static void typed_open(struct ctx *c)
{
	struct typed_side *t = &c->t;
	int err;

	t->scq = bench_cq(&c->d, 1024);
	t->rcq = bench_cq(&c->d, 64);
	t->rc = bench_qp(&c->d, IBV_QPT_RC, t->scq, t->rcq, 512, 1, 0);
	t->peer = bench_qp(&c->d, IBV_QPT_RC, t->rcq, t->rcq, 1, 1, 0);
	bench_rc_connect(&c->d, t->rc, t->peer->qp_num);
	bench_rc_connect(&c->d, t->peer, t->rc->qp_num);
	err = fv_rc_init(&t->frc, t->rc);
	if (!err)
		err = fv_cq_init(&t->fcq, t->scq);
	if (err)
		bench_fail("taking the QP and CQ over: %s", strerror(err));
}

static void ctx_open(struct ctx *c)
{
	const char *dev;

	memset(c, 0, sizeof(*c));
	bench_open(&c->d);
	c->local = (uint64_t)(uintptr_t)c->d.buf;
	c->remote = c->local + BENCH_BUF / 2;
	for (int i = 0; i < 64; i++)
		c->d.buf[i] = (uint8_t)i;
	dev = ibv_get_device_name(c->d.ctx->device);
	uct_open(c, dev);
	typed_open(c);
}

/* ---- running the cases ---- */

/* Let the device finish and reap: UCT until a flush of its interface is complete, the
 * typed path its signaled completions (one per SIG_EVERY WRs posted). */
static void settle(struct ctx *c, enum path p, uint64_t from, uint64_t to)
{
	uint64_t t0 = bench_now_ns();

	if (p == P_UCT) {
		for (;;) {
			ucs_status_t s;

			bench_device_run(&c->d);
			uct_worker_progress(c->u.worker);
			s = uct_iface_flush(c->u.iface[0], 0, NULL);
			if (s == UCS_OK)
				return;
			if (s != UCS_INPROGRESS && s != UCS_ERR_NO_RESOURCE)
				bench_fail("uct_iface_flush: %s", ucs_status_string(s));
			bench_wait(&c->d, t0, "UCT completions");
		}
	}
	for (int want = (int)(to / SIG_EVERY - from / SIG_EVERY); want > 0;) {
		struct fv_wc wc[8];
		int n;

		bench_device_run(&c->d);
		n = fv_poll(&c->t.fcq, wc, 8);
		if (n < 0)
			bench_fail("fv_poll: %d", n);
		for (int k = 0; k < n; k++)
			if (wc[k].status != IBV_WC_SUCCESS)
				bench_fail("typed completion %llu: %s", (unsigned long long)wc[k].wr_id,
					   ibv_wc_status_str(wc[k].status));
		want -= n;
		if (!n)
			bench_wait(&c->d, t0, "typed completions");
	}
}

/* One measured call of a case, then the settling; returns its ns. */
static uint64_t round_once(struct ctx *c, enum path p, enum op op, int bi)
{
	uint64_t i = c->seq[p][op], t0, t1;

	t0 = bench_now_ns();
	fns[p][op][bi](c, i);
	t1 = bench_now_ns();
	c->seq[p][op] = i + ROUND;
	settle(c, p, i, i + ROUND);
	return t1 - t0;
}

static void run_count(struct ctx *c)
{
	char label[96];

	for (int op = 0; op < OP_COUNT; op++)
		for (int p = 0; p < P_COUNT; p++)
			for (int bi = 0; bi < 2; bi++) {
				if (!fns[p][op][bi])
					continue;
				fprintf(stderr, "ucx: counting instructions: %s %s %d\n", op_name[op],
					path_name[p], batches[bi]);
				round_once(c, (enum path)p, (enum op)op, bi); /* warm up */
				CALLGRIND_ZERO_STATS;
				for (int r = 0; r < COUNT_ROUNDS; r++)
					round_once(c, (enum path)p, (enum op)op, bi);
				snprintf(label, sizeof(label), "ucx %s %s %d %d", op_name[op], path_name[p],
					 batches[bi], COUNT_ROUNDS * ROUND);
				CALLGRIND_DUMP_STATS_AT(label);
			}
}

static void run_time(struct ctx *c)
{
	static double ns[OP_COUNT][P_COUNT][2][REPS];

	for (int rep = 0; rep < REPS; rep++) {
		fprintf(stderr, "ucx: timing, repetition %d of %d\n", rep + 1, REPS);
		for (int op = 0; op < OP_COUNT; op++)
			for (int p = 0; p < P_COUNT; p++)
				for (int bi = 0; bi < 2; bi++) {
					uint64_t t = 0;

					if (!fns[p][op][bi])
						continue;
					round_once(c, (enum path)p, (enum op)op, bi); /* warm up */
					for (int r = 0; r < TIME_ROUNDS; r++)
						t += round_once(c, (enum path)p, (enum op)op, bi);
					ns[op][p][bi][rep] = (double)t / (TIME_ROUNDS * ROUND);
				}
	}
	for (int op = 0; op < OP_COUNT; op++)
		for (int p = 0; p < P_COUNT; p++)
			for (int bi = 0; bi < 2; bi++)
				if (fns[p][op][bi])
					printf("time ucx %s %s %d %.2f\n", op_name[op], path_name[p], batches[bi],
					       bench_median(ns[op][p][bi], REPS));
}

static void open_any(void *c)  { ctx_open(c); }
static void count_any(void *c) { run_count(c); }
static void time_any(void *c)  { run_time(c); }

int main(int argc, char **argv)
{
	static struct ctx c;
	static const struct bench_prog prog = { "ucx", open_any, count_any, time_any };

	return bench_main(argc, argv, &prog, &c, &c.d);
}
