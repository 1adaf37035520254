/*
 * ud_pingpong: UD SEND ping-pong on the fastverbs typed path.
 *
 * Two UD QPs on the first mlx5 device exchange datagrams through an address handle for the
 * local port. Each message is an inline SEND whose payload is the sequence number; the
 * receiver checks it after the 40-byte GRH area every UD receive buffer starts with.
 *
 *   ud_pingpong [-n iterations] [-d device]
 *
 * Runs on real hardware as is, and on the software device: sim/fvsim-run ud_pingpong.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <fastverbs/fastverbs.h>
#include "common.h"

#define GRH 40			/* UD receive buffers begin with room for a GRH */
#define SLOT 256		/* bytes per receive buffer */
#define RECVS 64

struct side {
	struct ex_qp q;
	struct fv_ud ud;
	struct fv_cq cq;
	uint32_t peer_qpn;
};

static void post_recv(struct side *s, uint64_t slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->q.buf + slot * SLOT, .length = SLOT,
			       .lkey = s->q.mr->lkey };

	if (fv_recv(&s->ud.qp, slot, &sge, 1))
		ex_fail("receive queue full");
	fv_recv_ring(&s->ud.qp);
}

static void send_seq(struct side *s, const struct fv_ah *ah, uint32_t seq)
{
	int err;

	while ((err = fv_send_inline(&s->ud, seq, 0, &seq, sizeof(seq), ah, s->peer_qpn, EX_QKEY))
	       == ENOMEM) {
		struct fv_wc wc;

		if (fv_poll(&s->cq, &wc, 1) == 1 && wc.status != IBV_WC_SUCCESS)
			ex_fail("send completion error: %s", ibv_wc_status_str(wc.status));
	}
	if (err)
		ex_die("fv_send_inline", err);
	fv_ring(&s->ud);
}

/* Wait for datagram seq, check its bytes and length, give its buffer back. */
static void recv_seq(struct side *s, uint32_t seq)
{
	struct fv_wc wc;
	uint32_t got;

	for (;;) {
		int n = fv_poll(&s->cq, &wc, 1);

		if (n < 0)
			ex_die("fv_poll", -n);
		if (n == 0 || wc.opcode != IBV_WC_RECV)
			continue;
		if (wc.status != IBV_WC_SUCCESS)
			ex_fail("receive completion error: %s", ibv_wc_status_str(wc.status));
		break;
	}
	memcpy(&got, s->q.buf + wc.wr_id * SLOT + GRH, sizeof(got));
	if (got != seq || wc.byte_len != GRH + sizeof(seq))
		ex_fail("datagram %u: got seq %u, %u bytes", seq, got, wc.byte_len);
	post_recv(s, wc.wr_id);
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	unsigned iters = 10000;
	struct side a = { 0 }, b = { 0 };
	struct fv_ah ah;
	int c, err;

	while ((c = getopt(argc, argv, "n:d:h")) != -1) {
		switch (c) {
		case 'n': iters = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'd': dev = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-n iterations] [-d device]\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	struct setup_dev *d = ex_open(dev);
	ex_qp_create(d, &a.q, IBV_QPT_UD, 1024);
	ex_qp_create(d, &b.q, IBV_QPT_UD, 1024);
	struct ibv_ah *ibah = ex_ah_to_self(d);
	if ((err = fv_ah_init(&ah, ibah)))
		ex_die("fv_ah_init", err);
	a.peer_qpn = b.q.qp->qp_num;
	b.peer_qpn = a.q.qp->qp_num;
	struct side *sides[2] = { &a, &b };
	for (int i = 0; i < 2; i++) {
		if ((err = fv_ud_init(&sides[i]->ud, sides[i]->q.qp)) ||
		    (err = fv_cq_init(&sides[i]->cq, sides[i]->q.cq)))
			ex_die("fastverbs init", err);
		for (uint64_t slot = 0; slot < RECVS; slot++)
			post_recv(sides[i], slot);
	}
	printf("ud_pingpong: %s, %u datagram round trips\n", ibv_get_device_name(d->ctx->device), iters);

	uint64_t t0 = ex_now_ns();
	for (uint32_t i = 0; i < iters; i++) {
		send_seq(&a, &ah, i);
		recv_seq(&b, i);
		send_seq(&b, &ah, i);
		recv_seq(&a, i);
		if (iters >= 10 && (i + 1) % (iters / 10) == 0)
			fprintf(stderr, "  %u/%u round trips\n", i + 1, iters);
	}
	double us = (double)(ex_now_ns() - t0) / 1e3 / iters;
	printf("mean round trip: %.2f us (both ends in one thread)%s\n", us, ex_time_note());

	ibv_destroy_ah(ibah);
	for (int i = 0; i < 2; i++) {
		fv_cq_cleanup(&sides[i]->cq);
		fv_qp_cleanup(&sides[i]->ud.qp);
		ex_qp_destroy(&sides[i]->q);
	}
	ex_close(d);
	return 0;
}
