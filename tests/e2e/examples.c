/*
 * The example programs run on the software device (this test runs under sim/fvsim-run, whose
 * environment the child inherits) and succeed: exit status 0 and the line that says what
 * they checked.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "sim-proc.h"
#include "sim-tcp.h"

/* Run the example name (built under FV_BUILD) with args; its status, its first line in out. */
static int run_example(const char *name, const char *args, char *out, size_t n)
{
	char cmd[1024];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/%s/examples/%s %s 2>&1", FV_TOP, FV_BUILD, name, args);
	p = popen(cmd, "r");
	cr_assert(p, "popen %s", cmd);
	if (!fgets(out, (int)n, p))
		out[0] = 0;
	while (fgetc(p) != EOF)
		;
	int st = pclose(p);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Run the example name (built under FV_BUILD) with args after the command prefix (env ...);
 * all it prints, stdout and stderr, in out; its exit status. */
static int run_all(const char *prefix, const char *name, const char *args, char *out, size_t n)
{
	char cmd[1024];
	size_t len = 0;
	FILE *p;
	int c;

	snprintf(cmd, sizeof(cmd), "%s %s/%s/examples/%s %s 2>&1", prefix, FV_TOP, FV_BUILD, name, args);
	p = popen(cmd, "r");
	cr_assert(p, "popen %s", cmd);
	while ((c = fgetc(p)) != EOF)
		if (len + 1 < n)
			out[len++] = (char)c;
	out[len] = 0;
	int st = pclose(p);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The first program of README: three RDMA WRITEs, their completions, the data checked. */
Test(sim_examples, hello)
{
	char out[4096];
	int rc = run_all("", "hello", "", out, sizeof(out));

	cr_assert_eq(rc, 0, "hello exited %d: %s", rc, out);
	cr_assert(strstr(out, "hello: 3 RDMA WRITEs of 64 bytes completed; dst holds \"hello, RDMA WRITE 2\""),
		  "%s", out);
}

/* Without a device (libibverbs pointed at an empty sysfs, the device not preloaded) the
 * examples say where to find one. */
Test(sim_examples, no_device)
{
	static const char *const runs[][2] = { { "hello", "" }, { "rc_pingpong", "" }, { "ud_pingpong", "" },
					       { "wr_api", "" }, { "rdma_cm_pingpong", "-c 127.0.0.1" }, { "dc_fanout", "" } };
	char out[4096];

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		int rc = run_all("env -u LD_PRELOAD SYSFS_PATH=/nonexistent", runs[i][0], runs[i][1], out, sizeof(out));

		cr_expect_eq(rc, 1, "%s exited %d: %s", runs[i][0], rc, out);
		cr_expect(strstr(out, "no RDMA device found: run it under sim/fvsim-run"), "%s: %s", runs[i][0], out);
	}
}

/* On the software device every timing line says that its times are not hardware figures. */
Test(sim_examples, timing_lines_name_the_device)
{
	static const char *const runs[][2] = { { "rc_pingpong", "-n 20" }, { "ud_pingpong", "-n 20" },
					       { "rc_write", "-n 2 -b 8" } };
	const char *note = "[software device: its times are not hardware figures]";
	char out[8192];

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		int rc = run_all("", runs[i][0], runs[i][1], out, sizeof(out));
		int lines = 0;

		cr_assert_eq(rc, 0, "%s exited %d: %s", runs[i][0], rc, out);
		for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			const char *e = strchr(l, '\n');
			size_t len = e ? (size_t)(e - l) : strlen(l);
			int timed = !!memmem(l, len, " us", 3) || !!memmem(l, len, " ns per WR", 10);

			if (timed) {
				lines++;
				cr_expect(memmem(l, len, note, strlen(note)), "%s: %.*s", runs[i][0], (int)len, l);
			}
		}
		cr_expect_gt(lines, 0, "%s printed no timing line: %s", runs[i][0], out);
	}
}

/* An rdma_cm client with no server in its process and no fabric hears of FVSIM_FABRIC. */
Test(sim_examples, rdma_cm_client_without_fabric)
{
	char out[4096];
	int rc = run_all("env -u FVSIM_FABRIC", "rdma_cm_pingpong", "-c 127.0.0.1", out, sizeof(out));

	cr_assert_neq(rc, 0, "the client connected to nothing: %s", out);
	cr_assert(strstr(out, "reached only when both run with the same FVSIM_FABRIC=name"), "%s", out);
}

Test(sim_examples, wr_api)
{
	char line[512];
	int rc = run_example("wr_api", "", line, sizeof(line));

	cr_assert_eq(rc, 0, "wr_api exited %d: %s", rc, line);
	cr_assert(strstr(line, "two RDMA WRITEs (64 + 100 bytes) and immediate 0x1234 arrived"), "%s", line);
}

