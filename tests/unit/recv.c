/*
 * Receive posting on plain memory: RQ WQE bytes (against what libmlx5 wrote), terminator,
 * zero-length compaction, wrap, doorbell record, every refusal, and the SRQ free list.
 */
#include <stdio.h>
#include <criterion/criterion.h>
#include <fastverbs/compat/post_recv.h>
#include "cqe-util.h"
#include "once.h"

#define VEC  FV_TOP "/tests/vectors/libmlx5-44/rc_post_recv.txt"
#define LKEY 0x100000u

static struct ibv_sge sge(uint64_t addr, uint32_t len)
{
	return (struct ibv_sge){ .addr = addr, .length = len, .lkey = LKEY };
}

/* A QP with only what the receive side needs: RQ of cnt entries of stride bytes. */
static void rq_qp(struct tqp *m, uint32_t qpn, uint32_t cnt, uint32_t stride)
{
	struct tqp_cfg c = { .qpt = FV_QPT_RC, .qpn = qpn, .sq_wqe_cnt = 16, .rq_wqe_cnt = cnt,
			       .rq_stride = stride, .max_send_sge = 1, .max_recv_sge = cnt ? stride / 16 : 0 };

	tqp_init(m, &c);
	if (cnt)
		memset(m->rq, 0xaa, cnt * stride);
}

static uint8_t *rq_wqe(const struct tqp *m, uint32_t idx)
{
	return m->rq + ((idx & m->qp.rq.mask) << m->qp.rq.stride_shift);
}

/* Expected data segment / terminator bytes. */
static void seg_bytes(uint8_t out[16], uint32_t len, uint32_t lkey, uint64_t addr)
{
	struct mlx5_wqe_data_seg d = { htobe32(len), htobe32(lkey), htobe64(addr) };

	memcpy(out, &d, 16);
}

static void assert_seg(const uint8_t *p, uint32_t len, uint32_t lkey, uint64_t addr)
{
	uint8_t want[16];

	seg_bytes(want, len, lkey, addr);
	cr_assert_arr_eq(p, want, 16, "got %s", cqe_hex(p, 16));
}

static void assert_term(const uint8_t *p)
{
	assert_seg(p, 0, MLX5_INVALID_LKEY, 0);
}

static void assert_untouched(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(p[i], 0xaa, "byte %zu written", i);
}

static uint32_t rq_dbr(const struct tqp *m)
{
	return be32toh(m->dbrec[MLX5_RCV_DBR]);
}

/* The cases of rc_post_recv.txt: per case the RQ slots written and the doorbell record. */
struct rvec {
	int nsge;
	uint32_t idx;
	uint8_t wqe[32];
	uint32_t dbr;
};

static int load_vec(struct rvec *v, int max)
{
	FILE *f = fopen(VEC, "r");
	char line[256];
	int n = -1;

	cr_assert(f, "cannot open %s", VEC);
	while (fgets(line, sizeof(line), f)) {
		unsigned a, b, off, x[16];

		if (sscanf(line, "### ibv_post_recv %u sge", &a) == 1) {
			cr_assert(++n < max);
			v[n].nsge = (int)a;
		} else if (sscanf(line, "RQ idx %u", &a) == 1) {
			v[n].idx = a;
		} else if (sscanf(line, "  rq[%u]+0x%x: %x %x %x %x %x %x %x %x %x %x %x %x %x %x %x %x", &a, &off,
				  &x[0], &x[1], &x[2], &x[3], &x[4], &x[5], &x[6], &x[7], &x[8], &x[9],
				  &x[10], &x[11], &x[12], &x[13], &x[14], &x[15]) == 18) {
			cr_assert(off + 16 <= sizeof(v[n].wqe));
			for (int i = 0; i < 16; i++)
				v[n].wqe[off + i] = (uint8_t)x[i];
		} else if (sscanf(line, "DBR recv (dbrec[0]) = 0x%x", &b) == 1) {
			v[n].dbr = b;
		}
	}
	fclose(f);
	return n + 1;
}

/* The producer's receive SGEs: 4 KiB at 0x10008000 and 0x10009000 (tests/vectors/libmlx5-44/producer.c). */
static const struct ibv_sge vec_sgl[2] = {
	{ .addr = 0x10008000, .length = 4096, .lkey = LKEY },
	{ .addr = 0x10009000, .length = 4096, .lkey = LKEY },
};

Test(rq, libmlx5_vector_compat)
{
	struct rvec v[4];
	struct tqp m;
	int n = load_vec(v, 4);

	cr_assert_eq(n, 2);
	rq_qp(&m, 0x100, 8, 32);	/* max_recv_sge 2 -> stride 32, as the producer's QP */
	for (int k = 0; k < n; k++) {
		struct ibv_recv_wr wr = { .wr_id = 0x400, .sg_list = (struct ibv_sge *)vec_sgl, .num_sge = v[k].nsge }, *bad = NULL;

		cr_assert_eq(fv_post_recv(&m.qp, &wr, &bad), 0);
		cr_assert_null(bad);
		cr_assert_arr_eq(rq_wqe(&m, v[k].idx), v[k].wqe, 32, "case %d: %s", k, cqe_hex(rq_wqe(&m, v[k].idx), 32));
		cr_assert_eq(rq_dbr(&m), v[k].dbr);
		cr_assert_eq(m.qp.rq.wrid[v[k].idx], 0x400);
	}
	tqp_free(&m);
}

Test(rq, libmlx5_vector_direct)
{
	struct rvec v[4];
	struct tqp m;
	int n = load_vec(v, 4);

	rq_qp(&m, 0x100, 8, 32);
	for (int k = 0; k < n; k++) {
		cr_assert_eq(fv_recv(&m.qp, 0x400 + k, vec_sgl, v[k].nsge), 0);
		cr_assert_eq(rq_dbr(&m), (uint32_t)k, "no doorbell before fv_recv_ring");
		fv_recv_ring(&m.qp);
		cr_assert_arr_eq(rq_wqe(&m, v[k].idx), v[k].wqe, 32);
		cr_assert_eq(rq_dbr(&m), v[k].dbr);
	}
	tqp_free(&m);
}

