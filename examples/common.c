#include "common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t ex_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ex_die(const char *what, int err)
{
	fprintf(stderr, "error: %s: %s\n", what, strerror(err));
	exit(1);
}

void ex_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

struct ex_dev *ex_open(const char *name)
{
	struct ibv_device **list;
	struct ex_dev *d = calloc(1, sizeof(*d));
	int n;

	if (!d)
		ex_fail("out of memory");
	list = ibv_get_device_list(&n);
	if (!list || !n)
		ex_fail("no RDMA device found (on a machine without one, run under sim/fvsim-run)");
	for (int i = 0; i < n && !d->ctx; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			d->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!d->ctx)
		ex_fail("cannot open %s", name ? name : "an RDMA device");
	d->port_num = 1;
	if (ibv_query_port(d->ctx, d->port_num, &d->port))
		ex_die("ibv_query_port", errno);
	if (d->port.state != IBV_PORT_ACTIVE)
		ex_fail("port %u of %s is not active", d->port_num, ibv_get_device_name(d->ctx->device));
	if (d->port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		const char *idx = getenv("EX_GID_INDEX");

		d->gid_index = idx ? atoi(idx) : 0;
		if (ibv_query_gid(d->ctx, d->port_num, d->gid_index, &d->gid))
			ex_die("ibv_query_gid", errno);
	}
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd)
		ex_die("ibv_alloc_pd", errno);
	return d;
}

void ex_close(struct ex_dev *d)
{
	ibv_dealloc_pd(d->pd);
	ibv_close_device(d->ctx);
	free(d);
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what)
{
	int err = ibv_modify_qp(qp, a, mask);

	if (err)
		ex_die(what, err);
}

void ex_qp_create(struct ex_dev *d, struct ex_qp *q, enum ibv_qp_type type, uint32_t depth)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = type,
		.cap = { .max_send_wr = depth, .max_recv_wr = 256, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 64 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = d->port_num };

	if (posix_memalign((void **)&q->buf, 4096, EX_BUF_SIZE))
		ex_fail("out of memory");
	memset(q->buf, 0, EX_BUF_SIZE);
	q->mr = ibv_reg_mr(d->pd, q->buf, EX_BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	q->cq = ibv_create_cq(d->ctx, (int)(2 * depth + 512), NULL, NULL, 0);
	if (!q->mr || !q->cq)
		ex_die("ibv_reg_mr / ibv_create_cq", errno);
	ia.send_cq = ia.recv_cq = q->cq;
	q->qp = ibv_create_qp(d->pd, &ia);
	if (!q->qp)
		ex_die("ibv_create_qp", errno);
	if (type == IBV_QPT_UD) {
		a.qkey = EX_QKEY;
		modify(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, "INIT");
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		modify(q->qp, &a, IBV_QP_STATE, "RTR");
		a.qp_state = IBV_QPS_RTS;
		modify(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN, "RTS");
		return;
	}
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	modify(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT");
}

void ex_qp_destroy(struct ex_qp *q)
{
	ibv_destroy_qp(q->qp);
	ibv_destroy_cq(q->cq);
	ibv_dereg_mr(q->mr);
	free(q->buf);
}

static void fill_ah_attr(struct ex_dev *d, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = d->port.lid;
	ah->port_num = d->port_num;
	if (d->port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		ah->is_global = 1;
		ah->grh.dgid = d->gid;
		ah->grh.sgid_index = (uint8_t)d->gid_index;
		ah->grh.hop_limit = 64;
	}
}

void ex_rc_connect(struct ex_dev *d, struct ex_qp *q, struct ex_qp *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = d->port.active_mtu,
		.dest_qp_num = peer->qp->qp_num, .rq_psn = 0, .max_dest_rd_atomic = 16,
		.min_rnr_timer = 12,
	};

	fill_ah_attr(d, &a.ah_attr);
	modify(q->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, "RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	modify(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
}

struct ibv_ah *ex_ah_to_self(struct ex_dev *d)
{
	struct ibv_ah_attr attr;
	struct ibv_ah *ah;

	fill_ah_attr(d, &attr);
	ah = ibv_create_ah(d->pd, &attr);
	if (!ah)
		ex_die("ibv_create_ah", errno);
	return ah;
}
