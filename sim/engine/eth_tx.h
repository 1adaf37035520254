/* Raw Ethernet: what a RAW_PACKET QP's send puts on the wire. The wire is one L2 segment
 * joining every Ethernet port of this process's devices (eth_rx.h) and, on a fabric,
 * those of the other processes (remote_eth.h). */
#ifndef FVSIM_ETH_TX_H
#define FVSIM_ETH_TX_H

#include <stdint.h>

#include "../model/obj.h"
#include "dma.h"
#include "sq_decode.h"

/* Least inline header a plain send must carry: the L2 minimum inline mode (Ethernet
 * header + VLAN tag), what GET_CONTEXT's eth_min_inline tells libmlx5. */
#define SIM_ETH_MIN_INLINE 18

/* The frame (or, TSO, frames) of decoded raw WQE w, whose payload pieces gather already
 * resolved into payload. SYND_OK once on the wire; else the requester's syndrome and
 * nothing was sent: LOC_QP_OP for too little inline header, a TSO with MSS 0 or without
 * a TCP header; LOC_LEN for a frame over the port MTU (not TSO) or a TSO over max_tso;
 * LOC_PROT if the payload cannot be read. */
int sim_eth_send(struct sim_qp *qp, const struct sim_wqe *w, const struct sim_iov *payload,
		 int np);

#endif
