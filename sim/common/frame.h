/* Where the layers of an Ethernet frame start: the one parse that steering (model) and
 * checksum offload (engine) share.
 *
 *   | bytes       | layer                                           |
 *   |-------------|-------------------------------------------------|
 *   | 0..11       | destination MAC, source MAC                     |
 *   | 12..13      | EtherType (0x8100: a VLAN tag, then EtherType)  |
 *   | l3..        | IPv4 (0x0800, header length from IHL) or IPv6   |
 *   | l4..        | TCP (proto 6) or UDP (17)                       |
 */
#ifndef FVSIM_FRAME_H
#define FVSIM_FRAME_H

#include <stdbool.h>
#include <stdint.h>

struct sim_frame_info {
	uint16_t ethertype; /* after a VLAN tag */
	bool vlan, mcast; /* mcast: group bit of the destination MAC */
	uint8_t ip; /* 4, 6, or 0: no (complete) IP header */
	uint8_t proto; /* IPv4 protocol / IPv6 next header */
	uint32_t l3, l4; /* offsets of the IP and the TCP/UDP header; l4 0: none */
	uint32_t len; /* of the frame */
};

enum { SIM_PROTO_TCP = 6, SIM_PROTO_UDP = 17 };

/* len bytes of frame f; layers that do not fit in len count as absent. */
void sim_frame_parse(const uint8_t *f, uint32_t len, struct sim_frame_info *fi);

#endif
