/*
 * Completion polling on plain memory: hand-built CQEs (docs/formats.md §5.2, §5.3) for every
 * opcode and syndrome, owner-bit generations, the consumer record, 64/128-byte entries,
 * scatter-to-CQE both ways, SQ retirement and hidden forced completions.
 */
#include <criterion/criterion.h>
#include <fastverbs/compat/post_recv.h>
#include "cqe-util.h"
#include "once.h"

#define LKEY 0x100000u

static struct ibv_sge sge(void *p, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)p, .length = len, .lkey = LKEY };
}

static void qp_init(struct tqp *m, enum fv_qpt qpt, uint32_t qpn, uint32_t sq_cnt, uint32_t rq_cnt,
		    uint32_t rq_stride)
{
	struct tqp_cfg c = { .qpt = qpt, .qpn = qpn, .sq_wqe_cnt = sq_cnt, .rq_wqe_cnt = rq_cnt,
			       .rq_stride = rq_stride, .max_send_sge = 4, .max_recv_sge = rq_stride / 16 };

	tqp_init(m, &c);
}

/* ---- requester ---- */

struct req_case {
	uint8_t send_opcode;
	enum ibv_wc_opcode opcode;
	unsigned flags;
	uint32_t byte_len;	/* expected; the CQE says 0x1234 */
};

static const struct req_case req_cases[] = {
	{ MLX5_OPCODE_RDMA_WRITE, IBV_WC_RDMA_WRITE, 0, 0 },
	{ MLX5_OPCODE_RDMA_WRITE_IMM, IBV_WC_RDMA_WRITE, IBV_WC_WITH_IMM, 0 },
	{ MLX5_OPCODE_SEND, IBV_WC_SEND, 0, 0 },
	{ MLX5_OPCODE_SEND_IMM, IBV_WC_SEND, IBV_WC_WITH_IMM, 0 },
	{ MLX5_OPCODE_SEND_INVAL, IBV_WC_SEND, 0, 0 },
	{ MLX5_OPCODE_RDMA_READ, IBV_WC_RDMA_READ, 0, 0x1234 },
	{ MLX5_OPCODE_ATOMIC_CS, IBV_WC_COMP_SWAP, 0, 8 },
	{ MLX5_OPCODE_ATOMIC_FA, IBV_WC_FETCH_ADD, 0, 8 },
	{ MLX5_OPCODE_TSO, IBV_WC_TSO, 0, 0 },
};

Test(req, each_send_opcode_both_pollers)
{
	struct tqp m;
	struct cqe_cq c;
	uint64_t buf[4];
	struct ibv_sge s = sge(buf, 8);

	qp_init(&m, FV_QPT_RC, 0x123, 64, 0, 0);
	cqe_cq_init(&c, 8, 64, 0);
	for (size_t k = 0; k < sizeof(req_cases) / sizeof(req_cases[0]); k++) {
		const struct req_case *r = &req_cases[k];

		for (int form = 0; form < 2; form++) {
			uint64_t wr_id = 0xabc0000 + k * 2 + (uint64_t)form;
			uint32_t at = cqe_post_send(&m.qp, r->send_opcode, FV_SIGNALED, wr_id, &s, 1);

			cqe_req(&c, 0x123, r->send_opcode, (uint16_t)at, 0x1234, 0);
			if (form) {
				struct ibv_wc wc = cqe_poll1_ibv(&c.cq);

				cr_assert_eq(wc.wr_id, wr_id, "case %zu", k);
				cr_assert_eq(wc.status, IBV_WC_SUCCESS);
				cr_assert_eq(wc.opcode, r->opcode, "case %zu: opcode %d", k, wc.opcode);
				cr_assert_eq(wc.wc_flags, r->flags, "case %zu", k);
				cr_assert_eq(wc.byte_len, r->byte_len, "case %zu", k);
				cr_assert_eq(wc.qp_num, 0x123);
				cr_assert_eq(wc.vendor_err, 0);
				cr_assert_eq(wc.src_qp, 0);
			} else {
				struct fv_wc wc = cqe_poll1_fv(&c.cq);

				cr_assert_eq(wc.wr_id, wr_id, "case %zu", k);
				cr_assert_eq(wc.status, IBV_WC_SUCCESS);
				cr_assert_eq(wc.opcode, r->opcode, "case %zu", k);
				cr_assert_eq(wc.wc_flags, r->flags, "case %zu", k);
				cr_assert_eq(wc.byte_len, r->byte_len, "case %zu", k);
				cr_assert_eq(wc.qp_num, 0x123);
				cr_assert_eq(wc.vendor_err, 0);
			}
			cr_assert_eq(m.qp.sq.ci, m.qp.sq.pi, "case %zu: SQ retired", k);
		}
	}
	cqe_cq_free(&c);
	tqp_free(&m);
}

Test(req, umr_reports_bind_or_local_inv)
{
	/* UMR control flags (byte 16), mkey context free byte and qpn_mkey (second block) of a
	 * type 2 bind, a type 1 unbind (free, no QPN check) and a local invalidate. */
	static const struct { uint8_t flags, free; uint32_t qpn_mkey; enum ibv_wc_opcode op; } k[] = {
		{ 0xb0, 0x00, 0x12401u, IBV_WC_BIND_MW },
		{ 0x90, 0x40, 0xffffff05u, IBV_WC_BIND_MW },
		{ 0x98, 0x40, 0xffffff00u, IBV_WC_LOCAL_INV },
	};
	struct tqp m;
	struct cqe_cq c;
	struct ibv_wc wc;

	qp_init(&m, FV_QPT_RC, 0x124, 16, 0, 0);
	cqe_cq_init(&c, 8, 64, 0);
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		uint32_t at = m.qp.sq.pi;
		__be32 fm, qm = htobe32(k[i].qpn_mkey);

		cr_assert(fv__sq_take(&m.qp.sq, FV_SIGNALED, 2, &fm));
		fv__wqe_ctrl(fv__sq_next_wqe(&m.qp.sq), at, 0, MLX5_OPCODE_UMR, m.qp.sq.qpn_be, 8, fm, 0);
		tqp_block(&m, at)[16] = k[i].flags;
		tqp_block(&m, at + 1)[0] = k[i].free;
		memcpy(tqp_block(&m, at + 1) + 4, &qm, 4);
		fv__sq_commit(&m.qp.sq, 77 + i, FV_SIGNALED, 2);
		cqe_req(&c, 0x124, MLX5_OPCODE_UMR, (uint16_t)at, 0, 0);
		wc = cqe_poll1_ibv(&c.cq);
		cr_assert_eq(wc.opcode, k[i].op, "case %zu: opcode %d", i, wc.opcode);
		cr_assert_eq(wc.wr_id, 77 + i);
	}
	cr_assert_eq(m.qp.sq.ci, 6);
	cqe_cq_free(&c);
	tqp_free(&m);
}

Test(req, unsignaled_run_retired_by_one_cqe)
{
	struct tqp m;
	struct cqe_cq c;
	uint8_t b[64];
	struct ibv_sge s[4] = { sge(b, 8), sge(b + 8, 8), sge(b + 16, 8), sge(b + 24, 8) };

	qp_init(&m, FV_QPT_RC, 0x125, 16, 0, 0);
	cqe_cq_init(&c, 8, 64, 0);
	cqe_post_send(&m.qp, MLX5_OPCODE_SEND, 0, 1, s, 1);		/* 1 block */
	cqe_post_send(&m.qp, MLX5_OPCODE_RDMA_WRITE, 0, 2, s, 4);	/* ds 6: 2 blocks */
	cqe_post_send(&m.qp, MLX5_OPCODE_SEND, 0, 3, s, 3);		/* ds 4: 1 block */
	uint32_t last = cqe_post_send(&m.qp, MLX5_OPCODE_RDMA_READ, FV_SIGNALED, 4, s, 3);	/* ds 5: 2 blocks */

	cr_assert_eq(m.qp.sq.pi, 6);
	cr_assert_eq(m.qp.sq.ci, 0);
	cqe_req(&c, 0x125, MLX5_OPCODE_RDMA_READ, (uint16_t)last, 24, 0);
	struct fv_wc wc = cqe_poll1_fv(&c.cq);

	cr_assert_eq(wc.wr_id, 4);
	cr_assert_eq(wc.byte_len, 24);
	cr_assert_eq(m.qp.sq.ci, 6, "ci past the signaled WQE and every unsignaled one before it");
	cr_assert_eq(fv__sq_room(&m.qp.sq), 16);
	cqe_cq_free(&c);
	tqp_free(&m);
}

/* An SQ whose 16-bit WQE index wraps: retirement extends it against the 32-bit counter. */
Test(req, wqe_index_past_2_16)
{
	struct tqp m;
	struct cqe_cq c;
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);
	struct tqp_cfg cfg = { .qpt = FV_QPT_RC, .qpn = 0x126, .sq_wqe_cnt = 8, .max_send_sge = 1, .start_pi = 0xfffe };

	tqp_init(&m, &cfg);
	cqe_cq_init(&c, 8, 64, 0);
	for (uint64_t i = 0; i < 4; i++) {
		uint32_t at = cqe_post_send(&m.qp, MLX5_OPCODE_SEND, FV_SIGNALED, 0x900 + i, &s, 1);

		cqe_req(&c, 0x126, MLX5_OPCODE_SEND, (uint16_t)at, 0, 0);
		cr_assert_eq(cqe_poll1_fv(&c.cq).wr_id, 0x900 + i);
	}
	cr_assert_eq(m.qp.sq.ci, 0xfffeu + 4);
	cqe_cq_free(&c);
	tqp_free(&m);
}

/* Post n unsignaled 1-block SENDs; return the counter of the one fastverbs forced to signal
 * (its WQE asks for a completion, its caller did not). */
static uint32_t post_until_forced(struct tqp *m, struct ibv_sge *s, uint32_t *first)
{
	*first = m->qp.sq.pi;
	for (int i = 0; i < 32; i++) {
		uint32_t at = cqe_post_send(&m->qp, MLX5_OPCODE_SEND, 0, 0x100 + (uint64_t)i, s, 1);

		if (tqp_block(m, at)[11] & MLX5_WQE_CTRL_CQ_UPDATE) {
			cr_assert(fv__sq_forced_wqe(&m->qp.sq, at));
			return at;
		}
	}
	cr_assert_fail("no forced completion");
	return 0;
}

