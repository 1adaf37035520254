/* Errors the device detects like an HCA, reported through unmodified libmlx5: the failing
 * work request completes with the IB status (signaled or not), its QP moves to error,
 * everything still outstanding flushes with IBV_WC_WR_FLUSH_ERR, and on RC the responder
 * side reports or moves to error as well. Runs in step mode so every retry is counted. */
#include <string.h>
#include <sys/mman.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

#define BUF 16384

static struct simt_dev d;
static struct ibv_cq *cqa, *cqb;
static struct ibv_qp *qa, *qb;
static uint8_t *buf;
static struct ibv_mr *mr, *ro; /* ro: no remote access, no local write */
static const struct simt_pair fx = SIMT_PAIR;

static void setup(void)
{
	cr_assert(fvsim_present(), "run through sim/fvsim-run");
	fvsim_set_step_mode(1);
	simt_pair_open(&fx, BUF, BUF / 2, SIMT_ACCESS_ALL, 64);
	ro = simt_mr(&d, buf + BUF / 2, BUF / 2, 0);
}

static void connect_pair(uint8_t rnr_retry, int b_access)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cqa };

	qa = simt_qp(&d, &cfg);
	cfg.scq = cqb;
	qb = simt_qp(&d, &cfg);
	simt_connect(qa, d.lid, qb->qp_num, SIMT_ACCESS_ALL, rnr_retry, 3);
	simt_connect(qb, d.lid, qa->qp_num, b_access, rnr_retry, 3);
}

static void teardown(void)
{
	ibv_dereg_mr(ro);
	simt_pair_close(&fx);
}

TestSuite(sim_errors, .init = setup, .fini = teardown, .timeout = 60);

