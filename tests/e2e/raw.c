/* Raw Ethernet through fastverbs on the software device's Ethernet port (FVSIM_LINK=eth):
 * struct fv_raw's fv_send / fv_send_inline / fv_send_tso with FV_IP_CSUM, fv_post_send with
 * IBV_WR_TSO and IBV_SEND_IP_CSUM, fv_wr_send_tso, the refusals, a TSO header across the
 * ring end (built where its ds says, unlike libmlx5 44), and the receive side: frames a
 * steering rule hands a raw QP, polled with fv_poll_cq (IBV_WC_IP_CSUM_OK) and fv_poll.
 * The checksums are verified here from the frames, independently of the device. */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <fastverbs/fastverbs.h>
#include <fastverbs/gen/wr.h>

#include "raw-frame.h"
#include "sim-util.h"

#define BUF (1 << 16)
#define SLOT 2048 /* receive buffer per WQE, in [32K, 64K) */

static struct simt_dev d;
static struct ibv_mr *mr;
static uint8_t *buf;

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0xaa };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0xbb };
static const uint8_t mac_src[6] = { 0x02, 0, 0, 0, 0, 0x01 };

/* One raw QP taken over by fastverbs, with its CQ. */
struct end {
	struct ibv_cq *ibcq;
	struct ibv_qp *ibqp;
	struct fv_cq cq;
	struct fv_raw raw;
};

static void setup(void)
{
	simt_sysfs(1, 1, "eth");
	simt_open(&d, 0);
	fvsim_set_step_mode(1);
	buf = aligned_alloc(4096, BUF);
	memset(buf, 0, BUF);
	mr = simt_mr(&d, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
}

static void teardown(void)
{
	ibv_dereg_mr(mr);
	free(buf);
	simt_close(&d);
}

TestSuite(sim_raw_lib, .init = setup, .fini = teardown, .timeout = 60);

/* A RAW_PACKET QP in RTS (max_send_wr wr, TSO header up to 128), taken over by fv_raw_init. */
static void end_open(struct end *e, uint32_t wr)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = wr, .max_recv_wr = 32, .max_send_sge = 4, .max_recv_sge = 1,
			 .max_inline_data = 128 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
		.pd = d.pd, .max_tso_header = 128,
	};
	const char *what;

	e->ibcq = simt_cq(&d, 64);
	a.send_cq = a.recv_cq = e->ibcq;
	e->ibqp = ibv_create_qp_ex(d.ctx, &a);
	cr_assert(e->ibqp, "ibv_create_qp_ex(RAW_PACKET): %s", strerror(errno));
	cr_assert_eq(setup_raw_ready(e->ibqp, 1, &what), 0, "ibv_modify_qp(%s)", what);
	cr_assert_eq(fv_raw_init(&e->raw, e->ibqp, 128), 0);
	cr_assert_eq(fv_cq_init(&e->cq, e->ibcq), 0);
	cr_assert(e->raw.qp.raw_csum, "the device offers checksum offload");
	cr_assert_gt(e->raw.qp.max_tso, 0u, "and TSO");
}

static void end_close(struct end *e)
{
	fv_qp_cleanup(&e->raw.qp);
	cr_assert_eq(ibv_destroy_qp(e->ibqp), 0);
	fv_cq_cleanup(&e->cq);
	cr_assert_eq(ibv_destroy_cq(e->ibcq), 0);
}

static uint8_t *slot(uint64_t i)
{
	return buf + 32768 + i * SLOT;
}

/* n receive WQEs through fv_post_recv, slots 0..n-1. */
static void rx_post(struct end *e, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge s = { (uintptr_t)slot((uint64_t)i), SLOT, mr->lkey };
		struct ibv_recv_wr w = { .wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1 }, *bad;

		cr_assert_eq(fv_post_recv(&e->raw.qp, &w, &bad), 0);
	}
}

/* fv_poll_cq until n completions arrived, letting the device work. */
static void wait_wc(struct end *e, struct ibv_wc *wc, int n)
{
	struct timespec t0;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		int r = fv_poll_cq(&e->cq, n - got, wc + got);

		cr_assert(r >= 0);
		got += r;
		if (got < n) {
			cr_assert(simt_ms_since(&t0) < SIMT_WAIT_MS, "only %d of %d completions", got, n);
			simt_kick();
		}
	}
}