Test(rq, terminator_only_when_short)
{
	struct ibv_sge s[4] = { sge(0x1000, 1), sge(0x2000, 2), sge(0x3000, 3), sge(0x4000, 4) };
	struct tqp m;

	rq_qp(&m, 0x10, 8, 64);	/* max_gs 4 */
	cr_assert_eq(fv_recv(&m.qp, 1, s, 4), 0);
	for (int i = 0; i < 4; i++)
		assert_seg(rq_wqe(&m, 0) + 16 * i, (uint32_t)i + 1, LKEY, 0x1000u * (i + 1));

	cr_assert_eq(fv_recv(&m.qp, 2, s, 3), 0);
	for (int i = 0; i < 3; i++)
		assert_seg(rq_wqe(&m, 1) + 16 * i, (uint32_t)i + 1, LKEY, 0x1000u * (i + 1));
	assert_term(rq_wqe(&m, 1) + 48);

	cr_assert_eq(fv_recv(&m.qp, 3, s, 1), 0);
	assert_seg(rq_wqe(&m, 2), 1, LKEY, 0x1000);
	assert_term(rq_wqe(&m, 2) + 16);
	assert_untouched(rq_wqe(&m, 2) + 32, 32);

	cr_assert_eq(fv_recv(&m.qp, 4, NULL, 0), 0);
	assert_term(rq_wqe(&m, 3));
	assert_untouched(rq_wqe(&m, 3) + 16, 48);
	tqp_free(&m);
}

/*
 * fv_recv's list of one entry (a count fixed in the caller's code) tests the SGE count and
 * whether a terminator follows as one compare (recv.h): on WQEs with room for one segment
 * (no terminator, nothing past the WQE), for two but max_recv_sge 1 (the terminator), and on
 * an RQ with max_recv_sge 0 (refused, nothing written; an empty list still posted). Lengths
 * fixed in the code and read at run time take different paths at -O2.
 */
Test(rq, one_entry_lists)
{
	for (int fixed = 0; fixed < 2; fixed++) {
		volatile uint32_t len_rt = 24;
		struct ibv_sge s = fixed ? sge(0x5000, 24) : sge(0x5000, len_rt);
		struct ibv_sge z = sge(0x6000, 0);

		for (uint32_t stride = 16; stride <= 32; stride *= 2) {
			struct tqp_cfg c = { .qpt = FV_QPT_RC, .qpn = 0x11, .sq_wqe_cnt = 16, .rq_wqe_cnt = 8,
					     .rq_stride = stride, .max_send_sge = 1, .max_recv_sge = 1 };
			struct tqp m;

			tqp_init(&m, &c);
			memset(m.rq, 0xaa, 8 * stride);
			cr_assert_eq(fv_recv(&m.qp, 0x900, &s, 1), 0);
			cr_assert_eq(fv_recv(&m.qp, 0x901, &z, 1), 0);
			assert_seg(rq_wqe(&m, 0), 24, LKEY, 0x5000);
			if (stride == 32)
				assert_term(rq_wqe(&m, 0) + 16);
			assert_term(rq_wqe(&m, 1));	/* an empty entry is dropped */
			if (stride == 32)
				assert_untouched(rq_wqe(&m, 1) + 16, 16);
			assert_untouched(rq_wqe(&m, 2), 6 * stride);
			cr_assert_eq(m.qp.rq.wrid[0], 0x900);
			cr_assert_eq(m.qp.rq.wrid[1], 0x901);
			cr_assert_eq(fv__rq_head(&m.qp), 2);
			tqp_free(&m);
		}

		struct tqp_cfg c = { .qpt = FV_QPT_RC, .qpn = 0x12, .sq_wqe_cnt = 16, .rq_wqe_cnt = 8,
				     .rq_stride = 16, .max_send_sge = 1, .max_recv_sge = 0 };
		struct tqp m;

		tqp_init(&m, &c);
		memset(m.rq, 0xaa, 8 * 16);
		cr_assert_eq(fv_recv(&m.qp, 0x902, &s, 1), EINVAL, "max_recv_sge 0");
		cr_assert_eq(fv_recv(&m.qp, 0x903, &z, 1), EINVAL, "counted before the empty entry is dropped");
		assert_untouched(m.rq, 8 * 16);
		cr_assert_eq(fv__rq_head(&m.qp), 0);
		cr_assert_eq(fv_recv(&m.qp, 0x904, NULL, 0), 0);
		assert_term(rq_wqe(&m, 0));
		cr_assert_eq(fv__rq_head(&m.qp), 1);
		tqp_free(&m);
	}
}

Test(rq, zero_length_sges_compacted)
{
	struct ibv_sge s[4] = { sge(0x1000, 10), sge(0x2000, 0), sge(0x3000, 30), sge(0x4000, 0) };
	struct ibv_sge z[2] = { sge(0x5000, 0), sge(0x6000, 0) };
	struct tqp m;

	rq_qp(&m, 0x10, 8, 64);
	cr_assert_eq(fv_recv(&m.qp, 1, s, 4), 0);
	assert_seg(rq_wqe(&m, 0), 10, LKEY, 0x1000);
	assert_seg(rq_wqe(&m, 0) + 16, 30, LKEY, 0x3000);
	assert_term(rq_wqe(&m, 0) + 32);
	assert_untouched(rq_wqe(&m, 0) + 48, 16);

	cr_assert_eq(fv_recv(&m.qp, 2, z, 2), 0);
	assert_term(rq_wqe(&m, 1));
	assert_untouched(rq_wqe(&m, 1) + 16, 48);
	tqp_free(&m);

	/* num_sge counts the zero-length entries too (libmlx5 checks it before compacting). */
	rq_qp(&m, 0x10, 8, 32);
	cr_assert_eq(fv_recv(&m.qp, 3, s, 3), EINVAL);
	assert_untouched(m.rq, 8 * 32);
	tqp_free(&m);
}