Test(req, forced_completion_hidden)
{
	struct tqp m;
	struct cqe_cq c;
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);
	struct fv_wc wc[4];
	struct ibv_wc iwc[4];
	uint32_t first, at;

	qp_init(&m, FV_QPT_RC, 0x127, 16, 0, 0);
	cqe_cq_init(&c, 8, 64, 0);
	at = post_until_forced(&m, &s, &first);
	cr_assert_eq(m.qp.sq.ring.buf[((at & m.qp.sq.mask) << 6) + 11] & MLX5_WQE_CTRL_CQ_UPDATE,
		     MLX5_WQE_CTRL_CQ_UPDATE, "the forced WQE asks for a CQE");

	cqe_req(&c, 0x127, MLX5_OPCODE_SEND, (uint16_t)at, 0, 0);
	cr_assert_eq(fv_poll(&c.cq, wc, 4), 0, "not reported");
	cr_assert_eq(m.qp.sq.ci, at + 1, "but it retired the run");
	cr_assert_eq(c.cq.ci, 1);
	cr_assert_eq(be32toh(c.dbrec[0]), 1, "consumed, so the consumer record moved");

	/* Hidden between two reported ones: the call returns the two, in order. */
	uint32_t a = cqe_post_send(&m.qp, MLX5_OPCODE_SEND, FV_SIGNALED, 0xa, &s, 1);

	at = post_until_forced(&m, &s, &first);
	uint32_t z = cqe_post_send(&m.qp, MLX5_OPCODE_RDMA_WRITE, FV_SIGNALED, 0xb, &s, 1);

	cqe_req(&c, 0x127, MLX5_OPCODE_SEND, (uint16_t)a, 0, 0);
	cqe_req(&c, 0x127, MLX5_OPCODE_SEND, (uint16_t)at, 0, 0);
	cqe_req(&c, 0x127, MLX5_OPCODE_RDMA_WRITE, (uint16_t)z, 0, 0);
	cr_assert_eq(fv_poll_cq(&c.cq, 4, iwc), 2);
	cr_assert_eq(iwc[0].wr_id, 0xa);
	cr_assert_eq(iwc[1].wr_id, 0xb);
	cr_assert_eq(iwc[1].opcode, IBV_WC_RDMA_WRITE);
	cr_assert_eq(m.qp.sq.ci, m.qp.sq.pi);
	cr_assert_eq(be32toh(c.dbrec[0]), 4);
	cqe_cq_free(&c);
	tqp_free(&m);
}

Test(req, forced_completion_error_reported)
{
	struct tqp m;
	struct cqe_cq c;
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);
	uint32_t first, at;

	qp_init(&m, FV_QPT_RC, 0x128, 16, 0, 0);
	cqe_cq_init(&c, 8, 64, 0);
	at = post_until_forced(&m, &s, &first);
	cqe_err(&c, MLX5_CQE_REQ_ERR, 0x128, MLX5_OPCODE_SEND, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, 0x33, (uint16_t)at, 0);
	struct ibv_wc wc = cqe_poll1_ibv(&c.cq);

	cr_assert_eq(wc.status, IBV_WC_LOC_PROT_ERR);
	cr_assert_eq(wc.vendor_err, 0x33);
	cr_assert_eq(wc.wr_id, 0x100 + (at - first));
	cr_assert_eq(wc.qp_num, 0x128);
	cr_assert_eq(m.qp.sq.ci, at + 1);
	cqe_cq_free(&c);
	tqp_free(&m);
}

/* ---- runs: requester CQEs of one QP and send opcode, decoded from the WQE index alone ---- */

struct expect {
	uint64_t wr_id;
	enum ibv_wc_opcode opcode;
	uint32_t qpn, byte_len;
};

/* The fields struct ibv_wc and struct fv_wc share, of completion wc against x. */
#define CHECK_RUN_WC(wc, x, got)                                                                   \
	do {                                                                                       \
		cr_assert_eq((wc).wr_id, (x).wr_id, "completion %d", got);                         \
		cr_assert_eq((wc).status, IBV_WC_SUCCESS);                                         \
		cr_assert_eq((wc).opcode, (x).opcode, "completion %d", got);                       \
		cr_assert_eq((wc).qp_num, (x).qpn, "completion %d", got);                          \
		cr_assert_eq((wc).byte_len, (x).byte_len, "completion %d", got);                   \
		cr_assert_eq((wc).wc_flags, 0);                                                    \
		cr_assert_eq((wc).src_qp, 0);                                                      \
	} while (0)

/* Poll n completions, k per call, the two pollers taking turns, and check them against x. */
static void drain_check(struct cqe_cq *c, const struct expect *x, int n, int k, int turn)
{
	for (int got = 0; got < n; turn++) {
		int want = n - got < k ? n - got : k;

		if (turn % 2) {
			struct ibv_wc wc[16];

			memset(wc, 0xee, sizeof(wc));
			cr_assert_eq(fv_poll_cq(&c->cq, want, wc), want, "completion %d", got);
			for (int i = 0; i < want; i++, got++) {
				CHECK_RUN_WC(wc[i], x[got], got);
				cr_assert_eq(wc[i].slid, 0);
			}
			cr_assert_eq(wc[want].wr_id, 0xeeeeeeeeeeeeeeee, "nothing written past n");
		} else {
			struct fv_wc wc[16];

			memset(wc, 0xee, sizeof(wc));
			cr_assert_eq(fv_poll(&c->cq, wc, want), want, "completion %d", got);
			for (int i = 0; i < want; i++, got++)
				CHECK_RUN_WC(wc[i], x[got], got);
			cr_assert_eq(wc[want].wr_id, 0xeeeeeeeeeeeeeeee, "nothing written past n");
		}
	}
	struct fv_wc none;

	cr_assert_eq(fv_poll(&c->cq, &none, 1), 0, "and no more");
}

/* Two QPs, several opcodes and both pollers on one small CQ that wraps again and again. */
Test(run, interleaved_qps_opcodes_and_pollers)
{
	static const struct { int qp; uint8_t op; enum ibv_wc_opcode wc; uint32_t len; } pat[] = {
		{ 0, MLX5_OPCODE_SEND, IBV_WC_SEND, 0 }, { 0, MLX5_OPCODE_SEND, IBV_WC_SEND, 0 },
		{ 0, MLX5_OPCODE_SEND, IBV_WC_SEND, 0 }, { 0, MLX5_OPCODE_RDMA_WRITE, IBV_WC_RDMA_WRITE, 0 },
		{ 1, MLX5_OPCODE_RDMA_WRITE, IBV_WC_RDMA_WRITE, 0 }, { 0, MLX5_OPCODE_RDMA_WRITE, IBV_WC_RDMA_WRITE, 0 },
		{ 1, MLX5_OPCODE_ATOMIC_FA, IBV_WC_FETCH_ADD, 8 }, { 1, MLX5_OPCODE_ATOMIC_FA, IBV_WC_FETCH_ADD, 8 },
		{ 0, MLX5_OPCODE_SEND, IBV_WC_SEND, 0 },
	};
	static const int ks[] = { 1, 16, 3, 2, 16, 1, 5 };
	const int npat = sizeof(pat) / sizeof(pat[0]);
	struct tqp m[2];
	struct cqe_cq c;
	uint64_t b[2];
	struct ibv_sge s = sge(b, 8);
	struct expect x[7];
	int i = 0;

	qp_init(&m[0], FV_QPT_RC, 0x510, 16, 0, 0);
	qp_init(&m[1], FV_QPT_RC, 0x511, 16, 0, 0);
	cqe_cq_init(&c, 8, 64, 0);
	for (int chunk = 0; chunk < 60; chunk++) {
		int n = 1 + chunk % 7;

		for (int j = 0; j < n; j++, i++) {
			int q = pat[i % npat].qp;
			uint32_t qpn = 0x510 + (uint32_t)q;
			uint32_t at = cqe_post_send(&m[q].qp, pat[i % npat].op, FV_SIGNALED, 0x9000 + (uint64_t)i, &s, 1);

			cqe_req(&c, qpn, pat[i % npat].op, (uint16_t)at, 0x1234, 0);
			x[j] = (struct expect){ 0x9000 + (uint64_t)i, pat[i % npat].wc, qpn, pat[i % npat].len };
		}
		drain_check(&c, x, n, ks[chunk % 7], chunk);
		for (int q = 0; q < 2; q++)
			cr_assert_eq(m[q].qp.sq.ci, m[q].qp.sq.pi, "chunk %d: SQ %d retired", chunk, q);
		cr_assert_eq(be32toh(c.dbrec[0]), c.cq.ci & 0xffffff);
	}
	cqe_cq_free(&c);
	tqp_free(&m[0]);
	tqp_free(&m[1]);
}

/* A run keeps its QP only while the QPN table is what it was: a new QP under the same QPN. */
Test(run, qp_replaced_under_the_same_qpn)
{
	struct tqp a, b;
	struct cqe_cq c;
	uint64_t buf[2];
	struct ibv_sge s = sge(buf, 8);

	qp_init(&a, FV_QPT_RC, 0x520, 16, 0, 0);
	cqe_cq_init(&c, 8, 64, 0);
	for (int i = 0; i < 3; i++) {
		uint32_t at = cqe_post_send(&a.qp, MLX5_OPCODE_SEND, FV_SIGNALED, 0xa0 + (uint64_t)i, &s, 1);

		cqe_req(&c, 0x520, MLX5_OPCODE_SEND, (uint16_t)at, 0, 0);
		cr_assert_eq(cqe_poll1_fv(&c.cq).wr_id, 0xa0 + (uint64_t)i);
	}
	tqp_free(&a);
	qp_init(&b, FV_QPT_RC, 0x520, 16, 0, 0);
	for (int i = 0; i < 3; i++) {
		uint32_t at = cqe_post_send(&b.qp, MLX5_OPCODE_SEND, FV_SIGNALED, 0xb0 + (uint64_t)i, &s, 1);

		cqe_req(&c, 0x520, MLX5_OPCODE_SEND, (uint16_t)at, 0, 0);
		cr_assert_eq(cqe_poll1_fv(&c.cq).wr_id, 0xb0 + (uint64_t)i);
		cr_assert_eq(b.qp.sq.ci, b.qp.sq.pi);
	}
	cqe_cq_free(&c);
	tqp_free(&b);
}

