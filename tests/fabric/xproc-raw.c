/* Raw Ethernet between two processes of one fabric (FVSIM_FABRIC, FVSIM_LINK=eth): the
 * test (A) sends UDP frames with checksum offload and TSO bursts from two RAW_PACKET QPs,
 * one taken over by fastverbs (fv_send, fv_send_tso), one driven by libmlx5
 * (ibv_post_send with IBV_SEND_IP_CSUM and IBV_WR_TSO); a forked process (B) receives
 * them through its own steering rules (dst MAC + UDP port, dst MAC + TCP port) and hands
 * every completion and frame back over a pipe. A checks each byte, the segment count,
 * the checksums (computed here) and the CQE flags. Frames no rule of B takes are dropped
 * (B sees nothing of them, while A's sends complete): they are sent before the last
 * frame, and frames arrive in order, so B stopping at that last one has seen all. Needs
 * CAP_NET_RAW (root), as the kernel demands for RAW_PACKET QPs. */
#include <endian.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <fastverbs/fastverbs.h>

#include "raw-frame.h"
#include "sim-xproc.h"

#define BUF (1 << 16)
#define SLOT 2048 /* receive buffer per WQE */
#define NRECV 32
#define WAIT_MS 20000 /* B's wait for a frame: well within the test's time limit */

static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0xbb }; /* B's rules take this one */
static const uint8_t mac_x[6] = { 0x02, 0, 0, 0, 0, 0xcc }; /* nobody's */
static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0xaa };

enum { UDP_PORT = 4791, TCP_PORT = 80, LAST_PAYLOAD = 7 };

static void setup(void)
{
	join_fabric();
	simt_sysfs(1, 1, "eth");
}

TestSuite(sim_xproc_raw, .init = setup, .fini = leave_fabric, .timeout = 60);

/* One completion B saw, and the frame it landed. */
struct seen {
	uint32_t status, opcode, byte_len, wc_flags, qp_ok;
	uint8_t frame[SLOT];
};

struct raw_end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

/* Plain verbs, no Criterion asserts: B runs this too. A RAW_PACKET QP in RTS. */
static int raw_up(struct raw_end *e)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 16, .max_recv_wr = NRECV, .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 128 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
		.max_tso_header = 128,
	};
	const char *what;

	if (!list || !list[0] || !(e->ctx = ibv_open_device(list[0])))
		return -1;
	ibv_free_device_list(list);
	e->buf = aligned_alloc(4096, BUF);
	memset(e->buf, 0, BUF);
	if (!(e->pd = ibv_alloc_pd(e->ctx)) ||
	    !(e->mr = ibv_reg_mr(e->pd, e->buf, BUF, IBV_ACCESS_LOCAL_WRITE)) ||
	    !(e->cq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0)))
		return -1;
	a.pd = e->pd;
	a.send_cq = a.recv_cq = e->cq;
	if (!(e->qp = ibv_create_qp_ex(e->ctx, &a)))
		return -1;
	return setup_raw_ready(e->qp, 1, &what) ? -1 : 0;
}

/* A rule: B's dst MAC and the L4 port (type l4); the specs follow the attribute. */
static struct ibv_flow *rule(struct ibv_qp *qp, enum ibv_flow_spec_type l4, uint16_t port)
{
	uint64_t mem[32] = { 0 };
	struct ibv_flow_attr *attr = (struct ibv_flow_attr *)mem;
	struct ibv_flow_spec_eth eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(eth) };
	struct ibv_flow_spec_tcp_udp l4s = { .type = l4, .size = sizeof(l4s) };

	attr->type = IBV_FLOW_ATTR_NORMAL;
	attr->size = (uint16_t)(sizeof(*attr) + sizeof(eth) + sizeof(l4s));
	attr->num_of_specs = 2;
	attr->port = 1;
	memcpy(eth.val.dst_mac, mac_b, 6);
	memset(eth.mask.dst_mac, 0xff, 6);
	l4s.val.dst_port = htobe16(port);
	l4s.mask.dst_port = 0xffff;
	memcpy(attr + 1, &eth, sizeof(eth));
	memcpy((uint8_t *)(attr + 1) + sizeof(eth), &l4s, sizeof(l4s));
	return ibv_create_flow(qp, attr);
}

/* B: rules, receive WQEs, "ready" to A; then every completion until the last frame (a
 * UDP frame of LAST_PAYLOAD bytes) goes back to A, followed by a zero record. */
