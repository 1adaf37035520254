/* The harness that starts programs for the fabric tests (tests/lib/sim-proc.h): a program it
 * kills at its time limit, or one that exits before what it started, leaves nothing running
 * (mpirun killed at its limit left its ranks spinning on the CPUs the rest of make test needs). */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sim-proc.h"

static struct simt_fabric fab;

static void join(void)
{
	simt_fabric_join(&fab, "spawn");
}

static void leave(void)
{
	simt_fabric_leave(&fab);
}

TestSuite(sim_spawn, .init = join, .fini = leave, .timeout = 30);

/* Seconds no other sleep of the machine asks for: this test process's own (passes of make
 * test run at once), and the test's (Criterion runs them at once). */
static unsigned secs_of(unsigned test)
{
	return 100000000u + (unsigned)getpid() * 4u + test;
}

/* Whether a sleep of secs runs: a process whose command line is "sleep SECS", read from /proc
 * (not through pgrep: a shell that system() starts inherits this test's preloads, and the
 * sanitizer's build of the device hung in it). A zombie has an empty command line. */
static bool sleeping(unsigned secs)
{
	char want[32], path[64], got[64];
	int len = snprintf(want, sizeof(want), "sleep%c%u", 0, secs) + 1;
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool found = false;

	cr_assert(d);
	while (!found && (e = readdir(d))) {
		FILE *f;
		size_t n;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/cmdline", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(got, 1, sizeof(got), f);
		fclose(f);
		found = n == (size_t)len && !memcmp(got, want, (size_t)len);
	}
	closedir(d);
	return found;
}

/* Whether the sleep of secs is gone within 5 s (SIGKILL takes effect soon, not at once). */
static bool gone(unsigned secs)
{
	for (int i = 0; i < 250; i++) {
		if (!sleeping(secs))
			return true;
		usleep(20 * 1000);
	}
	return false;
}

Test(sim_spawn, killed_at_its_limit_with_what_it_started)
{
	unsigned s = secs_of(0);
	char sh[96];
	char *args[] = { "sh", "-c", sh, NULL };

	snprintf(sh, sizeof(sh), "sleep %u & sleep %u", s, s);
	cr_expect_eq(simt_finish_within(simt_spawn(args, fab.cli_out), 1), 137);
	cr_expect(gone(s), "a child of the killed program still runs");
}

Test(sim_spawn, exited_before_what_it_started)
{
	unsigned s = secs_of(1);
	char sh[96];
	char *args[] = { "sh", "-c", sh, NULL };

	snprintf(sh, sizeof(sh), "sleep %u & sleep 0.3; exit 0", s);
	cr_expect_eq(simt_finish_within(simt_spawn(args, fab.cli_out), 10), 0);
	cr_expect(gone(s), "a child of the exited program still runs");
}
