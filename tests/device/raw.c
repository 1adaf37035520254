/* RAW_PACKET QPs on an Ethernet port (FVSIM_LINK=eth) through libmlx5: CAP_NET_RAW,
 * flow steering (MAC, EtherType, IPv4/IPv6, TCP/UDP ports, priorities, all-multicast and
 * promiscuous rules, destroy), checksum offload (IBV_SEND_IP_CSUM, IBV_WC_IP_CSUM_OK), TSO
 * (IBV_WR_TSO and ibv_wr_send_tso) and the refusals; on a device with an InfiniBand and
 * an Ethernet port, and one without Ethernet. Runs in step mode. The expected
 * checksums are computed here from the frames, independently of the device. */
#include <endian.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "raw-frame.h"
#include "sim-util.h"

#define BUF (1 << 16)
#define SLOT 2048 /* receive buffer per WQE */

static struct simt_dev d;
static struct ibv_cq *txcq;
static struct ibv_mr *mr;
static uint8_t *buf; /* [0, 32K): frames to send; [32K, 64K): receive slots */

static void setup(void)
{
	simt_sysfs(1, 1, "eth");
	simt_open(&d, 0);
	fvsim_set_step_mode(1);
	buf = simt_mem(&d, BUF, IBV_ACCESS_LOCAL_WRITE, &mr);
	txcq = simt_cq(&d, 64);
}

static void teardown(void)
{
	ibv_destroy_cq(txcq);
	ibv_dereg_mr(mr);
	free(buf);
	simt_close(&d);
}

TestSuite(sim_raw, .init = setup, .fini = teardown, .timeout = 60);

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0xaa };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0xbb };
static const uint8_t mac_src[6] = { 0x02, 0, 0, 0, 0, 0x01 };

/* RESET -> INIT (port 1) -> RTR -> RTS, receive and send on cq. */
static struct ibv_qp *raw_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 2,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = d.pd, .max_tso_header = 128,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO,
	};
	const char *what;
	struct ibv_qp *qp = ibv_create_qp_ex(d.ctx, &a);

	cr_assert(qp, "ibv_create_qp_ex(RAW_PACKET): %s", strerror(errno));
	cr_assert_eq(setup_raw_ready(qp, 1, &what), 0, "ibv_modify_qp(%s)", what);
	return qp;
}

/* A receiving QP with its own CQ and n receive WQEs in slots from slot0 on. */
struct rx {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int slot0;
};

static void rx_open(struct rx *r, int slot0, int n)
{
	r->cq = simt_cq(&d, 32);
	r->qp = raw_qp(r->cq);
	r->slot0 = slot0;
	for (int i = 0; i < n; i++)
		simt_post_recv(r->qp, (uint64_t)(slot0 + i), buf + 32768 + (slot0 + i) * SLOT, SLOT,
			       mr->lkey);
}

static void rx_close(struct rx *r)
{
	cr_assert_eq(ibv_destroy_qp(r->qp), 0);
	ibv_destroy_cq(r->cq);
}

static uint8_t *slot(uint64_t i)
{
	return buf + 32768 + i * SLOT;
}

/* raw_frame from this suite's source MAC. */
static uint32_t frame(uint8_t *f, const uint8_t *dmac, int ipv, uint8_t proto, uint16_t dport,
		      uint32_t payload)
{
	return raw_frame(f, dmac, mac_src, ipv, proto, dport, payload);
}

static void send_frame(struct ibv_qp *qp, uint64_t wr_id, const uint8_t *f, uint32_t len,
		       int flags)
{
	struct ibv_sge sge = { (uintptr_t)f, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | flags }, *bad;

	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0);
}

/* Sends one frame from tx and expects its successful send completion. */
static void send_ok(struct ibv_qp *tx, const uint8_t *f, uint32_t len, int flags)
{
	struct ibv_wc wc;

	send_frame(tx, 77, f, len, flags);
	cr_assert_eq(simt_poll(txcq, &wc, 1), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_SEND);
}

