/* MODIFY_QP: the IB state machine with the required and optional attribute masks of
 * every legal transition per transport (IB spec 11.2.5.3, as the kernel enforces them),
 * range checks on the values, and the side effects the device sees. */
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "../common/log.h"
#include "model.h"
#include "world.h"

enum { T_UD, T_UC, T_RC, T_XI, T_XT, T_RAW, T_N };

struct trans {
	bool valid;
	uint32_t req[T_N], opt[T_N];
};

#define S IBV_QP_STATE
#define CUR IBV_QP_CUR_STATE
#define ACC IBV_QP_ACCESS_FLAGS
#define PKEY IBV_QP_PKEY_INDEX
#define PORT IBV_QP_PORT
#define QKEY IBV_QP_QKEY
#define AV IBV_QP_AV
#define MTU IBV_QP_PATH_MTU
#define TMO IBV_QP_TIMEOUT
#define RCNT IBV_QP_RETRY_CNT
#define RNR IBV_QP_RNR_RETRY
#define RQPSN IBV_QP_RQ_PSN
#define SQPSN IBV_QP_SQ_PSN
#define RDA IBV_QP_MAX_QP_RD_ATOMIC
#define DRDA IBV_QP_MAX_DEST_RD_ATOMIC
#define ALT IBV_QP_ALT_PATH
#define MINRNR IBV_QP_MIN_RNR_TIMER
#define MIG IBV_QP_PATH_MIG_STATE
#define DQPN IBV_QP_DEST_QPN
#define SQDN IBV_QP_EN_SQD_ASYNC_NOTIFY

#define NSTATES (IBV_QPS_ERR + 1)

/* Rows are the current state, columns the next one. */
static const struct trans table[NSTATES][NSTATES] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_INIT] = { .valid = true,
			.req = { [T_UD] = PKEY | PORT | QKEY, [T_UC] = PKEY | PORT | ACC,
				 [T_RC] = PKEY | PORT | ACC, [T_XI] = PKEY | PORT | ACC,
				 [T_XT] = PKEY | PORT | ACC, [T_RAW] = PORT } },
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_INIT] = { .valid = true,
			.opt = { [T_UD] = PKEY | PORT | QKEY, [T_UC] = PKEY | PORT | ACC,
				 [T_RC] = PKEY | PORT | ACC, [T_XI] = PKEY | PORT | ACC,
				 [T_XT] = PKEY | PORT | ACC, [T_RAW] = PORT } },
		[IBV_QPS_RTR] = { .valid = true,
			.req = { [T_UC] = AV | MTU | DQPN | RQPSN,
				 [T_RC] = AV | MTU | DQPN | RQPSN | DRDA | MINRNR,
				 [T_XI] = AV | MTU | DQPN | RQPSN,
				 [T_XT] = AV | MTU | DQPN | RQPSN | DRDA | MINRNR },
			.opt = { [T_UD] = PKEY | QKEY, [T_UC] = ALT | ACC | PKEY,
				 [T_RC] = ALT | ACC | PKEY, [T_XI] = ALT | ACC | PKEY,
				 [T_XT] = ALT | ACC | PKEY } },
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true,
			.req = { [T_UD] = SQPSN, [T_UC] = SQPSN,
				 [T_RC] = TMO | RCNT | RNR | SQPSN | RDA,
				 [T_XI] = TMO | RCNT | RNR | SQPSN | RDA, [T_XT] = TMO | SQPSN },
			.opt = { [T_UD] = CUR | QKEY, [T_UC] = CUR | ALT | ACC | MIG,
				 [T_RC] = CUR | ALT | ACC | MINRNR | MIG,
				 [T_XI] = CUR | ALT | ACC | MIG,
				 [T_XT] = CUR | ALT | ACC | MINRNR | MIG } },
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true,
			.opt = { [T_UD] = CUR | QKEY, [T_UC] = CUR | ACC | ALT | MIG,
				 [T_RC] = CUR | ACC | ALT | MIG | MINRNR,
				 [T_XI] = CUR | ACC | ALT | MIG,
				 [T_XT] = CUR | ACC | ALT | MIG | MINRNR } },
		[IBV_QPS_SQD] = { .valid = true,
			.opt = { [T_UD] = SQDN, [T_UC] = SQDN, [T_RC] = SQDN, [T_XI] = SQDN,
				 [T_XT] = SQDN } },
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true,
			.opt = { [T_UD] = CUR | QKEY, [T_UC] = CUR | ALT | ACC | MIG,
				 [T_RC] = CUR | ALT | ACC | MINRNR | MIG,
				 [T_XI] = CUR | ALT | ACC | MIG,
				 [T_XT] = CUR | ALT | ACC | MINRNR | MIG } },
		[IBV_QPS_SQD] = { .valid = true,
			.opt = { [T_UD] = PKEY | QKEY, [T_UC] = AV | ALT | ACC | PKEY | MIG,
				 [T_RC] = PORT | AV | TMO | RCNT | RNR | RDA | DRDA | ALT | ACC |
					  PKEY | MINRNR | MIG,
				 [T_XI] = PORT | AV | TMO | RCNT | RNR | RDA | ALT | ACC | PKEY | MIG,
				 [T_XT] = PORT | AV | TMO | DRDA | ALT | ACC | PKEY | MINRNR | MIG } },
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true,
			.opt = { [T_UD] = CUR | QKEY, [T_UC] = CUR | ACC } },
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
	},
};

static int tclass(uint8_t type)
{
	switch (type) {
	case IBV_QPT_UD: return T_UD;
	case IBV_QPT_UC: return T_UC;
	case IBV_QPT_RC: return T_RC;
	case IBV_QPT_XRC_SEND: return T_XI;
	case IBV_QPT_RAW_PACKET: return T_RAW;
	default: return T_XT;
	}
}