/*
 * Five QPs taking turns on one CQ (the run cache keeps a way per QP): four in ways of their
 * own, the fifth sharing the first's (QPNs equal in the low bits), opcodes changing, forced
 * completions hidden among them, runs of one QP in between; 64- and 128-byte CQEs, the ring
 * wrapping, every number of completions per call.
 */
Test(run, qps_taking_turns_and_sharing_a_way)
{
	static const uint32_t qpns[5] = { 0x540, 0x541, 0x542, 0x543, 0x550 };
	static const struct { uint8_t op; enum ibv_wc_opcode wc; uint32_t len; } ops[3] = {
		{ MLX5_OPCODE_SEND, IBV_WC_SEND, 0 },
		{ MLX5_OPCODE_RDMA_WRITE, IBV_WC_RDMA_WRITE, 0 },
		{ MLX5_OPCODE_ATOMIC_FA, IBV_WC_FETCH_ADD, 8 },
	};
	uint64_t b[2];
	struct ibv_sge s = sge(b, 8);

	for (uint32_t size = 64; size <= 128; size += 64) {
		struct tqp m[5];
		struct cqe_cq c;
		uint64_t id = 0x7000;

		for (int q = 0; q < 5; q++)
			qp_init(&m[q], FV_QPT_RC, qpns[q], 16, 0, 0);
		cqe_cq_init(&c, 16, size, 0);
		for (int chunk = 0; chunk < 90; chunk++) {
			struct expect x[16];
			int n = 1 + chunk % 13, k = (int[]){ 16, 1, 3, 16, 2, 5 }[chunk % 6], nx = 0;

			for (int j = 0; j < n; j++) {
				/* turns, or (every fourth chunk) runs of three of one QP */
				int q = chunk % 4 == 3 ? (j / 3) % 5 : (j + chunk) % 5;
				int o = (chunk / 5 + (q == 2 ? j : 0)) % 3;
				uint32_t at;

				if (q == 1 && j == 4 && chunk % 2) {	/* a completion fastverbs forced */
					uint32_t first;

					at = post_until_forced(&m[1], &s, &first);
					cqe_req(&c, qpns[1], MLX5_OPCODE_SEND, (uint16_t)at, 0, 0);
					continue;
				}
				at = cqe_post_send(&m[q].qp, ops[o].op, FV_SIGNALED, id, &s, 1);
				cqe_req(&c, qpns[q], ops[o].op, (uint16_t)at, 0x1234, 0);
				x[nx++] = (struct expect){ id++, ops[o].wc, qpns[q], ops[o].len };
			}
			if (nx)
				drain_check(&c, x, nx, k, chunk);
			else
				cr_assert_eq(fv_poll(&c.cq, (struct fv_wc[1]){ { 0 } }, 1), 0);
			for (int q = 0; q < 5; q++)
				cr_assert_eq(m[q].qp.sq.ci, m[q].qp.sq.pi, "size %u chunk %d: SQ %d retired", size,
					     chunk, q);
			cr_assert_eq(be32toh(c.dbrec[0]), c.cq.ci & 0xffffff);
			cr_assert_eq(c.cq.ci, c.pi, "every CQE consumed");
		}
		cqe_cq_free(&c);
		for (int q = 0; q < 5; q++)
			tqp_free(&m[q]);
	}
}

/*
 * A QP another replaces under its QPN while a third takes turns with it: the run cache drops
 * the old QP's way (its rings are still there, so a stale way would read them quietly).
 */
Test(run, qpn_taken_over_while_qps_take_turns)
{
	struct tqp a, b, n;
	struct cqe_cq c;
	uint64_t buf[2];
	struct ibv_sge s = sge(buf, 8);
	struct expect x[8];

	qp_init(&a, FV_QPT_RC, 0x560, 16, 0, 0);
	qp_init(&b, FV_QPT_RC, 0x561, 16, 0, 0);
	cqe_cq_init(&c, 16, 64, 0);
	for (int round = 0; round < 4; round++) {
		struct tqp *q0 = round < 2 ? &a : &n;

		if (round == 2)	/* a stays allocated and untouched: a stale way would use it */
			qp_init(&n, FV_QPT_RC, 0x560, 16, 0, 0);
		for (int i = 0; i < 8; i++) {
			struct tqp *q = i % 2 ? &b : q0;
			uint64_t id = (uint64_t)round << 8 | (q == &b ? 0xb0 : q == &a ? 0xa0 : 0xc0) | (uint64_t)i;
			uint32_t at = cqe_post_send(&q->qp, MLX5_OPCODE_SEND, FV_SIGNALED, id, &s, 1);

			cqe_req(&c, q->qp.qpn, MLX5_OPCODE_SEND, (uint16_t)at, 0, 0);
			x[i] = (struct expect){ id, IBV_WC_SEND, q->qp.qpn, 0 };
		}
		drain_check(&c, x, 8, round % 2 ? 1 : 16, round);
		cr_assert_eq(q0->qp.sq.ci, q0->qp.sq.pi, "round %d", round);
		cr_assert_eq(b.qp.sq.ci, b.qp.sq.pi, "round %d", round);
	}
	cr_assert_eq(a.qp.sq.pi, 8);
	cr_assert_eq(a.qp.sq.ci, 8, "the replaced QP: its own completions retired, no more");
	cqe_cq_free(&c);
	tqp_free(&a);	/* no longer registered: leaves n's entry alone */
	tqp_free(&n);
	tqp_free(&b);
}

/* One QP alternating two opcodes: each keeps a way, the completions stay right. */
Test(run, one_qp_two_opcodes_two_ways)
{
	struct tqp m;
	struct cqe_cq c;
	uint64_t buf[2];
	struct ibv_sge s = sge(buf, 8);
	struct expect x[12];

	qp_init(&m, FV_QPT_RC, 0x570, 16, 0, 0);
	cqe_cq_init(&c, 16, 64, 0);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 12; i++) {
			uint8_t op = i % 2 ? MLX5_OPCODE_RDMA_WRITE : MLX5_OPCODE_SEND;
			uint32_t at = cqe_post_send(&m.qp, op, FV_SIGNALED, 0xd00 + (uint64_t)i, &s, 1);

			cqe_req(&c, 0x570, op, (uint16_t)at, 0, 0);
			x[i] = (struct expect){ 0xd00 + (uint64_t)i, i % 2 ? IBV_WC_RDMA_WRITE : IBV_WC_SEND, 0x570, 0 };
		}
		drain_check(&c, x, 12, round == 1 ? 1 : 16, 0);
		cr_assert_eq(m.qp.sq.ci, m.qp.sq.pi);
	}

	int held = 0;

	for (int i = 0; i < FV__CQ_WAYS; i++)
		held += c.cq.run.way[i].qp == &m.qp;
	cr_assert_eq(held, 2, "a way for each opcode");
	cqe_cq_free(&c);
	tqp_free(&m);
}

/* A CQE whose sop_drop_qpn is an empty way's key: an unknown QPN to the general path. */
Test(run, empty_way_key_is_no_qp)
{
	struct cqe_cq c;
	struct fv_wc wc[16];

	cqe_cq_init(&c, 8, 64, 0);
	for (int i = 0; i < FV__CQ_WAYS; i++) {
		__be32 key = fv__cq_no_key((unsigned)i);

		cqe_req(&c, be32toh(key) & 0xffffff, 0xff, 0, 0, 0);
		errno = 0;
		cr_assert_eq(fv_poll(&c.cq, wc, i % 2 ? 1 : 16), -1, "way %d", i);
		cr_assert_eq(errno, EINVAL);
		cr_assert_eq(c.cq.ci, (uint32_t)i, "left for the caller");
		cr_assert_eq(fv_cq_take_cqe(&c.cq, NULL), 0);
	}
	cr_assert_eq(c.cq.ci, FV__CQ_WAYS, "each taken");
	cqe_cq_free(&c);
}

/* sq_sig_all: every WQE asks for a completion, its end is not written; ci from its ds. */
Test(run, sq_sig_all_qp)
{
	struct tqp m;
	struct cqe_cq c;
	uint64_t buf[8];
	struct ibv_sge s[3] = { sge(buf, 8), sge(buf + 1, 8), sge(buf + 2, 8) };
	struct expect x[8];

	tqp_init(&m, &(struct tqp_cfg){ .qpt = FV_QPT_RC, .qpn = 0x530, .sq_wqe_cnt = 16,
					 .max_send_sge = 4, .start_pi = 0xfffa, .sq_sig_all = 1 });
	cqe_cq_init(&c, 8, 64, 0);
	for (int round = 0; round < 6; round++) {
		for (int i = 0; i < 4; i++) {
			/* 1 or 3 SGEs: 1 or 2 WQEBBs */
			uint32_t at = cqe_post_send(&m.qp, MLX5_OPCODE_SEND, 0, 0xc0 + (uint64_t)i, s, 1 + 2 * (i & 1));

			cr_assert(m.qp.sq.ring.buf[((at & m.qp.sq.mask) << 6) + 11] & MLX5_WQE_CTRL_CQ_UPDATE);
			cqe_req(&c, 0x530, MLX5_OPCODE_SEND, (uint16_t)at, 0, 0);
			x[i] = (struct expect){ 0xc0 + (uint64_t)i, IBV_WC_SEND, 0x530, 0 };
		}
		drain_check(&c, x, 4, round % 2 ? 1 : 16, round);
		cr_assert_eq(m.qp.sq.ci, m.qp.sq.pi, "round %d", round);
	}
	cqe_cq_free(&c);
	tqp_free(&m);
}

/* ---- responder ---- */

