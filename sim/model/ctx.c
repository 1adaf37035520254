/* A user context as the device sees it: its device, its CQE format, its UAR pages and its
 * event queues (the async event pipe and the completion channels, whose write ends belong
 * to the device). */
#include <stdlib.h>

#include "../common/log.h"
#include "../common/sys.h"
#include "model.h"
#include "world.h"

void sim_ctx_init(struct sim_ctx *ctx, struct sim_dev *dev, int cmd_fd)
{
	ctx->dev = dev;
	ctx->cmd_fd = cmd_fd;
	ctx->async_rd = ctx->async_wr = -1;
	sim_list_init(&ctx->channels);
	sim_list_add_tail(&sim_world.ctxs, &ctx->link);
}

void sim_ctx_fini(struct sim_ctx *ctx)
{
	struct sim_list *pos, *tmp;

	/* Channel fds belong to the user once handed out; only our write ends are ours. */
	sim_list_for_each_safe(pos, tmp, &ctx->channels) {
		struct sim_channel *ch = sim_container_of(pos, struct sim_channel, link);

		sim_list_del(&ch->link);
		if (ch->wr >= 0)
			sim_sys_close(ch->wr);
		free(ch);
	}
	if (ctx->async_wr >= 0)
		sim_sys_close(ctx->async_wr);
	sim_list_del(&ctx->link);
}

/* Events go to the async fd the object was created with (chan), else to the context's
 * first one. */
bool sim_async_event(struct sim_ctx *ctx, struct sim_channel *chan, uint64_t element,
		     uint32_t type)
{
	int wr = chan ? chan->wr : ctx->async_wr;
	struct {
		uint64_t element;
		uint32_t event_type;
		uint32_t reserved;
	} ev = { element, type, 0 };

	if (wr < 0)
		return false;
	/* The pipe is non-blocking: a user who never reads events must not stall us. */
	if (sim_sys_write(wr, &ev, sizeof(ev)) != (ssize_t)sizeof(ev)) {
		sim_warn("async event %u dropped", type);
		return false;
	}
	return true;
}

void sim_async_fd_closed(struct sim_ctx *ctx, int rd)
{
	struct sim_list *pos, *tmp;

	if (rd == ctx->async_rd) {
		if (ctx->async_wr >= 0)
			sim_sys_close(ctx->async_wr);
		ctx->async_rd = ctx->async_wr = -1;
	}
	sim_list_for_each_safe(pos, tmp, &ctx->channels) {
		struct sim_channel *ch = sim_container_of(pos, struct sim_channel, link);

		if (ch->async && ch->rd == rd && ch->wr >= 0) {
			sim_sys_close(ch->wr);
			ch->wr = -1;
		}
	}
}
