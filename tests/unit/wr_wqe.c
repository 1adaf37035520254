/*
 * fv_wr_* (ibv_wr_post(3)) on plain-memory QPs: the bytes of each builder and setter, the
 * doorbell of a batch, and what a failing or aborted batch leaves (nothing).
 *
 * A few WQEs are composed field by field with tests/lib/wqe-expect.h (never with fastverbs'
 * writers) and the whole ring must equal the model. The matrix of every (QP type, builder,
 * payload setter) then compares a fv_wr_* batch with the typed builder of the same request
 * on a twin QP (send_wqe.c checks those against the model): ring, doorbell record and
 * BlueFlame register must be equal byte for byte. Rings and registers start poisoned, so a
 * byte written where it should not be shows.
 */
#include <criterion/criterion.h>
#include <fastverbs/compat/verbs.h>
#include "memqp.h"
#include "wqe-expect.h"
#include "field-values.h"
#include "once.h"
#define IMM      0xefbeaddeu	/* as a __be32: bytes de ad be ef */

static uint8_t pat[4096];

static void poison(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed ^ (i * 13) ^ (i >> 8));
}

static struct memqp_cfg cfg(enum fv_qpt qpt, uint32_t wqebbs)
{
	return (struct memqp_cfg){ .qpt = qpt, .qpn = QPN, .sq_wqe_cnt = wqebbs, .bf_size = 256,
		.max_inline = qpt == FV_QPT_UD ? 76 : 220, .max_send_sge = 4, .start_pi = 0xfff0 };
}

static void open_qp(struct memqp *m, const struct memqp_cfg *c)
{
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 7 + 3);
	memqp_init(m, c);
	poison(m->sq, m->sq_bytes, 0x5a);
	poison(m->bf, 512, 0x33);
}

static struct fv_ah test_ah(void)
{
	struct fv_ah ah;
	uint8_t av[48];

	for (int i = 0; i < 48; i++)
		av[i] = (uint8_t)(0x80 + i);
	fv__ah_fill(&ah, (const struct mlx5_wqe_av *)(const void *)av);	/* as fv_ah_init */
	return ah;
}

/* ---- bytes composed from the formats document ---- */

Test(wr_wqe, rc_rdma_write_one_sge_model)
{
	struct memqp m;
	struct xring x;
	struct xwqe w;
	struct fv_qp *qp = &m.qp;

	open_qp(&m, &(struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = QPN, .sq_wqe_cnt = 64, .bf_size = 256,
					  .max_inline = 60, .max_send_sge = 1, .start_pi = 0x1234 });
	xr_init(&x, m.sq, m.sq_bytes);
	fv_wr_start(qp);
	qp->wr_id = 77;
	qp->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE | IBV_SEND_IP_CSUM;
	fv_wr_rdma_write(qp, RKEY, RADDR);
	fv_wr_set_sge(qp, LKEY, 0x4000, 100);
	cr_assert_eq(fv_wr_complete(qp), 0);

	xw_ctrl(&w, &x, 0x1234, X_OP_RDMA_WRITE, QPN, X_FM_CQ_UPDATE | X_FM_SOLICITED, NULL);
	xw_raddr(&w, RADDR, RKEY);
	xw_data(&w, 100, LKEY, 0x4000);
	cr_assert_eq(xw_end(&w), 1);
	const char *d = x_diff(m.sq, x.b, m.sq_bytes);
	cr_assert_null(d, "ring: %s", d);
	cr_assert_eq(memqp_sq_dbr(&m), 0x1235);
	cr_assert_eq(m.qp.sq.wr_id[0x1234 & 63].v, 77);
	/* a lone WQE of ds 3: BlueFlame copy of its block to the first half */
	cr_assert_arr_eq(m.bf, memqp_block(&m, 0x1234), 64);
	xr_free(&x);
	memqp_free(&m);
}

/* UD: the destination set after the payload goes over the WQE's placeholder units. */
Test(wr_wqe, ud_send_inline_dest_after_model)
{
	struct memqp m;
	struct xring x;
	struct xwqe w;
	struct fv_ud *ud = (struct fv_ud *)&m.qp;
	struct fv_ah ah = test_ah();

	open_qp(&m, &(struct memqp_cfg){ .qpt = FV_QPT_UD, .qpn = QPN, .sq_wqe_cnt = 8, .bf_size = 256,
					  .max_inline = 76, .max_send_sge = 1, .start_pi = 7 });
	xr_init(&x, m.sq, m.sq_bytes);
	fv_wr_start(ud);
	ud->qp.wr_id = 5;
	ud->qp.wr_flags = 0;
	fv_wr_send_imm(ud, IMM);
	fv_wr_set_inline_data(ud, pat, 40);
	fv_wr_set_ud_addr(ud, &ah, RQPN, QKEY);
	cr_assert_eq(fv_wr_complete(ud), 0);

	uint8_t imm[4] = { 0xde, 0xad, 0xbe, 0xef };

	xw_ctrl(&w, &x, 7, X_OP_SEND_IMM, QPN, 0, imm);
	xw_av(&w, (const uint8_t *)&ah.av, RQPN, QKEY);
	xw_inline(&w, pat, 40);		/* from the last slot on: wraps to block 0 */
	cr_assert_eq(xw_end(&w), 2);
	const char *d = x_diff(m.sq, x.b, m.sq_bytes);
	cr_assert_null(d, "ring: %s", d);
	cr_assert_eq(memqp_sq_dbr(&m), 9);
	/* two blocks fit a 256-byte half: copied as they lie, the second from block 0 */
	cr_assert_arr_eq(m.bf, memqp_block(&m, 7), 64);
	cr_assert_arr_eq(m.bf + 64, memqp_block(&m, 8), 64);
	xr_free(&x);
	memqp_free(&m);
}

