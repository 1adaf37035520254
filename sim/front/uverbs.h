/* The uverbs command channels: legacy write() commands (kernel-headers
 * rdma/ib_user_verbs.h) and the ioctl() framework (ioctl.c). */
#ifndef FVSIM_UVERBS_H
#define FVSIM_UVERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

struct sim_ctx;
struct mlx5_ib_alloc_ucontext_resp;

/* Completion vectors per context (GET_CONTEXT); CREATE_CQ refuses higher ones. */
#define SIM_COMP_VECTORS 1

/* write(2) on a fake uverbs fd: returns count on success, else -1 with errno set. */
ssize_t sim_uverbs_write(struct sim_ctx *ctx, const void *buf, size_t count);
/* ioctl(2) on a fake uverbs fd (ioctl.c): 0 or the errno the kernel would give. */
int sim_uverbs_ioctl(struct sim_ctx *ctx, unsigned int req, uint64_t arg);

/* One decoded command, as the handlers see it. */
struct sim_cmd {
	struct sim_ctx *ctx;
	bool ex;
	const uint8_t *req; /* core request (legacy: starting with the response pointer) */
	size_t req_len;
	const uint8_t *drv; /* driver (mlx5) request */
	size_t drv_len;
	uint8_t resp[512]; /* core response, filled by the handler */
	size_t resp_len;
	uint8_t drv_resp[512]; /* driver response */
	size_t drv_resp_len;
	size_t out_core; /* room the caller gave for the core response */
	size_t out_drv; /* room the caller gave for the driver response */
	bool context_created; /* GET_CONTEXT succeeded: start the device thread */
};

/* Copies a request struct out of the command, zero-filling a short one. */
#define CMD_REQ(c, var) cmd_copy(&(var), sizeof(var), (c)->req, (c)->req_len)
#define CMD_DRV(c, var) cmd_copy(&(var), sizeof(var), (c)->drv, (c)->drv_len)
#define CMD_RESP(c, var) cmd_resp((c), &(var), sizeof(var))
#define CMD_DRV_RESP(c, var) cmd_drv_resp((c), &(var), sizeof(var))
/* The object of type uobj that handle names in the command's context; a handler whose
 * handle names nothing (or another type) returns EINVAL, as the kernel's lookup does. */
#define CMD_OBJ(c, handle, uobj, var)                                                  \
	do {                                                                           \
		if (!((var) = sim_handle_get((c)->ctx, (handle), (uobj))))             \
			return EINVAL;                                                 \
	} while (0)

static inline void cmd_copy(void *dst, size_t n, const uint8_t *src, size_t len)
{
	memset(dst, 0, n);
	memcpy(dst, src, len < n ? len : n);
}

static inline void cmd_resp(struct sim_cmd *c, const void *p, size_t n)
{
	memcpy(c->resp, p, n);
	c->resp_len = n;
}

static inline void cmd_drv_resp(struct sim_cmd *c, const void *p, size_t n)
{
	memcpy(c->drv_resp, p, n);
	c->drv_resp_len = n;
}

/* The mlx5 ucontext answer of GET_CONTEXT and QUERY_CONTEXT, without BlueFlame registers
 * (cmd_ctx.c). */
void sim_ucontext_fill(const struct sim_ctx *ctx, struct mlx5_ib_alloc_ucontext_resp *r);
/* An async-event pipe: close-on-exec, its write end non-blocking. 0, or -1 with errno. */
int sim_async_pipe(int fds[2]);

/* Handlers, one file per object family; each returns 0 or an errno. */
int sim_cmd_get_context(struct sim_cmd *c);
int sim_cmd_query_device(struct sim_cmd *c);
int sim_cmd_query_device_ex(struct sim_cmd *c);
int sim_cmd_query_port(struct sim_cmd *c);
int sim_cmd_create_comp_channel(struct sim_cmd *c);
int sim_cmd_alloc_pd(struct sim_cmd *c);
int sim_cmd_reg_mr(struct sim_cmd *c);
int sim_cmd_rereg_mr(struct sim_cmd *c);
int sim_cmd_alloc_mw(struct sim_cmd *c);
int sim_cmd_create_ah(struct sim_cmd *c);
int sim_cmd_open_xrcd(struct sim_cmd *c);
int sim_cmd_create_cq(struct sim_cmd *c);
int sim_cmd_create_cq_ex(struct sim_cmd *c);
int sim_cmd_resize_cq(struct sim_cmd *c);
int sim_cmd_destroy_cq(struct sim_cmd *c);
int sim_cmd_create_qp(struct sim_cmd *c);
int sim_cmd_create_qp_ex(struct sim_cmd *c);
int sim_cmd_query_qp(struct sim_cmd *c);
int sim_cmd_modify_qp(struct sim_cmd *c);
int sim_cmd_modify_qp_ex(struct sim_cmd *c);
int sim_cmd_destroy_qp(struct sim_cmd *c);
int sim_cmd_create_flow(struct sim_cmd *c);
int sim_cmd_destroy_flow(struct sim_cmd *c);
/* The kernel's capable(CAP_NET_RAW) for the calling process (raw QPs, steering rules). */
bool sim_cap_net_raw(void);
int sim_cmd_create_srq(struct sim_cmd *c);
int sim_cmd_create_xsrq(struct sim_cmd *c);
int sim_cmd_modify_srq(struct sim_cmd *c);
int sim_cmd_query_srq(struct sim_cmd *c);
int sim_cmd_destroy_srq(struct sim_cmd *c);

#endif
