/* The harness that starts programs for the fabric tests (tests/lib/sim-proc.h): a program it
 * kills at its time limit, or one that exits before what it started, leaves nothing running
 * (mpirun killed at its limit left its ranks spinning on the CPUs the rest of make test needs). */
#include <stdlib.h>
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

/* Whether a sleep of secs runs. The pattern's last digit is in brackets: it does not match the
 * command line of the shell that runs pgrep. */
static bool sleeping(unsigned secs)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "pgrep -f 'sleep %u[%u]' >/dev/null", secs / 10, secs % 10);
	return system(cmd) == 0;
}

Test(sim_spawn, killed_at_its_limit_with_what_it_started)
{
	unsigned s = secs_of(0);
	char sh[96];
	char *args[] = { "sh", "-c", sh, NULL };

	snprintf(sh, sizeof(sh), "sleep %u & sleep %u", s, s);
	cr_expect_eq(simt_finish_within(simt_spawn(args, fab.cli_out), 1), 137);
	usleep(100 * 1000);
	cr_expect_not(sleeping(s), "a child of the killed program still runs");
}

Test(sim_spawn, exited_before_what_it_started)
{
	unsigned s = secs_of(1);
	char sh[96];
	char *args[] = { "sh", "-c", sh, NULL };

	snprintf(sh, sizeof(sh), "sleep %u & exit 0", s);
	cr_expect_eq(simt_finish_within(simt_spawn(args, fab.cli_out), 10), 0);
	usleep(100 * 1000);
	cr_expect_not(sleeping(s), "a child of the exited program still runs");
}
