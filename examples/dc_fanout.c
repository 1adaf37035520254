/*
 * dc_fanout: one DC initiator (DCI) writing to and sending to several DC targets (DCTs), each
 * in a process of its own, with the fastverbs typed builders; no connection per peer.
 *
 * Each peer process makes an SRQ and a DCT with the access key KEY, takes it to RTR, lets
 * fastverbs poll its receives (fv_dct_init) and tells the parent its DCT number, LID and
 * buffer over a pipe. The parent's one DCI then, WR after WR to another DCT, RDMA-writes a
 * block into each peer's buffer and sends each a message with an immediate; every peer checks
 * what arrived and reports back.
 *
 *   dc_fanout [-p peers] [-d device]
 *
 * On hardware as is; on the software device the processes must share a fabric:
 *   FVSIM_FABRIC=fanout sim/fvsim-run build/examples/dc_fanout
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/mlx5dv.h>
#include <fastverbs/fastverbs.h>
#include "common.h"

#define KEY      0x00dcfa4e00dcfa4eull	/* the DCTs' access key */
#define MAX_PEER 16
#define BLOCK    64			/* bytes written to each peer */
#define MSG      32			/* bytes sent to each peer */

/* What a peer tells the parent. */
struct card {
	uint32_t dctn, rkey;
	uint16_t lid;
	uint64_t addr;
};

static const char *dev_name;

/* The byte the parent writes at offset i of peer p's block (and of its message: + 0x80). */
static uint8_t pattern(int p, int i)
{
	return (uint8_t)(p * 16 + i);
}

static struct ibv_qp *dc_qp(struct setup_dev *d, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	memset(&dv, 0, sizeof(dv));
	a.qp_type = IBV_QPT_DRIVER;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = d->pd;
	a.send_cq = a.recv_cq = cq;
	a.srq = srq;
	if (!srq) {	/* the DCI */
		a.cap.max_send_wr = 64;
		a.cap.max_send_sge = 1;
		a.cap.max_inline_data = MSG;
	}
	dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	dv.dc_init_attr.dc_type = srq ? MLX5DV_DCTYPE_DCT : MLX5DV_DCTYPE_DCI;
	dv.dc_init_attr.dct_access_key = KEY;
	qp = mlx5dv_create_qp(d->ctx, &a, &dv);
	if (!qp)
		ex_die(srq ? "mlx5dv_create_qp (DCT)" : "mlx5dv_create_qp (DCI)", errno);
	return qp;
}

/*
 * The DCTs' and the DCI's way to their states (examples/setup.h): the DCTs take remote writes
 * and wait 12 (0.64 ms) before an RNR NAK's retry; the DCI retries 7 times, without end on RNR.
 */
static const struct setup_conn dct_conn = {
	.port_num = 1, .access = IBV_ACCESS_REMOTE_WRITE, .mtu = IBV_MTU_1024, .min_rnr_timer = 12,
};
static const struct setup_conn dci_conn = {
	.port_num = 1, .mtu = IBV_MTU_1024, .rd_atomic = 1, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
};

/* A peer: its DCT, the block and the message from the parent checked; 0 if all is right. */
static int peer(int idx, int to_parent)
{
	struct setup_dev *d = ex_open(dev_name);
	struct ibv_cq *ibcq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *ibsrq = ibv_create_srq(d->pd, &sa);
	uint8_t *buf = aligned_alloc(4096, 8192);
	struct ibv_mr *mr = buf ? ibv_reg_mr(d->pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE |
					      IBV_ACCESS_REMOTE_WRITE) : NULL;
	struct fv_cq cq;
	struct fv_srq srq;
	struct fv_dct dct;
	struct ibv_ah_attr ah;
	const char *what;
	struct ibv_qp *qp;
	int err;

	if (!ibcq || !ibsrq || !mr)
		ex_die("peer set-up", errno);
	memset(buf, 0, 8192);
	qp = dc_qp(d, ibcq, ibsrq);
	setup_ah_attr(d, &ah, 64);
	if ((err = setup_dct_ready(qp, &ah, &dct_conn, &what)))
		ex_die(what, err);
	/* its number exists now: fastverbs finds its receives on the SRQ from here on */
	if ((err = fv_cq_init(&cq, ibcq)) || (err = fv_srq_init(&srq, ibsrq)) || (err = fv_dct_init(&dct, qp, &srq)))
		ex_die("fastverbs set-up", err);

	struct ibv_sge r = { (uintptr_t)buf + 4096, MSG, mr->lkey };

	if ((err = fv_srq_recv(&srq, 1, &r, 1)))
		ex_die("fv_srq_recv", err);
	fv_srq_ring(&srq);

	struct card c = { qp->qp_num, mr->rkey, d->lid, (uintptr_t)buf };

	if (write(to_parent, &c, sizeof(c)) != sizeof(c))
		ex_die("write", errno);

	struct fv_wc wc;
	uint64_t t0 = ex_now_ns();
	int n, bad = 0;

	while ((n = fv_poll(&cq, &wc, 1)) == 0)
		if (ex_now_ns() - t0 > 10000000000ull)
			ex_fail("peer %d: no message in 10 s", idx);
	if (n < 0 || wc.status != IBV_WC_SUCCESS || be32toh(wc.imm_data) != (uint32_t)idx || wc.byte_len != MSG)
		bad = 1;
	for (int i = 0; i < BLOCK; i++)	/* the WRITE came before the SEND, on the same DCI */
		bad |= buf[i] != pattern(idx, i);
	for (int i = 0; i < MSG; i++)
		bad |= buf[4096 + i] != (uint8_t)(pattern(idx, i) + 0x80);
	printf("peer %d: DCT %#x got %d bytes written and a %u-byte message from DCI %#x: %s\n", idx,
	       qp->qp_num, BLOCK, wc.byte_len, wc.src_qp, bad ? "WRONG" : "ok");
	fflush(stdout);
	fv_dct_cleanup(&dct);
	ibv_destroy_qp(qp);
	fv_srq_cleanup(&srq);
	ibv_destroy_srq(ibsrq);
	fv_cq_cleanup(&cq);
	ibv_destroy_cq(ibcq);
	ibv_dereg_mr(mr);
	free(buf);
	ex_close(d);
	return bad;
}

