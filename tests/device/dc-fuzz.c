/* Seeded fuzzing of the DC data path (FVSIM_FUZZ_SEED, FVSIM_FUZZ_ROUNDS as sim-fuzz):
 * DCI send queues full of random WQEs whose address vectors name the DCT with the right
 * or a wrong key, another number or random bytes, with random segments after them,
 * rung with random doorbell records, in single-step mode. Nothing may crash or hang,
 * nothing outside the MR may change, and afterwards the DCT, still in RTR, takes a
 * well-formed send. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "fuzz-rng.h"
#include "sim-dc.h"
#include "sim-util.h"

#define GUARD 4096
#define AREA 8192
#define KEY 0x1234567890abcdefull

static uint8_t *mem;

TestSuite(sim_dc_fuzz, .init = fuzz_suite_init, .timeout = 600);

static void check_guards(long round)
{
	for (int i = 0; i < GUARD; i++) {
		cr_assert_eq(mem[i], 0xa5, "round %ld: guard byte %d before the MR changed", round, i);
		cr_assert_eq(mem[GUARD + AREA + i], 0xa5, "round %ld: guard byte %d after the MR changed",
			     round, i);
	}
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, 8);
}

/* A random DCI WQE: garbage, or a plausible control segment and AV (the DCT's number and
 * key, or not) followed by random pointer segments aimed at the MR or near it. */
static void random_wqe(uint8_t *w, uint32_t stride, uint32_t idx, uint32_t qpn, uint32_t lkey,
		       uint32_t dctn, uint16_t lid)
{
	static const uint8_t ops[] = { 0x00, 0x01, 0x08, 0x09, 0x0a, 0x0b, 0x10, 0x11, 0x12, 0x25 };

	fuzz_fill(w, stride);
	if (fuzz_below(5) == 0)
		return;
	put32(w, idx << 8 | ops[fuzz_below(sizeof(ops))]);
	put32(w + 4, qpn << 8 | (1 + fuzz_below(stride / 16)));
	put32(w + 8, fuzz_below(2) ? 0x08 : (uint32_t)fuzz_next());
	put64(w + 16, fuzz_below(3) ? KEY : fuzz_next());
	put32(w + 24, (fuzz_below(4) ? dctn : (uint32_t)fuzz_next() & 0xffffff) |
			      (fuzz_below(4) ? 0x80000000u : 0));
	if (fuzz_below(4))
		put32(w + 28, lid);
	for (uint32_t s = 64; s + 16 <= stride; s += 16) {
		if (fuzz_below(2))
			continue;
		put32(w + s, fuzz_below(3) ? fuzz_below(AREA + 64) : (uint32_t)fuzz_next());
		put32(w + s + 4, fuzz_below(4) ? lkey : (uint32_t)fuzz_next());
		put64(w + s + 8, (uintptr_t)mem + GUARD +
					 (fuzz_below(4) ? fuzz_below(AREA) : fuzz_below(2 * GUARD + AREA)) -
					 (fuzz_below(4) ? 0 : GUARD));
	}
}

static struct mlx5dv_qp dv(struct ibv_qp *qp)
{
	struct mlx5dv_obj obj = { 0 };
	struct mlx5dv_qp d;

	obj.qp.in = qp;
	obj.qp.out = &d;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), 0);
	return d;
}

static void drain(struct ibv_cq *a, struct ibv_cq *b)
{
	struct ibv_wc wc[16];

	while (ibv_poll_cq(a, 16, wc) > 0 || ibv_poll_cq(b, 16, wc) > 0)
		;
}

