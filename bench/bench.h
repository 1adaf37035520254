/*
 * Shared slow-path setup of the benchmarks (bench/post.c, bench/poll.c): open the device,
 * create and connect QPs (the steps are examples/setup.h, shared with the examples and the
 * tests), let the device work, time. Runs on a real mlx5 device or on the
 * software one (sim/fvsim-run; single-step mode keeps the device still while we measure).
 *
 * Measured functions are named m_*: bench/run.sh runs the programs under callgrind with
 * --collect-atstart=no --toggle-collect='m_*', so exactly those calls (and everything they
 * call) are counted; each case ends with CALLGRIND_DUMP_STATS_AT("<label> <units>").
 */
#ifndef FV_BENCH_H
#define FV_BENCH_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#include <valgrind/callgrind.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include "../examples/setup.h"
#include "../sim/fvsim.h"

#define BENCH_QKEY 0x11111111u

_Noreturn __attribute__((format(printf, 1, 2), cold, noinline)) static void bench_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bench: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/*
 * The body of a measured poll loop, the same for every poller: CALL (how many completions came
 * back, < 0 on an error) again until n came; then their count. An error fails the bench with
 * bench_fail(...), whose arguments may name r_, the failed call's value.
 */
#define BENCH_POLL_UNTIL(n, CALL, ...)                                                             \
	({                                                                                         \
		int got_ = 0;                                                                      \
		while (got_ < (n)) {                                                               \
			int r_ = (CALL);                                                           \
			if (__builtin_expect(r_ < 0, 0))                                           \
				bench_fail(__VA_ARGS__);                                           \
			got_ += r_;                                                                \
		}                                                                                  \
		got_;                                                                              \
	})

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Under callgrind: count mode (few iterations, dumps per case). */
static inline int bench_counting(void)
{
	return RUNNING_ON_VALGRIND;
}

struct bench_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;		/* RoCE: FVBENCH_GID_INDEX, default 0; -1 on InfiniBand */
	int step;		/* the software device in single-step mode */
	uint8_t *buf;		/* one registered buffer: local and remote areas */
	struct ibv_mr *mr;
};

#define BENCH_BUF 65536

static inline void bench_open(struct bench_dev *d)
{
	const char *name = getenv("FVBENCH_DEVICE");
	const char *g = getenv("FVBENCH_GID_INDEX");
	struct setup_dev s;
	const char *what;
	int err;

	memset(d, 0, sizeof(*d));
	if (fvsim_present())
		fvsim_set_step_mode(1);
	d->step = fvsim_present() && fvsim_step_mode();
	err = setup_open(&s, name, 0, 1, g ? atoi(g) : 0, &what);
	if (err == ENODEV && name)
		bench_fail("cannot open %s", name);
	if (err == ENODEV)
		bench_fail("no RDMA device (on a machine without one, run under sim/fvsim-run)");
	if (err == ENETDOWN)
		bench_fail("port 1 of %s is not active", ibv_get_device_name(s.ctx->device));
	if (err)
		bench_fail("%s: %s", what, strerror(err));
	d->ctx = s.ctx;
	d->pd = s.pd;
	d->port = s.port;
	d->gid = s.gid;
	d->gid_index = s.gid_index;
	d->buf = aligned_alloc(4096, BENCH_BUF);
	if (!d->buf)
		bench_fail("out of memory");
	memset(d->buf, 0, BENCH_BUF);
	d->mr = ibv_reg_mr(d->pd, d->buf, BENCH_BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!d->mr)
		bench_fail("ibv_reg_mr: %s", strerror(errno));
}

static inline struct ibv_cq *bench_cq(struct bench_dev *d, int n)
{
	struct ibv_cq *cq = ibv_create_cq(d->ctx, n, NULL, NULL, 0);

	if (!cq)
		bench_fail("ibv_create_cq: %s", strerror(errno));
	return cq;
}

/*
 * A QP with the given caps; with send_ops (the ibv_wr_* operations it will use) it is created
 * through ibv_create_qp_ex, as the ibv_wr_* API requires.
 */
static inline struct ibv_qp *bench_qp(struct bench_dev *d, enum ibv_qp_type type, struct ibv_cq *scq,
				      struct ibv_cq *rcq, uint32_t send_wr, uint32_t recv_wr, uint64_t send_ops)
{
	struct setup_qp_cfg c;
	struct ibv_qp *qp;
	const char *what;
	int err;

	memset(&c, 0, sizeof(c));
	c.type = type;
	c.scq = scq;
	c.rcq = rcq;
	c.max_send_wr = send_wr;
	c.max_recv_wr = recv_wr;
	c.max_send_sge = 1;
	c.max_recv_sge = 1;
	c.max_inline = 64;
	c.send_ops = send_ops;
	err = setup_qp(d->pd, &c, &qp, &what);
	if (err)
		bench_fail("%s: %s", what, strerror(err));
	return qp;
}

/*
 * A DCI (srq NULL: send_wr WRs of one SGE; with send_ops, for the ibv_wr_* API) or a DCT on
 * srq with access key key, made by mlx5dv_create_qp; cq takes both sides' completions.
 */
static inline struct ibv_qp *bench_dc_qp(struct bench_dev *d, struct ibv_cq *cq, struct ibv_srq *srq,
					 uint32_t send_wr, uint64_t send_ops, uint64_t key)
{
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	memset(&dv, 0, sizeof(dv));
	a.qp_type = IBV_QPT_DRIVER;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | (send_ops ? IBV_QP_INIT_ATTR_SEND_OPS_FLAGS : 0);
	a.send_ops_flags = send_ops;
	a.pd = d->pd;
	a.send_cq = a.recv_cq = cq;
	a.srq = srq;
	a.cap.max_send_wr = srq ? 0 : send_wr;
	a.cap.max_send_sge = srq ? 0 : 1;
	dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	dv.dc_init_attr.dc_type = srq ? MLX5DV_DCTYPE_DCT : MLX5DV_DCTYPE_DCI;
	dv.dc_init_attr.dct_access_key = key;
	qp = mlx5dv_create_qp(d->ctx, &a, &dv);
	if (!qp)
		bench_fail("mlx5dv_create_qp (%s): %s", srq ? "DCT" : "DCI", strerror(errno));
	return qp;
}

