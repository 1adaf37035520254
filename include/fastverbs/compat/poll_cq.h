/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ibv_poll_cq(3) drop-in on a fastverbs CQ: struct ibv_wc filled as libmlx5 fills it
 * (docs/formats.md §5.5), by the same decode core as fv_poll (cq.h). Where libmlx5 leaves a
 * field undefined (opcode of an error, byte_len of a SEND/WRITE, responder fields of a
 * requester completion) it is defined here: the failed WQE's opcode, 0, 0.
 */
#ifndef FASTVERBS_COMPAT_POLL_CQ_H
#define FASTVERBS_COMPAT_POLL_CQ_H

#include "../cq.h"
#include "../sync.h"

FV__EXTERN_C_BEGIN

/*
 * Poll up to n completions into wc, as ibv_poll_cq(cq->ibcq, n, wc) would. Returns how many,
 * or -1 with errno EINVAL for a CQE fastverbs cannot decode (cq.h).
 */
static FV__ALWAYS_INLINE int fv_poll_cq(struct fv_cq *cq, int n, struct ibv_wc *wc)
{
	uint32_t on = cq->locking;
	int got;

	fv__enter(&cq->lock, on, cq);	/* the CQ's lock, as libmlx5's ibv_poll_cq (sync.h) */
	got = fv__cq_poll_core(cq, wc, n, 1);
	/* One completion a call: the word as the release's memory operand, where gcc kept its
	 * address on the stack; with more, it costs the loop (docs/performance.md §8.2.3). */
	if (FV__CONST_P(n) && n == 1)
		fv__leave_at(&cq->lock, on, cq);
	else
		fv__leave(&cq->lock, on, cq);
	return got;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_COMPAT_POLL_CQ_H */
