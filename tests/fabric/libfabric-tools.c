/* libfabric (Debian libfabric-bin) on the software device: fabtests' fi_pingpong between
 * two processes of one fabric over the verbs provider, as a connected MSG endpoint and as
 * RxM's reliable datagram endpoint (verbs;ofi_rxm), which connects through rdma_cm behind
 * the scenes (its accept once failed: it asks for 15 transport retries, which rdma_cm
 * clamps to 7). Data integrity checks on (-c): each side verifies every byte it receives
 * and fails otherwise. Every program runs within a time limit. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sim-proc.h"
#include "sim-tcp.h"

#define LIMIT_S 120
#define ITERS "20"

static struct simt_fabric fab;

static void join_fabric(void)
{
	unsetenv("FI_PROVIDER");
	simt_fabric_join(&fab, "ofi");
}

static void leave_fabric(void)
{
	simt_fabric_leave(&fab);
}

TestSuite(sim_libfabric_tools, .init = join_fabric, .fini = leave_fabric, .timeout = 300);

/* fi_pingpong server and client over provider prov with endpoint type ep; both exit 0
 * and each prints a result row per message size (64 bytes to 1 MiB, six sizes). */
static void pingpong(const char *prov, const char *ep)
{
	char port[16];
	char *srv[] = { "fi_pingpong", "-p", (char *)prov, "-e", (char *)ep, "-I", ITERS, "-c",
			"-B", port, NULL };
	char *cli[] = { "fi_pingpong", "-p", (char *)prov, "-e", (char *)ep, "-I", ITERS, "-c",
			"-P", port, "127.0.0.1", NULL };
	int p = simt_free_port();

	snprintf(port, sizeof(port), "%d", p);
	simt_server_client(&fab, srv, cli, p, LIMIT_S);
	cr_expect_eq(simt_count_lines(fab.cli_out, "=" ITERS " "), 6, "client result rows");
	cr_expect_eq(simt_count_lines(fab.srv_out, "=" ITERS " "), 6, "server result rows");
}

Test(sim_libfabric_tools, verbs_msg_endpoint)
{
	pingpong("verbs", "msg");
}

Test(sim_libfabric_tools, rxm_rdm_endpoint)
{
	pingpong("verbs;ofi_rxm", "rdm");
}
