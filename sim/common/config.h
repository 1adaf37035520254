/* Environment options and the fixed identity of the simulated devices (names, GUIDs,
 * LIDs): the sysfs generator and the device model must agree on them. */
#ifndef FVSIM_CONFIG_H
#define FVSIM_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_MAX_DEVICES 8
#define SIM_MAX_PORTS 2 /* libmlx5 keeps per-port caches for 2 ports only */
#define SIM_GID_TBL_LEN 8
#define SIM_PKEY_TBL_LEN 1
#define SIM_FW_VER "16.35.2000"
#define SIM_VENDOR_ID 0x02c9
#define SIM_VENDOR_PART_ID 4119 /* ConnectX-5, PCI device 0x1017 */
#define SIM_PCI_DEVICE 0x1017
/* PortInfo CapabilityMask, as QUERY_PORT's port_cap_flags and sysfs cap_mask: no IsSM
 * (bit 1), the device runs no subnet manager. */
#define SIM_PORT_CAP_FLAGS 0x2651e848u
/* An Ethernet (RoCE) port: CM supported (bit 16) and IP-based GIDs (bit 26), as mlx5. */
#define SIM_ETH_PORT_CAP_FLAGS 0x04010000u
/* The Ethernet MTU of an Ethernet port (IP packet bytes; frames add 14 or 18 of L2). */
#define SIM_ETH_MTU 1500
/* Largest TSO send (headers and payload) on a RAW_PACKET QP; QUERY_DEVICE_EX tso_caps. */
#define SIM_MAX_TSO 262144

struct sim_config {
	int ndev; /* FVSIM_DEVICES, 1..8 */
	int nports; /* FVSIM_PORTS, 1..2 */
	int step_mode; /* FVSIM_MODE=step: no device thread */
	int poll_mode; /* FVSIM_MODE=poll: no device thread, the application's polls drive */
	int no_blueflame; /* FVSIM_NO_BLUEFLAME=1: every QP gets bfreg 0 (doorbell only) */
	int direct; /* FVSIM_DIRECT=0: RDMA WRITEs to other processes always go by mailbox */
	int no_dc; /* FVSIM_NO_DC=1: no DC transport, DCI/DCT creation is refused */
	int tick_us; /* FVSIM_TICK_US: poller tick period (engine/tick.h), 0: none */
	char fabric[64]; /* FVSIM_FABRIC: shared fabric name, "" for a private device */
	bool eth[SIM_MAX_PORTS + 1]; /* FVSIM_LINK: port p (1-based) is Ethernet (RoCE) */
	char link[16]; /* FVSIM_LINK as accepted ("" = all InfiniBand), names the sysfs tree */
};

void sim_config_load(struct sim_config *cfg);

uint64_t sim_node_guid(int dev);
uint64_t sim_port_guid(int dev, int port);
uint16_t sim_port_lid(int dev, int port, int nports);
void sim_port_gid(int dev, int port, uint8_t gid[16]);

#endif
