/* Faults between processes on one fabric.
 * - An MR deregistered while an operation naming it waits in the peer's inbox. The peer is
 *   stopped (SIGSTOP) while the message is posted, so the order is fixed: posted, then
 *   deregistered and the memory reused, then served. On an HCA the operation fails with a
 *   local protection error and the memory the application got back is never written or
 *   read.
 * - A fabric segment left broken (half-initialised by a process killed during set-up, or
 *   truncated) is replaced, so later processes still share one fabric; one broken while
 *   processes use it is refused, never run beside on a private device. */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "sim-xproc.h"

TestSuite(sim_xfault, .init = join_fabric, .fini = leave_fabric, .timeout = 60);

/* The peer: its buffer full of 'B', one receive posted; on 'p' it reports how many
 * completions it has and whether its memory is still untouched, then exits. */
static int holder_main(int rd, int wr)
{
	struct side s;
	struct card them;
	struct ibv_wc wc;
	char cmd, report[2];

	if (side_up(&s))
		return 1;
	memset(s.buf, 'B', 8192);
	if (write(wr, &s.me, sizeof(s.me)) != sizeof(s.me) ||
	    read(rd, &them, sizeof(them)) != sizeof(them) || side_connect(&s, &them) ||
	    recv_one(&s, s.buf + 4096, 64) || write(wr, "r", 1) != 1 ||
	    read(rd, &cmd, 1) != 1)
		return 2;
	report[0] = (char)ibv_poll_cq(s.cq, 1, &wc);
	report[1] = s.buf[0] == 'B' && s.buf[4096] == 'B';
	return write(wr, report, 2) == 2 ? 0 : 3;
}

/* Posts op on a second MR over the upper half of our buffer, lets our device hand it to
 * the stopped peer, deregisters that MR and reuses the memory ('A'), then lets the peer
 * run and returns our completion. */
static void post_then_dereg(struct xpair *p, enum ibv_wr_opcode op, struct ibv_wc *wc)
{
	uint8_t *area = p->s.buf + 4096;
	struct ibv_mr *mr = ibv_reg_mr(p->s.pd, area, 4096, SIMT_ACCESS_ALL);
	struct ibv_sge sge = { (uintptr_t)area, 64, 0 };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int n = 0, stopped;

	cr_assert(mr);
	sge.lkey = mr->lkey;
	wr.wr.rdma.remote_addr = p->them.addr;
	wr.wr.rdma.rkey = p->them.rkey;
	memset(area, 'S', 64);
	fvsim_set_step_mode(1);
	cr_assert_eq(kill(p->peer, SIGSTOP), 0);
	/* Stopping is asynchronous: wait until every thread of the peer stands still. */
	cr_assert_eq(waitpid(p->peer, &stopped, WUNTRACED), p->peer);
	cr_assert(WIFSTOPPED(stopped));
	cr_assert_eq(ibv_post_send(p->s.qp, &wr, &bad), 0);
	cr_assert_eq(fvsim_step(), 1, "the WQE went out to the peer");
	cr_assert_eq(ibv_poll_cq(p->s.cq, 1, wc), 0, "nothing completed yet");
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	memset(area, 'A', 4096);
	cr_assert_eq(kill(p->peer, SIGCONT), 0);
	for (int i = 0; i < 200000 && !n; i++) {
		fvsim_step();
		n = ibv_poll_cq(p->s.cq, 1, wc);
	}
	cr_assert_eq(n, 1, "the WQE completed");
	cr_expect_eq(wc->wr_id, 7);
	cr_expect_eq(wc->status, IBV_WC_LOC_PROT_ERR, "%s", ibv_wc_status_str(wc->status));
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(area[i], 'A', "byte %d of the reused memory was written", i);
}

/* Returns the peer's report: its completions, and whether its memory (write target, receive area) is intact. */
static void pair_down(struct xpair *p, char report[2])
{
	int status;

	cr_assert_eq(write(p->to, "p", 1), 1);
	cr_assert_eq(read(p->from, report, 2), 2);
	cr_assert_eq(waitpid(p->peer, &status, 0), p->peer);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "peer status %d", status);
	side_down(&p->s);
}

/* Whatever the operation, the peer completes nothing and its memory (write target,
 * receive area) stays as it was. */
