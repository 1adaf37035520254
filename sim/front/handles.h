/* A user context as the uverbs layer keeps it: the device's context (model/obj.h) and the
 * handle table through which commands name its objects. Handles are small integers
 * private to the context, from 1 up, reused once freed, as the kernel's. */
#ifndef FVSIM_HANDLES_H
#define FVSIM_HANDLES_H

#include <stdint.h>

struct sim_ctx;

enum sim_uobj_type {
	SIM_UOBJ_FREE = 0,
	SIM_UOBJ_PD,
	SIM_UOBJ_MR,
	SIM_UOBJ_CQ,
	SIM_UOBJ_QP,
	SIM_UOBJ_SRQ,
	SIM_UOBJ_AH,
	SIM_UOBJ_XRCD,
	SIM_UOBJ_FLOW,
	SIM_UOBJ_MW,
	SIM_UOBJ_UAR, /* a dynamically allocated UAR page (ioctl_uar.c) */
};

/* A context on device dev_index for the command fd; NULL if there is no such device or
 * no memory. Closing destroys every object it still holds, dependants first. Locked. */
struct sim_ctx *sim_uctx_open(int dev_index, int cmd_fd);
void sim_uctx_close(struct sim_ctx *ctx);

uint32_t sim_handle_new(struct sim_ctx *ctx, int type, void *obj); /* UINT32_MAX on ENOMEM */
void *sim_handle_get(struct sim_ctx *ctx, uint32_t handle, int type);
int sim_handle_type(struct sim_ctx *ctx, uint32_t handle); /* SIM_UOBJ_FREE if unused */
void sim_handle_del(struct sim_ctx *ctx, uint32_t handle);
uint32_t sim_handle_end(struct sim_ctx *ctx); /* every handle in use is below this */

/* A handle for an object just created: 0 with *handle set, or ENOMEM after destroying the
 * object again. */
int sim_handle_bind(struct sim_ctx *ctx, int type, void *obj, uint32_t *handle);
/* Destroys the object behind a handle and frees the handle: 0, EINVAL (no such object)
 * or the model's refusal (EBUSY: still in use). */
int sim_handle_destroy(struct sim_ctx *ctx, uint32_t handle, int type);

#endif