#define QP_ACCESS_OK \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	 IBV_ACCESS_REMOTE_ATOMIC)

static int check_values(const struct sim_qp *qp, const struct sim_qp_attr *a)
{
	int nports = qp->ctx->dev->nports;
	uint32_t m = a->mask;

	if ((m & PORT) && (a->port < 1 || a->port > nports))
		return EINVAL;
	/* Raw Ethernet frames go out of an Ethernet port only. */
	if ((m & PORT) && qp->type == IBV_QPT_RAW_PACKET && !qp->ctx->dev->port[a->port].eth)
		return EINVAL;
	if ((m & PKEY) && a->pkey_index >= SIM_PKEY_TBL_LEN)
		return EINVAL;
	if ((m & MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))
		return EINVAL;
	if ((m & AV) && ((a->path.port > nports) ||
			 (a->path.grh && a->path.sgid_index >= SIM_GID_TBL_LEN)))
		return EINVAL;
	/* RoCE has no LIDs: a path on an Ethernet port must name a GID. */
	if ((m & AV) && !a->path.grh &&
	    qp->ctx->dev->port[a->path.port ? a->path.port :
			       (m & PORT) ? a->port : qp->port].eth)
		return EINVAL;
	if ((m & ALT) && (a->alt_port < 1 || a->alt_port > nports))
		return EINVAL;
	if ((m & TMO) && a->timeout > 31)
		return EINVAL;
	if ((m & RCNT) && a->retry_cnt > 7)
		return EINVAL;
	if ((m & RNR) && a->rnr_retry > 7)
		return EINVAL;
	if ((m & MINRNR) && a->min_rnr_timer > 31)
		return EINVAL;
	if ((m & RDA) && a->max_rd_atomic > 16)
		return EINVAL;
	if ((m & DRDA) && a->max_dest_rd_atomic > 16)
		return EINVAL;
	if ((m & ACC) && (a->access & ~QP_ACCESS_OK))
		return EINVAL;
	if ((m & DQPN) && a->dest_qpn > 0xffffff)
		return EINVAL;
	if ((m & IBV_QP_CUR_STATE) && a->cur_state != qp->state)
		return EINVAL;
	return 0;
}

int sim_qp_modify(struct sim_qp *qp, const struct sim_qp_attr *a)
{
	uint8_t next = (a->mask & S) ? a->state : qp->state;
	const struct trans *t;
	int tc = tclass(qp->type), err;
	uint32_t allowed;

	if (next >= NSTATES || qp->state >= NSTATES)
		return EINVAL;
	t = &table[qp->state][next];
	if (qp->dc) {
		if ((err = sim_dc_modify_mask(qp, next, a->mask)))
			return err;
	} else {
		if (!t->valid)
			return EINVAL;
		allowed = S | t->req[tc] | t->opt[tc];
		if ((a->mask & t->req[tc]) != t->req[tc] || (a->mask & ~allowed))
			return EINVAL;
	}
	if ((err = check_values(qp, a)))
		return err;
	/* The DCT exists in the HCA, with its number, from RTR on. */
	if (qp->dc == SIM_DC_DCT && next == IBV_QPS_RTR && (err = sim_dct_number(qp)))
		return err;

	if (a->mask & PORT)
		qp->port = a->port;
	if (a->mask & PKEY)
		qp->pkey_index = a->pkey_index;
	if (a->mask & QKEY)
		qp->qkey = a->qkey;
	if (a->mask & ACC)
		qp->access = a->access;
	if (a->mask & AV) {
		qp->path = a->path;
		if (!qp->path.port)
			qp->path.port = qp->port;
	}
	if (a->mask & ALT) {
		qp->alt_path = a->alt_path;
		qp->alt_port = a->alt_port;
		qp->alt_timeout = a->alt_timeout;
		qp->alt_pkey_index = a->alt_pkey_index;
	}
	if (a->mask & MTU)
		qp->path_mtu = a->path_mtu;
	if (a->mask & TMO)
		qp->timeout = a->timeout;
	if (a->mask & RCNT)
		qp->retry_cnt = a->retry_cnt;
	if (a->mask & RNR)
		qp->rnr_retry = a->rnr_retry;
	if (a->mask & RQPSN)
		qp->rq_psn = a->rq_psn & 0xffffff;
	if (a->mask & SQPSN)
		qp->sq_psn = a->sq_psn & 0xffffff;
	if (a->mask & RDA)
		qp->max_rd_atomic = a->max_rd_atomic;
	if (a->mask & DRDA)
		qp->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (a->mask & MINRNR)
		qp->min_rnr_timer = a->min_rnr_timer;
	if (a->mask & MIG)
		qp->path_mig_state = a->path_mig_state;
	if (a->mask & DQPN)
		qp->dest_qpn = a->dest_qpn;
	if (a->mask & SQDN)
		qp->en_sqd_async = a->en_sqd_async;

	/* libmlx5 zeroes both doorbell records after a move to RESET; the device must start
	 * over from 0 as well, and must not act on the stale records in between. */
	if (next == IBV_QPS_RESET || (qp->state == IBV_QPS_RESET && next == IBV_QPS_INIT)) {
		qp->sq_ci = 0;
		qp->rq_ci = 0;
		qp->retrying = false;
	}
	if (next != qp->state)
		sim_dbg("QP 0x%x: state %d -> %d", qp->qpn, qp->state, next);
	qp->state = next;
	sim_qp_publish(qp);
	return 0;
}
