/* UCX 1.13 (Debian ucx-utils) on the software device with its default settings:
 * ucx_info lists mlx5_0 with the mlx5 transports, DC included, and ucx_perftest runs
 * between two processes of one fabric over rc_mlx5 and dc_mlx5, through UCT (put, active
 * messages, atomics) and through UCP (tag matching, where UCP's own choice of transport
 * must be rc_mlx5, or dc_mlx5 when that is all it may use). Each
 * test has its own fabric and TCP port (ucx_perftest exchanges addresses over TCP), and
 * every program runs within a time limit. Runs are short: the point is that UCX's WQEs
 * go through, not how fast. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sim-proc.h"
#include "sim-tcp.h"

#define LIMIT_S 90

static struct simt_fabric fab;

/* UCX settings a caller's environment could carry would change what is tested: the
 * device must work with UCX's defaults (memory hooks included). */
static void clear_ucx_env(void)
{
	extern char **environ;
	char name[128];

	for (int again = 1; again;) {
		again = 0;
		for (char **e = environ; *e; e++) {
			const char *eq = strchr(*e, '=');

			if (strncmp(*e, "UCX_", 4) || !eq || (size_t)(eq - *e) >= sizeof(name))
				continue;
			memcpy(name, *e, (size_t)(eq - *e));
			name[eq - *e] = 0;
			unsetenv(name);
			again = 1;
			break;
		}
	}
}

static void join_fabric(void)
{
	clear_ucx_env();
	simt_fabric_join(&fab, "ucx");
}

static void leave_fabric(void)
{
	simt_fabric_leave(&fab);
}

TestSuite(sim_ucx_tools, .init = join_fabric, .fini = leave_fabric, .timeout = 240);

/* ucx_perftest as server, then (once it listens) as client with the test's arguments;
 * both must exit 0 within the limit and the client print its final line. */
static void perftest(const char *const test[])
{
	char port[16], *srv[8] = { "ucx_perftest", "-p", port, NULL };
	char *cli[32] = { "ucx_perftest", "127.0.0.1", "-p", port };
	int n = 4, p = simt_free_port();

	snprintf(port, sizeof(port), "%d", p);
	for (int i = 0; test[i] && n < 31; i++)
		cli[n++] = (char *)test[i];
	cli[n] = NULL;
	simt_server_client(&fab, srv, cli, p, LIMIT_S);
	cr_expect_eq(simt_count_lines(fab.cli_out, "Final:"), 1, "no final line from the client");
}

Test(sim_ucx_tools, ucx_info_lists_mlx5_transports)
{
	char *args[] = { "ucx_info", "-d", NULL };

	cr_assert_eq(simt_finish_within(simt_spawn(args, fab.cli_out), LIMIT_S), 0);
	cr_expect_eq(simt_count_lines(fab.cli_out, "Memory domain: mlx5_0"), 1);
	cr_expect_eq(simt_count_lines(fab.cli_out, "Transport: rc_mlx5"), 1);
	cr_expect_eq(simt_count_lines(fab.cli_out, "Transport: ud_mlx5"), 1);
	cr_expect_eq(simt_count_lines(fab.cli_out, "Transport: rc_verbs"), 1);
	cr_expect_eq(simt_count_lines(fab.cli_out, "Transport: ud_verbs"), 1);
	/* UCX lists dc_mlx5 once its probe DCT reaches RTR (and opens the interface). */
	cr_expect_eq(simt_count_lines(fab.cli_out, "Transport: dc_mlx5"), 1);
	cr_expect_eq(simt_count_lines(fab.cli_out, "Device: mlx5_0:1"), 5);
	cr_expect_eq(simt_count_lines(fab.cli_out, "failed to open memory domain"), 0);
}

/* UCT over rc_mlx5 (-x names the transport: no rc_mlx5, no run). */
Test(sim_ucx_tools, uct_put_short_latency)
{
	perftest((const char *const[]){ "-d", "mlx5_0:1", "-x", "rc_mlx5", "-t", "put_lat", "-n", "100",
					"-w", "5", NULL });
}

Test(sim_ucx_tools, uct_put_zcopy_bandwidth)
{
	perftest((const char *const[]){ "-d", "mlx5_0:1", "-x", "rc_mlx5", "-t", "put_bw", "-D", "zcopy",
					"-s", "4096", "-n", "200", "-w", "5", NULL });
}