/* Expects exactly one received frame on r equal to f (len bytes); returns its wc_flags. */
static unsigned expect_frame(struct rx *r, const uint8_t *f, uint32_t len)
{
	struct ibv_wc wc;

	cr_assert_eq(simt_poll(r->cq, &wc, 1), 1, "frame not received");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_RECV);
	cr_expect_eq(wc.byte_len, len);
	cr_expect_eq(wc.qp_num, r->qp->qp_num);
	if (f)
		cr_expect_arr_eq(slot(wc.wr_id), f, len);
	simt_expect_empty(r->cq);
	return wc.wc_flags;
}

Test(sim_raw, create_needs_cap_net_raw)
{
	struct ibv_qp *qp = raw_qp(txcq);
	int status;
	pid_t pid;

	cr_expect_eq(qp->qp_type, IBV_QPT_RAW_PACKET);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct c[2];
		struct ibv_qp_init_attr a = { .send_cq = txcq, .recv_cq = txcq,
					      .cap = { 1, 1, 1, 1, 0 },
					      .qp_type = IBV_QPT_RAW_PACKET };

		if (syscall(SYS_capget, &h, c))
			_exit(2);
		c[0].effective &= ~(1u << CAP_NET_RAW);
		if (syscall(SYS_capset, &h, c))
			_exit(3);
		errno = 0;
		_exit(ibv_create_qp(d.pd, &a) ? 4 : errno == EPERM ? 0 : 5);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "without CAP_NET_RAW: status %d (want EPERM)", status);
}

Test(sim_raw, steering_by_mac_drops_the_rest)
{
	struct rx a, b;
	struct ibv_flow *fa, *fb;
	uint8_t *f = buf;
	uint32_t len;
	struct ibv_qp *tx = raw_qp(txcq);

	rx_open(&a, 0, 4);
	rx_open(&b, 4, 4);
	fa = raw_flow(a.qp, IBV_FLOW_ATTR_NORMAL, 0, mac_a, 0, 0, 0, 0);
	fb = raw_flow(b.qp, IBV_FLOW_ATTR_NORMAL, 0, mac_b, 0, 0, 0, 0);
	len = frame(f, mac_a, 4, 17, 4791, 32);
	send_ok(tx, f, len, 0);
	expect_frame(&a, f, len);
	simt_expect_empty(b.cq);
	len = frame(f, mac_b, 6, 6, 80, 100);
	send_ok(tx, f, len, 0);
	expect_frame(&b, f, len);
	simt_expect_empty(a.cq);
	/* Nobody steers this MAC: the send succeeds, the frame is gone. */
	len = frame(f, (const uint8_t[]){ 0x02, 0, 0, 0, 0, 0xcc }, 4, 17, 1, 10);
	send_ok(tx, f, len, 0);
	simt_expect_empty(a.cq);
	simt_expect_empty(b.cq);
	/* A destroyed rule steers nothing more; a QP with rules cannot go. */
	cr_expect_eq(ibv_destroy_qp(a.qp), EBUSY);
	cr_assert_eq(ibv_destroy_flow(fa), 0);
	len = frame(f, mac_a, 4, 17, 4791, 32);
	send_ok(tx, f, len, 0);
	simt_expect_empty(a.cq);
	cr_assert_eq(ibv_destroy_flow(fb), 0);
	rx_close(&a);
	rx_close(&b);
	ibv_destroy_qp(tx);
}

