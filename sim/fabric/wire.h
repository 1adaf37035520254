/* One message as it travels between processes: the pointer-free form of a requester's
 * operation, copied into an inbox slot of the process that owns the destination QP.
 * Addresses in iov are in the sending process's memory. */
#ifndef FVSIM_WIRE_H
#define FVSIM_WIRE_H

#include <stdint.h>

#include "../common/iov.h"

struct sim_wire {
	uint16_t dst_dev, slid;
	uint8_t op, se, sl, src_type, grh;
	uint8_t result; /* 1: iov is the READ/atomic landing area, 0: the payload */
	uint8_t pad[2];
	uint32_t src_qpn, src_qkey, dqpn, rkey, qkey, xrc_srqn, niov;
	uint64_t raddr, len, swap_add, compare;
	uint8_t imm[4];
	uint8_t grh_bytes[40];
	struct sim_iov iov[SIM_MAX_IOV];
};

/* The responder's verdict, written back into the same slot. */
struct sim_wire_answer {
	uint8_t resp; /* the responder's enum sim_resp */
	uint8_t nak, rnr_timer;
};

#endif