/* XRC fetch-and-add: ibv_wr_set_sge keeps the SGE's length (ibv_post_send writes 8). */
Test(wr_wqe, xrc_fetch_add_sge_length_model)
{
	struct memqp m;
	struct xring x;
	struct xwqe w;
	struct fv_xrc *h = (struct fv_xrc *)&m.qp;

	open_qp(&m, &(struct memqp_cfg){ .qpt = FV_QPT_XRC, .qpn = QPN, .sq_wqe_cnt = 16, .bf_size = 0,
					  .max_inline = 0, .max_send_sge = 2, .start_pi = 3 });
	xr_init(&x, m.sq, m.sq_bytes);
	fv_wr_start(h);
	h->qp.wr_id = 1;
	h->qp.wr_flags = IBV_SEND_FENCE;
	fv_wr_set_xrc_srqn(h, 0xdead);	/* no WQE open: EINVAL */
	cr_assert_eq(fv_wr_complete(h), EINVAL);
	fv_wr_start(h);
	fv_wr_atomic_fetch_add(h, RKEY, RADDR, ADD);
	fv_wr_set_xrc_srqn(h, SRQN);
	fv_wr_set_sge_list(h, 1, &(struct ibv_sge){ .addr = 0x8000, .length = 16, .lkey = LKEY });
	cr_assert_eq(fv_wr_complete(h), 0);

	xw_ctrl(&w, &x, 3, X_OP_ATOMIC_FA, QPN, X_FM_FENCE, NULL);
	xw_xrc(&w, SRQN);
	xw_raddr(&w, RADDR, RKEY);
	xw_atomic(&w, ADD, 0);
	xw_data(&w, 16, LKEY, 0x8000);
	cr_assert_eq(xw_end(&w), 2);
	const char *d = x_diff(m.sq, x.b, m.sq_bytes);
	cr_assert_null(d, "ring: %s", d);
	cr_assert_eq(memqp_sq_dbr(&m), 5);
	/* doorbell only: the ctrl's first 8 bytes */
	cr_assert_arr_eq(m.bf, memqp_block(&m, 3), 8);
	xr_free(&x);
	memqp_free(&m);
}

/* ---- the matrix: fv_wr_* against the typed builders ---- */

enum op { SEND, SEND_IMM, SEND_INV, WRITE, WRITE_IMM, READ, CAS, FADD, N_OPS };
enum form { ONE_SGE, SGL, INLINE, INLINE_LIST, N_FORMS };

/* ibv_wr_post(3)'s table, restated: which QP types have which builder. */
static bool legal(enum fv_qpt t, enum op o)
{
	switch (o) {
	case SEND: case SEND_IMM: return true;
	case SEND_INV: case WRITE: case WRITE_IMM: return t != FV_QPT_UD;
	default: return t == FV_QPT_RC || t == FV_QPT_XRC;
	}
}

static bool sgl_only(enum op o)
{
	return o == READ || o == CAS || o == FADD;
}

struct wreq {
	enum op op;
	enum form form;
	unsigned wr_flags;	/* IBV_SEND_* */
	uint64_t wr_id;
	bool dest_after;	/* UD/XRC: the destination setter after the payload */
};

static const struct ibv_sge *sgl3(bool atomic)
{
	static struct ibv_sge s[3];

	s[0] = (struct ibv_sge){ .addr = (uintptr_t)pat, .length = atomic ? 8 : 24, .lkey = LKEY };
	s[1] = (struct ibv_sge){ .addr = (uintptr_t)pat + 100, .length = 0, .lkey = LKEY + 1 };
	s[2] = (struct ibv_sge){ .addr = (uintptr_t)pat + 200, .length = 30, .lkey = LKEY + 2 };
	return s;
}

