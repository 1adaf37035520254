/*
 * raw_eth: raw Ethernet on the fastverbs typed path. One RAW_PACKET QP sends three UDP frames
 * with checksum offload (FV_IP_CSUM: the NIC fills in the IPv4 header and UDP checksums) and
 * one TSO burst (fv_send_tso: a TCP header and 4000 bytes the NIC cuts into 1000-byte
 * segments, each with its own IP id, sequence number and checksums); a second RAW_PACKET QP
 * receives them through a steering rule on the destination MAC. Every frame that arrives is
 * printed and checked here: its checksums recomputed, its payload compared.
 *
 *   raw_eth [-d device]
 *
 * Needs a port whose link layer is Ethernet and, as the kernel demands for RAW_PACKET QPs,
 * root or CAP_NET_RAW. On the software device: FVSIM_LINK=eth sim/fvsim-run raw_eth.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <fastverbs/fastverbs.h>
#include "common.h"

#define NUDP     3
#define UDP_LEN  100	/* UDP payload bytes */
#define TSO_LEN  4000	/* TCP payload bytes of the burst */
#define MSS      1000
#define HDR      54	/* Ethernet + IPv4 + TCP */
#define SLOT     2048	/* receive buffer per frame */
#define NRECV    16

static const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0, 0xaa }, smac[6] = { 0x02, 0, 0, 0, 0, 0x01 };

/* A RAW_PACKET QP on the device's port, in RTS, with its own CQ; TSO headers up to HDR bytes. */
static struct ibv_qp *raw_qp(struct setup_dev *d, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = NRECV, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
		.pd = d->pd, .max_tso_header = HDR,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(d->ctx, &a);
	const char *what;
	int err;

	if (!qp)
		ex_die("ibv_create_qp_ex(RAW_PACKET) (root or CAP_NET_RAW needed)", errno);
	if ((err = setup_raw_ready(qp, d->port_num, &what)))
		ex_fail("ibv_modify_qp(%s): %s", what, strerror(err));
	return qp;
}

/* Steer frames for dmac on the port to qp: the rule's attribute, its one spec right after. */
static struct ibv_flow *steer(struct setup_dev *d, struct ibv_qp *qp)
{
	uint64_t mem[(sizeof(struct ibv_flow_attr) + sizeof(struct ibv_flow_spec_eth)) / 8 + 1] = { 0 };
	struct ibv_flow_attr *attr = (struct ibv_flow_attr *)mem;
	struct ibv_flow_spec_eth eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(eth) };
	struct ibv_flow *f;

	attr->type = IBV_FLOW_ATTR_NORMAL;
	attr->size = sizeof(*attr) + sizeof(eth);
	attr->num_of_specs = 1;
	attr->port = d->port_num;
	memcpy(eth.val.dst_mac, dmac, 6);
	memset(eth.mask.dst_mac, 0xff, 6);
	memcpy(attr + 1, &eth, sizeof(eth));
	f = ibv_create_flow(qp, attr);
	if (!f)
		ex_die("ibv_create_flow", errno);
	return f;
}

/* A frame at f: Ethernet, IPv4 (id), UDP (proto 17) or TCP (6) to port dport, payload bytes
 * (byte i = seed + i), checksum fields 0 (the NIC's job). Returns its length. */