Test(rq, wrap_through_completions)
{
	struct tqp m;
	struct cqe_cq c;
	struct fv_wc wc[8];

	rq_qp(&m, 0x21, 4, 32);
	cqe_cq_init(&c, 16, 64, 0);
	for (uint32_t i = 0; i < 4; i++) {
		struct ibv_sge s = sge(0x1000 * (i + 1), 100 + i);

		cr_assert_eq(fv_recv(&m.qp, 100 + i, &s, 1), 0);
	}
	struct ibv_sge s5 = sge(0x9000, 5);

	cr_assert_eq(fv_recv(&m.qp, 999, &s5, 1), ENOMEM);
	fv_recv_ring(&m.qp);

	/* The device completes the first two receives, in order. */
	for (int i = 0; i < 2; i++)
		cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x21, .byte_cnt = 7 });
	cr_assert_eq(fv_poll(&c.cq, wc, 8), 2);
	cr_assert_eq(wc[0].wr_id, 100);
	cr_assert_eq(wc[1].wr_id, 101);

	/* Two more fit, written over slots 0 and 1. */
	for (uint32_t i = 4; i < 6; i++) {
		struct ibv_sge s = sge(0x1000 * (i + 1), 100 + i);

		cr_assert_eq(fv_recv(&m.qp, 100 + i, &s, 1), 0);
	}
	cr_assert_eq(fv_recv(&m.qp, 999, &s5, 1), ENOMEM);
	fv_recv_ring(&m.qp);
	assert_seg(rq_wqe(&m, 0), 104, LKEY, 0x5000);
	assert_seg(rq_wqe(&m, 1), 105, LKEY, 0x6000);
	assert_seg(rq_wqe(&m, 2), 102, LKEY, 0x3000);
	cr_assert_eq(rq_dbr(&m), 6);

	for (int i = 0; i < 4; i++)
		cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x21, .byte_cnt = 7 });
	cr_assert_eq(fv_poll(&c.cq, wc, 8), 4);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(wc[i].wr_id, 102 + (uint64_t)i);
	cr_assert_eq(m.qp.rq.tail, 6);
	cqe_cq_free(&c);
	tqp_free(&m);
}

Test(rq, doorbell_record_past_2_16)
{
	struct tqp m;
	struct cqe_cq c;
	struct fv_wc wc[4];
	struct ibv_sge s = sge(0x1000, 64);

	rq_qp(&m, 0x22, 4, 16);
	cqe_cq_init(&c, 8, 64, 0);
	for (uint32_t posted = 0; posted < 70000; posted += 4) {
		for (int i = 0; i < 4; i++)
			cr_assert_eq(fv_recv(&m.qp, posted + (uint32_t)i, &s, 1), 0);
		fv_recv_ring(&m.qp);
		cr_assert_eq(fv__rq_head(&m.qp), posted + 4);
		if (rq_dbr(&m) != ((posted + 4) & 0xffff))
			cr_assert_fail("dbrec 0x%x after %u posts", rq_dbr(&m), posted + 4);
		for (int i = 0; i < 4; i++)
			cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x22 });
		cr_assert_eq(fv_poll(&c.cq, wc, 4), 4);
		if (wc[3].wr_id != posted + 3)
			cr_assert_fail("wr_id %lu after %u posts", (unsigned long)wc[3].wr_id, posted + 4);
	}
	cr_assert_eq(rq_dbr(&m), 70000 & 0xffff);
	cqe_cq_free(&c);
	tqp_free(&m);
}