Test(resp, each_opcode_all_fields)
{
	struct tqp m;
	struct cqe_cq c;
	uint8_t b[64];
	struct ibv_sge s = sge(b, 64);
	static const struct {
		uint8_t op;
		enum ibv_wc_opcode opcode;
		unsigned flags;
		uint32_t rqpn_hi;	/* GRH bits 29:28 and SL 27:24 of flags_rqpn */
	} k[] = {
		{ MLX5_CQE_RESP_WR_IMM, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM, 0x05000000 },
		{ MLX5_CQE_RESP_SEND, IBV_WC_RECV, IBV_WC_GRH, 0x1a000000 },
		{ MLX5_CQE_RESP_SEND_IMM, IBV_WC_RECV, IBV_WC_WITH_IMM | IBV_WC_GRH, 0x23000000 },
		{ MLX5_CQE_RESP_SEND_INV, IBV_WC_RECV, IBV_WC_WITH_INV, 0x0f000000 },
	};

	qp_init(&m, FV_QPT_RC, 0x200, 16, 16, 16);
	cqe_cq_init(&c, 4, 64, 0);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(fv_recv(&m.qp, 0x3000 + (uint64_t)i, &s, 1), 0);
	fv_recv_ring(&m.qp);

	for (int i = 0; i < 8; i++) {
		int j = i % 4, ibv = i >= 4;
		uint32_t rqpn = k[j].rqpn_hi | (0x4567u + (uint32_t)i);

		cqe_resp(&c, &(struct cqe_resp){ .opcode = k[j].op, .qpn = 0x200, .byte_cnt = 1000u + (uint32_t)i,
				 .flags_rqpn = rqpn, .imm_inval_pkey = htobe32(0xcafe0000u + (uint32_t)i),
				 .slid = 0x0102, .ml_path = 0xff });
		if (ibv) {
			struct ibv_wc wc = cqe_poll1_ibv(&c.cq);

			cr_assert_eq(wc.wr_id, 0x3000 + (uint64_t)i);
			cr_assert_eq(wc.status, IBV_WC_SUCCESS);
			cr_assert_eq(wc.opcode, k[j].opcode, "opcode %d", j);
			cr_assert_eq(wc.wc_flags, k[j].flags, "flags %d", j);
			cr_assert_eq(wc.byte_len, 1000u + (uint32_t)i);
			cr_assert_eq(wc.qp_num, 0x200);
			cr_assert_eq(wc.src_qp, 0x4567u + (uint32_t)i);
			cr_assert_eq(wc.sl, (rqpn >> 24) & 0xf);
			cr_assert_eq(wc.slid, 0x0102);
			cr_assert_eq(wc.dlid_path_bits, 0x7f);
			cr_assert_eq(wc.pkey_index, (uint16_t)i, "low 16 bits of imm_inval_pkey");
			if (k[j].op == MLX5_CQE_RESP_SEND_INV)
				cr_assert_eq(wc.invalidated_rkey, 0xcafe0000u + (uint32_t)i);
			else if (k[j].flags & IBV_WC_WITH_IMM)
				cr_assert_eq(wc.imm_data, htobe32(0xcafe0000u + (uint32_t)i), "raw, as on the wire");
		} else {
			struct fv_wc wc = cqe_poll1_fv(&c.cq);

			cr_assert_eq(wc.wr_id, 0x3000 + (uint64_t)i);
			cr_assert_eq(wc.status, IBV_WC_SUCCESS);
			cr_assert_eq(wc.opcode, k[j].opcode);
			cr_assert_eq(wc.wc_flags, k[j].flags);
			cr_assert_eq(wc.byte_len, 1000u + (uint32_t)i);
			cr_assert_eq(wc.qp_num, 0x200);
			cr_assert_eq(wc.src_qp, 0x4567u + (uint32_t)i);
			if (k[j].op == MLX5_CQE_RESP_SEND_INV)
				cr_assert_eq(wc.invalidated_rkey, 0xcafe0000u + (uint32_t)i);
			else if (k[j].flags & IBV_WC_WITH_IMM)
				cr_assert_eq(wc.imm_data, htobe32(0xcafe0000u + (uint32_t)i));
		}
	}
	cr_assert_eq(m.qp.rq.tail, 8);
	cqe_cq_free(&c);
	tqp_free(&m);
}

/* ---- errors ---- */

static const struct {
	uint8_t syndrome;
	enum ibv_wc_status status;
} synd[] = {
	{ 0x01, IBV_WC_LOC_LEN_ERR }, { 0x02, IBV_WC_LOC_QP_OP_ERR }, { 0x04, IBV_WC_LOC_PROT_ERR },
	{ 0x05, IBV_WC_WR_FLUSH_ERR }, { 0x06, IBV_WC_MW_BIND_ERR }, { 0x10, IBV_WC_BAD_RESP_ERR },
	{ 0x11, IBV_WC_LOC_ACCESS_ERR }, { 0x12, IBV_WC_REM_INV_REQ_ERR }, { 0x13, IBV_WC_REM_ACCESS_ERR },
	{ 0x14, IBV_WC_REM_OP_ERR }, { 0x15, IBV_WC_RETRY_EXC_ERR }, { 0x16, IBV_WC_RNR_RETRY_EXC_ERR },
	{ 0x22, IBV_WC_REM_ABORT_ERR },
	{ 0x00, IBV_WC_GENERAL_ERR }, { 0x03, IBV_WC_GENERAL_ERR }, { 0x99, IBV_WC_GENERAL_ERR },
};

Test(err, every_syndrome_requester)
{
	struct tqp m;
	struct cqe_cq c;
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);

	qp_init(&m, FV_QPT_RC, 0x300, 16, 0, 0);
	cqe_cq_init(&c, 4, 64, 0);
	for (size_t i = 0; i < sizeof(synd) / sizeof(synd[0]); i++) {
		uint8_t op = i & 1 ? MLX5_OPCODE_RDMA_READ : MLX5_OPCODE_SEND;
		uint32_t at = cqe_post_send(&m.qp, op, 0, 0x5000 + i, &s, 1);	/* errors come unsignaled too */

		cqe_err(&c, MLX5_CQE_REQ_ERR, 0x300, op, synd[i].syndrome, (uint8_t)(0x80 + i), (uint16_t)at, 0);
		if (i & 2) {
			struct fv_wc wc = cqe_poll1_fv(&c.cq);

			cr_assert_eq(wc.status, synd[i].status, "syndrome 0x%x", synd[i].syndrome);
			cr_assert_eq(wc.vendor_err, 0x80 + i);
			cr_assert_eq(wc.wr_id, 0x5000 + i);
			cr_assert_eq(wc.qp_num, 0x300);
			cr_assert_eq(wc.opcode, i & 1 ? IBV_WC_RDMA_READ : IBV_WC_SEND);
		} else {
			struct ibv_wc wc = cqe_poll1_ibv(&c.cq);

			cr_assert_eq(wc.status, synd[i].status, "syndrome 0x%x", synd[i].syndrome);
			cr_assert_eq(wc.vendor_err, 0x80 + i);
			cr_assert_eq(wc.wr_id, 0x5000 + i);
			cr_assert_eq(wc.qp_num, 0x300);
			cr_assert_eq(wc.wc_flags, 0);
		}
		cr_assert_eq(m.qp.sq.ci, m.qp.sq.pi);
	}
	cqe_cq_free(&c);
	tqp_free(&m);
}

Test(err, every_syndrome_responder_rq_in_order)
{
	struct tqp m;
	struct cqe_cq c;
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);
	size_t n = sizeof(synd) / sizeof(synd[0]);

	qp_init(&m, FV_QPT_RC, 0x301, 16, 32, 16);
	cqe_cq_init(&c, 4, 64, 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(fv_recv(&m.qp, 0x6000 + i, &s, 1), 0);
	for (size_t i = 0; i < n; i++) {
		cqe_err(&c, MLX5_CQE_RESP_ERR, 0x301, 0, synd[i].syndrome, (uint8_t)i, 0, 0);
		struct ibv_wc wc = cqe_poll1_ibv(&c.cq);

		cr_assert_eq(wc.status, synd[i].status, "syndrome 0x%x", synd[i].syndrome);
		cr_assert_eq(wc.vendor_err, i);
		cr_assert_eq(wc.wr_id, 0x6000 + i);
		cr_assert_eq(wc.opcode, IBV_WC_RECV);
	}
	cr_assert_eq(m.qp.rq.tail, n);
	cqe_cq_free(&c);
	tqp_free(&m);
}

/* ---- the CQ itself ---- */

Test(cq, owner_bit_generations)
{
	struct tqp m;
	struct cqe_cq c;
	struct fv_wc wc[8];
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);
	uint64_t next = 0;

	qp_init(&m, FV_QPT_RC, 0x400, 16, 0, 0);
	cqe_cq_init(&c, 4, 64, 0);
	cr_assert_eq(fv_poll(&c.cq, wc, 8), 0, "fresh entries (op_own 0xF0) are not CQEs");

	/* 6 passes over a 4-entry CQ in batches of 3: every batch crosses a generation boundary
	 * at some point, and after each drain the old entries must read as empty. */
	for (int round = 0; round < 8; round++) {
		for (int i = 0; i < 3; i++) {
			uint32_t at = cqe_post_send(&m.qp, MLX5_OPCODE_SEND, FV_SIGNALED, 0x700 + next + (uint64_t)i, &s, 1);

			cqe_req(&c, 0x400, MLX5_OPCODE_SEND, (uint16_t)at, 0, 0);
		}
		cr_assert_eq(fv_poll(&c.cq, wc, 8), 3, "round %d", round);
		for (int i = 0; i < 3; i++)
			cr_assert_eq(wc[i].wr_id, 0x700 + next + (uint64_t)i);
		next += 3;
		cr_assert_eq(fv_poll(&c.cq, wc, 8), 0, "round %d: stale entries of the last pass", round);
	}
	cr_assert_eq(c.cq.ci, 24);

	/* An entry written with the wrong owner bit (device not there yet) is not consumed. */
	struct mlx5_cqe64 *e = cqe_next(&c);

	e->sop_drop_qpn = htobe32(0x400);
	e->op_own = (uint8_t)(MLX5_CQE_REQ << 4 | (((c.pi >> 2) & 1) ^ 1));
	cr_assert_eq(fv_poll(&c.cq, wc, 8), 0);
	cr_assert_eq(c.cq.ci, 24);
	cqe_cq_free(&c);
	tqp_free(&m);
}