static uint32_t frame(uint8_t *f, uint8_t proto, uint16_t id, uint16_t dport, uint32_t payload, uint8_t seed)
{
	uint32_t l4h = proto == 6 ? 20 : 8, len = 34 + l4h + payload;

	memset(f, 0, 34 + l4h);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = (uint8_t)((len - 14) >> 8), f[17] = (uint8_t)(len - 14);
	f[18] = (uint8_t)(id >> 8), f[19] = (uint8_t)id;
	f[22] = 64, f[23] = proto;
	f[26] = 192, f[27] = 168, f[29] = 1, f[30] = 192, f[31] = 168, f[33] = 2;
	f[34] = 0x30, f[35] = 0x39, f[36] = (uint8_t)(dport >> 8), f[37] = (uint8_t)dport;
	if (proto == 6) {
		f[38] = 0x10;			/* sequence number 0x10000000 */
		f[46] = 0x50, f[47] = 0x18;	/* 5 words, PSH | ACK */
		f[48] = 0xff, f[49] = 0xff;
	} else {
		f[38] = (uint8_t)((8 + payload) >> 8), f[39] = (uint8_t)(8 + payload);
	}
	for (uint32_t i = 0; i < payload; i++)
		f[34 + l4h + i] = (uint8_t)(seed + i);
	return len;
}

/* The ones' complement sum of n bytes onto acc. */
static uint32_t sum16(uint32_t acc, const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		acc += i & 1 ? p[i] : (uint32_t)p[i] << 8;
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return acc;
}

