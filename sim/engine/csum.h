/* Internet checksums of a frame (RFC 1071): the IPv4 header's and the TCP/UDP one over
 * the pseudo header. Written on send where the Ethernet segment's cs_flags ask (and on
 * every TSO segment), checked on receive for the CQE's L3/L4 OK bits. */
#ifndef FVSIM_CSUM_H
#define FVSIM_CSUM_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/frame.h"

/* Fills the IPv4 header checksum (l3) and the TCP/UDP checksum (l4) of frame f. */
void sim_csum_fill(uint8_t *f, const struct sim_frame_info *fi, bool l3, bool l4);

/* Whether the IPv4 header and the TCP/UDP checksums verify (false if absent). */
bool sim_csum_l3_ok(const uint8_t *f, const struct sim_frame_info *fi);
bool sim_csum_l4_ok(const uint8_t *f, const struct sim_frame_info *fi);

#endif
