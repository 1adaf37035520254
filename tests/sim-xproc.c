/* Two processes on one fabric (FVSIM_FABRIC): a QP in one process talks to a QP in the
 * other — sends, RDMA write/read and atomics on the peer's memory, the peer dying — and
 * the stock ibv_rc_pingpong runs as server and client. Each test uses its own fabric name
 * and removes the shared segment afterwards. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-proc.h"
#include "sim-util.h"

static char fabric[64];

static void join_fabric(void)
{
	snprintf(fabric, sizeof(fabric), "xproc-%d", (int)getpid());
	setenv("FVSIM_FABRIC", fabric, 1);
}

static void leave_fabric(void)
{
	char path[128];

	snprintf(path, sizeof(path), "/fvsim-%u-%s", (unsigned)getuid(), fabric);
	shm_unlink(path);
}

TestSuite(sim_xproc, .init = join_fabric, .fini = leave_fabric, .timeout = 60);

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
static int side_up(struct side *s)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr a = { .cap = { 16, 16, 1, 1, 0 }, .qp_type = IBV_QPT_RC };
	struct ibv_port_attr pa;

	if (!list || !list[0] || !(s->ctx = ibv_open_device(list[0])))
		return -1;
	ibv_free_device_list(list);
	s->buf = aligned_alloc(4096, 8192);
	memset(s->buf, 0, 8192);
	if (!(s->pd = ibv_alloc_pd(s->ctx)) ||
	    !(s->mr = ibv_reg_mr(s->pd, s->buf, 8192, SIMT_ACCESS_ALL)) ||
	    !(s->cq = ibv_create_cq(s->ctx, 32, NULL, NULL, 0)))
		return -1;
	a.send_cq = a.recv_cq = s->cq;
	if (!(s->qp = ibv_create_qp(s->pd, &a)) || ibv_query_port(s->ctx, 1, &pa))
		return -1;
	s->me.qpn = s->qp->qp_num;
	s->me.rkey = s->mr->rkey;
	s->me.lid = pa.lid;
	s->me.addr = (uintptr_t)s->buf;
	return 0;
}

static void side_down(struct side *s)
{
	cr_expect_eq(ibv_destroy_qp(s->qp), 0);
	cr_expect_eq(ibv_destroy_cq(s->cq), 0);
	cr_expect_eq(ibv_dereg_mr(s->mr), 0);
	cr_expect_eq(ibv_dealloc_pd(s->pd), 0);
	cr_expect_eq(ibv_close_device(s->ctx), 0);
	free(s->buf);
}

static int side_connect(struct side *s, const struct card *peer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = SIMT_ACCESS_ALL };

	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = peer->qpn;
	a.ah_attr.dlid = peer->lid;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 1;
	a.retry_cnt = 2;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
						IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						IBV_QP_MAX_QP_RD_ATOMIC);
}

static int post(struct side *s, enum ibv_wr_opcode op, void *p, uint32_t len, uint64_t raddr,
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

static int recv_one(struct side *s, void *p, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)p, len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

static int wait_wc(struct side *s, struct ibv_wc *wc)
{
	for (long i = 0; i < 200000000; i++) {
		int n = ibv_poll_cq(s->cq, 1, wc);

		if (n)
			return n;
	}
	return 0;
}

/* The peer: echoes every message back, prefixed with '>' in place of the first byte,
 * until a message starting with 'q'. */
static int peer_main(int rd, int wr)
{
	struct side s;
	struct card them;
	struct ibv_wc wc;

	if (side_up(&s) || write(wr, &s.me, sizeof(s.me)) != sizeof(s.me) ||
	    read(rd, &them, sizeof(them)) != sizeof(them) || side_connect(&s, &them) ||
	    recv_one(&s, s.buf, 64) || write(wr, "r", 1) != 1)
		return 1;
	for (;;) {
		if (!wait_wc(&s, &wc) || wc.status != IBV_WC_SUCCESS)
			return 2;
		if (wc.opcode != IBV_WC_RECV)
			continue;
		if (s.buf[0] == 'q')
			return 0;
		s.buf[0] = '>';
		memcpy(s.buf + 100, s.buf, wc.byte_len);
		if (recv_one(&s, s.buf, 64) || post(&s, IBV_WR_SEND, s.buf + 100, wc.byte_len, 0, 0, 0))
			return 3;
	}
}

static pid_t start_peer(struct side *s, struct card *them)
{
	int to[2], from[2];
	char ready;
	pid_t pid;

	cr_assert_eq(pipe(to), 0);
	cr_assert_eq(pipe(from), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(to[1]);
		close(from[0]);
		_exit(peer_main(to[0], from[1]));
	}
	/* Only the peer holds the write end: if it dies, our reads see EOF at once. */
	close(to[0]);
	close(from[1]);
	cr_assert_eq(side_up(s), 0);
	cr_assert_eq(read(from[0], them, sizeof(*them)), (ssize_t)sizeof(*them));
	cr_assert_eq(write(to[1], &s->me, sizeof(s->me)), (ssize_t)sizeof(s->me));
	cr_assert_eq(side_connect(s, them), 0);
	cr_assert_eq(read(from[0], &ready, 1), 1, "the peer did not come up");
	cr_expect_neq(them->qpn, s->me.qpn, "QPNs are unique across the fabric");
	cr_expect_neq(them->rkey, s->me.rkey, "keys are unique across the fabric");
	return pid;
}

