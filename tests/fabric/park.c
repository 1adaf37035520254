/* When a busy poller on a fabric parks (engine/thread.c, common/cpubusy.c), read from the
 * device's debug log. The test pins itself, its device thread and a thread that spins
 * beside it to one CPU, so a polling thread waits for that CPU about half the time: a
 * poller that has found something judges that contended and parks between polls; one
 * whose polls have found nothing yet (its traffic has not started) does not judge the
 * CPUs at all; a parked poller still gets its completions; and one that waited but finds
 * no more runnable tasks than CPUs when it judges spins on. The traffic is a SEND
 * between two QPs of this process on a fabric of its own. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-xproc.h"

static struct simt_dev d;
static uint8_t buf[8192];
static struct ibv_mr *mr;
static struct ibv_cq *cq;
static struct ibv_qp *qa, *qb;
static char log_path[64];
static int saved_stderr = -1;
static pthread_t spinner;
static volatile int spinning;

static void *spin(void *arg)
{
	(void)arg;
	while (spinning)
		;
	return NULL;
}

/* One CPU for everything: the first this process may use (the device thread and the
 * spinner, started later, inherit it). */
static void pin(void)
{
	cpu_set_t set;
	int cpu = 0;

	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	while (!CPU_ISSET(cpu, &set))
		cpu++;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	cr_assert_eq(sched_setaffinity(0, sizeof(set), &set), 0);
}

static void setup(void)
{
	int fd;

	join_fabric();
	setenv("FVSIM_LOG", "debug", 1);
	snprintf(log_path, sizeof(log_path), "/tmp/fvsim-xpark-%d.log", (int)getpid());
	fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	saved_stderr = dup(2);
	cr_assert_eq(dup2(fd, 2), 2);
	close(fd);
	pin();
	simt_open(&d, 0);
	mr = simt_mr(&d, buf, sizeof(buf), SIMT_ACCESS_ALL);
	cq = simt_cq(&d, 16);
	simt_qp_pair(&d, (struct setup_qp_cfg){ .type = IBV_QPT_RC }, cq, cq, SIMT_ACCESS_ALL, 7, 7,
		     &qa, &qb);
	spinning = 1;
	cr_assert_eq(pthread_create(&spinner, NULL, spin, NULL), 0);
}

static void teardown(void)
{
	spinning = 0;
	pthread_join(spinner, NULL);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	simt_close(&d);
	if (saved_stderr >= 0)
		dup2(saved_stderr, 2);
	unlink(log_path);
	leave_fabric();
}

TestSuite(sim_xpark, .init = setup, .fini = teardown, .timeout = 60);

#define PARKS "parks between polls"

/* Polls for ms milliseconds; every completion found is an error. */
static void poll_empty_for(long ms)
{
	struct timespec t0;
	struct ibv_wc wc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (simt_ms_since(&t0) < ms)
		cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 0, "unexpected completion %llu",
			     (unsigned long long)wc.wr_id);
}

/* A SEND from qa to qb: both completions, successful, in one CQ. */
static void send_one(uint64_t id)
{
	struct ibv_wc wc[2];
	bool sent = false, received = false;

	simt_post_recv(qb, id + 1, buf + 4096, 64, mr->lkey);
	memcpy(buf, "park", 4);
	simt_post_send(qa, id, IBV_WR_SEND, buf, 4, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cq, wc, 2), 2, "the SEND did not complete");
	for (int i = 0; i < 2; i++) {
		cr_expect_eq(wc[i].status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc[i].status));
		sent |= wc[i].wr_id == id && wc[i].opcode == IBV_WC_SEND;
		received |= wc[i].wr_id == id + 1 && wc[i].opcode == IBV_WC_RECV &&
			    wc[i].byte_len == 4;
	}
	cr_expect(sent && received, "one send and one receive completion");
	cr_expect_eq(memcmp(buf + 4096, "park", 4), 0);
}

/* Five judging windows (8 ms) sharing the CPU, but nothing found yet: no judgement. */
Test(sim_xpark, no_park_before_the_first_completion)
{
	poll_empty_for(40);
	cr_expect_eq(simt_count_lines(log_path, PARKS), 0,
		     "a poller whose polls found nothing yet parked");
}

/* Once it has found something, the shared CPU parks it; parked, its completions still
 * come. */
Test(sim_xpark, parks_when_it_shares_its_cpu_and_still_gets_completions)
{
	struct timespec t0;

	/* Without it the device cannot tell and always parks, silently. */
	if (access("/proc/thread-self/schedstat", R_OK))
		cr_skip_test("no /proc/thread-self/schedstat here");
	send_one(10);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!simt_count_lines(log_path, PARKS) && simt_ms_since(&t0) < SIMT_WAIT_MS)
		poll_empty_for(10);
	cr_assert_geq(simt_count_lines(log_path, PARKS), 1,
		      "a poller waiting for its CPU half the time kept spinning");
	send_one(20);
	send_one(30);
}

/* Waiting for its CPU half the time, but told that only one task (itself) is runnable: a
 * poller that judges finds no crowd and spins on (FVSIM_LOADAVG stands in for
 * /proc/loadavg, whose count another process on the machine could raise at any moment). */
Test(sim_xpark, spins_on_when_no_other_task_is_runnable)
{
	char path[64];
	FILE *f;
	struct timespec t0;

	if (access("/proc/thread-self/schedstat", R_OK))
		cr_skip_test("no /proc/thread-self/schedstat here");
	snprintf(path, sizeof(path), "/tmp/fvsim-xpark-%d.loadavg", (int)getpid());
	f = fopen(path, "w");
	cr_assert(f);
	fputs("0.00 0.00 0.00 1/100 1\n", f);
	fclose(f);
	setenv("FVSIM_LOADAVG", path, 1);
	send_one(10);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!simt_count_lines(log_path, "spins on") && simt_ms_since(&t0) < SIMT_WAIT_MS)
		poll_empty_for(10);
	unsetenv("FVSIM_LOADAVG");
	unlink(path);
	cr_assert_geq(simt_count_lines(log_path, "spins on"), 1,
		      "a poller that waited with no other task runnable parked");
	cr_expect_eq(simt_count_lines(log_path, PARKS), 0, "it parked all the same");
	send_one(20);
}
