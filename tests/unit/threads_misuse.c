/*
 * What the compat calls do when one thread misuses a send queue it holds, on plain-memory
 * QPs: fv_post_send inside an open fv_wr_* batch or inside fv_lock is EINVAL with nothing
 * posted (never 0 for a WR that is then dropped), a second fv_wr_start fails the open batch,
 * fv_wr_complete without fv_wr_start is EINVAL; with locking on and off, through a struct
 * fv_qp * and a typed handle (whose batch without locking takes nothing). Built with
 * -DFV_DEBUG (make test's debug pass), the typed path and fv_ring inside a batch, a second
 * fv_wr_start and polling a CQ that fv_cq_init never saw stop with an assertion instead.
 */
#include <signal.h>
#include <stdlib.h>

#include <criterion/criterion.h>
#include <fastverbs/fastverbs.h>

#include "memqp.h"
#include "once.h"

static uint8_t src[64];

static struct memqp_cfg cfg(void)
{
	struct memqp_cfg c;

	memset(&c, 0, sizeof(c));
	c.qpt = FV_QPT_RC, c.qpn = 0x99, c.sq_wqe_cnt = 64, c.bf_size = 256;
	c.max_inline = 64, c.max_send_sge = 4, c.rq_wqe_cnt = 16, c.rq_stride = 64, c.max_recv_sge = 4;
	return c;
}

static struct ibv_send_wr write_wr(struct ibv_sge *s, uint64_t id)
{
	struct ibv_send_wr w;

	memset(&w, 0, sizeof(w));
	*s = (struct ibv_sge){ (uintptr_t)src, 8, 0x1234 };
	w.wr_id = id, w.sg_list = s, w.num_sge = 1, w.opcode = IBV_WR_RDMA_WRITE;
	w.send_flags = IBV_SEND_SIGNALED, w.wr.rdma.remote_addr = 0x1000, w.wr.rdma.rkey = 0x55;
	return w;
}

/* The QP as a typed handle: its fv_wr_* calls take another way (FV__WR_START_LEAN, tune.h). */
static struct fv_rc *rc_of(struct fv_qp *qp)
{
	return (struct fv_rc *)(void *)qp;
}

/* fv_wr_start through a struct fv_qp * or (typed) the typed handle. */
static void start(struct fv_qp *qp, int typed)
{
	if (typed)
		fv_wr_start(rc_of(qp));
	else
		fv_wr_start(qp);
}

static int complete(struct fv_qp *qp, int typed)
{
	return typed ? fv_wr_complete(rc_of(qp)) : fv_wr_complete(qp);
}

/* fv_wr_start, a WRITE and its SGE: the open batch of the tests. */
static void open_batch_as(struct fv_qp *qp, int typed)
{
	start(qp, typed);
	qp->wr_id = 0xb1, qp->wr_flags = IBV_SEND_SIGNALED;
	if (typed) {
		fv_wr_rdma_write(rc_of(qp), 0x55, 0x2000);
		fv_wr_set_sge(rc_of(qp), 0x1234, (uintptr_t)src, 8);
	} else {
		fv_wr_rdma_write(qp, 0x55, 0x2000);
		fv_wr_set_sge(qp, 0x1234, (uintptr_t)src, 8);
	}
}

static void open_batch(struct fv_qp *qp)
{
	open_batch_as(qp, 0);
}

/* The case of the report: fv_post_send inside a batch, the batch aborted, then posted again. */
static void post_send_inside_batch(int locking, int typed)
{
	struct memqp m;
	struct memqp_cfg c = cfg();
	struct ibv_sge s;
	struct ibv_send_wr w = write_wr(&s, 0xa1), *bad = NULL;

	memqp_init(&m, &c);
	fv_set_lock(&m.qp, locking);
	uint32_t pi0 = m.qp.sq.pi, db0 = memqp_sq_dbr(&m);

	open_batch_as(&m.qp, typed);
	cr_assert_eq(fv_post_send(&m.qp, &w, &bad), EINVAL, "refused, not posted into the batch");
	cr_assert_eq(bad, &w);
	cr_assert_eq(memqp_sq_dbr(&m), db0, "nothing rung");
	if (typed)
		fv_wr_abort(rc_of(&m.qp));
	else
		fv_wr_abort(&m.qp);
	cr_assert_eq(m.qp.sq_lock, 0, "the queue given back");
	cr_assert_eq(m.qp.sq.pi, pi0, "the batch is gone, and nothing of the refused WR");
	cr_assert_eq(fv_post_send(&m.qp, &w, &bad), 0, "outside the batch it posts");
	cr_assert_eq(memqp_sq_dbr(&m), (db0 + 1) & 0xffff, "and rings");
	cr_assert_eq(memqp_block(&m, pi0)[3], MLX5_OPCODE_RDMA_WRITE);
	cr_assert_eq(m.qp.sq.wr_id[pi0 & m.qp.sq.mask].v, 0xa1);
	memqp_free(&m);
}

