/* Decodes write() commands: header, core request, driver request, and where the two
 * responses go; then runs the handler under the world lock and copies the responses out.
 * Legacy commands count in 4-byte words and carry the response pointer as the first u64
 * of the core request; extended ones count in 8-byte words and carry it in an extra
 * header (libibverbs cmd_fallback.c, kernel uverbs_main.c). */
#include "uverbs.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include <rdma/ib_user_verbs.h>

#include "../common/log.h"
#include "../engine/dma.h"
#include "../engine/thread.h"
#include "../model/world.h"
#include "handles.h"

struct cmd_desc {
	uint32_t num;
	bool ex;
	size_t req_size; /* core request struct; the driver request follows it */
	size_t resp_size; /* core response struct; the driver response follows it */
	bool has_resp; /* legacy request starts with the response pointer */
	int (*fn)(struct sim_cmd *c); /* NULL: destroy the object of type uobj whose handle
				       * is at handle_off in the request */
	const char *name;
	int uobj;
	size_t handle_off;
};

#define LEG(n, req, resp, fn) { IB_USER_VERBS_CMD_##n, false, sizeof(struct req), sizeof(struct resp), true, fn, #n, 0, 0 }
#define LEG_NORESP(n, req, fn) { IB_USER_VERBS_CMD_##n, false, sizeof(struct req), 0, false, fn, #n, 0, 0 }
#define LEG_DESTROY(n, req, field, uobj)                                                 \
	{ IB_USER_VERBS_CMD_##n, false, sizeof(struct req), 0, false, NULL, #n, uobj,           \
	  offsetof(struct req, field) }
#define EX(n, req, resp, fn) { IB_USER_VERBS_EX_CMD_##n, true, sizeof(struct req), sizeof(struct resp), true, fn, "EX_" #n, 0, 0 }

