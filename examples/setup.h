/* Verbs set-up written once: open a device, fill an address vector for its own port,
 * create a QP and walk it to RTS. The examples (common.c), the benchmarks (bench/bench.h)
 * and the tests (tests/lib/sim-util.h) all use it; each wraps it in its own way of
 * failing (exit with a message, abort the benchmark, a test assertion). It lives with the
 * examples because they are built stand-alone against the installed headers and must not
 * reach outside their folder; the other two include it from here.
 *
 * Every function returns 0 or an errno and, on failure, names the step that failed in
 * *what. Header-only, C11 and C++17. Slow path only; the data path is fastverbs. */
#ifndef EXAMPLES_SETUP_H
#define EXAMPLES_SETUP_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>

struct setup_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr port;
	union ibv_gid gid;		/* RoCE: the GID of row gid_index */
	int gid_index;			/* RoCE: the GID row used; -1 on InfiniBand */
	uint8_t port_num;
	uint16_t lid;			/* port.lid */
};

/* Opens the device called name (NULL: the index-th one), queries port_num, which must be
 * active, reads GID row gid_index on an Ethernet port, and allocates a PD. ENODEV: no
 * such device. */
static inline int setup_open(struct setup_dev *d, const char *name, int index, uint8_t port_num,
			     int gid_index, const char **what)
{
	struct ibv_device **list;
	int n = 0, err;

	memset(d, 0, sizeof(*d));
	d->port_num = port_num;
	*what = "ibv_get_device_list";
	list = ibv_get_device_list(&n);
	if (!list && errno != ENOSYS)	/* ENOSYS: no RDMA stack in the kernel, so no device */
		return errno ? errno : ENODEV;
	for (int i = 0; i < n && !d->ctx; i++) {
		if (name ? strcmp(ibv_get_device_name(list[i]), name) : i != index)
			continue;
		*what = "ibv_open_device";
		d->ctx = ibv_open_device(list[i]);
		err = d->ctx ? 0 : errno;
		if (err) {
			ibv_free_device_list(list);
			return err;
		}
	}
	if (list)
		ibv_free_device_list(list);
	*what = "no such RDMA device";
	if (!d->ctx)
		return ENODEV;
	*what = "ibv_query_port";
	if ((err = ibv_query_port(d->ctx, port_num, &d->port)))
		return err;
	d->lid = d->port.lid;
	*what = "port not active";
	if (d->port.state != IBV_PORT_ACTIVE)
		return ENETDOWN;
	d->gid_index = -1;
	if (d->port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		d->gid_index = gid_index;
		*what = "ibv_query_gid";
		if (ibv_query_gid(d->ctx, port_num, gid_index, &d->gid))
			return errno ? errno : EINVAL;
	}
	*what = "ibv_alloc_pd";
	d->pd = ibv_alloc_pd(d->ctx);
	return d->pd ? 0 : errno;
}

/* A path to dlid on port_num; with dgid (RoCE) a GRH from source GID row sgid_index. */
static inline void setup_path(struct ibv_ah_attr *ah, uint16_t dlid, uint8_t port_num,
			      const union ibv_gid *dgid, int sgid_index, uint8_t hop_limit)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = dlid;
	ah->port_num = port_num;
	if (dgid) {
		ah->is_global = 1;
		ah->grh.dgid = *dgid;
		ah->grh.sgid_index = (uint8_t)sgid_index;
		ah->grh.hop_limit = hop_limit;
	}
}

/* The path to d's own port: its LID, and on RoCE a GRH to its GID with hop_limit. */
static inline void setup_ah_attr(const struct setup_dev *d, struct ibv_ah_attr *ah, uint8_t hop_limit)
{
	setup_path(ah, d->lid, d->port_num, d->gid_index >= 0 ? &d->gid : NULL, d->gid_index,
		   hop_limit);
}

/* What a QP is created with; a zero count is zero (callers choose their defaults). */
struct setup_qp_cfg {
	enum ibv_qp_type type;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline;
	int sq_sig_all;
	uint64_t send_ops;		/* ibv_wr_* operations (IBV_QP_EX_WITH_*), 0: none */
};

static inline int setup_qp(struct ibv_pd *pd, const struct setup_qp_cfg *c, struct ibv_qp **qp,
			   const char **what)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = c->type;
	a.send_cq = c->scq;
	a.recv_cq = c->rcq;
	a.srq = c->srq;
	a.cap.max_send_wr = c->max_send_wr;
	a.cap.max_recv_wr = c->max_recv_wr;
	a.cap.max_send_sge = c->max_send_sge;
	a.cap.max_recv_sge = c->max_recv_sge;
	a.cap.max_inline_data = c->max_inline;
	a.sq_sig_all = c->sq_sig_all;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	if (c->send_ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = c->send_ops;
	}
	*what = "ibv_create_qp_ex";
	*qp = ibv_create_qp_ex(pd->context, &a);
	return *qp ? 0 : errno;
}

