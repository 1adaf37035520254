/* A CQ that fills while an RDMA WRITE to another process of the fabric is in flight: the
 * answer comes back to a full CQ. As on an HCA, the CQ overruns into error and its owner
 * gets IBV_EVENT_CQ_ERR; the CQEs already there are intact and nothing more is written.
 * And a QP moved to error while its WRITE's answer waits: the WRITE completes; the pass that
 * sent it allocated nothing. */
#include <malloc.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-xproc.h"

TestSuite(sim_xoverrun, .init = join_fabric, .fini = leave_fabric, .timeout = 60);

static int to_peer, from_peer;

/* The peer's device is in step mode: it answers what was posted to it only when the test
 * says 'g', then says 'd'. */
static pid_t start_peer(struct side *s, struct card *them)
{
	int to[2], from[2];
	pid_t pid;

	/* The WRITE must wait for the peer's answer: not placed directly (FVSIM_DIRECT). */
	setenv("FVSIM_DIRECT", "0", 1);
	cr_assert_eq(pipe(to), 0);
	cr_assert_eq(pipe(from), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct side p;
		struct card me;
		char c;

		close(to[1]);
		close(from[0]);
		if (side_up(&p) || write(from[1], &p.me, sizeof(p.me)) != sizeof(p.me) ||
		    read(to[0], &me, sizeof(me)) != sizeof(me) || side_connect(&p, &me))
			_exit(1);
		fvsim_set_step_mode(1);
		if (write(from[1], "r", 1) != 1)
			_exit(1);
		while (read(to[0], &c, 1) == 1) {
			int served = 0;

			for (int i = 0; i < 1000 && !served; i++)
				served = fvsim_run_until_idle();
			if (write(from[1], served ? "d" : "n", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(to[0]);
	close(from[1]);
	cr_assert_eq(side_up(s), 0);
	cr_assert_eq(read(from[0], them, sizeof(*them)), (ssize_t)sizeof(*them));
	cr_assert_eq(write(to[1], &s->me, sizeof(s->me)), (ssize_t)sizeof(s->me));
	cr_assert_eq(side_connect(s, them), 0);
	cr_assert_eq(read(from[0], them + 1, 1), 1, "the peer did not come up");
	to_peer = to[1];
	from_peer = from[0];
	return pid;
}

Test(sim_xoverrun, answer_to_a_full_cq)
{
	struct side s;
	struct card them[2];
	struct simt_dev d;
	struct ibv_qp *a, *b;
	struct ibv_wc wc[128];
	struct ibv_async_event ev;
	struct pollfd pfd;
	int n, got = 0, status;
	char c;
	pid_t peer = start_peer(&s, them);

	cr_assert(fvsim_present());
	fvsim_set_step_mode(1);
	/* One step: the WRITE goes to the peer's inbox and stays in flight. */
	memset(s.buf, 0x5a, 64);
	cr_assert_eq(post(&s, IBV_WR_RDMA_WRITE, s.buf, 64, them[0].addr, them[0].rkey, 0), 0);
	cr_assert_eq(fvsim_step(), 1);

	/* Fill the CQ with completions of a loopback pair in this process. */
	d.ctx = s.ctx;
	d.pd = s.pd;
	d.lid = s.me.lid;
	n = s.cq->cqe + 1; /* the ring's size */
	simt_qp_pair(&d, (struct setup_qp_cfg){ .type = IBV_QPT_RC, .max_send_wr = 128 }, s.cq,
		     s.cq, SIMT_ACCESS_ALL, 7, 7, &a, &b);
	for (int i = 0; i < n; i++)
		simt_post_send(a, 100 + i, IBV_WR_RDMA_WRITE, s.buf + 1024, 8, s.mr->lkey,
			       (uintptr_t)s.buf + 2048, s.mr->rkey, IBV_SEND_SIGNALED);

	for (int i = 0; i < n; i++)
		cr_assert_eq(fvsim_step(), 1);
	/* Full: nothing more can progress until the peer answers. */
	cr_assert_eq(fvsim_step(), 0);
	cr_assert_eq(write(to_peer, "g", 1), 1);
	cr_assert_eq(read(from_peer, &c, 1), 1);
	cr_assert_eq(c, 'd', "the peer served nothing");

	/* Step until the answer comes back to the full ring and the CQ reports its error. */
	pfd.fd = s.ctx->async_fd;
	pfd.events = POLLIN;
	for (int i = 0; i < 5000; i++) {
		fvsim_step();
		if (poll(&pfd, 1, 1) == 1)
			break;
	}
	cr_assert_eq(poll(&pfd, 1, 0), 1, "no async event");
	cr_assert_eq(ibv_get_async_event(s.ctx, &ev), 0);
	cr_expect_eq(ev.event_type, IBV_EVENT_CQ_ERR, "event %d", ev.event_type);
	cr_expect_eq(ev.element.cq, s.cq);
	ibv_ack_async_event(&ev);

	/* The ring holds exactly the loopback completions, in order, none overwritten. */
	fvsim_run_until_idle();
	for (int r; (r = ibv_poll_cq(s.cq, 128 - got, wc + got)) > 0;)
		got += r;
	cr_assert_eq(got, n);
	for (int i = 0; i < n; i++) {
		cr_expect_eq(wc[i].wr_id, (uint64_t)(100 + i));
		cr_expect_eq(wc[i].status, IBV_WC_SUCCESS);
	}
	/* In error, the CQ takes nothing more. */
	simt_post_send(a, 999, IBV_WR_RDMA_WRITE, s.buf + 1024, 8, s.mr->lkey,
		       (uintptr_t)s.buf + 2048, s.mr->rkey, IBV_SEND_SIGNALED);
	fvsim_run_until_idle();
	cr_expect_eq(ibv_poll_cq(s.cq, 1, wc), 0);

	cr_expect_eq(ibv_destroy_qp(a), 0);
	cr_expect_eq(ibv_destroy_qp(b), 0);
	side_down(&s);
	close(to_peer);
	close(from_peer);
	cr_expect_eq(waitpid(peer, &status, 0), peer);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A WRITE the peer has acknowledged before our QP is moved to error completes with success,
 * as on an HCA, where the ACK comes first; the WRITE behind it, never sent, is flushed. (A
 * peer that disconnects once it has our last message makes rdma_cm move our QP to error;
 * the device used to flush the acknowledged WRITE too.) */
Test(sim_xoverrun, acknowledged_before_error_completes)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct mallinfo2 info;
	struct side s;
	struct card them[2];
	struct ibv_wc wc[4];
	int got = 0, status;
	char c;
	pid_t peer = start_peer(&s, them);

	fvsim_set_step_mode(1);
	memset(s.buf, 0x5a, 64);
	cr_assert_eq(post(&s, IBV_WR_RDMA_WRITE, s.buf, 64, them[0].addr, them[0].rkey, 0), 0);
	cr_assert_eq(post(&s, IBV_WR_RDMA_WRITE, s.buf, 64, them[0].addr + 64, them[0].rkey, 0), 0);
	info = mallinfo2();
	cr_assert_eq(fvsim_step(), 1); /* the first WRITE goes to the peer's inbox */
	/* Passes also run in a poller's tick, a signal handler: that one allocated nothing
	 * (glibc's count; an ASan build reports 0 throughout). */
	cr_expect_eq(mallinfo2().uordblks, info.uordblks, "a pass allocated memory");
	cr_assert_eq(write(to_peer, "g", 1), 1);
	cr_assert_eq(read(from_peer, &c, 1), 1);
	cr_assert_eq(c, 'd', "the peer served nothing");
	/* Its ACK waits in our inbox, not yet taken, when the QP goes to error. */
	cr_assert_eq(ibv_modify_qp(s.qp, &attr, IBV_QP_STATE), 0);
	fvsim_run_until_idle();
	for (int r; got < 4 && (r = ibv_poll_cq(s.cq, 4 - got, wc + got)) > 0;)
		got += r;
	cr_assert_eq(got, 2);
	cr_expect_eq(wc[0].status, IBV_WC_SUCCESS, "acknowledged WRITE: %s",
		     ibv_wc_status_str(wc[0].status));
	cr_expect_eq(wc[0].opcode, IBV_WC_RDMA_WRITE);
	cr_expect_eq(wc[1].status, IBV_WC_WR_FLUSH_ERR, "WRITE behind it: %s",
		     ibv_wc_status_str(wc[1].status));

	side_down(&s);
	close(to_peer);
	close(from_peer);
	cr_expect_eq(waitpid(peer, &status, 0), peer);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
