/* What travels from a requester QP to a responder QP: one message of one operation,
 * already translated on the requester side. Execution is split at this boundary like the
 * wire splits two HCAs, so a responder in another process can later take the same path. */
#ifndef FVSIM_MSG_H
#define FVSIM_MSG_H

#include <sys/types.h>

#include "../model/obj.h"
#include "dma.h"

struct sim_msg {
	pid_t peer; /* process whose memory payload and result name (maybe this one) */
	uint8_t src_type; /* requester QP: transport, number, Q_Key */
	uint32_t src_qpn, src_qkey;
	const struct sim_cq *src_cq; /* requester's send CQ if it is in this process */
	uint16_t slid;
	uint8_t sl;
	struct sim_dev *dst_dev;
	uint32_t dqpn;
	uint8_t op; /* send opcode OP_* */
	bool se;
	uint8_t imm[4];
	uint64_t raddr;
	uint32_t rkey;
	uint64_t len;
	const struct sim_iov *payload; /* SEND/WRITE data, in peer's memory */
	int npayload;
	const struct sim_iov *result; /* READ/atomic landing area, in peer's memory */
	int nresult;
	uint64_t swap_add, compare;
	uint32_t qkey; /* UD */
	uint32_t xrc_srqn; /* XRC */
	uint64_t dc_key; /* DC: the access key from the DCI's address vector */
	bool grh; /* UD: a GRH precedes the payload */
	uint8_t grh_bytes[40];
	uint8_t nak; /* out: syndrome for the requester on SIM_R_NAK */
	uint8_t rnr_timer; /* out: responder's min_rnr_timer on SIM_R_RNR */
};

enum sim_resp {
	SIM_R_ACK, /* accepted (or, on UC/UD, silently dropped) */
	SIM_R_NAK, /* RC: the responder refused; m->nak holds the requester's syndrome */
	SIM_R_RNR, /* RC: no receive WQE */
	SIM_R_UNREACHABLE, /* RC: no such QP, or not able to receive: requester times out */
	SIM_R_BLOCKED, /* the responder's CQ is full: nothing happened, try later */
};

enum sim_resp sim_respond(struct sim_msg *m);

#endif