static const struct cmd_desc cmds[] = {
	LEG(GET_CONTEXT, ib_uverbs_get_context, ib_uverbs_get_context_resp, sim_cmd_get_context),
	LEG(QUERY_DEVICE, ib_uverbs_query_device, ib_uverbs_query_device_resp, sim_cmd_query_device),
	LEG(QUERY_PORT, ib_uverbs_query_port, ib_uverbs_query_port_resp, sim_cmd_query_port),
	LEG(ALLOC_PD, ib_uverbs_alloc_pd, ib_uverbs_alloc_pd_resp, sim_cmd_alloc_pd),
	LEG_DESTROY(DEALLOC_PD, ib_uverbs_dealloc_pd, pd_handle, SIM_UOBJ_PD),
	LEG(CREATE_AH, ib_uverbs_create_ah, ib_uverbs_create_ah_resp, sim_cmd_create_ah),
	LEG_DESTROY(DESTROY_AH, ib_uverbs_destroy_ah, ah_handle, SIM_UOBJ_AH),
	LEG(REG_MR, ib_uverbs_reg_mr, ib_uverbs_reg_mr_resp, sim_cmd_reg_mr),
	LEG(REREG_MR, ib_uverbs_rereg_mr, ib_uverbs_rereg_mr_resp, sim_cmd_rereg_mr),
	LEG_DESTROY(DEREG_MR, ib_uverbs_dereg_mr, mr_handle, SIM_UOBJ_MR),
	LEG(ALLOC_MW, ib_uverbs_alloc_mw, ib_uverbs_alloc_mw_resp, sim_cmd_alloc_mw),
	LEG_DESTROY(DEALLOC_MW, ib_uverbs_dealloc_mw, mw_handle, SIM_UOBJ_MW),
	LEG(CREATE_COMP_CHANNEL, ib_uverbs_create_comp_channel, ib_uverbs_create_comp_channel_resp,
	    sim_cmd_create_comp_channel),
	LEG(CREATE_CQ, ib_uverbs_create_cq, ib_uverbs_create_cq_resp, sim_cmd_create_cq),
	LEG(RESIZE_CQ, ib_uverbs_resize_cq, ib_uverbs_resize_cq_resp, sim_cmd_resize_cq),
	LEG(DESTROY_CQ, ib_uverbs_destroy_cq, ib_uverbs_destroy_cq_resp, sim_cmd_destroy_cq),
	LEG(CREATE_QP, ib_uverbs_create_qp, ib_uverbs_create_qp_resp, sim_cmd_create_qp),
	LEG(QUERY_QP, ib_uverbs_query_qp, ib_uverbs_query_qp_resp, sim_cmd_query_qp),
	LEG_NORESP(MODIFY_QP, ib_uverbs_modify_qp, sim_cmd_modify_qp),
	LEG(DESTROY_QP, ib_uverbs_destroy_qp, ib_uverbs_destroy_qp_resp, sim_cmd_destroy_qp),
	LEG(CREATE_SRQ, ib_uverbs_create_srq, ib_uverbs_create_srq_resp, sim_cmd_create_srq),
	LEG_NORESP(MODIFY_SRQ, ib_uverbs_modify_srq, sim_cmd_modify_srq),
	LEG(QUERY_SRQ, ib_uverbs_query_srq, ib_uverbs_query_srq_resp, sim_cmd_query_srq),
	LEG(DESTROY_SRQ, ib_uverbs_destroy_srq, ib_uverbs_destroy_srq_resp, sim_cmd_destroy_srq),
	LEG(OPEN_XRCD, ib_uverbs_open_xrcd, ib_uverbs_open_xrcd_resp, sim_cmd_open_xrcd),
	LEG_DESTROY(CLOSE_XRCD, ib_uverbs_close_xrcd, xrcd_handle, SIM_UOBJ_XRCD),
	LEG(CREATE_XSRQ, ib_uverbs_create_xsrq, ib_uverbs_create_srq_resp, sim_cmd_create_xsrq),
	EX(QUERY_DEVICE, ib_uverbs_ex_query_device, ib_uverbs_ex_query_device_resp,
	   sim_cmd_query_device_ex),
	EX(CREATE_CQ, ib_uverbs_ex_create_cq, ib_uverbs_ex_create_cq_resp, sim_cmd_create_cq_ex),
	EX(CREATE_QP, ib_uverbs_ex_create_qp, ib_uverbs_ex_create_qp_resp, sim_cmd_create_qp_ex),
	EX(MODIFY_QP, ib_uverbs_ex_modify_qp, ib_uverbs_ex_modify_qp_resp, sim_cmd_modify_qp_ex),
	EX(CREATE_FLOW, ib_uverbs_create_flow, ib_uverbs_create_flow_resp, sim_cmd_create_flow),
	{ IB_USER_VERBS_EX_CMD_DESTROY_FLOW, true, sizeof(struct ib_uverbs_destroy_flow), 0, true,
	  sim_cmd_destroy_flow, "EX_DESTROY_FLOW", 0, 0 },
};

#define MAX_CMD (64 * 1024)

/* A command that only destroys the object its handle names. */
static int destroy(struct sim_cmd *c, const struct cmd_desc *d)
{
	uint32_t handle;

	memcpy(&handle, c->req + d->handle_off, sizeof(handle));
	return sim_handle_destroy(c->ctx, handle, d->uobj);
}

static const struct cmd_desc *find(uint32_t num, bool ex)
{
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (cmds[i].num == num && cmds[i].ex == ex)
			return &cmds[i];
	return NULL;
}

/* Writes core + driver responses into the caller's buffer, zero-filling the rest of the
 * room it gave, like the kernel's uverbs_response(). */
static int copy_out(uint64_t ptr, const struct sim_cmd *c, size_t core_room, size_t drv_room)
{
	size_t total = core_room + drv_room;
	uint8_t *out;
	int err;

	if (!total)
		return 0;
	if (total > MAX_CMD)
		return EINVAL;
	out = calloc(1, total);
	if (!out)
		return ENOMEM;
	memcpy(out, c->resp, c->resp_len < core_room ? c->resp_len : core_room);
	memcpy(out + core_room, c->drv_resp, c->drv_resp_len < drv_room ? c->drv_resp_len : drv_room);
	err = sim_dma_write(ptr, out, total);
	free(out);
	return err;
}

