/* Ring wrap-around on the software device: tens of thousands of WQEs of mixed sizes
 * through a small SQ (WQEs straddle the ring end and the 16-bit WQE counter wraps), a
 * small CQ whose owner bit flips many times, and a small RQ recycled thousands of times. */
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

#define BUF (1 << 20)

static struct simt_dev d;
static uint8_t *buf;
static struct ibv_mr *mr;

static void setup(void)
{
	simt_open(&d, 0);
	buf = simt_mem(&d, BUF, SIMT_ACCESS_ALL, &mr);
}

static void teardown(void)
{
	ibv_dereg_mr(mr);
	free(buf);
	simt_close(&d);
}

TestSuite(sim_wrap, .init = setup, .fini = teardown, .timeout = 120);

static uint32_t rng = 12345;

static uint32_t next_rand(void)
{
	rng = rng * 1103515245u + 12345u;
	return rng >> 8;
}

static void pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31 + i);
}

static uint32_t sq_counter(struct ibv_qp *qp)
{
	struct mlx5dv_obj obj = { .qp = { .in = qp } };
	struct mlx5dv_qp dqp;

	obj.qp.out = &dqp;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), 0);
	return be32toh(dqp.dbrec[MLX5_SND_DBR]) & 0xffff;
}

/* RDMA writes of random sizes, inline or from memory, 1 to 4 WQEBBs each: far more than
 * 2^16 WQEBBs in total through a ring of a few hundred. */
Test(sim_wrap, sq_past_16_bit_counter)
{
	struct ibv_cq *cq = simt_cq(&d, 64);
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cq, .max_send_wr = 64,
				   .max_inline = 128 };
	struct ibv_qp *qp = simt_qp(&d, &cfg);
	uint8_t *src = buf, *dst = buf + BUF / 2;
	uint64_t wqebbs = 0;
	int total = 0;

	simt_connect(qp, d.lid, qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	while (wqebbs < 80000) {
		struct ibv_sge sge[16];
		struct ibv_send_wr wr[16], *bad;
		uint32_t len[16];
		struct ibv_wc wc;
		int n = 1 + (int)(next_rand() % 16);

		memset(wr, 0, sizeof(wr));
		for (int i = 0; i < n; i++) {
			int inl = next_rand() & 1;

			len[i] = 1 + next_rand() % (inl ? 128 : 2048);
			pattern(src + i * 2048, len[i], (uint32_t)(total + i));
			sge[i] = (struct ibv_sge){ (uintptr_t)src + i * 2048, len[i], mr->lkey };
			wr[i].wr_id = (uint64_t)(total + i);
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].opcode = IBV_WR_RDMA_WRITE;
			wr[i].send_flags = (inl ? IBV_SEND_INLINE : 0) |
					   (i == n - 1 ? IBV_SEND_SIGNALED : 0);
			wr[i].wr.rdma.remote_addr = (uintptr_t)dst + i * 2048;
			wr[i].wr.rdma.rkey = mr->rkey;
			wr[i].next = i < n - 1 ? &wr[i + 1] : NULL;
			/* ctrl + raddr + data: 3 units, or 2 + ceil((4 + len)/16) inline */
			wqebbs += ((inl ? 2 + (4 + len[i] + 15) / 16 : 3) + 3) / 4;
		}
		cr_assert_eq(ibv_post_send(qp, wr, &bad), 0);
		cr_assert_eq(simt_poll(cq, &wc, 1), 1, "after %d WRs", total);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "wr %llu: %s", (unsigned long long)wc.wr_id,
			     ibv_wc_status_str(wc.status));
		cr_assert_eq(wc.wr_id, (uint64_t)(total + n - 1));
		for (int i = 0; i < n; i++)
			cr_assert_arr_eq(dst + i * 2048, src + i * 2048, len[i], "wr %d", total + i);
		total += n;
	}
	cr_log_info("%d WRs, %llu WQEBBs", total, (unsigned long long)wqebbs);
	cr_expect_eq(sq_counter(qp), (uint32_t)(wqebbs & 0xffff),
		     "the doorbell record is the WQEBB counter mod 2^16");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