Test(rq, counters_continue_from_doorbell_record)
{
	uint8_t *rq = aligned_alloc(4096, 4096), *sq = aligned_alloc(4096, 4096), *bf = aligned_alloc(64, 512);
	__be32 *db = aligned_alloc(64, 64);
	struct fv_qp qp;
	struct ibv_sge s = sge(0x7000, 9);

	memset(rq, 0xaa, 4096);
	memset(db, 0, 64);
	db[MLX5_RCV_DBR] = htobe32(0xfffe);	/* libmlx5 posted 0xfffe receives before the takeover */
	struct fv_qp_geom g = { .qpt = FV_QPT_RC, .qpn = 0x23, .sq_buf = sq, .sq_wqe_cnt = 16, .rq_buf = rq,
				.rq_wqe_cnt = 4, .rq_stride = 32, .dbrec = db, .bf_reg = bf, .max_recv_sge = 2 };

	cr_assert_eq(fv_qp_init_geom(&qp, &g), 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(fv_recv(&qp, (uint64_t)i, &s, 1), 0);
	fv_recv_ring(&qp);
	cr_assert_eq(be32toh(db[MLX5_RCV_DBR]), 1);
	assert_seg(rq + 2 * 32, 9, LKEY, 0x7000);	/* 0xfffe & 3 */
	assert_seg(rq + 3 * 32, 9, LKEY, 0x7000);
	assert_seg(rq + 0 * 32, 9, LKEY, 0x7000);
	assert_untouched(rq + 1 * 32, 32);
	cr_assert_eq(qp.rq.wrid[2], 0);
	cr_assert_eq(qp.rq.wrid[0], 2);
	fv_qp_cleanup(&qp);
	free(rq), free(sq), free(bf), free(db);
}

/* Snapshot of everything a refused post must leave alone. */
struct rq_snap {
	uint8_t ring[8 * 64];
	__be32 dbr;
	uint32_t head;
	uint64_t wrid[8];
};

static void snap(const struct tqp *m, struct rq_snap *s)
{
	memcpy(s->ring, m->rq, (size_t)m->qp.rq.entries << m->qp.rq.stride_shift);
	s->dbr = m->dbrec[MLX5_RCV_DBR];
	s->head = fv__rq_head(&m->qp);
	memcpy(s->wrid, m->qp.rq.wrid, m->qp.rq.entries * sizeof(uint64_t));
}

static void assert_snap(const struct tqp *m, const struct rq_snap *s)
{
	cr_assert_arr_eq(m->rq, s->ring, (size_t)m->qp.rq.entries << m->qp.rq.stride_shift, "ring written");
	cr_assert_eq(m->dbrec[MLX5_RCV_DBR], s->dbr, "doorbell record written");
	cr_assert_eq(fv__rq_head(&m->qp), s->head);
	cr_assert_arr_eq(m->qp.rq.wrid, s->wrid, m->qp.rq.entries * sizeof(uint64_t));
}

Test(rq, refusals_leave_no_trace)
{
	struct ibv_sge s[3] = { sge(0x1000, 1), sge(0x2000, 2), sge(0x3000, 3) };
	struct tqp m;
	struct rq_snap sn;

	rq_qp(&m, 0x30, 4, 32);	/* max_recv_sge 2 */
	cr_assert_eq(fv_recv(&m.qp, 1, s, 1), 0);
	fv_recv_ring(&m.qp);
	snap(&m, &sn);
	cr_assert_eq(fv_recv(&m.qp, 2, s, 3), EINVAL, "num_sge > max_recv_sge");
	assert_snap(&m, &sn);
	cr_assert_eq(fv_recv(&m.qp, 2, s, -1), EINVAL, "negative num_sge");
	assert_snap(&m, &sn);

	for (int i = 0; i < 3; i++)
		cr_assert_eq(fv_recv(&m.qp, 3, s, 2), 0);
	fv_recv_ring(&m.qp);
	snap(&m, &sn);
	cr_assert_eq(fv_recv(&m.qp, 4, s, 1), ENOMEM, "RQ full");
	assert_snap(&m, &sn);
	cr_assert_eq(fv_recv(&m.qp, 4, s, 3), ENOMEM, "full is checked before num_sge, as libmlx5 does");
	assert_snap(&m, &sn);
	tqp_free(&m);

	/* A QP on an SRQ has no RQ. */
	rq_qp(&m, 0x31, 0, 0);
	cr_assert_eq(fv_recv(&m.qp, 5, s, 1), EINVAL);
	cr_assert_eq(fv__rq_head(&m.qp), 0);
	cr_assert_eq(m.dbrec[MLX5_RCV_DBR], 0);
	tqp_free(&m);
}

/*
 * fv_recv in a caller's loop, as an application posts: the RQ's head and lim are stored
 * through a type of fastverbs' own (recv.h, fv__rq_ctr_put), and a read of the field after
 * such a store must see it. Were the store's type one the field does not have, gcc -O2 would
 * keep lim in a register across this loop (the QP found at run time, as the bench finds it):
 * the room test would miss the lim the slow path moved and post past the tail.
 */
struct recv_loop {
	struct tqp m[2];
	uint32_t lkey;
	uint64_t base;
};

static volatile unsigned recv_loop_q = 1;	/* the QP: not a constant the compiler folds */

static __attribute__((noinline)) int post_until_refused(struct recv_loop *l, uint64_t id, int max)
{
	const unsigned q = recv_loop_q;
	int n = 0;

	for (; n < max; n++) {
		const struct ibv_sge s = { .addr = l->base + (uint64_t)n * 64, .length = 64, .lkey = l->lkey };

		if (fv_recv(&l->m[q].qp, id + (uint64_t)n, &s, 1))
			break;
	}
	fv_recv_ring(&l->m[q].qp);
	return n;
}

Test(rq, caller_loop_sees_head_and_lim)
{
	struct recv_loop l = { .lkey = LKEY, .base = 0x10000 };
	struct tqp *m = &l.m[1];

	rq_qp(m, 0x32, 4, 16);
	cr_assert_eq(post_until_refused(&l, 0, 16), 4, "an empty RQ of 4 takes 4");
	cr_assert_eq(rq_dbr(m), 4);
	fv__rq_set_tail(&m->qp.rq, 2);	/* a poller freed two */
	cr_assert_eq(post_until_refused(&l, 4, 16), 2, "two freed, two posted");
	cr_assert_eq(rq_dbr(m), 6);
	cr_assert_eq(fv__rq_head(&m->qp), 6);
	fv__rq_set_tail(&m->qp.rq, 3);
	cr_assert_eq(post_until_refused(&l, 6, 16), 1, "one freed, one posted");
	cr_assert_eq(rq_dbr(m), 7);
	for (uint32_t i = 3; i < 7; i++)
		assert_seg(rq_wqe(m, i), 64, LKEY, 0x10000 + (i < 4 ? i : i < 6 ? i - 4 : 0) * 64);
	tqp_free(m);
}

Test(rq, compat_stops_at_bad_wr)
{
	struct ibv_sge s[3] = { sge(0x1000, 1), sge(0x2000, 2), sge(0x3000, 3) };
	struct ibv_recv_wr w[5], *bad = NULL;
	struct tqp m;
	struct rq_snap sn;

	rq_qp(&m, 0x32, 4, 32);
	for (int i = 0; i < 5; i++)
		w[i] = (struct ibv_recv_wr){ .wr_id = 10 + (uint64_t)i, .next = i < 4 ? &w[i + 1] : NULL, .sg_list = s, .num_sge = 1 };

	/* The second WR is bad: the first is posted and published, the third never looked at. */
	w[1].num_sge = 3;
	cr_assert_eq(fv_post_recv(&m.qp, w, &bad), EINVAL);
	cr_assert_eq(bad, &w[1]);
	assert_seg(rq_wqe(&m, 0), 1, LKEY, 0x1000);
	assert_untouched(rq_wqe(&m, 1), 3 * 32);
	cr_assert_eq(rq_dbr(&m), 1);
	cr_assert_eq(m.qp.rq.wrid[0], 10);

	/* A bad first WR: nothing written, not even the doorbell record. */
	m.dbrec[MLX5_RCV_DBR] = 0xdeadbeef;
	snap(&m, &sn);
	bad = NULL;
	cr_assert_eq(fv_post_recv(&m.qp, &w[1], &bad), EINVAL);
	cr_assert_eq(bad, &w[1]);
	assert_snap(&m, &sn);
	m.dbrec[MLX5_RCV_DBR] = htobe32(1);

	/* Filling up: three more fit, the fourth of the chain gets ENOMEM. */
	w[1].num_sge = 2;
	bad = NULL;
	cr_assert_eq(fv_post_recv(&m.qp, &w[1], &bad), ENOMEM);
	cr_assert_eq(bad, &w[4]);
	cr_assert_eq(rq_dbr(&m), 4);
	assert_seg(rq_wqe(&m, 1), 1, LKEY, 0x1000);
	assert_seg(rq_wqe(&m, 1) + 16, 2, LKEY, 0x2000);
	cr_assert_eq(m.qp.rq.wrid[3], 13);

	/* An empty list posts nothing. */
	bad = NULL;
	m.dbrec[MLX5_RCV_DBR] = 0xdeadbeef;
	cr_assert_eq(fv_post_recv(&m.qp, NULL, &bad), 0);
	cr_assert_null(bad);
	cr_assert_eq(m.dbrec[MLX5_RCV_DBR], 0xdeadbeef);
	tqp_free(&m);
}

/* ---- SRQ ---- */

struct memsrq {
	struct fv_srq srq;
	uint8_t *buf;
	__be32 *dbrec;
	uint32_t cnt, stride;
};

static void srq_init(struct memsrq *s, uint32_t cnt, uint32_t stride, uint32_t srqn, uint32_t start)
{
	s->cnt = cnt;
	s->stride = stride;
	s->buf = aligned_alloc(4096, (cnt * stride + 4095) & ~4095u);
	s->dbrec = aligned_alloc(64, 64);
	cr_assert(s->buf && s->dbrec);
	memset(s->buf, 0, cnt * stride);
	memset(s->dbrec, 0, 64);
	s->dbrec[0] = htobe32(start);
	/* A fresh libmlx5 SRQ: list 0 -> 1 -> ... -> cnt-1, tail = cnt - 1. */
	struct fv_srq_geom g = { .buf = s->buf, .wqe_cnt = cnt, .stride = stride, .dbrec = s->dbrec,
				 .srqn = srqn, .head = 0, .tail = cnt - 1, .link = 1 };

	cr_assert_eq(fv_srq_init_geom(&s->srq, &g), 0);
}

static void srq_free(struct memsrq *s)
{
	fv_srq_cleanup(&s->srq);
	free(s->buf);
	free(s->dbrec);
}

static uint8_t *srq_wqe(const struct memsrq *s, uint32_t idx)
{
	return s->buf + idx * s->stride;
}

static uint16_t srq_next(const struct memsrq *s, uint32_t idx)
{
	return be16toh(((struct mlx5_wqe_srq_next_seg *)srq_wqe(s, idx))->next_wqe_index);
}

Test(srq, wqe_bytes_and_doorbell)
{
	struct ibv_sge s[3] = { sge(0x1000, 16), sge(0x2000, 0), sge(0x3000, 48) };
	struct memsrq q;

	srq_init(&q, 8, 64, 0x99, 0);	/* max_gs 3 */
	cr_assert_eq(q.srq.max_gs, 3);
	cr_assert_eq(fv_srq_recv(&q.srq, 0x501, s, 1), 0);
	cr_assert_eq(fv_srq_recv(&q.srq, 0x502, s, 3), 0);
	cr_assert_eq(be32toh(q.dbrec[0]), 0, "no doorbell before fv_srq_ring");
	fv_srq_ring(&q.srq);
	cr_assert_eq(be32toh(q.dbrec[0]), 2);

	/* WQE 0: next segment (next index 1, the rest as libmlx5 left it), one segment, terminator. */
	static const uint8_t next0[16] = { 0, 0, 0x00, 0x01 };

	cr_assert_arr_eq(srq_wqe(&q, 0), next0, 16, "%s", cqe_hex(srq_wqe(&q, 0), 16));
	assert_seg(srq_wqe(&q, 0) + 16, 16, LKEY, 0x1000);
	assert_term(srq_wqe(&q, 0) + 32);
	/* WQE 1: the zero-length SGE dropped, so two segments and a terminator. */
	assert_seg(srq_wqe(&q, 1) + 16, 16, LKEY, 0x1000);
	assert_seg(srq_wqe(&q, 1) + 32, 48, LKEY, 0x3000);
	assert_term(srq_wqe(&q, 1) + 48);
	cr_assert_eq(q.srq.wrid[0], 0x501);
	cr_assert_eq(q.srq.wrid[1], 0x502);
	cr_assert_eq(q.srq.head, 2);

	/* All max_gs segments used: no terminator. */
	struct ibv_sge f[3] = { sge(0x1000, 1), sge(0x2000, 2), sge(0x3000, 3) };

	memset(srq_wqe(&q, 2) + 16, 0xaa, 48);
	cr_assert_eq(fv_srq_recv(&q.srq, 0x503, f, 3), 0);
	for (int i = 0; i < 3; i++)
		assert_seg(srq_wqe(&q, 2) + 16 * (i + 1), (uint32_t)i + 1, LKEY, 0x1000u * (i + 1));
	srq_free(&q);
}

/*
 * fv_srq_recv's list of one entry writes the terminator first (where it goes, or under the
 * entry when the WQE has room for one segment only), then the entry: the entry's bytes, the
 * terminator after it when there is room, and nothing past the WQE. Lengths fixed in the
 * code and read at run time take different paths at -O2.
 */
Test(srq, one_entry_lists)
{
	for (uint32_t stride = 32; stride <= 64; stride *= 2) {
		for (int fixed = 0; fixed < 2; fixed++) {
			volatile uint32_t len_rt = 24;
			struct ibv_sge s = fixed ? sge(0x5000, 24) : sge(0x5000, len_rt);
			struct ibv_sge z = sge(0x6000, 0);
			struct memsrq q;
			uint8_t pat[64];

			srq_init(&q, 8, stride, 0x94, 0);
			/* every byte past the next segments set, so that a stray store shows */
			memset(pat, 0xaa, sizeof(pat));
			for (uint32_t i = 0; i < q.cnt; i++)
				memcpy(srq_wqe(&q, i) + 16, pat, stride - 16);
			cr_assert_eq(fv_srq_recv(&q.srq, 0x900, &s, 1), 0);
			cr_assert_eq(fv_srq_recv(&q.srq, 0x901, &z, 1), 0);
			cr_assert_eq(q.srq.head, 2);
			assert_seg(srq_wqe(&q, 0) + 16, 24, LKEY, 0x5000);
			if (stride == 64) {
				assert_term(srq_wqe(&q, 0) + 32);
				cr_assert_arr_eq(srq_wqe(&q, 0) + 48, pat, 16, "stride %u", stride);
			}
			/* an empty entry is dropped: the terminator alone */
			assert_term(srq_wqe(&q, 1) + 16);
			if (stride == 64)
				cr_assert_arr_eq(srq_wqe(&q, 1) + 32, pat, 32, "stride %u", stride);
			cr_assert_eq(srq_next(&q, 1), 2, "the links are left alone");
			cr_assert_eq(srq_next(&q, 2), 3);
			cr_assert_arr_eq(srq_wqe(&q, 2) + 16, pat, stride - 16, "stride %u", stride);
			cr_assert_eq(q.srq.wrid[0], 0x900);
			cr_assert_eq(q.srq.wrid[1], 0x901);
			fv_srq_ring(&q.srq);
			cr_assert_eq(be32toh(q.dbrec[0]), 2);
			srq_free(&q);
		}
	}
}

Test(srq, out_of_order_completion_and_free_list_reuse)
{
	struct memsrq q;
	struct tqp m;
	struct cqe_cq c;
	struct fv_wc wc[4];
	struct ibv_sge s = sge(0x1000, 64);

	srq_init(&q, 8, 32, 0x98, 0);	/* list 0..7, tail 7: 7 WQEs usable */
	rq_qp(&m, 0x40, 0, 0);
	fv_qp_attach_srq(&m.qp, &q.srq);
	cqe_cq_init(&c, 8, 64, 0);

	for (uint32_t i = 0; i < 3; i++)
		cr_assert_eq(fv_srq_recv(&q.srq, 0x600 + i, &s, 1), 0);
	fv_srq_ring(&q.srq);

	/* The device consumes WQE 2, then WQE 0 (an SRQ completes in any order). */
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x40, .wqe_counter = 2, .srqn_uidx = 0x98 });
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x40, .wqe_counter = 0, .srqn_uidx = 0x98 });
	cr_assert_eq(fv_poll(&c.cq, wc, 4), 2);
	cr_assert_eq(wc[0].wr_id, 0x602);
	cr_assert_eq(wc[1].wr_id, 0x600);
	/* Both went after the old tail: 7 -> 2 -> 0, tail 0. */
	cr_assert_eq(srq_next(&q, 7), 2);
	cr_assert_eq(srq_next(&q, 2), 0);
	cr_assert_eq(q.srq.tail, 0);

	/* Posting walks 3, 4, 5, 6, 7, then reuses 2; 0 is the tail: full. */
	static const uint32_t order[] = { 3, 4, 5, 6, 7, 2 };

	for (uint32_t i = 0; i < 6; i++) {
		struct ibv_sge si = sge(0x10000 + i * 0x100, 8);

		cr_assert_eq(fv_srq_recv(&q.srq, 0x700 + i, &si, 1), 0);
		assert_seg(srq_wqe(&q, order[i]) + 16, 8, LKEY, 0x10000 + i * 0x100);
		cr_assert_eq(q.srq.wrid[order[i]], 0x700 + i);
	}
	cr_assert_eq(q.srq.head, q.srq.tail);
	cr_assert_eq(fv_srq_recv(&q.srq, 0x7ff, &s, 1), ENOMEM);
	fv_srq_ring(&q.srq);
	cr_assert_eq(be32toh(q.dbrec[0]), 9);

	/* Completing the reused WQE 2 reports the new wr_id. */
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x40, .wqe_counter = 2, .srqn_uidx = 0x98 });
	cr_assert_eq(fv_poll(&c.cq, wc, 4), 1);
	cr_assert_eq(wc[0].wr_id, 0x705);
	cr_assert_eq(srq_next(&q, 0), 2);
	cr_assert_eq(fv_srq_recv(&q.srq, 0x800, &s, 1), 0, "one free again");
	cqe_cq_free(&c);
	tqp_free(&m);
	srq_free(&q);
}