/* The send completion of wr_id, of opcode op. */
static void expect_sent(struct end *tx, uint64_t wr_id, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;

	wait_wc(tx, &wc, 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, wr_id);
	cr_expect_eq(wc.opcode, op);
}

/* The TSO segments of frame f (header hdr, payload bytes, mss) arrived, checksums valid. */
static void expect_segments(struct end *rx, const uint8_t *f, uint32_t hdr, uint32_t payload, uint32_t mss)
{
	uint32_t nseg = (payload + mss - 1) / mss;
	struct ibv_wc wc[16];

	cr_assert_leq(nseg, 16u);
	wait_wc(rx, wc, (int)nseg);
	for (uint32_t i = 0; i < nseg; i++) {
		uint32_t n = i + 1 < nseg ? mss : payload - i * mss;
		const uint8_t *s = slot(wc[i].wr_id);

		cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
		cr_expect_eq(wc[i].opcode, IBV_WC_RECV);
		cr_expect_eq(wc[i].byte_len, hdr + n, "segment %u", i);
		cr_expect(wc[i].wc_flags & IBV_WC_IP_CSUM_OK, "segment %u: checksums OK", i);
		cr_expect_arr_eq(s, f, 14);
		cr_expect_eq((uint32_t)s[38] << 24 | s[39] << 16 | s[40] << 8 | s[41], 0x10000000u + i * mss,
			     "sequence number of segment %u", i);
		cr_expect(raw_ip4_ok(s), "IPv4 header checksum of segment %u", i);
		cr_expect(raw_l4_ok(s, hdr + n), "TCP checksum of segment %u", i);
		cr_expect_arr_eq(s + hdr, f + hdr + i * mss, n, "payload of segment %u", i);
	}
}

Test(sim_raw_lib, typed_sends_with_checksum_offload_and_tso)
{
	struct end tx, rx;
	struct ibv_flow *fl;
	uint8_t *f = buf, *g = buf + 4096;
	uint32_t len = raw_frame(f, mac_a, mac_src, 4, 17, 4791, 100);
	struct ibv_sge s = { (uintptr_t)f, len, mr->lkey };
	struct ibv_wc wc;
	struct fv_wc w;

	end_open(&tx, 32);
	end_open(&rx, 32);
	rx_post(&rx, 16);
	fl = raw_flow(rx.ibqp, IBV_FLOW_ATTR_NORMAL, 0, mac_a, 0, 0, 0, 0);

	/* a UDP frame, checksums by the device: fv_poll_cq says so */
	cr_assert_eq(fv_send(&tx.raw, 1, FV_SIGNALED | FV_IP_CSUM, &s), 0);
	fv_ring(&tx.raw);
	expect_sent(&tx, 1, IBV_WC_SEND);
	wait_wc(&rx, &wc, 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, len);
	cr_expect_eq(wc.qp_num, rx.ibqp->qp_num);
	cr_expect(wc.wc_flags & IBV_WC_IP_CSUM_OK);
	cr_expect(raw_ip4_ok(slot(wc.wr_id)) && raw_l4_ok(slot(wc.wr_id), len), "checksums filled in");
	cr_expect_arr_eq(slot(wc.wr_id), f, 24, "up to the IPv4 checksum");
	cr_expect_arr_eq(slot(wc.wr_id) + 42, f + 42, len - 42, "payload");

	/* the same frame inline, without offload: zero checksums, no flag (fv_poll) */
	cr_assert_eq(fv_send_inline(&tx.raw, 2, FV_SIGNALED, f, len), 0);
	fv_ring(&tx.raw);
	expect_sent(&tx, 2, IBV_WC_SEND);
	while (fv_poll(&rx.cq, &w, 1) == 0)
		simt_kick();
	cr_assert_eq(w.status, IBV_WC_SUCCESS);
	cr_expect_eq(w.byte_len, len);
	cr_expect_eq(w.wc_flags & IBV_WC_IP_CSUM_OK, 0);
	cr_expect_arr_eq(slot(w.wr_id), f, len, "as sent");

	/* a TSO burst from an SGE list: 350 bytes in 100-byte segments, 4 frames */
	len = raw_frame(g, mac_a, mac_src, 4, 6, 80, 350);
	struct ibv_sge sl[2] = { { (uintptr_t)(g + 54), 150, mr->lkey }, { (uintptr_t)(g + 204), 200, mr->lkey } };

	cr_assert_eq(fv_send_tso_sgl(&tx.raw, 3, FV_SIGNALED | FV_IP_CSUM, g, 54, 100, sl, 2), 0);
	fv_ring(&tx.raw);
	expect_sent(&tx, 3, IBV_WC_TSO);
	expect_segments(&rx, g, 54, 350, 100);

	cr_assert_eq(ibv_destroy_flow(fl), 0);
	end_close(&rx);
	end_close(&tx);
}

