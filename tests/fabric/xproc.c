/* Two processes on one fabric (FVSIM_FABRIC): a QP in one process talks to a QP in the
 * other — sends, RDMA write/read and atomics on the peer's memory, the peer dying — and
 * the stock ibv_rc_pingpong runs as server and client, on InfiniBand and on RoCE. Each
 * test uses its own fabric name and removes the shared segment afterwards. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-xproc.h"

TestSuite(sim_xproc, .init = join_fabric, .fini = leave_fabric, .timeout = 60);

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
	int to, from;
	pid_t pid = xproc_fork(peer_main, &to, &from);

	xproc_connect(s, them, to, from);
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
	pingpong(NULL);
}

/* Without device threads only the programs' own ibv_poll_cq calls run the device: both
 * sides' sends go out and are answered all the same. */
Test(sim_xproc, ibv_rc_pingpong_driven_by_polling)
{
	pingpong("poll");
}

/* Over RoCE: an Ethernet port (LID 0), the GIDs exchanged and routed by. */
Test(sim_xproc, ibv_rc_pingpong_roce)
{
	setenv("FVSIM_LINK", "eth", 1);
	pingpong_gid(NULL, "0");
}

/* perftest's latency tools: both sides busy-poll, ib_write_lat's waiting side spins on
 * its buffer (not its CQ), so the device thread must still be woken for what arrives
 * there while a polling peer parks in ibv_poll_cq. 500 round trips, all reported. */
static void perftest_lat(char *tool)
{
	port_pair((char *const[]){ tool, "-n", "500", NULL }, " 2       500 ");
}

Test(sim_xproc, ib_write_lat)
{
	perftest_lat("ib_write_lat");
}

Test(sim_xproc, ib_send_lat)
{
	perftest_lat("ib_send_lat");
}