static enum ibv_qp_state state_of(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

static void expect_status(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	cr_assert_eq(simt_poll(cq, &wc, 1), 1, "no completion for wr %llu",
		     (unsigned long long)wr_id);
	cr_expect_eq(wc.wr_id, wr_id, "wr_id %llu, want %llu", (unsigned long long)wc.wr_id,
		     (unsigned long long)wr_id);
	cr_expect_eq(wc.status, st, "wr %llu: %s, want %s", (unsigned long long)wr_id,
		     ibv_wc_status_str(wc.status), ibv_wc_status_str(st));
}

Test(sim_errors, bad_rkey_then_flush)
{
	connect_pair(7, SIMT_ACCESS_ALL);
	simt_post_recv(qb, 90, buf, 64, mr->lkey);
	/* Unsignaled, yet the error reports; the two behind it flush. */
	simt_post_send(qa, 1, IBV_WR_RDMA_WRITE, buf, 64, mr->lkey, (uintptr_t)buf, 0x999900, 0);
	simt_post_send(qa, 2, IBV_WR_RDMA_WRITE, buf, 64, mr->lkey, (uintptr_t)buf, mr->rkey,
		       IBV_SEND_SIGNALED);
	simt_post_send(qa, 3, IBV_WR_SEND, buf, 64, mr->lkey, 0, 0, 0);
	expect_status(cqa, 1, IBV_WC_REM_ACCESS_ERR);
	expect_status(cqa, 2, IBV_WC_WR_FLUSH_ERR);
	expect_status(cqa, 3, IBV_WC_WR_FLUSH_ERR);
	cr_expect_eq(state_of(qa), IBV_QPS_ERR);
	/* The responder saw the access violation too: its QP is in error, its receive flushed. */
	expect_status(cqb, 90, IBV_WC_WR_FLUSH_ERR);
	cr_expect_eq(state_of(qb), IBV_QPS_ERR);
	/* Work posted to a QP in error flushes as well. */
	simt_post_send(qa, 4, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, 0);
	simt_post_recv(qa, 5, buf, 8, mr->lkey);
	expect_status(cqa, 4, IBV_WC_WR_FLUSH_ERR);
	expect_status(cqa, 5, IBV_WC_WR_FLUSH_ERR);
	simt_expect_empty(cqa);
}

Test(sim_errors, remote_access_rights)
{
	connect_pair(7, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	/* The MR allows no remote write. */
	simt_post_send(qa, 1, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey, (uintptr_t)buf + BUF / 2,
		       ro->rkey, IBV_SEND_SIGNALED);
	expect_status(cqa, 1, IBV_WC_REM_ACCESS_ERR);
}

Test(sim_errors, qp_access_flags_guard_reads)
{
	connect_pair(7, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	/* The MR allows reads but the responder QP does not. */
	simt_post_send(qa, 1, IBV_WR_RDMA_READ, buf, 8, mr->lkey, (uintptr_t)buf + 64, mr->rkey,
		       IBV_SEND_SIGNALED);
	expect_status(cqa, 1, IBV_WC_REM_ACCESS_ERR);
}

Test(sim_errors, out_of_range_rkey)
{
	connect_pair(7, SIMT_ACCESS_ALL);
	simt_post_send(qa, 1, IBV_WR_RDMA_WRITE, buf, 64, mr->lkey,
		       (uintptr_t)buf + BUF / 2 - 32, mr->rkey, IBV_SEND_SIGNALED);
	expect_status(cqa, 1, IBV_WC_REM_ACCESS_ERR);
}

Test(sim_errors, bad_lkey)
{
	connect_pair(7, SIMT_ACCESS_ALL);
	simt_post_send(qa, 1, IBV_WR_RDMA_WRITE, buf, 64, 0x1234500, (uintptr_t)buf, mr->rkey,
		       IBV_SEND_SIGNALED);
	expect_status(cqa, 1, IBV_WC_LOC_PROT_ERR);
	cr_expect_eq(state_of(qa), IBV_QPS_ERR);
	cr_expect_eq(state_of(qb), IBV_QPS_RTS, "a local error stays local");
}

/* Memory registered and then unmapped: a local DMA fault. The side whose memory vanished
 * reports it; the other is untouched. */
static struct ibv_mr *vanished_mr(void)
{
	void *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *v;

	cr_assert(p != MAP_FAILED);
	v = ibv_reg_mr(d.pd, p, 8192, SIMT_ACCESS_ALL);
	cr_assert(v);
	cr_assert_eq(munmap(p, 8192), 0);
	return v;
}

static void expect_local_fault(enum ibv_wr_opcode op)
{
	struct ibv_mr *v = vanished_mr();

	connect_pair(7, SIMT_ACCESS_ALL);
	simt_post_recv(qb, 7, buf + 1024, 128, mr->lkey);
	simt_post_send(qa, 1, op, v->addr, 64, v->lkey, (uintptr_t)buf + 2048, mr->rkey,
		       IBV_SEND_SIGNALED);
	expect_status(cqa, 1, IBV_WC_LOC_PROT_ERR);
	cr_expect_eq(state_of(qa), IBV_QPS_ERR);
	cr_expect_eq(state_of(qb), IBV_QPS_RTS, "the responder is innocent");
	simt_expect_empty(cqb);
	cr_expect_eq(ibv_dereg_mr(v), 0);
}

Test(sim_errors, send_from_vanished_memory)
{
	expect_local_fault(IBV_WR_SEND);
}

Test(sim_errors, write_from_vanished_memory)
{
	expect_local_fault(IBV_WR_RDMA_WRITE);
}

Test(sim_errors, read_into_vanished_memory)
{
	expect_local_fault(IBV_WR_RDMA_READ);
}

/* The responder's own memory vanished: its fault, a remote access error. */
Test(sim_errors, read_from_vanished_remote_memory)
{
	struct ibv_mr *v = vanished_mr();

	connect_pair(7, SIMT_ACCESS_ALL);
	simt_post_send(qa, 1, IBV_WR_RDMA_READ, buf, 64, mr->lkey, (uintptr_t)v->addr, v->rkey,
		       IBV_SEND_SIGNALED);
	expect_status(cqa, 1, IBV_WC_REM_ACCESS_ERR);
	cr_expect_eq(state_of(qb), IBV_QPS_ERR);
	cr_expect_eq(ibv_dereg_mr(v), 0);
}

Test(sim_errors, read_into_read_only_memory)
{
	connect_pair(7, SIMT_ACCESS_ALL);
	simt_post_send(qa, 1, IBV_WR_RDMA_READ, buf + BUF / 2, 64, ro->lkey, (uintptr_t)buf,
		       mr->rkey, IBV_SEND_SIGNALED);
	expect_status(cqa, 1, IBV_WC_LOC_PROT_ERR);
}

Test(sim_errors, misaligned_atomic)
{
	struct ibv_sge sge = { (uintptr_t)buf, 8, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	connect_pair(7, SIMT_ACCESS_ALL);
	wr.wr.atomic.remote_addr = (uintptr_t)buf + 4;
	wr.wr.atomic.rkey = mr->rkey;
	cr_assert_eq(ibv_post_send(qa, &wr, &bad), 0);
	expect_status(cqa, 1, IBV_WC_REM_INV_REQ_ERR);
}

Test(sim_errors, receive_buffer_too_small)
{
	connect_pair(7, SIMT_ACCESS_ALL);
	simt_post_recv(qb, 7, buf + 1024, 16, mr->lkey);
	simt_post_send(qa, 1, IBV_WR_SEND, buf, 100, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	expect_status(cqb, 7, IBV_WC_LOC_LEN_ERR);
	expect_status(cqa, 1, IBV_WC_REM_INV_REQ_ERR);
}

Test(sim_errors, receive_into_protected_memory)
{
	connect_pair(7, SIMT_ACCESS_ALL);
	simt_post_recv(qb, 7, buf + BUF / 2, 128, ro->lkey);
	simt_post_send(qa, 1, IBV_WR_SEND, buf, 100, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	expect_status(cqb, 7, IBV_WC_LOC_PROT_ERR);
	expect_status(cqa, 1, IBV_WC_REM_OP_ERR);
}

Test(sim_errors, rnr_retries_then_error)
{
	struct ibv_wc wc;

	connect_pair(2, SIMT_ACCESS_ALL);
	simt_post_send(qa, 1, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	/* The first attempt and two retries each take one step; the second retry fails the
	 * WQE. */
	cr_expect_eq(fvsim_step(), 1);
	cr_expect_eq(fvsim_step(), 1);
	cr_expect_eq(ibv_poll_cq(cqa, 1, &wc), 0);
	cr_expect_eq(fvsim_step(), 1);
	cr_assert_eq(ibv_poll_cq(cqa, 1, &wc), 1);
	cr_expect_eq(wc.status, IBV_WC_RNR_RETRY_EXC_ERR);
	simt_expect_empty(cqb);
}

Test(sim_errors, rnr_forever_until_a_receive_arrives)
{
	struct ibv_wc wc;

	connect_pair(7, SIMT_ACCESS_ALL);
	simt_post_send(qa, 1, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	for (int i = 0; i < 100; i++)
		fvsim_step();
	cr_expect_eq(ibv_poll_cq(cqa, 1, &wc), 0, "rnr_retry 7 retries forever");
	cr_expect_eq(fvsim_run_until_idle(), 0, "waiting on RNR is not progress");
	simt_post_recv(qb, 2, buf + 512, 8, mr->lkey);
	expect_status(cqb, 2, IBV_WC_SUCCESS);
	expect_status(cqa, 1, IBV_WC_SUCCESS);
}

Test(sim_errors, peer_not_ready_times_out)
{
	connect_pair(7, SIMT_ACCESS_ALL);
	/* The peer goes back to RESET: packets to it are dropped, nothing ever acks. */
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

		cr_assert_eq(ibv_modify_qp(qb, &a, IBV_QP_STATE), 0);
	}
	simt_post_send(qa, 1, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey, (uintptr_t)buf, mr->rkey,
		       IBV_SEND_SIGNALED);
	expect_status(cqa, 1, IBV_WC_RETRY_EXC_ERR);
}

Test(sim_errors, unknown_destination_times_out)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cqa };

	qa = simt_qp(&d, &cfg);
	simt_connect(qa, d.lid, 0xabcde, SIMT_ACCESS_ALL, 7, 1);
	simt_post_send(qa, 1, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, 0);
	expect_status(cqa, 1, IBV_WC_RETRY_EXC_ERR);
}

Test(sim_errors, modify_to_error_flushes_both_queues)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cqa };

	qa = simt_qp(&d, &cfg);
	simt_connect(qa, d.lid, 0xabcde, SIMT_ACCESS_ALL, 7, 7);
	simt_post_recv(qa, 10, buf, 8, mr->lkey);
	simt_post_recv(qa, 11, buf, 8, mr->lkey);
	simt_post_send(qa, 1, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, 0);
	cr_assert_eq(ibv_modify_qp(qa, &a, IBV_QP_STATE), 0);
	expect_status(cqa, 1, IBV_WC_WR_FLUSH_ERR);
	expect_status(cqa, 10, IBV_WC_WR_FLUSH_ERR);
	expect_status(cqa, 11, IBV_WC_WR_FLUSH_ERR);
	simt_expect_empty(cqa);
}

Test(sim_errors, operation_not_allowed_on_uc)
{
	/* libmlx5 builds a READ WQE on a UC QP; the HCA refuses to execute it. */
	simt_qp_pair(&d, (struct setup_qp_cfg){ .type = IBV_QPT_UC }, cqa, cqb, SIMT_ACCESS_ALL, 0, 0, &qa, &qb);
	simt_post_send(qa, 1, IBV_WR_RDMA_READ, buf, 8, mr->lkey, (uintptr_t)buf, mr->rkey, 0);
	expect_status(cqa, 1, IBV_WC_LOC_QP_OP_ERR);
	cr_expect_eq(state_of(qa), IBV_QPS_SQE, "an unreliable QP only stops its send queue");
}

/* WQE 0 of qp's SQ written by hand through mlx5dv (dqp: the SQ's layout): its control
 * segment (word 0: index and opcode; the QPN and ds; a CQE asked for), the rest of the
 * block zero. Returns the block's words for more. */
static uint32_t *hand_wqe(struct ibv_qp *qp, struct mlx5dv_qp *dqp, uint32_t word0, uint8_t ds)
{
	struct mlx5dv_obj obj;
	uint32_t *w;

	memset(&obj, 0, sizeof(obj));
	obj.qp.in = qp;
	obj.qp.out = dqp;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), 0);
	w = dqp->sq.buf;
	memset(w, 0, 64);
	w[0] = htobe32(word0);
	w[1] = htobe32(qp->qp_num << 8 | ds);
	w[2] = htobe32(0x08);
	return w;
}

/* The doorbell record of hand_wqe's SQ: one WQE posted. */
static void hand_ring(struct mlx5dv_qp *dqp)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
	dqp->dbrec[MLX5_SND_DBR] = htobe32(1);
}

