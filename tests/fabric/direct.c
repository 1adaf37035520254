/* Direct placement between processes (fabric/mrtab.h): an RDMA WRITE to a QP of another
 * process is placed by the requester itself when the owner's published QP and MR allow
 * it, so it completes even while the owner is stopped; anything the owner's responder
 * must judge (a bad key or range, a deregistered MR) still goes to the owner and fails
 * as before; no write lands after ibv_dereg_mr returned; FVSIM_DIRECT=0 sends every
 * WRITE by mailbox. The peer never polls: its device thread serves what reaches it. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "sim-xproc.h"

TestSuite(sim_xdirect, .init = join_fabric, .fini = leave_fabric, .timeout = 60);

#define BUF 8192

/* The peer, its buffer full of 'P'. Commands: 'r' sends the buffer back; 'd'
 * deregisters the MR, fills the buffer with 'Z' and says 'k'; 'q' ends. */
static int holder_main(int rd, int wr)
{
	struct side s;
	struct card them;
	char cmd;
	bool registered = true;

	if (side_up(&s))
		return 1;
	memset(s.buf, 'P', BUF);
	if (write(wr, &s.me, sizeof(s.me)) != sizeof(s.me) ||
	    read(rd, &them, sizeof(them)) != sizeof(them) || side_connect(&s, &them) ||
	    write(wr, "r", 1) != 1)
		return 2;
	while (read(rd, &cmd, 1) == 1) {
		if (cmd == 'q')
			return 0;
		if (cmd == 'r' && write(wr, s.buf, BUF) != BUF)
			return 3;
		if (cmd == 'd') {
			if (!registered || ibv_dereg_mr(s.mr))
				return 4;
			registered = false;
			/* The memory is the application's again: nothing may write it now. */
			memset(s.buf, 'Z', BUF);
			if (write(wr, "k", 1) != 1)
				return 5;
		}
	}
	return 6;
}

/* The peer's buffer as it is now. */
static void peer_buf(struct xpair *p, uint8_t *out)
{
	size_t got = 0;

	cr_assert_eq(write(p->to, "r", 1), 1);
	while (got < BUF) {
		ssize_t n = read(p->from, out + got, BUF - got);

		cr_assert(n > 0, "the peer is gone");
		got += (size_t)n;
	}
}

static void pair_down(struct xpair *p)
{
	int status;

	cr_assert_eq(write(p->to, "q", 1), 1);
	cr_assert_eq(waitpid(p->peer, &status, 0), p->peer);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "peer status %d", status);
	side_down(&p->s);
}

static void stop_peer(struct xpair *p)
{
	int st;

	cr_assert_eq(kill(p->peer, SIGSTOP), 0);
	cr_assert_eq(waitpid(p->peer, &st, WUNTRACED), p->peer);
	cr_assert(WIFSTOPPED(st));
}

static void cont_peer(struct xpair *p)
{
	cr_assert_eq(kill(p->peer, SIGCONT), 0);
}

