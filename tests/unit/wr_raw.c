/*
 * fv_wr_set_sge on a raw Ethernet QP (compat/wr_raw.h, its own build of a one-SGE WQE)
 * against eth.h's build through fv_post_send: seeded random SENDs and TSOs (inline header of
 * 0 or 18 bytes, TSO headers of 12 to 130 bytes, payloads of 0 to 300 bytes, checksum
 * offload asked for on QPs with and without it, WQEs across the ring end), on two rings of
 * plain memory filled alike, through the typed handle and through its struct fv_qp. Return
 * code, every byte of the ring, the counters, the doorbell record and the BlueFlame bytes
 * must agree.
 */
#include <criterion/criterion.h>
#include <fastverbs/gen/wr.h>
#include "memqp.h"

#define RING 16		/* WQEBBs: a WQE of up to 4 blocks often meets the end */
#define ROUNDS 4000

static uint64_t seed = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
	return (uint32_t)(seed % n);
}

static uint8_t data[4096];

struct rcase {
	int tso, sig, csum, any;
	uint32_t len, hdr, mss, off;
};

static int post_ref(struct memqp *m, const struct rcase *c)
{
	struct ibv_sge s = { (uintptr_t)(data + c->off), c->len, 0x77 };
	struct ibv_send_wr wr = { .wr_id = 0x55, .sg_list = &s, .num_sge = 1,
				  .opcode = c->tso ? IBV_WR_TSO : IBV_WR_SEND }, *bad = NULL;

	wr.send_flags = (c->sig ? IBV_SEND_SIGNALED : 0) | (c->csum ? IBV_SEND_IP_CSUM : 0);
	wr.tso.hdr = data + 2048;
	wr.tso.hdr_sz = (uint16_t)c->hdr;
	wr.tso.mss = (uint16_t)c->mss;
	return fv_post_send(&m->qp, &wr, &bad);
}

#define POST_WR(h)                                                                                 \
	do {                                                                                       \
		fv_wr_start(h);                                                                    \
		fv__wr_qp(h)->wr_id = 0x55;                                                         \
		fv__wr_qp(h)->wr_flags = (c->sig ? IBV_SEND_SIGNALED : 0) | (c->csum ? IBV_SEND_IP_CSUM : 0); \
		if (c->tso)                                                                        \
			fv_wr_send_tso(h, data + 2048, (uint16_t)c->hdr, (uint16_t)c->mss);        \
		else                                                                               \
			fv_wr_send(h);                                                             \
		fv_wr_set_sge(h, 0x77, (uintptr_t)(data + c->off), c->len);                        \
		return fv_wr_complete(h);                                                          \
	} while (0)

static int post_wr(struct memqp *m, const struct rcase *c)
{
	if (c->any) {
		struct fv_qp *q = &m->qp;

		POST_WR(q);
	}
	struct fv_raw *h = (struct fv_raw *)&m->qp;

	POST_WR(h);
}

static void run(uint32_t eth_inline, uint32_t raw_csum)
{
	struct memqp_cfg cfg = { .qpt = FV_QPT_RAW, .qpn = 0x123, .sq_wqe_cnt = RING, .bf_size = 256,
				 .max_inline = 128, .max_send_sge = 4, .eth_inline = eth_inline,
				 .max_tso_header = 128, .max_tso = 200, .raw_csum = raw_csum };
	struct memqp m[2];

	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	for (int k = 0; k < 2; k++)
		memqp_init(&m[k], &cfg);
	for (int round = 0; round < ROUNDS; round++) {
		struct rcase c = { .tso = rnd(2), .sig = rnd(2), .csum = rnd(4) == 0, .any = rnd(2),
				   .len = rnd(5) ? rnd(300) : rnd(20), .hdr = 12 + rnd(119), .mss = 1 + rnd(500),
				   .off = rnd(1024) };
		int rc[2];

		for (uint32_t i = 0; i < RING * 64; i++)	/* what the WQE leaves as it is */
			m[0].sq[i] = m[1].sq[i] = (uint8_t)rnd(256);
		memset(m[0].bf, 0, 512);
		memset(m[1].bf, 0, 512);
		rc[0] = post_ref(&m[0], &c);
		rc[1] = post_wr(&m[1], &c);
		cr_assert_eq(rc[1], rc[0], "round %d (tso %d len %u hdr %u csum %d): fv_wr_* %d, fv_post_send %d",
			     round, c.tso, c.len, c.hdr, c.csum, rc[1], rc[0]);
		cr_assert_eq(m[1].qp.sq.pi, m[0].qp.sq.pi, "round %d: producer", round);
		cr_assert_eq(memcmp(m[1].sq, m[0].sq, RING * 64), 0, "round %d (tso %d len %u hdr %u): ring bytes differ",
			     round, c.tso, c.len, c.hdr);
		cr_assert_eq(memqp_sq_dbr(&m[1]), memqp_sq_dbr(&m[0]), "round %d: doorbell record", round);
		cr_assert_eq(memcmp(m[1].bf, m[0].bf, 512), 0, "round %d: BlueFlame bytes", round);
		for (int k = 0; k < 2; k++)	/* the device completed it */
			m[k].qp.sq.ci = m[k].qp.sq.pi;
	}
	for (int k = 0; k < 2; k++)
		memqp_free(&m[k]);
}

Test(wr_raw, inline_l2_csum)       { run(18, 1); }
Test(wr_raw, inline_l2_no_csum)    { run(18, 0); }
Test(wr_raw, no_inline_header)     { run(0, 1); }