Test(sim_dc_fuzz, random_dci_wqes)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 1 } };
	struct dc_cfg c = { .dct = true, .key = KEY };
	struct simt_dev d;
	struct ibv_mr *mr;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	struct ibv_qp *dct;
	struct dc_dest dest;
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_wc wc;

	cr_assert(fvsim_present(), "run through sim/fvsim-run");
	fvsim_set_step_mode(1);
	simt_open(&d, 0);
	mem = mmap(NULL, 2 * GUARD + AREA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(mem != MAP_FAILED);
	memset(mem, 0xa5, 2 * GUARD + AREA);
	mr = simt_mr(&d, mem + GUARD, AREA, SIMT_ACCESS_ALL);
	scq = simt_cq(&d, 64);
	rcq = simt_cq(&d, 64);
	srq = ibv_create_srq(d.pd, &sa);
	cr_assert(srq);
	c.pd = d.pd;
	c.cq = rcq;
	c.srq = srq;
	dct = dc_create(d.ctx, &c);
	cr_assert(dct);
	cr_assert_eq(dct_up(dct, SIMT_ACCESS_ALL, d.lid), 0);
	for (long r = 0; r < fuzz_rounds; r++) {
		struct dc_cfg ic = { .pd = d.pd, .cq = scq, .max_send_wr = 1u << fuzz_below(7) };
		struct ibv_qp *q = dc_create(d.ctx, &ic);
		struct mlx5dv_qp s;
		uint32_t n;
		int units = 0;

		cr_assert(q, "round %ld: DCI: %s", r, strerror(errno));
		/* rnr_retry 7 would retry forever against an empty SRQ. */
		cr_assert_eq(dci_up(q, (int)fuzz_below(7)), 0);
		for (int i = 0; i < 4; i++) {
			struct ibv_sge sge = { (uintptr_t)mem + GUARD + 1024 * (uint32_t)i, 1024, mr->lkey };
			struct ibv_recv_wr rw = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

			ibv_post_srq_recv(srq, &rw, &bad); /* a full SRQ is fine */
		}
		s = dv(q);
		for (uint32_t i = 0; i < s.sq.wqe_cnt; i++)
			random_wqe((uint8_t *)s.sq.buf + i * s.sq.stride, s.sq.stride, i, q->qp_num,
				   mr->lkey, dct->qp_num, d.lid);
		n = fuzz_below(3) ? 1 + fuzz_below(8) : fuzz_below(65536);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		s.dbrec[MLX5_SND_DBR] = htobe32(n);
		for (int k = 0; k < 8; k++) {
			units += fvsim_run_until_idle();
			drain(scq, rcq);
		}
		cr_assert_lt(units, 8 * 70000, "round %ld: %d units of work", r, units);
		check_guards(r);
		cr_assert_eq(ibv_destroy_qp(q), 0);
		drain(scq, rcq);
	}
	/* The DCT is unharmed: a well-formed send from a new DCI arrives. */
	{
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;
		struct dc_cfg ic = { .pd = d.pd, .cq = scq };
		struct ibv_qp *q = dc_create(d.ctx, &ic);

		cr_assert_eq(ibv_query_qp(dct, &a, IBV_QP_STATE, &ia), 0);
		cr_expect_eq(a.qp_state, IBV_QPS_RTR);
		cr_assert(q);
		cr_assert_eq(dci_up(q, 0), 0);
		/* Empty the SRQ's leftovers into the CQ first: each takes one message. */
		aa.dlid = d.lid;
		dest.ah = ibv_create_ah(d.pd, &aa);
		cr_assert(dest.ah);
		dest.dctn = dct->qp_num;
		dest.key = KEY;
		memcpy(mem + GUARD + 6000, "still fine", 11);
		for (int i = 0; i < 1000; i++) {
			cr_assert_eq(dc_post(q, &dest, IBV_WR_SEND, 1, mr->lkey, mem + GUARD + 6000, 11,
					     0, 0),
				     0);
			cr_assert_eq(dc_wait(scq, &wc, 5000), 1);
			if (wc.status != IBV_WC_SUCCESS)
				break; /* RNR: the SRQ is empty now */
			drain(rcq, rcq);
		}
		cr_expect_eq(wc.status, IBV_WC_RNR_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
		cr_assert_eq(ibv_modify_qp(q, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
					   IBV_QP_STATE),
			     0);
		cr_assert_eq(dci_up(q, 0), 0);
		simt_post_srq_recv(srq, 77, mem + GUARD + 7000, 64, mr->lkey);
		cr_assert_eq(dc_post(q, &dest, IBV_WR_SEND, 2, mr->lkey, mem + GUARD + 6000, 11, 0, 0),
			     0);
		cr_assert_eq(dc_wait(scq, &wc, 5000), 1);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
		cr_assert_eq(dc_wait(rcq, &wc, 5000), 1);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS);
		cr_expect_eq(wc.wr_id, 77);
		cr_expect_str_eq((char *)mem + GUARD + 7000, "still fine");
		cr_expect_eq(ibv_destroy_qp(q), 0);
		cr_expect_eq(ibv_destroy_ah(dest.ah), 0);
	}
	check_guards(fuzz_rounds);
	cr_expect_eq(ibv_destroy_qp(dct), 0);
	cr_expect_eq(ibv_destroy_srq(srq), 0);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(mr);
	simt_close(&d);
}