Test(sim_ucx_tools, uct_put_bcopy_bandwidth)
{
	perftest((const char *const[]){ "-d", "mlx5_0:1", "-x", "rc_mlx5", "-t", "put_bw", "-D", "bcopy",
					"-s", "1024", "-n", "200", "-w", "5", NULL });
}

Test(sim_ucx_tools, uct_am_short_latency)
{
	perftest((const char *const[]){ "-d", "mlx5_0:1", "-x", "rc_mlx5", "-t", "am_lat", "-n", "100",
					"-w", "5", NULL });
}

Test(sim_ucx_tools, uct_atomic_add_post_rate)
{
	perftest((const char *const[]){ "-d", "mlx5_0:1", "-x", "rc_mlx5", "-t", "add_mr", "-n", "200",
					"-w", "5", NULL });
}

Test(sim_ucx_tools, uct_atomic_fetch_add_latency)
{
	perftest((const char *const[]){ "-d", "mlx5_0:1", "-x", "rc_mlx5", "-t", "add_lat", "-n", "50",
					"-w", "5", NULL });
}

/* UCP picks its transports itself; limited to the mlx5 ones (UD for wireup) it must put
 * the endpoint's tag lane on rc_mlx5, which it reports at log level info. */
Test(sim_ucx_tools, ucp_tag_latency_over_rc_mlx5)
{
	setenv("UCX_TLS", "rc_mlx5,ud_mlx5", 1);
	setenv("UCX_LOG_LEVEL", "info", 1);
	perftest((const char *const[]){ "-t", "tag_lat", "-n", "100", "-w", "5", NULL });
	cr_expect_geq(simt_count_lines(fab.cli_out, "tag(rc_mlx5/mlx5_0:1)"), 1, "UCP chose no rc_mlx5 lane");
	cr_expect_geq(simt_count_lines(fab.srv_out, "tag(rc_mlx5/mlx5_0:1)"), 1, "UCP chose no rc_mlx5 lane");
}

/* UCT over dc_mlx5: UCX's DCIs address the peer's DCT in every WQE. */
Test(sim_ucx_tools, uct_dc_put_short_latency)
{
	perftest((const char *const[]){ "-d", "mlx5_0:1", "-x", "dc_mlx5", "-t", "put_lat", "-n", "100",
					"-w", "5", NULL });
}

Test(sim_ucx_tools, uct_dc_am_short_latency)
{
	perftest((const char *const[]){ "-d", "mlx5_0:1", "-x", "dc_mlx5", "-t", "am_lat", "-n", "100",
					"-w", "5", NULL });
}

Test(sim_ucx_tools, uct_dc_put_zcopy_bandwidth)
{
	perftest((const char *const[]){ "-d", "mlx5_0:1", "-x", "dc_mlx5", "-t", "put_bw", "-D", "zcopy",
					"-s", "4096", "-n", "200", "-w", "5", NULL });
}

/* UCP with DC alone (and self): its tag lane must be dc_mlx5. */
Test(sim_ucx_tools, ucp_tag_latency_over_dc_mlx5)
{
	setenv("UCX_TLS", "dc_mlx5,self", 1);
	setenv("UCX_LOG_LEVEL", "info", 1);
	perftest((const char *const[]){ "-t", "tag_lat", "-n", "100", "-w", "5", NULL });
	cr_expect_geq(simt_count_lines(fab.cli_out, "tag(dc_mlx5/mlx5_0:1)"), 1, "UCP chose no dc_mlx5 lane");
	cr_expect_geq(simt_count_lines(fab.srv_out, "tag(dc_mlx5/mlx5_0:1)"), 1, "UCP chose no dc_mlx5 lane");
}

/* UCP's rendezvous over DC (64 KiB tags: the receiver READs the data from the sender's
 * memory) with DCIs picked at random per endpoint (UCX_DC_MLX5_TX_POLICY=rand). */
Test(sim_ucx_tools, ucp_tag_rendezvous_over_dc_mlx5_rand)
{
	setenv("UCX_TLS", "dc_mlx5,self", 1);
	setenv("UCX_DC_MLX5_TX_POLICY", "rand", 1);
	perftest((const char *const[]){ "-t", "tag_bw", "-s", "65536", "-n", "100", "-w", "5", NULL });
}