Test(threads_misuse, post_send_inside_a_batch_locked) { post_send_inside_batch(1, 0); }
Test(threads_misuse, post_send_inside_a_batch_unlocked) { post_send_inside_batch(0, 0); }
Test(threads_misuse, post_send_inside_a_typed_batch_locked) { post_send_inside_batch(1, 1); }
Test(threads_misuse, post_send_inside_a_typed_batch_unlocked) { post_send_inside_batch(0, 1); }

/* Receives are another queue: posting them inside an open send batch works. */
Test(threads_misuse, post_recv_inside_a_send_batch_works)
{
	struct memqp m;
	struct memqp_cfg c = cfg();
	struct ibv_sge s = { (uintptr_t)src, 8, 0x1234 };
	struct ibv_recv_wr r = { 0xc1, NULL, &s, 1 }, *bad;

	memqp_init(&m, &c);
	open_batch(&m.qp);
	cr_assert_eq(fv_post_recv(&m.qp, &r, &bad), 0);
	cr_assert_eq(be32toh(m.dbrec[MLX5_RCV_DBR]), 1);
	cr_assert_eq(fv_wr_complete(&m.qp), 0);
	memqp_free(&m);
}

#ifndef FV_DEBUG
/* A second fv_wr_start fails the open batch: its fv_wr_complete is EINVAL and posts nothing. */
static void second_start(int locking, int typed)
{
	struct memqp m;
	struct memqp_cfg c = cfg();

	memqp_init(&m, &c);
	fv_set_lock(&m.qp, locking);
	uint32_t pi0 = m.qp.sq.pi, db0 = memqp_sq_dbr(&m);

	open_batch_as(&m.qp, typed);
	start(&m.qp, typed);
	if (typed) {
		fv_wr_rdma_write(rc_of(&m.qp), 0x55, 0x3000);
		fv_wr_set_sge(rc_of(&m.qp), 0x1234, (uintptr_t)src, 8);
	} else {
		fv_wr_rdma_write(&m.qp, 0x55, 0x3000);
		fv_wr_set_sge(&m.qp, 0x1234, (uintptr_t)src, 8);
	}
	cr_assert_eq(complete(&m.qp, typed), EINVAL);
	cr_assert_eq(memqp_sq_dbr(&m), db0, "nothing rung");
	cr_assert_eq(m.qp.sq.pi, pi0, "both WQEs rolled back");
	cr_assert_eq(m.qp.sq_lock, 0, "the queue given back");
	cr_assert_eq(complete(&m.qp, typed), EINVAL, "no batch open any more");
	open_batch_as(&m.qp, typed);
	cr_assert_eq(complete(&m.qp, typed), 0, "the queue was given back");
	cr_assert_eq(memqp_sq_dbr(&m), (db0 + 1) & 0xffff);
	memqp_free(&m);
}

Test(threads_misuse, second_wr_start_fails_the_batch_locked) { second_start(1, 0); }
Test(threads_misuse, second_wr_start_fails_the_batch_unlocked) { second_start(0, 0); }
Test(threads_misuse, second_wr_start_fails_the_typed_batch_locked) { second_start(1, 1); }
Test(threads_misuse, second_wr_start_fails_the_typed_batch_unlocked) { second_start(0, 1); }

/*
 * The same with a WQE that still owes its payload at the second fv_wr_start: the batch stays
 * failed whatever follows (its payload included), and the next one posts.
 */
