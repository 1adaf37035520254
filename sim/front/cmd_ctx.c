/* Context and device commands: GET_CONTEXT with the mlx5 ucontext response libmlx5 needs
 * (docs/design.md §6.1), QUERY_DEVICE, QUERY_PORT, CREATE_COMP_CHANNEL. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>

#include "../common/config.h"
#include "../engine/now.h"
#include "../model/world.h"
#include "fdtab.h"
#include "uverbs.h"

/* The mlx5 ucontext answer shared by GET_CONTEXT and the ioctl QUERY_CONTEXT (an imported
 * context reads it there). tot_bfregs stays 0: only GET_CONTEXT allocates static
 * BlueFlame registers; the kernel's query reports none either. */
void sim_ucontext_fill(const struct sim_ctx *ctx, struct mlx5_ib_alloc_ucontext_resp *r)
{
	memset(r, 0, sizeof(*r));
	r->qp_tab_size = 1u << 18;
	r->bf_reg_size = 512; /* two 256-byte BlueFlame halves per register */
	r->cache_line_size = 64;
	r->max_sq_desc_sz = 1008; /* 63 16-byte units: the DS field's limit */
	r->max_rq_desc_sz = 512;
	r->max_send_wqebb = 32768;
	r->max_recv_wr = 32768;
	r->max_srq_recv_wr = 32767;
	r->num_ports = (uint16_t)ctx->dev->nports;
	r->response_length = sizeof(*r);
	r->cqe_version = ctx->cqe_version;
	r->log_uar_size = 12;
	r->num_uars_per_page = 1;
	/* CQEs carry timestamps; libmlx5 maps the page that converts them (clock.c). */
	r->clock_info_versions = 1u << MLX5_IB_CLOCK_INFO_V1;
	/* CREATE_AH answers the destination MAC of RoCE address handles (libmlx5 asks the
	 * kernel for it instead of resolving it through netlink); QUERY_DEVICE_EX has the
	 * mlx5 part with the TSO caps. */
	r->cmds_supp_uhw = MLX5_USER_CMDS_SUPP_UHW_QUERY_DEVICE | MLX5_USER_CMDS_SUPP_UHW_CREATE_AH;
}

/* The write end is non-blocking so undelivered events never stall the device. */
int sim_async_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC))
		return -1;
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	return 0;
}

int sim_cmd_get_context(struct sim_cmd *c)
{
	struct sim_ctx *ctx = c->ctx;
	struct mlx5_ib_alloc_ucontext_req_v2 dreq;
	struct ib_uverbs_get_context_resp resp = { 0 };
	struct mlx5_ib_alloc_ucontext_resp dresp = { 0 };
	int fds[2];

	if (ctx->live)
		return EINVAL;
	CMD_DRV(c, dreq);
	/* No DevX: the kernel refuses a DevX context on a device whose log_max_uctx is 0
	 * (EINVAL) and flags it does not know (EOPNOTSUPP). libmlx5 asks for DevX first and
	 * retries without it; mlx5dv_open_device(DEVX) fails, as on such a device. */
	if (dreq.flags & ~(uint32_t)MLX5_IB_ALLOC_UCTX_DEVX)
		return EOPNOTSUPP;
	if (dreq.flags & MLX5_IB_ALLOC_UCTX_DEVX)
		return EINVAL;
	/* CQE version 1 (user index in CQEs) when libmlx5 can take it, as the kernel does. */
	ctx->cqe_version = c->drv_len > offsetof(struct mlx5_ib_alloc_ucontext_req_v2,
						  max_cqe_version) && dreq.max_cqe_version ? 1 : 0;
	/* A real async fd: libmlx5 takes an ioctl-only path when it is missing. */
	if (sim_async_pipe(fds))
		return errno;
	ctx->async_rd = fds[0];
	ctx->async_wr = fds[1];
	sim_fd_set(fds[0], ctx, SIM_FD_ASYNC);
	resp.async_fd = (uint32_t)fds[0];
	resp.num_comp_vectors = SIM_COMP_VECTORS;

	sim_ucontext_fill(ctx, &dresp);
	dresp.tot_bfregs = 16; /* non-zero keeps libmlx5 on the static UAR path */
	CMD_RESP(c, resp);
	CMD_DRV_RESP(c, dresp);
	ctx->live = true;
	c->context_created = true;
	return 0;
}

#define DEV_CAP_FLAGS                                                                    \
	(IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR | IBV_DEVICE_CHANGE_PHY_PORT | \
	 IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_SYS_IMAGE_GUID |                       \
	 IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_N_NOTIFY_CQ | IBV_DEVICE_XRC |             \
	 IBV_DEVICE_RAW_IP_CSUM | IBV_DEVICE_MANAGED_FLOW_STEERING |                      \
	 IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B)

