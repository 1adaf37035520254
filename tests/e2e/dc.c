/*
 * DC through fastverbs on the software device: a DCI taken over by fv_dci_init (a DCT is
 * refused, without mlx5dv_init_obj, which would crash on it), typed builders writing,
 * reading, sending and doing atomics to three DCTs picked per WR, their receives polled
 * through fv_dct_init's registration with fv_poll and fv_poll_cq, fv_post_send refused on a
 * DCI with EINVAL and nothing posted, and a DCI that a wrong key put in error, reset and
 * connected again (ERR -> RESET -> INIT -> RTR -> RTS), posting again after fv_qp_reset; the
 * same without fv_qp_reset fails (the control).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <fastverbs/fastverbs.h>

#include "sim-dc.h"
#include "sim-poll.h"
#include "sim-util.h"

#define KEY  0x0badc0de12345678ull
#define NDCT 3
#define MSG  64

struct dct_end {
	struct ibv_cq *ibcq;
	struct ibv_srq *ibsrq;
	struct ibv_qp *qp;
	struct ibv_ah *ibah;
	struct fv_ah ah;
	struct fv_cq cq;
	struct fv_srq srq;
	struct fv_dct dct;
};

static struct simt_dev dev;
static struct ibv_cq *scq;
static struct ibv_mr *mr;
static uint8_t *mem;
static struct dct_end dcts[NDCT];
static struct ibv_qp *ibdci;
static struct fv_dci dci;
static struct fv_cq fcq;

static void dct_open(struct dct_end *d)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct dc_cfg c = { .dct = true, .pd = dev.pd, .key = KEY };
	struct ibv_ah_attr aa = { .dlid = dev.lid, .port_num = 1 };

	d->ibcq = c.cq = simt_cq(&dev, 32);
	d->ibsrq = c.srq = ibv_create_srq(dev.pd, &sa);
	cr_assert(d->ibsrq, "ibv_create_srq: %s", strerror(errno));
	d->qp = dc_create(dev.ctx, &c);
	cr_assert(d->qp, "DCT: %s", strerror(errno));
	cr_assert_eq(fv_srq_init(&d->srq, d->ibsrq), 0);
	cr_assert_eq(fv_cq_init(&d->cq, d->ibcq), 0);
	/* before RTR a DCT has no number: nothing to register yet */
	cr_assert_eq(fv_dct_init(&d->dct, d->qp, &d->srq), EINVAL);
	cr_assert_eq(dct_up(d->qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
				   IBV_ACCESS_LOCAL_WRITE, dev.lid), 0);
	cr_assert_eq(fv_dct_init(&d->dct, d->qp, &d->srq), 0);
	d->ibah = ibv_create_ah(dev.pd, &aa);
	cr_assert(d->ibah);
	cr_assert_eq(fv_ah_init(&d->ah, d->ibah), 0);
}

static void dct_close(struct dct_end *d)
{
	fv_dct_cleanup(&d->dct);
	cr_assert_eq(ibv_destroy_qp(d->qp), 0);
	cr_assert_eq(ibv_destroy_ah(d->ibah), 0);
	fv_srq_cleanup(&d->srq);
	cr_assert_eq(ibv_destroy_srq(d->ibsrq), 0);
	fv_cq_cleanup(&d->cq);
	cr_assert_eq(ibv_destroy_cq(d->ibcq), 0);
}

static void open_all(void)
{
	struct dc_cfg c;

	simt_open(&dev, 0);
	scq = simt_cq(&dev, 64);
	mem = simt_mem(&dev, 1 << 16, SIMT_ACCESS_ALL, &mr);
	for (int i = 0; i < NDCT; i++)
		dct_open(&dcts[i]);
	memset(&c, 0, sizeof(c));
	c.pd = dev.pd, c.cq = scq, c.max_send_wr = 16;
	ibdci = dc_create(dev.ctx, &c);
	cr_assert(ibdci, "DCI: %s", strerror(errno));
	cr_assert_eq(dci_up(ibdci, 7), 0);
	cr_assert_eq(fv_dci_init(&dci, ibdci), 0);
	cr_assert_eq(fv_cq_init(&fcq, scq), 0);
}

static void close_all(void)
{
	fv_qp_cleanup(&dci.qp);
	fv_cq_cleanup(&fcq);
	cr_assert_eq(ibv_destroy_qp(ibdci), 0);
	for (int i = 0; i < NDCT; i++)
		dct_close(&dcts[i]);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	free(mem);
	cr_assert_eq(ibv_destroy_cq(scq), 0);
	simt_close(&dev);
}

TestSuite(e2e_dc, .init = open_all, .fini = close_all, .timeout = 60);