Test(sim_raw, steering_by_l3_l4_priority_and_defaults)
{
	struct rx udp, tcp6, any, mcast, l2, l3;
	struct ibv_flow *fl[6];
	uint8_t *f = buf;
	static const uint8_t group[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x07 };
	/* Each frame and the one QP that must get it. */
	const struct {
		const uint8_t *dmac;
		int ipv;
		uint8_t proto;
		uint16_t port;
		struct rx *to;
	} cases[] = {
		{ mac_a, 4, 17, 4791, &udp },
		{ mac_a, 6, 6, 80, &tcp6 },
		/* Another UDP port: no rule of its own, the promiscuous one takes it. */
		{ mac_a, 4, 17, 4792, &any },
		/* Multicast nobody steers: the all-multicast rule, not the promiscuous one. */
		{ group, 4, 17, 9, &mcast },
		/* IPv4 to mac_b: the better-priority rule only; other traffic to mac_b. */
		{ mac_b, 4, 6, 1, &l3 },
		{ mac_b, 6, 6, 1, &l2 },
	};
	uint32_t len;
	struct ibv_qp *tx = raw_qp(txcq);

	rx_open(&udp, 0, 2);
	rx_open(&tcp6, 2, 2);
	rx_open(&any, 4, 2);
	rx_open(&mcast, 6, 2);
	rx_open(&l2, 8, 2);
	rx_open(&l3, 10, 2);
	fl[0] = raw_flow(udp.qp, IBV_FLOW_ATTR_NORMAL, 0, mac_a, 0x0800, 0x0a000002,
		     IBV_FLOW_SPEC_UDP, 4791);
	fl[1] = raw_flow(tcp6.qp, IBV_FLOW_ATTR_NORMAL, 0, NULL, 0x86dd, 0, IBV_FLOW_SPEC_TCP, 80);
	fl[2] = raw_flow(any.qp, IBV_FLOW_ATTR_ALL_DEFAULT, 0, NULL, 0, 0, 0, 0);
	fl[3] = raw_flow(mcast.qp, IBV_FLOW_ATTR_MC_DEFAULT, 0, NULL, 0, 0, 0, 0);
	/* Same MAC twice: the IPv4 rule has the better (lower) priority. */
	fl[4] = raw_flow(l2.qp, IBV_FLOW_ATTR_NORMAL, 1, mac_b, 0, 0, 0, 0);
	fl[5] = raw_flow(l3.qp, IBV_FLOW_ATTR_NORMAL, 0, mac_b, 0x0800, 0, 0, 0);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = frame(f, cases[i].dmac, cases[i].ipv, cases[i].proto, cases[i].port, 20);
		send_ok(tx, f, len, 0);
		expect_frame(cases[i].to, f, len);
	}
	simt_expect_empty(udp.cq);
	simt_expect_empty(tcp6.cq);
	simt_expect_empty(any.cq);
	simt_expect_empty(mcast.cq);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(ibv_destroy_flow(fl[i]), 0);
	rx_close(&udp);
	rx_close(&tcp6);
	rx_close(&any);
	rx_close(&mcast);
	rx_close(&l2);
	rx_close(&l3);
	ibv_destroy_qp(tx);
}

Test(sim_raw, flow_needs_a_raw_qp)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = txcq, .rcq = txcq,
				   .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
				   .max_recv_sge = 1 };
	struct ibv_qp *rc = simt_qp(&d, &cfg);
	struct ibv_flow_attr attr = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(attr),
				      .port = 1 };

	errno = 0;
	cr_expect_null(ibv_create_flow(rc, &attr));
	cr_expect_eq(errno, EINVAL);
	ibv_destroy_qp(rc);
}