/* Garbage in the SQ never crashes the device: it becomes an error CQE. */
Test(sim_errors, malformed_wqes)
{
	struct mlx5dv_qp dqp;
	struct ibv_wc wc;
	static const struct { uint8_t opcode, ds; } bad[] = {
		{ 0x0a, 0 },	/* no size */
		{ 0x7e, 1 },	/* unknown opcode */
		{ 0x10, 1 },	/* READ without its segments */
		{ 0x0a, 2 },	/* a data segment with a huge inline length */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cqa };

		qa = simt_qp(&d, &cfg);
		simt_connect(qa, d.lid, qa->qp_num, SIMT_ACCESS_ALL, 7, 7);
		hand_wqe(qa, &dqp, bad[i].opcode, bad[i].ds)[4] = htobe32(0x80000000u | 4000);
		hand_ring(&dqp);
		fvsim_run_until_idle();
		cr_assert_eq(ibv_poll_cq(cqa, 1, &wc), 1, "case %zu", i);
		cr_expect_eq(wc.status, IBV_WC_LOC_QP_OP_ERR, "case %zu: %s", i,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(state_of(qa), IBV_QPS_ERR);
		ibv_destroy_qp(qa);
	}
	qa = NULL;
}

/* A WQE whose index field does not match its slot (stale memory) is refused. */
Test(sim_errors, stale_wqe_index)
{
	struct mlx5dv_qp dqp;
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cqa };
	struct ibv_wc wc;

	qa = simt_qp(&d, &cfg);
	simt_connect(qa, d.lid, qa->qp_num, SIMT_ACCESS_ALL, 7, 7);
	hand_wqe(qa, &dqp, 5u << 8 | 0x00, 1); /* a NOP claiming to be WQE 5 */
	hand_ring(&dqp);
	fvsim_run_until_idle();
	cr_assert_eq(ibv_poll_cq(cqa, 1, &wc), 1);
	cr_expect_eq(wc.status, IBV_WC_LOC_QP_OP_ERR);
}