/* The handles: a DCT is no DCI (and the probe must not crash on it), a DCI no DCT. */
Test(e2e_dc, handles)
{
	struct fv_dci h;
	struct fv_qp q;
	struct fv_dct t;

	cr_expect_eq(fv_dci_init(&h, dcts[0].qp), EINVAL);
	cr_expect_eq(fv_qp_init(&q, dcts[0].qp), EINVAL);
	cr_expect_eq(fv_dct_init(&t, ibdci, &dcts[0].srq), EINVAL);
	cr_expect_eq(fv_dct_init(&t, dcts[0].qp, &dcts[1].srq), EINVAL, "another DCT's SRQ");
	cr_expect_eq(dci.qp.qpt, FV_QPT_DCI);
	cr_expect_eq(dci.qp.qpn, ibdci->qp_num);
	cr_expect_eq(fv_registry_qp(dcts[1].qp->qp_num), &dcts[1].dct.qp);
}

/* fv_post_send on a DCI: EINVAL, bad_wr the first WR, nothing posted or rung. */
Test(e2e_dc, post_send_refused)
{
	struct ibv_sge s = { (uintptr_t)mem, 8, mr->lkey };
	struct ibv_send_wr wr2 = { .wr_id = 2, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_send_wr wr = { .wr_id = 1, .next = &wr2, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE };
	struct ibv_send_wr *bad = NULL;
	uint32_t pi = dci.qp.sq.pi, dbr = be32toh(dci.qp.sq.dbrec[0]);

	cr_assert_eq(fv_post_send(&dci.qp, &wr, &bad), EINVAL);
	cr_expect_eq(bad, &wr);
	cr_expect_eq(dci.qp.sq.pi, pi);
	cr_expect_eq(be32toh(dci.qp.sq.dbrec[0]), dbr);
	cr_expect_eq(fv_post_send(&dci.qp, NULL, &bad), 0, "an empty list");
}

/* Typed builders to three DCTs picked per WR: data lands, completions come, receives on each
 * DCT's SRQ are found by fv_poll and fv_poll_cq. */
Test(e2e_dc, typed_to_three_dcts)
{
	uint8_t *src = mem, *dst = mem + 4096, *rbuf = mem + 8192;
	uint64_t *atom = (uint64_t *)(void *)(mem + 12288), *old = atom + 1;

	for (int i = 0; i < 3 * MSG; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	memset(dst, 0, 3 * MSG);
	for (int i = 0; i < NDCT; i++) {
		struct ibv_sge r = { (uintptr_t)(rbuf + i * MSG), MSG, mr->lkey };

		cr_assert_eq(fv_srq_recv(&dcts[i].srq, 100 + i, &r, 1), 0);
		fv_srq_ring(&dcts[i].srq);
	}
	/* a WRITE to each DCT, then a SEND with immediate to each, one doorbell */
	for (int i = 0; i < NDCT; i++) {
		struct ibv_sge s = { (uintptr_t)(src + i * MSG), MSG, mr->lkey };
		struct dct_end *d = &dcts[(i + 1) % NDCT];

		cr_assert_eq(fv_write(&dci, 10 + i, FV_SIGNALED, &s, (uintptr_t)(dst + i * MSG), mr->rkey, &d->ah,
				      d->qp->qp_num, KEY), 0);
	}
	for (int i = 0; i < NDCT; i++) {
		struct ibv_sge s = { (uintptr_t)(src + i * 5), 20, mr->lkey };

		cr_assert_eq(fv_send_imm(&dci, 20 + i, FV_SIGNALED, &s, htobe32(0x1000 + (uint32_t)i), &dcts[i].ah,
					 dcts[i].qp->qp_num, KEY), 0);
	}
	fv_ring(&dci);
	for (int i = 0; i < 2 * NDCT; i++) {
		struct fv_wc wc = simt_poll1(&fcq);

		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "WR %llu: status %d", (unsigned long long)wc.wr_id, wc.status);
		cr_expect_eq(wc.wr_id, (uint64_t)(i < NDCT ? 10 + i : 20 + i - NDCT));
	}
	cr_expect_arr_eq(dst, src, 3 * MSG);
	for (int i = 0; i < NDCT; i++) {
		struct fv_wc wc;
		struct ibv_wc iwc;

		if (i != 1) {
			wc = simt_poll1(&dcts[i].cq);
			cr_expect_eq(wc.status, IBV_WC_SUCCESS);
			cr_expect_eq(wc.wr_id, (uint64_t)(100 + i));
			cr_expect_eq(wc.byte_len, 20);
			cr_expect_eq(wc.qp_num, dcts[i].qp->qp_num);
			cr_expect_eq(wc.src_qp, ibdci->qp_num);
			cr_expect_eq(be32toh(wc.imm_data), 0x1000u + (uint32_t)i);
		} else {	/* the drop-in form, as libmlx5 fills struct ibv_wc */
			struct timespec t0;

			clock_gettime(CLOCK_MONOTONIC, &t0);
			while (fv_poll_cq(&dcts[i].cq, 1, &iwc) == 0) {
				cr_assert(simt_ms_since(&t0) < SIMT_WAIT_MS, "no receive");
				simt_kick();
			}
			cr_expect_eq(iwc.status, IBV_WC_SUCCESS);
			cr_expect_eq(iwc.opcode, IBV_WC_RECV);
			cr_expect_eq(iwc.wr_id, (uint64_t)(100 + i));
			cr_expect_eq(iwc.qp_num, dcts[i].qp->qp_num);
			cr_expect_eq(iwc.src_qp, ibdci->qp_num);
		}
		cr_expect_arr_eq(rbuf + i * MSG, src + i * 5, 20);
	}
	/* READ back, then the atomics, each to another DCT */
	struct ibv_sge rs = { (uintptr_t)(rbuf + 3 * MSG), MSG, mr->lkey };
	struct ibv_sge as = { (uintptr_t)old, 8, mr->lkey };

	*atom = 40;
	cr_assert_eq(fv_read(&dci, 30, FV_SIGNALED, &rs, (uintptr_t)dst, mr->rkey, &dcts[2].ah, dcts[2].qp->qp_num, KEY), 0);
	cr_assert_eq(fv_fadd(&dci, 31, FV_SIGNALED, &as, (uintptr_t)atom, mr->rkey, 2, &dcts[0].ah, dcts[0].qp->qp_num,
			     KEY), 0);
	fv_ring(&dci);
	cr_expect_eq(simt_poll1(&fcq).status, IBV_WC_SUCCESS);
	cr_expect_eq(simt_poll1(&fcq).status, IBV_WC_SUCCESS);
	cr_expect_arr_eq(rbuf + 3 * MSG, src, MSG);
	cr_expect_eq(*old, 40);
	cr_expect_eq(*atom, 42);
	cr_assert_eq(fv_cas(&dci, 32, FV_SIGNALED, &as, (uintptr_t)atom, mr->rkey, 42, 7, &dcts[1].ah,
			    dcts[1].qp->qp_num, KEY), 0);
	fv_ring(&dci);
	cr_expect_eq(simt_poll1(&fcq).status, IBV_WC_SUCCESS);
	cr_expect_eq(*old, 42);
	cr_expect_eq(*atom, 7);
}

static enum ibv_qp_state state_of(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &i), 0);
	return a.qp_state;
}