/* Polls for about 100 ms: 1 if a completion came. */
static int poll_a_while(struct side *s, struct ibv_wc *wc)
{
	for (int i = 0; i < 1000; i++) {
		struct timespec ts = { 0, 100000 };

		if (ibv_poll_cq(s->cq, 1, wc))
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Stopped, the peer cannot answer: only a write placed by us can complete. Two writes,
 * the second across a page boundary; the data is where it belongs and nothing else. */
Test(sim_xdirect, write_placed_while_peer_stopped)
{
	struct xpair p;
	struct ibv_wc wc;
	static uint8_t got[BUF];

	xpair_up(&p, holder_main);
	stop_peer(&p);
	memset(p.s.buf, 'a', 64);
	for (int i = 0; i < 3000; i++)
		p.s.buf[1024 + i] = (uint8_t)(i * 7 + 1);
	cr_assert_eq(post(&p.s, IBV_WR_RDMA_WRITE, p.s.buf, 64, p.them.addr + 100, p.them.rkey, 0), 0);
	cr_assert_eq(wait_wc(&p.s, &wc), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	cr_assert_eq(post(&p.s, IBV_WR_RDMA_WRITE, p.s.buf + 1024, 3000, p.them.addr + 3000,
			  p.them.rkey, 0), 0);
	cr_assert_eq(wait_wc(&p.s, &wc), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cont_peer(&p);
	peer_buf(&p, got);
	for (int i = 0; i < BUF; i++) {
		uint8_t want = 'P';

		if (i >= 100 && i < 164)
			want = 'a';
		else if (i >= 3000 && i < 6000)
			want = (uint8_t)((i - 3000) * 7 + 1);
		cr_assert_eq(got[i], want, "peer byte %d", i);
	}
	pair_down(&p);
}

/* A key the owner never published is judged by the owner: while it is stopped nothing
 * completes, then the requester gets the remote access error and memory is untouched. */
static void refused(uint64_t off, uint32_t len, uint32_t rkey_delta)
{
	struct xpair p;
	struct ibv_wc wc;
	static uint8_t got[BUF];

	xpair_up(&p, holder_main);
	stop_peer(&p);
	memset(p.s.buf, 'x', 256);
	cr_assert_eq(post(&p.s, IBV_WR_RDMA_WRITE, p.s.buf, len, p.them.addr + off,
			  p.them.rkey + rkey_delta, 0), 0);
	cr_expect_eq(poll_a_while(&p.s, &wc), 0, "completed without the peer's responder");
	cont_peer(&p);
	cr_assert_eq(wait_wc(&p.s, &wc), 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc.status));
	peer_buf(&p, got);
	for (int i = 0; i < BUF; i++)
		cr_assert_eq(got[i], 'P', "peer byte %d was written", i);
	pair_down(&p);
}

Test(sim_xdirect, bad_rkey_goes_to_the_owner)
{
	refused(0, 64, 0x100);
}

Test(sim_xdirect, range_past_the_mr_goes_to_the_owner)
{
	refused(BUF - 16, 64, 0);
}

/* The peer deregisters its MR while we write to it as fast as we can: once dereg has
 * returned (and the peer filled the memory with 'Z'), no write lands; ours start failing
 * with a remote access error. */
Test(sim_xdirect, no_write_after_dereg)
{
	struct xpair p;
	struct ibv_wc wc;
	static uint8_t got[BUF];
	int ok = 0;
	char k;

	xpair_up(&p, holder_main);
	memset(p.s.buf, 'W', BUF);
	for (;;) {
		cr_assert_eq(post(&p.s, IBV_WR_RDMA_WRITE, p.s.buf, BUF, p.them.addr, p.them.rkey, 0), 0);
		cr_assert_eq(wait_wc(&p.s, &wc), 1);
		if (wc.status != IBV_WC_SUCCESS)
			break;
		if (++ok == 20)
			cr_assert_eq(write(p.to, "d", 1), 1);
	}
	cr_expect(ok >= 20, "only %d writes succeeded", ok);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(read(p.from, &k, 1), 1);
	cr_assert_eq(k, 'k');
	peer_buf(&p, got);
	for (int i = 0; i < BUF; i++)
		cr_assert_eq(got[i], 'Z', "peer byte %d written after dereg", i);
	pair_down(&p);
}

/* FVSIM_DIRECT=0: every WRITE goes to the owner, so nothing completes while it is
 * stopped; once it runs, the write lands and succeeds. */
Test(sim_xdirect, forced_mailbox_path)
{
	struct xpair p;
	struct ibv_wc wc;
	static uint8_t got[BUF];

	setenv("FVSIM_DIRECT", "0", 1);
	xpair_up(&p, holder_main);
	stop_peer(&p);
	memset(p.s.buf, 'm', 32);
	cr_assert_eq(post(&p.s, IBV_WR_RDMA_WRITE, p.s.buf, 32, p.them.addr + 8, p.them.rkey, 0), 0);
	cr_expect_eq(poll_a_while(&p.s, &wc), 0, "placed directly although FVSIM_DIRECT=0");
	cont_peer(&p);
	cr_assert_eq(wait_wc(&p.s, &wc), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	peer_buf(&p, got);
	for (int i = 0; i < BUF; i++)
		cr_assert_eq(got[i], i >= 8 && i < 40 ? 'm' : 'P', "peer byte %d", i);
	pair_down(&p);
}