static void fill_device(const struct sim_dev *dev, struct ib_uverbs_query_device_resp *r)
{
	r->fw_ver = 16ull << 32 | 35ull << 16 | 2000;
	r->node_guid = htobe64(dev->node_guid);
	r->sys_image_guid = htobe64(dev->node_guid);
	r->max_mr_size = ~0ull;
	r->page_size_cap = ~4095ull;
	r->vendor_id = SIM_VENDOR_ID;
	r->vendor_part_id = SIM_VENDOR_PART_ID;
	r->max_qp = 1u << 18;
	r->max_qp_wr = 32768;
	r->device_cap_flags = DEV_CAP_FLAGS;
	r->max_sge = 30;
	r->max_sge_rd = 30;
	r->max_cq = 1u << 24;
	r->max_cqe = (1u << 22) - 1;
	r->max_mr = 1u << 24;
	r->max_mw = 1u << 24; /* windows are mkeys like MRs */
	r->max_pd = 1u << 24;
	r->max_qp_rd_atom = 16;
	r->max_res_rd_atom = 16u << 18;
	r->max_qp_init_rd_atom = 16;
	r->atomic_cap = IBV_ATOMIC_HCA;
	r->max_ah = 1u << 30;
	r->max_srq = 1u << 23;
	r->max_srq_wr = 32767;
	r->max_srq_sge = 31;
	r->max_pkeys = SIM_PKEY_TBL_LEN;
	r->local_ca_ack_delay = 16;
	r->phys_port_cnt = (uint8_t)dev->nports;
}

int sim_cmd_query_device(struct sim_cmd *c)
{
	struct ib_uverbs_query_device_resp resp = { 0 };

	fill_device(c->ctx->dev, &resp);
	CMD_RESP(c, resp);
	return 0;
}

int sim_cmd_query_device_ex(struct sim_cmd *c)
{
	struct ib_uverbs_ex_query_device req;
	struct ib_uverbs_ex_query_device_resp resp = { 0 };
	struct mlx5_ib_query_device_resp dresp = { 0 };

	CMD_REQ(c, req);
	if (req.comp_mask || req.reserved)
		return EINVAL;
	fill_device(c->ctx->dev, &resp.base);
	resp.device_cap_flags_ex = DEV_CAP_FLAGS;
	resp.timestamp_mask = ~0ull; /* the 64-bit free-running clock of CQE timestamps */
	resp.hca_core_clock = SIM_CLOCK_KHZ;
	resp.raw_packet_caps = IB_UVERBS_RAW_PACKET_CAP_IP_CSUM;
	/* The mlx5 part: TSO on RAW_PACKET QPs (engine/tso.c). */
	dresp.response_length = sizeof(dresp);
	dresp.tso_caps.max_tso = SIM_MAX_TSO;
	dresp.tso_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
	/* DC as a ConnectX-5 has it: DCTs may ask for scatter to CQE (a request the device
	 * may leave unused: libmlx5 reads the data from the buffer when the CQE carries
	 * none), and no DCI streams (dci_streams_caps 0). */
	dresp.flags = MLX5_IB_QUERY_DEV_RESP_FLAGS_SCAT2CQE_DCT;
	CMD_DRV_RESP(c, dresp);
	/* Fields past the caller's room are not reported; it learns so from the length. */
	resp.response_length = (uint32_t)(c->out_core < sizeof(resp) ? c->out_core : sizeof(resp));
	CMD_RESP(c, resp);
	return 0;
}

int sim_cmd_query_port(struct sim_cmd *c)
{
	struct ib_uverbs_query_port req;
	struct ib_uverbs_query_port_resp resp = { 0 };
	const struct sim_dev *dev = c->ctx->dev;
	const struct sim_port *port;

	CMD_REQ(c, req);
	if (req.port_num < 1 || req.port_num > dev->nports)
		return EINVAL;
	port = &dev->port[req.port_num];
	resp.port_cap_flags = port->eth ? SIM_ETH_PORT_CAP_FLAGS : SIM_PORT_CAP_FLAGS;
	resp.max_msg_sz = 1u << 30;
	resp.gid_tbl_len = SIM_GID_TBL_LEN;
	resp.pkey_tbl_len = SIM_PKEY_TBL_LEN;
	resp.lid = port->lid;
	resp.sm_lid = port->eth ? 0 : 1;
	resp.state = IBV_PORT_ACTIVE;
	resp.max_mtu = IBV_MTU_4096;
	/* RoCE: the largest IB MTU that fits the Ethernet MTU, as the kernel reports it. */
	resp.active_mtu = port->eth ? IBV_MTU_1024 : IBV_MTU_4096;
	resp.max_vl_num = 4;
	resp.subnet_timeout = 18;
	resp.active_width = 2; /* 4X */
	resp.active_speed = 32; /* EDR */
	resp.phys_state = 5; /* LinkUp */
	resp.link_layer = port->eth ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
	CMD_RESP(c, resp);
	return 0;
}

int sim_cmd_create_comp_channel(struct sim_cmd *c)
{
	struct ib_uverbs_create_comp_channel_resp resp = { 0 };
	struct sim_channel *ch = calloc(1, sizeof(*ch));
	int fds[2];

	if (!ch)
		return ENOMEM;
	if (pipe2(fds, O_CLOEXEC)) {
		free(ch);
		return errno;
	}
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	ch->rd = fds[0];
	ch->wr = fds[1];
	sim_list_add_tail(&c->ctx->channels, &ch->link);
	sim_fd_set(fds[0], c->ctx, SIM_FD_COMP);
	resp.fd = (uint32_t)fds[0];
	CMD_RESP(c, resp);
	return 0;
}
