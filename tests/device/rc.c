/* RC data path through unmodified libmlx5 on the software device: every operation posted
 * with ibv_post_send / ibv_post_recv moves data between two loopback-connected QPs and
 * completes with the right work completion. The device thread runs the engine. */
#include <endian.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

#define BUF 65536

static struct simt_dev d;
static struct ibv_cq *cqa, *cqb;
static struct ibv_qp *qa, *qb;
static uint8_t *buf; /* [0, BUF/2): A's memory, [BUF/2, BUF): B's */
static struct ibv_mr *mr;
static const struct simt_pair fx = SIMT_PAIR;

static void setup(void)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .max_inline = 128 };

	simt_pair_open(&fx, BUF, BUF, SIMT_ACCESS_ALL, 256);
	simt_pair_connect(&fx, cfg, SIMT_ACCESS_ALL, 7, 7);
}

static void teardown(void)
{
	simt_pair_close(&fx);
}

TestSuite(sim_rc, .init = setup, .fini = teardown, .timeout = 60);

static uint8_t *a_mem(size_t off) { return buf + off; }
static uint8_t *b_mem(size_t off) { return buf + BUF / 2 + off; }

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static void expect_wc(const struct ibv_wc *wc, uint64_t wr_id, enum ibv_wc_opcode op,
		      uint32_t len)
{
	cr_expect_eq(wc->status, IBV_WC_SUCCESS, "status %s", ibv_wc_status_str(wc->status));
	cr_expect_eq(wc->wr_id, wr_id);
	cr_expect_eq(wc->opcode, op, "opcode %d, want %d", wc->opcode, op);
	cr_expect_eq(wc->byte_len, len, "byte_len %u, want %u", wc->byte_len, len);
}

Test(sim_rc, send_recv)
{
	struct ibv_wc wc;

	fill(a_mem(0), 1000, 1);
	simt_post_recv(qb, 77, b_mem(0), 4096, mr->lkey);
	simt_post_send(qa, 11, IBV_WR_SEND, a_mem(0), 1000, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	expect_wc(&wc, 11, IBV_WC_SEND, wc.byte_len);
	cr_expect_eq(wc.qp_num, qa->qp_num);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	expect_wc(&wc, 77, IBV_WC_RECV, 1000);
	cr_expect_eq(wc.qp_num, qb->qp_num);
	cr_expect_eq(wc.src_qp, qa->qp_num);
	cr_expect_eq(wc.slid, d.lid);
	cr_expect_eq(wc.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_GRH), 0);
	cr_expect_arr_eq(b_mem(0), a_mem(0), 1000);
}