/* One request through fv_wr_* on a struct fv_qp * (no start, no complete). */
static void wr_one(struct fv_qp *qp, const struct fv_ah *ah, const struct wreq *r)
{
	bool atomic = r->op == CAS || r->op == FADD;
	int nsge = atomic ? 1 : 3;
	const struct ibv_data_buf bufs[2] = { { pat, 10 }, { pat + 10, 37 } };

	qp->wr_id = r->wr_id;
	qp->wr_flags = r->wr_flags;
	switch (r->op) {
	case SEND:      fv_wr_send(qp); break;
	case SEND_IMM:  fv_wr_send_imm(qp, IMM); break;
	case SEND_INV:  fv_wr_send_inv(qp, INV_RKEY); break;
	case WRITE:     fv_wr_rdma_write(qp, RKEY, RADDR); break;
	case WRITE_IMM: fv_wr_rdma_write_imm(qp, RKEY, RADDR, IMM); break;
	case READ:      fv_wr_rdma_read(qp, RKEY, RADDR); break;
	case CAS:       fv_wr_atomic_cmp_swp(qp, RKEY, RADDR, COMPARE, SWAP); break;
	case FADD:      fv_wr_atomic_fetch_add(qp, RKEY, RADDR, ADD); break;
	default:        cr_assert_fail();
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pass == (int)r->dest_after) {
			if (qp->qpt == FV_QPT_UD)
				fv_wr_set_ud_addr(qp, ah, RQPN, QKEY);
			if (qp->qpt == FV_QPT_XRC)
				fv_wr_set_xrc_srqn(qp, SRQN);
			continue;
		}
		switch (r->form) {
		case ONE_SGE:     fv_wr_set_sge(qp, LKEY, (uintptr_t)pat + 8, atomic ? 8 : 33); break;
		case SGL:         fv_wr_set_sge_list(qp, (size_t)nsge, sgl3(atomic)); break;
		case INLINE:      fv_wr_set_inline_data(qp, pat, 47); break;
		case INLINE_LIST: fv_wr_set_inline_data_list(qp, 2, bufs); break;
		default:          cr_assert_fail();
		}
	}
}

/* An ibv_send_wr and its SGEs. */
struct wr_slot {
	struct ibv_send_wr w;
	struct ibv_sge one;
};

/*
 * The same request as an ibv_send_wr for fv_post_send, whose bytes send_wqe.c checks against
 * the model; an inline list goes as one inline SGE of the same bytes.
 */
static void fill_wr(struct wr_slot *s, struct fv_qp *qp, const struct fv_ah *ah, const struct wreq *r)
{
	static const enum ibv_wr_opcode code[N_OPS] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_INV, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	bool atomic = r->op == CAS || r->op == FADD;
	struct ibv_send_wr w = { .wr_id = r->wr_id, .opcode = code[r->op], .imm_data = IMM,
				 .send_flags = r->wr_flags & ~(unsigned)(IBV_SEND_INLINE | IBV_SEND_IP_CSUM) };

	if (r->form == ONE_SGE) {
		s->one = (struct ibv_sge){ .addr = (uintptr_t)pat + 8, .length = atomic ? 8 : 33, .lkey = LKEY };
		w.sg_list = &s->one;
		w.num_sge = 1;
	} else if (r->form == SGL) {
		w.sg_list = (struct ibv_sge *)sgl3(atomic);
		w.num_sge = atomic ? 1 : 3;
	} else {
		s->one = (struct ibv_sge){ .addr = (uintptr_t)pat, .length = 47 };
		w.sg_list = &s->one;
		w.num_sge = 1;
		w.send_flags |= IBV_SEND_INLINE;
	}
	if (r->op == SEND_INV)
		w.invalidate_rkey = INV_RKEY;
	if (atomic) {
		w.wr.atomic.remote_addr = RADDR;
		w.wr.atomic.rkey = RKEY;
		w.wr.atomic.compare_add = r->op == CAS ? COMPARE : ADD;
		w.wr.atomic.swap = SWAP;
	} else if (r->op == WRITE || r->op == WRITE_IMM || r->op == READ) {
		w.wr.rdma.remote_addr = RADDR;
		w.wr.rdma.rkey = RKEY;
	}
	if (qp->qpt == FV_QPT_UD) {
		qp->ah_cache_key = (struct ibv_ah *)ah;	/* a stand-in ibv_ah, as send_wqe.c */
		qp->ah_cache_av = &ah->av;
		w.wr.ud.ah = (struct ibv_ah *)ah;
		w.wr.ud.remote_qpn = RQPN;
		w.wr.ud.remote_qkey = QKEY;
	}
	if (qp->qpt == FV_QPT_XRC)
		w.qp_type.xrc.remote_srqn = SRQN;
	s->w = w;
}

static void same_qps(const struct memqp *a, const struct memqp *b, const char *what)
{
	const char *d = x_diff(a->sq, b->sq, a->sq_bytes);

	cr_assert_null(d, "%s: ring: %s", what, d);
	cr_assert_eq(memqp_sq_dbr(a), memqp_sq_dbr(b), "%s: doorbell record", what);
	d = x_diff(a->bf, b->bf, 512);
	cr_assert_null(d, "%s: BlueFlame register: %s", what, d);
	cr_assert_eq(a->qp.sq.pi, b->qp.sq.pi, "%s: producer", what);
}

static const char *const qpt_name[] = { "RC", "UC", "UD", "XRC" };