static void expect_ok(struct side *s, enum ibv_wc_opcode op, struct ibv_wc *wc)
{
	cr_assert_eq(wait_wc(s, wc), 1);
	cr_expect_eq(wc->status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc->status));
	cr_expect_eq(wc->opcode, op);
}

Test(sim_xproc, verbs_between_processes)
{
	struct side s;
	struct card them;
	struct ibv_wc wc;
	int status;
	pid_t peer = start_peer(&s, &them);

	/* Send and get the echo. */
	cr_assert_eq(recv_one(&s, s.buf + 1024, 64), 0);
	memcpy(s.buf, "hello peer", 11);
	cr_assert_eq(post(&s, IBV_WR_SEND, s.buf, 11, 0, 0, 0), 0);
	/* The ACK of our send and the peer's echo race to our CQ, as on a real fabric. */
	for (int i = 0, sends = 0, recvs = 0; i < 2; i++) {
		cr_assert_eq(wait_wc(&s, &wc), 1);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
		if (wc.opcode == IBV_WC_RECV) {
			cr_expect_eq(wc.byte_len, 11);
			cr_expect_eq(wc.src_qp, them.qpn);
			recvs++;
		} else {
			cr_expect_eq(wc.opcode, IBV_WC_SEND);
			sends++;
		}
		if (i == 1)
			cr_expect(sends == 1 && recvs == 1);
	}
	cr_expect_str_eq((char *)s.buf + 1024, ">ello peer");
	/* Write into the peer's memory, read it back, add to a counter there. */
	memcpy(s.buf + 2048, "written remotely", 17);
	cr_assert_eq(post(&s, IBV_WR_RDMA_WRITE, s.buf + 2048, 17, them.addr + 4096, them.rkey, 0), 0);
	expect_ok(&s, IBV_WC_RDMA_WRITE, &wc);
	cr_assert_eq(post(&s, IBV_WR_RDMA_READ, s.buf + 3072, 17, them.addr + 4096, them.rkey, 0), 0);
	expect_ok(&s, IBV_WC_RDMA_READ, &wc);
	cr_expect_str_eq((char *)s.buf + 3072, "written remotely");
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(post(&s, IBV_WR_ATOMIC_FETCH_AND_ADD, s.buf + 4000, 8, them.addr + 6000,
				  them.rkey, 5), 0);
		expect_ok(&s, IBV_WC_FETCH_ADD, &wc);
		cr_expect_eq(*(uint64_t *)(s.buf + 4000), (uint64_t)(5 * i));
	}
	/* A bad rkey at the peer is still a remote access error. */
	cr_assert_eq(post(&s, IBV_WR_RDMA_WRITE, s.buf, 8, them.addr, them.rkey + 0x100, 0), 0);
	cr_assert_eq(wait_wc(&s, &wc), 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	cr_assert_eq(waitpid(peer, &status, 0), peer);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 2,
		  "the peer saw its QP fail: status %d", status);
	side_down(&s);
}

Test(sim_xproc, peer_exit_means_unreachable)
{
	struct side s;
	struct card them;
	struct ibv_wc wc;
	int status;
	pid_t peer = start_peer(&s, &them);

	memcpy(s.buf, "q", 2);
	cr_assert_eq(post(&s, IBV_WR_SEND, s.buf, 2, 0, 0, 0), 0);
	expect_ok(&s, IBV_WC_SEND, &wc);
	cr_assert_eq(waitpid(peer, &status, 0), peer);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	cr_assert_eq(post(&s, IBV_WR_RDMA_WRITE, s.buf, 8, them.addr, them.rkey, 0), 0);
	cr_assert_eq(wait_wc(&s, &wc), 1);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
	side_down(&s);
}

Test(sim_xproc, ibv_rc_pingpong)
{
	char port[16], srv_out[64], cli_out[64];
	char *srv_args[] = { "ibv_rc_pingpong", "-p", port, "-n", "50", NULL };
	char *cli_args[] = { "ibv_rc_pingpong", "-p", port, "-n", "50", "localhost", NULL };
	pid_t srv;
	int rc = 1;

	snprintf(port, sizeof(port), "%d", 20000 + (int)(getpid() % 20000));
	snprintf(srv_out, sizeof(srv_out), "/tmp/fvsim-xproc-%d.srv", (int)getpid());
	snprintf(cli_out, sizeof(cli_out), "/tmp/fvsim-xproc-%d.cli", (int)getpid());
	srv = simt_spawn(srv_args, srv_out);
	/* The client fails fast while the server is not listening yet: try again. */
	for (int i = 0; i < 50 && rc; i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		rc = simt_finish(simt_spawn(cli_args, cli_out));
	}
	cr_expect_eq(rc, 0, "client failed");
	cr_expect_eq(simt_finish(srv), 0, "server failed");
	cr_expect_eq(simt_count_lines(cli_out, "50 iters in"), 1, "no iteration report from the client");
	unlink(srv_out);
	unlink(cli_out);
}