static void second_start_owed(int locking, int typed)
{
	struct memqp m;
	struct memqp_cfg c = cfg();
	struct fv_rc *rc = rc_of(&m.qp);

	memqp_init(&m, &c);
	fv_set_lock(&m.qp, locking);
	uint32_t pi0 = m.qp.sq.pi, db0 = memqp_sq_dbr(&m);

	start(&m.qp, typed);
	if (typed) {
		fv_wr_rdma_write(rc, 0x55, 0x2000);
		fv_wr_start(rc);
		fv_wr_set_sge(rc, 0x1234, (uintptr_t)src, 8);
		fv_wr_rdma_write(rc, 0x55, 0x3000);
		fv_wr_set_sge(rc, 0x1234, (uintptr_t)src, 8);
	} else {
		fv_wr_rdma_write(&m.qp, 0x55, 0x2000);
		fv_wr_start(&m.qp);
		fv_wr_set_sge(&m.qp, 0x1234, (uintptr_t)src, 8);
		fv_wr_rdma_write(&m.qp, 0x55, 0x3000);
		fv_wr_set_sge(&m.qp, 0x1234, (uintptr_t)src, 8);
	}
	cr_assert_eq(complete(&m.qp, typed), EINVAL);
	cr_assert_eq(memqp_sq_dbr(&m), db0, "nothing rung");
	cr_assert_eq(m.qp.sq.pi, pi0, "rolled back");
	cr_assert_eq(m.qp.sq_lock, 0, "the queue given back");
	open_batch_as(&m.qp, typed);
	cr_assert_eq(complete(&m.qp, typed), 0, "the next batch posts");
	cr_assert_eq(memqp_sq_dbr(&m), (db0 + 1) & 0xffff);
	cr_assert_eq(m.qp.sq.pi, pi0 + 1, "its one WQE");
	memqp_free(&m);
}

/*
 * A refused batch's fv_wr_complete returns its first error: one before the second
 * fv_wr_start (inline data past max_inline: ENOMEM), else EINVAL, whatever fails after it;
 * and a refused batch whose later WQEs are whole rings nothing either. late_error: 0 the
 * error before the second start, 1 after it, 2 none (a whole WQE after it).
 */
static void second_start_then(int locking, int typed, int late_error)
{
	struct memqp m;
	struct memqp_cfg c = cfg();
	uint8_t big[128] = { 0 };

	memqp_init(&m, &c);
	fv_set_lock(&m.qp, locking);
	uint32_t pi0 = m.qp.sq.pi, rung0 = m.qp.sq.rung_pi, db0 = memqp_sq_dbr(&m);

	open_batch_as(&m.qp, typed);
	if (late_error == 0) {	/* the error before the second start */
		if (typed) {
			fv_wr_send(rc_of(&m.qp));
			fv_wr_set_inline_data(rc_of(&m.qp), big, sizeof(big));
		} else {
			fv_wr_send(&m.qp);
			fv_wr_set_inline_data(&m.qp, big, sizeof(big));
		}
	}
	start(&m.qp, typed);
	if (typed) {
		fv_wr_send(rc_of(&m.qp));
		fv_wr_set_inline_data(rc_of(&m.qp), big, late_error == 1 ? sizeof(big) : 8);
	} else {
		fv_wr_send(&m.qp);
		fv_wr_set_inline_data(&m.qp, big, late_error == 1 ? sizeof(big) : 8);
	}
	cr_assert_eq(complete(&m.qp, typed), late_error == 0 ? ENOMEM : EINVAL);
	cr_assert_eq(memqp_sq_dbr(&m), db0, "nothing rung");
	cr_assert_eq(m.qp.sq.pi, pi0, "rolled back");
	cr_assert_eq(m.qp.sq.rung_pi, rung0, "the doorbell mark as it was");
	cr_assert_eq(m.qp.sq_lock, 0, "the queue given back");
	cr_assert_eq(m.qp.wr_open, 0);
	open_batch_as(&m.qp, typed);
	cr_assert_eq(complete(&m.qp, typed), 0, "the next batch posts");
	cr_assert_eq(memqp_sq_dbr(&m), (db0 + 1) & 0xffff);
	memqp_free(&m);
}