Test(sim_raw, checksum_offload)
{
	struct rx r;
	struct ibv_flow *fl;
	uint8_t *f = buf;
	uint32_t len;
	unsigned flags;
	struct ibv_qp *tx = raw_qp(txcq);

	rx_open(&r, 0, 8);
	fl = raw_flow(r.qp, IBV_FLOW_ATTR_NORMAL, 0, mac_a, 0, 0, 0, 0);
	for (int proto = 6; proto <= 17; proto += 11) {
		len = frame(f, mac_a, 4, (uint8_t)proto, 7, 333);
		send_ok(tx, f, len, IBV_SEND_IP_CSUM);
		flags = expect_frame(&r, NULL, len);
		cr_expect(flags & IBV_WC_IP_CSUM_OK, "proto %d: checksums computed", proto);
		cr_expect(raw_ip4_ok(slot(r.slot0)), "proto %d: IPv4 header checksum", proto);
		cr_expect(raw_l4_ok(slot(r.slot0), len), "proto %d: L4 checksum", proto);
		/* Apart from the checksum fields the frame is what was sent. */
		cr_expect_arr_eq(slot(r.slot0) + 34 + (proto == 6 ? 20 : 8),
				 f + 34 + (proto == 6 ? 20 : 8), 333);
		cr_expect_arr_eq(slot(r.slot0), f, 24);
		r.slot0++;
	}
	/* Without the flag the zero checksums stay and are reported bad. */
	len = frame(f, mac_a, 4, 17, 7, 50);
	f[40] = 0x12; /* a wrong, non-zero UDP checksum */
	send_ok(tx, f, len, 0);
	flags = expect_frame(&r, f, len);
	cr_expect(!(flags & IBV_WC_IP_CSUM_OK));
	cr_assert_eq(ibv_destroy_flow(fl), 0);
	rx_close(&r);
	ibv_destroy_qp(tx);
}

/* The segments of a TSO send arrived in slots from r->slot0 on: each a header with the
 * fixups and its share of the payload, checksums valid. */
static void expect_segments(struct rx *r, const uint8_t *f, uint32_t hdr, uint32_t payload,
			    uint32_t mss, int ipv)
{
	uint32_t nseg = (payload + mss - 1) / mss, l4 = ipv == 4 ? 34 : 54;
	struct ibv_wc wc[8];

	cr_assert_eq(simt_poll(r->cq, wc, (int)nseg), (int)nseg);
	simt_expect_empty(r->cq);
	for (uint32_t i = 0; i < nseg; i++) {
		uint32_t n = i + 1 < nseg ? mss : payload - i * mss;
		const uint8_t *s = slot(wc[i].wr_id);
		uint32_t seq = 0x10000000u + i * mss;

		cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
		cr_expect_eq(wc[i].byte_len, hdr + n, "segment %u", i);
		cr_expect_arr_eq(s, f, 14);
		if (ipv == 4) {
			cr_expect_eq((uint32_t)(s[16] << 8 | s[17]), hdr - 14 + n, "IPv4 total length");
			cr_expect_eq((uint32_t)(s[18] << 8 | s[19]), 0x1234 + i, "IP id");
			cr_expect(raw_ip4_ok(s));
			cr_expect(wc[i].wc_flags & IBV_WC_IP_CSUM_OK);
		} else {
			cr_expect_eq((uint32_t)(s[18] << 8 | s[19]), hdr - 54 + n, "IPv6 payload length");
		}
		cr_expect_eq((uint32_t)s[l4 + 4] << 24 | s[l4 + 5] << 16 | s[l4 + 6] << 8 |
				     s[l4 + 7], seq, "sequence number");
		cr_expect_eq(s[l4 + 13], i + 1 < nseg ? 0x10u : 0x19u, "FIN/PSH only on the last");
		cr_expect(raw_l4_ok(s, hdr + n), "TCP checksum of segment %u", i);
		cr_expect_arr_eq(s + hdr, f + hdr + i * mss, n);
	}
}

