/* Raw Ethernet test helpers shared by the suites that send frames (device/raw.c, e2e/raw.c):
 * steering rules, UDP/TCP frames, checksum checks computed here, independently of the device. */
#ifndef RAW_FRAME_H
#define RAW_FRAME_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <criterion/criterion.h>
#include <infiniband/verbs.h>

/* A steering rule: the attribute, then each spec right after the one before (the layout
 * libibverbs walks by the specs' sizes). */
static inline struct ibv_flow *raw_flow(struct ibv_qp *qp, enum ibv_flow_attr_type type, uint16_t prio,
					const uint8_t *dmac, uint16_t ethertype, uint32_t dst_ip,
					enum ibv_flow_spec_type l4, uint16_t dport)
{
	uint64_t mem[64] = { 0 };
	struct ibv_flow_attr *attr = (struct ibv_flow_attr *)mem;
	struct ibv_flow_spec_eth eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(eth) };
	struct ibv_flow_spec_ipv4 ip4 = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(ip4) };
	struct ibv_flow_spec_tcp_udp l4s = { .type = l4, .size = sizeof(l4s) };
	uint8_t *at = (uint8_t *)(attr + 1);
	struct ibv_flow *f;

	attr->type = type;
	attr->size = sizeof(*attr);
	attr->priority = prio;
	attr->port = 1;
	if (dmac || ethertype) {
		if (dmac) {
			memcpy(eth.val.dst_mac, dmac, 6);
			memset(eth.mask.dst_mac, 0xff, 6);
		}
		eth.val.ether_type = htobe16(ethertype);
		eth.mask.ether_type = ethertype ? 0xffff : 0;
		memcpy(at, &eth, sizeof(eth));
		at += sizeof(eth);
		attr->num_of_specs++;
	}
	if (dst_ip) {
		ip4.val.dst_ip = htobe32(dst_ip);
		ip4.mask.dst_ip = 0xffffffff;
		memcpy(at, &ip4, sizeof(ip4));
		at += sizeof(ip4);
		attr->num_of_specs++;
	}
	if (l4) {
		l4s.val.dst_port = htobe16(dport);
		l4s.mask.dst_port = 0xffff;
		memcpy(at, &l4s, sizeof(l4s));
		at += sizeof(l4s);
		attr->num_of_specs++;
	}
	attr->size = (uint16_t)(at - (uint8_t *)attr);
	f = ibv_create_flow(qp, attr);
	cr_assert(f, "ibv_create_flow: %s", strerror(errno));
	return f;
}

/* Frames: Ethernet, then IPv4 (20 bytes) or IPv6 (40), then UDP (8) or TCP (20), then
 * payload bytes p[i] = i * 3 + 1. Checksum fields are left 0. Returns the length. */
static inline uint32_t raw_frame(uint8_t *f, const uint8_t *dmac, const uint8_t *smac, int ipv,
				 uint8_t proto, uint16_t dport, uint32_t payload)
{
	uint32_t l3 = 14, l4 = l3 + (ipv == 4 ? 20 : 40), l4h = proto == 6 ? 20 : 8;
	uint32_t len = l4 + l4h + payload;

	memset(f, 0, len);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = ipv == 4 ? 0x08 : 0x86;
	f[13] = ipv == 4 ? 0x00 : 0xdd;
	if (ipv == 4) {
		f[l3] = 0x45;
		f[l3 + 2] = (uint8_t)((len - l3) >> 8);
		f[l3 + 3] = (uint8_t)(len - l3);
		f[l3 + 4] = 0x12; /* id 0x1234 */
		f[l3 + 5] = 0x34;
		f[l3 + 8] = 64;
		f[l3 + 9] = proto;
		memcpy(f + l3 + 12, (uint8_t[]){ 10, 0, 0, 1, 10, 0, 0, 2 }, 8);
	} else {
		f[l3] = 0x60;
		f[l3 + 4] = (uint8_t)((len - l4) >> 8);
		f[l3 + 5] = (uint8_t)(len - l4);
		f[l3 + 6] = proto;
		f[l3 + 7] = 64;
		f[l3 + 8] = 0xfd;
		f[l3 + 23] = 1;
		f[l3 + 24] = 0xfd;
		f[l3 + 39] = 2;
	}
	f[l4] = 0x30; /* source port 0x3039 */
	f[l4 + 1] = 0x39;
	f[l4 + 2] = (uint8_t)(dport >> 8);
	f[l4 + 3] = (uint8_t)dport;
	if (proto == 6) {
		f[l4 + 4] = 0x10; /* sequence number 0x10000000 */
		f[l4 + 12] = 0x50; /* data offset 5 */
		f[l4 + 13] = 0x19; /* ACK | PSH | FIN */
		f[l4 + 15] = 0xff; /* window */
	} else {
		f[l4 + 4] = (uint8_t)((l4h + payload) >> 8);
		f[l4 + 5] = (uint8_t)(l4h + payload);
	}
	for (uint32_t i = 0; i < payload; i++)
		f[l4 + l4h + i] = (uint8_t)(i * 3 + 1);
	return len;
}

static inline uint32_t raw_sum16(uint32_t acc, const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		acc += i & 1 ? p[i] : (uint32_t)p[i] << 8;
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return acc;
}

/* Whether the IPv4 header and the TCP/UDP checksum of a frame made by raw_frame() verify. */
static inline bool raw_ip4_ok(const uint8_t *f)
{
	return raw_sum16(0, f + 14, 20) == 0xffff;
}

static inline bool raw_l4_ok(const uint8_t *f, uint32_t len)
{
	int v6 = f[12] == 0x86;
	uint32_t l4 = v6 ? 54 : 34, n = len - l4, acc;

	acc = v6 ? raw_sum16(0, f + 22, 32) : raw_sum16(0, f + 26, 8);
	acc = raw_sum16(acc + f[v6 ? 20 : 23] + n, f + l4, n);
	return acc == 0xffff;
}

#endif
