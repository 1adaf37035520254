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

/* Starts server srv on fabric f, then client cli once srv listens on TCP port (the test fails
 * if it never does within secs seconds); both must exit 0 within secs. Their outputs are f's
 * srv_out and cli_out; if either fails, both are shown in the test's log. */
static inline void simt_server_client(const struct simt_fabric *f, char *const srv[],
				      char *const cli[], int port, int secs)
{
	pid_t s = simt_start_server(f, srv, port, secs);
	int rc_cli, rc_srv;

	rc_cli = simt_finish_within(simt_spawn(cli, f->cli_out), secs);
	/* A server whose client failed may wait for it for good: a few seconds to end on its own. */
	rc_srv = simt_finish_within(s, rc_cli ? 5 : secs);
	/* The one that failed has shown its output; what the other said belongs with it. */
	if (rc_cli && !rc_srv)
		simt_show_output("its server exit 0", f->srv_out);
	if (rc_srv && !rc_cli)
		simt_show_output("its client exit 0", f->cli_out);
	cr_expect_eq(rc_cli, 0, "%s client exit %d", cli[0], rc_cli);
	cr_expect_eq(rc_srv, 0, "%s server exit %d", srv[0], rc_srv);
}

#endif