/*
 * Every legal (QP type, builder, payload setter) as a lone WQE and as a batch of three, over
 * a small ring so the batches wrap; fv_wr_* on a, fv_post_send on b, one ring each time.
 */
Test(wr_wqe, matrix_against_post_send)
{
	unsigned n = 0;

	for (int t = 0; t < FV_QPT_RAW; t++) {	/* raw Ethernet: tests/unit/wr_raw.c */
		struct memqp a, b;
		struct memqp_cfg c = cfg((enum fv_qpt)t, 16);
		struct fv_ah ah = test_ah();

		open_qp(&a, &c);
		open_qp(&b, &c);
		for (int o = 0; o < N_OPS; o++) {
			if (!legal((enum fv_qpt)t, (enum op)o))
				continue;
			for (int f = 0; f < N_FORMS; f++) {
				if (sgl_only((enum op)o) && f >= INLINE)
					continue;
				for (int batch = 1; batch <= 3; batch += 2) {
					struct wr_slot ws[3];
					struct ibv_send_wr *bad;
					char what[96];

					fv_wr_start(&a.qp);
					for (int i = 0; i < batch; i++) {
						struct wreq r = { (enum op)o, (enum form)f,
								  (i == batch - 1 ? IBV_SEND_SIGNALED : 0) |
								  (i == 1 ? IBV_SEND_FENCE | IBV_SEND_SOLICITED : 0),
								  0x100u + n, i == 1 };

						wr_one(&a.qp, &ah, &r);
						fill_wr(&ws[i], &b.qp, &ah, &r);
						ws[i].w.next = NULL;
						if (i)
							ws[i - 1].w.next = &ws[i].w;
					}
					cr_assert_eq(fv_wr_complete(&a.qp), 0);
					cr_assert_eq(fv_post_send(&b.qp, &ws[0].w, &bad), 0);
					snprintf(what, sizeof(what), "%s op %d form %d batch %d", qpt_name[t], o, f, batch);
					same_qps(&a, &b, what);
					/* the completions to come free the ring on both */
					a.qp.sq.ci = a.qp.sq.pi;
					b.qp.sq.ci = b.qp.sq.pi;
					n++;
				}
			}
		}
		memqp_free(&a);
		memqp_free(&b);
	}
	/* RC, XRC: 5 builders x 4 setters + 3 x 2; UC 5 x 4; UD 2 x 4; each lone and in three */
	cr_assert_eq(n, 2 * (26 + 20 + 8 + 26), "cases run: %u", n);
}

/* ---- batches that fail: nothing posted, nothing kept ---- */

/* One good WQE (signaled, so its slot's meta is written) on qp: an RDMA WRITE, or a UD SEND. */
static void good_wqe(struct fv_qp *qp, const struct fv_ah *ah, uint64_t wr_id)
{
	qp->wr_id = wr_id;
	qp->wr_flags = IBV_SEND_SIGNALED;
	if (qp->qpt == FV_QPT_UD) {
		fv_wr_send(qp);
		fv_wr_set_ud_addr(qp, ah, RQPN, QKEY);
	} else {
		fv_wr_rdma_write(qp, RKEY, RADDR);
		if (qp->qpt == FV_QPT_XRC)
			fv_wr_set_xrc_srqn(qp, SRQN);
	}
	fv_wr_set_sge(qp, LKEY, 0x1000, 64);
}

struct bad_case {
	const char *name;
	enum fv_qpt qpt;
	int err;
	void (*step)(struct fv_qp *qp, const struct fv_ah *ah);
};

static void too_many_sges(struct fv_qp *qp, const struct fv_ah *ah)
{
	struct ibv_sge s[5] = { { 0 } };

	(void)ah;
	fv_wr_send(qp);
	fv_wr_set_sge_list(qp, 5, s);
}

static void inline_too_long(struct fv_qp *qp, const struct fv_ah *ah)
{
	(void)ah;
	fv_wr_send(qp);
	fv_wr_set_inline_data(qp, pat, 221);
}

static void inline_list_too_long(struct fv_qp *qp, const struct fv_ah *ah)
{
	const struct ibv_data_buf b[3] = { { pat, 100 }, { pat, 100 }, { pat, 21 } };

	(void)ah;
	fv_wr_rdma_write_imm(qp, RKEY, RADDR, IMM);
	fv_wr_set_inline_data_list(qp, 3, b);
}

static void huge_inline_list(struct fv_qp *qp, const struct fv_ah *ah)
{
	const struct ibv_data_buf b[2] = { { pat, 10 }, { pat, SIZE_MAX - 5 } };	/* sums past 2^64 */

	(void)ah;
	fv_wr_send(qp);
	fv_wr_set_inline_data_list(qp, 2, b);
}

static void builder_after_open(struct fv_qp *qp, const struct fv_ah *ah)
{
	(void)ah;
	fv_wr_send(qp);
	fv_wr_send(qp);
	fv_wr_set_sge(qp, LKEY, 0x1000, 8);
}

