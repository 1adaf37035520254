/* Writing CQEs into the user's CQ ring (docs/formats.md §5.2 to §5.4). */
#ifndef FVSIM_CQE_H
#define FVSIM_CQE_H

#include "../model/obj.h"

struct sim_cqe {
	uint8_t op; /* CQE_* */
	uint8_t syndrome, vendor;
	uint8_t sop; /* send opcode (requester CQEs) */
	bool se;
	uint16_t wqe_counter, slid;
	uint32_t qpn, srqn_uidx, byte_cnt, flags_rqpn;
	uint8_t imm[4]; /* copied verbatim from the WQE */
	uint8_t hds_ip_ext, l4_hdr_type; /* raw Ethernet receives: checksum OK bits, L3/L4 */
};

/* True if n more CQEs fit without overrunning the consumer index in the doorbell record. */
bool sim_cq_room(const struct sim_cq *cq, uint32_t n);
void sim_cq_push(struct sim_cq *cq, const struct sim_cqe *e);

/* RESIZE_CQ: a RESIZE CQE closes the old ring, production continues in the new one at
 * the same producer index. libmlx5 copies the unpolled CQEs over up to that marker.
 * 0, EINVAL (the CQEs not yet polled would not fit) or EBUSY (the old ring is full). */
int sim_cq_resize(struct sim_cq *cq, uint32_t cqe, uint64_t buf, uint32_t cqe_size);

/* Completion events: notice new arm requests, fire pending ones (events.c). arm_init
 * marks a new CQ's arm word in its doorbell record as "never armed". */
void sim_cq_arm_init(struct sim_cq *cq);
void sim_cq_poll_arm(struct sim_cq *cq);
void sim_cq_event_after_push(struct sim_cq *cq, bool solicited_or_error);

#endif
