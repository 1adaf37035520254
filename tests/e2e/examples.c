/*
 * The example programs run on the software device (this test runs under sim/fvsim-run, whose
 * environment the child inherits) and succeed: exit status 0 and the line that says what
 * they checked.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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