/* The doorbell record is the end of the posted work whatever the WQEs claim: a WQE whose
 * ds runs past it (a doorbell ending inside a multi-block WQE, or a garbage ds) fails,
 * and the device consumes exactly the posted blocks, then stops. In error it flushes one
 * CQE for such a WQE and stops as well, instead of stepping over the doorbell value and
 * flushing the whole 16-bit counter space. */
Test(sim_errors, doorbell_ends_inside_a_wqe)
{
	static const struct { uint8_t ds; bool in_error; uint32_t max_send_wr; } cases[] = {
		{ 8, false, 64 },	/* two WQEBBs, one posted */
		{ 63, false, 64 },	/* sixteen WQEBBs, one posted */
		{ 63, false, 1 },	/* more WQEBBs than the whole ring */
		{ 8, true, 64 },	/* the same seen by the flush of a QP in error */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cqa,
					   .max_send_wr = cases[i].max_send_wr };
		struct mlx5dv_qp dqp;
		struct ibv_wc wc;

		qa = simt_qp(&d, &cfg);
		simt_connect(qa, d.lid, qa->qp_num, SIMT_ACCESS_ALL, 7, 7);
		if (cases[i].in_error) {
			struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

			cr_assert_eq(ibv_modify_qp(qa, &a, IBV_QP_STATE), 0);
		}
		hand_wqe(qa, &dqp, 0x00, cases[i].ds); /* NOP, WQE index 0 */
		hand_ring(&dqp);
		cr_expect_eq(fvsim_run_until_idle(), 1, "case %zu: one unit of work, then idle", i);
		cr_assert_eq(ibv_poll_cq(cqa, 1, &wc), 1, "case %zu", i);
		cr_expect_eq(wc.status, cases[i].in_error ? IBV_WC_WR_FLUSH_ERR : IBV_WC_LOC_QP_OP_ERR,
			     "case %zu: %s", i, ibv_wc_status_str(wc.status));
		cr_expect_eq(ibv_poll_cq(cqa, 1, &wc), 0, "case %zu: nothing past the doorbell", i);
		cr_expect_eq(state_of(qa), IBV_QPS_ERR);
		ibv_destroy_qp(qa);
	}
	qa = NULL;
}