Test(cq, consumer_record)
{
	struct tqp m;
	struct cqe_cq c;
	struct fv_wc wc[8];
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);

	qp_init(&m, FV_QPT_RC, 0x401, 16, 0, 0);
	/* Taken over at consumer index 2^24 - 2: the record keeps 24 bits. */
	cqe_cq_init(&c, 4, 64, 0xfffffe);
	cr_assert_eq(c.cq.ci, 0xfffffe);
	c.dbrec[0] = htobe32(0xfffffe);
	cr_assert_eq(fv_poll(&c.cq, wc, 8), 0);
	cr_assert_eq(be32toh(c.dbrec[0]), 0xfffffe, "nothing consumed, record untouched");
	c.dbrec[0] = 0xdeadbeef;
	cr_assert_eq(fv_poll(&c.cq, wc, 8), 0);
	cr_assert_eq(c.dbrec[0], 0xdeadbeef, "not even rewritten");
	c.dbrec[0] = htobe32(0xfffffe);

	for (int i = 0; i < 3; i++) {
		uint32_t at = cqe_post_send(&m.qp, MLX5_OPCODE_SEND, FV_SIGNALED, (uint64_t)i, &s, 1);

		cqe_req(&c, 0x401, MLX5_OPCODE_SEND, (uint16_t)at, 0, 0);
	}
	cr_assert_eq(fv_poll(&c.cq, wc, 8), 3);
	cr_assert_eq(be32toh(c.dbrec[0]), 0x000001);
	cr_assert_eq(c.dbrec[1], 0, "arm word untouched");
	cqe_cq_free(&c);
	tqp_free(&m);
}

Test(cq, poll_fewer_than_available)
{
	struct tqp m;
	struct cqe_cq c;
	struct ibv_wc wc[8];
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);

	qp_init(&m, FV_QPT_RC, 0x402, 16, 0, 0);
	cqe_cq_init(&c, 8, 64, 0);
	for (int i = 0; i < 5; i++) {
		uint32_t at = cqe_post_send(&m.qp, MLX5_OPCODE_SEND, FV_SIGNALED, 0x40 + (uint64_t)i, &s, 1);

		cqe_req(&c, 0x402, MLX5_OPCODE_SEND, (uint16_t)at, 0, 0);
	}
	memset(wc, 0xee, sizeof(wc));
	cr_assert_eq(fv_poll_cq(&c.cq, 2, wc), 2);
	cr_assert_eq(wc[0].wr_id, 0x40);
	cr_assert_eq(wc[1].wr_id, 0x41);
	cr_assert_eq(wc[2].wr_id, 0xeeeeeeeeeeeeeeee, "nothing written past n");
	cr_assert_eq(be32toh(c.dbrec[0]), 2);
	cr_assert_eq(m.qp.sq.ci, 2, "only the polled WQEs retired");
	cr_assert_eq(fv_poll_cq(&c.cq, 2, wc), 2);
	cr_assert_eq(wc[0].wr_id, 0x42);
	cr_assert_eq(fv_poll_cq(&c.cq, 0, wc), 0);
	cr_assert_eq(fv_poll_cq(&c.cq, 8, wc), 1);
	cr_assert_eq(wc[0].wr_id, 0x44);
	cr_assert_eq(be32toh(c.dbrec[0]), 5);
	cqe_cq_free(&c);
	tqp_free(&m);
}

Test(cq, cqe128_reads_second_half)
{
	struct tqp m;
	struct cqe_cq c;
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);

	qp_init(&m, FV_QPT_RC, 0x403, 16, 8, 16);
	cqe_cq_init(&c, 4, 128, 0);
	cr_assert_eq(fv_recv(&m.qp, 0x88, &s, 1), 0);
	for (int round = 0; round < 3; round++) {	/* across wraps of the 4-entry CQ */
		uint32_t at = cqe_post_send(&m.qp, MLX5_OPCODE_RDMA_READ, FV_SIGNALED, 0x80 + (uint64_t)round, &s, 1);
		struct mlx5_cqe64 *e = cqe_req(&c, 0x403, MLX5_OPCODE_RDMA_READ, (uint16_t)at, 8, 0);

		memset(cqe_prefix(e), 0x5a, 64);	/* the first half is not a CQE */
		struct ibv_wc wc = cqe_poll1_ibv(&c.cq);

		cr_assert_eq(wc.wr_id, 0x80 + (uint64_t)round);
		cr_assert_eq(wc.opcode, IBV_WC_RDMA_READ);
		cr_assert_eq(wc.byte_len, 8);
	}
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x403, .byte_cnt = 3, .flags_rqpn = 0x77 });
	struct fv_wc w = cqe_poll1_fv(&c.cq);

	cr_assert_eq(w.wr_id, 0x88);
	cr_assert_eq(w.src_qp, 0x77);
	cr_assert_eq(w.byte_len, 3);
	cr_assert_eq(be32toh(c.dbrec[0]), 4);
	cqe_cq_free(&c);
	tqp_free(&m);
}

Test(cq, undecodable_cqes)
{
	struct tqp m;
	struct cqe_cq c;
	struct fv_wc wc[8];
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);

	qp_init(&m, FV_QPT_RC, 0x404, 16, 0, 0);
	cqe_cq_init(&c, 8, 64, 0);

	/* A QPN no fv_qp registered, first in the call: -1 / EINVAL, and it stays at the head. */
	cqe_req(&c, 0x777, MLX5_OPCODE_SEND, 0, 0, 0);
	errno = 0;
	cr_assert_eq(fv_poll(&c.cq, wc, 8), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(fv_poll(&c.cq, wc, 8), -1, "still there");
	cr_assert_eq(be32toh(c.dbrec[0]), 0, "not consumed");
	cr_assert_eq(c.cq.ci, 0);

	/* Its QP registered late, the same CQE is that QP's completion: nothing was lost. */
	struct tqp late;

	qp_init(&late, FV_QPT_RC, 0x777, 16, 0, 0);
	cr_assert_eq(cqe_post_send(&late.qp, MLX5_OPCODE_SEND, FV_SIGNALED, 0x77, &s, 1), 0);
	cr_assert_eq(fv_poll(&c.cq, wc, 8), 1);
	cr_assert_eq(wc[0].wr_id, 0x77);
	cr_assert_eq(wc[0].qp_num, 0x777);
	cr_assert_eq(be32toh(c.dbrec[0]), 1);
	tqp_free(&late);

	/* After a good one: the good one is returned, the bad one waits for the next call. */
	uint32_t a = cqe_post_send(&m.qp, MLX5_OPCODE_SEND, FV_SIGNALED, 0xa1, &s, 1);
	uint32_t z = cqe_post_send(&m.qp, MLX5_OPCODE_SEND, FV_SIGNALED, 0xa2, &s, 1);

	cqe_req(&c, 0x404, MLX5_OPCODE_SEND, (uint16_t)a, 0, 0);
	cqe_req(&c, 0x778, MLX5_OPCODE_SEND, 0, 0, 0);
	cqe_req(&c, 0x404, MLX5_OPCODE_SEND, (uint16_t)z, 0, 0);
	cr_assert_eq(fv_poll(&c.cq, wc, 8), 1);
	cr_assert_eq(wc[0].wr_id, 0xa1);
	cr_assert_eq(be32toh(c.dbrec[0]), 2);
	struct ibv_wc iwc[8];
	struct mlx5_cqe64 raw;

	cr_assert_eq(fv_poll_cq(&c.cq, 8, iwc), -1);
	cr_assert_eq(fv_poll_cq(&c.cq, 8, iwc), -1, "still there");
	cr_assert_eq(be32toh(c.dbrec[0]), 2);
	/* Taken as it is: the caller sees whose it was. */
	cr_assert_eq(fv_cq_take_cqe(&c.cq, &raw), 0);
	cr_assert_eq(be32toh(raw.sop_drop_qpn) & 0xffffff, 0x778);
	cr_assert_eq(be32toh(c.dbrec[0]), 3);
	cr_assert_eq(fv_poll_cq(&c.cq, 8, iwc), 1);
	cr_assert_eq(iwc[0].wr_id, 0xa2);
	cr_assert_eq(fv_cq_take_cqe(&c.cq, &raw), ENOENT, "nothing new");
	cr_assert_eq(be32toh(c.dbrec[0]), 4);

	/* A responder CQE for a QP with neither RQ nor SRQ, a resize CQE, a compressed CQE. */
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x404 });
	cr_assert_eq(fv_poll(&c.cq, wc, 8), -1);
	cr_assert_eq(fv_cq_take_cqe(&c.cq, NULL), 0);
	cqe_push(&c, cqe_next(&c), MLX5_CQE_RESIZE_CQ, 0);
	cr_assert_eq(fv_poll(&c.cq, wc, 8), -1);
	cr_assert_eq(fv_cq_take_cqe(&c.cq, &raw), 0);
	cr_assert_eq(raw.op_own >> 4, MLX5_CQE_RESIZE_CQ);
	struct mlx5_cqe64 *e = cqe_next(&c);

	e->sop_drop_qpn = htobe32(0x404);
	cqe_push(&c, e, MLX5_CQE_REQ, 0x0c);
	cr_assert_eq(fv_poll(&c.cq, wc, 8), -1);
	cr_assert_eq(c.cq.ci, 6, "a bad one is not consumed by polling");
	cr_assert_eq(fv_cq_take_cqe(&c.cq, NULL), 0);
	cr_assert_eq(c.cq.ci, 7);
	cr_assert_eq(be32toh(c.dbrec[0]), 7);
	cr_assert_eq(m.qp.sq.ci, m.qp.sq.pi, "nothing retired by the bad ones");
	cqe_cq_free(&c);
	tqp_free(&m);
}

/* ---- scatter-to-CQE ---- */

static uint8_t pattern[64];

static void fill_pattern(void)
{
	for (int i = 0; i < 64; i++)
		pattern[i] = (uint8_t)(0xc0 ^ (i * 7));
}

