/* One message as it travels between processes: the pointer-free form of a requester's
 * operation, copied into an inbox slot of the process that owns the destination QP.
 * Addresses in iov are in the sending process's memory. */
#ifndef FVSIM_WIRE_H
#define FVSIM_WIRE_H

#include <netinet/in.h>
#include <stdint.h>

#include "../common/iov.h"

struct sim_wire {
	uint16_t dst_dev, slid;
	uint8_t op, se, sl, src_type, grh;
	uint8_t result; /* 1: iov is the READ/atomic landing area, 0: the payload */
	uint8_t pad[2];
	uint32_t src_qpn, src_qkey, dqpn, rkey, qkey, xrc_srqn, niov;
	uint64_t raddr, len, swap_add, compare;
	uint64_t dc_key; /* DC: the access key the DCI presents */
	uint8_t imm[4];
	uint8_t grh_bytes[40];
	struct sim_iov iov[SIM_MAX_IOV];
};

/* The responder's verdict, written back into the same slot. */
struct sim_wire_answer {
	uint8_t resp; /* the responder's enum sim_resp */
	uint8_t nak, rnr_timer;
};

/* A connection manager message between the rdma_cm ids of two processes (IB CM REQ,
 * REP, RTU, REJ, DREQ, SIDR REQ/REP as cm/ models them): one way, no answer. Each end is
 * a process of the fabric (its inbox + 1; 0 where there is no fabric), its pid and the
 * id's communication number. */
struct sim_wire_cm_end {
	uint32_t proc;
	int32_t pid;
	uint32_t comm;
};

#define SIM_WIRE_CM_PD 228 /* private data room: the largest CM message's (RTU, DREP) */

/* What REQ and REP carry about the connection, as their sender sees it. */
struct sim_wire_cm_conn {
	uint8_t resp_res, init_depth, flow_control, retry, rnr_retry, srq;
};

struct sim_wire_cm {
	uint8_t kind;
	uint8_t status; /* REJ reason, SIDR REP status */
	struct sim_wire_cm_conn conn;
	uint16_t ps;
	uint16_t pd_len;
	struct sim_wire_cm_end src;
	uint32_t dst_comm; /* 0 in REQ and SIDR REQ: the receiver finds its listener */
	uint32_t qpn, psn, qkey;
	struct sockaddr_in6 src_addr, dst_addr; /* REQ / SIDR REQ: the rdma_cm IP header */
	uint8_t pd[SIM_WIRE_CM_PD];
};

#endif