/* How a connected QP (RC, UC, XRC) goes from RESET to RTS, and a DCI or a DCT to theirs. */
struct setup_conn {
	uint8_t port_num;
	int access;			/* qp_access_flags (setup_connect) */
	enum ibv_mtu mtu;
	uint8_t rd_atomic;		/* max_dest_rd_atomic and max_rd_atomic */
	uint8_t min_rnr_timer, timeout, retry_cnt, rnr_retry;
};

/* RESET -> INIT for a connected QP. */
static inline int setup_init(struct ibv_qp *qp, uint8_t port_num, int access, const char **what)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port_num;
	a.qp_access_flags = (unsigned)access;
	*what = "INIT";
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* INIT -> RTR -> RTS, connected to QP dqpn along the path ah; each transition gets the
 * attributes its QP type takes. */
static inline int setup_rtr_rts(struct ibv_qp *qp, const struct ibv_ah_attr *ah, uint32_t dqpn,
				const struct setup_conn *c, const char **what)
{
	struct ibv_qp_attr a;
	int rc_like = qp->qp_type != IBV_QPT_UC;
	int mask, err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = c->mtu;
	a.dest_qp_num = dqpn;
	a.ah_attr = *ah;
	a.ah_attr.port_num = c->port_num;
	a.max_dest_rd_atomic = c->rd_atomic;
	a.min_rnr_timer = c->min_rnr_timer;
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (rc_like && qp->qp_type != IBV_QPT_XRC_SEND)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	*what = "RTR";
	if ((err = ibv_modify_qp(qp, &a, mask)))
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.max_rd_atomic = c->rd_atomic;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_SEND)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	else if (qp->qp_type == IBV_QPT_XRC_RECV)
		mask |= IBV_QP_TIMEOUT;
	*what = "RTS";
	return ibv_modify_qp(qp, &a, mask);
}

/* RESET -> INIT -> RTR -> RTS: setup_init, then setup_rtr_rts. */
static inline int setup_connect(struct ibv_qp *qp, const struct ibv_ah_attr *ah, uint32_t dqpn,
				const struct setup_conn *c, const char **what)
{
	int err = setup_init(qp, c->port_num, c->access, what);

	return err ? err : setup_rtr_rts(qp, ah, dqpn, c, what);
}

/* RESET -> INIT -> RTR -> RTS for a UD QP with Q_Key qkey. */
static inline int setup_ud_ready(struct ibv_qp *qp, uint8_t port_num, uint32_t qkey, const char **what)
{
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port_num;
	a.qkey = qkey;
	*what = "INIT";
	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)))
		return err;
	a.qp_state = IBV_QPS_RTR;
	*what = "RTR";
	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE)))
		return err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	*what = "RTS";
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/*
 * A DCT to RTR, where it stays: RESET -> INIT with c's port and remote access, INIT -> RTR with
 * the path ah (its port c's), c's MTU and min_rnr_timer. The two masks are the exact ones the
 * kernel takes for a DCT. Its number (qp->qp_num) exists from RTR on.
 */
static inline int setup_dct_ready(struct ibv_qp *qp, const struct ibv_ah_attr *ah, const struct setup_conn *c,
				  const char **what)
{
	struct ibv_qp_attr a;
	int err = setup_init(qp, c->port_num, c->access, what);

	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = c->mtu;
	a.min_rnr_timer = c->min_rnr_timer;
	a.ah_attr = *ah;
	a.ah_attr.port_num = c->port_num;
	*what = "DCT RTR";
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU);
}

/*
 * A DCI to RTS: RESET -> INIT on c's port, INIT -> RTR with c's MTU alone (a DCI has no
 * destination of its own: each WQE names one), RTR -> RTS with c's timeout, retries and
 * max_rd_atomic. The kernel's exact masks for a DCI.
 */
static inline int setup_dci_ready(struct ibv_qp *qp, const struct setup_conn *c, const char **what)
{
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = c->port_num;
	*what = "DCI INIT";
	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT)))
		return err;
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = c->mtu;
	*what = "DCI RTR";
	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU)))
		return err;
	a.qp_state = IBV_QPS_RTS;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.max_rd_atomic = c->rd_atomic;
	*what = "DCI RTS";
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* RESET -> INIT -> RTR -> RTS for a RAW_PACKET QP on port_num (no address, no keys). */
static inline int setup_raw_ready(struct ibv_qp *qp, uint8_t port_num, const char **what)
{
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port_num;
	*what = "INIT";
	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT)))
		return err;
	a.qp_state = IBV_QPS_RTR;
	*what = "RTR";
	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE)))
		return err;
	a.qp_state = IBV_QPS_RTS;
	*what = "RTS";
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

#endif