/* The path to our own port (hop limit 1 on RoCE). */
static inline void bench_path(const struct bench_dev *d, struct ibv_ah_attr *a)
{
	setup_path(a, d->port.lid, 1, d->gid_index >= 0 ? &d->gid : NULL, d->gid_index, 1);
}

/* RESET -> INIT -> RTR -> RTS for an RC QP connected to QP dqpn on our own port. */
static inline void bench_rc_connect(struct bench_dev *d, struct ibv_qp *qp, uint32_t dqpn)
{
	struct setup_conn c;
	struct ibv_ah_attr ah;
	const char *what;
	int err;

	memset(&c, 0, sizeof(c));
	c.port_num = 1;
	c.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	c.mtu = d->port.active_mtu;
	c.rd_atomic = 16;
	c.min_rnr_timer = 1;
	c.timeout = 14;
	c.retry_cnt = 7;
	c.rnr_retry = 7;
	bench_path(d, &ah);
	err = setup_connect(qp, &ah, dqpn, &c, &what);
	if (err)
		bench_fail("ibv_modify_qp to %s: %s", what, strerror(err));
}

/*
 * RESET -> INIT -> RTR for a DCT: remote writes, reads and atomics; RESET -> INIT -> RTR -> RTS
 * for a DCI (examples/setup.h).
 */
static inline void bench_dc_ready(struct bench_dev *d, struct ibv_qp *qp, int dct)
{
	const struct setup_conn c = {
		.port_num = 1, .mtu = d->port.active_mtu, .min_rnr_timer = 1, .rd_atomic = 1,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};
	struct ibv_ah_attr ah;
	const char *what;
	int err;

	memset(&ah, 0, sizeof(ah));
	bench_path(d, &ah);
	err = dct ? setup_dct_ready(qp, &ah, &c, &what) : setup_dci_ready(qp, &c, &what);
	if (err)
		bench_fail("%s: %s", what, strerror(err));
}

/* RESET -> INIT -> RTR -> RTS for a UD QP. */
static inline void bench_ud_ready(struct ibv_qp *qp)
{
	const char *what;
	int err = setup_ud_ready(qp, 1, BENCH_QKEY, &what);

	if (err)
		bench_fail("ibv_modify_qp to %s: %s", what, strerror(err));
}

/* An address handle for our own port. */
static inline struct ibv_ah *bench_ah(struct bench_dev *d)
{
	struct ibv_ah_attr a;
	struct ibv_ah *ah;

	bench_path(d, &a);
	ah = ibv_create_ah(d->pd, &a);
	if (!ah)
		bench_fail("ibv_create_ah: %s", strerror(errno));
	return ah;
}

/*
 * Let the device finish what was posted: on the software device in step mode run it until
 * idle (nothing moves otherwise); on hardware it works by itself and the callers poll.
 */
static inline void bench_device_run(struct bench_dev *d)
{
	if (d->step)
		fvsim_run_until_idle();
}

/* Waiting for something that should come: yield to the device, give up after 5 s. */
static inline void bench_wait(struct bench_dev *d, uint64_t t0, const char *what)
{
	if (bench_now_ns() - t0 > 5000000000ull)
		bench_fail("timed out waiting for %s", what);
	if (d->step)
		fvsim_step();
	else
		sched_yield();
}

/* Poll a libmlx5-owned CQ until n successful completions arrived. */
static inline void bench_ibv_drain(struct bench_dev *d, struct ibv_cq *cq, int n, const char *what)
{
	struct ibv_wc wc[16];
	uint64_t t0 = bench_now_ns();

	while (n > 0) {
		int r = ibv_poll_cq(cq, n < 16 ? n : 16, wc);

		if (r < 0)
			bench_fail("ibv_poll_cq (%s): %d", what, r);
		for (int i = 0; i < r; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				bench_fail("%s: completion %llu: %s", what, (unsigned long long)wc[i].wr_id,
					   ibv_wc_status_str(wc[i].status));
		n -= r;
		if (!r)
			bench_wait(d, t0, what);
	}
}

/* Median of n doubles (sorts them). */
static inline double bench_median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* What one bench program does: open its objects, then count (under callgrind) or time. */
struct bench_prog {
	const char *name;
	void (*open)(void *ctx);
	void (*count)(void *ctx);
	void (*time)(void *ctx);
};

/* The main() of every bench program: `count` or `time`, on the device bench_open found (d). */
static inline int bench_main(int argc, char **argv, const struct bench_prog *p, void *ctx,
			     const struct bench_dev *d)
{
	int count = argc > 1 && !strcmp(argv[1], "count");

	if (argc != 2 || (!count && strcmp(argv[1], "time"))) {
		fprintf(stderr, "usage: %s count|time   (count: under callgrind, see bench/run.sh)\n", argv[0]);
		return 2;
	}
	if (count && !bench_counting())
		fprintf(stderr, "%s: not running under valgrind: the count mode measures nothing\n", p->name);
	p->open(ctx);
	fprintf(stderr, "%s: %s, %s\n", p->name, ibv_get_device_name(d->ctx->device),
		d->step ? "software device in single-step mode" : "hardware");
	(count ? p->count : p->time)(ctx);
	fflush(stdout);
	return 0;
}

#endif /* FV_BENCH_H */
