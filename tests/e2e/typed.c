/*
 * End to end on the software device, fastverbs all the way: QPs and CQs created with
 * libibverbs, taken over with fv_*_init, driven by the typed builders, fv_recv and
 * fv_poll_cq. Data must arrive, completions must be right, errors must carry the right
 * status, and the send ring and the CQ must wrap many times.
 */
#include <fastverbs/fastverbs.h>
#include "sim-poll.h"
#include "sim-util.h"

#define BUF 65536

struct end {
	struct ibv_qp *ibqp;
	struct ibv_cq *ibcq;
	struct fv_qp qp;
	struct fv_cq cq;
	uint8_t *buf;
	struct ibv_mr *mr;
};

struct pair {
	struct simt_dev d;
	struct end a, b;
};

static void end_open(struct pair *p, struct end *e, enum ibv_qp_type type, int cqe, uint32_t wr)
{
	e->buf = simt_mem(&p->d, BUF, SIMT_ACCESS_ALL, &e->mr);
	e->ibcq = simt_cq(&p->d, cqe);
	e->ibqp = simt_qp(&p->d, &(struct setup_qp_cfg){ .type = type, .scq = e->ibcq, .max_send_wr = wr,
		.max_recv_wr = 256, .max_send_sge = 2, .max_recv_sge = 2, .max_inline = 64 });
}

/* Two connected QPs (RC/UC) or two ready UD QPs, each with its own CQ, taken over. */
static void pair_open(struct pair *p, enum ibv_qp_type type, int cqe, uint32_t wr)
{
	fvsim_set_step_mode(1);
	simt_open(&p->d, 0);
	end_open(p, &p->a, type, cqe, wr);
	end_open(p, &p->b, type, cqe, wr);
	if (type == IBV_QPT_UD) {
		simt_ud_ready(p->a.ibqp, 0x42);
		simt_ud_ready(p->b.ibqp, 0x42);
	} else {
		simt_connect(p->a.ibqp, p->d.lid, p->b.ibqp->qp_num, SIMT_ACCESS_ALL, 7, 7);
		simt_connect(p->b.ibqp, p->d.lid, p->a.ibqp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	}
	for (struct end *e = &p->a; e; e = e == &p->a ? &p->b : NULL) {
		cr_assert_eq(fv_qp_init(&e->qp, e->ibqp), 0);
		cr_assert_eq(fv_cq_init(&e->cq, e->ibcq), 0);
	}
}

static void pair_close(struct pair *p)
{
	for (struct end *e = &p->a; e; e = e == &p->a ? &p->b : NULL) {
		fv_cq_cleanup(&e->cq);
		fv_qp_cleanup(&e->qp);
		cr_assert_eq(ibv_destroy_qp(e->ibqp), 0);
		cr_assert_eq(ibv_destroy_cq(e->ibcq), 0);
		cr_assert_eq(ibv_dereg_mr(e->mr), 0);
		free(e->buf);
	}
	simt_close(&p->d);
}

/* fv_poll_cq until n completions arrived, letting the device work; fails on a timeout. */
static void fv_wait(struct fv_cq *cq, struct ibv_wc *wc, int n)
{
	struct timespec t0;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		int r = fv_poll_cq(cq, n - got, wc + got);

		cr_assert(r >= 0, "fv_poll_cq: %d", r);
		got += r;
		if (got < n) {
			cr_assert(simt_ms_since(&t0) < SIMT_WAIT_MS, "only %d of %d completions", got, n);
			simt_kick();
		}
	}
}

static struct ibv_sge sge_of(struct end *e, uint32_t off, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)e->buf + off, .length = len, .lkey = e->mr->lkey };
}

static void expect_wc(const struct ibv_wc *wc, uint64_t wr_id, enum ibv_wc_opcode op, uint32_t len)
{
	cr_assert_eq(wc->status, IBV_WC_SUCCESS, "wr_id %llu: %s", (unsigned long long)wc->wr_id,
		     ibv_wc_status_str(wc->status));
	cr_assert_eq(wc->wr_id, wr_id);
	cr_assert_eq(wc->opcode, op, "wr_id %llu: opcode %d, want %d", (unsigned long long)wr_id, wc->opcode, op);
	if (len != UINT32_MAX)
		cr_assert_eq(wc->byte_len, len, "wr_id %llu: byte_len %u, want %u", (unsigned long long)wr_id,
			     wc->byte_len, len);
}

