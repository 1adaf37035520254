/* Helpers for the tests of processes on one fabric (tests/fabric/): a fabric name per
 * test, and one side of a connection (device, PD, 8 KiB MR, CQ, RC QP) brought up, connected
 * and driven with plain verbs, so a forked peer can use them too; stock programs started
 * on the fabric, and the stock ibv_rc_pingpong as server and client. Header-only like
 * sim-util.h. */
#ifndef SIM_XPROC_H
#define SIM_XPROC_H

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-proc.h"
#include "sim-tcp.h"
#include "sim-util.h"

static char fabric[64];

/* A fabric name of this test process's own; the segment is removed afterwards. */
static inline void join_fabric(void)
{
	snprintf(fabric, sizeof(fabric), "xproc-%d", (int)getpid());
	setenv("FVSIM_FABRIC", fabric, 1);
}

static inline void leave_fabric(void)
{
	simt_fabric_unlink(fabric);
}

/* What the peer tells the test over a pipe, and the test tells the peer. */
struct card {
	uint32_t qpn, rkey;
	uint16_t lid;
	uint64_t addr;
};

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct card me;
};

/* Plain verbs, no Criterion asserts: this also runs in the forked peer. */
static inline int side_up(struct side *s)
{
	struct setup_qp_cfg c;
	struct setup_dev d;
	const char *what;

	if (setup_open(&d, NULL, 0, 1, 0, &what))
		return -1;
	s->ctx = d.ctx;
	s->pd = d.pd;
	s->buf = (uint8_t *)aligned_alloc(4096, 8192);
	memset(s->buf, 0, 8192);
	if (!(s->mr = ibv_reg_mr(s->pd, s->buf, 8192, SIMT_ACCESS_ALL)) ||
	    !(s->cq = ibv_create_cq(s->ctx, 32, NULL, NULL, 0)))
		return -1;
	memset(&c, 0, sizeof(c));
	c.type = IBV_QPT_RC;
	c.scq = c.rcq = s->cq;
	c.max_send_wr = c.max_recv_wr = 16;
	c.max_send_sge = c.max_recv_sge = 1;
	if (setup_qp(s->pd, &c, &s->qp, &what))
		return -1;
	s->me.qpn = s->qp->qp_num;
	s->me.rkey = s->mr->rkey;
	s->me.lid = d.lid;
	s->me.addr = (uintptr_t)s->buf;
	return 0;
}

static inline void side_down(struct side *s)
{
	cr_expect_eq(ibv_destroy_qp(s->qp), 0);
	cr_expect_eq(ibv_destroy_cq(s->cq), 0);
	cr_expect_eq(ibv_dereg_mr(s->mr), 0);
	cr_expect_eq(ibv_dealloc_pd(s->pd), 0);
	cr_expect_eq(ibv_close_device(s->ctx), 0);
	free(s->buf);
}

static inline int side_connect(struct side *s, const struct card *peer)
{
	const struct setup_conn c = { .port_num = 1, .access = SIMT_ACCESS_ALL, .mtu = IBV_MTU_4096,
				      .rd_atomic = 1, .min_rnr_timer = 1, .timeout = 1, .retry_cnt = 2,
				      .rnr_retry = 7 };
	struct ibv_ah_attr ah;
	const char *what;

	setup_path(&ah, peer->lid, 1, NULL, 0, 0);
	return setup_connect(s->qp, &ah, peer->qpn, &c, &what) ? -1 : 0;
}

