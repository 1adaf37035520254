/* PD, MR, MW, AH and XRCD commands (their destruction is uverbs.c's LEG_DESTROY). */
#include <errno.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>

#include "../engine/remote.h"
#include "../model/model.h"
#include "../model/world.h"
#include "handles.h"
#include "uverbs.h"

int sim_cmd_alloc_pd(struct sim_cmd *c)
{
	struct ib_uverbs_alloc_pd_resp resp = { 0 };
	struct mlx5_ib_alloc_pd_resp dresp = { 0 };
	struct sim_pd *pd;
	int err = sim_pd_alloc(c->ctx, &pd);

	if (!err)
		err = sim_handle_bind(c->ctx, SIM_UOBJ_PD, pd, &pd->handle);
	if (err)
		return err;
	resp.pd_handle = pd->handle;
	dresp.pdn = pd->pdn;
	CMD_RESP(c, resp);
	CMD_DRV_RESP(c, dresp);
	return 0;
}

int sim_cmd_reg_mr(struct sim_cmd *c)
{
	struct ib_uverbs_reg_mr req;
	struct ib_uverbs_reg_mr_resp resp = { 0 };
	struct sim_pd *pd;
	struct sim_mr *mr;
	int err;

	CMD_REQ(c, req);
	CMD_OBJ(c, req.pd_handle, SIM_UOBJ_PD, pd);
	err = sim_mr_reg(c->ctx, pd, req.start, req.length, req.hca_va, req.access_flags, &mr);
	if (!err)
		err = sim_handle_bind(c->ctx, SIM_UOBJ_MR, mr, &mr->handle);
	if (err)
		return err;
	resp.mr_handle = mr->handle;
	resp.lkey = mr->key;
	resp.rkey = mr->key;
	CMD_RESP(c, resp);
	return 0;
}

int sim_cmd_rereg_mr(struct sim_cmd *c)
{
	struct ib_uverbs_rereg_mr req;
	struct ib_uverbs_rereg_mr_resp resp = { 0 };
	struct sim_pd *pd = NULL;
	struct sim_mr *mr;
	int err;

	CMD_REQ(c, req);
	/* Flag checks come before the handle lookups in the kernel. */
	if (!req.flags)
		return EINVAL;
	if (req.flags & ~(uint32_t)(SIM_REREG_TRANS | SIM_REREG_PD | SIM_REREG_ACCESS))
		return EOPNOTSUPP;
	CMD_OBJ(c, req.mr_handle, SIM_UOBJ_MR, mr);
	if (req.flags & SIM_REREG_PD) {
		CMD_OBJ(c, req.pd_handle, SIM_UOBJ_PD, pd);
	}
	/* A new range: the old one is the application's again. */
	if (req.flags & SIM_REREG_TRANS)
		sim_remote_revoke_mr(mr);
	err = sim_mr_rereg(mr, req.flags, pd, req.start, req.length, req.hca_va,
			   req.access_flags);
	if (err)
		return err;
	resp.lkey = mr->key;
	resp.rkey = mr->key;
	CMD_RESP(c, resp);
	return 0;
}

/* The kernel checks the type (EINVAL) before the driver; mlx5 takes no driver request
 * from libmlx5 and, with no room for one, writes no driver response. */
int sim_cmd_alloc_mw(struct sim_cmd *c)
{
	struct ib_uverbs_alloc_mw req;
	struct ib_uverbs_alloc_mw_resp resp = { 0 };
	struct sim_pd *pd;
	struct sim_mw *mw;
	int err;

	CMD_REQ(c, req);
	CMD_OBJ(c, req.pd_handle, SIM_UOBJ_PD, pd);
	err = sim_mw_alloc(c->ctx, pd, req.mw_type, &mw);
	if (!err)
		err = sim_handle_bind(c->ctx, SIM_UOBJ_MW, mw, &mw->handle);
	if (err)
		return err;
	resp.mw_handle = mw->handle;
	resp.rkey = mw->key;
	CMD_RESP(c, resp);
	return 0;
}

/* On an IB port libmlx5 builds address vectors itself; on an Ethernet port it asks for
 * the destination MAC here (a RoCE AH needs a GRH). Also keeps the PD busy while the AH
 * lives. */
int sim_cmd_create_ah(struct sim_cmd *c)
{
	struct ib_uverbs_create_ah req;
	struct ib_uverbs_create_ah_resp resp = { 0 };
	struct mlx5_ib_create_ah_resp dresp = { 0 };
	struct sim_pd *pd;
	struct sim_ah *ah;
	int err;

	CMD_REQ(c, req);
	CMD_OBJ(c, req.pd_handle, SIM_UOBJ_PD, pd);
	if (req.attr.port_num < 1 || req.attr.port_num > c->ctx->dev->nports)
		return EINVAL;
	if (c->ctx->dev->port[req.attr.port_num].eth) {
		if (!req.attr.is_global)
			return EINVAL;
		err = sim_gid_to_mac(req.attr.grh.dgid, dresp.dmac);
		if (err)
			return err;
	}
	err = sim_ah_create(c->ctx, pd, &ah);
	if (!err)
		err = sim_handle_bind(c->ctx, SIM_UOBJ_AH, ah, &ah->handle);
	if (err)
		return err;
	resp.ah_handle = ah->handle;
	dresp.response_length = sizeof(dresp);
	CMD_RESP(c, resp);
	CMD_DRV_RESP(c, dresp);
	return 0;
}

int sim_cmd_open_xrcd(struct sim_cmd *c)
{
	struct ib_uverbs_open_xrcd req;
	struct ib_uverbs_open_xrcd_resp resp = { 0 };
	struct sim_xrcd *x;
	uint32_t handle;
	int err;

	CMD_REQ(c, req);
	err = sim_xrcd_open(c->ctx, (int)req.fd, (int)req.oflags, &x);
	if (!err)
		err = sim_handle_bind(c->ctx, SIM_UOBJ_XRCD, x, &handle);
	if (err)
		return err;
	resp.xrcd_handle = handle;
	CMD_RESP(c, resp);
	return 0;
}