Test(sim_e2e, rc_every_operation)
{
	struct pair p;
	struct fv_rc *a;
	struct ibv_wc wc[4];

	pair_open(&p, IBV_QPT_RC, 256, 64);
	a = (struct fv_rc *)&p.a.qp;
	for (int i = 0; i < 256; i++)
		p.a.buf[i] = (uint8_t)(i * 7 + 1);
	uint64_t *remote64 = (uint64_t *)(p.b.buf + 4096);
	*remote64 = 100;

	/* SEND into a posted receive, with immediate data. */
	struct ibv_sge r = sge_of(&p.b, 8192, 512), s = sge_of(&p.a, 0, 200);
	cr_assert_eq(fv_recv(&p.b.qp, 77, &r, 1), 0);
	fv_recv_ring(&p.b.qp);
	cr_assert_eq(fv_send_imm(a, 1, FV_SIGNALED, &s, htobe32(0xfeed)), 0);
	fv_ring(a);
	fv_wait(&p.a.cq, wc, 1);
	expect_wc(&wc[0], 1, IBV_WC_SEND, UINT32_MAX);
	fv_wait(&p.b.cq, wc, 1);
	expect_wc(&wc[0], 77, IBV_WC_RECV, 200);
	cr_assert(wc[0].wc_flags & IBV_WC_WITH_IMM);
	cr_assert_eq(be32toh(wc[0].imm_data), 0xfeed);
	cr_assert_eq(wc[0].src_qp, p.a.ibqp->qp_num);
	cr_assert_arr_eq(p.b.buf + 8192, p.a.buf, 200);

	/* RDMA WRITE (inline), WRITE WITH IMM (consumes a receive), READ back. */
	cr_assert_eq(fv_write_inline(a, 2, 0, p.a.buf, 48, (uintptr_t)p.b.buf + 100, p.b.mr->rkey), 0);
	cr_assert_eq(fv_recv(&p.b.qp, 78, NULL, 0), 0);
	fv_recv_ring(&p.b.qp);
	s = sge_of(&p.a, 64, 32);
	cr_assert_eq(fv_write_imm(a, 3, FV_SIGNALED, &s, (uintptr_t)p.b.buf + 300, p.b.mr->rkey, htobe32(9)), 0);
	s = sge_of(&p.a, 1024, 64);
	cr_assert_eq(fv_read(a, 4, FV_SIGNALED, &s, (uintptr_t)p.b.buf + 100, p.b.mr->rkey), 0);
	fv_ring(a);
	fv_wait(&p.a.cq, wc, 2);	/* the unsignaled WRITE completes silently */
	expect_wc(&wc[0], 3, IBV_WC_RDMA_WRITE, UINT32_MAX);
	expect_wc(&wc[1], 4, IBV_WC_RDMA_READ, 64);
	fv_wait(&p.b.cq, wc, 1);
	expect_wc(&wc[0], 78, IBV_WC_RECV_RDMA_WITH_IMM, 32);
	cr_assert_eq(be32toh(wc[0].imm_data), 9);
	cr_assert_arr_eq(p.b.buf + 100, p.a.buf, 48, "inline WRITE data");
	cr_assert_arr_eq(p.b.buf + 300, p.a.buf + 64, 32, "WRITE WITH IMM data");
	cr_assert_arr_eq(p.a.buf + 1024, p.b.buf + 100, 64, "READ data");

	/* Atomics: the old value lands in the local SGE, host order. */
	s = sge_of(&p.a, 2048, 8);
	cr_assert_eq(fv_fadd(a, 5, FV_SIGNALED, &s, (uintptr_t)remote64, p.b.mr->rkey, 23), 0);
	struct ibv_sge s2 = sge_of(&p.a, 2056, 8);
	cr_assert_eq(fv_cas(a, 6, FV_SIGNALED, &s2, (uintptr_t)remote64, p.b.mr->rkey, 123, 999), 0);
	fv_ring(a);
	fv_wait(&p.a.cq, wc, 2);
	expect_wc(&wc[0], 5, IBV_WC_FETCH_ADD, 8);
	expect_wc(&wc[1], 6, IBV_WC_COMP_SWAP, 8);
	cr_assert_eq(*(uint64_t *)(p.a.buf + 2048), 100);
	cr_assert_eq(*(uint64_t *)(p.a.buf + 2056), 123);
	cr_assert_eq(*remote64, 999);
	pair_close(&p);
}

