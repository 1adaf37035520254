/* Completion queues: the user-space CQE ring and doorbell record libmlx5 allocated. */
#include <errno.h>
#include <stdlib.h>

#include "../common/log.h"
#include "../common/mapped.h"
#include "model.h"
#include "world.h"

#define MAX_CQE_CNT (1u << 22)

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

int sim_cq_create(struct sim_ctx *ctx, const struct sim_cq_init *in, struct sim_cq **out)
{
	struct sim_dev *dev = ctx->dev;
	struct sim_channel *chan = NULL;
	struct sim_cq *cq;
	uint32_t cnt;
	int err;

	if (in->cqe_size != 64 && in->cqe_size != 128)
		return EINVAL;
	if (in->cqe >= MAX_CQE_CNT || in->comp_en)
		return EINVAL;
	cnt = roundup_pow2(in->cqe + 1);
	if ((err = sim_range_mapped(in->buf, (uint64_t)cnt * in->cqe_size)) ||
	    (err = sim_range_mapped(in->dbrec, 8)) || (in->dbrec & 3))
		return err ? err : EINVAL;
	if (in->comp_channel >= 0) {
		struct sim_list *pos, *tmp;

		sim_list_for_each_safe(pos, tmp, &ctx->channels) {
			struct sim_channel *c = sim_container_of(pos, struct sim_channel, link);

			if (c->rd == in->comp_channel && !c->async)
				chan = c;
		}
		if (!chan)
			return EINVAL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return ENOMEM;
	cq->ctx = ctx;
	cq->cqn = dev->next_cqn++;
	cq->user_handle = in->user_handle;
	cq->buf = (uint8_t *)(uintptr_t)in->buf;
	cq->dbrec = (volatile uint32_t *)(uintptr_t)in->dbrec;
	cq->cqe_cnt = cnt;
	while ((1u << cq->log_cnt) < cnt)
		cq->log_cnt++;
	cq->cqe_size = in->cqe_size;
	cq->chan = chan;
	cq->ignore_overrun = in->ignore_overrun;
	if (sim_idmap_put(&dev->cqs, cq->cqn, cq)) {
		free(cq);
		return ENOMEM;
	}
	sim_list_add_tail(&sim_world.cqs, &cq->link);
	sim_dbg("%s: CQ 0x%x, %u x %u B", dev->name, cq->cqn, cnt, cq->cqe_size);
	*out = cq;
	return 0;
}

int sim_cq_destroy(struct sim_cq *cq)
{
	if (cq->users)
		return EBUSY;
	sim_list_del(&cq->link);
	sim_idmap_del(&cq->ctx->dev->cqs, cq->cqn);
	free(cq);
	return 0;
}