static void open_at_complete(struct fv_qp *qp, const struct fv_ah *ah)
{
	(void)ah;
	fv_wr_rdma_read(qp, RKEY, RADDR);
}

static void second_payload(struct fv_qp *qp, const struct fv_ah *ah)
{
	(void)ah;
	fv_wr_send(qp);
	fv_wr_set_sge(qp, LKEY, 0x1000, 8);
	fv_wr_set_sge(qp, LKEY, 0x1000, 8);
}

static void ud_missing_dest(struct fv_qp *qp, const struct fv_ah *ah)
{
	(void)ah;
	fv_wr_send(qp);
	fv_wr_set_sge(qp, LKEY, 0x1000, 8);
}

static void ud_rdma_write(struct fv_qp *qp, const struct fv_ah *ah)
{
	fv_wr_rdma_write(qp, RKEY, RADDR);	/* no RDMA on UD: refused at run time */
	fv_wr_set_ud_addr(qp, ah, RQPN, QKEY);
	fv_wr_set_sge(qp, LKEY, 0x1000, 8);
}

static void rc_ud_addr(struct fv_qp *qp, const struct fv_ah *ah)
{
	fv_wr_send(qp);
	fv_wr_set_ud_addr(qp, ah, RQPN, QKEY);
	fv_wr_set_sge(qp, LKEY, 0x1000, 8);
}

static void rc_xrc_srqn(struct fv_qp *qp, const struct fv_ah *ah)
{
	(void)ah;
	fv_wr_send(qp);
	fv_wr_set_xrc_srqn(qp, SRQN);
	fv_wr_set_sge(qp, LKEY, 0x1000, 8);
}

/*
 * A destination setter refused on a struct fv_qp * (fv__wr_dest_refused): the batch's first
 * error stays, and the payload setter after it reads the zero AV placeholder, not the AV
 * pointer the WQE had before (poisoned here: read, it faults).
 */
static void inline_too_long_then_ud_addr_on_rc(struct fv_qp *qp, const struct fv_ah *ah)
{
	inline_too_long(qp, ah);
	rc_ud_addr(qp, ah);
}

static void ud_dc_addr(struct fv_qp *qp, const struct fv_ah *ah)
{
	qp->wr.to.av = (const struct mlx5_wqe_av *)(uintptr_t)8;
	fv_wr_send(qp);
	fv_wr_set_dc_addr(qp, ah, RQPN, 0x1234);
	fv_wr_set_sge(qp, LKEY, 0x1000, 8);
}

static void ring_full(struct fv_qp *qp, const struct fv_ah *ah)
{
	for (int i = 0; i < 16; i++)	/* with the two good ones: 18 blocks in a ring of 16 */
		good_wqe(qp, ah, 0x500u + (unsigned)i);
}

/* Memory windows: a type 2 window and an MR of plain memory (the bytes need only their keys). */
static struct ibv_mr mw_mr = { .lkey = LKEY };
static struct ibv_mw mw2 = { .rkey = 0x4200, .type = IBV_MW_TYPE_2 };

static struct ibv_mw_bind_info mw_bind(uint64_t length)
{
	return (struct ibv_mw_bind_info){ .mr = &mw_mr, .addr = 0x1000, .length = length,
					  .mw_access_flags = IBV_ACCESS_REMOTE_READ };
}

static void bind_over_2gib(struct fv_qp *qp, const struct fv_ah *ah)
{
	struct ibv_mw_bind_info b = mw_bind((1ull << 31) + 1);

	(void)ah;
	fv_wr_bind_mw(qp, &mw2, 0x4201, &b);
}

static void bind_then_inline_too_long(struct fv_qp *qp, const struct fv_ah *ah)
{
	struct ibv_mw_bind_info b = mw_bind(1ull << 31);	/* 2 GiB: still one KLM */

	fv_wr_bind_mw(qp, &mw2, 0x4201, &b);		/* owes the next WQE a fence ... */
	fv_wr_local_inv(qp, 0x4201);
	inline_too_long(qp, ah);			/* ... which the rollback takes back */
}

static void ud_bind_mw(struct fv_qp *qp, const struct fv_ah *ah)
{
	struct ibv_mw_bind_info b = mw_bind(64);

	(void)ah;
	fv_wr_bind_mw(qp, &mw2, 0x4201, &b);	/* no memory windows on UD */
}

static void ud_local_inv(struct fv_qp *qp, const struct fv_ah *ah)
{
	(void)ah;
	fv_wr_local_inv(qp, 0x4201);
}

static void bind_while_open(struct fv_qp *qp, const struct fv_ah *ah)
{
	(void)ah;
	fv_wr_send(qp);
	fv_wr_local_inv(qp, 0x4201);
	fv_wr_set_sge(qp, LKEY, 0x1000, 8);
}

static void setter_after_bind(struct fv_qp *qp, const struct fv_ah *ah)
{
	struct ibv_mw_bind_info b = mw_bind(64);

	(void)ah;
	fv_wr_bind_mw(qp, &mw2, 0x4201, &b);	/* a whole WQE: no payload setter */
	fv_wr_set_sge(qp, LKEY, 0x1000, 8);
}

