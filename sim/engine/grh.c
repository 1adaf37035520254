#include "grh.h"

#include <string.h>

#include "../common/be.h"

/* What follows the L3 header on the wire: UDP (v2 only), BTH, DETH, payload, ICRC. */
#define BTH_DETH_ICRC (12 + 8 + 4)
#define UDP_HDR 8

static bool ipv4_mapped(const uint8_t *gid)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid, prefix, 12);
}

static void ipv4_header(const uint8_t *sgid, const struct sim_av *av, uint64_t len,
			uint8_t *ip)
{
	uint32_t acc = 0;

	ip[0] = 0x45;
	ip[1] = av->tclass;
	st_be16(ip + 2, (uint16_t)(20 + UDP_HDR + BTH_DETH_ICRC + len));
	ip[6] = 0x40; /* don't fragment */
	ip[8] = av->hop_limit;
	ip[9] = 17; /* UDP */
	memcpy(ip + 12, sgid + 12, 4);
	memcpy(ip + 16, av->rgid + 12, 4);
	for (int i = 0; i < 20; i += 2)
		acc += ld_be16(ip + i);
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	st_be16(ip + 10, (uint16_t)~acc);
}

void sim_grh_build(const uint8_t sgid[16], uint8_t type, const struct sim_av *av,
		   uint64_t len, uint8_t g[40])
{
	bool v2 = type == SIM_GID_ROCE_V2;

	memset(g, 0, 40);
	if (v2 && ipv4_mapped(sgid) && ipv4_mapped(av->rgid)) {
		ipv4_header(sgid, av, len, g + 20);
		return;
	}
	g[0] = (uint8_t)(0x60 | av->tclass >> 4);
	g[1] = (uint8_t)(av->tclass << 4 | ((av->flow_label >> 16) & 0xf));
	st_be16(g + 2, (uint16_t)av->flow_label);
	st_be16(g + 4, (uint16_t)((v2 ? UDP_HDR : 0) + BTH_DETH_ICRC + len));
	g[6] = v2 ? 17 : 0x1b;
	g[7] = av->hop_limit;
	memcpy(g + 8, sgid, 16);
	memcpy(g + 24, av->rgid, 16);
}