static int receiver_main(int wr)
{
	struct raw_end e;
	struct seen s;
	struct ibv_wc wc;

	if (raw_up(&e) || !rule(e.qp, IBV_FLOW_SPEC_UDP, UDP_PORT) ||
	    !rule(e.qp, IBV_FLOW_SPEC_TCP, TCP_PORT))
		return 1;
	for (uint64_t i = 0; i < NRECV; i++) {
		struct ibv_sge sg = { (uintptr_t)(e.buf + i * SLOT), SLOT, e.mr->lkey };
		struct ibv_recv_wr w = { .wr_id = i, .sg_list = &sg, .num_sge = 1 }, *bad;

		if (ibv_post_recv(e.qp, &w, &bad))
			return 2;
	}
	if (write(wr, "r", 1) != 1)
		return 3;
	for (;;) {
		struct timespec t0;
		int n = 0;

		/* Bounded: a frame that never comes ends B (and A sees it end early). */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (!(n = ibv_poll_cq(e.cq, 1, &wc)) && simt_ms_since(&t0) < WAIT_MS)
			;
		if (n <= 0 || wc.wr_id >= NRECV)
			return 4;
		memset(&s, 0, sizeof(s));
		s.status = wc.status;
		s.opcode = wc.opcode;
		s.byte_len = wc.byte_len;
		s.wc_flags = wc.wc_flags;
		s.qp_ok = wc.qp_num == e.qp->qp_num;
		memcpy(s.frame, e.buf + wc.wr_id * SLOT, SLOT);
		if (write(wr, &s, sizeof(s)) != sizeof(s))
			return 5;
		if (wc.status != IBV_WC_SUCCESS || wc.byte_len == 42 + LAST_PAYLOAD)
			break;
	}
	memset(&s, 0, sizeof(s));
	return write(wr, &s, sizeof(s)) == sizeof(s) ? 0 : 6;
}

/* A's two senders: one QP through fastverbs, one through libmlx5, on one CQ each. */
struct sender {
	struct raw_end e;
	struct fv_raw raw;
	struct fv_cq fcq;
	struct ibv_qp *ibqp; /* the libmlx5 one */
	struct ibv_cq *ibcq;
};

static void sent(struct sender *a, bool fv, uint64_t wr_id, enum ibv_wc_opcode op)
{
	struct timespec t0;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!(n = fv ? fv_poll_cq(&a->fcq, 1, &wc) : ibv_poll_cq(a->ibcq, 1, &wc))) {
		cr_assert(simt_ms_since(&t0) < SIMT_WAIT_MS, "send %lu did not complete", (unsigned long)wr_id);
		simt_kick();
	}
	cr_assert_eq(n, 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "send %lu: %s", (unsigned long)wr_id, ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, wr_id);
	cr_expect_eq(wc.opcode, op);
}

static void sender_up(struct sender *a)
{
	struct ibv_qp_init_attr_ex x = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 128 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
		.max_tso_header = 128,
	};
	const char *what;

	cr_assert_eq(raw_up(&a->e), 0, "A's raw QP: %s", strerror(errno));
	cr_assert_eq(fv_raw_init(&a->raw, a->e.qp, 128), 0);
	cr_assert_eq(fv_cq_init(&a->fcq, a->e.cq), 0);
	cr_assert(a->raw.qp.raw_csum && a->raw.qp.max_tso, "checksum offload and TSO offered");
	cr_assert(a->ibcq = ibv_create_cq(a->e.ctx, 16, NULL, NULL, 0));
	x.pd = a->e.pd;
	x.send_cq = x.recv_cq = a->ibcq;
	cr_assert(a->ibqp = ibv_create_qp_ex(a->e.ctx, &x));
	cr_assert_eq(setup_raw_ready(a->ibqp, 1, &what), 0, "ibv_modify_qp(%s)", what);
}

static void sender_down(struct sender *a)
{
	fv_qp_cleanup(&a->raw.qp);
	fv_cq_cleanup(&a->fcq);
	cr_expect_eq(ibv_destroy_qp(a->ibqp), 0);
	cr_expect_eq(ibv_destroy_qp(a->e.qp), 0);
	cr_expect_eq(ibv_destroy_cq(a->ibcq), 0);
	cr_expect_eq(ibv_destroy_cq(a->e.cq), 0);
	cr_expect_eq(ibv_dereg_mr(a->e.mr), 0);
	cr_expect_eq(ibv_dealloc_pd(a->e.pd), 0);
	cr_expect_eq(ibv_close_device(a->e.ctx), 0);
	free(a->e.buf);
}