/*
 * fv_poll_cq for one completion a call releases the CQ's lock and the SRQ's (taken to link
 * the WQE back) by their own forms (docs/performance.md §8.2.3): both words free after each
 * call, the WQEs linked after the tail, the wr_ids in order.
 */
Test(srq, poll_cq_one_a_call_releases_the_locks)
{
	struct memsrq q;
	struct tqp m;
	struct cqe_cq c;
	struct ibv_wc wc[1];
	struct ibv_sge s = sge(0x1000, 64);

	srq_init(&q, 8, 32, 0x93, 0);
	rq_qp(&m, 0x41, 0, 0);
	fv_qp_attach_srq(&m.qp, &q.srq);
	cqe_cq_init(&c, 8, 64, 0);
	fv_set_lock(&q.srq, 1);
	fv_set_lock(&c.cq, 1);
	for (uint32_t i = 0; i < 2; i++)
		cr_assert_eq(fv_srq_recv(&q.srq, 0xa00 + i, &s, 1), 0);
	fv_srq_ring(&q.srq);
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x41, .wqe_counter = 1, .srqn_uidx = 0x93 });
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x41, .wqe_counter = 0, .srqn_uidx = 0x93 });
	for (uint32_t i = 0; i < 2; i++) {
		cr_assert_eq(fv_poll_cq(&c.cq, 1, wc), 1);
		cr_assert_eq(wc[0].wr_id, 0xa01 - i);
		cr_assert_eq(wc[0].status, IBV_WC_SUCCESS);
		cr_assert_eq(c.cq.lock, 0, "the CQ's lock released");
		cr_assert_eq(q.srq.lock, 0, "the SRQ's lock released");
		cr_assert_eq(q.srq.tail, 1 - i);
	}
	cr_assert_eq(srq_next(&q, 7), 1);
	cr_assert_eq(srq_next(&q, 1), 0);
	cr_assert_eq(fv_poll_cq(&c.cq, 1, wc), 0);
	cr_assert_eq(c.cq.lock, 0);
	cqe_cq_free(&c);
	tqp_free(&m);
	srq_free(&q);
}

