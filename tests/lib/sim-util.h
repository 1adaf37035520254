/* Helpers for the tests of the software device (tests/sim-*.c): open it, build QPs,
 * connect them in loopback, and wait for completions. Header-only so they only exist in
 * the sim tests. Device control (step mode) comes from sim/fvsim.h. */
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

#include "../../sim/fvsim.h"

#define SIMT_WAIT_MS 5000

struct simt_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint16_t lid;
};

static inline void simt_open(struct simt_dev *d, int index)
{
	struct ibv_device **list;
	struct ibv_port_attr pa;
	int n;

	list = ibv_get_device_list(&n);
	cr_assert(list, "ibv_get_device_list: %s", strerror(errno));
	cr_assert(n > index, "device %d missing (%d devices)", index, n);
	d->ctx = ibv_open_device(list[index]);
	ibv_free_device_list(list);
	cr_assert(d->ctx, "ibv_open_device: %s", strerror(errno));
	d->pd = ibv_alloc_pd(d->ctx);
	cr_assert(d->pd, "ibv_alloc_pd: %s", strerror(errno));
	cr_assert_eq(ibv_query_port(d->ctx, 1, &pa), 0);
	d->lid = pa.lid;
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

#define SIMT_ACCESS_ALL                                                                \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |     \
	 IBV_ACCESS_REMOTE_ATOMIC)

struct simt_qp_cfg {
	enum ibv_qp_type type;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline;
	int sq_sig_all;
};

static inline struct ibv_qp *simt_qp(struct simt_dev *d, const struct simt_qp_cfg *c)
{
	struct ibv_qp_init_attr a;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.qp_type = c->type;
	a.send_cq = c->scq;
	a.recv_cq = c->rcq ? c->rcq : c->scq;
	a.srq = c->srq;
	a.cap.max_send_wr = c->max_send_wr ? c->max_send_wr : 64;
	a.cap.max_recv_wr = c->srq ? 0 : (c->max_recv_wr ? c->max_recv_wr : 64);
	a.cap.max_send_sge = c->max_send_sge ? c->max_send_sge : 4;
	a.cap.max_recv_sge = c->srq ? 0 : (c->max_recv_sge ? c->max_recv_sge : 4);
	a.cap.max_inline_data = c->max_inline;
	a.sq_sig_all = c->sq_sig_all;
	qp = ibv_create_qp(d->pd, &a);
	cr_assert(qp, "ibv_create_qp: %s", strerror(errno));
	return qp;
}

/* RESET -> INIT -> RTR -> RTS for RC/UC/XRC, connected to dqpn along the path ah (port 1;
 * RoCE paths name a GID). */
static inline void simt_connect_ah(struct ibv_qp *qp, const struct ibv_ah_attr *ah,
				   uint32_t dqpn, int access, uint8_t rnr_retry,
				   uint8_t retry_cnt)
{
	struct ibv_qp_attr a;
	int rc_like = qp->qp_type != IBV_QPT_UC;
	int mask;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						   IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.ah_attr = *ah;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (rc_like && qp->qp_type != IBV_QPT_XRC_SEND)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	cr_assert_eq(ibv_modify_qp(qp, &a, mask), 0, "to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 1;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 4;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_SEND)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	else if (qp->qp_type == IBV_QPT_XRC_RECV)
		mask |= IBV_QP_TIMEOUT;
	cr_assert_eq(ibv_modify_qp(qp, &a, mask), 0, "to RTS");
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
static inline void simt_qp_pair(struct simt_dev *d, struct simt_qp_cfg cfg, struct ibv_cq *cq_a,
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

/* RESET -> INIT -> RTR -> RTS for UD. */
static inline void simt_ud_ready(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = qkey;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						   IBV_QP_QKEY), 0);
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

static inline long simt_ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
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
	struct ibv_recv_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	cr_assert_eq(ibv_post_recv(qp, &wr, &bad), 0);
}

static inline void simt_post_srq_recv(struct ibv_srq *srq, uint64_t wr_id, void *buf,
				      uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_recv_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
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