/* libmlx5: a plain send of the whole frame f, or (mss) a TSO of header hdr + the rest. */
static void mlx5_send(struct sender *a, uint64_t wr_id, const uint8_t *f, uint32_t len, unsigned flags,
		      uint16_t hdr, uint16_t mss)
{
	struct ibv_sge s = { (uintptr_t)(f + hdr), len - hdr, a->e.mr->lkey };
	struct ibv_send_wr w = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1,
				 .opcode = mss ? IBV_WR_TSO : IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED | flags }, *bad;

	w.tso.hdr = (void *)f;
	w.tso.hdr_sz = hdr;
	w.tso.mss = mss;
	cr_assert_eq(ibv_post_send(a->ibqp, &w, &bad), 0);
	sent(a, false, wr_id, mss ? IBV_WC_TSO : IBV_WC_SEND);
}

/* What B must have received for a frame of len bytes sent as f: f itself; csum: with
 * valid checksums (checked here) and the CQE saying so; else with f's zero checksums and
 * no flag. Checksum fields are compared by verifying them, every other byte as is. */
static void expect_frame(const struct seen *s, const uint8_t *f, uint32_t len, bool csum, const char *what)
{
	uint32_t sum = 34 + (f[23] == 6 ? 16 : 6); /* the L4 checksum's offset */

	cr_assert_eq(s->status, IBV_WC_SUCCESS, "%s: %s", what, ibv_wc_status_str(s->status));
	cr_expect_eq(s->opcode, IBV_WC_RECV, "%s", what);
	cr_expect(s->qp_ok, "%s: on B's QP", what);
	cr_assert_eq(s->byte_len, len, "%s: length", what);
	cr_expect_arr_eq(s->frame, f, 24, "%s: up to the IPv4 checksum", what);
	cr_expect_arr_eq(s->frame + 26, f + 26, sum - 26, "%s: up to the L4 checksum", what);
	cr_expect_arr_eq(s->frame + sum + 2, f + sum + 2, len - sum - 2, "%s: the rest", what);
	if (csum) {
		cr_expect(raw_ip4_ok(s->frame), "%s: IPv4 header checksum", what);
		cr_expect(raw_l4_ok(s->frame, len), "%s: L4 checksum", what);
		cr_expect(s->wc_flags & IBV_WC_IP_CSUM_OK, "%s: IBV_WC_IP_CSUM_OK", what);
	} else {
		cr_expect_arr_eq(s->frame + 24, f + 24, 2, "%s: as sent", what);
		cr_expect_arr_eq(s->frame + sum, f + sum, 2, "%s: as sent", what);
		cr_expect_eq(s->wc_flags & IBV_WC_IP_CSUM_OK, 0, "%s: no checksum flag", what);
	}
}

/* The TSO segments of frame f (54-byte header): each the header with IPv4 length and id,
 * TCP sequence number and (but on the last) FIN/PSH fixed up, then its part of the payload. */
static void expect_segments(const struct seen *s, const uint8_t *f, uint32_t payload, uint32_t mss, const char *what)
{
	uint32_t nseg = (payload + mss - 1) / mss;
	uint8_t want[SLOT];

	for (uint32_t i = 0; i < nseg; i++) {
		uint32_t n = i + 1 < nseg ? mss : payload - i * mss;
		char name[64];

		memcpy(want, f, 54);
		memcpy(want + 54, f + 54 + i * mss, n);
		want[16] = (uint8_t)((40 + n) >> 8), want[17] = (uint8_t)(40 + n);
		want[18] = 0x12, want[19] = (uint8_t)(0x34 + i);
		want[38] = 0x10, want[39] = (uint8_t)((i * mss) >> 16);
		want[40] = (uint8_t)((i * mss) >> 8), want[41] = (uint8_t)(i * mss);
		if (i + 1 < nseg)
			want[47] &= (uint8_t)~0x09;
		snprintf(name, sizeof(name), "%s segment %u of %u", what, i + 1, nseg);
		expect_frame(&s[i], want, 54 + n, true, name);
	}
}