static const struct bad_case bad_cases[] = {
	{ "bind over 2 GiB", FV_QPT_RC, EOPNOTSUPP, bind_over_2gib },
	{ "bind, then inline too long", FV_QPT_XRC, ENOMEM, bind_then_inline_too_long },
	{ "bind on UD", FV_QPT_UD, EINVAL, ud_bind_mw },
	{ "local invalidate on UD", FV_QPT_UD, EINVAL, ud_local_inv },
	{ "local invalidate while a WQE is open", FV_QPT_UC, EINVAL, bind_while_open },
	{ "setter after a bind", FV_QPT_RC, EINVAL, setter_after_bind },
	{ "too many SGEs", FV_QPT_RC, ENOMEM, too_many_sges },
	{ "inline too long", FV_QPT_RC, ENOMEM, inline_too_long },
	{ "inline list too long", FV_QPT_UC, ENOMEM, inline_list_too_long },
	{ "inline list past 2^64", FV_QPT_UD, ENOMEM, huge_inline_list },
	{ "builder while a WQE is open", FV_QPT_RC, EINVAL, builder_after_open },
	{ "WQE open at complete", FV_QPT_XRC, EINVAL, open_at_complete },
	{ "second payload", FV_QPT_RC, EINVAL, second_payload },
	{ "UD without destination", FV_QPT_UD, EINVAL, ud_missing_dest },
	{ "RDMA WRITE on UD", FV_QPT_UD, EINVAL, ud_rdma_write },
	{ "UD address on RC", FV_QPT_RC, EINVAL, rc_ud_addr },
	{ "XRC SRQ on RC", FV_QPT_RC, EINVAL, rc_xrc_srqn },
	{ "inline too long, then UD address on RC", FV_QPT_RC, ENOMEM, inline_too_long_then_ud_addr_on_rc },
	{ "DC address on UD", FV_QPT_UD, EINVAL, ud_dc_addr },
	{ "ring full", FV_QPT_RC, ENOMEM, ring_full },
};

/*
 * good, bad step, good: fv_wr_complete returns the step's errno, and the ring's counters,
 * doorbell record and BlueFlame register are as before (the ring's free space aside); the
 * meta of the slots the batch took is stale again. A good batch then gives exactly what it
 * gives on a twin that never saw the failed one. The same for fv_wr_abort.
 */
Test(wr_wqe, failed_or_aborted_batch_leaves_nothing)
{
	for (size_t k = 0; k < sizeof(bad_cases) / sizeof(bad_cases[0]) * 2; k++) {
		const struct bad_case *bc = &bad_cases[k / 2];
		bool abort = k & 1;
		struct memqp a, b;
		struct memqp_cfg c = cfg(bc->qpt, 16);
		struct fv_ah ah = test_ah();
		uint8_t bf[512];

		open_qp(&a, &c);
		open_qp(&b, &c);
		for (int pre = 0; pre < 2; pre++) {	/* both: one batch, so the BF half moves on */
			struct memqp *m = pre ? &b : &a;

			fv_wr_start(&m->qp);
			good_wqe(&m->qp, &ah, 1);
			cr_assert_eq(fv_wr_complete(&m->qp), 0, "%s: first batch", bc->name);
		}
		struct fv__sq before = a.qp.sq;

		memcpy(bf, a.bf, sizeof(bf));
		fv_wr_start(&a.qp);
		good_wqe(&a.qp, &ah, 2);
		bc->step(&a.qp, &ah);
		good_wqe(&a.qp, &ah, 3);
		if (abort)
			fv_wr_abort(&a.qp);
		else
			cr_assert_eq(fv_wr_complete(&a.qp), bc->err, "%s: errno", bc->name);
		cr_assert_eq(memqp_sq_dbr(&a), before.pi & 0xffff, "%s: doorbell record", bc->name);
		cr_assert_arr_eq(a.bf, bf, sizeof(bf), "%s: BlueFlame register written", bc->name);
		cr_assert(a.qp.sq.pi == before.pi && a.qp.sq.rung_pi == before.rung_pi &&
			  a.qp.sq.last_pi == before.last_pi && a.qp.sq.sig_pi == before.sig_pi &&
			  a.qp.sq.lim == before.lim && a.qp.sq.fence_cache == before.fence_cache,
			  "%s: counters not rolled back", bc->name);
		for (uint32_t i = 0; i < 16 - (before.pi - before.ci); i++) {	/* the free slots */
			const struct fv__sq_meta *mt = &a.qp.sq.meta[(before.pi + i) & 15];

			cr_assert(mt->end - a.qp.sq.ci - 1 > a.qp.sq.mask,
				  "%s: slot %u keeps the failed batch's end", bc->name, i);
		}
		for (int s = 0; s < 2; s++) {
			struct memqp *m = s ? &b : &a;

			m->qp.sq.ci = m->qp.sq.pi;
			fv_wr_start(&m->qp);
			good_wqe(&m->qp, &ah, 4);
			cr_assert_eq(fv_wr_complete(&m->qp), 0);
		}
		cr_assert_arr_eq(memqp_block(&a, before.pi), memqp_block(&b, before.pi), 64 * (bc->qpt == FV_QPT_UD ? 2 : 1),
				 "%s: next WQE", bc->name);
		cr_assert_eq(memqp_sq_dbr(&a), memqp_sq_dbr(&b), "%s", bc->name);
		cr_assert_arr_eq(a.bf, b.bf, 512, "%s: next doorbell", bc->name);
		cr_assert_eq(a.qp.sq.wr_id[before.pi & 15].v, 4);
		memqp_free(&a);
		memqp_free(&b);
	}
}

