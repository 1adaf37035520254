/*
 * pingpong_poll: RC latency ping-pong between two processes, busy-polling with fv_poll.
 *
 * The server waits for one client on a TCP port, the two exchange their QP numbers, LIDs,
 * GIDs and buffer keys over it, and then ping-pong: the client sends, the server answers
 * each message as it arrives. Each message is an inline RDMA WRITE WITH IMMEDIATE (the
 * sequence number) on the typed path; the receiver learns of it from fv_poll, spinning on
 * CQE memory without a system call. Both sides check every byte of every message, and
 * the client prints the round trips' distribution, as perftest's *_lat tools do.
 *
 *   pingpong_poll [-p port] [-n iterations] [-s bytes] [-d device]            server
 *   pingpong_poll [-p port] [-n iterations] [-s bytes] [-d device] HOST       client
 *
 * On the software device both run on one fabric:
 *   FVSIM_FABRIC=pp sim/fvsim-run pingpong_poll &
 *   FVSIM_FABRIC=pp sim/fvsim-run pingpong_poll localhost
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fastverbs/fastverbs.h>
#include "common.h"

/* What each side tells the other, in network byte order. */
struct wire_info {
	uint32_t qpn, rkey, lid;
	uint64_t addr;
	uint8_t gid[16];
};

struct side {
	struct ex_qp q;
	struct fv_rc rc;
	struct fv_cq cq;
	uint32_t remote_rkey;
	uint64_t remote_addr;
	struct ex_kept kept;		/* a completion polled while waiting for ring space */
};

static unsigned iters = 10000, msg_size = 8;
static const char *port = "18515";

static void full_io(int fd, void *p, size_t n, int out)
{
	uint8_t *b = p;

	while (n) {
		ssize_t r = out ? write(fd, b, n) : read(fd, b, n);

		if (r <= 0)
			ex_fail("TCP exchange with the peer failed");
		b += r;
		n -= (size_t)r;
	}
}

/* The TCP connection: accepted (host NULL) or made to host. */
static int tcp_connect(const char *host)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = host ? 0 : AI_PASSIVE }, *res, *ai;
	int fd = -1, one = 1;

	if (getaddrinfo(host, port, &hints, &res))
		ex_fail("cannot resolve %s port %s", host ? host : "(any)", port);
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (host) {
			/*
			 * The server may not listen yet: try for 30 s by the clock, not by a count
			 * of sleeps, which a signal cuts short (the software device's poller tick
			 * does, while it runs). A fresh socket each try: a failed connect leaves
			 * the socket's state unspecified.
			 */
			for (uint64_t t0 = ex_now_ns(); ex_now_ns() - t0 < 30000000000ull;) {
				if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
					goto done;
				close(fd);
				fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
				if (fd < 0)
					break;
				usleep(100000);
			}
			if (fd < 0)
				continue;
		} else {
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 1)) {
				int c = accept(fd, NULL, NULL);

				close(fd);
				fd = c;
				if (fd >= 0)
					goto done;
			}
		}
		close(fd);
		fd = -1;
	}
done:
	freeaddrinfo(res);
	if (fd < 0)
		ex_fail("no TCP connection on port %s", port);
	return fd;
}

/* The message for seq: its bytes follow from seq, so the receiver can check them all. */
static void fill(uint8_t *b, uint32_t seq)
{
	for (unsigned i = 0; i < msg_size; i++)
		b[i] = (uint8_t)(seq * 7 + i);
}

static void ping(struct side *s, uint32_t seq, uint8_t *msg)
{
	int err;

	fill(msg, seq);
	while ((err = fv_write_imm_inline(&s->rc, seq, 0, msg, msg_size, s->remote_addr,
					  s->remote_rkey, htobe32(seq))) == ENOMEM)
		ex_keep_one(&s->cq, &s->kept);
	if (err)
		ex_die("fv_write_imm_inline", err);
	fv_ring(&s->rc);
}

