/* Helpers for the tests on the software device (every folder of tests/ but unit/): open it,
 * build QPs, connect them in loopback, and wait for completions. Header-only so they only
 * exist in those tests. The verbs steps are examples/setup.h (shared with the examples and the
 * benchmarks), asserted here; device control (step mode) comes from sim/fvsim.h. */
#ifndef SIM_UTIL_H
#define SIM_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "../../examples/setup.h"
#include "../../sim/fvsim.h"
#include "sim-proc.h"

#define SIMT_WAIT_MS 5000

struct simt_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint16_t lid;
};

static inline void simt_open(struct simt_dev *d, int index)
{
	struct setup_dev s;
	const char *what;
	int err = setup_open(&s, NULL, index, 1, 0, &what);

	cr_assert(!err, "device %d: %s: %s", index, what, strerror(err));
	d->ctx = s.ctx;
	d->pd = s.pd;
	d->lid = s.lid;
}

/* Runs fvsim-sysfs: writes (or refreshes) the sysfs tree under dir for the FVSIM_*
 * environment of this process. */
static inline void simt_write_sysfs(const char *dir)
{
	const char *build = getenv("FVSIM_BUILD");
	char tool[4096];
	int status;
	pid_t pid;

	cr_assert(build, "FVSIM_BUILD unset: run through sim/fvsim-run");
	snprintf(tool, sizeof(tool), "%s/fvsim-sysfs", build);
	pid = fork();
	if (pid == 0) {
		unsetenv("LD_PRELOAD");
		execl(tool, tool, dir, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Chooses the device set (FVSIM_DEVICES, FVSIM_PORTS, FVSIM_LINK; link NULL: InfiniBand)
 * before libibverbs first looks at sysfs: writes the tree fvsim-run would use for it
 * (rewritten atomically) and points SYSFS_PATH there. Programs started through
 * fvsim-run later inherit the same choice. */
static inline void simt_sysfs(int ndev, int nports, const char *link)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096], num[8];

	snprintf(dir, sizeof(dir), "%s/fvsim-%u/sysfs2-d%d-p%d%s%s", tmp ? tmp : "/tmp",
		 (unsigned)getuid(), ndev, nports, link ? "-" : "", link ? link : "");
	for (char *c = strrchr(dir, '/'); *c; c++)
		if (*c == ',')
			*c = '_';
	snprintf(num, sizeof(num), "%d", ndev);
	setenv("FVSIM_DEVICES", num, 1);
	snprintf(num, sizeof(num), "%d", nports);
	setenv("FVSIM_PORTS", num, 1);
	if (link)
		setenv("FVSIM_LINK", link, 1);
	else
		unsetenv("FVSIM_LINK");
	simt_write_sysfs(dir);
	setenv("SYSFS_PATH", dir, 1);
}

static inline void simt_close(struct simt_dev *d)
{
	cr_assert_eq(ibv_dealloc_pd(d->pd), 0);
	cr_assert_eq(ibv_close_device(d->ctx), 0);
}

static inline struct ibv_cq *simt_cq(struct simt_dev *d, int n)
{
	struct ibv_cq *cq = ibv_create_cq(d->ctx, n, NULL, NULL, 0);

	cr_assert(cq, "ibv_create_cq: %s", strerror(errno));
	return cq;
}

static inline struct ibv_mr *simt_mr(struct simt_dev *d, void *buf, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(d->pd, buf, len, access);

	cr_assert(mr, "ibv_reg_mr: %s", strerror(errno));
	return mr;
}

/* len zeroed, page-aligned bytes; with mr, registered with access. */
static inline uint8_t *simt_mem(struct simt_dev *d, size_t len, int access, struct ibv_mr **mr)
{
	uint8_t *p = (uint8_t *)aligned_alloc(4096, len);

	cr_assert(p, "out of memory");
	memset(p, 0, len);
	if (mr)
		*mr = simt_mr(d, p, len, access);
	return p;
}

#define SIMT_ACCESS_ALL                                                                \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |     \
	 IBV_ACCESS_REMOTE_ATOMIC)

/* A QP as simt_qp makes it: cfg (examples/setup.h) with defaults for what it leaves 0 (64
 * WRs and 4 SGEs a queue, no receive queue with an SRQ, the send CQ for receives). */
static inline struct ibv_qp *simt_qp(struct simt_dev *d, const struct setup_qp_cfg *c)
{
	struct setup_qp_cfg q = *c;
	struct ibv_qp *qp;
	const char *what;
	int err;

	q.rcq = c->rcq ? c->rcq : c->scq;
	q.max_send_wr = c->max_send_wr ? c->max_send_wr : 64;
	q.max_recv_wr = c->srq ? 0 : (c->max_recv_wr ? c->max_recv_wr : 64);
	q.max_send_sge = c->max_send_sge ? c->max_send_sge : 4;
	q.max_recv_sge = c->srq ? 0 : (c->max_recv_sge ? c->max_recv_sge : 4);
	err = setup_qp(d->pd, &q, &qp, &what);
	cr_assert(!err, "%s: %s", what, strerror(err));
	return qp;
}

