/* The L3 header a datagram with a GRH (every one on RoCE) arrives with, as a UD receive
 * shows it in the 40 bytes before the payload:
 *
 *   | source GID type          | bytes 0..39                                            |
 *   |--------------------------|--------------------------------------------------------|
 *   | IB, RoCE v1              | IPv6-shaped GRH, next header 0x1b (BTH)                |
 *   | RoCE v2, IPv4-mapped GID | 0..19 zero, 20..39 the IPv4 header (UDP, checksummed)  |
 *   | RoCE v2, IPv6 GID        | IPv6 header, next header 17 (UDP)                      |
 * libibverbs' ibv_init_ah_from_wc tells them apart the same way. */
#ifndef FVSIM_GRH_H
#define FVSIM_GRH_H

#include <stdint.h>

#include "../common/roce.h"
#include "sq_decode.h"

/* sgid and its type (0 on InfiniBand, SIM_GID_ROCE_V1/V2); len: the payload bytes. */
void sim_grh_build(const uint8_t sgid[16], uint8_t type, const struct sim_av *av,
		   uint64_t len, uint8_t g[40]);

#endif
