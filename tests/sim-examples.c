/*
 * The example programs run on the software device (this test runs under sim/fvsim-run, whose
 * environment the child inherits) and succeed: exit status 0 and the line that says what
 * they checked.
 */
#include <criterion/criterion.h>
#include <stdio.h>
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