Test(sim_raw_lib, post_send_wr_api_and_refusals)
{
	struct end tx, rx;
	struct ibv_flow *fl;
	uint8_t *g = buf;
	uint32_t len = raw_frame(g, mac_a, mac_src, 4, 6, 80, 250);
	struct ibv_sge s = { (uintptr_t)(g + 54), len - 54, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_TSO,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM }, *bad = NULL;

	end_open(&tx, 32);
	end_open(&rx, 32);
	rx_post(&rx, 16);
	fl = raw_flow(rx.ibqp, IBV_FLOW_ATTR_NORMAL, 0, mac_a, 0, 0, 0, 0);

	wr.tso.hdr = g;
	wr.tso.hdr_sz = 54;
	wr.tso.mss = 100;
	cr_assert_eq(fv_post_send(&tx.raw.qp, &wr, &bad), 0);
	expect_sent(&tx, 7, IBV_WC_TSO);
	expect_segments(&rx, g, 54, 250, 100);

	fv_wr_start(&tx.raw);
	tx.raw.qp.wr_id = 8;
	tx.raw.qp.wr_flags = IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM;
	fv_wr_send_tso(&tx.raw, g, 54, 120);
	fv_wr_set_sge(&tx.raw, mr->lkey, (uintptr_t)(g + 54), len - 54);
	cr_assert_eq(fv_wr_complete(&tx.raw), 0);
	expect_sent(&tx, 8, IBV_WC_TSO);
	expect_segments(&rx, g, 54, 250, 120);

	/* refusals: libmlx5's errno, nothing written (the producer stays) */
	uint32_t pi = tx.raw.qp.sq.pi;
	struct { enum ibv_wr_opcode op; unsigned flags; uint16_t hdr_sz; uint32_t len; int nsge; int err; } bad_wrs[] = {
		{ IBV_WR_RDMA_WRITE, 0, 54, 64, 1, EINVAL },	/* libmlx5 builds a WQE the device fails */
		{ IBV_WR_SEND_WITH_IMM, 0, 54, 64, 1, EINVAL },
		{ IBV_WR_SEND, 0, 54, 17, 1, EINVAL },		/* less than the 18-byte inline header */
		{ IBV_WR_SEND, 0, 54, 64, 0, EINVAL },		/* no payload at all */
		{ IBV_WR_TSO, 0, 13, 64, 1, EINVAL },		/* a header shorter than Ethernet's */
		{ IBV_WR_TSO, 0, 129, 64, 1, EINVAL },		/* longer than max_tso_header */
		{ IBV_WR_SEND, IBV_SEND_INLINE, 54, 0, 1, ENOMEM },	/* past max_inline_data (below) */
		{ IBV_WR_SEND, 0, 54, 64, 0, ENOMEM },		/* past max_send_sge (below) */
	};
	bad_wrs[6].len = 18 + tx.raw.qp.max_inline + 1;
	bad_wrs[7].nsge = (int)tx.raw.qp.max_send_sge + 1;
	cr_assert_leq(bad_wrs[7].nsge, 8);
	for (size_t i = 0; i < sizeof(bad_wrs) / sizeof(bad_wrs[0]); i++) {
		struct ibv_sge sg[8] = { { (uintptr_t)g, bad_wrs[i].len, mr->lkey } };
		struct ibv_send_wr b = { .wr_id = 9, .sg_list = sg, .num_sge = bad_wrs[i].nsge, .opcode = bad_wrs[i].op,
					 .send_flags = IBV_SEND_SIGNALED | bad_wrs[i].flags };

		for (int k = 1; k < 8; k++)
			sg[k] = sg[0];
		b.tso.hdr = g;
		b.tso.hdr_sz = bad_wrs[i].hdr_sz;
		b.tso.mss = 100;
		bad = NULL;
		cr_expect_eq(fv_post_send(&tx.raw.qp, &b, &bad), bad_wrs[i].err, "case %zu", i);
		cr_expect_eq(bad, &b, "case %zu", i);
		cr_expect_eq(tx.raw.qp.sq.pi, pi, "case %zu wrote nothing", i);
	}
	/* checksum offload on a QP that has none: EINVAL, typed and compat */
	tx.raw.qp.raw_csum = 0;
	cr_expect_eq(fv_send(&tx.raw, 10, FV_IP_CSUM, &s), EINVAL);
	wr.tso.mss = 100;
	cr_expect_eq(fv_post_send(&tx.raw.qp, &wr, &bad), EINVAL);
	cr_expect_eq(tx.raw.qp.sq.pi, pi);
	tx.raw.qp.raw_csum = 1;

	cr_assert_eq(ibv_destroy_flow(fl), 0);
	end_close(&rx);
	end_close(&tx);
}

