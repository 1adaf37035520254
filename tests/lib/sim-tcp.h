/* TCP ports for tests that start stock client/server programs which exchange addresses
 * over TCP: a port free right now, whether a server listens on one yet, and the start of
 * such a pair. */
#ifndef SIM_TCP_H
#define SIM_TCP_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sim-proc.h"

/*
 * A TCP port nobody uses right now, below the kernel's ephemeral ports (ip_local_port_range),
 * tried from a place this process's number picks. Not an ephemeral one: a client that connects
 * to such a port before its server listens may be given it as its own port, and then the
 * server cannot bind it (or the client connects to itself); the programs' own connections take
 * their ports from that range too.
 */
static inline int simt_free_port(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	int low = 32768, base;

	if (f) {
		if (fscanf(f, "%d", &low) != 1)
			low = 32768;
		fclose(f);
	}
	base = low > 11000 ? 10000 : 1024;
	cr_assert_gt(low, base + 100, "ephemeral ports from %d: no room below them", low);
	for (unsigned i = 0, span = (unsigned)(low - base); i < span; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		int port = base + (int)(((unsigned)getpid() * 7919u + i) % span), s = socket(AF_INET, SOCK_STREAM, 0);
		bool free_now;

		cr_assert_geq(s, 0);
		a.sin_port = htons((uint16_t)port);
		free_now = !bind(s, (struct sockaddr *)&a, sizeof(a));
		close(s);
		if (free_now)
			return port;
	}
	cr_assert_fail("no free TCP port in %d..%d", base, low - 1);
	return -1;
}

/* Whether some process listens on TCP port (IPv4 or IPv6), per /proc/net/tcp*. */
static inline bool simt_listening(int port)
{
	static const char *const tables[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	char line[512], want[16];

	snprintf(want, sizeof(want), ":%04X ", port);
	for (size_t t = 0; t < 2; t++) {
		FILE *f = fopen(tables[t], "r");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			const char *local = strchr(line, ':'), *st;

			/* "sl: local_address rem_address st ...": state 0A is LISTEN. */
			if (!local || !(local = strchr(local + 1, ':')) || strncmp(local, want, strlen(want)))
				continue;
			st = strchr(local + strlen(want), ' ');
			if (st && !strncmp(st + 1, "0A", 2)) {
				fclose(f);
				return true;
			}
		}
		fclose(f);
	}
	return false;
}

/* Starts server srv on fabric f and waits until it listens on TCP port (the test fails if
 * it never does within secs seconds); returns its pid. Its output is f's srv_out. */
static inline pid_t simt_start_server(const struct simt_fabric *f, char *const srv[], int port,
				      int secs)
{
	pid_t s = simt_spawn(srv, f->srv_out);
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!simt_listening(port) && simt_ms_since(&t0) < secs * 1000L)
		usleep(50 * 1000);
	if (!simt_listening(port))
		simt_show_output("the server, not listening", f->srv_out);
	cr_assert(simt_listening(port), "%s never listened on port %d", srv[0], port);
	return s;
}

/* Client c and server s, spawned with f's cli_out and srv_out (program name), both exit 0
 * within secs seconds; if either fails, both outputs are shown in the test's log. */
static inline void simt_finish_pair(const struct simt_fabric *f, pid_t s, pid_t c, const char *name,
				    int secs)
{
	int rc_cli = simt_finish_within(c, secs), rc_srv;

	/* A server whose client failed may wait for it for good: a few seconds to end on its own. */
	rc_srv = simt_finish_within(s, rc_cli ? 5 : secs);
	/* The one that failed has shown its output; what the other said belongs with it. */
	if (rc_cli && !rc_srv)
		simt_show_output("its server exit 0", f->srv_out);
	if (rc_srv && !rc_cli)
		simt_show_output("its client exit 0", f->cli_out);
	cr_expect_eq(rc_cli, 0, "%s client exit %d", name, rc_cli);
	cr_expect_eq(rc_srv, 0, "%s server exit %d", name, rc_srv);
}

/* Starts server srv on fabric f, then client cli once srv listens on TCP port (the test fails
 * if it never does within secs seconds); both must exit 0 within secs (simt_finish_pair). */
static inline void simt_server_client(const struct simt_fabric *f, char *const srv[],
				      char *const cli[], int port, int secs)
{
	pid_t s = simt_start_server(f, srv, port, secs);

	simt_finish_pair(f, s, simt_spawn(cli, f->cli_out), cli[0], secs);
}

/* examples/pingpong_poll's server and client argument lists: n round trips of size bytes, on
 * a port free now; the client connects to 127.0.0.1. */
struct simt_ppoll {
	char port[16], path[512];
	char *srv[8], *cli[9];
};

static inline void simt_ppoll_args(struct simt_ppoll *p, char *n, char *size)
{
	snprintf(p->port, sizeof(p->port), "%d", simt_free_port());
	snprintf(p->path, sizeof(p->path), "%s/%s/examples/pingpong_poll", FV_TOP, FV_BUILD);
	char *args[] = { p->path, "-p", p->port, "-n", n, "-s", size, "127.0.0.1", NULL };

	memcpy(p->cli, args, sizeof(args));
	memcpy(p->srv, args, sizeof(p->srv));
	p->srv[7] = NULL;	/* no host: the server */
}

/* pingpong_poll's server s and client c both exit 0 within secs (each checks every byte it
 * receives), and the client reports its round trips. */
static inline void simt_ppoll_finish(const struct simt_fabric *f, pid_t s, pid_t c, int secs)
{
	simt_finish_pair(f, s, c, "pingpong_poll", secs);
	cr_expect_eq(simt_count_lines(f->cli_out, "round trip (us): min"), 1);
}

#endif