/* ibv_wr_set_sge_list checks the QP's max_send_sge, ibv_wr_set_sge does not (as libmlx5). */
Test(wr_wqe, sge_checks_as_libmlx5)
{
	struct memqp m;
	struct memqp_cfg c = cfg(FV_QPT_RC, 16);
	struct ibv_sge s = { .addr = 0x1000, .length = 8, .lkey = LKEY };

	c.max_send_sge = 0;
	open_qp(&m, &c);
	fv_wr_start(&m.qp);
	fv_wr_send(&m.qp);
	fv_wr_set_sge(&m.qp, LKEY, 0x1000, 8);
	cr_assert_eq(fv_wr_complete(&m.qp), 0);
	cr_assert_eq(memqp_block(&m, 0xfff0)[7] & 0x3f, 2, "ds");
	fv_wr_start(&m.qp);
	fv_wr_send(&m.qp);
	fv_wr_set_sge_list(&m.qp, 1, &s);
	cr_assert_eq(fv_wr_complete(&m.qp), ENOMEM);
	cr_assert_eq(memqp_sq_dbr(&m), 0xfff1);
	memqp_free(&m);
}

/* A lone WQE of ds 1 (a SEND without data) rings with 8 bytes, a batch with the last WQE's. */
Test(wr_wqe, doorbells)
{
	struct memqp m;
	struct memqp_cfg c = cfg(FV_QPT_RC, 16);

	open_qp(&m, &c);
	memset(m.bf, 0, 512);
	fv_wr_start(&m.qp);
	fv_wr_send(&m.qp);
	fv_wr_set_inline_data(&m.qp, pat, 0);
	cr_assert_eq(fv_wr_complete(&m.qp), 0);
	cr_assert_eq(memqp_block(&m, 0xfff0)[7] & 0x3f, 1, "ds");
	cr_assert_arr_eq(m.bf, memqp_block(&m, 0xfff0), 8);
	cr_assert(m.bf[8] == 0 && m.bf[63] == 0, "more than the doorbell written");
	fv_wr_start(&m.qp);
	for (int i = 0; i < 2; i++) {
		fv_wr_rdma_write(&m.qp, RKEY, RADDR);
		fv_wr_set_sge(&m.qp, LKEY, 0x1000, 8);
	}
	cr_assert_eq(fv_wr_complete(&m.qp), 0);
	cr_assert_eq(memqp_sq_dbr(&m), 0xfff3);
	cr_assert_arr_eq(m.bf + 256, memqp_block(&m, 0xfff2), 8, "second half: the last WQE's ctrl");
	cr_assert(m.bf[256 + 8] == 0, "a batch copied");
	/* an empty batch rings nothing */
	memset(m.bf, 0, 512);
	fv_wr_start(&m.qp);
	cr_assert_eq(fv_wr_complete(&m.qp), 0);
	for (int i = 0; i < 512; i++)
		cr_assert_eq(m.bf[i], 0);
	memqp_free(&m);
}

