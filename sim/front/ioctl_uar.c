/* Dynamically allocated UAR pages (mlx5's UAR_OBJ_ALLOC / UAR_OBJ_DESTROY). A context
 * that got no static BlueFlame registers from GET_CONTEXT (an imported one) takes its
 * doorbell pages this way: a BlueFlame page per few QPs and one non-cached page for CQ
 * arming. Each is an mmap() offset in the command fd's memory (uar.c), given out from the
 * bottom of the kernel's range for such entries (mmap command 9, index 0 up), and mappable
 * only while allocated. The device reads nothing there: send doorbells are taken from the
 * doorbell records, and a CQ arm from its record too (engine/events.c). */
#include <errno.h>
#include <unistd.h>

#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>

#include "../model/obj.h"
#include "handles.h"
#include "ioctl.h"
#include "uar.h"

static int uar_alloc(struct sim_bundle *b)
{
	uint64_t type = sim_ioctl_const(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE);
	struct sim_uar_dyn *u;
	uint64_t off;
	uint32_t handle, page_id, len = (uint32_t)sysconf(_SC_PAGESIZE);
	int err;

	if (!b->ctx->live)
		return EINVAL;
	if (type != MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF && type != MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC)
		return EOPNOTSUPP;
	if (!(u = sim_uar_dyn_new(b->ctx)))
		return ENOMEM; /* the kernel's answer when its mmap-offset range is full too */
	if ((err = sim_handle_bind(b->ctx, SIM_UOBJ_UAR, u, &handle)))
		return err;
	off = sim_uar_dyn_offset(u->index);
	/* Hardware UAR numbers: past the static pages of GET_CONTEXT's answer. */
	page_id = SIM_UAR_DYN_FIRST_PAGE + u->index;
	if ((err = sim_ioctl_set_id(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE, handle)) ||
	    (err = sim_ioctl_copy_to(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, &off, sizeof(off))) ||
	    (err = sim_ioctl_copy_to(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, &page_id, sizeof(page_id))) ||
	    (err = sim_ioctl_copy_to(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, &len, sizeof(len)))) {
		sim_handle_destroy(b->ctx, handle, SIM_UOBJ_UAR);
		return err;
	}
	return 0;
}

static int uar_destroy(struct sim_bundle *b)
{
	return sim_handle_destroy(b->ctx, sim_ioctl_handle(b, MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE),
				  SIM_UOBJ_UAR);
}

#define OUT(id_, n) { (id_), SIM_ATTR_PTR_OUT, true, 0, (n), (n) }

const struct sim_ioctl_method sim_ioctl_uar_methods[] = {
	{ MLX5_IB_OBJECT_UAR, MLX5_IB_METHOD_UAR_OBJ_ALLOC, "UAR_OBJ_ALLOC", uar_alloc,
	  { { MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE, SIM_ATTR_IDR_NEW, true, SIM_UOBJ_UAR, 0, 0 },
	    { MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE, SIM_ATTR_CONST_IN, true, 0, 8, 8 },
	    OUT(MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, 8),
	    OUT(MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, 4),
	    OUT(MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, 4) } },
	{ MLX5_IB_OBJECT_UAR, MLX5_IB_METHOD_UAR_OBJ_DESTROY, "UAR_OBJ_DESTROY", uar_destroy,
	  { { MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE, SIM_ATTR_IDR_DESTROY, true, SIM_UOBJ_UAR, 0,
	      0 } } },
	{ 0 },
};