/*
 * raw_eth needs an Ethernet port: it runs through fvsim-run (FVSIM_RUN, set by it for this
 * test) with FVSIM_LINK=eth, which writes that device's tree. Its last line says what arrived.
 */
Test(sim_examples, raw_eth)
{
	const char *run = getenv("FVSIM_RUN");
	char cmd[1024], line[512], last[512] = "";
	FILE *p;
	int st, frames = 0;

	cr_assert(run, "FVSIM_RUN unset: run through sim/fvsim-run");
	snprintf(cmd, sizeof(cmd), "env -u LD_PRELOAD FVSIM_LINK=eth %s %s/%s/examples/raw_eth 2>&1", run, FV_TOP,
		 FV_BUILD);	/* fvsim-run preloads what the example needs */
	p = popen(cmd, "r");
	cr_assert(p, "popen %s", cmd);
	while (fgets(line, sizeof(line), p)) {
		frames += strstr(line, "checksums good (IBV_WC_IP_CSUM_OK)") != NULL;
		snprintf(last, sizeof(last), "%s", line);
	}
	st = pclose(p);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "raw_eth exited %d: %s", st, last);
	cr_expect_eq(frames, 7, "3 UDP frames and 4 TSO segments printed");
	cr_assert(strstr(last, "raw_eth: 3 UDP frames and a TSO burst of 4000 bytes in 4 segments of at most 1000 "
			       "arrived, checksums good"), "%s", last);
}

/* pingpong_poll between two processes of one fabric (through fvsim-run, FVSIM_RUN). */
Test(sim_examples, pingpong_poll)
{
	struct simt_fabric fab;
	struct simt_ppoll p;
	pid_t srv;

	simt_fabric_join(&fab, "ppoll");
	simt_ppoll_args(&p, "300", "32");
	srv = simt_spawn(p.srv, fab.srv_out);
	simt_ppoll_finish(&fab, srv, simt_spawn(p.cli, fab.cli_out), 120);
	simt_fabric_leave(&fab);
}

/* Whether process pid catches signal sig (proc(5): /proc/PID/status, SigCgt). */
static bool catches(pid_t pid, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigCgt: %llx", &mask) == 1)
			break;
	fclose(f);
	return mask >> (sig - 1) & 1;
}

/*
 * pingpong_poll's client started 1.5 s before its server, its sleeps between tries cut short
 * by a signal every millisecond, as the software device's poller tick cuts them while it runs
 * (the device catches SIGRTMAX - 3, SIM_TICK_SIGNAL, from the client's CQ set-up on): the
 * client keeps trying for its 30 s by the clock, and both exit 0.
 */
Test(sim_examples, pingpong_poll_client_first_sleeps_cut_short)
{
	const int sig = SIGRTMAX - 3;
	struct simt_fabric fab;
	struct timespec t0, ms = { 0, 1000000 };
	struct simt_ppoll p;
	int signals = 0;
	pid_t cli;

	simt_fabric_join(&fab, "ppfirst");
	simt_ppoll_args(&p, "300", "32");
	cli = simt_spawn(p.cli, fab.cli_out);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!catches(cli, sig) && simt_ms_since(&t0) < 60000)
		nanosleep(&ms, NULL);
	cr_assert(catches(cli, sig), "the client's CQ never set up");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (simt_ms_since(&t0) < 1500) {
		signals += !syscall(SYS_tgkill, cli, cli, sig);	/* its main thread, in its tries */
		nanosleep(&ms, NULL);
	}
	cr_expect_gt(signals, 500, "signals sent while the client tried: %d", signals);
	simt_ppoll_finish(&fab, simt_spawn(p.srv, fab.srv_out), cli, 120);
	simt_fabric_leave(&fab);
}

/*
 * dc_fanout on one fabric: one DCI writes to and sends to four DCTs in four other processes;
 * each peer checks its bytes and says ok, the parent exits 0.
 */
Test(sim_examples, dc_fanout)
{
	struct simt_fabric fab;
	char out[8192];
	int rc, ok = 0;

	simt_fabric_join(&fab, "fanout");
	rc = run_all("", "dc_fanout", "-p 4", out, sizeof(out));
	simt_fabric_leave(&fab);
	cr_assert_eq(rc, 0, "dc_fanout exited %d: %s", rc, out);
	for (const char *p = out; (p = strstr(p, ": ok\n")) != NULL; p++)
		ok++;
	cr_assert_eq(ok, 4, "%s", out);
	cr_assert(strstr(out, "dc_fanout: one DCI, 4 DCTs in 4 processes: all data arrived"), "%s", out);
}
