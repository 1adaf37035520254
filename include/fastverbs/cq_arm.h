/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Arming a CQ for a completion event, from fastverbs' own consumer index (docs/formats.md
 * §5.7). A CQ taken over with fv_cq_init is polled by fastverbs, so libmlx5's consumer index
 * stays where it was and ibv_req_notify_cq would arm at a stale index; fv_cq_arm writes the
 * same bytes libmlx5's arm writes, with fv_cq's index:
 *
 *   arm word  31:28 sn   events taken so far, mod 4 (fv_cq_arm_event)
 *             24    cmd  1: solicited completions only, 0: any completion
 *             23:0  ci   the consumer index
 *
 *   1. dbrec[FV__CQ_ARM_DB] = BE32(arm word)                      host memory
 *   2. fv__wc_start()                                             the record before the MMIO
 *   3. 8 bytes at cq_uar + FV__CQ_DOORBELL = BE64(word << 32 | cqn)  the UAR's CQ doorbell
 *   4. fv__wc_flush()
 *
 * The device raises one event on the CQ's completion channel for the first (solicited)
 * completion past ci, or at once if there already is one. ibv_get_cq_event reads it; each
 * event read advances sn (fv_cq_arm_event, as libmlx5 advances its own in ibv_get_cq_event),
 * so the next arm is told from the one that fired. Acknowledge events with ibv_ack_cq_events
 * as usual. sn starts at 0, libmlx5's value for a CQ that has had no event: take a CQ over
 * before waiting for events on it.
 */
#ifndef FASTVERBS_CQ_ARM_H
#define FASTVERBS_CQ_ARM_H

#include "cq.h"

#define FV__CQ_DOORBELL 0x20		/* the CQ doorbell in the UAR page (libmlx5's MLX5_CQ_DOORBELL) */
#define FV__CQ_ARM_SOLICITED (1u << 24)	/* arm command: solicited only (MLX5_CQ_DB_REQ_NOT_SOL) */

/* What arming a CQ needs besides struct fv_cq: the UAR page and the arm sequence number. */
struct fv_cq_arm {
	void *uar;	/* the context's CQ UAR page (mlx5dv_cq.cq_uar) */
	uint32_t sn;	/* events taken; the arm word carries sn & 3 */
};

/* Set a up for ibcq (mlx5dv_init_obj gives the UAR page). Returns 0 or an errno value. */
static inline int fv_cq_arm_init(struct fv_cq_arm *a, struct ibv_cq *ibcq)
{
	struct mlx5dv_cq dv;
	int err = fv_cq_dv(ibcq, &dv);

	if (err)
		return err;
	a->uar = dv.cq_uar;
	a->sn = 0;
	return 0;
}

/*
 * Arm cq for one event: on its next completion, or with solicited nonzero on its next
 * solicited (or error) completion, as ibv_req_notify_cq(cq->ibcq, solicited) would if
 * libmlx5 polled the CQ. Poll again after arming: a completion that arrived before the arm
 * raises the event only if it is still past the consumer index the arm carries.
 */
static inline void fv_cq_arm(const struct fv_cq *cq, const struct fv_cq_arm *a, int solicited)
{
	uint32_t word = (a->sn & 3) << 28 | (solicited ? FV__CQ_ARM_SOLICITED : 0) | (cq->ci & 0xffffff);

	fv__dbrec_write32(&cq->dbrec[FV__CQ_ARM_DB], htobe32(word));
	fv__wc_start();
	fv__mmio_write64((uint8_t *)a->uar + FV__CQ_DOORBELL, htobe64((uint64_t)word << 32 | cq->cqn));
	fv__wc_flush();
}

/* Count one event read from the CQ's channel (call once per event ibv_get_cq_event gives). */
static inline void fv_cq_arm_event(struct fv_cq_arm *a)
{
	a->sn++;
}

#endif /* FASTVERBS_CQ_ARM_H */