Test(srq, full_and_refusals)
{
	struct ibv_sge s[4] = { sge(0x1000, 1), sge(0x2000, 2), sge(0x3000, 3), sge(0x4000, 4) };
	struct ibv_recv_wr w[4], *bad = NULL;
	struct memsrq q;
	uint8_t before[4 * 64];

	srq_init(&q, 4, 64, 0x97, 0);	/* 3 usable, max_gs 3 */
	for (int i = 0; i < 4; i++)
		w[i] = (struct ibv_recv_wr){ .wr_id = 20 + (uint64_t)i, .next = i < 3 ? &w[i + 1] : NULL, .sg_list = s, .num_sge = 2 };

	cr_assert_eq(fv_post_srq_recv(&q.srq, w, &bad), ENOMEM);
	cr_assert_eq(bad, &w[3]);
	cr_assert_eq(be32toh(q.dbrec[0]), 3, "one doorbell for the three posted");
	cr_assert_eq(q.srq.counter, 3);

	memcpy(before, q.buf, sizeof(before));
	q.dbrec[0] = 0xdeadbeef;
	cr_assert_eq(fv_srq_recv(&q.srq, 30, s, 1), ENOMEM);
	cr_assert_eq(fv_srq_recv(&q.srq, 30, s, 4), EINVAL, "num_sge is checked before fullness, as libmlx5 does");
	cr_assert_eq(fv_srq_recv(&q.srq, 30, s, -2), EINVAL);
	bad = NULL;
	cr_assert_eq(fv_post_srq_recv(&q.srq, &w[3], &bad), ENOMEM);
	cr_assert_eq(bad, &w[3]);
	cr_assert_arr_eq(q.buf, before, sizeof(before));
	cr_assert_eq(q.dbrec[0], 0xdeadbeef);
	cr_assert_eq(q.srq.counter, 3);
	srq_free(&q);

	/* Too many SGEs in the middle of a chain on a non-full SRQ. */
	srq_init(&q, 8, 32, 0x96, 0);	/* max_gs 1 */
	w[0].num_sge = 1;
	w[1].num_sge = 2;
	bad = NULL;
	cr_assert_eq(fv_post_srq_recv(&q.srq, w, &bad), EINVAL);
	cr_assert_eq(bad, &w[1]);
	cr_assert_eq(be32toh(q.dbrec[0]), 1);
	cr_assert_eq(q.srq.head, 1);
	assert_seg(srq_wqe(&q, 0) + 16, 1, LKEY, 0x1000);
	srq_free(&q);
}