/* RESET -> INIT -> RTR -> RTS for RC/UC/XRC, connected to dqpn along the path ah (port 1;
 * RoCE paths name a GID). */
static inline void simt_connect_ah(struct ibv_qp *qp, const struct ibv_ah_attr *ah,
				   uint32_t dqpn, int access, uint8_t rnr_retry,
				   uint8_t retry_cnt)
{
	struct setup_conn c;
	const char *what;
	int err;

	memset(&c, 0, sizeof(c));
	c.port_num = 1;
	c.access = access;
	c.mtu = IBV_MTU_1024;
	c.rd_atomic = 4;
	c.min_rnr_timer = 1;
	c.timeout = 1;
	c.retry_cnt = retry_cnt;
	c.rnr_retry = rnr_retry;
	err = setup_connect(qp, ah, dqpn, &c, &what);
	cr_assert(!err, "to %s: %s", what, strerror(err));
}

/* simt_connect_ah on an InfiniBand path to dlid. */
static inline void simt_connect(struct ibv_qp *qp, uint16_t dlid, uint32_t dqpn, int access,
				uint8_t rnr_retry, uint8_t retry_cnt)
{
	struct ibv_ah_attr ah;

	memset(&ah, 0, sizeof(ah));	/* no designated initializers: the C++ suite includes this */
	ah.dlid = dlid;
	ah.port_num = 1;
	simt_connect_ah(qp, &ah, dqpn, access, rnr_retry, retry_cnt);
}

/*
 * Two QPs of cfg's type (RC, UC) on one device, a completing on cq_a and b on cq_b,
 * connected to each other with access and the retry counts (simt_connect).
 */
static inline void simt_qp_pair(struct simt_dev *d, struct setup_qp_cfg cfg, struct ibv_cq *cq_a,
				struct ibv_cq *cq_b, int access, uint8_t rnr_retry, uint8_t retry_cnt,
				struct ibv_qp **a, struct ibv_qp **b)
{
	cfg.scq = cq_a;
	*a = simt_qp(d, &cfg);
	cfg.scq = cq_b;
	*b = simt_qp(d, &cfg);
	simt_connect(*a, d->lid, (*b)->qp_num, access, rnr_retry, retry_cnt);
	simt_connect(*b, d->lid, (*a)->qp_num, access, rnr_retry, retry_cnt);
}

/*
 * The fixture most sim suites share: a device, one zeroed page-aligned buffer and its MR,
 * a CQ for QP A and one for QP B, and the two QPs. The suite keeps these in its own
 * file-scope variables (its tests use them by name) and tells the fixture where they are:
 *   static const struct simt_pair fx = SIMT_PAIR;
 * names d, buf, mr, cqa, cqb, qa and qb.
 */
struct simt_pair {
	struct simt_dev *d;
	uint8_t **buf;
	struct ibv_mr **mr;
	struct ibv_cq **cqa, **cqb;
	struct ibv_qp **qa, **qb;
};
#define SIMT_PAIR { &d, &buf, &mr, &cqa, &cqb, &qa, &qb }

/* Device 0, len bytes of buffer with an MR over the first mr_len (0: no MR), two CQs of
 * cqe entries; no QPs yet. */
static inline void simt_pair_open(const struct simt_pair *p, size_t len, size_t mr_len,
				  int mr_access, int cqe)
{
	simt_open(p->d, 0);
	*p->buf = simt_mem(p->d, len, 0, NULL);
	*p->mr = mr_len ? simt_mr(p->d, *p->buf, mr_len, mr_access) : NULL;
	*p->cqa = simt_cq(p->d, cqe);
	*p->cqb = simt_cq(p->d, cqe);
}

/* QPs A and B of cfg's type connected to each other (simt_qp_pair). */
static inline void simt_pair_connect(const struct simt_pair *p, struct setup_qp_cfg cfg, int access,
				     uint8_t rnr_retry, uint8_t retry_cnt)
{
	simt_qp_pair(p->d, cfg, *p->cqa, *p->cqb, access, rnr_retry, retry_cnt, p->qa, p->qb);
}

/* Destroys what the suite has of the fixture (a test may have freed the MR already). */
static inline void simt_pair_close(const struct simt_pair *p)
{
	if (*p->qa)
		ibv_destroy_qp(*p->qa);
	if (*p->qb)
		ibv_destroy_qp(*p->qb);
	*p->qa = *p->qb = NULL;
	ibv_destroy_cq(*p->cqa);
	ibv_destroy_cq(*p->cqb);
	if (*p->mr)
		ibv_dereg_mr(*p->mr);
	*p->mr = NULL;
	free(*p->buf);
	simt_close(p->d);
}