Test(sim_raw, tso_post_send)
{
	struct rx r;
	struct ibv_flow *fl;
	uint8_t *f = buf;
	uint32_t len = frame(f, mac_a, 4, 6, 80, 350), hdr = 54;
	struct ibv_sge sge = { (uintptr_t)(f + hdr), len - hdr, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_TSO, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	struct ibv_qp *tx = raw_qp(txcq);

	rx_open(&r, 0, 8);
	fl = raw_flow(r.qp, IBV_FLOW_ATTR_NORMAL, 0, mac_a, 0, 0, 0, 0);
	wr.tso.hdr = f;
	wr.tso.hdr_sz = (uint16_t)hdr;
	wr.tso.mss = 100;
	cr_assert_eq(ibv_post_send(tx, &wr, &bad), 0);
	cr_assert_eq(simt_poll(txcq, &wc, 1), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_TSO);
	expect_segments(&r, f, hdr, 350, 100, 4);
	cr_assert_eq(ibv_destroy_flow(fl), 0);
	rx_close(&r);
	ibv_destroy_qp(tx);
}

Test(sim_raw, tso_wr_api_ipv6)
{
	struct rx r;
	struct ibv_flow *fl;
	uint8_t *f = buf;
	uint32_t len = frame(f, mac_a, 6, 6, 80, 200), hdr = 74;
	struct ibv_qp *tx = raw_qp(txcq);
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(tx);
	struct ibv_wc wc;

	rx_open(&r, 0, 8);
	fl = raw_flow(r.qp, IBV_FLOW_ATTR_NORMAL, 0, NULL, 0x86dd, 0, IBV_FLOW_SPEC_TCP, 80);
	ibv_wr_start(qx);
	qx->wr_id = 6;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_tso(qx, f, (uint16_t)hdr, 64);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)(f + hdr), len - hdr);
	cr_assert_eq(ibv_wr_complete(qx), 0);
	cr_assert_eq(simt_poll(txcq, &wc, 1), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	expect_segments(&r, f, hdr, 200, 64, 6);
	cr_assert_eq(ibv_destroy_flow(fl), 0);
	rx_close(&r);
	ibv_destroy_qp(tx);
}

/* A raw WQE written by hand: control segment, an Ethernet segment inlining hdr bytes of
 * f, then one pointer segment with the rest. */
static void post_handmade(struct ibv_qp *qp, const uint8_t *f, uint32_t len, uint16_t hdr)
{
	struct mlx5dv_obj obj = { .qp = { .in = qp } };
	struct mlx5dv_qp dqp;
	uint8_t *w;
	uint32_t ds = 1 + (14 + hdr + 15) / 16 + 1, at = 16 + (14 + hdr + 15) / 16 * 16;

	obj.qp.out = &dqp;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), 0);
	w = dqp.sq.buf;
	memset(w, 0, 128);
	*(uint32_t *)w = htobe32(0x0a); /* SEND, WQE index 0 */
	*(uint32_t *)(w + 4) = htobe32(qp->qp_num << 8 | ds);
	w[11] = 0x08; /* CQ update */
	*(uint16_t *)(w + 16 + 12) = htobe16(hdr);
	memcpy(w + 16 + 14, f, hdr);
	*(uint32_t *)(w + at) = htobe32(len - hdr);
	*(uint32_t *)(w + at + 4) = htobe32(mr->lkey);
	*(uint64_t *)(w + at + 8) = htobe64((uintptr_t)(f + hdr));
	__atomic_thread_fence(__ATOMIC_RELEASE);
	dqp.dbrec[MLX5_SND_DBR] = htobe32(1);
}

static void expect_refused(struct ibv_qp *tx, enum ibv_wc_status st, struct rx *r)
{
	struct ibv_wc wc;

	cr_assert_eq(simt_poll(txcq, &wc, 1), 1);
	cr_expect_eq(wc.status, st, "%s", ibv_wc_status_str(wc.status));
	simt_expect_empty(r->cq);
	ibv_destroy_qp(tx);
}