int main(int argc, char **argv)
{
	int npeer = 3, opt, from[MAX_PEER], failed = 0;
	pid_t pid[MAX_PEER];

	while ((opt = getopt(argc, argv, "p:d:")) != -1) {
		if (opt == 'p')
			npeer = atoi(optarg);
		else if (opt == 'd')
			dev_name = optarg;
		else
			ex_fail("usage: dc_fanout [-p peers] [-d device]");
	}
	if (npeer < 1 || npeer > MAX_PEER)
		ex_fail("peers: 1 to %d", MAX_PEER);
	ex_need_device();
	fflush(stdout);
	/* the peers first: a process forks before it opens a device */
	for (int i = 0; i < npeer; i++) {
		int p[2];

		if (pipe(p))
			ex_die("pipe", errno);
		if ((pid[i] = fork()) < 0)
			ex_die("fork", errno);
		if (!pid[i]) {
			close(p[0]);
			_exit(peer(i, p[1]));
		}
		close(p[1]);
		from[i] = p[0];
	}

	struct setup_dev *d = ex_open(dev_name);
	struct ibv_cq *ibcq = ibv_create_cq(d->ctx, 256, NULL, NULL, 0);
	uint8_t *src = aligned_alloc(4096, 4096);
	struct ibv_mr *mr = src ? ibv_reg_mr(d->pd, src, 4096, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct fv_dci dci;
	struct fv_cq cq;
	struct fv_ah ah[MAX_PEER];
	struct card c[MAX_PEER];
	int err;

	if (!ibcq || !mr)
		ex_die("set-up", errno);
	struct ibv_qp *qp = dc_qp(d, ibcq, NULL);
	const char *what;

	if ((err = setup_dci_ready(qp, &dci_conn, &what)))
		ex_die(what, err);
	if ((err = fv_dci_init(&dci, qp)) || (err = fv_cq_init(&cq, ibcq)))
		ex_die("fastverbs set-up", err);
	for (int i = 0; i < npeer; i++) {
		struct ibv_ah_attr aa;
		struct ibv_ah *ibah;

		if (read(from[i], &c[i], sizeof(c[i])) != sizeof(c[i]))
			ex_fail("peer %d did not report", i);
		setup_ah_attr(d, &aa, 64);
		aa.dlid = c[i].lid;
		if (!(ibah = ibv_create_ah(d->pd, &aa)) || (err = fv_ah_init(&ah[i], ibah)))
			ex_die("address handle", ibah ? err : errno);
		ibv_destroy_ah(ibah);	/* fv_ah_init copied its address vector */
	}
	for (int p = 0; p < npeer; p++)
		for (int i = 0; i < BLOCK; i++) {
			src[p * BLOCK + i] = pattern(p, i);
			src[2048 + p * BLOCK + i] = (uint8_t)(pattern(p, i) + 0x80);
		}
	/* One WRITE to each DCT, then one SEND with immediate to each, in one doorbell. */
	for (int p = 0; p < npeer; p++) {
		struct ibv_sge s = { (uintptr_t)src + p * BLOCK, BLOCK, mr->lkey };

		if ((err = fv_write(&dci, (uint64_t)p, 0, &s, c[p].addr, c[p].rkey, &ah[p], c[p].dctn, KEY)))
			ex_die("fv_write", err);
	}
	for (int p = 0; p < npeer; p++) {
		struct ibv_sge s = { (uintptr_t)src + 2048 + p * BLOCK, MSG, mr->lkey };

		if ((err = fv_send_imm(&dci, 100 + (uint64_t)p, FV_SIGNALED, &s, htobe32((uint32_t)p), &ah[p],
				       c[p].dctn, KEY)))
			ex_die("fv_send_imm", err);
	}
	fv_ring(&dci);
	for (int p = 0; p < npeer; p++) {
		struct fv_wc wc;
		uint64_t t0 = ex_now_ns();
		int n;

		while ((n = fv_poll(&cq, &wc, 1)) == 0)
			if (ex_now_ns() - t0 > 10000000000ull)
				ex_fail("no completion in 10 s");
		if (n < 0 || wc.status != IBV_WC_SUCCESS)
			ex_fail("send to peer %d: %s", p, n < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
	}
	for (int i = 0; i < npeer; i++) {
		int st;

		if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
		close(from[i]);
	}
	printf("dc_fanout: one DCI, %d DCTs in %d processes: %s\n", npeer, npeer, failed ? "FAILED" : "all data arrived");
	fv_qp_cleanup(&dci.qp);
	ibv_destroy_qp(qp);
	fv_cq_cleanup(&cq);
	ibv_destroy_cq(ibcq);
	ibv_dereg_mr(mr);
	free(src);
	ex_close(d);
	return failed ? 1 : 0;
}
