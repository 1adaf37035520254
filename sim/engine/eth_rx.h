/* Raw Ethernet receive: a frame on the wire reaches the receive queues of this process's
 * RAW_PACKET QPs that steering picks. Frames sent in this process and frames other
 * processes of the fabric sent (engine/remote_eth.h) both arrive here. */
#ifndef FVSIM_ETH_RX_H
#define FVSIM_ETH_RX_H

#include <stdint.h>

/* A copy to the receive queue of every QP steering picks, with a CQE (checksum-OK bits,
 * L3/L4 types). A QP with no receive WQE or a full CQ drops it; so does a frame no rule
 * picks. */
void sim_eth_rx(const uint8_t *frame, uint32_t len);

#endif