/* Datagrams with inline payloads of varying size: 2- and 3-WQEBB WQEs wrap at odd slots. */
Test(sim_wrap, ud_wqes_straddle_the_ring_end)
{
	struct ibv_cq *cq = simt_cq(&d, 64);
	struct setup_qp_cfg cfg = { .type = IBV_QPT_UD, .scq = cq, .max_send_wr = 16,
				   .max_recv_wr = 32, .max_inline = 64 };
	struct ibv_qp *tx = simt_qp(&d, &cfg), *rx = simt_qp(&d, &cfg);
	struct ibv_ah_attr aa = { .dlid = d.lid, .port_num = 1 };
	struct ibv_ah *ah = ibv_create_ah(d.pd, &aa);

	cr_assert(ah);
	simt_ud_ready(tx, 7);
	simt_ud_ready(rx, 7);
	for (int m = 0; m < 3000; m++) {
		uint32_t len = 1 + next_rand() % 64;
		struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)m, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE }, *bad;
		struct ibv_wc wc[2];

		pattern(buf, len, (uint32_t)m);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = rx->qp_num;
		wr.wr.ud.remote_qkey = 7;
		simt_post_recv(rx, (uint64_t)m, buf + 8192, 40 + 64, mr->lkey);
		cr_assert_eq(ibv_post_send(tx, &wr, &bad), 0);
		cr_assert_eq(simt_poll(cq, wc, 2), 2, "datagram %d", m);
		for (int i = 0; i < 2; i++) {
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
			cr_assert_eq(wc[i].wr_id, (uint64_t)m);
		}
		cr_assert_arr_eq(buf + 8192 + 40, buf, len, "datagram %d", m);
	}
	ibv_destroy_ah(ah);
	ibv_destroy_qp(tx);
	ibv_destroy_qp(rx);
	ibv_destroy_cq(cq);
}

/* A 16-entry CQ takes 2000 completions: the owner bit alternates every 16. */
Test(sim_wrap, cq_owner_bit_flips)
{
	struct ibv_cq *cq = simt_cq(&d, 15);
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cq, .max_send_wr = 16 };
	struct ibv_qp *qp = simt_qp(&d, &cfg);
	uint64_t next = 0;

	cr_assert_eq(cq->cqe, 15);
	simt_connect(qp, d.lid, qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	for (int b = 0; b < 250; b++) {
		struct ibv_wc wc[8];

		for (int i = 0; i < 8; i++)
			simt_post_send(qp, (uint64_t)(b * 8 + i), IBV_WR_RDMA_WRITE, buf, 8,
				       mr->lkey, (uintptr_t)buf + 64, mr->rkey, IBV_SEND_SIGNALED);
		cr_assert_eq(simt_poll(cq, wc, 8), 8, "batch %d", b);
		for (int i = 0; i < 8; i++, next++) {
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
			cr_assert_eq(wc[i].wr_id, next);
		}
	}
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

/* An 8-entry RQ recycled 2000 times, two messages in flight at a time. */
Test(sim_wrap, rq_recycled)
{
	struct ibv_cq *scq = simt_cq(&d, 32), *rcq = simt_cq(&d, 32);
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = scq, .max_recv_wr = 8 };
	struct ibv_qp *a = simt_qp(&d, &cfg), *b;

	cfg.scq = rcq;
	b = simt_qp(&d, &cfg);
	simt_connect(a, d.lid, b->qp_num, SIMT_ACCESS_ALL, 7, 7);
	simt_connect(b, d.lid, a->qp_num, SIMT_ACCESS_ALL, 7, 7);
	for (int i = 0; i < 8; i++)
		simt_post_recv(b, (uint64_t)i, buf + 4096 + i * 64, 64, mr->lkey);
	for (int m = 0; m < 2000; m += 2) {
		struct ibv_wc wc[2];

		for (int k = 0; k < 2; k++) {
			*(int *)(buf + k * 64) = m + k;
			simt_post_send(a, (uint64_t)(m + k), IBV_WR_SEND, buf + k * 64, 4, mr->lkey,
				       0, 0, IBV_SEND_SIGNALED);
		}
		cr_assert_eq(simt_poll(rcq, wc, 2), 2, "message %d", m);
		for (int k = 0; k < 2; k++) {
			cr_assert_eq(wc[k].status, IBV_WC_SUCCESS);
			cr_assert_eq(wc[k].wr_id, (uint64_t)(m + k));
			cr_assert_eq(*(int *)(buf + 4096 + ((m + k) % 8) * 64), m + k);
			simt_post_recv(b, (uint64_t)(m + k + 8), buf + 4096 + ((m + k) % 8) * 64, 64,
				       mr->lkey);
		}
		cr_assert_eq(simt_poll(scq, wc, 2), 2);
	}
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
}

/* 128-byte CQEs (MLX5_CQE_SIZE=128): the CQE proper sits in the second half of each
 * entry; the ring still wraps and the owner bit still flips. */
