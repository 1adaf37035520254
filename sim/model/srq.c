/* Shared receive queues (basic and XRC), with the geometry the mlx5 kernel driver derives
 * from max_wr and max_sge — libmlx5 sized its buffer the same way. */
#include <errno.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

#include "../common/log.h"
#include "../common/mapped.h"
#include "model.h"
#include "world.h"

#define SRQ_MAX_WR 32767u
#define SRQ_MAX_SGE 31u

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

int sim_srq_create(struct sim_ctx *ctx, const struct sim_srq_init *in, struct sim_srq **out)
{
	struct sim_dev *dev = ctx->dev;
	struct sim_srq *srq;
	uint32_t desc, cnt;
	int err;

	/* max_wr 0 is valid (the kernel's ring then has one entry, which libmlx5 keeps as
	 * the list's end: nothing can be posted). */
	if (in->max_wr > SRQ_MAX_WR || in->max_sge > SRQ_MAX_SGE || in->limit > in->max_wr)
		return EINVAL;
	cnt = roundup_pow2(in->max_wr + 1);
	desc = roundup_pow2(16 + 16 * in->max_sge);
	if (desc < 32)
		desc = 32;
	if ((err = sim_range_mapped(in->buf, (uint64_t)cnt * desc)) ||
	    (err = sim_range_mapped(in->dbrec, 4)) || (in->dbrec & 3))
		return err ? err : EINVAL;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return ENOMEM;
	srq->ctx = ctx;
	srq->srqn = dev->next_srqn++;
	srq->user_handle = in->user_handle;
	srq->xrc = in->xrc;
	srq->pd = in->pd;
	srq->cq = in->cq;
	srq->xrcd = in->xrcd;
	srq->buf = (uint8_t *)(uintptr_t)in->buf;
	srq->dbrec = (volatile uint32_t *)(uintptr_t)in->dbrec;
	srq->wqe_cnt = cnt;
	while ((1u << srq->wqe_shift) < desc)
		srq->wqe_shift++;
	srq->max_gs = (desc - 16) / 16;
	srq->max_wr = cnt - 1;
	srq->limit = in->limit;
	srq->uidx = in->uidx;
	if (sim_idmap_put(&dev->srqs, srq->srqn, srq)) {
		free(srq);
		return ENOMEM;
	}
	if (srq->pd)
		srq->pd->users++;
	if (srq->cq)
		srq->cq->users++;
	if (srq->xrcd)
		srq->xrcd->users++;
	sim_dbg("%s: SRQ 0x%x%s, %u x %u B", dev->name, srq->srqn, srq->xrc ? " (XRC)" : "",
		cnt, desc);
	*out = srq;
	return 0;
}

int sim_srq_modify(struct sim_srq *srq, uint32_t mask, uint32_t max_wr, uint32_t limit)
{
	/* mlx5 cannot resize an SRQ; the limit arms the SRQ_LIMIT_REACHED event. */
	if (mask & IBV_SRQ_MAX_WR)
		return EINVAL;
	if (mask & IBV_SRQ_LIMIT) {
		if (limit > srq->max_wr)
			return EINVAL;
		srq->limit = limit;
	}
	(void)max_wr;
	return 0;
}

int sim_srq_destroy(struct sim_srq *srq)
{
	if (srq->users)
		return EBUSY;
	if (srq->pd)
		srq->pd->users--;
	if (srq->cq)
		srq->cq->users--;
	if (srq->xrcd)
		sim_xrcd_put(srq->xrcd);
	sim_idmap_del(&srq->ctx->dev->srqs, srq->srqn);
	free(srq);
	return 0;
}
