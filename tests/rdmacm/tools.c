/* The stock rdma_cm programs (Debian rdmacm-utils, perftest) as server and client in two
 * processes on one fabric: rping, udaddy, ucmatose, rdma_server/rdma_client and
 * ib_write_bw / ib_send_lat with -R. Each test has its own fabric, so ports never meet,
 * and every program runs within a time limit. A client connecting to a port nobody
 * listens on is refused at once. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <rdma/rdma_cma.h>

#include "sim-proc.h"

#define LIMIT_S 60

static struct simt_fabric fab;

static void join_fabric(void)
{
	simt_fabric_join(&fab, "rdmacm");
}

static void leave_fabric(void)
{
	simt_fabric_leave(&fab);
}

TestSuite(sim_rdmacm_tools, .init = join_fabric, .fini = leave_fabric, .timeout = 150);

/* Waits until a process of our fabric listens on (ps, port): binding 127.0.0.1 to that
 * port then fails with EADDRINUSE. */
static void wait_listener(enum rdma_port_space ps, int port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int err = 0;

	cr_assert(ch);
	for (int i = 0; i < LIMIT_S * 20 && err != EADDRINUSE; i++) {
		struct rdma_cm_id *id;

		cr_assert_eq(rdma_create_id(ch, &id, NULL, ps), 0);
		err = rdma_bind_addr(id, (struct sockaddr *)&a) ? errno : 0;
		rdma_destroy_id(id);
		if (err != EADDRINUSE)
			usleep(50 * 1000);
	}
	rdma_destroy_event_channel(ch);
	cr_assert_eq(err, EADDRINUSE, "nobody started listening on port %d", port);
}

/* Server, then (once it listens) client; both must exit 0 within the limit. */
static void pair(char *const srv[], char *const cli[], enum rdma_port_space ps, int port)
{
	pid_t s = simt_spawn(srv, fab.srv_out);
	int rc_cli, rc_srv;

	wait_listener(ps, port);
	rc_cli = simt_finish_within(simt_spawn(cli, fab.cli_out), LIMIT_S);
	rc_srv = simt_finish_within(s, LIMIT_S);
	cr_expect_eq(rc_cli, 0, "client exit %d", rc_cli);
	cr_expect_eq(rc_srv, 0, "server exit %d", rc_srv);
}

/* perftest's -R client connects its data QPs as soon as the control connection is up,
 * without waiting for the server to listen for them; when it is first, the server's
 * CM rejects it (nobody listens yet: reason 8) and perftest 4.5's own retry then crashes
 * the client. That race is the tools', so such a round is started over; any other
 * failure fails the test. */
static void pair_perftest(char *const srv[], char *const cli[], int port)
{
	for (int round = 0; round < 10; round++) {
		pid_t s = simt_spawn(srv, fab.srv_out);
		int rc_cli, rc_srv;

		wait_listener(RDMA_PS_TCP, port);
		rc_cli = simt_finish_within(simt_spawn(cli, fab.cli_out), LIMIT_S);
		if (rc_cli && simt_count_lines(fab.cli_out, "RDMA_CM_EVENT_REJECTED; error: 8")) {
			kill(s, SIGKILL);
			simt_finish(s);
			continue;
		}
		rc_srv = simt_finish_within(s, LIMIT_S);
		cr_expect_eq(rc_cli, 0, "client exit %d", rc_cli);
		cr_expect_eq(rc_srv, 0, "server exit %d", rc_srv);
		return;
	}
	cr_assert_fail("the perftest client lost the race to the server 10 times");
}

static char *port_str(int port)
{
	static char buf[16];

	snprintf(buf, sizeof(buf), "%d", port);
	return buf;
}

Test(sim_rdmacm_tools, rping)
{
	char *p = port_str(7700);
	char *srv[] = { "rping", "-s", "-a", "127.0.0.1", "-p", p, "-C", "10", "-v", NULL };
	char *cli[] = { "rping", "-c", "-a", "127.0.0.1", "-p", p, "-C", "10", "-v", NULL };

	pair(srv, cli, RDMA_PS_TCP, 7700);
	cr_expect_eq(simt_count_lines(fab.cli_out, "ping data: rdma-ping-"), 10);
	cr_expect_eq(simt_count_lines(fab.srv_out, "server ping data: rdma-ping-"), 10);
	cr_expect_eq(simt_count_lines(fab.cli_out, "rdma-ping-9: JKLMNOPQRSTUVWXYZ"), 1);
}