Test(scatter, responder_format1_rq)
{
	struct tqp m;
	struct cqe_cq c;
	uint8_t b1[10], b2[100];
	struct ibv_sge s[2] = { sge(b1, 10), sge(b2, 100) };

	fill_pattern();
	memset(b1, 0, sizeof(b1));
	memset(b2, 0, sizeof(b2));
	qp_init(&m, FV_QPT_RC, 0x500, 16, 4, 32);
	cqe_cq_init(&c, 4, 64, 0);
	cr_assert_eq(fv_recv(&m.qp, 0x51, s, 2), 0);
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND_IMM, .qpn = 0x500, .byte_cnt = 30,
			 .bits = MLX5_INLINE_SCATTER_32, .data = pattern, .data_len = 30,
			 .imm_inval_pkey = htobe32(0x1234) });
	struct ibv_wc wc = cqe_poll1_ibv(&c.cq);

	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 0x51);
	cr_assert_eq(wc.byte_len, 30);
	cr_assert_eq(wc.imm_data, htobe32(0x1234));
	cr_assert_arr_eq(b1, pattern, 10);
	cr_assert_arr_eq(b2, pattern + 10, 20);
	cr_assert_eq(b2[20], 0, "nothing past byte_cnt");
	cqe_cq_free(&c);
	tqp_free(&m);
}

Test(scatter, responder_format2_srq_cqe128)
{
	struct cqe_cq c;
	struct tqp m;
	uint8_t b[3][24];
	struct ibv_sge s[3] = { sge(b[0], 24), sge(b[1], 24), sge(b[2], 24) };
	uint8_t *sbuf = aligned_alloc(4096, 4096);
	__be32 *db = aligned_alloc(64, 64);
	struct fv_srq srq;

	fill_pattern();
	memset(b, 0, sizeof(b));
	memset(db, 0, 64);
	struct fv_srq_geom g = { .buf = sbuf, .wqe_cnt = 8, .stride = 64, .dbrec = db, .srqn = 0x51,
				 .head = 0, .tail = 7, .link = 1 };

	cr_assert_eq(fv_srq_init_geom(&srq, &g), 0);
	qp_init(&m, FV_QPT_RC, 0x501, 16, 0, 0);
	fv_qp_attach_srq(&m.qp, &srq);
	cqe_cq_init(&c, 4, 128, 0);
	struct ibv_sge one = sge(b[0], 1);

	cr_assert_eq(fv_srq_recv(&srq, 0x60, &one, 1), 0);
	cr_assert_eq(fv_srq_recv(&srq, 0x61, s, 3), 0);
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x501, .byte_cnt = 64,
			 .wqe_counter = 1, .srqn_uidx = 0x51, .bits = MLX5_INLINE_SCATTER_64,
			 .data = pattern, .data_len = 64 });
	struct fv_wc wc = cqe_poll1_fv(&c.cq);

	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 0x61);
	cr_assert_arr_eq(b[0], pattern, 24);
	cr_assert_arr_eq(b[1], pattern + 24, 24);
	cr_assert_arr_eq(b[2], pattern + 48, 16);
	cr_assert_eq(b[2][16], 0);

	/* More data than the WQE's buffers: IBV_WC_LOC_LEN_ERR, what fits is copied. */
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x501, .byte_cnt = 20,
			 .wqe_counter = 0, .srqn_uidx = 0x51, .bits = MLX5_INLINE_SCATTER_64,
			 .data = pattern + 1, .data_len = 20 });
	wc = cqe_poll1_fv(&c.cq);
	cr_assert_eq(wc.wr_id, 0x60);
	cr_assert_eq(wc.status, IBV_WC_LOC_LEN_ERR);
	cr_assert_eq(b[0][0], pattern[1]);
	cqe_cq_free(&c);
	tqp_free(&m);
	fv_srq_cleanup(&srq);
	free(sbuf);
	free(db);
}

Test(scatter, requester_read_format1)
{
	struct tqp m;
	struct cqe_cq c;
	uint8_t b1[4], b2[28];
	struct ibv_sge s[2] = { sge(b1, 4), sge(b2, 28) };

	fill_pattern();
	memset(b1, 0, sizeof(b1));
	memset(b2, 0, sizeof(b2));
	qp_init(&m, FV_QPT_RC, 0x502, 16, 0, 0);
	cqe_cq_init(&c, 4, 64, 0);
	uint32_t at = cqe_post_send(&m.qp, MLX5_OPCODE_RDMA_READ, FV_SIGNALED, 0x71, s, 2);
	struct mlx5_cqe64 *e = cqe_next(&c);

	memcpy(e, pattern, 32);
	e->sop_drop_qpn = htobe32((uint32_t)MLX5_OPCODE_RDMA_READ << 24 | 0x502);
	e->wqe_counter = htobe16((uint16_t)at);
	e->byte_cnt = htobe32(32);
	cqe_push(&c, e, MLX5_CQE_REQ, MLX5_INLINE_SCATTER_32);
	struct ibv_wc wc = cqe_poll1_ibv(&c.cq);

	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RDMA_READ);
	cr_assert_eq(wc.byte_len, 32);
	cr_assert_arr_eq(b1, pattern, 4);
	cr_assert_arr_eq(b2, pattern + 4, 28);
	cqe_cq_free(&c);
	tqp_free(&m);
}

Test(scatter, requester_atomic_format2)
{
	struct tqp m;
	struct cqe_cq c;
	uint64_t old = 0, guard = 0;
	struct ibv_sge s = sge(&old, 8);

	fill_pattern();
	qp_init(&m, FV_QPT_RC, 0x503, 16, 0, 0);
	cqe_cq_init(&c, 4, 128, 0);
	for (int k = 0; k < 2; k++) {
		uint8_t op = k ? MLX5_OPCODE_ATOMIC_FA : MLX5_OPCODE_ATOMIC_CS;
		uint32_t at = cqe_post_send(&m.qp, op, FV_SIGNALED, 0x90 + (uint64_t)k, &s, 1);
		struct mlx5_cqe64 *e = cqe_next(&c);

		memcpy(cqe_prefix(e), pattern + 8 * k, 8);
		e->sop_drop_qpn = htobe32((uint32_t)op << 24 | 0x503);
		e->wqe_counter = htobe16((uint16_t)at);
		cqe_push(&c, e, MLX5_CQE_REQ, MLX5_INLINE_SCATTER_64);
		old = 0;
		struct fv_wc wc = cqe_poll1_fv(&c.cq);

		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert_eq(wc.opcode, k ? IBV_WC_FETCH_ADD : IBV_WC_COMP_SWAP);
		cr_assert_eq(wc.byte_len, 8);
		cr_assert_arr_eq(&old, pattern + 8 * k, 8);
		cr_assert_eq(guard, 0);
	}
	cqe_cq_free(&c);
	tqp_free(&m);
}

/* A READ whose WQE starts in the last block: two data segments there, two at block 0. */
Test(scatter, requester_read_wqe_wraps_ring_end)
{
	struct tqp m;
	struct cqe_cq c;
	uint8_t b[4][16];
	struct ibv_sge s[4] = { sge(b[0], 5), sge(b[1], 7), sge(b[2], 9), sge(b[3], 11) };
	uint8_t x[8];
	struct ibv_sge sx = sge(x, 8);

	fill_pattern();
	memset(b, 0, sizeof(b));
	qp_init(&m, FV_QPT_RC, 0x504, 4, 0, 0);
	cqe_cq_init(&c, 4, 64, 0);
	for (int i = 0; i < 3; i++) {
		uint32_t at = cqe_post_send(&m.qp, MLX5_OPCODE_SEND, FV_SIGNALED, 1, &sx, 1);

		cqe_req(&c, 0x504, MLX5_OPCODE_SEND, (uint16_t)at, 0, 0);
	}
	struct fv_wc w[4];

	cr_assert_eq(fv_poll(&c.cq, w, 4), 3);
	memset(tqp_block(&m, 0), 0x66, 64);	/* block 0's old contents must be overwritten */
	uint32_t at = cqe_post_send(&m.qp, MLX5_OPCODE_RDMA_READ, FV_SIGNALED, 0x99, s, 4);

	cr_assert_eq(at & m.qp.sq.mask, 3, "starts in the last block");
	cr_assert_eq(m.qp.sq.ring.buf[3 * 64 + 7] & 0x3f, 6);
	struct mlx5_cqe64 *e = cqe_next(&c);

	memcpy(e, pattern, 32);
	e->sop_drop_qpn = htobe32((uint32_t)MLX5_OPCODE_RDMA_READ << 24 | 0x504);
	e->wqe_counter = htobe16((uint16_t)at);
	e->byte_cnt = htobe32(32);
	cqe_push(&c, e, MLX5_CQE_REQ, MLX5_INLINE_SCATTER_32);
	struct ibv_wc wc = cqe_poll1_ibv(&c.cq);

	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 0x99);
	cr_assert_arr_eq(b[0], pattern, 5);
	cr_assert_arr_eq(b[1], pattern + 5, 7);
	cr_assert_arr_eq(b[2], pattern + 12, 9);
	cr_assert_arr_eq(b[3], pattern + 21, 11);
	cr_assert_eq(b[3][11], 0);
	cr_assert_eq(m.qp.sq.ci, at + 2);
	cqe_cq_free(&c);
	tqp_free(&m);
}

/* XRC send WQEs carry an XRC segment before the remote address; the scatter list follows. */
Test(scatter, requester_xrc_read_and_length_error)
{
	struct tqp m;
	struct cqe_cq c;
	uint8_t b1[6], b2[6];
	struct ibv_sge s[2] = { sge(b1, 6), sge(b2, 6) };

	fill_pattern();
	memset(b1, 0, sizeof(b1));
	memset(b2, 0, sizeof(b2));
	qp_init(&m, FV_QPT_XRC, 0x505, 16, 0, 0);
	cqe_cq_init(&c, 4, 64, 0);
	for (int k = 0; k < 2; k++) {
		uint32_t len = k ? 13 : 12;	/* 13 does not fit in 6 + 6 */
		uint32_t at = cqe_post_send(&m.qp, MLX5_OPCODE_RDMA_READ, FV_SIGNALED, 0xb0 + (uint64_t)k, s, 2);
		struct mlx5_cqe64 *e = cqe_next(&c);

		memcpy(e, pattern + k, len);
		e->sop_drop_qpn = htobe32((uint32_t)MLX5_OPCODE_RDMA_READ << 24 | 0x505);
		e->wqe_counter = htobe16((uint16_t)at);
		e->byte_cnt = htobe32(len);
		cqe_push(&c, e, MLX5_CQE_REQ, MLX5_INLINE_SCATTER_32);
		struct ibv_wc wc = cqe_poll1_ibv(&c.cq);

		cr_assert_eq(wc.wr_id, 0xb0 + (uint64_t)k);
		cr_assert_eq(wc.status, k ? IBV_WC_LOC_LEN_ERR : IBV_WC_SUCCESS);
		cr_assert_arr_eq(b1, pattern + k, 6);
		cr_assert_arr_eq(b2, pattern + k + 6, 6);
	}
	cqe_cq_free(&c);
	tqp_free(&m);
}