static inline int post(struct side *s, enum ibv_wr_opcode op, void *p, uint32_t len, uint64_t raddr,
		uint32_t rkey, uint64_t add)
{
	struct ibv_sge sge = { (uintptr_t)p, len, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = op, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = add;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(s->qp, &wr, &bad);
}

static inline int recv_one(struct side *s, void *p, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)p, len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

static inline int wait_wc(struct side *s, struct ibv_wc *wc)
{
	for (long i = 0; i < 200000000; i++) {
		int n = ibv_poll_cq(s->cq, 1, wc);

		if (n)
			return n;
	}
	return 0;
}

/* Forks a peer that runs child(rd, wr) on its ends of two pipes and exits with its result;
 * *to and *from are ours. Only the peer holds the write end of *from: if it dies, our reads
 * see EOF at once. */
static inline pid_t xproc_fork(int (*child)(int rd, int wr), int *to, int *from)
{
	int t[2], f[2];
	pid_t pid;

	cr_assert_eq(pipe(t), 0);
	cr_assert_eq(pipe(f), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(t[1]);
		close(f[0]);
		_exit(child(t[0], f[1]));
	}
	close(t[0]);
	close(f[1]);
	*to = t[1];
	*from = f[0];
	return pid;
}

/* Brings s up and connects it with the forked peer's side: the peer sends its card, takes
 * ours, connects and sends one byte once it is ready. */
static inline void xproc_connect(struct side *s, struct card *them, int to, int from)
{
	char ready;

	cr_assert_eq(side_up(s), 0);
	cr_assert_eq(read(from, them, sizeof(*them)), (ssize_t)sizeof(*them));
	cr_assert_eq(write(to, &s->me, sizeof(s->me)), (ssize_t)sizeof(s->me));
	cr_assert_eq(side_connect(s, them), 0);
	cr_assert_eq(read(from, &ready, 1), 1, "the peer did not come up");
}

/* Our side and a forked peer's, connected. */
struct xpair {
	struct side s;
	struct card them;
	pid_t peer;
	int to, from;
};

static inline void xpair_up(struct xpair *p, int (*child)(int rd, int wr))
{
	p->peer = xproc_fork(child, &p->to, &p->from);
	xproc_connect(&p->s, &p->them, p->to, p->from);
}

/* A stock tool as server and client (argument lists ending in NULL, the first the tool's
 * name), the client tried again while the server is not listening yet (50 tries, 100 ms
 * apart): both succeed and the client's output has one line with want. */
static inline void tool_pair(char **srv_args, char **cli_args, const char *want)
{
	char srv_out[64], cli_out[64];
	pid_t srv;
	int rc = 1;

	snprintf(srv_out, sizeof(srv_out), "/tmp/fvsim-xproc-%d.srv", (int)getpid());
	snprintf(cli_out, sizeof(cli_out), "/tmp/fvsim-xproc-%d.cli", (int)getpid());
	srv = simt_spawn(srv_args, srv_out);
	for (int i = 0; i < 50 && rc; i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		rc = simt_finish(simt_spawn(cli_args, cli_out));
	}
	cr_expect_eq(rc, 0, "%s client failed", cli_args[0]);
	cr_expect_eq(simt_finish(srv), 0, "%s server failed", srv_args[0]);
	cr_expect_eq(simt_count_lines(cli_out, want), 1, "no result line from %s", cli_args[0]);
	unlink(srv_out);
	unlink(cli_out);
}

/*
 * A stock tool that takes "-p port" and, as a client, the server's host last (perftest's tools,
 * ibv_rc_pingpong) as server and client (tool_pair): args, its name and options (NULL-terminated,
 * at most 12), then -p and a port free now (simt_free_port), the client's last argument
 * localhost.
 */
static inline void port_pair(char *const args[], const char *want)
{
	char port[16], *srv[16], *cli[16];
	int n = 0;

	for (; args[n]; n++) {
		cr_assert_lt(n, 12, "port_pair: too many arguments");
		srv[n] = cli[n] = args[n];
	}
	snprintf(port, sizeof(port), "%d", simt_free_port());
	srv[n] = cli[n] = "-p";
	srv[n + 1] = cli[n + 1] = port;
	srv[n + 2] = NULL;
	cli[n + 2] = "localhost";
	cli[n + 3] = NULL;
	tool_pair(srv, cli, want);
}

/* The stock ibv_rc_pingpong (busy-polling, no -e) as server and client, 50 round trips;
 * mode: FVSIM_MODE for both, NULL for the default; gid: "-g gid" for both (RoCE), or NULL. */
static inline void pingpong_gid(const char *mode, const char *gid)
{
	if (mode)
		setenv("FVSIM_MODE", mode, 1);
	port_pair((char *const[]){ "ibv_rc_pingpong", "-n", "50", gid ? "-g" : NULL, (char *)gid, NULL },
		  "50 iters in");
}

static inline void pingpong(const char *mode)
{
	pingpong_gid(mode, NULL);
}

#endif