/* udaddy and ucmatose (librdmacm's cmatose) report the same way. */
static void cmatest(char *const srv[], char *const cli[], enum rdma_port_space ps, int port)
{
	pair(srv, cli, ps, port);
	cr_expect_eq(simt_count_lines(fab.srv_out, "return status 0"), 1);
	cr_expect_eq(simt_count_lines(fab.cli_out, "return status 0"), 1);
	cr_expect_eq(simt_count_lines(fab.cli_out, "data transfers complete"), 1);
}

Test(sim_rdmacm_tools, udaddy)
{
	char *srv[] = { "udaddy", "-C", "20", NULL };
	char *cli[] = { "udaddy", "-s", "127.0.0.1", "-C", "20", NULL };

	cmatest(srv, cli, RDMA_PS_UDP, 7174); /* udaddy's fixed port */
}

Test(sim_rdmacm_tools, ucmatose)
{
	char *srv[] = { "ucmatose", "-p", "7701", "-c", "2", "-C", "20", NULL };
	char *cli[] = { "ucmatose", "-s", "127.0.0.1", "-p", "7701", "-c", "2", "-C", "20", NULL };

	cmatest(srv, cli, RDMA_PS_TCP, 7701);
}

Test(sim_rdmacm_tools, rdma_server_client)
{
	char *srv[] = { "rdma_server", "-p", "7702", NULL };
	char *cli[] = { "rdma_client", "-s", "127.0.0.1", "-p", "7702", NULL };

	pair(srv, cli, RDMA_PS_TCP, 7702);
	cr_expect_eq(simt_count_lines(fab.srv_out, "rdma_server: end 0"), 1);
	cr_expect_eq(simt_count_lines(fab.cli_out, "rdma_client: end 0"), 1);
}

/*
 * A perftest program with -R, n iterations; result names the client's result line. -F: a
 * bandwidth tool whose clock calibration fails (a preempted sample on a loaded machine:
 * "r^2 < 0.9") still reports and exits 0, where it would exit 1 with "Can't produce a report".
 */
static void perftest(char *tool, char *port, const char *result)
{
	char *srv[] = { tool, "-R", "-F", "-p", port, "-n", "200", NULL };
	char *cli[] = { tool, "-R", "-F", "-p", port, "-n", "200", "127.0.0.1", NULL };

	pair_perftest(srv, cli, atoi(port));
	cr_expect_eq(simt_count_lines(fab.cli_out, result), 1, "no result line");
}

Test(sim_rdmacm_tools, ib_write_bw)
{
	perftest("ib_write_bw", "7703", " 65536      200 ");
	cr_expect_eq(simt_count_lines(fab.srv_out, " 65536      200 "), 1, "no result line");
}

Test(sim_rdmacm_tools, ib_send_lat)
{
	perftest("ib_send_lat", "7704", " 2       200 ");
}

/* Nobody listens on the port: the client hears REJECTED at once instead of hanging. */
Test(sim_rdmacm_tools, rping_nobody_listening)
{
	char *cli[] = { "rping", "-c", "-a", "127.0.0.1", "-p", "7705", "-C", "1", NULL };
	int rc = simt_finish_within(simt_spawn(cli, fab.cli_out), 20);

	cr_expect_neq(rc, 0);
	cr_expect_neq(rc, 128 + SIGKILL, "killed: it hung");
	cr_expect_eq(simt_count_lines(fab.cli_out, "RDMA_CM_EVENT_REJECTED, error 8"), 1);
}

/* The client side for peer_dies, in a forked process without Criterion asserts: waits
 * for the listener, connects, reports ESTABLISHED on the pipe and waits to be killed. */