/* A bad rkey: REMOTE_ACCESS_ERR for that WR (even unsignaled), then flush errors. */
Test(sim_e2e, rc_bad_rkey_then_flush)
{
	struct pair p;
	struct fv_rc *a;
	struct ibv_wc wc[3];

	pair_open(&p, IBV_QPT_RC, 64, 64);
	a = (struct fv_rc *)&p.a.qp;
	struct ibv_sge s = sge_of(&p.a, 0, 16);
	cr_assert_eq(fv_write(a, 1, 0, &s, (uintptr_t)p.b.buf, p.b.mr->rkey ^ 0x5a5a00), 0);
	cr_assert_eq(fv_write(a, 2, FV_SIGNALED, &s, (uintptr_t)p.b.buf, p.b.mr->rkey), 0);
	cr_assert_eq(fv_send(a, 3, 0, &s), 0);
	fv_ring(a);
	fv_wait(&p.a.cq, wc, 3);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[0].status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc[0].status));
	for (int i = 1; i < 3; i++) {
		cr_assert_eq(wc[i].wr_id, (uint64_t)i + 1);
		cr_assert_eq(wc[i].status, IBV_WC_WR_FLUSH_ERR, "%s", ibv_wc_status_str(wc[i].status));
	}
	pair_close(&p);
}

/*
 * 70,000 RDMA WRITEs, one signaled every 16, on a 64-entry-ish ring and a small CQ: the
 * producer counter passes 2^16, the ring wraps hundreds of times, the CQ many times, and
 * every WRITE's data lands.
 */
Test(sim_e2e, rc_send_ring_and_cq_wrap_past_2_16)
{
	struct pair p;
	struct fv_rc *a;
	struct ibv_wc wc[16];
	const uint32_t total = 70000;
	uint32_t done = 0, posted = 0;

	pair_open(&p, IBV_QPT_RC, 16, 32);
	a = (struct fv_rc *)&p.a.qp;
	cr_assert_leq(p.a.qp.sq.mask + 1, 256u, "want a small ring to wrap often");
	for (uint32_t i = 0; i < 4096; i++)
		((uint32_t *)p.a.buf)[i] = i * 2654435761u;
	while (done < total) {
		int n = 0;

		while (posted < total) {
			uint32_t slot = posted % 4096;
			struct ibv_sge s = sge_of(&p.a, slot * 4, 4);
			unsigned f = (posted % 16 == 15 || posted == total - 1) ? FV_SIGNALED : 0;

			if (fv_write(a, posted, f, &s, (uintptr_t)p.b.buf + slot * 4, p.b.mr->rkey) == ENOMEM)
				break;
			posted++;
		}
		fv_ring(a);
		simt_kick();
		n = fv_poll_cq(&p.a.cq, 16, wc);
		cr_assert(n >= 0);
		for (int i = 0; i < n; i++) {
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "wr %llu: %s", (unsigned long long)wc[i].wr_id,
				     ibv_wc_status_str(wc[i].status));
			cr_assert(wc[i].wr_id % 16 == 15 || wc[i].wr_id == total - 1, "unsignaled wr_id %llu reported",
				  (unsigned long long)wc[i].wr_id);
			done = (uint32_t)wc[i].wr_id + 1;
		}
	}
	cr_assert_gt(p.a.qp.sq.pi, 65536u, "producer counter %u did not pass 2^16", p.a.qp.sq.pi);
	cr_assert_gt(p.a.cq.ci, 4000u);
	cr_assert_arr_eq(p.b.buf, p.a.buf, 4096 * 4, "written data");
	pair_close(&p);
}