static int run(struct sim_ctx *ctx, const uint8_t *buf, size_t count, bool *created)
{
	struct ib_uverbs_cmd_hdr hdr;
	const struct cmd_desc *d;
	struct sim_cmd *c;
	size_t core_room, drv_room;
	uint64_t resp_ptr = 0;
	bool ex;
	int err;

	if (count < sizeof(hdr))
		return EINVAL;
	memcpy(&hdr, buf, sizeof(hdr));
	ex = hdr.command & IB_USER_VERBS_CMD_FLAG_EXTENDED;
	d = find(hdr.command & IB_USER_VERBS_CMD_COMMAND_MASK, ex);
	if (!d) {
		sim_info("uverbs command %#x not supported", hdr.command);
		return EOPNOTSUPP;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return ENOMEM;
	c->ctx = ctx;
	c->ex = ex;
	if (!ex) {
		err = EINVAL;
		if ((size_t)hdr.in_words * 4 != count || count - sizeof(hdr) < d->req_size)
			goto out;
		c->req = buf + sizeof(hdr);
		c->req_len = d->req_size;
		c->drv = c->req + d->req_size;
		c->drv_len = count - sizeof(hdr) - d->req_size;
		core_room = d->resp_size;
		drv_room = (size_t)hdr.out_words * 4;
		if (d->has_resp) {
			memcpy(&resp_ptr, c->req, sizeof(resp_ptr));
			err = ENOSPC;
			if (drv_room < core_room)
				goto out;
			drv_room -= core_room;
		} else {
			drv_room = 0;
		}
	} else {
		struct ib_uverbs_ex_cmd_hdr exh;
		size_t in = (size_t)hdr.in_words * 8, pin;

		err = EINVAL;
		if (count < sizeof(hdr) + sizeof(exh))
			goto out;
		memcpy(&exh, buf + sizeof(hdr), sizeof(exh));
		pin = (size_t)exh.provider_in_words * 8;
		if (sizeof(hdr) + sizeof(exh) + in + pin != count || exh.cmd_hdr_reserved)
			goto out;
		c->req = buf + sizeof(hdr) + sizeof(exh);
		c->req_len = in;
		c->drv = c->req + in;
		c->drv_len = pin;
		resp_ptr = exh.response;
		core_room = (size_t)hdr.out_words * 8;
		drv_room = (size_t)exh.provider_out_words * 8;
	}
	c->out_core = core_room;
	c->out_drv = drv_room;

	sim_lock();
	if (!ctx->live && d->num != IB_USER_VERBS_CMD_GET_CONTEXT)
		err = EINVAL; /* every command needs a context first */
	else
		err = d->fn ? d->fn(c) : destroy(c, d);
	if (!err && resp_ptr)
		err = copy_out(resp_ptr, c, core_room, drv_room);
	sim_unlock();
	*created = c->context_created;
	if (err)
		sim_info("%s: %s", d->name, strerror(err));
	else
		sim_dbg("%s done", d->name);
out:
	free(c);
	return err;
}

ssize_t sim_uverbs_write(struct sim_ctx *ctx, const void *buf, size_t count)
{
	uint8_t *copy;
	bool created = false;
	int err;

	/* Read the request through the DMA path so a bad pointer yields EFAULT, as from the
	 * kernel, instead of a crash in here. */
	if (count > MAX_CMD) {
		errno = EINVAL;
		return -1;
	}
	copy = malloc(count ? count : 1);
	if (!copy) {
		errno = ENOMEM;
		return -1;
	}
	err = sim_dma_read(copy, (uint64_t)(uintptr_t)buf, count);
	if (!err)
		err = run(ctx, copy, count, &created);
	free(copy);
	if (created)
		sim_thread_ensure();
	if (err) {
		errno = err;
		return -1;
	}
	return (ssize_t)count;
}