/* Whether the IPv4 header and TCP/UDP checksums of the frame f (len bytes) verify. */
static int checksums_ok(const uint8_t *f, uint32_t len)
{
	uint32_t l4 = len - 34;

	return sum16(0, f + 14, 20) == 0xffff &&
	       sum16(sum16(0, f + 26, 8) + f[23] + l4, f + 34, l4) == 0xffff;
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	struct setup_dev *d;
	struct ibv_cq *txcq, *rxcq;
	struct ibv_qp *txqp, *rxqp;
	struct ibv_mr *mr;
	struct ibv_flow *fl;
	struct fv_raw tx, rx;
	struct fv_cq txc, rxc;
	uint8_t *buf;
	uint32_t ulen[NUDP], tlen, tcp_got = 0, nseg = 0;
	int c, err;

	while ((c = getopt(argc, argv, "d:")) != -1) {
		if (c != 'd')
			ex_fail("usage: raw_eth [-d device]");
		dev = optarg;
	}
	d = ex_open(dev);
	if (d->port.link_layer != IBV_LINK_LAYER_ETHERNET)
		ex_fail("port %u is not Ethernet (on the software device: FVSIM_LINK=eth)", d->port_num);
	if (posix_memalign((void **)&buf, 4096, EX_BUF_SIZE))
		ex_fail("out of memory");
	memset(buf, 0, EX_BUF_SIZE);
	mr = ibv_reg_mr(d->pd, buf, EX_BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	txcq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	rxcq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	if (!mr || !txcq || !rxcq)
		ex_die("ibv_reg_mr / ibv_create_cq", errno);
	txqp = raw_qp(d, txcq);
	rxqp = raw_qp(d, rxcq);
	fl = steer(d, rxqp);

	/* Slow path, once: the QPs and CQs taken over. */
	if ((err = fv_raw_init(&tx, txqp, HDR)) || (err = fv_raw_init(&rx, rxqp, 0)) ||
	    (err = fv_cq_init(&txc, txcq)) || (err = fv_cq_init(&rxc, rxcq)))
		ex_die("fv_raw_init / fv_cq_init", err);
	if (!tx.qp.raw_csum || !tx.qp.max_tso)
		ex_fail("the device offers no checksum offload or no TSO on RAW_PACKET QPs");

	/* Receive buffers: the second half of buf. */
	for (int i = 0; i < NRECV; i++) {
		struct ibv_sge s = { (uintptr_t)(buf + 32768 + i * SLOT), SLOT, mr->lkey };
		struct ibv_recv_wr w = { .wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1 }, *bad;

		if ((err = fv_post_recv(&rx.qp, &w, &bad)))
			ex_die("fv_post_recv", err);
	}

	/* Three UDP frames, one doorbell; then the TSO burst. */
	for (int i = 0; i < NUDP; i++) {
		uint8_t *f = buf + i * 256;
		struct ibv_sge s;

		ulen[i] = frame(f, 17, (uint16_t)(0x100 + i), 4791, UDP_LEN, (uint8_t)(i * 50));
		s = (struct ibv_sge){ (uintptr_t)f, ulen[i], mr->lkey };
		if ((err = fv_send(&tx, (uint64_t)i, FV_IP_CSUM | (i == NUDP - 1 ? FV_SIGNALED : 0), &s)))
			ex_die("fv_send", err);
	}
	fv_ring(&tx);
	uint8_t *t = buf + 1024;

	tlen = frame(t, 6, 0x200, 80, TSO_LEN, 7);
	struct ibv_sge ts = { (uintptr_t)(t + HDR), tlen - HDR, mr->lkey };

	if ((err = fv_send_tso(&tx, 10, FV_SIGNALED | FV_IP_CSUM, t, HDR, MSS, &ts)))
		ex_die("fv_send_tso", err);
	fv_ring(&tx);
	ex_wait_one(&txc);
	if (ex_wait_one(&txc).opcode != IBV_WC_TSO)
		ex_fail("the burst did not complete as TSO");

	/* What arrived: the UDP frames as sent but for their checksums, then the segments. */
	for (int i = 0; i < NUDP + (TSO_LEN + MSS - 1) / MSS; i++) {
		struct ibv_wc wc = ex_wait_one(&rxc);
		const uint8_t *f = buf + 32768 + wc.wr_id * SLOT;
		int udp = f[23] == 17, ok = checksums_ok(f, wc.byte_len);
		uint16_t id = (uint16_t)(f[18] << 8 | f[19]);

		if (udp) {
			const uint8_t *sent = buf + (id - 0x100) * 256;

			printf("UDP frame %u bytes, IP id 0x%x, port %u, checksums %s%s\n", wc.byte_len, id,
			       f[36] << 8 | f[37], ok ? "good" : "BAD",
			       wc.wc_flags & IBV_WC_IP_CSUM_OK ? " (IBV_WC_IP_CSUM_OK)" : "");
			if (id - 0x100u >= NUDP || wc.byte_len != ulen[id - 0x100] ||
			    memcmp(f + 42, sent + 42, UDP_LEN))
				ex_fail("UDP frame %d is not what was sent", i);
		} else {
			uint32_t seq = (uint32_t)f[38] << 24 | f[39] << 16 | f[40] << 8 | f[41];
			uint32_t n = wc.byte_len - HDR, off = seq - 0x10000000u;

			printf("TCP segment %u bytes, IP id 0x%x, seq 0x%x, flags 0x%02x, checksums %s%s\n",
			       wc.byte_len, id, seq, f[47], ok ? "good" : "BAD",
			       wc.wc_flags & IBV_WC_IP_CSUM_OK ? " (IBV_WC_IP_CSUM_OK)" : "");
			if (off + n > TSO_LEN || memcmp(f + HDR, t + HDR + off, n) || id != 0x200 + nseg)
				ex_fail("TCP segment %u is not the burst's", nseg);
			tcp_got += n;
			nseg++;
		}
		if (!ok || !(wc.wc_flags & IBV_WC_IP_CSUM_OK))
			ex_fail("frame %d: checksums not good", i);
	}
	if (tcp_got != TSO_LEN)
		ex_fail("the burst's %u bytes came as %u", TSO_LEN, tcp_got);
	printf("raw_eth: %d UDP frames and a TSO burst of %d bytes in %u segments of at most %d arrived, "
	       "checksums good\n", NUDP, TSO_LEN, nseg, MSS);

	ibv_destroy_flow(fl);
	fv_qp_cleanup(&tx.qp);
	fv_qp_cleanup(&rx.qp);
	fv_cq_cleanup(&txc);
	fv_cq_cleanup(&rxc);
	ibv_destroy_qp(txqp);
	ibv_destroy_qp(rxqp);
	ibv_destroy_cq(txcq);
	ibv_destroy_cq(rxcq);
	ibv_dereg_mr(mr);
	free(buf);
	ex_close(d);
	return 0;
}