/* UC: WRITE WITH IMM and SEND arrive; UD: SEND through an fv_ah, GRH area first. */
Test(sim_e2e, uc_and_ud)
{
	struct pair p;
	struct ibv_wc wc[2];

	pair_open(&p, IBV_QPT_UC, 64, 64);
	struct fv_uc *u = (struct fv_uc *)&p.a.qp;
	struct ibv_sge s = sge_of(&p.a, 0, 40), r = sge_of(&p.b, 4096, 64);
	memset(p.a.buf, 0xab, 40);
	cr_assert_eq(fv_recv(&p.b.qp, 1, &r, 1), 0);
	cr_assert_eq(fv_recv(&p.b.qp, 2, &r, 1), 0);
	fv_recv_ring(&p.b.qp);
	cr_assert_eq(fv_write_imm(u, 10, 0, &s, (uintptr_t)p.b.buf, p.b.mr->rkey, htobe32(5)), 0);
	cr_assert_eq(fv_send(u, 11, FV_SIGNALED, &s), 0);
	fv_ring(u);
	fv_wait(&p.a.cq, wc, 1);
	expect_wc(&wc[0], 11, IBV_WC_SEND, UINT32_MAX);
	fv_wait(&p.b.cq, wc, 2);
	expect_wc(&wc[0], 1, IBV_WC_RECV_RDMA_WITH_IMM, 40);
	expect_wc(&wc[1], 2, IBV_WC_RECV, 40);
	cr_assert_arr_eq(p.b.buf, p.a.buf, 40);
	cr_assert_arr_eq(p.b.buf + 4096, p.a.buf, 40);
	pair_close(&p);

	pair_open(&p, IBV_QPT_UD, 64, 64);
	struct fv_ud *ud = (struct fv_ud *)&p.a.qp;
	struct ibv_ah *ibah = ibv_create_ah(p.d.pd, &(struct ibv_ah_attr){ .dlid = p.d.lid, .port_num = 1 });
	struct fv_ah ah;
	cr_assert(ibah);
	cr_assert_eq(fv_ah_init(&ah, ibah), 0);
	r = sge_of(&p.b, 0, 40 + 100);
	cr_assert_eq(fv_recv(&p.b.qp, 3, &r, 1), 0);
	fv_recv_ring(&p.b.qp);
	cr_assert_eq(fv_send_inline(ud, 12, FV_SIGNALED, "datagram!", 9, &ah, p.b.ibqp->qp_num, 0x42), 0);
	fv_ring(ud);
	fv_wait(&p.a.cq, wc, 1);
	expect_wc(&wc[0], 12, IBV_WC_SEND, UINT32_MAX);
	fv_wait(&p.b.cq, wc, 1);
	expect_wc(&wc[0], 3, IBV_WC_RECV, 40 + 9);
	cr_assert_eq(wc[0].src_qp, p.a.ibqp->qp_num);
	cr_assert_arr_eq(p.b.buf + 40, "datagram!", 9);
	cr_assert_eq(ibv_destroy_ah(ibah), 0);
	pair_close(&p);
}

/*
 * Memory windows through fastverbs: B binds a type 2 window over part of its buffer with
 * fv_bind_mw, A writes through its rkey, B invalidates it with fv_local_inv and A's next
 * write is refused; then a rebind, and A's SEND_WITH_INV invalidates it at B, whose receive
 * completion says so through fv_poll (and a third bind through fv_poll_cq).
 */