/* A wrong key: retry-exceeded, the DCI in error; returns after its flush is polled. */
static void wrong_key(void)
{
	struct ibv_sge s = { (uintptr_t)mem, 8, mr->lkey };

	cr_assert_eq(fv_write(&dci, 50, FV_SIGNALED, &s, (uintptr_t)mem + 64, mr->rkey, &dcts[0].ah,
			      dcts[0].qp->qp_num, KEY + 1), 0);
	fv_ring(&dci);
	cr_expect_eq(simt_poll1(&fcq).status, IBV_WC_RETRY_EXC_ERR);
	cr_expect_eq(state_of(ibdci), IBV_QPS_ERR);
}

static void reconnect(void)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	cr_assert_eq(ibv_modify_qp(ibdci, &a, IBV_QP_STATE), 0);
	cr_assert_eq(dci_up(ibdci, 7), 0);
}

/* One WRITE to DCT 1 after the reconnect: whether it completed well and its data landed. */
static bool write_after(void)
{
	struct ibv_sge s = { (uintptr_t)mem, 16, mr->lkey };
	struct timespec t0;
	struct fv_wc wc;
	bool done = false;

	memset(mem + 256, 0, 16);
	cr_assert_eq(fv_write(&dci, 60, FV_SIGNALED, &s, (uintptr_t)mem + 256, mr->rkey, &dcts[1].ah,
			      dcts[1].qp->qp_num, KEY), 0);
	fv_ring(&dci);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!done && simt_ms_since(&t0) < 1000) {
		if (fv_poll(&fcq, &wc, 1) == 1)
			done = wc.wr_id == 60 && wc.status == IBV_WC_SUCCESS;
		else
			simt_kick();
	}
	return done && !memcmp(mem + 256, mem, 16);
}

/* ERR -> RESET -> RTS as UCX recovers a DCI: fv_qp_reset re-arms the handle, which posts again. */
Test(e2e_dc, reset_reconnect)
{
	for (int round = 0; round < 3; round++) {
		wrong_key();
		reconnect();
		cr_assert_eq(fv_qp_reset(&dci), 0);
		cr_assert_eq(dci.qp.sq.pi, 0);
		cr_expect(write_after(), "round %d: no WRITE after the reconnect", round);
	}
}

/* The control: reconnected but not re-armed, the handle posts at its old index and the
 * device does not take the WQE (no success). */
Test(e2e_dc, reset_without_rearm_fails)
{
	struct ibv_sge s = { (uintptr_t)mem, 8, mr->lkey };

	/* move the producer off 0 first, so the old index cannot match by chance */
	cr_assert_eq(fv_write(&dci, 70, FV_SIGNALED, &s, (uintptr_t)mem + 64, mr->rkey, &dcts[0].ah,
			      dcts[0].qp->qp_num, KEY), 0);
	fv_ring(&dci);
	cr_expect_eq(simt_poll1(&fcq).status, IBV_WC_SUCCESS);
	wrong_key();
	reconnect();
	cr_expect(!write_after(), "a handle that was not re-armed posted after a reset");
}