Test(sim_raw, bad_input_completes_in_error_and_sends_nothing)
{
	struct rx r;
	struct ibv_flow *fl;
	uint8_t *f = buf;
	uint32_t len;
	struct ibv_qp *tx;

	rx_open(&r, 0, 8);
	fl = raw_flow(r.qp, IBV_FLOW_ATTR_NORMAL, 0, mac_a, 0, 0, 0, 0);
	/* A frame over the port MTU (1500 bytes of IP packet) without TSO. */
	tx = raw_qp(txcq);
	len = frame(f, mac_a, 4, 17, 7, 1500 - 28 + 1);
	send_frame(tx, 1, f, len, 0);
	expect_refused(tx, IBV_WC_LOC_LEN_ERR, &r);
	/* Exactly the MTU passes. */
	tx = raw_qp(txcq);
	len = frame(f, mac_a, 4, 17, 7, 1500 - 28);
	send_ok(tx, f, len, 0);
	expect_frame(&r, f, len);
	ibv_destroy_qp(tx);
	/* TSO with an MSS of 0. */
	{
		struct ibv_sge sge = { (uintptr_t)(f + 54), 100, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_TSO,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		tx = raw_qp(txcq);
		frame(f, mac_a, 4, 6, 80, 100);
		wr.tso.hdr = f;
		wr.tso.hdr_sz = 54;
		wr.tso.mss = 0;
		cr_assert_eq(ibv_post_send(tx, &wr, &bad), 0);
		expect_refused(tx, IBV_WC_LOC_QP_OP_ERR, &r);
	}
	/* Less inline header than the minimum inline mode (18 bytes). */
	tx = raw_qp(txcq);
	len = frame(f, mac_a, 4, 17, 7, 64);
	post_handmade(tx, f, len, 14);
	expect_refused(tx, IBV_WC_LOC_QP_OP_ERR, &r);
	/* The same WQE with 18 bytes inlined is fine. */
	tx = raw_qp(txcq);
	post_handmade(tx, f, len, 18);
	{
		struct ibv_wc wc;

		cr_assert_eq(simt_poll(txcq, &wc, 1), 1);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	}
	expect_frame(&r, f, len);
	ibv_destroy_qp(tx);
	cr_assert_eq(ibv_destroy_flow(fl), 0);
	rx_close(&r);
}

/* Port 1 InfiniBand, port 2 Ethernet: raw QPs and rules go on the Ethernet port only. */
static void mixed_setup(void)
{
	simt_sysfs(1, 2, "ib,eth");
	simt_open(&d, 0);
	txcq = simt_cq(&d, 8);
}

static void mixed_teardown(void)
{
	ibv_destroy_cq(txcq);
	simt_close(&d);
}

TestSuite(sim_raw_mixed, .init = mixed_setup, .fini = mixed_teardown, .timeout = 60);

Test(sim_raw_mixed, raw_qp_only_on_the_ethernet_port)
{
	struct ibv_qp_init_attr a = { .send_cq = txcq, .recv_cq = txcq, .cap = { 1, 1, 1, 1, 0 },
				      .qp_type = IBV_QPT_RAW_PACKET };
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_flow_attr fa = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(fa),
				    .port = 1 };
	struct ibv_qp *qp = ibv_create_qp(d.pd, &a);
	struct ibv_flow *f;

	cr_assert(qp, "ibv_create_qp: %s", strerror(errno));
	cr_expect_eq(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT), EINVAL, "IB port");
	m.port_num = 2;
	cr_assert_eq(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT), 0);
	errno = 0;
	cr_expect_null(ibv_create_flow(qp, &fa), "rule on the IB port");
	cr_expect_eq(errno, EINVAL);
	fa.port = 2;
	f = ibv_create_flow(qp, &fa);
	cr_assert(f, "ibv_create_flow: %s", strerror(errno));
	cr_assert_eq(ibv_destroy_flow(f), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

/* A device whose ports are all InfiniBand has no raw Ethernet. */
static void ib_setup(void)
{
	simt_sysfs(1, 1, NULL);
	simt_open(&d, 0);
	txcq = simt_cq(&d, 8);
}

TestSuite(sim_raw_ib, .init = ib_setup, .fini = mixed_teardown, .timeout = 60);

Test(sim_raw_ib, no_raw_qp_without_an_ethernet_port)
{
	struct ibv_qp_init_attr a = { .send_cq = txcq, .recv_cq = txcq, .cap = { 1, 1, 1, 1, 0 },
				      .qp_type = IBV_QPT_RAW_PACKET };

	errno = 0;
	cr_expect_null(ibv_create_qp(d.pd, &a));
	cr_expect_eq(errno, EOPNOTSUPP);
}