Test(threads_misuse, second_wr_start_after_an_error) { second_start_then(0, 0, 0); }
Test(threads_misuse, second_wr_start_then_an_error) { second_start_then(0, 0, 1); }
Test(threads_misuse, second_typed_wr_start_after_an_error) { second_start_then(0, 1, 0); }
Test(threads_misuse, second_typed_wr_start_then_an_error_locked) { second_start_then(1, 1, 1); }
Test(threads_misuse, second_typed_wr_start_then_a_whole_wqe) { second_start_then(0, 1, 2); }
Test(threads_misuse, second_typed_wr_start_then_a_whole_wqe_locked) { second_start_then(1, 1, 2); }
Test(threads_misuse, second_wr_start_then_a_whole_wqe) { second_start_then(0, 0, 2); }

Test(threads_misuse, second_wr_start_with_a_setter_owed_locked) { second_start_owed(1, 0); }
Test(threads_misuse, second_wr_start_with_a_setter_owed_unlocked) { second_start_owed(0, 0); }
Test(threads_misuse, second_typed_wr_start_with_a_setter_owed_locked) { second_start_owed(1, 1); }
Test(threads_misuse, second_typed_wr_start_with_a_setter_owed_unlocked) { second_start_owed(0, 1); }
#endif

/*
 * A batch's end gives back what its start took, whichever handle ends it and whatever
 * fv_set_lock said in between: the queue's word is 0 after it, and with locking a batch holds it.
 */
static void start_and_end_apart(int lock_at_start, int lock_at_end, int typed_start, int typed_end)
{
	struct memqp m;
	struct memqp_cfg c = cfg();

	memqp_init(&m, &c);
	fv_set_lock(&m.qp, lock_at_start);
	uint32_t db0 = memqp_sq_dbr(&m);

	open_batch_as(&m.qp, typed_start);
	cr_assert_neq(m.qp.wr_open, 0);
	if (lock_at_start)
		cr_assert_neq(m.qp.sq_lock, 0, "held for the batch");
	fv_set_lock(&m.qp, lock_at_end);
	cr_assert_eq(complete(&m.qp, typed_end), 0);
	cr_assert_eq(memqp_sq_dbr(&m), (db0 + 1) & 0xffff);
	cr_assert_eq(m.qp.wr_open, 0);
	cr_assert_eq(m.qp.sq_lock, 0, "nothing kept");
	memqp_free(&m);
}

Test(threads_misuse, a_batch_ends_through_either_handle)
{
	for (int i = 0; i < 16; i++)
		start_and_end_apart(i & 1, i >> 1 & 1, i >> 2 & 1, i >> 3 & 1);
}

/* Inside fv_lock a typed handle's batch nests too, with locking off as well as on. */
static void lock_holds_for_a_typed_batch(int locking)
{
	struct memqp m;
	struct memqp_cfg c = cfg();
	struct ibv_sge s;
	struct ibv_send_wr w = write_wr(&s, 0xa3), *bad;

	memqp_init(&m, &c);
	fv_set_lock(&m.qp, locking);
	uint32_t db0 = memqp_sq_dbr(&m);

	cr_assert_eq(fv_lock(rc_of(&m.qp)), 0);
	open_batch_as(&m.qp, 1);
	cr_assert_eq(fv_unlock(rc_of(&m.qp)), EPERM, "not while the batch is open");
	cr_assert_eq(fv_wr_complete(rc_of(&m.qp)), 0, "a batch inside fv_lock");
	cr_assert_eq(memqp_sq_dbr(&m), (db0 + 1) & 0xffff);
	cr_assert_eq(fv_post_send(&m.qp, &w, &bad), EINVAL, "still held after the batch");
	cr_assert_eq(fv_unlock(rc_of(&m.qp)), 0);
	cr_assert_eq(fv_post_send(&m.qp, &w, &bad), 0);
	memqp_free(&m);
}

Test(threads_misuse, lock_holds_the_send_queue_for_a_typed_batch_locked) { lock_holds_for_a_typed_batch(1); }
Test(threads_misuse, lock_holds_the_send_queue_for_a_typed_batch_unlocked) { lock_holds_for_a_typed_batch(0); }

