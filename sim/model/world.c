#include "world.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../common/log.h"
#include "../fabric/fabric.h"
#include "model.h"

struct sim_world sim_world = { .lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_once_t world_once = PTHREAD_ONCE_INIT;

/* A fork while another thread holds the lock would leave the child's copy locked
 * forever; holding it across fork() makes the child's copy consistent. */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&sim_world.lock);
}

static void atfork_release(void)
{
	pthread_mutex_unlock(&sim_world.lock);
}

static void world_setup(void)
{
	struct sim_world *w = &sim_world;

	sim_log_init();
	sim_config_load(&w->cfg);
	sim_list_init(&w->ctxs);
	sim_list_init(&w->qps);
	sim_list_init(&w->cqs);
	w->ndev = w->cfg.ndev;
	for (int d = 0; d < w->ndev; d++) {
		struct sim_dev *dev = &w->dev[d];

		dev->index = d;
		snprintf(dev->name, sizeof(dev->name), "mlx5_%d", d);
		dev->nports = w->cfg.nports;
		dev->node_guid = sim_node_guid(d);
		for (int p = 1; p <= dev->nports; p++) {
			dev->port[p].lid = sim_port_lid(d, p, dev->nports);
			sim_port_gid(d, p, dev->port[p].gid);
		}
		/* Start numbers like a real HCA would hand them out: non-zero and distinct
		 * per device, so a wrong-device lookup never succeeds by accident. */
		dev->next_pdn = 1;
		dev->next_cqn = 0x400 * (uint32_t)(d + 1);
		dev->next_qpn = 0x100 + 0x10000 * (uint32_t)d;
		dev->next_srqn = 0x80 + 0x1000 * (uint32_t)d;
		dev->next_xrcdn = 1;
		dev->next_mkey = 0x100 + 0x10000 * (uint32_t)d;
		sim_list_init(&dev->xrcds);
	}
	pthread_atfork(atfork_prepare, atfork_release, atfork_release);
	if (w->cfg.fabric[0])
		sim_fabric_attach(w->cfg.fabric);
}

void sim_world_init(void)
{
	pthread_once(&world_once, world_setup);
}

void sim_lock(void)
{
	pthread_mutex_lock(&sim_world.lock);
}

void sim_unlock(void)
{
	pthread_mutex_unlock(&sim_world.lock);
}

struct sim_dev *sim_find_lid(uint16_t lid, int *port)
{
	for (int d = 0; d < sim_world.ndev; d++) {
		struct sim_dev *dev = &sim_world.dev[d];

		for (int p = 1; p <= dev->nports; p++) {
			if (dev->port[p].lid == lid) {
				*port = p;
				return dev;
			}
		}
	}
	return NULL;
}

struct sim_ctx *sim_ctx_new(int dev_index, int cmd_fd)
{
	struct sim_ctx *ctx;

	if (dev_index < 0 || dev_index >= sim_world.ndev)
		return NULL;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->dev = &sim_world.dev[dev_index];
	ctx->cmd_fd = cmd_fd;
	ctx->async_rd = ctx->async_wr = -1;
	sim_list_init(&ctx->channels);
	sim_list_add_tail(&sim_world.ctxs, &ctx->link);
	return ctx;
}

uint32_t sim_handle_new(struct sim_ctx *ctx, int type, void *obj)
{
	/* Handle 0 is never given out; libibverbs treats it as an ordinary value, but a
	 * zero in a request is more often a bug than a reference. */
	for (uint32_t i = 1; i < ctx->nh; i++) {
		if (ctx->h[i].type == SIM_UOBJ_FREE) {
			ctx->h[i].type = (uint8_t)type;
			ctx->h[i].obj = obj;
			return i;
		}
	}
	if (ctx->nh + 1 >= ctx->caph) {
		uint32_t ncap = ctx->caph ? ctx->caph * 2 : 64;
		struct sim_uobj *n = realloc(ctx->h, ncap * sizeof(*n));

		if (!n)
			return UINT32_MAX;
		memset(n + ctx->caph, 0, (ncap - ctx->caph) * sizeof(*n));
		ctx->h = n;
		ctx->caph = ncap;
	}
	if (ctx->nh == 0)
		ctx->nh = 1;
	ctx->h[ctx->nh].type = (uint8_t)type;
	ctx->h[ctx->nh].obj = obj;
	return ctx->nh++;
}

void *sim_handle_get(struct sim_ctx *ctx, uint32_t handle, int type)
{
	if (handle == 0 || handle >= ctx->nh || ctx->h[handle].type != type)
		return NULL;
	return ctx->h[handle].obj;
}

void sim_handle_del(struct sim_ctx *ctx, uint32_t handle)
{
	if (handle > 0 && handle < ctx->nh) {
		ctx->h[handle].type = SIM_UOBJ_FREE;
		ctx->h[handle].obj = NULL;
	}
}