/* An XRC domain of its own (no file behind it). */
static inline struct ibv_xrcd *simt_xrcd(struct simt_dev *d)
{
	struct ibv_xrcd_init_attr a;
	struct ibv_xrcd *x;

	memset(&a, 0, sizeof(a));
	a.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	a.fd = -1;
	x = ibv_open_xrcd(d->ctx, &a);
	cr_assert(x, "ibv_open_xrcd: %s", strerror(errno));
	return x;
}

/* An XRC SRQ of xrcd whose receives complete on cq. */
static inline struct ibv_srq *simt_xrc_srq(struct simt_dev *d, struct ibv_xrcd *xrcd,
					   struct ibv_cq *cq, uint32_t max_wr, uint32_t max_sge)
{
	struct ibv_srq_init_attr_ex a;
	struct ibv_srq *s;

	memset(&a, 0, sizeof(a));
	a.attr.max_wr = max_wr;
	a.attr.max_sge = max_sge;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
		      IBV_SRQ_INIT_ATTR_CQ;
	a.srq_type = IBV_SRQT_XRC;
	a.pd = d->pd;
	a.xrcd = xrcd;
	a.cq = cq;
	s = ibv_create_srq_ex(d->ctx, &a);
	cr_assert(s, "ibv_create_srq_ex: %s", strerror(errno));
	return s;
}

/* An XRC initiator (its sends complete on scq) and a target of xrcd, connected to each
 * other; the target grants every remote access. */
static inline void simt_xrc_pair(struct simt_dev *d, struct ibv_xrcd *xrcd, struct ibv_cq *scq,
				 uint32_t max_send_wr, uint32_t max_send_sge, struct ibv_qp **ini,
				 struct ibv_qp **tgt)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_SEND;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = d->pd;
	a.send_cq = scq;
	a.cap.max_send_wr = max_send_wr;
	a.cap.max_send_sge = max_send_sge;
	*ini = ibv_create_qp_ex(d->ctx, &a);
	cr_assert(*ini, "XRC INI: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	a.xrcd = xrcd;
	*tgt = ibv_create_qp_ex(d->ctx, &a);
	cr_assert(*tgt, "XRC TGT: %s", strerror(errno));
	simt_connect(*ini, d->lid, (*tgt)->qp_num, 0, 7, 7);
	simt_connect(*tgt, d->lid, (*ini)->qp_num, SIMT_ACCESS_ALL, 7, 7);
}

/* RESET -> INIT -> RTR -> RTS for UD. */
static inline void simt_ud_ready(struct ibv_qp *qp, uint32_t qkey)
{
	const char *what;
	int err = setup_ud_ready(qp, 1, qkey, &what);

	cr_assert(!err, "UD to %s: %s", what, strerror(err));
}

/* Lets the device work: one step in step mode, a yield otherwise. */
static inline void simt_kick(void)
{
	if (fvsim_present() && fvsim_step_mode())
		fvsim_step();
	else
		sched_yield();
}

/* Polls until n completions arrived (or the wait times out); returns how many. */
static inline int simt_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	struct timespec t0;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		cr_assert(r >= 0, "ibv_poll_cq: %d", r);
		got += r;
		if (got < n) {
			if (simt_ms_since(&t0) > SIMT_WAIT_MS)
				break;
			simt_kick();
		}
	}
	return got;
}

/* Lets the device settle and checks no completion is left on the CQ. */
static inline void simt_expect_empty(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	if (fvsim_present() && fvsim_step_mode())
		fvsim_run_until_idle();
	else
		nanosleep(&ts, NULL);
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 0, "unexpected completion: wr_id %llu status %s",
		     (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
}

static inline void simt_post_recv(struct ibv_qp *qp, uint64_t wr_id, void *buf, uint32_t len,
				  uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_recv_wr wr = { wr_id, NULL, &sge, 1 }, *bad; /* C++ has no designators here */

	cr_assert_eq(ibv_post_recv(qp, &wr, &bad), 0);
}

static inline void simt_post_srq_recv(struct ibv_srq *srq, uint64_t wr_id, void *buf,
				      uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_recv_wr wr = { wr_id, NULL, &sge, 1 }, *bad; /* C++ has no designators here */

	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
}

/* One signaled WR with one SGE. */
static inline void simt_post_send(struct ibv_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
				  void *buf, uint32_t len, uint32_t lkey, uint64_t raddr,
				  uint32_t rkey, int flags)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0, "ibv_post_send: %s", strerror(errno));
}

#endif