static void doomed_client(int port, int report)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct ibv_qp_init_attr qa = { .cap = { 4, 4, 1, 1, 0 }, .qp_type = IBV_QPT_RC };
	struct rdma_conn_param cp = { .retry_count = 7 };
	struct rdma_cm_event *e;
	struct rdma_cm_id *id;
	char ok = 0;

	for (int i = 0; i < 400; i++) { /* bind fails once the test listens */
		if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
			_exit(2);
		ok = rdma_bind_addr(id, (struct sockaddr *)&a) && errno == EADDRINUSE;
		rdma_destroy_id(id);
		if (ok)
			break;
		usleep(50 * 1000);
	}
	if (!ok || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&a, 1000) ||
	    rdma_get_cm_event(ch, &e) || rdma_ack_cm_event(e) || rdma_resolve_route(id, 1000) ||
	    rdma_get_cm_event(ch, &e) || rdma_ack_cm_event(e) || rdma_create_qp(id, NULL, &qa) ||
	    rdma_connect(id, &cp) || rdma_get_cm_event(ch, &e))
		_exit(3);
	ok = e->event == RDMA_CM_EVENT_ESTABLISHED;
	if (write(report, &ok, 1) != 1)
		_exit(4);
	pause();
	_exit(0);
}

/* A peer process that dies (SIGKILL) leaves its connections as its closing file would
 * have: the other side hears DISCONNECTED. */
Test(sim_rdmacm_tools, peer_dies)
{
	struct rdma_event_channel *ch;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(7706),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct ibv_qp_init_attr qa = { .cap = { 4, 4, 1, 1, 0 }, .qp_type = IBV_QPT_RC };
	struct rdma_conn_param cp = { .retry_count = 7 };
	struct pollfd p;
	struct rdma_cm_event *e;
	struct rdma_cm_id *l, *s;
	int fds[2], status;
	char ok = 0;
	pid_t child;

	cr_assert_eq(pipe(fds), 0);
	child = fork(); /* before any rdma_cm state exists in this process */
	cr_assert_geq(child, 0);
	if (child == 0)
		doomed_client(7706, fds[1]);
	ch = rdma_create_event_channel();
	cr_assert(ch);
	cr_assert_eq(rdma_create_id(ch, &l, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_bind_addr(l, (struct sockaddr *)&a), 0);
	cr_assert_eq(rdma_listen(l, 1), 0);
	cr_assert_eq(rdma_get_cm_event(ch, &e), 0);
	cr_assert_eq(e->event, RDMA_CM_EVENT_CONNECT_REQUEST);
	s = e->id;
	cr_assert_eq(rdma_ack_cm_event(e), 0);
	cr_assert_eq(rdma_create_qp(s, NULL, &qa), 0);
	cr_assert_eq(rdma_accept(s, &cp), 0);
	cr_assert_eq(rdma_get_cm_event(ch, &e), 0);
	cr_assert_eq(e->event, RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(rdma_ack_cm_event(e), 0);
	cr_assert_eq(read(fds[0], &ok, 1), 1);
	cr_assert_eq(ok, 1, "the client did not see ESTABLISHED");

	cr_assert_eq(kill(child, SIGKILL), 0);
	cr_assert_eq(waitpid(child, &status, 0), child);
	p = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 5000), 1, "no event after the peer died");
	cr_assert_eq(rdma_get_cm_event(ch, &e), 0);
	cr_assert_eq(e->event, RDMA_CM_EVENT_DISCONNECTED, "%s", rdma_event_str(e->event));
	cr_assert_eq(e->id, s);
	cr_assert_eq(rdma_ack_cm_event(e), 0);
	rdma_destroy_qp(s);
	rdma_destroy_id(s);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(ch);
}

/* The project's own example: connected through rdma_cm, every byte moved by fv_rdma_*. */
Test(sim_rdmacm_tools, rdma_cm_pingpong_example)
{
	char *p = port_str(7790);
	char prog[256];

	snprintf(prog, sizeof(prog), "%s/%s/examples/rdma_cm_pingpong", FV_TOP, FV_BUILD);
	char *srv[] = { prog, "-s", "-p", p, "-n", "200", NULL };
	char *cli[] = { prog, "-c", "127.0.0.1", "-p", p, "-n", "200", NULL };

	pair(srv, cli, RDMA_PS_TCP, 7790);
	cr_expect_eq(simt_count_lines(fab.cli_out, "200 round trips of"), 1, "no report from the client");
}