Test(srq, counter_continues_past_2_16)
{
	struct memsrq q;
	struct ibv_sge s = sge(0x1000, 1);

	srq_init(&q, 8, 32, 0x95, 0xfffe);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(fv_srq_recv(&q.srq, (uint64_t)i, &s, 1), 0);
	fv_srq_ring(&q.srq);
	cr_assert_eq(be32toh(q.dbrec[0]), 1);
	srq_free(&q);
}

Test(srq, geometry_refused)
{
	struct fv_srq srq;
	uint8_t buf[256];
	__be32 db[2] = { 0, 0 };
	struct fv_srq_geom g = { .buf = buf, .wqe_cnt = 8, .stride = 16, .dbrec = db, .tail = 7 };

	cr_assert_eq(fv_srq_init_geom(&srq, &g), EINVAL, "stride below 32");
	g.stride = 32;
	g.wqe_cnt = 6;
	cr_assert_eq(fv_srq_init_geom(&srq, &g), EINVAL, "not a power of two");
	g.wqe_cnt = 8;
	g.tail = 8;
	cr_assert_eq(fv_srq_init_geom(&srq, &g), EINVAL, "tail out of range");
}

/*
 * fv_post_recv and fv_post_srq_recv post a list's WRs of one SGE through a fast head with the
 * queue's fields in registers, and every other WR (several SGEs, none, a zero-length one, the
 * queue at lim or full) through the general path, then go back to the head. Lists that mix
 * them, posted on one queue and WR by WR (fv_recv, fv_srq_recv, counts read at run time) on
 * its twin, leave the same bytes, wr_ids, counters, doorbell records, errno and bad_wr; the
 * RQ's tail moves between lists, so that a list passes lim and the head takes it up again.
 */
