/* Context methods an imported context needs (ibv_import_device): the device's
 * QUERY_CONTEXT, whose mlx5 attribute carries the ucontext answer GET_CONTEXT gave (minus
 * the static BlueFlame registers, which belong to the first opener: the importer takes
 * dynamic UARs, ioctl_uar.c), and ASYNC_EVENT_ALLOC, which opens a further async-event fd
 * on the context. As in the kernel, an object's events go to the async fd its creation
 * named (EVENT_FD, ioctl_create.c), else to the context's first one; the device raises no
 * device-wide event, so a further fd hears only of the objects created with it. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/mlx5-abi.h>
#include <rdma/mlx5_user_ioctl_cmds.h>

#include "../model/model.h"
#include "../model/world.h"
#include "fdtab.h"
#include "handles.h"
#include "ioctl.h"
#include "uverbs.h"

/* What libibverbs may rely on (IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS): the kernel
 * ignores access flags it does not know in the optional range. */
#define CORE_SUPPORT IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS

static int query_context(struct sim_bundle *b)
{
	struct mlx5_ib_alloc_ucontext_resp r;
	uint32_t ncomp = SIM_COMP_VECTORS;
	uint64_t core = CORE_SUPPORT;
	size_t room;
	int err;

	if (!b->ctx->live)
		return EINVAL; /* no ucontext yet */
	err = sim_ioctl_copy_to(b, UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, &ncomp, sizeof(ncomp));
	if (err && err != ENOENT)
		return err;
	err = sim_ioctl_copy_to(b, UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT, &core, sizeof(core));
	if (err && err != ENOENT)
		return err;
	sim_ucontext_fill(b->ctx, &r);
	room = sim_ioctl_len(b, MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX);
	r.response_length = (uint32_t)(room < sizeof(r) ? room : sizeof(r));
	return sim_ioctl_copy_to_zero(b, MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX, &r, sizeof(r));
}

static int async_event_alloc(struct sim_bundle *b)
{
	struct sim_channel *ch;
	int fds[2], err;

	if (!b->ctx->live)
		return EINVAL;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return ENOMEM;
	if (sim_async_pipe(fds)) {
		err = errno;
		free(ch);
		return err;
	}
	err = sim_fd_set(fds[0], b->ctx, SIM_FD_ASYNC);
	if (!err)
		err = sim_ioctl_set_id(b, UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE, fds[0]);
	if (err) {
		sim_fd_clear(fds[0]);
		close(fds[0]);
		close(fds[1]);
		free(ch);
		return err;
	}
	/* Kept with the completion channels, whose write ends the context closes; marked so
	 * that CREATE_CQ does not take it for one. */
	ch->rd = fds[0];
	ch->wr = fds[1];
	ch->async = true;
	sim_list_add_tail(&b->ctx->channels, &ch->link);
	return 0;
}

/* The kernel's struct ends at dump_fill_mkey, and PTR_OUT attributes may not be longer. */
#define UCTX_LEN sizeof(struct mlx5_ib_alloc_ucontext_resp)
#define OUT(id_, mand, min, max) { (id_), SIM_ATTR_PTR_OUT, (mand), 0, (min), (max) }

const struct sim_ioctl_method sim_ioctl_ctx_methods[] = {
	{ UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT, "QUERY_CONTEXT", query_context,
	  { OUT(UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, false, 4, 4),
	    OUT(UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT, false, 8, 8),
	    OUT(MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX, true, UCTX_LEN, UCTX_LEN) } },
	{ UVERBS_OBJECT_ASYNC_EVENT, UVERBS_METHOD_ASYNC_EVENT_ALLOC, "ASYNC_EVENT_ALLOC",
	  async_event_alloc,
	  { { UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE, SIM_ATTR_FD_NEW, true, 0, 0, 0 } } },
	{ 0 },
};
