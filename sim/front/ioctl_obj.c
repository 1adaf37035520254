/* Object methods an importer uses to adopt objects of a shared context: mlx5's PD_QUERY
 * (ibv_import_pd: the PD number behind a handle) and QUERY_MR (ibv_import_mr: keys,
 * length and address behind a handle). Both only read; the objects stay the context's,
 * whichever ibv_context named them. */
#include <errno.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_cmds.h>

#include "../model/obj.h"
#include "handles.h"
#include "ioctl.h"

static int pd_query(struct sim_bundle *b)
{
	const struct sim_pd *pd = sim_ioctl_obj(b, MLX5_IB_ATTR_QUERY_PD_HANDLE);

	return sim_ioctl_copy_to(b, MLX5_IB_ATTR_QUERY_PD_RESP_PDN, &pd->pdn, sizeof(pd->pdn));
}

static int query_mr(struct sim_bundle *b)
{
	const struct sim_mr *mr = sim_ioctl_obj(b, UVERBS_ATTR_QUERY_MR_HANDLE);
	int err;

	/* lkey and rkey are one mkey on this device. */
	if ((err = sim_ioctl_copy_to(b, UVERBS_ATTR_QUERY_MR_RESP_LKEY, &mr->key, sizeof(mr->key))) ||
	    (err = sim_ioctl_copy_to(b, UVERBS_ATTR_QUERY_MR_RESP_RKEY, &mr->key, sizeof(mr->key))) ||
	    (err = sim_ioctl_copy_to(b, UVERBS_ATTR_QUERY_MR_RESP_LENGTH, &mr->len, sizeof(mr->len))))
		return err;
	err = sim_ioctl_copy_to(b, UVERBS_ATTR_QUERY_MR_RESP_IOVA, &mr->iova, sizeof(mr->iova));
	return err == ENOENT ? 0 : err; /* the address is optional */
}

#define IDR(id_, type) { (id_), SIM_ATTR_IDR_READ, true, (type), 0, 0 }
#define OUT(id_, mand, n) { (id_), SIM_ATTR_PTR_OUT, (mand), 0, (n), (n) }

const struct sim_ioctl_method sim_ioctl_obj_methods[] = {
	{ UVERBS_OBJECT_PD, MLX5_IB_METHOD_PD_QUERY, "PD_QUERY", pd_query,
	  { IDR(MLX5_IB_ATTR_QUERY_PD_HANDLE, SIM_UOBJ_PD),
	    OUT(MLX5_IB_ATTR_QUERY_PD_RESP_PDN, true, 4) } },
	{ UVERBS_OBJECT_MR, UVERBS_METHOD_QUERY_MR, "QUERY_MR", query_mr,
	  { IDR(UVERBS_ATTR_QUERY_MR_HANDLE, SIM_UOBJ_MR),
	    OUT(UVERBS_ATTR_QUERY_MR_RESP_LKEY, true, 4),
	    OUT(UVERBS_ATTR_QUERY_MR_RESP_RKEY, true, 4),
	    OUT(UVERBS_ATTR_QUERY_MR_RESP_LENGTH, true, 8),
	    OUT(UVERBS_ATTR_QUERY_MR_RESP_IOVA, false, 8) } },
	{ 0 },
};