Test(sim_wrap, cqe_128_bytes)
{
	struct ibv_cq *cq;
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .max_send_wr = 16 };
	struct ibv_qp *qp;
	struct mlx5dv_obj obj;
	struct mlx5dv_cq dcq;
	uint64_t next = 0;

	setenv("MLX5_CQE_SIZE", "128", 1);
	cq = simt_cq(&d, 7);
	unsetenv("MLX5_CQE_SIZE");
	memset(&obj, 0, sizeof(obj));
	obj.cq.in = cq;
	obj.cq.out = &dcq;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ), 0);
	cr_assert_eq(dcq.cqe_size, 128);
	cfg.scq = cq;
	qp = simt_qp(&d, &cfg);
	simt_connect(qp, d.lid, qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	for (int b = 0; b < 20; b++) {
		struct ibv_wc wc[4];

		for (int i = 0; i < 4; i++)
			simt_post_send(qp, (uint64_t)(b * 4 + i), IBV_WR_RDMA_WRITE, buf, 8,
				       mr->lkey, (uintptr_t)buf + 64, mr->rkey, IBV_SEND_SIGNALED);
		cr_assert_eq(simt_poll(cq, wc, 4), 4, "batch %d", b);
		for (int i = 0; i < 4; i++, next++) {
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
			cr_assert_eq(wc[i].wr_id, next);
		}
	}
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

/* ibv_resize_cq: libmlx5 hands the device a new ring; the device closes the old one with a
 * RESIZE CQE and libmlx5 carries the unpolled CQEs over. Nothing is lost or reordered.
 * Step mode makes "CQEs written but not polled" exact. */
Test(sim_wrap, cq_resize)
{
	struct ibv_cq *cq;
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .max_send_wr = 64 };
	struct ibv_qp *qp;
	struct ibv_wc wc[64];
	uint64_t next = 0;

	fvsim_set_step_mode(1);
	cq = simt_cq(&d, 15);
	cfg.scq = cq;
	qp = simt_qp(&d, &cfg);
	simt_connect(qp, d.lid, qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	for (int i = 0; i < 10; i++)
		simt_post_send(qp, (uint64_t)i, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey,
			       (uintptr_t)buf + 64, mr->rkey, IBV_SEND_SIGNALED);
	cr_assert_eq(fvsim_run_until_idle(), 10);
	cr_assert_eq(ibv_poll_cq(cq, 3, wc), 3);
	for (int i = 0; i < 3; i++, next++)
		cr_assert_eq(wc[i].wr_id, next);
	cr_assert_eq(ibv_resize_cq(cq, 60), 0, "7 CQEs wait in the old ring");
	cr_expect_eq(cq->cqe, 63);
	for (int i = 10; i < 50; i++)
		simt_post_send(qp, (uint64_t)i, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey,
			       (uintptr_t)buf + 64, mr->rkey, IBV_SEND_SIGNALED);
	cr_assert_eq(fvsim_run_until_idle(), 40);
	cr_assert_eq(ibv_poll_cq(cq, 64, wc), 47);
	for (int i = 0; i < 47; i++, next++) {
		cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
		cr_assert_eq(wc[i].wr_id, next);
	}
	/* Shrinking below what is still unpolled is refused. */
	for (int i = 50; i < 60; i++)
		simt_post_send(qp, (uint64_t)i, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey,
			       (uintptr_t)buf + 64, mr->rkey, IBV_SEND_SIGNALED);
	cr_assert_eq(fvsim_run_until_idle(), 10);
	cr_expect_eq(ibv_resize_cq(cq, 3), EINVAL);
	cr_assert_eq(ibv_poll_cq(cq, 64, wc), 10);
	for (int i = 0; i < 10; i++, next++)
		cr_assert_eq(wc[i].wr_id, next);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

/* In thread mode a resize follows the work posted before it: the CQEs of sends rung just
 * before ibv_resize_cq count against the new size even if the device thread has not run
 * yet (here it sleeps its step-mode millisecond while the sends are posted). */
Test(sim_wrap, cq_resize_counts_work_posted_before)
{
	struct ibv_cq *cq;
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .max_send_wr = 16 };
	struct ibv_qp *qp;
	struct ibv_wc wc[8];

	cq = simt_cq(&d, 7);
	cfg.scq = cq;
	qp = simt_qp(&d, &cfg);
	simt_connect(qp, d.lid, qp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	fvsim_set_step_mode(1);
	nanosleep(&(struct timespec){ 0, 5 * 1000 * 1000 }, NULL);
	for (int i = 0; i < 6; i++)
		simt_post_send(qp, (uint64_t)i, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey,
			       (uintptr_t)buf + 64, mr->rkey, IBV_SEND_SIGNALED);
	fvsim_set_step_mode(0);
	cr_expect_eq(ibv_resize_cq(cq, 1), EINVAL, "6 CQEs cannot fit in 2 entries");
	cr_assert_eq(simt_poll(cq, wc, 6), 6);
	for (int i = 0; i < 6; i++) {
		cr_expect_eq(wc[i].status, IBV_WC_SUCCESS);
		cr_expect_eq(wc[i].wr_id, (uint64_t)i);
	}
	cr_expect_eq(ibv_resize_cq(cq, 1), 0, "all polled: shrinking is fine");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}