/* ---- which SRQ a responder CQE belongs to ---- */

struct srqmem {
	struct fv_srq srq;
	uint8_t *buf;
	__be32 *db;
};

static void srqmem_init(struct srqmem *q, uint32_t srqn, struct ibv_srq *key)
{
	q->buf = aligned_alloc(4096, 4096);
	q->db = aligned_alloc(64, 64);
	cr_assert(q->buf && q->db);
	memset(q->buf, 0, 4096);
	memset(q->db, 0, 64);
	struct fv_srq_geom g = { .buf = q->buf, .wqe_cnt = 16, .stride = 32, .dbrec = q->db, .srqn = srqn,
				 .head = 0, .tail = 15, .link = 1, .ibsrq = key };

	cr_assert_eq(fv_srq_init_geom(&q->srq, &g), 0);
}

static void srqmem_free(struct srqmem *q)
{
	fv_srq_cleanup(&q->srq);
	free(q->buf);
	free(q->db);
}

Test(srq, qp_finds_its_srq_through_ibqp)
{
	struct ibv_srq fake_srq;
	struct ibv_qp fake_qp;
	struct srqmem q;
	struct tqp m;
	struct cqe_cq c;
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);

	memset(&fake_srq, 0, sizeof(fake_srq));
	memset(&fake_qp, 0, sizeof(fake_qp));
	fake_qp.srq = &fake_srq;
	srqmem_init(&q, 0x61, &fake_srq);
	qp_init(&m, FV_QPT_RC, 0x600, 16, 0, 0);
	m.qp.ibqp = &fake_qp;	/* as fv_qp_init leaves a QP created on an SRQ */
	cr_assert_null(m.qp.srq);
	cqe_cq_init(&c, 4, 64, 0);
	cr_assert_eq(fv_srq_recv(&q.srq, 0xd0, &s, 1), 0);
	cr_assert_eq(fv_srq_recv(&q.srq, 0xd1, &s, 1), 0);
	/* CQE version 1: srqn_uidx is a user index, not the SRQ number; the QP decides. */
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x600, .wqe_counter = 1, .srqn_uidx = 3 });
	cr_assert_eq(cqe_poll1_fv(&c.cq).wr_id, 0xd1);
	cr_assert_eq(m.qp.srq, &q.srq, "resolved once, cached in the QP");
	cqe_err(&c, MLX5_CQE_RESP_ERR, 0x600, 0, MLX5_CQE_SYNDROME_WR_FLUSH_ERR, 0, 0, 3);
	struct ibv_wc wc = cqe_poll1_ibv(&c.cq);

	cr_assert_eq(wc.wr_id, 0xd0);
	cr_assert_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	cr_assert_eq(q.srq.tail, 0, "flushed WQE back on the free list");
	cqe_cq_free(&c);
	tqp_free(&m);
	srqmem_free(&q);
}

Test(srq, xrc_target_by_srq_number_or_cq_binding)
{
	struct srqmem q1, q2;
	struct cqe_cq c;
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);

	srqmem_init(&q1, 0x71, NULL);
	srqmem_init(&q2, 0x72, NULL);
	cqe_cq_init(&c, 8, 64, 0);
	cr_assert_eq(fv_srq_recv(&q1.srq, 0xe1, &s, 1), 0);
	cr_assert_eq(fv_srq_recv(&q2.srq, 0xe2, &s, 1), 0);
	cr_assert_eq(fv_srq_recv(&q2.srq, 0xe3, &s, 1), 0);

	/* QPN 0x7777 is an XRC target QP fastverbs does not own. CQE version 0: by SRQ number. */
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x7777, .srqn_uidx = 0x72,
			 .byte_cnt = 5, .flags_rqpn = 0x31 });
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x7777, .srqn_uidx = 0x71 });
	struct fv_wc wc[4];

	cr_assert_eq(fv_poll(&c.cq, wc, 4), 2);
	cr_assert_eq(wc[0].wr_id, 0xe2);
	cr_assert_eq(wc[0].qp_num, 0x7777);
	cr_assert_eq(wc[0].src_qp, 0x31);
	cr_assert_eq(wc[1].wr_id, 0xe1);

	/* CQE version 1 (srqn_uidx = 5, a user index): only a bound CQ can tell; unbound it is an error. */
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x7777, .srqn_uidx = 5, .wqe_counter = 1 });
	errno = 0;
	cr_assert_eq(fv_poll(&c.cq, wc, 4), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(q2.srq.wrid[1], 0xe3, "nothing taken");

	/* The refused CQE waited at the head: bound, the CQ decodes it now. */
	fv_cq_bind_srq(&c.cq, &q2.srq);
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x7778, .srqn_uidx = 0x71, .wqe_counter = 0 });
	cr_assert_eq(fv_poll(&c.cq, wc, 4), 2);
	cr_assert_eq(wc[0].wr_id, 0xe3);
	cr_assert_eq(wc[1].wr_id, 0xe2, "a bound CQ takes every unowned receive, whatever srqn_uidx says");
	cqe_cq_free(&c);
	srqmem_free(&q1);
	srqmem_free(&q2);
}

Test(cq, geometry_refused_and_taken)
{
	struct fv_cq cq;
	uint8_t buf[4 * 128];
	__be32 db[2] = { htobe32(0x1000005), 0 };
	struct fv_cq_geom g = { .buf = buf, .cqe_cnt = 4, .cqe_size = 96, .dbrec = db };

	cr_assert_eq(fv_cq_init_geom(&cq, &g), EINVAL, "entry size 96");
	g.cqe_size = 128;
	g.cqe_cnt = 6;
	cr_assert_eq(fv_cq_init_geom(&cq, &g), EINVAL, "not a power of two");
	g.cqe_cnt = 1u << 25;
	cr_assert_eq(fv_cq_init_geom(&cq, &g), EINVAL, "above 2^24 entries");
	g.cqe_cnt = 4;
	g.dbrec = NULL;
	cr_assert_eq(fv_cq_init_geom(&cq, &g), EINVAL, "no doorbell record");
	g.dbrec = db;
	cr_assert_eq(fv_cq_init_geom(&cq, &g), 0);
	cr_assert_eq(cq.ci, 5, "24 bits of the consumer record");
	cr_assert_eq(cq.buf64, buf + 64, "the cqe64 is the second half of a 128-byte entry");
	fv_cq_cleanup(&cq);
}

/* ---- receive ways: a QP's plain receives decoded from the completion its way keeps ---- */

/* The completion a receive CQE must give, built field by field (padding zero, as fastverbs
 * stores it). */
struct rx_expect {
	uint64_t wr_id;
	uint8_t op, bits;	/* CQE opcode, op_own's SE bit */
	uint8_t status, vendor;
	uint32_t qpn, byte_len, rqpn;
	__be32 imm;
	uint16_t slid;
	uint8_t ml_path;
};

static void rx_check(const void *got, int ibv, const struct rx_expect *x, int at)
{
	int ok = x->status == IBV_WC_SUCCESS;

	if (x->op == MLX5_CQE_REQ) {	/* a requester completion among them: a SEND */
		const struct ibv_wc *i = (const struct ibv_wc *)got;
		const struct fv_wc *f = (const struct fv_wc *)got;

		cr_assert_eq(ibv ? i->wr_id : f->wr_id, x->wr_id, "completion %d", at);
		cr_assert_eq(ibv ? (int)i->opcode : (int)f->opcode, IBV_WC_SEND, "completion %d", at);
		cr_assert_eq(ibv ? i->qp_num : f->qp_num, x->qpn, "completion %d", at);
		cr_assert_eq(ibv ? (int)i->status : (int)f->status, IBV_WC_SUCCESS, "completion %d", at);
		return;
	}

	if (ibv) {
		struct ibv_wc w;

		memset(&w, 0, sizeof(w));
		w.wr_id = x->wr_id;
		w.status = (enum ibv_wc_status)x->status;
		w.opcode = IBV_WC_RECV;
		w.vendor_err = x->vendor;
		w.qp_num = x->qpn;
		if (ok) {
			w.byte_len = x->byte_len;
			w.imm_data = x->imm;
			w.src_qp = x->rqpn & 0xffffff;
			w.wc_flags = (x->rqpn & 0x30000000 ? IBV_WC_GRH : 0) |
				     (x->op == MLX5_CQE_RESP_SEND_IMM ? IBV_WC_WITH_IMM : 0);
			w.pkey_index = (uint16_t)be32toh(x->imm);
			w.slid = x->slid;
			w.sl = (x->rqpn >> 24) & 0xf;
			w.dlid_path_bits = x->ml_path & 0x7f;
		}
		cr_assert(!memcmp(got, &w, sizeof(w)), "completion %d (wr_id %llx): ibv_wc %s", at,
			  (unsigned long long)x->wr_id, cqe_hex(got, sizeof(w)));
	} else {
		struct fv_wc w;

		memset(&w, 0, sizeof(w));
		w.wr_id = x->wr_id;
		w.status = x->status;
		w.opcode = IBV_WC_RECV;
		w.vendor_err = x->vendor;
		w.qp_num = x->qpn;
		if (ok) {
			w.byte_len = x->byte_len;
			w.imm_data = x->imm;
			w.src_qp = x->rqpn & 0xffffff;
			w.wc_flags = (uint8_t)((x->rqpn & 0x30000000 ? IBV_WC_GRH : 0) |
					       (x->op == MLX5_CQE_RESP_SEND_IMM ? IBV_WC_WITH_IMM : 0));
		}
		cr_assert(!memcmp(got, &w, sizeof(w)), "completion %d (wr_id %llx): fv_wc %s", at,
			  (unsigned long long)x->wr_id, cqe_hex(got, sizeof(w)));
	}
}