/* fv_lock holds the send queue: compat posts of the holder are refused, a batch nests in it. */
Test(threads_misuse, lock_holds_the_send_queue)
{
	struct memqp m;
	struct memqp_cfg c = cfg();
	struct ibv_sge s;
	struct ibv_send_wr w = write_wr(&s, 0xa2), *bad;
	struct fv_rc *rc = (struct fv_rc *)(void *)&m.qp;

	memqp_init(&m, &c);
	uint32_t db0 = memqp_sq_dbr(&m);

	cr_assert_eq(fv_unlock(rc), EPERM, "not held");
	cr_assert_eq(fv_lock(rc), 0);
	cr_assert_eq(fv_lock(&m.qp), EINVAL, "held by this thread already");
	cr_assert_eq(fv_post_send(&m.qp, &w, &bad), EINVAL);
	cr_assert_eq(fv_write(rc, 1, 0, &s, 0x1000, 0x55), 0, "typed calls are what the lock is for");
	open_batch(&m.qp);
	cr_assert_eq(fv_wr_complete(&m.qp), 0, "a batch inside fv_lock");
	cr_assert_eq(memqp_sq_dbr(&m), (db0 + 2) & 0xffff, "rang the typed WQE and the batch");
	cr_assert_eq(fv_post_send(&m.qp, &w, &bad), EINVAL, "still held after the batch");
	cr_assert_eq(fv_unlock(rc), 0);
	cr_assert_eq(fv_post_send(&m.qp, &w, &bad), 0);
	memqp_free(&m);
}

/* Locking follows MLX5_SINGLE_THREADED at init, as in libmlx5, for QPs, SRQs and CQs alike. */
Test(threads_misuse, single_threaded_environment_turns_locking_off)
{
	struct memqp m;
	struct memqp_cfg c = cfg();
	uint8_t cqbuf[4 * 64];
	__be32 db[2] = { 0, 0 };
	struct fv_cq cq;
	struct fv_cq_geom g = { cqbuf, 4, 64, db, 1 };

	setenv("MLX5_SINGLE_THREADED", "1", 1);
	memqp_init(&m, &c);
	cr_assert_eq(fv_cq_init_geom(&cq, &g), 0);
	cr_assert_eq(m.qp.locking, 0);
	cr_assert_eq(cq.locking, 0);
	memqp_free(&m);
	setenv("MLX5_SINGLE_THREADED", "0", 1);	/* only "1" counts */
	memqp_init(&m, &c);
	cr_assert_eq(fv_cq_init_geom(&cq, &g), 0);
	cr_assert_eq(m.qp.locking, 1);
	cr_assert_eq(cq.locking, 1);
	fv_set_lock(&cq, 0);
	cr_assert_eq(cq.locking, 0);
	memqp_free(&m);
}

#ifdef FV_DEBUG
Test(threads_misuse, debug_typed_builder_inside_a_batch_aborts, .signal = SIGABRT)
{
	struct memqp m;
	struct memqp_cfg c = cfg();
	struct ibv_sge s = { (uintptr_t)src, 8, 0x1234 };

	memqp_init(&m, &c);
	open_batch(&m.qp);
	fv_write((struct fv_rc *)(void *)&m.qp, 1, 0, &s, 0x1000, 0x55);
}

Test(threads_misuse, debug_ring_inside_a_batch_aborts, .signal = SIGABRT)
{
	struct memqp m;
	struct memqp_cfg c = cfg();

	memqp_init(&m, &c);
	open_batch(&m.qp);
	fv_ring((struct fv_rc *)(void *)&m.qp);
}

Test(threads_misuse, debug_second_wr_start_aborts, .signal = SIGABRT)
{
	struct memqp m;
	struct memqp_cfg c = cfg();

	memqp_init(&m, &c);
	open_batch(&m.qp);
	fv_wr_start(&m.qp);
}

Test(threads_misuse, debug_second_typed_wr_start_unlocked_aborts, .signal = SIGABRT)
{
	struct memqp m;
	struct memqp_cfg c = cfg();

	memqp_init(&m, &c);
	fv_set_lock(&m.qp, 0);
	open_batch_as(&m.qp, 1);
	fv_wr_start(rc_of(&m.qp));
}

Test(threads_misuse, debug_zeroed_cq_aborts, .signal = SIGABRT)
{
	struct fv_cq cq;
	struct fv_wc wc;

	memset(&cq, 0, sizeof(cq));
	fv_poll(&cq, &wc, 1);
}
#endif