Test(sim_xproc_raw, frames_steered_in_another_process)
{
	struct seen got[24];
	struct sender a;
	int from[2], n = 0, status;
	char ready;
	pid_t pid;

	if (geteuid() != 0)
		cr_skip_test("RAW_PACKET QPs need CAP_NET_RAW: run as root");
	cr_assert_eq(pipe(from), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(from[0]);
		_exit(receiver_main(from[1]));
	}
	close(from[1]);
	cr_assert_eq(read(from[0], &ready, 1), 1, "B did not come up");
	sender_up(&a);

	uint8_t *buf = a.e.buf;
	uint8_t *u1 = buf, *u2 = buf + 2048, *t1 = buf + 4096, *t2 = buf + 8192;
	uint8_t *x1 = buf + 12288, *x2 = buf + 14336, *x3 = buf + 16384, *last = buf + 18432;
	uint32_t lu1 = raw_frame(u1, mac_b, mac_a, 4, 17, UDP_PORT, 100);
	uint32_t lu2 = raw_frame(u2, mac_b, mac_a, 4, 17, UDP_PORT, 1400);
	uint32_t lt1 = raw_frame(t1, mac_b, mac_a, 4, 6, TCP_PORT, 350);
	uint32_t lt2 = raw_frame(t2, mac_b, mac_a, 4, 6, TCP_PORT, 1000);
	uint32_t lx1 = raw_frame(x1, mac_b, mac_a, 4, 17, 9, 60);	/* B's MAC, no rule's port */
	uint32_t lx2 = raw_frame(x2, mac_x, mac_a, 4, 17, UDP_PORT, 60); /* nobody's MAC */
	uint32_t lx3 = raw_frame(x3, mac_b, mac_a, 4, 6, 81, 300);	/* TSO to no rule's port */
	uint32_t llast = raw_frame(last, mac_b, mac_a, 4, 17, UDP_PORT, LAST_PAYLOAD);
	struct ibv_sge s;

	/* dropped by B: its sends complete all the same */
	mlx5_send(&a, 1, x1, lx1, IBV_SEND_IP_CSUM, 0, 0);
	s = (struct ibv_sge){ (uintptr_t)x2, lx2, a.e.mr->lkey };
	cr_assert_eq(fv_send(&a.raw, 2, FV_SIGNALED | FV_IP_CSUM, &s), 0);
	fv_ring(&a.raw);
	sent(&a, true, 2, IBV_WC_SEND);
	/* fastverbs: a UDP frame with checksum offload, a TSO burst of 4 */
	s = (struct ibv_sge){ (uintptr_t)u1, lu1, a.e.mr->lkey };
	cr_assert_eq(fv_send(&a.raw, 3, FV_SIGNALED | FV_IP_CSUM, &s), 0);
	fv_ring(&a.raw);
	sent(&a, true, 3, IBV_WC_SEND);
	s = (struct ibv_sge){ (uintptr_t)(t1 + 54), lt1 - 54, a.e.mr->lkey };
	cr_assert_eq(fv_send_tso(&a.raw, 4, FV_SIGNALED | FV_IP_CSUM, t1, 54, 100, &s), 0);
	fv_ring(&a.raw);
	sent(&a, true, 4, IBV_WC_TSO);
	/* libmlx5: a full-MTU UDP frame with checksum offload, a TSO burst of 3 (MSS 400),
	 * a TSO burst nobody takes */
	mlx5_send(&a, 5, u2, lu2, IBV_SEND_IP_CSUM, 0, 0);
	mlx5_send(&a, 6, t2, lt2, IBV_SEND_IP_CSUM, 54, 400);
	mlx5_send(&a, 7, x3, lx3, IBV_SEND_IP_CSUM, 54, 100);
	/* last: no offload, the checksums stay 0 */
	s = (struct ibv_sge){ (uintptr_t)last, llast, a.e.mr->lkey };
	cr_assert_eq(fv_send(&a.raw, 8, FV_SIGNALED, &s), 0);
	fv_ring(&a.raw);
	sent(&a, true, 8, IBV_WC_SEND);

	for (;;) {
		struct seen s1;
		size_t at = 0;

		while (at < sizeof(s1)) {
			ssize_t r = read(from[0], (uint8_t *)&s1 + at, sizeof(s1) - at);

			if (r <= 0)
				waitpid(pid, &status, 0);
			cr_assert_gt(r, 0, "B ended early after %d frames", n);
			at += (size_t)r;
		}
		if (!s1.byte_len && !s1.status)
			break;
		cr_assert_lt(n, 24, "B received more than it should");
		got[n++] = s1;
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "B's status %d", status);
	cr_assert_eq(n, 1 + 4 + 1 + 3 + 1, "frames B received: %d", n);
	expect_frame(&got[0], u1, lu1, true, "fv_send UDP");
	expect_segments(&got[1], t1, 350, 100, "fv_send_tso");
	expect_frame(&got[5], u2, lu2, true, "libmlx5 UDP");
	expect_segments(&got[6], t2, 1000, 400, "libmlx5 TSO");
	expect_frame(&got[9], last, llast, false, "last");
	sender_down(&a);
	close(from[0]);
}