/*
 * On a 16-block ring, a TSO WQE whose header runs past the ring end: fastverbs puts its data
 * segments right after the header's last unit at block 0, where its ds says (libmlx5 44
 * writes them 32 bytes further on). The device sends every segment intact.
 */
Test(sim_raw_lib, tso_header_across_the_ring_end)
{
	struct end tx, rx;
	struct ibv_flow *fl;
	uint8_t *f = buf, *g = buf + 4096;
	uint32_t flen = raw_frame(f, mac_b, mac_src, 4, 17, 9, 30);	/* nobody steers mac_b */
	uint32_t len = raw_frame(g, mac_a, mac_src, 4, 6, 80, 300);
	struct ibv_sge s = { (uintptr_t)f, flen, mr->lkey };
	struct ibv_sge p = { (uintptr_t)(g + 66), len - 66, mr->lkey };

	end_open(&tx, 4);
	cr_assert_eq(tx.raw.qp.sq.mask + 1, 16u, "a 16-block ring");
	end_open(&rx, 32);
	rx_post(&rx, 16);
	fl = raw_flow(rx.ibqp, IBV_FLOW_ATTR_NORMAL, 0, mac_a, 0, 0, 0, 0);
	/* TCP options: a 66-byte header */
	memmove(g + 66, g + 54, len - 54);
	memset(g + 54, 1, 12);
	g[46] = 0x80;
	len += 12;
	g[16] = (uint8_t)((len - 14) >> 8), g[17] = (uint8_t)(len - 14);	/* IPv4 total length */
	p.length = len - 66;
	for (uint64_t i = 0; i < 2; i++) {	/* two laps: the header crosses the end twice */
		while ((tx.raw.qp.sq.pi & 15) != 15) {
			cr_assert_eq(fv_send(&tx.raw, 100 + tx.raw.qp.sq.pi, FV_SIGNALED, &s), 0);
			fv_ring(&tx.raw);
			expect_sent(&tx, 100 + tx.raw.qp.sq.pi - 1, IBV_WC_SEND);
		}
		cr_assert_eq(fv_send_tso(&tx.raw, 11, FV_SIGNALED | FV_IP_CSUM, g, 66, 100, &p), 0);
		fv_ring(&tx.raw);
		expect_sent(&tx, 11, IBV_WC_TSO);
		expect_segments(&rx, g, 66, 300, 100);
	}
	cr_assert_eq(ibv_destroy_flow(fl), 0);
	end_close(&rx);
	end_close(&tx);
}
