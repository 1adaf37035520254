#include "csum.h"

#include "../common/be.h"

static uint32_t sum(uint32_t acc, const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i + 1 < n; i += 2)
		acc += ld_be16(p + i);
	if (n & 1)
		acc += (uint32_t)p[n - 1] << 8;
	return acc;
}

static uint16_t fold(uint32_t acc)
{
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

/* Bytes of the TCP/UDP segment as the IP header counts them, never past the frame. */
static uint32_t l4_len(const uint8_t *f, const struct sim_frame_info *fi)
{
	const uint8_t *ip = f + fi->l3;
	uint32_t room = fi->len - fi->l4;
	uint32_t ip_end = fi->l3 + (fi->ip == 4 ? ld_be16(ip + 2) : 40u + ld_be16(ip + 4));

	return ip_end < fi->l4 || ip_end - fi->l4 > room ? room : ip_end - fi->l4;
}

/* Sum over the pseudo header and the segment, checksum field included. */
static uint16_t l4_sum(const uint8_t *f, const struct sim_frame_info *fi)
{
	const uint8_t *ip = f + fi->l3;
	uint32_t n = l4_len(f, fi), acc;

	acc = fi->ip == 4 ? sum(0, ip + 12, 8) : sum(0, ip + 8, 32);
	acc += fi->proto + (n & 0xffff) + (n >> 16);
	return fold(sum(acc, f + fi->l4, n));
}

static uint32_t csum_off(const struct sim_frame_info *fi)
{
	return fi->l4 + (fi->proto == SIM_PROTO_TCP ? 16 : 6);
}

void sim_csum_fill(uint8_t *f, const struct sim_frame_info *fi, bool l3, bool l4)
{
	if (l3 && fi->ip == 4) {
		uint8_t *ip = f + fi->l3;

		st_be16(ip + 10, 0);
		st_be16(ip + 10, (uint16_t)~fold(sum(0, ip, (ip[0] & 0xfu) * 4)));
	}
	if (l4 && fi->l4) {
		uint16_t c;

		st_be16(f + csum_off(fi), 0);
		c = (uint16_t)~l4_sum(f, fi);
		/* UDP sends a computed 0 as all ones: 0 means "no checksum". */
		if (!c && fi->proto == SIM_PROTO_UDP)
			c = 0xffff;
		st_be16(f + csum_off(fi), c);
	}
}

bool sim_csum_l3_ok(const uint8_t *f, const struct sim_frame_info *fi)
{
	const uint8_t *ip = f + fi->l3;

	return fi->ip == 4 && fold(sum(0, ip, (ip[0] & 0xfu) * 4)) == 0xffff;
}

bool sim_csum_l4_ok(const uint8_t *f, const struct sim_frame_info *fi)
{
	if (!fi->l4)
		return false;
	if (fi->proto == SIM_PROTO_UDP && fi->ip == 4 && !ld_be16(f + csum_off(fi)))
		return true; /* IPv4 UDP without a checksum */
	return l4_sum(f, fi) == 0xffff;
}
