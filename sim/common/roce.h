/* The identity of an Ethernet (RoCE) port: its MAC and its GID table. The sysfs
 * generator and the device model compute both the same way, so they agree.
 *
 * GID table of an Ethernet port (type as sysfs gid_attrs/types names it):
 *   | index | GID                                   | type        |
 *   |-------|---------------------------------------|-------------|
 *   | 0, 1  | fe80::EUI-64 of the port MAC          | v1, v2      |
 *   | 2, 3  | ::ffff:IPv4 of the machine's interface | v1, v2      |
 *   | 4, 5  | a global IPv6 of that interface       | v1, v2      |
 * Rows 2..5 (and the interface name in gid_attrs/ndevs) belong to the first Ethernet
 * port of mlx5_0 only, the port that stands for the machine's network interface: an
 * address on two ports would make routing by GID ambiguous. Missing rows are zero. */
#ifndef FVSIM_ROCE_H
#define FVSIM_ROCE_H

#include <stdint.h>

#include "config.h"

enum { SIM_GID_ROCE_V1 = 1, SIM_GID_ROCE_V2 = 2 };

struct sim_gid_entry {
	uint8_t gid[16]; /* all zero: unused */
	uint8_t type; /* SIM_GID_ROCE_V1/V2 */
	char ndev[16]; /* network interface, "" for none */
};

/* 00:02:c9 (the Mellanox OUI), then f5, the device and the port. */
void sim_port_mac(int dev, int port, uint8_t mac[6]);

/* Fills the SIM_GID_TBL_LEN entries of Ethernet port (dev, port). */
void sim_roce_gids(const struct sim_config *cfg, int dev, int port,
		   struct sim_gid_entry tbl[SIM_GID_TBL_LEN]);

#endif
