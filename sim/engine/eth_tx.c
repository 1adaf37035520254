#include "eth_tx.h"

#include <infiniband/verbs.h>

#include "../common/config.h"
#include "../common/frame.h"
#include "../common/log.h"
#include "csum.h"
#include "eth_rx.h"
#include "remote_eth.h"
#include "synd.h"
#include "tso.h"

#define CS_L3 0x40 /* cs_flags: compute the IPv4 header checksum */
#define CS_L4 0x80 /* ... and the TCP/UDP checksum */

/* A frame as a port sends it: the MTU covers the IP packet, the L2 header comes on top. */
static uint32_t max_frame(const uint8_t *f, uint32_t len)
{
	struct sim_frame_info fi;

	sim_frame_parse(f, len, &fi);
	return SIM_ETH_MTU + (fi.vlan ? 18 : 14);
}

/* One frame on the wire: the L2 segment joins this process's Ethernet ports and, on a
 * fabric, those of the other processes. */
static void wire(const uint8_t *f, uint32_t len)
{
	sim_eth_rx(f, len);
	sim_remote_eth_send(f, len);
}

/* The frame being sent. Not allocated: a pass may run in a poller's tick, a signal
 * handler (tick.c); passes hold the device lock, so one buffer serves them all. */
static uint8_t frame[SIM_MAX_TSO];

int sim_eth_send(struct sim_qp *qp, const struct sim_wqe *w, const struct sim_iov *payload,
		 int np)
{
	bool tso = w->opcode == OP_TSO;
	uint32_t len = (uint32_t)w->len;
	struct sim_iov dst;
	uint8_t *f;
	int synd = SYND_OK;

	if (!w->has_eth || (!tso && w->eth_hdr < SIM_ETH_MIN_INLINE) ||
	    (tso && (w->eth_hdr < 14 || !w->mss)))
		return SYND_LOC_QP_OP;
	if (w->len > (tso ? SIM_MAX_TSO : SIM_ETH_MTU + 18u))
		return SYND_LOC_LEN;
	f = frame;
	dst.addr = (uint64_t)(uintptr_t)f;
	dst.len = len;
	if (sim_dma_copy(&dst, 1, payload, np, len)) {
		synd = SYND_LOC_PROT;
	} else if (tso) {
		synd = sim_tso_split(f, len, w->eth_hdr, w->mss, wire);
	} else if (len > max_frame(f, len)) {
		synd = SYND_LOC_LEN;
	} else {
		struct sim_frame_info fi;

		sim_frame_parse(f, len, &fi);
		sim_csum_fill(f, &fi, w->cs_flags & CS_L3, w->cs_flags & CS_L4);
		wire(f, len);
	}
	if (synd)
		sim_info("QP 0x%x: raw send refused, syndrome 0x%02x", qp->qpn, synd);
	return synd;
}
