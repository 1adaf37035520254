/* The rules of the mlx5 kernel driver for Dynamically Connected QPs: which create flags
 * make a DCI or a DCT, and the exact attribute masks of the transitions each allows. */
#include <errno.h>

#include <infiniband/verbs.h>
#include <rdma/mlx5-abi.h>

#include "model.h"
#include "world.h"

#define ROLE_FLAGS (MLX5_QP_FLAG_TYPE_DCT | MLX5_QP_FLAG_TYPE_DCI)

int sim_dc_create_flags(uint32_t vendor, uint32_t core)
{
	/* A kernel on an HCA without DC refuses the type itself. */
	if (sim_world.cfg.no_dc)
		return EOPNOTSUPP;
	if ((vendor & ROLE_FLAGS) != MLX5_QP_FLAG_TYPE_DCT &&
	    (vendor & ROLE_FLAGS) != MLX5_QP_FLAG_TYPE_DCI)
		return EINVAL; /* neither or both */
	/* DCI streams need log_max_dci_stream_channels, which a ConnectX-5 lacks. */
	if (vendor & MLX5_QP_FLAG_DCI_STREAM)
		return EINVAL;
	if ((vendor & MLX5_QP_FLAG_TYPE_DCT) && core)
		return EINVAL;
	return 0;
}

uint8_t sim_dc_role(uint32_t vendor)
{
	return (vendor & MLX5_QP_FLAG_TYPE_DCT) ? SIM_DC_DCT : SIM_DC_DCI;
}

#define S IBV_QP_STATE
#define ACC IBV_QP_ACCESS_FLAGS
#define PKEY IBV_QP_PKEY_INDEX
#define PORT IBV_QP_PORT
#define AV IBV_QP_AV
#define MTU IBV_QP_PATH_MTU
#define MINRNR IBV_QP_MIN_RNR_TIMER

static bool exact(uint32_t mask, uint32_t req, uint32_t opt)
{
	return (mask & req) == req && !(mask & ~(req | opt));
}

/* The DCT is only ever configured: RESET -> INIT -> RTR, each with one exact mask. It
 * never leaves RTR but by being destroyed. */
static bool dct_ok(uint8_t cur, uint8_t next, uint32_t mask)
{
	if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
		return mask == (S | ACC | PKEY | PORT);
	if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR)
		return mask == (S | MINRNR | AV | MTU);
	return false;
}

/* A DCI has no destination, receive side or access flags of its own: RC's table without
 * them (the path is optional at RTR, as UCX passes one and pyverbs does not). */
static bool dci_ok(uint8_t cur, uint8_t next, uint32_t mask)
{
	if (next == IBV_QPS_RESET || (cur != IBV_QPS_RESET && next == IBV_QPS_ERR))
		return exact(mask, S, 0);
	if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
		return exact(mask, S | PKEY | PORT, 0);
	if (cur == IBV_QPS_INIT && next == IBV_QPS_INIT)
		return exact(mask, S, PKEY | PORT);
	if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR)
		return exact(mask, S | MTU, PKEY | AV);
	if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS)
		return exact(mask, S | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					   IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_SQ_PSN,
			     MINRNR);
	if (cur == IBV_QPS_RTS && next == IBV_QPS_RTS)
		return exact(mask, S, MINRNR);
	return false;
}

int sim_dc_modify_mask(const struct sim_qp *qp, uint8_t next, uint32_t mask)
{
	/* The kernel reads the target state from the mask; without it the QP stays put. */
	if (!(mask & S))
		return EINVAL;
	if (qp->dc == SIM_DC_DCT)
		return dct_ok(qp->state, next, mask) ? 0 : EINVAL;
	return dci_ok(qp->state, next, mask) ? 0 : EINVAL;
}

int sim_dct_query_mask(const struct sim_qp *qp, uint32_t mask)
{
	if (mask & ~(uint32_t)(S | ACC | PORT | MINRNR | AV | MTU | PKEY))
		return EINVAL;
	return qp->state == IBV_QPS_RTR ? 0 : EINVAL;
}