/* Poll want completions in calls of k (1: the one-completion path), by fv_poll_cq if ibv. */
static int rx_poll(struct fv_cq *cq, void *wc, int k, int ibv)
{
	if (ibv)
		return k == 1 ? fv_poll_cq(cq, 1, (struct ibv_wc *)wc) : fv_poll_cq(cq, k, (struct ibv_wc *)wc);
	return k == 1 ? fv_poll(cq, (struct fv_wc *)wc, 1) : fv_poll(cq, (struct fv_wc *)wc, k);
}

/*
 * Receives of three RQ QPs (two with QPNs equal in their low bits) and two QPs on one SRQ
 * interleaving on a CQ that wraps, both pollers, every number of completions a call: the
 * sender's QPN, SL, GRH, slid, path bits and pkey of a QP change now and then (the way must
 * not give the old ones), immediates, solicited events, flushes and requester completions
 * come between, and the SRQ's WQEs come back out of order. Every completion is checked byte
 * for byte, and the SRQ's free list against a model of it.
 */
Test(rway, interleaved_receives_fields_changing_both_pollers)
{
	static const uint32_t qpns[5] = { 0x900, 0x901, 0x910, 0x920, 0x931 };	/* 3, 4: on the SRQ */
	uint8_t b[64];
	struct ibv_sge s = sge(b, 64);

	for (uint32_t size = 64; size <= 128; size += 64) {
		struct tqp m[5];
		struct srqmem q;
		struct cqe_cq c;
		uint32_t rqpn[5], pkey[5], posted[5] = { 0 };
		uint16_t slid[5];
		uint64_t id = 0x10000;
		uint32_t freel[16], nfree = 0;	/* the SRQ's free list as it must be, head first */
		uint32_t outst[16], nout = 0;	/* SRQ WQEs posted, not completed */
		unsigned rng = 12345;

		srqmem_init(&q, 0x95, NULL);
		for (uint32_t i = q.srq.head;; i = (i + 1) & q.srq.mask) {
			freel[nfree++] = i;
			if (i == q.srq.tail)
				break;
		}
		for (int i = 0; i < 5; i++) {
			qp_init(&m[i], FV_QPT_RC, qpns[i], 16, i < 3 ? 64 : 0, 16);
			if (i >= 3)
				fv_qp_attach_srq(&m[i].qp, &q.srq);
			rqpn[i] = 0x5000u + (uint32_t)i;
			pkey[i] = (uint32_t)i;
			slid[i] = (uint16_t)(0x100 + i);
		}
		cqe_cq_init(&c, 32, size, 0);
		for (int i = 0; i < 6; i++) {	/* WQEs outstanding: the SRQ's completions come out of order */
			outst[nout++] = q.srq.head;
			cr_assert_eq(q.srq.head, freel[0]);
			memmove(freel, freel + 1, --nfree * sizeof(freel[0]));
			cr_assert_eq(fv_srq_recv(&q.srq, 0x8000 + q.srq.head, &s, 1), 0);
		}
		for (int chunk = 0; chunk < 300; chunk++) {
			struct rx_expect x[17];
			int n = 1 + chunk % 16, ibv = (chunk / 3) % 2;
			int k = (int[]){ 16, 1, 3, 16, 5, 2, 1 }[chunk % 7];

			for (int j = 0; j < n; j++) {
				int i;
				uint16_t wqe = 0;

				rng = rng * 1103515245u + 12345u;
				i = (int)((rng >> 16) % 5);
				if ((rng >> 8) % 11 == 0)	/* the sender changes */
					rqpn[i] = (rqpn[i] + 0x01000001u) & 0x3fffffff;
				if ((rng >> 12) % 13 == 0)
					slid[i]++;
				if ((rng >> 4) % 17 == 0)
					pkey[i] ^= 0x10001;
				x[j] = (struct rx_expect){ .op = MLX5_CQE_RESP_SEND, .qpn = qpns[i],
							   .byte_len = 64 + (uint32_t)(rng % 1000), .rqpn = rqpn[i],
							   .imm = htobe32(pkey[i]), .slid = slid[i],
							   .ml_path = (uint8_t)(0x80 | i) };
				if (chunk % 5 == 4 && j == 2)
					x[j].bits = 2;	/* solicited event */
				if (chunk % 9 == 8 && j == 1) {
					x[j].op = MLX5_CQE_RESP_SEND_IMM;
					x[j].imm = htobe32(0xabc00000u + (uint32_t)chunk);
				}
				if (chunk % 23 == 22 && j == n - 1) {
					x[j].status = IBV_WC_WR_FLUSH_ERR;
					x[j].vendor = 0x44;
				}
				if (i < 3) {	/* the RQ's next */
					cr_assert_eq(fv_recv(&m[i].qp, id, &s, 1), 0);
					fv_recv_ring(&m[i].qp);
					posted[i]++;
				} else {	/* an SRQ WQE posted, then any outstanding one completes */
					uint32_t at = q.srq.head, p = (rng >> 20) % (nout + 1), pick;

					cr_assert_eq(at, freel[0]);
					memmove(freel, freel + 1, --nfree * sizeof(freel[0]));
					cr_assert_eq(fv_srq_recv(&q.srq, 0x8000 + at, &s, 1), 0);
					outst[nout++] = at;
					pick = outst[p];
					memmove(outst + p, outst + p + 1, (--nout - p) * sizeof(outst[0]));
					wqe = (uint16_t)(pick + 16 * (uint32_t)(rng % 3));	/* any wrap of the index */
					x[j].wr_id = 0x8000 + pick;
					freel[nfree++] = pick;
				}
				if (i < 3)
					x[j].wr_id = id;
				id++;
				if (chunk % 6 == 5 && j == 0) {	/* QP 1 sent too: its completion first */
					uint32_t sat = cqe_post_send(&m[1].qp, MLX5_OPCODE_SEND, FV_SIGNALED, 0x77000 + (uint64_t)chunk, &s, 1);

					struct rx_expect rx = x[j];	/* the receive, set up above, follows */

					cqe_req(&c, qpns[1], MLX5_OPCODE_SEND, (uint16_t)sat, 0, 0);
					x[j++] = (struct rx_expect){ .op = MLX5_CQE_REQ, .qpn = qpns[1],
								     .wr_id = 0x77000 + (uint64_t)chunk };
					n++;
					x[j] = rx;
				}
				if (x[j].status)
					cqe_err(&c, MLX5_CQE_RESP_ERR, qpns[i], 0, MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
						x[j].vendor, wqe, 0x95);
				else
					cqe_resp(&c, &(struct cqe_resp){ .opcode = x[j].op, .qpn = qpns[i],
							 .byte_cnt = x[j].byte_len, .flags_rqpn = x[j].rqpn,
							 .imm_inval_pkey = x[j].imm, .slid = x[j].slid,
							 .ml_path = x[j].ml_path, .bits = x[j].bits,
							 .wqe_counter = wqe, .srqn_uidx = 0x95 });
			}
			for (int got = 0; got < n;) {
				union { struct ibv_wc i[17]; struct fv_wc f[17]; } wc;
				int want = n - got < k ? n - got : k, r;

				memset(&wc, 0xee, sizeof(wc));
				r = rx_poll(&c.cq, &wc, want, ibv);
				cr_assert_eq(r, want, "chunk %d: %d of %d", chunk, r, want);
				for (int i = 0; i < r; i++, got++)
					rx_check(ibv ? (void *)&wc.i[i] : (void *)&wc.f[i], ibv, &x[got], got);
				cr_assert_eq(ibv ? wc.i[r].wr_id : wc.f[r].wr_id, 0xeeeeeeeeeeeeeeee, "nothing past n");
			}
			for (int i = 0; i < 3; i++)
				cr_assert_eq(m[i].qp.rq.tail, posted[i], "chunk %d: RQ %d's tail", chunk, i);
			/* the free list, followed from its head through the WQEs' links */
			uint32_t w = q.srq.head;

			for (uint32_t f = 0; f < nfree; f++) {
				cr_assert_eq(w, freel[f], "chunk %d: free list entry %u", chunk, f);
				if (f + 1 < nfree)
					w = fv__srq_next(fv__srq_wqe(&q.srq, w), q.srq.mask16);
			}
			cr_assert_eq(q.srq.tail, freel[nfree - 1]);
			cr_assert_eq(be32toh(c.dbrec[0]), c.cq.ci & 0xffffff);
		}
		struct fv_wc none;

		cr_assert_eq(fv_poll(&c.cq, &none, 1), 0, "and no more");
		cqe_cq_free(&c);
		for (int i = 0; i < 5; i++)
			tqp_free(&m[i]);
		srqmem_free(&q);
	}
}

/* A receive way names the queue its QP had: a QP attached to another SRQ finds the new one. */
Test(rway, qp_attached_to_another_srq)
{
	struct srqmem q1, q2;
	struct tqp m;
	struct cqe_cq c;
	uint8_t b[8];
	struct ibv_sge s = sge(b, 8);

	srqmem_init(&q1, 0x97, NULL);
	srqmem_init(&q2, 0x98, NULL);
	qp_init(&m, FV_QPT_RC, 0x940, 16, 0, 0);
	fv_qp_attach_srq(&m.qp, &q1.srq);
	cqe_cq_init(&c, 8, 64, 0);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(fv_srq_recv(&q1.srq, 0xa0 + (uint64_t)i, &s, 1), 0);
		cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x940, .wqe_counter = (uint16_t)i });
		cr_assert_eq(cqe_poll1_fv(&c.cq).wr_id, 0xa0 + (uint64_t)i);
	}
	fv_qp_attach_srq(&m.qp, &q2.srq);
	cr_assert_eq(fv_srq_recv(&q2.srq, 0xb0, &s, 1), 0);
	cqe_resp(&c, &(struct cqe_resp){ .opcode = MLX5_CQE_RESP_SEND, .qpn = 0x940, .wqe_counter = 0 });
	cr_assert_eq(cqe_poll1_fv(&c.cq).wr_id, 0xb0);
	cr_assert_eq(q2.srq.tail, 0, "given back to the SRQ it came from");
	cr_assert_eq(q1.srq.tail, 2);
	cqe_cq_free(&c);
	tqp_free(&m);
	srqmem_free(&q1);
	srqmem_free(&q2);
}
