/* The poller tick (sim/engine/tick.c) with examples/pingpong_poll, two processes of one
 * fabric that poll CQE memory with fv_poll: with the tick on (the default) each process
 * logs the thread it ticks and both finish with every byte checked; with FVSIM_TICK_US=0
 * no tick starts and the device thread alone still carries the traffic. */
#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "sim-proc.h"
#include "sim-tcp.h"

#define LIMIT_S 150

static struct simt_fabric fab;

static void join_fabric(void)
{
	simt_fabric_join(&fab, "tick");
	setenv("FVSIM_LOG", "debug", 1);
}

static void leave_fabric(void)
{
	simt_fabric_leave(&fab);
}

TestSuite(sim_tick, .init = join_fabric, .fini = leave_fabric, .timeout = 360);

/* pingpong_poll server and client; both must exit 0 and the client report. */
static void pingpong(void)
{
	struct simt_ppoll p;
	pid_t srv;

	simt_ppoll_args(&p, "200", "16");
	srv = simt_spawn(p.srv, fab.srv_out);
	simt_ppoll_finish(&fab, srv, simt_spawn(p.cli, fab.cli_out), LIMIT_S);
}

Test(sim_tick, memory_pollers_get_ticks)
{
	unsetenv("FVSIM_TICK_US");
	pingpong();
	cr_expect_eq(simt_count_lines(fab.srv_out, "poller tick: thread"), 1);
	cr_expect_eq(simt_count_lines(fab.cli_out, "poller tick: thread"), 1);
}

Test(sim_tick, without_ticks_the_device_thread_carries_it)
{
	setenv("FVSIM_TICK_US", "0", 1);
	pingpong();
	cr_expect_eq(simt_count_lines(fab.srv_out, "poller tick"), 0);
	cr_expect_eq(simt_count_lines(fab.cli_out, "poller tick"), 0);
}
