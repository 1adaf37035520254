#include "common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fastverbs/fastverbs.h>

struct ibv_wc ex_wait_one(struct fv_cq *cq)
{
	struct ibv_wc wc;
	int n;

	while ((n = fv_poll_cq(cq, 1, &wc)) == 0)
		;
	if (n < 0)
		ex_die("fv_poll_cq", -n);
	if (wc.status != IBV_WC_SUCCESS)
		ex_fail("completion %llu: %s", (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	return wc;
}

void ex_keep_one(struct fv_cq *cq, struct ex_kept *k)
{
	if (!k->has && fv_poll(cq, &k->wc, 1) == 1)
		k->has = 1;
}

struct fv_wc ex_next_wc(struct fv_cq *cq, struct ex_kept *k)
{
	struct fv_wc wc;
	int n;

	if (k->has) {
		k->has = 0;
		wc = k->wc;
	} else {
		while ((n = fv_poll(cq, &wc, 1)) == 0)
			;
		if (n < 0)
			ex_die("fv_poll", -n);
	}
	if (wc.status != IBV_WC_SUCCESS)
		ex_fail("completion error: status %d (%s), vendor error 0x%x", wc.status,
			ibv_wc_status_str(wc.status), wc.vendor_err);
	return wc;
}

void ex_repost(struct fv_qp *qp, const struct ex_qp *q, unsigned n)
{
	struct ibv_sge none = { .addr = (uintptr_t)q->buf, .length = 0, .lkey = q->mr->lkey };

	for (unsigned i = 0; i < n; i++)
		if (fv_recv(qp, i, &none, 1))
			ex_die("fv_recv", ENOMEM);
	fv_recv_ring(qp);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void ex_report_rtt(uint64_t *rtt, unsigned n)
{
	double sum = 0;

	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	for (unsigned i = 0; i < n; i++)
		sum += (double)rtt[i];
	printf("round trip (us): min %.2f  median %.2f  p99 %.2f  max %.2f  mean %.2f%s\n",
	       rtt[0] / 1e3, rtt[n / 2] / 1e3, rtt[(uint64_t)n * 99 / 100] / 1e3, rtt[n - 1] / 1e3,
	       sum / n / 1e3, ex_time_note());
}

/* Defined by the software device's preloaded library (sim/fvsim.h), absent elsewhere: weak,
 * so the examples need no link flag and stay free of sim/. */
__attribute__((weak)) int fvsim_step(void);

const char *ex_time_note(void)
{
	return fvsim_step ? " [software device: its times are not hardware figures]" : "";
}

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

struct setup_dev *ex_open(const char *name)
{
	struct setup_dev *d = calloc(1, sizeof(*d));
	const char *idx = getenv("EX_GID_INDEX");
	const char *what;
	int err;

	if (!d)
		ex_fail("out of memory");
	err = setup_open(d, name, 0, 1, idx ? atoi(idx) : 0, &what);
	if (err == ENODEV && name)
		ex_fail("cannot open %s", name);
	if (err == ENODEV)
		ex_fail("no RDMA device found: run it under sim/fvsim-run");
	if (err == ENETDOWN)
		ex_fail("port %u of %s is not active", d->port_num, ibv_get_device_name(d->ctx->device));
	if (err)
		ex_die(what, err);
	return d;
}

void ex_need_device(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	int any = l && l[0];

	if (l)
		ibv_free_device_list(l);
	if (!any)
		ex_fail("no RDMA device found: run it under sim/fvsim-run");
}

void ex_close(struct setup_dev *d)
{
	ibv_dealloc_pd(d->pd);
	ibv_close_device(d->ctx);
	free(d);
}

void ex_qp_create(struct setup_dev *d, struct ex_qp *q, enum ibv_qp_type type, uint32_t depth)
{
	struct setup_qp_cfg c = {
		.type = type, .max_send_wr = depth, .max_recv_wr = 256, .max_send_sge = 1,
		.max_recv_sge = 1, .max_inline = 64,
	};
	const char *what;
	int err;

	if (posix_memalign((void **)&q->buf, 4096, EX_BUF_SIZE))
		ex_fail("out of memory");
	memset(q->buf, 0, EX_BUF_SIZE);
	q->mr = ibv_reg_mr(d->pd, q->buf, EX_BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	q->cq = ibv_create_cq(d->ctx, (int)(2 * depth + 512), NULL, NULL, 0);
	if (!q->mr || !q->cq)
		ex_die("ibv_reg_mr / ibv_create_cq", errno);
	c.scq = c.rcq = q->cq;
	err = setup_qp(d->pd, &c, &q->qp, &what);
	if (!err)
		err = type == IBV_QPT_UD ? setup_ud_ready(q->qp, d->port_num, EX_QKEY, &what) :
			setup_init(q->qp, d->port_num, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC, &what);
	if (err)
		ex_die(what, err);
}

void ex_qp_destroy(struct ex_qp *q)
{
	ibv_destroy_qp(q->qp);
	ibv_destroy_cq(q->cq);
	ibv_dereg_mr(q->mr);
	free(q->buf);
}

void ex_rc_connect(struct setup_dev *d, struct ex_qp *q, struct ex_qp *peer)
{
	const struct setup_conn c = {
		.port_num = d->port_num, .mtu = d->port.active_mtu, .rd_atomic = 16,
		.min_rnr_timer = 12, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};
	struct ibv_ah_attr ah;
	const char *what;
	int err;

	setup_ah_attr(d, &ah, 64);
	err = setup_rtr_rts(q->qp, &ah, peer->qp->qp_num, &c, &what);
	if (err)
		ex_die(what, err);
}

struct ibv_ah *ex_ah_to_self(struct setup_dev *d)
{
	struct ibv_ah_attr attr;
	struct ibv_ah *ah;

	setup_ah_attr(d, &attr, 64);
	ah = ibv_create_ah(d->pd, &attr);
	if (!ah)
		ex_die("ibv_create_ah", errno);
	return ah;
}