/* Destroys every object of one type still held by the context; dependants go first. */
static void drop_all(struct sim_ctx *ctx, int type)
{
	for (uint32_t i = 1; i < ctx->nh; i++) {
		void *o = ctx->h[i].obj;

		if (ctx->h[i].type != type)
			continue;
		switch (type) {
		case SIM_UOBJ_QP: sim_qp_destroy(o); break;
		case SIM_UOBJ_SRQ: sim_srq_destroy(o); break;
		case SIM_UOBJ_CQ: sim_cq_destroy(o); break;
		case SIM_UOBJ_MR: sim_mr_dereg(o); break;
		case SIM_UOBJ_AH: sim_ah_destroy(o); break;
		case SIM_UOBJ_PD: sim_pd_free(o); break;
		case SIM_UOBJ_XRCD: sim_xrcd_close(ctx, i, true); break;
		}
		sim_handle_del(ctx, i);
	}
}

/* The object of a type whose user handle is element (events name objects that way). */
static void *by_user_handle(struct sim_ctx *ctx, int type, uint64_t element)
{
	for (uint32_t i = 1; i < ctx->nh; i++) {
		void *o = ctx->h[i].obj;

		if (ctx->h[i].type != type)
			continue;
		if ((type == SIM_UOBJ_QP && ((struct sim_qp *)o)->user_handle == element) ||
		    (type == SIM_UOBJ_CQ && ((struct sim_cq *)o)->user_handle == element) ||
		    (type == SIM_UOBJ_SRQ && ((struct sim_srq *)o)->user_handle == element))
			return o;
	}
	return NULL;
}

void sim_events_read(struct sim_ctx *ctx, bool comp, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	if (comp) {
		for (; n >= 8; n -= 8, p += 8) {
			uint64_t h;
			struct sim_cq *cq;

			memcpy(&h, p, 8);
			if ((cq = by_user_handle(ctx, SIM_UOBJ_CQ, h)))
				cq->comp_events++;
		}
		return;
	}
	for (; n >= 16; n -= 16, p += 16) {
		uint64_t h;
		uint32_t type;
		struct sim_qp *qp;
		struct sim_cq *cq;
		struct sim_srq *srq;

		memcpy(&h, p, 8);
		memcpy(&type, p + 8, 4);
		switch (type) {
		case IBV_EVENT_CQ_ERR:
			if ((cq = by_user_handle(ctx, SIM_UOBJ_CQ, h)))
				cq->async_events++;
			break;
		case IBV_EVENT_SRQ_ERR:
		case IBV_EVENT_SRQ_LIMIT_REACHED:
			if ((srq = by_user_handle(ctx, SIM_UOBJ_SRQ, h)))
				srq->events_reported++;
			break;
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
		case IBV_EVENT_COMM_EST:
		case IBV_EVENT_SQ_DRAINED:
		case IBV_EVENT_PATH_MIG:
		case IBV_EVENT_PATH_MIG_ERR:
		case IBV_EVENT_QP_LAST_WQE_REACHED:
			if ((qp = by_user_handle(ctx, SIM_UOBJ_QP, h)))
				qp->events_reported++;
			break;
		default:
			break; /* port and device events belong to no object */
		}
	}
}

void sim_ctx_destroy(struct sim_ctx *ctx)
{
	static const int order[] = { SIM_UOBJ_QP, SIM_UOBJ_SRQ, SIM_UOBJ_CQ, SIM_UOBJ_MR,
				     SIM_UOBJ_AH, SIM_UOBJ_PD, SIM_UOBJ_XRCD };
	struct sim_list *pos, *tmp;

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		drop_all(ctx, order[i]);
	/* Channel fds belong to the user once handed out; only our write ends are ours. */
	sim_list_for_each_safe(pos, tmp, &ctx->channels) {
		struct sim_channel *ch = sim_container_of(pos, struct sim_channel, link);

		sim_list_del(&ch->link);
		close(ch->wr);
		free(ch);
	}
	if (ctx->async_wr >= 0)
		close(ctx->async_wr);
	sim_list_del(&ctx->link);
	free(ctx->h);
	free(ctx);
}

bool sim_async_event(struct sim_ctx *ctx, uint64_t element, uint32_t type)
{
	struct {
		uint64_t element;
		uint32_t event_type;
		uint32_t reserved;
	} ev = { element, type, 0 };

	if (ctx->async_wr < 0)
		return false;
	/* The pipe is non-blocking: a user who never reads events must not stall us. */
	if (write(ctx->async_wr, &ev, sizeof(ev)) != (ssize_t)sizeof(ev)) {
		sim_warn("async event %u dropped", type);
		return false;
	}
	return true;
}