/* The device never writes past the consumer index it reads from the CQ doorbell record:
 * with a 4-entry CQ it stalls until the program polls, and loses nothing. */
Test(sim_errors, full_cq_stalls_instead_of_overrunning)
{
	struct ibv_cq *tiny = simt_cq(&d, 3);
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = tiny, .max_send_wr = 64 };
	struct ibv_wc wc[4];
	int seen = 0;

	cr_assert_eq(tiny->cqe, 3);
	qa = simt_qp(&d, &cfg);
	simt_connect(qa, d.lid, qa->qp_num, SIMT_ACCESS_ALL, 7, 7);
	for (int i = 0; i < 20; i++)
		simt_post_send(qa, (uint64_t)i, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey,
			       (uintptr_t)buf + 64, mr->rkey, IBV_SEND_SIGNALED);
	cr_expect_eq(fvsim_run_until_idle(), 4, "four CQEs fit, then the device waits");
	while (seen < 20) {
		int n = ibv_poll_cq(tiny, 4, wc);

		cr_assert(n > 0, "stalled for good after %d", seen);
		for (int i = 0; i < n; i++, seen++) {
			cr_expect_eq(wc[i].wr_id, (uint64_t)seen);
			cr_expect_eq(wc[i].status, IBV_WC_SUCCESS);
		}
		fvsim_run_until_idle();
	}
	ibv_destroy_qp(qa);
	qa = NULL;
	ibv_destroy_cq(tiny);
}