/* Spin on fv_poll for the peer's message seq; check its immediate and every byte. */
static void wait_for(struct side *s, uint32_t seq, uint8_t *want)
{
	struct fv_wc wc;

	do
		wc = ex_next_wc(&s->cq, &s->kept);
	while (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM);
	if (be32toh(wc.imm_data) != seq)
		ex_fail("out of order: got %u, want %u", be32toh(wc.imm_data), seq);
	fill(want, seq);
	if (memcmp(s->q.buf, want, msg_size))
		ex_fail("message %u: payload differs", seq);
	ex_repost(&s->rc.qp, &s->q, 1);
}

/* Tell the peer about s, learn about it, and connect s to it. */
static void exchange(struct setup_dev *d, struct side *s, int fd)
{
	const struct setup_conn c = {
		.port_num = d->port_num, .mtu = d->port.active_mtu, .rd_atomic = 16,
		.min_rnr_timer = 12, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};
	struct wire_info me = { htonl(s->q.qp->qp_num), htonl(s->q.mr->rkey), htonl(d->lid),
				htobe64((uintptr_t)s->q.buf), { 0 } }, peer;
	struct ibv_ah_attr ah;
	const char *what;
	int err;

	memcpy(me.gid, d->gid.raw, 16);
	full_io(fd, &me, sizeof(me), 1);
	full_io(fd, &peer, sizeof(peer), 0);
	s->remote_rkey = ntohl(peer.rkey);
	s->remote_addr = be64toh(peer.addr);
	setup_path(&ah, (uint16_t)ntohl(peer.lid), d->port_num,
		   d->gid_index >= 0 ? (const union ibv_gid *)peer.gid : NULL, d->gid_index, 64);
	if ((err = setup_rtr_rts(s->q.qp, &ah, ntohl(peer.qpn), &c, &what)))
		ex_die(what, err);
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *host;
	struct side s = { 0 };
	uint8_t msg[64], want[64];
	int c, fd, err;
	char sync = 0;

	while ((c = getopt(argc, argv, "p:n:s:d:h")) != -1) {
		switch (c) {
		case 'p': port = optarg; break;
		case 'n': iters = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': msg_size = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'd': dev = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-p port] [-n iterations] [-s bytes] [-d device] [host]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	host = optind < argc ? argv[optind] : NULL;
	if (!iters || !msg_size || msg_size > sizeof(msg))
		ex_fail("need -n > 0 and 0 < -s <= 64 (the message travels inline)");

	struct setup_dev *d = ex_open(dev);
	ex_qp_create(d, &s.q, IBV_QPT_RC, 4096);
	if ((err = fv_rc_init(&s.rc, s.q.qp)) || (err = fv_cq_init(&s.cq, s.q.cq)))
		ex_die("fastverbs init", err);
	ex_repost(&s.rc.qp, &s.q, 64);
	fd = tcp_connect(host);
	exchange(d, &s, fd);
	/* Both QPs are ready and their receives posted before the first message. */
	full_io(fd, &sync, 1, 1);
	full_io(fd, &sync, 1, 0);

	uint64_t *rtt = calloc(iters, sizeof(*rtt));
	if (!rtt)
		ex_fail("out of memory");
	if (host)
		printf("pingpong_poll: %s, %u round trips of %u bytes with %s:%s\n",
		       ibv_get_device_name(d->ctx->device), iters, msg_size, host, port);
	for (uint32_t i = 0; i < iters; i++) {
		uint64_t t0 = ex_now_ns();

		if (host) {
			ping(&s, i, msg);
			wait_for(&s, i, want);
		} else {
			wait_for(&s, i, want);
			ping(&s, i, msg);
		}
		rtt[i] = ex_now_ns() - t0;
	}
	/* The last answer's WQE has run before the QP goes away. */
	full_io(fd, &sync, 1, 1);
	full_io(fd, &sync, 1, 0);
	if (host)
		ex_report_rtt(rtt, iters);
	free(rtt);
	close(fd);
	fv_cq_cleanup(&s.cq);
	fv_qp_cleanup(&s.rc.qp);
	ex_qp_destroy(&s.q);
	ex_close(d);
	return 0;
}