static void mw_end_to_end(enum ibv_qp_type type)
{
	struct pair p;
	struct fv_rc *b;
	struct ibv_mw *mw;
	struct ibv_mr *bind_mr;
	struct ibv_mw_bind_info bi;
	struct ibv_sge s;
	struct ibv_wc wc;
	struct fv_wc fw;
	uint32_t rkey;

	pair_open(&p, type, 256, 64);
	b = (struct fv_rc *)&p.b.qp;	/* RC or UC: the builders share the layout */
	bind_mr = simt_mr(&p.d, p.b.buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(p.d.pd, IBV_MW_TYPE_2);
	cr_assert(mw);
	bi = (struct ibv_mw_bind_info){ .mr = bind_mr, .addr = (uintptr_t)p.b.buf + 4096, .length = 1024,
					.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	rkey = ibv_inc_rkey(mw->rkey);
	if (type == IBV_QPT_RC)
		cr_assert_eq(fv_bind_mw(b, 1, FV_SIGNALED, mw, rkey, &bi), 0);
	else
		cr_assert_eq(fv_bind_mw((struct fv_uc *)b, 1, FV_SIGNALED, mw, rkey, &bi), 0);
	fv_ring(b);
	fw = simt_poll1(&p.b.cq);
	cr_assert_eq(fw.status, IBV_WC_SUCCESS, "bind: %s", ibv_wc_status_str(fw.status));
	cr_assert_eq(fw.opcode, IBV_WC_BIND_MW);
	cr_assert_eq(fw.wr_id, 1);

	/* A writes 100 bytes through the window. */
	for (int i = 0; i < 100; i++)
		p.a.buf[i] = (uint8_t)(3 * i + 5);
	s = sge_of(&p.a, 0, 100);
	cr_assert_eq(fv_write((struct fv_rc *)&p.a.qp, 2, FV_SIGNALED, &s, (uintptr_t)p.b.buf + 4096 + 8, rkey), 0);
	fv_ring((struct fv_rc *)&p.a.qp);
	fv_wait(&p.a.cq, &wc, 1);
	expect_wc(&wc, 2, IBV_WC_RDMA_WRITE, UINT32_MAX);
	cr_assert_arr_eq(p.b.buf + 4096 + 8, p.a.buf, 100);

	/* B invalidates it; the completion says LOCAL_INV (fv_poll_cq). */
	cr_assert_eq(fv_local_inv(b, 3, FV_SIGNALED, rkey), 0);
	fv_ring(b);
	fv_wait(&p.b.cq, &wc, 1);
	expect_wc(&wc, 3, IBV_WC_LOCAL_INV, UINT32_MAX);

	/* Rebound (the key moves on), then invalidated by A's SEND_WITH_INV. */
	mw->rkey = rkey;
	rkey = ibv_inc_rkey(rkey);
	cr_assert_eq(fv_bind_mw(b, 4, FV_SIGNALED, mw, rkey, &bi), 0);
	fv_ring(b);
	fv_wait(&p.b.cq, &wc, 1);
	expect_wc(&wc, 4, IBV_WC_BIND_MW, UINT32_MAX);
	s = sge_of(&p.b, 8192, 64);
	cr_assert_eq(fv_recv(&p.b.qp, 5, &s, 1), 0);
	fv_recv_ring(&p.b.qp);
	s = sge_of(&p.a, 0, 16);
	cr_assert_eq(fv_send_inv((struct fv_rc *)&p.a.qp, 6, FV_SIGNALED, &s, rkey), 0);
	fv_ring((struct fv_rc *)&p.a.qp);
	fv_wait(&p.a.cq, &wc, 1);
	expect_wc(&wc, 6, IBV_WC_SEND, UINT32_MAX);
	fw = simt_poll1(&p.b.cq);
	cr_assert_eq(fw.status, IBV_WC_SUCCESS);
	cr_assert_eq(fw.opcode, IBV_WC_RECV);
	cr_assert_eq(fw.wr_id, 5);
	cr_assert_eq(fw.byte_len, 16);
	cr_assert_eq(fw.wc_flags & IBV_WC_WITH_INV, IBV_WC_WITH_INV, "wc_flags %#x", fw.wc_flags);
	cr_assert_eq(fw.invalidated_rkey, rkey);

	/* The window is gone: A's next write is refused (RC) or dropped (UC). */
	memset(p.b.buf + 4096, 0, 256);
	s = sge_of(&p.a, 0, 64);
	cr_assert_eq(fv_write((struct fv_rc *)&p.a.qp, 7, FV_SIGNALED, &s, (uintptr_t)p.b.buf + 4096, rkey), 0);
	fv_ring((struct fv_rc *)&p.a.qp);
	fv_wait(&p.a.cq, &wc, 1);
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(wc.status, type == IBV_QPT_RC ? IBV_WC_REM_ACCESS_ERR : IBV_WC_SUCCESS, "%s",
		     ibv_wc_status_str(wc.status));
	for (int i = 0; i < 256; i++)
		cr_assert_eq(p.b.buf[4096 + i], 0, "byte %d written through an invalid window", i);

	cr_assert_eq(ibv_dealloc_mw(mw), 0);
	cr_assert_eq(ibv_dereg_mr(bind_mr), 0);
	pair_close(&p);
}

Test(sim_e2e, rc_memory_window)
{
	mw_end_to_end(IBV_QPT_RC);
}

Test(sim_e2e, uc_memory_window)
{
	mw_end_to_end(IBV_QPT_UC);
}