/* Typed builders and fv_post_send between batches, and a batch after them, share one ring. */
Test(wr_wqe, interleaved_with_typed_and_post_send)
{
	struct memqp a, b;
	struct memqp_cfg c = cfg(FV_QPT_RC, 32);
	struct ibv_sge s = { .addr = 0x1000, .length = 8, .lkey = LKEY };
	struct fv_rc *ra = (struct fv_rc *)&a.qp, *rb = (struct fv_rc *)&b.qp;
	struct ibv_send_wr w = { .wr_id = 9, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;

	open_qp(&a, &c);
	open_qp(&b, &c);
	for (int round = 0; round < 3; round++) {
		cr_assert_eq(fv_write(ra, 1, 0, &s, RADDR, RKEY), 0);
		fv_ring(ra);
		cr_assert_eq(fv_post_send(&a.qp, &w, &bad), 0);
		fv_wr_start(ra);
		ra->qp.wr_id = 2;
		ra->qp.wr_flags = IBV_SEND_SIGNALED;
		fv_wr_rdma_write(ra, RKEY, RADDR);
		fv_wr_set_sge(ra, LKEY, 0x1000, 8);
		cr_assert_eq(fv_wr_complete(ra), 0);

		cr_assert_eq(fv_write(rb, 1, 0, &s, RADDR, RKEY), 0);
		fv_ring(rb);
		cr_assert_eq(fv_send(rb, 9, 0, &s), 0);
		fv_ring(rb);
		cr_assert_eq(fv_write(rb, 2, FV_SIGNALED, &s, RADDR, RKEY), 0);
		fv_ring(rb);
		same_qps(&a, &b, "interleaved");
	}
	memqp_free(&a);
	memqp_free(&b);
}

/*
 * fv_wr_bind_mw / fv_wr_local_inv against the typed builders (vectors-mw.c checks those and
 * fv_wr_* against libmlx5 on RC and UC): on RC, UC and XRC, from every slot of a small ring
 * (a bind spans three blocks, so some cross the ring end), each followed by a WRITE that
 * takes the initiator fence; fv_wr_* on a (struct fv_qp * and typed handle alternately),
 * fv_bind_mw / fv_local_inv on b. ibv_wr_bind_mw builds a type 2 bind whatever the window's
 * type (libmlx5 44), so a type 1 window gives the typed builder's bytes for type 2.
 */
Test(wr_wqe, mw_builders_against_typed)
{
	static const enum fv_qpt types[] = { FV_QPT_RC, FV_QPT_UC, FV_QPT_XRC };
	struct ibv_mw mw1 = { .rkey = 0x5300, .type = IBV_MW_TYPE_1 }, mw2t = mw2;

	for (size_t t = 0; t < 3; t++) {
		struct memqp a, b;
		struct memqp_cfg c = cfg(types[t], 16);
		struct ibv_sge s = { .addr = 0x1000, .length = 8, .lkey = LKEY };

		open_qp(&a, &c);
		open_qp(&b, &c);
		for (unsigned i = 0; i < 40; i++) {
			struct ibv_mw_bind_info bi = mw_bind(i % 5 ? 0x100u * i : 0);	/* also unbind */
			unsigned wf = (i & 1 ? IBV_SEND_SIGNALED : 0) | (i % 3 == 0 ? IBV_SEND_FENCE : 0) |
				      (i % 4 == 1 ? IBV_SEND_SOLICITED : 0);
			unsigned ff = (i & 1 ? FV_SIGNALED : 0) | (i % 3 == 0 ? FV_FENCE : 0) |
				      (i % 4 == 1 ? FV_SOLICITED : 0);
			struct ibv_mw *mw = i & 2 ? &mw1 : &mw2t;
			uint32_t key = (mw->rkey & ~0xffu) | (i & 0xff);
			struct fv_xrc *xa = (struct fv_xrc *)&a.qp;

			uint32_t at = a.qp.sq.pi;

			a.qp.sq.ci = a.qp.sq.pi;	/* the device completed everything */
			b.qp.sq.ci = b.qp.sq.pi;
			fv_wr_start(&a.qp);
			a.qp.wr_id = i;
			a.qp.wr_flags = wf;
			if (i % 7 == 3)
				fv_wr_local_inv(&a.qp, key);
			else if (types[t] == FV_QPT_XRC && (i & 4))
				fv_wr_bind_mw(xa, mw, key, &bi);
			else
				fv_wr_bind_mw(&a.qp, mw, key, &bi);
			a.qp.wr_flags = IBV_SEND_SIGNALED;
			fv_wr_rdma_write(&a.qp, RKEY, RADDR);
			if (types[t] == FV_QPT_XRC)
				fv_wr_set_xrc_srqn(&a.qp, SRQN);
			fv_wr_set_sge(&a.qp, LKEY, 0x1000, 8);
			cr_assert_eq(fv_wr_complete(&a.qp), 0, "%s %u", qpt_name[types[t]], i);

			struct ibv_mw as2 = *mw;
			struct fv_rc *rb = (struct fv_rc *)&b.qp;	/* RC and UC: the same bytes */
			struct fv_xrc *xb = (struct fv_xrc *)&b.qp;
			int r;

			as2.type = IBV_MW_TYPE_2;
			if (types[t] == FV_QPT_XRC)
				r = i % 7 == 3 ? fv_local_inv(xb, i, ff, key) : fv_bind_mw(xb, i, ff, &as2, key, &bi);
			else
				r = i % 7 == 3 ? fv_local_inv(rb, i, ff, key) : fv_bind_mw(rb, i, ff, &as2, key, &bi);
			cr_assert_eq(r, 0);
			if (types[t] == FV_QPT_XRC)
				r = fv_write(xb, i, FV_SIGNALED, &s, RADDR, RKEY, SRQN);
			else
				r = fv_write(rb, i, FV_SIGNALED, &s, RADDR, RKEY);
			cr_assert_eq(r, 0);
			fv_ring((struct fv_rc *)&b.qp);
			same_qps(&a, &b, qpt_name[types[t]]);
			cr_assert_eq(a.qp.sq.wr_id[at & 15].v, i, "the window WQE's wr_id");
		}
		memqp_free(&a);
		memqp_free(&b);
	}
}