static void mixed_list(struct ibv_recv_wr *w, struct ibv_sge (*sg)[2], int n, int max, uint64_t id)
{
	for (int i = 0; i < n; i++) {
		int shape = (int)((id + (uint64_t)i) % 7);
		int nsge = shape == 2 && max >= 2 ? 2 : shape == 4 ? 0 : shape == 6 ? max + 1 : 1;

		sg[i][0] = sge(0x1000u * (uint64_t)(i + 1), shape == 1 ? 0 : 8 + (uint32_t)i);
		sg[i][1] = sge(0x80000u + 0x100u * (uint64_t)i, 4 + (uint32_t)i);
		w[i] = (struct ibv_recv_wr){ .wr_id = id + (uint64_t)i, .next = i + 1 < n ? &w[i + 1] : NULL,
					     .sg_list = sg[i], .num_sge = nsge };
	}
}

/* The twin's post of the same list, WR by WR: errno, and the index of the refused WR in *at. */
static int twin_post(struct fv_qp *qp, struct fv_srq *srq, struct ibv_recv_wr *w, int *at)
{
	int err = 0, i = 0;

	for (; w; w = w->next, i++) {
		volatile int n = w->num_sge;

		err = qp ? fv_recv(qp, w->wr_id, w->sg_list, n) : fv_srq_recv(srq, w->wr_id, w->sg_list, n);
		if (err)
			break;
	}
	if (i) {
		if (qp)
			fv_recv_ring(qp);
		else
			fv_srq_ring(srq);
	}
	*at = err ? i : -1;
	return err;
}

Test(rq, compat_lists_of_every_shape_as_one_by_one)
{
	for (uint32_t stride = 16; stride <= 64; stride *= 2) {
		struct tqp a, b;
		struct ibv_recv_wr w[12], *bad;
		struct ibv_sge sg[12][2];
		uint64_t id = 0x100;

		rq_qp(&a, 0x40, 8, stride);
		rq_qp(&b, 0x41, 8, stride);
		for (int round = 0; round < 24; round++) {
			int n = 1 + (round * 5) % 12, at, err;

			mixed_list(w, sg, n, (int)a.qp.rq.max_sge, id);
			bad = NULL;
			err = fv_post_recv(&a.qp, w, &bad);
			cr_assert_eq(err, twin_post(&b.qp, NULL, w, &at), "stride %u round %d", stride, round);
			cr_assert_eq(err ? (int)(bad - w) : -1, at, "stride %u round %d: bad_wr", stride, round);
			cr_assert_arr_eq(a.rq, b.rq, 8 * stride, "stride %u round %d", stride, round);
			cr_assert_arr_eq(a.qp.rq.wrid, b.qp.rq.wrid, 8 * sizeof(uint64_t));
			cr_assert_eq(fv__rq_head(&a.qp), fv__rq_head(&b.qp), "stride %u round %d", stride, round);
			cr_assert_eq(rq_dbr(&a), rq_dbr(&b), "stride %u round %d", stride, round);
			/* a poller frees some: every other round all, else two */
			uint32_t t = round % 2 ? fv__rq_head(&a.qp) : a.qp.rq.tail + 2;

			if (t - a.qp.rq.tail > fv__rq_head(&a.qp) - a.qp.rq.tail)
				t = fv__rq_head(&a.qp);
			fv__rq_set_tail(&a.qp.rq, t);
			fv__rq_set_tail(&b.qp.rq, t);
			id += (uint64_t)n;
		}
		tqp_free(&a);
		tqp_free(&b);
	}
}

Test(srq, compat_lists_of_every_shape_as_one_by_one)
{
	for (uint32_t stride = 32; stride <= 64; stride *= 2) {
		struct memsrq a, b;
		struct ibv_recv_wr w[12], *bad;
		struct ibv_sge sg[12][2];
		uint64_t id = 0x200;

		srq_init(&a, 16, stride, 0x90, 0);
		srq_init(&b, 16, stride, 0x91, 0);
		for (int round = 0; round < 24; round++) {
			int n = 1 + (round * 5) % 12, at, err;

			uint32_t idx = a.srq.head;

			mixed_list(w, sg, n, (int)a.srq.max_gs, id);
			bad = NULL;
			err = fv_post_srq_recv(&a.srq, w, &bad);
			cr_assert_eq(err, twin_post(NULL, &b.srq, w, &at), "stride %u round %d", stride, round);
			cr_assert_eq(err ? (int)(bad - w) : -1, at, "stride %u round %d: bad_wr", stride, round);
			cr_assert_arr_eq(a.buf, b.buf, 16 * stride, "stride %u round %d", stride, round);
			cr_assert_arr_eq(a.srq.wrid, b.srq.wrid, 16 * sizeof(uint64_t));
			cr_assert_eq(a.srq.head, b.srq.head);
			cr_assert_eq(a.srq.counter, b.srq.counter);
			cr_assert_eq(a.dbrec[0], b.dbrec[0], "stride %u round %d", stride, round);
			/* two rounds in three, the WQEs posted complete in order: linked after the tail */
			for (int k = 0; k < (err ? at : n) && round % 3; k++) {
				uint32_t next = srq_next(&a, idx);

				fv__srq_free(&a.srq, idx);
				fv__srq_free(&b.srq, idx);
				idx = next;
			}
			id += (uint64_t)n;
		}
		srq_free(&a);
		srq_free(&b);
	}
}