Test(sim_rc, send_with_imm)
{
	struct ibv_sge sge = { (uintptr_t)a_mem(0), 64, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32(0xdeadbeef) }, *bad;
	struct ibv_wc wc;

	simt_post_recv(qb, 6, b_mem(0), 64, mr->lkey);
	cr_assert_eq(ibv_post_send(qa, &wr, &bad), 0);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.opcode, IBV_WC_SEND);
	cr_expect(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	expect_wc(&wc, 6, IBV_WC_RECV, 64);
	cr_expect(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_expect_eq(wc.imm_data, htobe32(0xdeadbeef));
}

Test(sim_rc, inline_sends)
{
	static const uint32_t lens[] = { 1, 12, 60, 100, 128 };
	struct ibv_wc wc;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		fill(a_mem(0), lens[i], (uint8_t)i);
		simt_post_recv(qb, i, b_mem(i * 256), 256, mr->lkey);
		/* Inline data needs no lkey: a bogus one must not matter. */
		simt_post_send(qa, 100 + i, IBV_WR_SEND, a_mem(0), lens[i], 0xbad,
			       0, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
		cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
		expect_wc(&wc, i, IBV_WC_RECV, lens[i]);
		cr_expect_arr_eq(b_mem(i * 256), a_mem(0), lens[i]);
	}
}

Test(sim_rc, gather_and_scatter_lists)
{
	struct ibv_sge s[3] = { { (uintptr_t)a_mem(0), 100, mr->lkey },
				{ (uintptr_t)a_mem(1000), 200, mr->lkey },
				{ (uintptr_t)a_mem(5000), 50, mr->lkey } };
	struct ibv_sge r[2] = { { (uintptr_t)b_mem(0), 120, mr->lkey },
				{ (uintptr_t)b_mem(4000), 1000, mr->lkey } };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = s, .num_sge = 3, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rw = { .wr_id = 2, .sg_list = r, .num_sge = 2 }, *rbad;
	uint8_t want[350];
	struct ibv_wc wc;

	fill(a_mem(0), 100, 1);
	fill(a_mem(1000), 200, 2);
	fill(a_mem(5000), 50, 3);
	memcpy(want, a_mem(0), 100);
	memcpy(want + 100, a_mem(1000), 200);
	memcpy(want + 300, a_mem(5000), 50);
	cr_assert_eq(ibv_post_recv(qb, &rw, &rbad), 0);
	cr_assert_eq(ibv_post_send(qa, &wr, &bad), 0);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	expect_wc(&wc, 2, IBV_WC_RECV, 350);
	cr_expect_arr_eq(b_mem(0), want, 120);
	cr_expect_arr_eq(b_mem(4000), want + 120, 230);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
}

Test(sim_rc, rdma_write)
{
	struct ibv_wc wc;

	fill(a_mem(0), 4096, 9);
	simt_post_send(qa, 3, IBV_WR_RDMA_WRITE, a_mem(0), 4096, mr->lkey,
		       (uintptr_t)b_mem(100), mr->rkey, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	expect_wc(&wc, 3, IBV_WC_RDMA_WRITE, wc.byte_len);
	cr_expect_arr_eq(b_mem(100), a_mem(0), 4096);
	simt_expect_empty(cqb); /* a plain write consumes no receive */
}

Test(sim_rc, rdma_write_with_imm)
{
	struct ibv_sge sge = { (uintptr_t)a_mem(0), 300, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 8, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(42) }, *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = (uintptr_t)b_mem(2048);
	wr.wr.rdma.rkey = mr->rkey;
	fill(a_mem(0), 300, 4);
	simt_post_recv(qb, 9, b_mem(0), 16, mr->lkey);
	cr_assert_eq(ibv_post_send(qa, &wr, &bad), 0);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	expect_wc(&wc, 9, IBV_WC_RECV_RDMA_WITH_IMM, 300);
	cr_expect(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_expect_eq(wc.imm_data, htobe32(42));
	cr_expect_arr_eq(b_mem(2048), a_mem(0), 300);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	cr_expect(wc.wc_flags & IBV_WC_WITH_IMM);
}

Test(sim_rc, rdma_read)
{
	struct ibv_wc wc;

	fill(b_mem(512), 2000, 5);
	simt_post_send(qa, 4, IBV_WR_RDMA_READ, a_mem(64), 2000, mr->lkey,
		       (uintptr_t)b_mem(512), mr->rkey, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	expect_wc(&wc, 4, IBV_WC_RDMA_READ, 2000);
	cr_expect_arr_eq(a_mem(64), b_mem(512), 2000);
	simt_expect_empty(cqb);
}

static void atomic(uint64_t wr_id, enum ibv_wr_opcode op, uint64_t *remote, uint64_t cmp_add,
		   uint64_t swap, uint64_t *result)
{
	struct ibv_sge sge = { (uintptr_t)result, 8, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.atomic.remote_addr = (uintptr_t)remote;
	wr.wr.atomic.rkey = mr->rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	cr_assert_eq(ibv_post_send(qa, &wr, &bad), 0);
}

Test(sim_rc, atomics)
{
	uint64_t *remote = (uint64_t *)b_mem(1024), *res = (uint64_t *)a_mem(1024);
	struct ibv_wc wc;

	*remote = 1000;
	atomic(1, IBV_WR_ATOMIC_FETCH_AND_ADD, remote, 234, 0, res);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	expect_wc(&wc, 1, IBV_WC_FETCH_ADD, 8);
	cr_expect_eq(*res, 1000);
	cr_expect_eq(*remote, 1234);

	atomic(2, IBV_WR_ATOMIC_CMP_AND_SWP, remote, 1234, 77, res + 1);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	expect_wc(&wc, 2, IBV_WC_COMP_SWAP, 8);
	cr_expect_eq(res[1], 1234);
	cr_expect_eq(*remote, 77, "compare matched: swapped");

	atomic(3, IBV_WR_ATOMIC_CMP_AND_SWP, remote, 1, 99, res + 2);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	expect_wc(&wc, 3, IBV_WC_COMP_SWAP, 8);
	cr_expect_eq(res[2], 77);
	cr_expect_eq(*remote, 77, "compare failed: unchanged");
}

Test(sim_rc, unsignaled_then_signaled)
{
	struct ibv_wc wc[4];

	for (int i = 0; i < 10; i++)
		simt_post_send(qa, (uint64_t)i, IBV_WR_RDMA_WRITE, a_mem(i * 8), 8, mr->lkey,
			       (uintptr_t)b_mem(i * 8), mr->rkey, i == 9 ? IBV_SEND_SIGNALED : 0);
	cr_assert_eq(simt_poll(cqa, wc, 1), 1);
	cr_expect_eq(wc[0].wr_id, 9, "only the signaled WQE reports");
	simt_expect_empty(cqa);
}

Test(sim_rc, chain_of_work_requests)
{
	struct ibv_sge sge[3] = { { (uintptr_t)a_mem(0), 32, mr->lkey },
				  { (uintptr_t)a_mem(32), 32, mr->lkey },
				  { (uintptr_t)a_mem(64), 32, mr->lkey } };
	struct ibv_send_wr wr[3], *bad;
	struct ibv_wc wc[3];

	memset(wr, 0, sizeof(wr));
	for (int i = 0; i < 3; i++) {
		wr[i].wr_id = 50 + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
		simt_post_recv(qb, 60 + i, b_mem(i * 64), 64, mr->lkey);
	}
	fill(a_mem(0), 96, 8);
	cr_assert_eq(ibv_post_send(qa, wr, &bad), 0);
	cr_assert_eq(simt_poll(cqa, wc, 3), 3);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(wc[i].wr_id, (uint64_t)(50 + i), "completions in posting order");
	cr_assert_eq(simt_poll(cqb, wc, 3), 3);
	for (int i = 0; i < 3; i++) {
		expect_wc(&wc[i], 60 + i, IBV_WC_RECV, 32);
		cr_expect_arr_eq(b_mem(i * 64), a_mem(i * 32), 32);
	}
}

Test(sim_rc, zero_length_send_and_write)
{
	struct ibv_wc wc;

	simt_post_recv(qb, 1, b_mem(0), 64, mr->lkey);
	simt_post_send(qa, 2, IBV_WR_SEND, NULL, 0, 0, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	expect_wc(&wc, 1, IBV_WC_RECV, 0);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	/* A zero-length write checks no key at all. */
	simt_post_send(qa, 3, IBV_WR_RDMA_WRITE, NULL, 0, 0, 0, 0xbadbad, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	expect_wc(&wc, 3, IBV_WC_RDMA_WRITE, wc.byte_len);
}

Test(sim_rc, send_to_self)
{
	struct ibv_qp *self;
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cqa };
	struct ibv_wc wc[2];

	self = simt_qp(&d, &cfg);
	simt_connect(self, d.lid, self->qp_num, SIMT_ACCESS_ALL, 7, 7);
	fill(a_mem(0), 77, 3);
	simt_post_recv(self, 1, a_mem(4096), 128, mr->lkey);
	simt_post_send(self, 2, IBV_WR_SEND, a_mem(0), 77, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, wc, 2), 2);
	cr_expect_eq(wc[0].opcode, IBV_WC_RECV, "responder CQE is written first");
	cr_expect_eq(wc[1].opcode, IBV_WC_SEND);
	cr_expect_eq(wc[0].src_qp, self->qp_num);
	cr_expect_arr_eq(a_mem(4096), a_mem(0), 77);
	ibv_destroy_qp(self);
}

/* The raw CQEs the device wrote (docs/formats.md §5.2): with CQE version 1 the user index
 * of the QP (libmlx5 gave 0 to the first QP of the context, 1 to the second) sits in
 * srqn_uidx, the format bits are 0 (no scatter-to-CQE), and the fields libmlx5 does not
 * decode on this path still hold what the HCA puts there. */
Test(sim_rc, raw_cqe_fields)
{
	struct mlx5dv_obj obj;
	struct mlx5dv_cq dcq;
	struct ibv_wc wc;
	const uint8_t *req, *resp;

	memset(&obj, 0, sizeof(obj));
	obj.cq.in = cqb;
	obj.cq.out = &dcq;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ), 0);
	simt_post_recv(qb, 1, b_mem(0), 64, mr->lkey);
	simt_post_send(qa, 2, IBV_WR_SEND, a_mem(0), 48, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	resp = dcq.buf;
	cr_expect_eq(be32toh(*(const uint32_t *)(resp + 32)) & 0xffffff, 1, "uidx of QP b");
	cr_expect_eq(resp[63] >> 4, 2, "RESP_SEND");
	cr_expect_eq(resp[63] & 0x0c, 0, "no scatter-to-CQE format");
	cr_expect_eq(resp[63] & 1, 0, "owner bit of the first pass");
	cr_expect_eq(be32toh(*(const uint32_t *)(resp + 44)), 48, "byte_cnt");
	cr_expect_eq(be32toh(*(const uint32_t *)(resp + 24)) & 0xffffff, qa->qp_num, "rqpn");
	cr_expect_eq(be32toh(*(const uint32_t *)(resp + 56)) & 0xffffff, qb->qp_num);
	obj.cq.in = cqa;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ), 0);
	req = dcq.buf;
	cr_expect_eq(be32toh(*(const uint32_t *)(req + 32)) & 0xffffff, 0, "uidx of QP a");
	cr_expect_eq(req[63] >> 4, 0, "REQ");
	cr_expect_eq(be32toh(*(const uint32_t *)(req + 56)) >> 24, 0x0a, "send opcode");
	cr_expect_eq(be16toh(*(const uint16_t *)(req + 60)), 0, "wqe_counter");
}

/* ibv_rereg_mr: access, translation and PD change in place, the keys stay, and the
 * device enforces the new registration on the next access; a rejected change leaves the
 * MR as it was. */
Test(sim_rc, rereg_mr)
{
	uint8_t *target = aligned_alloc(4096, 8192), *unmapped;
	struct ibv_pd *pd2;
	struct ibv_mr *t;
	struct ibv_wc wc;
	uint32_t key;

	cr_assert(target);
	memset(target, 0, 8192);
	t = simt_mr(&d, target, 4096, IBV_ACCESS_LOCAL_WRITE);
	key = t->rkey;
	errno = 0;
	cr_expect_eq(ibv_rereg_mr(t, 0, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_CMD);
	cr_expect_eq(errno, EINVAL, "no flags");
	errno = 0;
	cr_expect_eq(ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_REMOTE_WRITE), IBV_REREG_MR_ERR_CMD);
	cr_expect_eq(errno, EINVAL, "remote write without local write");

	/* Access: remote write now allowed. */
	cr_assert_eq(ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE), 0);
	cr_expect_eq(t->rkey, key);
	fill(a_mem(0), 64, 3);
	simt_post_send(qa, 1, IBV_WR_RDMA_WRITE, a_mem(0), 64, mr->lkey, (uintptr_t)target,
		       t->rkey, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_arr_eq(target, a_mem(0), 64);

	/* Translation: the key now names the second page. An unmapped range is refused
	 * and changes nothing. */
	unmapped = (uint8_t *)(uintptr_t)0x1000; /* below mmap_min_addr: never mapped */
	errno = 0;
	cr_expect_eq(ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, unmapped, 4096, 0),
		     IBV_REREG_MR_ERR_CMD);
	cr_expect_eq(errno, EFAULT);
	cr_assert_eq(ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, target + 4096, 4096,
				  0), 0);
	cr_expect_eq(t->rkey, key);
	fill(a_mem(0), 64, 9);
	simt_post_send(qa, 2, IBV_WR_RDMA_WRITE, a_mem(0), 64, mr->lkey,
		       (uintptr_t)target + 4096, t->rkey, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_arr_eq(target + 4096, a_mem(0), 64);

	/* PD: the MR keeps its new PD busy until it moves back. */
	pd2 = ibv_alloc_pd(d.ctx);
	cr_assert(pd2);
	cr_assert_eq(ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	cr_expect_eq(t->pd, pd2);
	cr_expect_eq(ibv_dealloc_pd(pd2), EBUSY);
	cr_assert_eq(ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_PD, d.pd, NULL, 0, 0), 0);
	cr_expect_eq(ibv_dealloc_pd(pd2), 0);

	/* Access taken away: the next remote write is refused (and ends the QP pair). */
	cr_assert_eq(ibv_rereg_mr(t, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE), 0);
	simt_post_send(qa, 3, IBV_WR_RDMA_WRITE, a_mem(0), 64, mr->lkey,
		       (uintptr_t)target + 4096, t->rkey, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(ibv_dereg_mr(t), 0);
	free(target);
}
