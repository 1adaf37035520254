/*
 * rc_pingpong: RC latency ping-pong on the fastverbs typed path.
 *
 * Two RC QPs on the first mlx5 device are connected to each other (through the port, so on a
 * real HCA the messages cross the NIC). One thread drives both ends in turn: ping from A,
 * wait for it at B, pong from B, wait for it at A; each round trip is timed. One thread
 * keeps the measurement free of thread hand-offs and leaves cores to the device. Each
 * message is an inline RDMA WRITE WITH IMMEDIATE carrying the sequence number; the
 * receiver learns of it from the immediate in its CQE.
 *
 *   rc_pingpong [-n iterations] [-s bytes] [-d device]
 *
 * Runs on real hardware as is, and on the software device: sim/fvsim-run rc_pingpong.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <fastverbs/fastverbs.h>
#include "common.h"

struct side {
	struct ex_qp q;			/* verbs objects (common.c) */
	struct fv_rc rc;
	struct fv_cq cq;
	uint8_t *buf;
	uint32_t remote_rkey;
	uint64_t remote_addr;
	struct ex_kept kept;		/* a completion polled while waiting for ring space */
};

static unsigned iters = 10000, msg_size = 8;

/* Send seq to the peer: inline write of the message into its buffer, seq as immediate. */
static void ping(struct side *s, uint32_t seq)
{
	int err;

	/* Unsignaled: fastverbs asks for a hidden completion every half ring, which polling
	 * consumes to free space. A real completion seen meanwhile is kept for wait_for. */
	while ((err = fv_write_imm_inline(&s->rc, seq, 0, s->buf, msg_size, s->remote_addr,
					  s->remote_rkey, htobe32(seq))) == ENOMEM)
		ex_keep_one(&s->cq, &s->kept);
	if (err)
		ex_die("fv_write_imm_inline", err);
	fv_ring(&s->rc);
}

/* Wait for the peer's message with immediate seq; returns after reposting its receive
 * (each write with immediate consumes one). */
static void wait_for(struct side *s, uint32_t seq)
{
	struct fv_wc wc;

	do
		wc = ex_next_wc(&s->cq, &s->kept);
	while (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM);
	if (be32toh(wc.imm_data) != seq)
		ex_fail("out of order: got %u, want %u", be32toh(wc.imm_data), seq);
	ex_repost(&s->rc.qp, &s->q, 1);
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	struct side a = { 0 }, b = { 0 };
	int c;

	while ((c = getopt(argc, argv, "n:s:d:h")) != -1) {
		switch (c) {
		case 'n': iters = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': msg_size = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'd': dev = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-n iterations] [-s bytes] [-d device]\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (!iters || msg_size > 64)
		ex_fail("need -n > 0 and -s <= 64 (the message travels inline)");

	struct setup_dev *d = ex_open(dev);
	ex_qp_create(d, &a.q, IBV_QPT_RC, 4096);
	ex_qp_create(d, &b.q, IBV_QPT_RC, 4096);
	ex_rc_connect(d, &a.q, &b.q);
	ex_rc_connect(d, &b.q, &a.q);
	struct side *sides[2] = { &a, &b };
	for (int i = 0; i < 2; i++) {
		struct side *s = sides[i], *peer = sides[!i];
		int err;

		s->buf = s->q.buf;
		s->remote_addr = (uintptr_t)peer->q.buf;
		s->remote_rkey = peer->q.mr->rkey;
		if ((err = fv_rc_init(&s->rc, s->q.qp)) || (err = fv_cq_init(&s->cq, s->q.cq)))
			ex_die("fastverbs init", err);
		ex_repost(&s->rc.qp, &s->q, 64);
	}
	printf("rc_pingpong: %s, %u round trips of %u bytes (inline RDMA WRITE WITH IMM)\n",
	       ibv_get_device_name(d->ctx->device), iters, msg_size);

	uint64_t *rtt = calloc(iters, sizeof(*rtt));
	if (!rtt)
		ex_fail("out of memory");
	for (uint32_t i = 0; i < iters; i++) {
		uint64_t t0 = ex_now_ns();

		ping(&a, i);
		wait_for(&b, i);
		ping(&b, i);
		wait_for(&a, i);
		rtt[i] = ex_now_ns() - t0;
		if (iters >= 10 && (i + 1) % (iters / 10) == 0)
			fprintf(stderr, "  %u/%u round trips\n", i + 1, iters);
	}

	ex_report_rtt(rtt, iters);	/* sorted now */
	printf("one-way latency estimate: %.2f us%s\n", rtt[iters / 2] / 2e3, ex_time_note());
	free(rtt);
	for (int i = 0; i < 2; i++) {
		fv_cq_cleanup(&sides[i]->cq);
		fv_qp_cleanup(&sides[i]->rc.qp);
		ex_qp_destroy(&sides[i]->q);
	}
	ex_close(d);
	return 0;
}