static void dereg_under(enum ibv_wr_opcode op)
{
	struct xpair p;
	struct ibv_wc wc;
	char report[2];

	/* A WRITE placed directly (FVSIM_DIRECT) never waits in the inbox: here it must. */
	setenv("FVSIM_DIRECT", "0", 1);
	xpair_up(&p, holder_main);
	post_then_dereg(&p, op, &wc);
	pair_down(&p, report);
	cr_expect_eq(report[0], 0, "the peer completed nothing");
	cr_expect_eq(report[1], 1, "the peer's memory is untouched");
}

Test(sim_xfault, read_landing_deregistered)
{
	dereg_under(IBV_WR_RDMA_READ);
}

Test(sim_xfault, send_source_deregistered)
{
	dereg_under(IBV_WR_SEND);
}

Test(sim_xfault, write_source_deregistered)
{
	dereg_under(IBV_WR_RDMA_WRITE);
}

/* The segment's first words: magic, version, ready (written last by set-up). */
enum { SEG_VERSION = 4, SEG_READY = 8 };

static void segment_path(char *path, size_t n)
{
	snprintf(path, n, "/dev/shm/fvsim-%u-%s", (unsigned)getuid(), fabric);
}

/* A process that sets the fabric up, then leaves its segment broken: the ready word
 * cleared (as a set-up killed before its end leaves it), or the file cut to `cut` bytes. */
static void break_segment_in_child(bool truncate, off_t cut)
{
	pid_t pid = fork();
	int status;

	cr_assert(pid >= 0);
	if (pid == 0) {
		struct ibv_device **list = ibv_get_device_list(NULL);
		char path[128];
		uint32_t zero = 0;
		int fd, bad;

		segment_path(path, sizeof(path));
		fd = open(path, O_RDWR);
		bad = !list || fd < 0 ||
		      (truncate ? ftruncate(fd, cut) : pwrite(fd, &zero, 4, SEG_READY) != 4);
		_exit(bad);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "set-up child failed");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Two processes started on the broken segment find each other at once and move data. */
static void still_one_fabric(void)
{
	struct xpair p;
	struct ibv_wc wc;
	char report[2];
	double t0 = now_s();

	xpair_up(&p, holder_main);
	cr_expect_lt(now_s() - t0, 3.0, "joining took %.1f s", now_s() - t0);
	cr_expect_neq(p.them.qpn, p.s.me.qpn, "one fabric: QP numbers are unique");
	cr_expect_neq(p.them.rkey, p.s.me.rkey, "one fabric: keys are unique");
	memcpy(p.s.buf, "across", 7);
	cr_assert_eq(post(&p.s, IBV_WR_RDMA_WRITE, p.s.buf, 7, p.them.addr + 100, p.them.rkey, 0), 0);
	cr_assert_eq(wait_wc(&p.s, &wc), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(post(&p.s, IBV_WR_RDMA_READ, p.s.buf + 200, 7, p.them.addr + 100, p.them.rkey, 0), 0);
	cr_assert_eq(wait_wc(&p.s, &wc), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_str_eq((char *)p.s.buf + 200, "across");
	pair_down(&p, report);
}

Test(sim_xfault, half_initialised_segment_replaced)
{
	break_segment_in_child(false, 0);
	still_one_fabric();
}

Test(sim_xfault, truncated_segment_replaced)
{
	break_segment_in_child(true, 8);
	still_one_fabric();
}

/* A segment broken under a running process: a newcomer refuses to open the device (the
 * stock ibv_devinfo fails) instead of running on a private one. */
Test(sim_xfault, broken_segment_in_use_refused)
{
	const char *runner = getenv("FVSIM_RUN");
	struct side s;
	char path[128];
	uint32_t other = 0xbad;
	int fd, status;
	pid_t pid;

	cr_assert(runner, "run through sim/fvsim-run");
	cr_assert_eq(side_up(&s), 0);
	segment_path(path, sizeof(path));
	fd = open(path, O_RDWR);
	cr_assert(fd >= 0);
	cr_assert_eq(pwrite(fd, &other, 4, SEG_VERSION), 4);
	close(fd);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(126);
		unsetenv("LD_PRELOAD");
		execl(runner, runner, "ibv_devinfo", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) < 126,
		  "ibv_devinfo opened a device beside the fabric: status %d", status);
	side_down(&s);
}
