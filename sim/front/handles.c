#include "handles.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/remote.h"
#include "../model/model.h"
#include "../model/world.h"
#include "uar.h"

struct uobj {
	uint8_t type;
	void *obj;
};

/* The model's context first: the front passes struct sim_ctx pointers around and finds
 * the rest from them. */
struct uctx {
	struct sim_ctx ctx;
	struct uobj *h;
	uint32_t nh, caph;
};

static struct uctx *of(struct sim_ctx *ctx)
{
	return (struct uctx *)ctx;
}

uint32_t sim_handle_new(struct sim_ctx *ctx, int type, void *obj)
{
	struct uctx *u = of(ctx);

	/* Handle 0 is never given out; libibverbs treats it as an ordinary value, but a
	 * zero in a request is more often a bug than a reference. */
	for (uint32_t i = 1; i < u->nh; i++) {
		if (u->h[i].type == SIM_UOBJ_FREE) {
			u->h[i].type = (uint8_t)type;
			u->h[i].obj = obj;
			return i;
		}
	}
	if (u->nh + 1 >= u->caph) {
		uint32_t ncap = u->caph ? u->caph * 2 : 64;
		struct uobj *n = realloc(u->h, ncap * sizeof(*n));

		if (!n)
			return UINT32_MAX;
		memset(n + u->caph, 0, (ncap - u->caph) * sizeof(*n));
		u->h = n;
		u->caph = ncap;
	}
	if (u->nh == 0)
		u->nh = 1;
	u->h[u->nh].type = (uint8_t)type;
	u->h[u->nh].obj = obj;
	return u->nh++;
}

void *sim_handle_get(struct sim_ctx *ctx, uint32_t handle, int type)
{
	struct uctx *u = of(ctx);

	if (handle == 0 || handle >= u->nh || u->h[handle].type != type)
		return NULL;
	return u->h[handle].obj;
}

int sim_handle_type(struct sim_ctx *ctx, uint32_t handle)
{
	struct uctx *u = of(ctx);

	return handle == 0 || handle >= u->nh ? SIM_UOBJ_FREE : u->h[handle].type;
}

void sim_handle_del(struct sim_ctx *ctx, uint32_t handle)
{
	struct uctx *u = of(ctx);

	if (handle > 0 && handle < u->nh) {
		u->h[handle].type = SIM_UOBJ_FREE;
		u->h[handle].obj = NULL;
	}
}

uint32_t sim_handle_end(struct sim_ctx *ctx)
{
	return of(ctx)->nh;
}

/* force: the context goes away, so the XRCD loses this open whoever still uses it. */
static int destroy(int type, void *o, bool force)
{
	switch (type) {
	case SIM_UOBJ_QP:
		/* Its WQE in flight to another process must be given up first. */
		sim_remote_cancel(o);
		return sim_qp_destroy(o);
	case SIM_UOBJ_SRQ: return sim_srq_destroy(o);
	case SIM_UOBJ_CQ: return sim_cq_destroy(o);
	case SIM_UOBJ_MR:
		/* Nothing in flight to another process may touch its memory afterwards. */
		sim_remote_revoke_mr(o);
		return sim_mr_dereg(o);
	case SIM_UOBJ_MW: return sim_mw_dealloc(o);
	case SIM_UOBJ_AH: return sim_ah_destroy(o);
	case SIM_UOBJ_PD: return sim_pd_free(o);
	case SIM_UOBJ_XRCD: return sim_xrcd_close(o, force);
	case SIM_UOBJ_FLOW: return sim_flow_destroy(o);
	case SIM_UOBJ_UAR: sim_uar_dyn_free(o); return 0;
	default: return EINVAL;
	}
}

int sim_handle_bind(struct sim_ctx *ctx, int type, void *obj, uint32_t *handle)
{
	*handle = sim_handle_new(ctx, type, obj);
	if (*handle != UINT32_MAX)
		return 0;
	destroy(type, obj, true);
	return ENOMEM;
}

int sim_handle_destroy(struct sim_ctx *ctx, uint32_t handle, int type)
{
	void *o = sim_handle_get(ctx, handle, type);
	int err;

	if (!o)
		return EINVAL;
	err = destroy(type, o, false);
	if (!err)
		sim_handle_del(ctx, handle);
	return err;
}

struct sim_ctx *sim_uctx_open(int dev_index, int cmd_fd)
{
	struct uctx *u;

	if (dev_index < 0 || dev_index >= sim_world.ndev)
		return NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	sim_ctx_init(&u->ctx, &sim_world.dev[dev_index], cmd_fd);
	return &u->ctx;
}

void sim_uctx_close(struct sim_ctx *ctx)
{
	static const int order[] = { SIM_UOBJ_FLOW, SIM_UOBJ_QP, SIM_UOBJ_SRQ, SIM_UOBJ_CQ, SIM_UOBJ_MW,
				     SIM_UOBJ_MR, SIM_UOBJ_AH, SIM_UOBJ_PD, SIM_UOBJ_XRCD, SIM_UOBJ_UAR };
	struct uctx *u = of(ctx);

	/* Dependants go first, type by type. */
	for (size_t t = 0; t < sizeof(order) / sizeof(order[0]); t++) {
		for (uint32_t i = 1; i < u->nh; i++) {
			if (u->h[i].type != order[t])
				continue;
			destroy(order[t], u->h[i].obj, true);
			sim_handle_del(ctx, i);
		}
	}
	sim_ctx_fini(ctx);
	sim_uar_views_drop(ctx);
	free(u->h);
	free(u);
}
