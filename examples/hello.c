/* hello: a first fastverbs program. Two RC QPs on one device are connected to each other
 * (verbs, slow path); fastverbs then takes one QP and the CQ over, posts three RDMA WRITEs
 * under one doorbell, polls their completions and the data is checked.
 *   make hello            (runs it on the software device when there is no mlx5 NIC)
 *   cc hello.c $(pkg-config --cflags --libs fastverbs) -o hello */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fastverbs/fastverbs.h>
#include "setup.h"

static const char *step;		/* the step that failed (setup.h names its own) */

static void check(int err)
{
	if (err == ENODEV)
		fprintf(stderr, "hello: no RDMA device found: run it under sim/fvsim-run\n");
	else if (err)
		fprintf(stderr, "hello: %s: %s\n", step, strerror(err));
	if (err)
		exit(1);
}

int main(void)
{
	static char src[192], dst[192];
	struct setup_dev d;
	struct ibv_qp *a, *b;
	struct ibv_ah_attr path;

	check(setup_open(&d, NULL, 0, 1, 0, &step));
	struct ibv_mr *smr = ibv_reg_mr(d.pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *dmr = ibv_reg_mr(d.pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_cq *cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
	step = "ibv_reg_mr / ibv_create_cq";
	check(smr && dmr && cq ? 0 : errno);
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cq, .rcq = cq, .max_send_wr = 16,
				    .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 };
	struct setup_conn conn = { .port_num = 1, .access = IBV_ACCESS_REMOTE_WRITE, .mtu = d.port.active_mtu,
				   .rd_atomic = 1, .min_rnr_timer = 12, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7 };
	check(setup_qp(d.pd, &cfg, &a, &step));
	check(setup_qp(d.pd, &cfg, &b, &step));
	setup_ah_attr(&d, &path, 64);		/* to the device's own port: a loopback */
	check(setup_connect(a, &path, b->qp_num, &conn, &step));
	check(setup_connect(b, &path, a->qp_num, &conn, &step));

	/* From here on the data path is fastverbs. fv_rc_init may come any time after the QP
	 * is created, once whatever libibverbs posted on it has completed; posting needs RTS. */
	struct fv_rc rc;
	struct fv_cq fcq;
	step = "fv_rc_init";
	check(fv_rc_init(&rc, a));
	step = "fv_cq_init";
	check(fv_cq_init(&fcq, cq));
	step = "fv_write";
	for (int i = 0; i < 3; i++) {
		struct ibv_sge sge = { (uintptr_t)&src[64 * i], 64, smr->lkey };

		snprintf(&src[64 * i], 64, "hello, RDMA WRITE %d", i);
		check(fv_write(&rc, i, FV_SIGNALED, &sge, (uintptr_t)&dst[64 * i], dmr->rkey));
	}
	fv_ring(&rc);				/* one doorbell for the three */
	for (int done = 0; done < 3;) {
		struct fv_wc wc[4];
		int n = fv_poll(&fcq, wc, 4);

		step = "fv_poll";
		check(n < 0 ? -n : 0);
		for (int i = 0; i < n; i++, done++) {
			step = ibv_wc_status_str(wc[i].status);
			check(wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id != (uint64_t)done ? EIO : 0);
		}
	}
	step = "the data that arrived differs";
	check(memcmp(src, dst, sizeof(dst)) ? EIO : 0);
	printf("hello: 3 RDMA WRITEs of 64 bytes completed; dst holds \"%s\"\n", &dst[128]);

	fv_cq_cleanup(&fcq);
	fv_qp_cleanup(&rc.qp);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(dmr);
	ibv_dealloc_pd(d.pd);
	ibv_close_device(d.ctx);
	return 0;
}
