/*
 * Byte-exact send WQEs (docs/design.md §3.1, §3.2, §3.5). Every expectation is composed field by
 * field from docs/formats.md with tests/lib/wqe-expect.h — never with fastverbs' own
 * segment writers — into a model of the whole ring, and the real ring must equal it byte
 * for byte: fields, segment order, ds, untouched pad bytes and every block the WQE does not
 * own. Each request goes through the typed builders and through fv_post_send on twin QPs;
 * both must give the same bytes, doorbell record and BlueFlame write.
 *
 * The rings are filled with a non-zero pattern first, so a field that is never written (or
 * a pad byte that is written) shows up as a difference.
 */
#include <criterion/criterion.h>
#include <fastverbs/compat/post_send.h>
#include "memqp.h"
#include "wqe-expect.h"
#include "field-values.h"

static const uint8_t IMM_BYTES[4] = { 0xde, 0xad, 0xbe, 0xef };	/* copied verbatim (§2) */
static uint8_t pat[8192];	/* payload source: SGE addresses point here */

/* The immediate as the API takes it: already big-endian, i.e. the raw wire bytes. */
static __be32 imm_val(void)
{
	__be32 v;

	memcpy(&v, IMM_BYTES, 4);
	return v;
}

/* SGE number i: a distinct address and lkey, length len. */
static struct ibv_sge sge(unsigned i, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)(pat + 256 * i), .length = len, .lkey = LKEY + i };
}

static void fill_pattern(void)
{
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 7 + 3);
}

/* Non-zero filler, different in every byte of a block, so untouched bytes are checkable. */
static void poison(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed ^ (i * 13) ^ (i >> 8));
}

/* ---- requests: one description, posted through either path ---- */

enum op { SEND, SEND_IMM, SEND_INV, WRITE, WRITE_IMM, READ, CAS, FADD, NOP, N_OPS };
enum form { ONE_SGE, SGL, INLINE };

static const char *const op_name[N_OPS] = {
	"send", "send_imm", "send_inv", "write", "write_imm", "read", "cas", "fadd", "nop",
};
/* §2.2 opcodes, restated. */
static const uint8_t op_code[N_OPS] = {
	X_OP_SEND, X_OP_SEND_IMM, X_OP_SEND_INVAL, X_OP_RDMA_WRITE, X_OP_RDMA_WRITE_IMM,
	X_OP_RDMA_READ, X_OP_ATOMIC_CS, X_OP_ATOMIC_FA, X_OP_NOP,
};
static const enum ibv_wr_opcode op_ibv[N_OPS] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_INV, IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
	IBV_WR_ATOMIC_FETCH_AND_ADD, 0 /* NOP: typed only */,
};
/* ops.def FV__ALLOW, restated: the pairs ibv_post_send(3) allows. */
static const bool allowed[FV__QPT_COUNT][N_OPS] = {
	[FV_QPT_RC]  = { 1, 1, 1, 1, 1, 1, 1, 1, 1 },
	[FV_QPT_UC]  = { 1, 1, 1, 1, 1, 0, 0, 0, 1 },
	[FV_QPT_UD]  = { 1, 1, 0, 0, 0, 0, 0, 0, 1 },
	[FV_QPT_XRC] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 },
};
static const char *const qpt_name[FV__QPT_COUNT] = { "RC", "UC", "UD", "XRC", "RAW" };

static bool has_raddr(enum op o) { return o == WRITE || o == WRITE_IMM || o == READ || o == CAS || o == FADD; }
static bool is_atomic(enum op o) { return o == CAS || o == FADD; }
/* READ and atomics take a scatter list only (ops.def payload SGL). */
static bool sgl_only(enum op o) { return o == READ || is_atomic(o); }

struct req {
	enum op op;
	enum form form;
	unsigned flags;			/* FV_SIGNALED | FV_SOLICITED | FV_FENCE */
	uint64_t wr_id;
	const struct ibv_sge *sgl;	/* ONE_SGE: sgl[0]; INLINE: typed takes sgl[0] only */
	int nsge;
};

/* Twin QPs of one geometry: t is driven by the typed builders, v by fv_post_send. */
struct rig {
	struct memqp t, v;
	struct xring x;		/* what both rings must hold */
	struct fv_ah ah;	/* UD destination; v's ibv_ah stands for it through the AV cache */
	uint8_t av[48];		/* the AV's bytes, for the expectation */
	int sig_all;
	uint32_t sig_pi;	/* producer counter past the last WQE asking for a completion */
	uint32_t unsig_max;	/* longest unsignaled run the model allows */
	unsigned forced;	/* completions the model had fastverbs force */
};


static struct memqp_cfg cfg(enum fv_qpt qpt, uint32_t wqebbs, uint32_t start_pi)
{
	return (struct memqp_cfg){ .qpt = qpt, .qpn = QPN, .sq_wqe_cnt = wqebbs, .bf_size = 256,
		.max_inline = qpt == FV_QPT_UD ? 76 : 220, .max_send_sge = 16, .start_pi = start_pi };
}

static void rig_open(struct rig *g, const struct memqp_cfg *c)
{
	memset(g, 0, sizeof(*g));
	fill_pattern();
	memqp_init(&g->t, c);
	memqp_init(&g->v, c);
	poison(g->t.sq, g->t.sq_bytes, 0x5a);
	poison(g->v.sq, g->v.sq_bytes, 0x5a);
	poison(g->t.bf, 512, 0x33);
	poison(g->v.bf, 512, 0x33);
	xr_init(&g->x, g->t.sq, g->t.sq_bytes);
	for (int i = 0; i < 48; i++)
		g->av[i] = (uint8_t)(0x80 + i);
	fv__ah_fill(&g->ah, (const struct mlx5_wqe_av *)(const void *)g->av);	/* as fv_ah_init */
	g->v.qp.ah_cache_key = (struct ibv_ah *)&g->ah;	/* stand-in ibv_ah, as tests/unit/vectors.c */
	g->v.qp.ah_cache_av = &g->ah.av;
	g->sig_all = c->sq_sig_all;
	g->sig_pi = c->start_pi;
	g->unsig_max = model_unsig_max(c);
}

static void rig_close(struct rig *g)
{
	xr_free(&g->x);
	memqp_free(&g->t);
	memqp_free(&g->v);
}

/*
 * Typed calls. DATA_OP / SGL_OP pick the one-SGE, _sgl or _inline builder of a generic
 * front; the trailing arguments are passed with a leading comma: DATA_OP(fv_write, h, r, , a, k).
 */
#define INL_DATA(r) ((const void *)(uintptr_t)(r)->sgl[0].addr)
#define INL_LEN(r)  ((r)->sgl[0].length)
#define SGL_OP(fn, h, r, ...) ((r)->form == SGL ? \
	fn##_sgl(h, (r)->wr_id, (r)->flags, (r)->sgl, (r)->nsge __VA_ARGS__) : \
	fn(h, (r)->wr_id, (r)->flags, (r)->sgl __VA_ARGS__))
#define DATA_OP(fn, h, r, ...) ((r)->form == INLINE ? \
	fn##_inline(h, (r)->wr_id, (r)->flags, INL_DATA(r), INL_LEN(r) __VA_ARGS__) : \
	SGL_OP(fn, h, r, __VA_ARGS__))

/*
 * One function per typed call (QP type and operation): a function with every builder of a QP
 * type expanded in it took the compiler superlinear time (a third of this file's compile).
 */
#define TYPED_FN(name, H, expr) \
	static __attribute__((noinline)) int name(H *h, const struct fv_ah *ah, const struct req *r) \
	{ __be32 imm = imm_val(); (void)imm; (void)ah; return expr; }
TYPED_FN(rc_send, struct fv_rc, DATA_OP(fv_send, h, r, ))
TYPED_FN(rc_send_imm, struct fv_rc, DATA_OP(fv_send_imm, h, r, , imm))
TYPED_FN(rc_send_inv, struct fv_rc, DATA_OP(fv_send_inv, h, r, , INV_RKEY))
TYPED_FN(rc_write, struct fv_rc, DATA_OP(fv_write, h, r, , RADDR, RKEY))
TYPED_FN(rc_write_imm, struct fv_rc, DATA_OP(fv_write_imm, h, r, , RADDR, RKEY, imm))
TYPED_FN(rc_read, struct fv_rc, SGL_OP(fv_read, h, r, , RADDR, RKEY))
TYPED_FN(rc_cas, struct fv_rc, SGL_OP(fv_cas, h, r, , RADDR, RKEY, COMPARE, SWAP))
TYPED_FN(rc_fadd, struct fv_rc, SGL_OP(fv_fadd, h, r, , RADDR, RKEY, ADD))
TYPED_FN(rc_nop, struct fv_rc, fv_nop(h, r->wr_id, r->flags))
TYPED_FN(uc_send, struct fv_uc, DATA_OP(fv_send, h, r, ))
TYPED_FN(uc_send_imm, struct fv_uc, DATA_OP(fv_send_imm, h, r, , imm))
TYPED_FN(uc_send_inv, struct fv_uc, DATA_OP(fv_send_inv, h, r, , INV_RKEY))
TYPED_FN(uc_write, struct fv_uc, DATA_OP(fv_write, h, r, , RADDR, RKEY))
TYPED_FN(uc_write_imm, struct fv_uc, DATA_OP(fv_write_imm, h, r, , RADDR, RKEY, imm))
TYPED_FN(uc_nop, struct fv_uc, fv_nop(h, r->wr_id, r->flags))
TYPED_FN(ud_send, struct fv_ud, DATA_OP(fv_send, h, r, , ah, RQPN, QKEY))
TYPED_FN(ud_send_imm, struct fv_ud, DATA_OP(fv_send_imm, h, r, , imm, ah, RQPN, QKEY))
TYPED_FN(ud_nop, struct fv_ud, fv_nop(h, r->wr_id, r->flags))
TYPED_FN(xrc_send, struct fv_xrc, DATA_OP(fv_send, h, r, , SRQN))
TYPED_FN(xrc_send_imm, struct fv_xrc, DATA_OP(fv_send_imm, h, r, , imm, SRQN))
TYPED_FN(xrc_send_inv, struct fv_xrc, DATA_OP(fv_send_inv, h, r, , INV_RKEY, SRQN))
TYPED_FN(xrc_write, struct fv_xrc, DATA_OP(fv_write, h, r, , RADDR, RKEY, SRQN))
TYPED_FN(xrc_write_imm, struct fv_xrc, DATA_OP(fv_write_imm, h, r, , RADDR, RKEY, imm, SRQN))
TYPED_FN(xrc_read, struct fv_xrc, SGL_OP(fv_read, h, r, , RADDR, RKEY, SRQN))
TYPED_FN(xrc_cas, struct fv_xrc, SGL_OP(fv_cas, h, r, , RADDR, RKEY, COMPARE, SWAP, SRQN))
TYPED_FN(xrc_fadd, struct fv_xrc, SGL_OP(fv_fadd, h, r, , RADDR, RKEY, ADD, SRQN))
TYPED_FN(xrc_nop, struct fv_xrc, fv_nop(h, r->wr_id, r->flags))

static int typed_rc(struct fv_rc *h, const struct req *r)
{
	switch (r->op) {
	case SEND:      return rc_send(h, NULL, r);
	case SEND_IMM:  return rc_send_imm(h, NULL, r);
	case SEND_INV:  return rc_send_inv(h, NULL, r);
	case WRITE:     return rc_write(h, NULL, r);
	case WRITE_IMM: return rc_write_imm(h, NULL, r);
	case READ:      return rc_read(h, NULL, r);
	case CAS:       return rc_cas(h, NULL, r);
	case FADD:      return rc_fadd(h, NULL, r);
	case NOP:       return rc_nop(h, NULL, r);
	default:        break;
	}
	cr_assert_fail("RC cannot %s", op_name[r->op]);
	return -1;
}

static int typed_uc(struct fv_uc *h, const struct req *r)
{
	switch (r->op) {
	case SEND:      return uc_send(h, NULL, r);
	case SEND_IMM:  return uc_send_imm(h, NULL, r);
	case SEND_INV:  return uc_send_inv(h, NULL, r);
	case WRITE:     return uc_write(h, NULL, r);
	case WRITE_IMM: return uc_write_imm(h, NULL, r);
	case NOP:       return uc_nop(h, NULL, r);
	default:        break;
	}
	cr_assert_fail("UC cannot %s", op_name[r->op]);
	return -1;
}

static int typed_ud(struct fv_ud *h, const struct fv_ah *ah, const struct req *r)
{
	switch (r->op) {
	case SEND:     return ud_send(h, ah, r);
	case SEND_IMM: return ud_send_imm(h, ah, r);
	case NOP:      return ud_nop(h, ah, r);
	default:       break;
	}
	cr_assert_fail("UD cannot %s", op_name[r->op]);
	return -1;
}

static int typed_xrc(struct fv_xrc *h, const struct req *r)
{
	switch (r->op) {
	case SEND:      return xrc_send(h, NULL, r);
	case SEND_IMM:  return xrc_send_imm(h, NULL, r);
	case SEND_INV:  return xrc_send_inv(h, NULL, r);
	case WRITE:     return xrc_write(h, NULL, r);
	case WRITE_IMM: return xrc_write_imm(h, NULL, r);
	case READ:      return xrc_read(h, NULL, r);
	case CAS:       return xrc_cas(h, NULL, r);
	case FADD:      return xrc_fadd(h, NULL, r);
	case NOP:       return xrc_nop(h, NULL, r);
	default:        break;
	}
	cr_assert_fail("XRC cannot %s", op_name[r->op]);
	return -1;
}

/* Build r on m through the typed builder of m's QP type; no doorbell. */
static int post_typed(struct memqp *m, const struct fv_ah *ah, const struct req *r)
{
	switch (m->qp.qpt) {
	case FV_QPT_RC:  return typed_rc((struct fv_rc *)&m->qp, r);
	case FV_QPT_UC:  return typed_uc((struct fv_uc *)&m->qp, r);
	case FV_QPT_UD:  return typed_ud((struct fv_ud *)&m->qp, ah, r);
	case FV_QPT_XRC: return typed_xrc((struct fv_xrc *)&m->qp, r);
	default:         return -1;
	}
}

static unsigned ibv_flags_of(unsigned f)
{
	return (f & FV_SIGNALED ? IBV_SEND_SIGNALED : 0) | (f & FV_SOLICITED ? IBV_SEND_SOLICITED : 0) |
	       (f & FV_FENCE ? IBV_SEND_FENCE : 0);
}

/* The ibv_send_wr that asks for r on a QP of type qpt. */
static void fill_wr(struct ibv_send_wr *w, enum fv_qpt qpt, struct fv_ah *ah, const struct req *r)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = r->wr_id;
	w->opcode = op_ibv[r->op];
	w->sg_list = (struct ibv_sge *)r->sgl;
	w->num_sge = r->form == ONE_SGE ? 1 : r->nsge;
	w->send_flags = ibv_flags_of(r->flags) | (r->form == INLINE ? IBV_SEND_INLINE : 0);
	if (r->op == SEND_IMM || r->op == WRITE_IMM)
		w->imm_data = imm_val();
	if (r->op == SEND_INV)
		w->invalidate_rkey = INV_RKEY;
	if (is_atomic(r->op)) {
		w->wr.atomic.remote_addr = RADDR;
		w->wr.atomic.rkey = RKEY;
		w->wr.atomic.compare_add = r->op == CAS ? COMPARE : ADD;
		w->wr.atomic.swap = r->op == CAS ? SWAP : 0;
	} else if (has_raddr(r->op)) {
		w->wr.rdma.remote_addr = RADDR;
		w->wr.rdma.rkey = RKEY;
	}
	if (qpt == FV_QPT_UD) {
		w->wr.ud.ah = (struct ibv_ah *)ah;
		w->wr.ud.remote_qpn = RQPN;
		w->wr.ud.remote_qkey = QKEY;
	}
	if (qpt == FV_QPT_XRC)
		w->qp_type.xrc.remote_srqn = SRQN;
}

/* fm_ce_se the doc gives for the API flags (§2.1), plus sq_sig_all's 0x08. */
static uint8_t fm_of(unsigned flags, int sig_all)
{
	return (uint8_t)((flags & FV_SIGNALED || sig_all ? X_FM_CQ_UPDATE : 0) |
			 (flags & FV_SOLICITED ? X_FM_SOLICITED : 0) | (flags & FV_FENCE ? X_FM_FENCE : 0));
}

/*
 * Compose into x the WQE r must become at producer counter pi (§3.7 order):
 * ctrl, [xrc], [av], [raddr [atomic]], data segments or one inline segment. NOP: ctrl only.
 * Returns the WQEBBs it takes.
 */
static unsigned expect_wqe(struct xring *x, enum fv_qpt qpt, const uint8_t av[48], uint32_t pi,
			   const struct req *r, int sig_all)
{
	uint8_t inv[4] = { INV_RKEY >> 24, INV_RKEY >> 16 & 0xff, INV_RKEY >> 8 & 0xff, INV_RKEY & 0xff };
	const void *imm = r->op == SEND_INV ? inv : (r->op == SEND_IMM || r->op == WRITE_IMM) ? IMM_BYTES : NULL;
	struct xwqe w;
	int n = r->form == ONE_SGE ? 1 : r->nsge;

	xw_ctrl(&w, x, pi, op_code[r->op], QPN, fm_of(r->flags, sig_all), imm);
	if (r->op == NOP)
		return xw_end(&w);
	if (qpt == FV_QPT_XRC)
		xw_xrc(&w, SRQN);
	if (qpt == FV_QPT_UD)
		xw_av(&w, av, RQPN, QKEY);
	if (has_raddr(r->op))
		xw_raddr(&w, RADDR, RKEY);
	/* FADD: the compare half is unused (§3.2); fastverbs writes 0 there, pinned here. */
	if (is_atomic(r->op))
		xw_atomic(&w, r->op == CAS ? SWAP : ADD, r->op == CAS ? COMPARE : 0);
	if (r->form == INLINE) {
		uint8_t buf[1024];
		uint32_t len = 0;

		for (int i = 0; i < n; i++) {
			memcpy(buf + len, (const void *)(uintptr_t)r->sgl[i].addr, r->sgl[i].length);
			len += r->sgl[i].length;
		}
		xw_inline(&w, buf, len);
	} else {
		for (int i = 0; i < n; i++)	/* empty SGEs: no segment; atomics: byte count 8 */
			if (r->sgl[i].length)
				xw_data(&w, is_atomic(r->op) ? 8 : r->sgl[i].length, r->sgl[i].lkey, r->sgl[i].addr);
		/* one empty SGE after at least one unit, in the first block: written past ds */
		if (r->form == ONE_SGE && !r->sgl[0].length && w.len >= 32 && w.len < 64)
			xw_data_past_ds(&w, is_atomic(r->op) ? 8 : 0, r->sgl[0].lkey, r->sgl[0].addr);
	}
	return xw_end(&w);
}

static void assert_ring(const struct memqp *m, const struct xring *x, const char *what, const char *path)
{
	const char *d = x_diff(m->sq, x->b, x->size);

	cr_assert(!d, "%s (%s): ring differs from the expected bytes\n%s", what, path, d ? d : "");
}

/*
 * Post r through both paths at the same producer counter and check: both rings equal the
 * model, counters advanced by the expected WQEBBs, the doorbell record covers it, wr_id is
 * kept for its slot, and both paths wrote the same BlueFlame bytes.
 */
static void post_both(struct rig *g, const struct req *r, const char *what)
{
	uint32_t pi = g->t.qp.sq.pi;
	unsigned nbb = expect_wqe(&g->x, g->t.qp.qpt, g->av, pi, r, g->sig_all);
	struct ibv_send_wr wr, *bad = NULL;
	int signaled = (r->flags & FV_SIGNALED) || g->sig_all;

	/* A run longer than the model allows gets a completion fastverbs asks for itself. */
	bool forced = !signaled && pi + nbb - g->sig_pi > g->unsig_max;

	if (forced) {
		g->x.b[(size_t)pi * 64 % g->x.size + 11] |= X_FM_CQ_UPDATE;
		signaled = 1;
		g->forced++;
	}
	if (signaled)
		g->sig_pi = pi + nbb;

	cr_assert_eq(g->v.qp.sq.pi, pi, "%s: twins out of step", what);
	if (r->form == INLINE && r->nsge > 1) {	/* gathered inline: fv_post_send only */
		fill_wr(&wr, g->t.qp.qpt, &g->ah, r);
		g->t.qp.ah_cache_key = (struct ibv_ah *)&g->ah;
		g->t.qp.ah_cache_av = &g->ah.av;
		cr_assert_eq(fv_post_send(&g->t.qp, &wr, &bad), 0, "%s: fv_post_send refused", what);
	} else {
		cr_assert_eq(post_typed(&g->t, &g->ah, r), 0, "%s: typed builder refused", what);
		fv__sq_ring(&g->t.qp.sq);
	}
	if (r->op == NOP) {	/* no verbs opcode for it */
		cr_assert_eq(post_typed(&g->v, &g->ah, r), 0, "%s: typed builder refused", what);
		fv__sq_ring(&g->v.qp.sq);
	} else {
		fill_wr(&wr, g->v.qp.qpt, &g->ah, r);
		cr_assert_eq(fv_post_send(&g->v.qp, &wr, &bad), 0, "%s: fv_post_send refused", what);
		cr_assert_null(bad);
	}
	assert_ring(&g->t, &g->x, what, "typed");
	assert_ring(&g->v, &g->x, what, "fv_post_send");
	for (struct memqp *m = &g->t; m; m = m == &g->t ? &g->v : NULL) {
		cr_assert_eq(m->qp.sq.pi, pi + nbb, "%s: pi %#x, want %#x", what, m->qp.sq.pi, pi + nbb);
		cr_assert_eq(memqp_sq_dbr(m), (pi + nbb) & 0xffff, "%s: doorbell record %#x, want %#x",
			     what, memqp_sq_dbr(m), (pi + nbb) & 0xffff);
		cr_assert_eq(m->qp.sq.wr_id[pi & m->qp.sq.mask].v, r->wr_id, "%s: wr_id not kept", what);
		cr_assert_eq(memqp_forced(m, pi), forced, "%s: forced %d", what, forced);
	}
	cr_assert_arr_eq(g->t.bf, g->v.bf, 512, "%s: the paths wrote different BlueFlame bytes", what);
}

/* FV_SIGNALED / FV_SOLICITED / FV_FENCE combination number f (0..7). */
static unsigned flags_of(unsigned f)
{
	return (f & 1 ? FV_SIGNALED : 0) | (f & 2 ? FV_SOLICITED : 0) | (f & 4 ? FV_FENCE : 0);
}

/* ---- every allowed (QP type x operation x form x flags) ---- */

/* NOP on UD and XRC is checked on its own (see nop_is_ctrl_only). */
static void matrix(enum fv_qpt qpt, int sig_all)
{
	struct memqp_cfg c = cfg(qpt, 1024, 0);
	struct ibv_sge one = sge(1, 64), three[3] = { sge(2, 100), sge(3, 7), sge(4, 4096) };
	struct ibv_sge inl = sge(5, 40);
	struct rig g;
	unsigned posted = 0;
	char what[128];

	c.sq_sig_all = sig_all;
	rig_open(&g, &c);
	for (int op = 0; op < N_OPS; op++) {
		if (!allowed[qpt][op] || (op == NOP && (qpt == FV_QPT_UD || qpt == FV_QPT_XRC)))
			continue;
		for (int form = ONE_SGE; form <= INLINE; form++) {
			if ((op == NOP && form != ONE_SGE) || (form == INLINE && sgl_only(op)))
				continue;
			for (unsigned f = 0; f < 8; f++) {
				struct req r = { .op = op, .form = form, .flags = flags_of(f),
					.wr_id = 0x1000 + posted,
					.sgl = form == SGL ? three : form == INLINE ? &inl : &one,
					.nsge = form == SGL ? 3 : 1 };

				snprintf(what, sizeof(what), "%s %s form %d flags %#x%s", qpt_name[qpt],
					 op_name[op], form, r.flags, sig_all ? " sq_sig_all" : "");
				post_both(&g, &r, what);
				posted++;
			}
		}
	}
	/* The run never got long enough for a forced completion: every fm_ce_se was the caller's. */
	cr_assert_eq(g.forced, 0);
	cr_assert_gt(posted, 0);
	rig_close(&g);
}

Test(send_wqe, rc_every_op_form_and_flag) { matrix(FV_QPT_RC, 0); }
Test(send_wqe, uc_every_op_form_and_flag) { matrix(FV_QPT_UC, 0); }
Test(send_wqe, ud_every_op_form_and_flag) { matrix(FV_QPT_UD, 0); }
Test(send_wqe, xrc_every_op_form_and_flag) { matrix(FV_QPT_XRC, 0); }

/* sq_sig_all: 0x08 on every WQE whatever the flags (§2.1). */
Test(send_wqe, rc_sq_sig_all_signals_every_wqe) { matrix(FV_QPT_RC, 1); }
Test(send_wqe, ud_sq_sig_all_signals_every_wqe) { matrix(FV_QPT_UD, 1); }
Test(send_wqe, xrc_sq_sig_all_signals_every_wqe) { matrix(FV_QPT_XRC, 1); }

/* Read a ctrl field straight from the ring, for the explicit spot checks below. */
static uint8_t ctrl_fm(const struct memqp *m, uint32_t pi) { return memqp_block(m, pi)[11]; }
static uint8_t ctrl_ds(const struct memqp *m, uint32_t pi) { return memqp_block(m, pi)[7] & 0x3f; }
static uint16_t ctrl_idx(const struct memqp *m, uint32_t pi)
{
	const uint8_t *b = memqp_block(m, pi);

	return (uint16_t)(b[1] << 8 | b[2]);
}

/* The doc's worked byte image (§3.7): QPN 0x123, WQE index 5, signaled RC RDMA_WRITE. */
Test(send_wqe, doc_worked_example_rc_write)
{
	static const uint8_t want[16] = { 0x00, 0x00, 0x05, 0x08, 0x00, 0x01, 0x23, 0x03,
					  0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00 };
	struct memqp m;
	struct ibv_sge s = sge(0, 32);

	memqp_init(&m, &(struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = 0x123, .sq_wqe_cnt = 64,
		.max_send_sge = 1, .start_pi = 5 });
	cr_assert_eq(fv_write((struct fv_rc *)&m.qp, 7, FV_SIGNALED, &s, RADDR, RKEY), 0);
	cr_assert_arr_eq(memqp_block(&m, 5), want, 16, "ctrl:\n%s", hexstr(memqp_block(&m, 5), 16));
	memqp_free(&m);
}

/* FENCE is 0x80 (MLX5_WQE_CTRL_FENCE), not the kernel's 0x40, on both paths. */
Test(send_wqe, fence_is_0x80)
{
	struct rig g;
	struct ibv_sge s = sge(0, 16);

	rig_open(&g, &(struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = QPN, .sq_wqe_cnt = 16,
		.max_send_sge = 1, .bf_size = 256 });
	post_both(&g, &(struct req){ .op = READ, .flags = FV_FENCE, .sgl = &s, .nsge = 1 }, "read FENCE");
	cr_assert_eq(ctrl_fm(&g.t, 0), 0x80);
	cr_assert_eq(ctrl_fm(&g.v, 0), 0x80);
	post_both(&g, &(struct req){ .op = SEND, .flags = FV_FENCE | FV_SIGNALED | FV_SOLICITED,
		.sgl = &s, .nsge = 1 }, "send FENCE|SIGNALED|SOLICITED");
	cr_assert_eq(ctrl_fm(&g.t, 1), 0x8a);
	rig_close(&g);
}

/* SEND_INV puts BE32(rkey) in the imm field; IMM ops copy the caller's __be32 verbatim. */
Test(send_wqe, imm_and_invalidate_key_placement)
{
	static const uint8_t inv[4] = { 0x98, 0x76, 0x54, 0x32 };
	struct rig g;
	struct ibv_sge s = sge(0, 16);

	rig_open(&g, &(struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = QPN, .sq_wqe_cnt = 16,
		.max_send_sge = 1, .bf_size = 256 });
	post_both(&g, &(struct req){ .op = SEND_INV, .sgl = &s, .nsge = 1 }, "send_inv");
	post_both(&g, &(struct req){ .op = SEND_IMM, .sgl = &s, .nsge = 1 }, "send_imm");
	post_both(&g, &(struct req){ .op = WRITE_IMM, .sgl = &s, .nsge = 1 }, "write_imm");
	cr_assert_arr_eq(memqp_block(&g.t, 0) + 12, inv, 4);
	cr_assert_arr_eq(memqp_block(&g.t, 1) + 12, IMM_BYTES, 4);
	cr_assert_arr_eq(memqp_block(&g.t, 2) + 12, IMM_BYTES, 4);
	rig_close(&g);
}

/* ds per the §3.7 accounting, spelled out as numbers for the common shapes. */
Test(send_wqe, ds_accounting)
{
	static const struct { enum fv_qpt qpt; enum op op; enum form form; uint32_t len; unsigned ds; } k[] = {
		{ FV_QPT_RC,  NOP,   ONE_SGE, 0,   1 },
		{ FV_QPT_RC,  SEND,  ONE_SGE, 8,   2 },
		{ FV_QPT_RC,  WRITE, ONE_SGE, 8,   3 },
		{ FV_QPT_RC,  CAS,   ONE_SGE, 8,   4 },
		{ FV_QPT_RC,  SEND,  INLINE,  100, 8 },	/* 1 + ceil(104/16) = 8 */
		{ FV_QPT_UD,  SEND,  ONE_SGE, 8,   5 },
		{ FV_QPT_UD,  SEND,  INLINE,  12,  5 },
		{ FV_QPT_XRC, SEND,  ONE_SGE, 8,   3 },
		{ FV_QPT_XRC, FADD,  ONE_SGE, 8,   5 },
		{ FV_QPT_XRC, WRITE, INLINE,  60,  7 },	/* 1 + 1 + 1 + ceil(64/16) */
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct rig g;
		struct ibv_sge s = sge(0, k[i].len);
		char what[64];

		rig_open(&g, &(struct memqp_cfg){ .qpt = k[i].qpt, .qpn = QPN, .sq_wqe_cnt = 16,
			.max_send_sge = 1, .max_inline = 128, .bf_size = 256 });
		snprintf(what, sizeof(what), "%s %s len %u", qpt_name[k[i].qpt], op_name[k[i].op], k[i].len);
		post_both(&g, &(struct req){ .op = k[i].op, .form = k[i].form, .sgl = &s, .nsge = 1 }, what);
		cr_assert_eq(ctrl_ds(&g.t, 0), k[i].ds, "%s: ds %u, want %u", what, ctrl_ds(&g.t, 0), k[i].ds);
		cr_assert_eq(g.t.qp.sq.pi, (k[i].ds + 3) / 4, "%s: WQEBBs", what);
		rig_close(&g);
	}
}

/*
 * fv_post_send's fast path counts a WR's header units from its segments alone
 * (FV__SEG_HDR_DS, in compat/post_send_ring.h) to decide whether the WR fits, before it
 * makes a request; the builders count them from the request (fv__req_hdr_ds, which uses the
 * same macro for a WR with a payload). Both against the segment sizes of the format: the
 * ctrl 16 bytes; the transport's 48 (UD and DCI: the address vector) or 16 (XRC: the SRQ
 * number), none otherwise; the remote address 16; the atomic 16.
 */
Test(send_wqe, fast_path_header_count_is_the_builders)
{
	static const unsigned segs[] = { 0, FV__SEG_RADDR, FV__SEG_RADDR | FV__SEG_ATOMIC };
	static const unsigned transport[FV__QPT_COUNT] = {
		[FV_QPT_UD] = 48, [FV_QPT_DCI] = 48, [FV_QPT_XRC] = 16,
	};

	for (int t = 0; t < FV__QPT_COUNT; t++) {
		for (size_t i = 0; i < sizeof(segs) / sizeof(segs[0]); i++) {
			struct fv__req r = { .segs = (uint8_t)segs[i], .payload = FV__PL_SGL };
			unsigned want = (16 + transport[t] + (segs[i] & FV__SEG_RADDR ? 16 : 0) +
					 (segs[i] & FV__SEG_ATOMIC ? 16 : 0)) / 16;
			unsigned fast = FV__SEG_HDR_DS((enum fv_qpt)t, segs[i]);
			unsigned built = fv__req_hdr_ds((enum fv_qpt)t, &r);

			cr_assert_eq(fast, want, "QP type %d, segs %#x: %u units, the format %u", t, segs[i],
				     fast, want);
			cr_assert_eq(built, want, "QP type %d, segs %#x: builders %u units, the format %u", t,
				     segs[i], built, want);
		}
	}
}

/* ---- NOP: a control segment only, on every QP type (§2.2, §3.7) ---- */

/* A NOP is the control segment alone (ds 1), one WQEBB: no address vector on UD, no XRC
 * segment on XRC. */
Test(send_wqe, nop_is_ctrl_only)
{
	for (enum fv_qpt t = FV_QPT_RC; t <= FV_QPT_XRC; t++) {
		struct rig g;

		rig_open(&g, &(struct memqp_cfg){ .qpt = t, .qpn = QPN, .sq_wqe_cnt = 8, .bf_size = 256 });
		post_both(&g, &(struct req){ .op = NOP, .flags = FV_SIGNALED }, qpt_name[t]);
		cr_assert_eq(ctrl_ds(&g.t, 0), 1, "%s", qpt_name[t]);
		cr_assert_eq(g.t.qp.sq.pi, 1, "%s", qpt_name[t]);
		rig_close(&g);
	}
}

/* ---- inline ---- */

/* Inline sizes on one QP type and op: payload exact, ds = hdr + ceil((4+len)/16), 0 = no segment. */
static void inline_sizes(enum fv_qpt qpt, enum op op, unsigned hdr_ds)
{
	struct memqp_cfg c = cfg(qpt, 256, 0);
	const uint32_t lens[] = { 0, 1, 12, 16, 60, 100, c.max_inline };
	struct rig g;

	rig_open(&g, &c);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		if (lens[i] > c.max_inline)	/* UD's max is 76 */
			continue;
		struct ibv_sge s = sge(3, lens[i]);
		uint32_t pi = g.t.qp.sq.pi;
		unsigned ds = hdr_ds + (lens[i] ? (4 + lens[i] + 15) / 16 : 0);
		char what[64];

		snprintf(what, sizeof(what), "%s %s inline %u", qpt_name[qpt], op_name[op], lens[i]);
		post_both(&g, &(struct req){ .op = op, .form = INLINE, .sgl = &s, .nsge = 1, .wr_id = i }, what);
		cr_assert_eq(ctrl_ds(&g.t, pi), ds, "%s: ds %u, want %u", what, ctrl_ds(&g.t, pi), ds);
		if (lens[i]) {	/* header word: BE32(len | 0x80000000) right after the fixed segments */
			const uint8_t *h = memqp_block(&g.t, pi) + 16 * hdr_ds;
			uint32_t bc = (uint32_t)h[0] << 24 | h[1] << 16 | h[2] << 8 | h[3];

			cr_assert_eq(bc, lens[i] | 0x80000000u, "%s: byte_count %#x", what, bc);
		}
	}
	rig_close(&g);
}

Test(send_wqe, rc_send_inline_sizes)      { inline_sizes(FV_QPT_RC, SEND, 1); }
Test(send_wqe, rc_write_imm_inline_sizes) { inline_sizes(FV_QPT_RC, WRITE_IMM, 2); }
Test(send_wqe, uc_send_inv_inline_sizes)  { inline_sizes(FV_QPT_UC, SEND_INV, 1); }
Test(send_wqe, ud_send_inline_sizes)      { inline_sizes(FV_QPT_UD, SEND, 4); }
Test(send_wqe, xrc_write_inline_sizes)    { inline_sizes(FV_QPT_XRC, WRITE, 3); }

/*
 * An inline payload whose length the compiler knows, fitting the WQE's first block, takes the
 * typed builders' fast path (build.h): the same bytes as fv_post_send's inline WQE, padding
 * left as it was, at every place of a small ring (so also in its last block), signaled or not;
 * over max_inline, ENOMEM with nothing written.
 */
#define INLINE_CONST(len)                                                                          \
	do {                                                                                       \
		struct ibv_sge s = sge(2, len);                                                    \
		struct ibv_send_wr wr, *bad = NULL;                                                \
		const void *d = (const void *)(uintptr_t)s.addr;                                   \
		unsigned f = k % 3 == 0 ? FV_SIGNALED : 0;                                         \
		struct req r = { .op = WRITE, .form = INLINE, .sgl = &s, .nsge = 1, .flags = f,     \
				 .wr_id = k };                                                     \
		int e1 = fv_write_inline((struct fv_rc *)&g.t.qp, k, f, d, len, RADDR, RKEY);       \
		fill_wr(&wr, FV_QPT_RC, NULL, &r);                                                 \
		cr_assert_eq(fv_post_send(&g.v.qp, &wr, &bad), e1, "inline %u: errno", len);       \
		cr_assert_eq(g.t.qp.sq.pi, g.v.qp.sq.pi, "inline %u at %u: pi", len, k);            \
		cr_assert_eq(memcmp(g.t.sq, g.v.sq, g.t.sq_bytes), 0, "inline %u at %u: bytes", len, k); \
	} while (0)

Test(send_wqe, inline_const_len_fast_path)
{
	struct rig g;

	rig_open(&g, &(struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = QPN, .sq_wqe_cnt = 8,
		.max_inline = 28, .max_send_sge = 1, .bf_size = 256 });
	for (unsigned k = 0; k < 32; k++) {
		switch (k % 8) {	/* 16 and more: a 16-byte piece first under gcc (FV__INL_VEC16), then the rest */
		case 0: INLINE_CONST(1); break;
		case 1: INLINE_CONST(3); break;
		case 2: INLINE_CONST(12); break;
		case 3: INLINE_CONST(16); break;
		case 4: INLINE_CONST(28); break;
		case 5: INLINE_CONST(20); break;
		case 6: INLINE_CONST(27); break;
		default: INLINE_CONST(7); break;
		}
		g.t.qp.sq.ci = g.t.qp.sq.pi;	/* the device took everything: room for the next */
		g.t.qp.sq.lim = fv__sq_lim(&g.t.qp.sq);
		g.v.qp.sq.ci = g.v.qp.sq.pi;
		g.v.qp.sq.lim = fv__sq_lim(&g.v.qp.sq);
	}
	{
		unsigned k = 0;
		uint32_t pi = g.t.qp.sq.pi;

		INLINE_CONST(29);	/* over max_inline: ENOMEM on both, nothing written */
		cr_assert_eq(g.t.qp.sq.pi, pi);
	}
	rig_close(&g);
}

/* One byte over max_inline: ENOMEM on both paths, nothing written (detail in send_refuse.c). */
Test(send_wqe, inline_over_max_is_enomem)
{
	struct rig g;
	struct ibv_sge s = sge(0, 221);
	struct ibv_send_wr wr, *bad = NULL;

	rig_open(&g, &(struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = QPN, .sq_wqe_cnt = 16,
		.max_inline = 220, .max_send_sge = 1, .bf_size = 256 });
	cr_assert_eq(post_typed(&g.t, NULL, &(struct req){ .op = SEND, .form = INLINE, .sgl = &s, .nsge = 1 }), ENOMEM);
	fill_wr(&wr, FV_QPT_RC, NULL, &(struct req){ .op = SEND, .form = INLINE, .sgl = &s, .nsge = 1 });
	cr_assert_eq(fv_post_send(&g.v.qp, &wr, &bad), ENOMEM);
	cr_assert_eq(bad, &wr);
	assert_ring(&g.t, &g.x, "inline 221", "typed");
	assert_ring(&g.v, &g.x, "inline 221", "fv_post_send");
	rig_close(&g);
}

/* fv_post_send gathers several SGEs into one inline segment, zero-length ones included. */
Test(send_wqe, inline_gathers_sges)
{
	struct rig g;
	struct ibv_sge s[4] = { sge(1, 5), sge(2, 0), sge(3, 33), sge(4, 21) };
	struct ibv_send_wr wr, *bad = NULL;
	struct req r = { .op = WRITE, .form = INLINE, .sgl = s, .nsge = 4, .flags = FV_SIGNALED };
	unsigned nbb;

	rig_open(&g, &(struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = QPN, .sq_wqe_cnt = 16,
		.max_inline = 220, .max_send_sge = 4, .bf_size = 256 });
	nbb = expect_wqe(&g.x, FV_QPT_RC, g.av, 0, &r, 0);
	fill_wr(&wr, FV_QPT_RC, NULL, &r);
	cr_assert_eq(fv_post_send(&g.v.qp, &wr, &bad), 0);
	assert_ring(&g.v, &g.x, "inline gather 5+0+33+21", "fv_post_send");
	cr_assert_eq(ctrl_ds(&g.v, 0), 2 + (4 + 59 + 15) / 16);
	cr_assert_eq(g.v.qp.sq.pi, nbb);
	rig_close(&g);
}

/* ---- scatter/gather lists ---- */

/* 1..max_send_sge SGEs: one data segment each, in order; ds = hdr + n. */
Test(send_wqe, sge_counts_up_to_max)
{
	static const struct { enum fv_qpt qpt; enum op op; unsigned hdr; } k[] = {
		{ FV_QPT_RC, WRITE, 2 }, { FV_QPT_RC, READ, 2 }, { FV_QPT_UC, SEND_IMM, 1 },
		{ FV_QPT_UD, SEND, 4 }, { FV_QPT_XRC, WRITE_IMM, 3 }, { FV_QPT_XRC, READ, 3 },
	};
	struct ibv_sge s[16];

	for (unsigned i = 0; i < 16; i++)
		s[i] = sge(i, 100 + i);
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct rig g;

		rig_open(&g, &(struct memqp_cfg){ .qpt = k[i].qpt, .qpn = QPN, .sq_wqe_cnt = 256,
			.max_send_sge = 16, .bf_size = 256 });
		for (int n = 1; n <= 16; n++) {
			uint32_t pi = g.t.qp.sq.pi;
			char what[64];

			snprintf(what, sizeof(what), "%s %s %d SGEs", qpt_name[k[i].qpt], op_name[k[i].op], n);
			post_both(&g, &(struct req){ .op = k[i].op, .form = SGL, .sgl = s, .nsge = n,
				.flags = FV_SIGNALED }, what);
			cr_assert_eq(ctrl_ds(&g.t, pi), k[i].hdr + (unsigned)n, "%s: ds", what);
		}
		rig_close(&g);
	}
}

/* Zero-length SGEs leave no segment (ds shrinks); all empty: ds of the fixed part alone. */
Test(send_wqe, zero_length_sges_skipped)
{
	struct ibv_sge some[5] = { sge(0, 0), sge(1, 64), sge(2, 0), sge(3, 9), sge(4, 0) };
	struct ibv_sge none[3] = { sge(0, 0), sge(1, 0), sge(2, 0) };
	static const struct { enum fv_qpt qpt; enum op op; unsigned hdr; } k[] = {
		{ FV_QPT_RC, SEND, 1 }, { FV_QPT_RC, WRITE, 2 }, { FV_QPT_RC, READ, 2 },
		{ FV_QPT_RC, CAS, 3 }, { FV_QPT_UD, SEND_IMM, 4 }, { FV_QPT_XRC, FADD, 4 },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct rig g;
		char what[64];

		rig_open(&g, &(struct memqp_cfg){ .qpt = k[i].qpt, .qpn = QPN, .sq_wqe_cnt = 64,
			.max_send_sge = 8, .bf_size = 256 });
		snprintf(what, sizeof(what), "%s %s 2 of 5 SGEs non-empty", qpt_name[k[i].qpt], op_name[k[i].op]);
		post_both(&g, &(struct req){ .op = k[i].op, .form = SGL, .sgl = some, .nsge = 5 }, what);
		cr_assert_eq(ctrl_ds(&g.t, 0), k[i].hdr + 2, "%s", what);
		snprintf(what, sizeof(what), "%s %s all SGEs empty", qpt_name[k[i].qpt], op_name[k[i].op]);
		uint32_t pi = g.t.qp.sq.pi;
		post_both(&g, &(struct req){ .op = k[i].op, .form = SGL, .sgl = none, .nsge = 3 }, what);
		cr_assert_eq(ctrl_ds(&g.t, pi), k[i].hdr, "%s", what);
		snprintf(what, sizeof(what), "%s %s one empty SGE", qpt_name[k[i].qpt], op_name[k[i].op]);
		pi = g.t.qp.sq.pi;
		post_both(&g, &(struct req){ .op = k[i].op, .form = ONE_SGE, .sgl = none, .nsge = 1 }, what);
		cr_assert_eq(ctrl_ds(&g.t, pi), k[i].hdr, "%s", what);
		rig_close(&g);
	}
}

/* ---- WQEs that run past the ring end (§1.3) ---- */

/* Post r at the last slot (or `back` slots before the end) of a ring of n WQEBBs. */
static void post_at_end(enum fv_qpt qpt, uint32_t n, uint32_t back, const struct req *r,
			unsigned want_nbb, const char *what)
{
	struct memqp_cfg c = cfg(qpt, n, n - back);
	struct rig g;

	rig_open(&g, &c);
	post_both(&g, r, what);
	cr_assert_eq(g.t.qp.sq.pi - (n - back), want_nbb, "%s: WQEBBs", what);
	cr_assert_gt(want_nbb, back, "%s: the case must really wrap", what);
	rig_close(&g);
}

Test(send_wqe, wrap_ud_send_av_last_slot_data_at_slot0)
{
	struct ibv_sge s = sge(0, 77);

	post_at_end(FV_QPT_UD, 4, 1, &(struct req){ .op = SEND, .sgl = &s, .nsge = 1 }, 2, "UD send");
	post_at_end(FV_QPT_UD, 8, 1, &(struct req){ .op = SEND_IMM, .sgl = &s, .nsge = 1,
		.flags = FV_SIGNALED }, 2, "UD send_imm");
}

Test(send_wqe, wrap_inline_payload_split_at_ring_end)
{
	/* 100 bytes from ring offset +20 of the last slot: 44 before the end, 56 after. */
	struct ibv_sge s = sge(1, 100);
	struct ibv_sge two[2] = { sge(2, 44), sge(3, 30) };	/* SGE boundary exactly at the end */
	struct ibv_sge ud = sge(4, 76);

	post_at_end(FV_QPT_RC, 4, 1, &(struct req){ .op = SEND, .form = INLINE, .sgl = &s, .nsge = 1 },
		    2, "RC send inline 100");
	post_at_end(FV_QPT_RC, 8, 1, &(struct req){ .op = SEND, .form = INLINE, .sgl = two, .nsge = 2 },
		    2, "RC send inline 44+30");
	post_at_end(FV_QPT_RC, 8, 1, &(struct req){ .op = WRITE_IMM, .form = INLINE, .sgl = &s, .nsge = 1 },
		    3, "RC write_imm inline 100");	/* ds 2 + 7 */
	post_at_end(FV_QPT_UD, 8, 1, &(struct req){ .op = SEND, .form = INLINE, .sgl = &ud, .nsge = 1 },
		    3, "UD send inline 76");
	post_at_end(FV_QPT_RC, 8, 2, &(struct req){ .op = SEND, .form = INLINE,
		.sgl = &(struct ibv_sge){ .addr = (uintptr_t)pat, .length = 220 }, .nsge = 1 }, 4, "RC send inline 220");
}

Test(send_wqe, wrap_xrc_atomic_data_seg_at_slot0)
{
	struct ibv_sge s = sge(0, 8);

	post_at_end(FV_QPT_XRC, 4, 1, &(struct req){ .op = CAS, .sgl = &s, .nsge = 1, .flags = FV_SIGNALED },
		    2, "XRC cas");
	post_at_end(FV_QPT_XRC, 8, 1, &(struct req){ .op = FADD, .sgl = &s, .nsge = 1 }, 2, "XRC fadd");
}

Test(send_wqe, wrap_long_sgl_across_end)
{
	struct ibv_sge s[12];

	for (unsigned i = 0; i < 12; i++)
		s[i] = sge(i, 1000 + i);
	/* ds 14: 4 WQEBBs from 2 before the end. */
	post_at_end(FV_QPT_RC, 8, 2, &(struct req){ .op = WRITE, .form = SGL, .sgl = s, .nsge = 12 },
		    4, "RC write 12 SGEs");
	post_at_end(FV_QPT_XRC, 8, 1, &(struct req){ .op = READ, .form = SGL, .sgl = s, .nsge = 5 },
		    2, "XRC read 5 SGEs");
}

/* ---- producer counter past 2^16 ---- */

/* Index = low 16 bits of the WQEBB counter; dbrec = BE32(pi & 0xffff), at every step. */
static void counter_run(uint32_t start_pi)
{
	struct rig g;
	struct ibv_sge s = sge(0, 48);
	static const enum op ops[] = { SEND, WRITE, NOP, CAS, SEND_IMM, READ };
	char what[64];

	rig_open(&g, &(struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = QPN, .sq_wqe_cnt = 8,
		.max_send_sge = 4, .max_inline = 128, .bf_size = 256, .start_pi = start_pi });
	for (int i = 0; i < 6; i++) {
		uint32_t pi = g.t.qp.sq.pi;

		snprintf(what, sizeof(what), "start %#x step %d", start_pi, i);
		post_both(&g, &(struct req){ .op = ops[i], .sgl = &s, .nsge = 1, .flags = FV_SIGNALED,
			.wr_id = i }, what);
		cr_assert_eq(ctrl_idx(&g.t, pi), pi & 0xffff, "%s: index %#x", what, ctrl_idx(&g.t, pi));
		cr_assert_eq(g.t.dbrec[MLX5_SND_DBR], htobe32(g.t.qp.sq.pi & 0xffff));
		/* free the slot again: this test is about counters, not space */
		g.t.qp.sq.ci = g.v.qp.sq.ci = g.t.qp.sq.pi;
	}
	rig_close(&g);
}

/* A 2-WQEBB WQE at counter 0xffff: index 0xffff, its second block is counter 0x10000, dbrec 1. */
Test(send_wqe, two_block_wqe_across_16bit_wrap)
{
	struct rig g;
	struct ibv_sge s = sge(0, 48);
	struct memqp_cfg c = cfg(FV_QPT_UD, 8, 0xffff);

	rig_open(&g, &c);
	post_both(&g, &(struct req){ .op = SEND, .sgl = &s, .nsge = 1 }, "UD send at 0xffff");
	cr_assert_eq(ctrl_idx(&g.t, 0xffff), 0xffff);
	cr_assert_eq(memqp_sq_dbr(&g.t), 1);
	cr_assert_eq(g.t.qp.sq.pi, 0x10001);
	rig_close(&g);
}

Test(send_wqe, counter_from_0xfffe)     { counter_run(0xfffe); }
Test(send_wqe, counter_from_0xffff)     { counter_run(0xffff); }
Test(send_wqe, counter_from_0x1fffc)    { counter_run(0x1fffc); }
Test(send_wqe, counter_from_0xfffffffd) { counter_run(0xfffffffdu); }

/* ---- what lands in the BlueFlame register (§1.5) ---- */

/* Expected register: the poison it had, with n bytes of src written at off. */
static void expect_bf(uint8_t want[512], const uint8_t before[512], size_t off, const void *src, size_t n)
{
	memcpy(want, before, 512);
	memcpy(want + off, src, n);
}

static void assert_bf(const struct memqp *m, const uint8_t want[512], const char *what)
{
	const char *d = x_diff(m->bf, want, 512);

	cr_assert(!d, "%s: BlueFlame register\n%s", what, d ? d : "");
}

/* A lone WQE with 1 < ds <= bf_size/16: all its WQEBBs, copied from the ring. */
Test(send_wqe, bf_copies_a_lone_wqe_whole)
{
	struct ibv_sge s[15];
	static const struct { enum op op; enum form form; int n; unsigned nbb; } k[] = {
		{ SEND, ONE_SGE, 1, 1 },	/* ds 2 */
		{ CAS, ONE_SGE, 1, 1 },		/* ds 4 */
		{ WRITE, SGL, 3, 2 },		/* ds 5 */
		{ SEND, INLINE, 1, 4 },		/* ds 15 (220 bytes) */
		{ SEND, SGL, 15, 4 },		/* ds 16 = 256 bytes: the largest that fits a half */
	};

	for (unsigned i = 0; i < 15; i++)
		s[i] = sge(i, i == 0 ? 220 : 8);
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct rig g;
		uint8_t before[512], want[512];
		char what[64];

		rig_open(&g, &(struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = QPN, .sq_wqe_cnt = 64,
			.max_send_sge = 15, .max_inline = 220, .bf_size = 256 });
		memcpy(before, g.t.bf, 512);
		snprintf(what, sizeof(what), "lone %s n=%d", op_name[k[i].op], k[i].n);
		post_both(&g, &(struct req){ .op = k[i].op, .form = k[i].form, .sgl = s, .nsge = k[i].n }, what);
		cr_assert_eq(g.t.qp.sq.pi, k[i].nbb, "%s: WQEBBs", what);
		expect_bf(want, before, 0, g.x.b, 64 * k[i].nbb);
		assert_bf(&g.t, want, what);
		assert_bf(&g.v, want, what);
		rig_close(&g);
	}
}

/* The BF copy reads the WQE modulo the ring: last slot first, then slot 0. */
Test(send_wqe, bf_copy_source_wraps_at_ring_end)
{
	struct rig g;
	uint8_t before[512], want[512];
	struct ibv_sge s = sge(0, 40);

	struct memqp_cfg c = cfg(FV_QPT_UD, 4, 3);

	rig_open(&g, &c);
	memcpy(before, g.t.bf, 512);
	post_both(&g, &(struct req){ .op = SEND, .sgl = &s, .nsge = 1 }, "UD send at slot 3");
	memcpy(want, before, 512);
	memcpy(want, g.x.b + 3 * 64, 64);
	memcpy(want + 64, g.x.b, 64);
	assert_bf(&g.t, want, "UD send at slot 3");
	assert_bf(&g.v, want, "UD send at slot 3");
	rig_close(&g);
}

/* Several WQEs, one doorbell: only the first 8 bytes of the last WQE's ctrl; dbrec covers all. */
Test(send_wqe, bf_batch_gets_8_byte_doorbell_of_last_wqe)
{
	struct memqp m, v;
	struct fv_rc *rc = (struct fv_rc *)&m.qp;
	struct ibv_sge s[3] = { sge(0, 64), sge(1, 64), sge(2, 64) };
	struct ibv_send_wr w[3], *bad = NULL;
	uint8_t before[512], want[512];
	struct memqp_cfg c = cfg(FV_QPT_RC, 64, 0);

	memqp_init(&m, &c);
	memqp_init(&v, &c);
	poison(m.bf, 512, 0x33);
	poison(v.bf, 512, 0x33);
	memcpy(before, m.bf, 512);
	cr_assert_eq(fv_write(rc, 1, 0, &s[0], RADDR, RKEY), 0);
	cr_assert_eq(fv_write(rc, 2, 0, &s[1], RADDR, RKEY), 0);
	cr_assert_eq(fv_send_inline(rc, 3, FV_SIGNALED, pat, 100), 0);	/* 2 WQEBBs, at pi 2 */
	cr_assert_arr_eq(m.bf, before, 512, "no doorbell before fv_ring");
	fv_ring(rc);
	expect_bf(want, before, 0, memqp_block(&m, 2), 8);
	assert_bf(&m, want, "typed batch of 3");
	cr_assert_eq(memqp_sq_dbr(&m), 4);

	for (int i = 0; i < 3; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].wr_id = (uint64_t)i + 1;
		w[i].opcode = IBV_WR_RDMA_WRITE;
		w[i].sg_list = &s[i];
		w[i].num_sge = 1;
		w[i].wr.rdma.remote_addr = RADDR;
		w[i].wr.rdma.rkey = RKEY;
		w[i].next = i < 2 ? &w[i + 1] : NULL;
	}
	cr_assert_eq(fv_post_send(&v.qp, w, &bad), 0);
	expect_bf(want, before, 0, memqp_block(&v, 2), 8);
	assert_bf(&v, want, "fv_post_send chain of 3");
	cr_assert_eq(memqp_sq_dbr(&v), 3);
	memqp_free(&m);
	memqp_free(&v);
}

/* ds 1 (a lone NOP) never goes by BlueFlame: 8-byte doorbell. */
Test(send_wqe, bf_lone_nop_gets_8_byte_doorbell)
{
	struct memqp m;
	uint8_t before[512], want[512];

	struct memqp_cfg c = cfg(FV_QPT_RC, 16, 0);

	memqp_init(&m, &c);
	poison(m.bf, 512, 0x33);
	memcpy(before, m.bf, 512);
	cr_assert_eq(fv_nop((struct fv_rc *)&m.qp, 1, FV_SIGNALED), 0);
	fv_ring((struct fv_rc *)&m.qp);
	expect_bf(want, before, 0, memqp_block(&m, 0), 8);
	assert_bf(&m, want, "lone NOP");
	memqp_free(&m);
}

/* Any lone WQE of ds 1 (a SEND without data, through each path) rings with 8 bytes; an
 * empty SGE after a remote address (ds 2) goes by BlueFlame. */
Test(send_wqe, bf_lone_ds1_send_gets_8_byte_doorbell)
{
	struct ibv_sge empty = sge(0, 0);

	for (int how = 0; how < 4; how++) {
		struct memqp m;
		struct fv_rc *rc;
		uint8_t before[512], want[512];
		struct ibv_send_wr w = { .wr_id = 9, .opcode = IBV_WR_SEND, .sg_list = &empty, .num_sge = how - 2 };
		struct ibv_send_wr *bad = NULL;
		static const char *const what[4] = { "fv_send, empty SGE", "fv_write, empty SGE",
						     "fv_post_send, no SGE", "fv_post_send, empty SGE" };
		struct memqp_cfg c = cfg(FV_QPT_RC, 16, 0);

		memqp_init(&m, &c);
		rc = (struct fv_rc *)&m.qp;
		poison(m.bf, 512, 0x33);
		memcpy(before, m.bf, 512);
		if (how == 0)
			cr_assert_eq(fv_send(rc, 9, 0, &empty), 0);
		else if (how == 1)
			cr_assert_eq(fv_write(rc, 9, 0, &empty, RADDR, RKEY), 0);
		else
			cr_assert_eq(fv_post_send(&m.qp, &w, &bad), 0, "%s", what[how]);
		if (how < 2)
			fv_ring(rc);
		cr_assert_eq(ctrl_ds(&m, 0), how == 1 ? 2u : 1u, "%s: ds", what[how]);
		expect_bf(want, before, 0, memqp_block(&m, 0), how == 1 ? 64 : 8);
		assert_bf(&m, want, what[how]);
		cr_assert_eq(memqp_sq_dbr(&m), 1, "%s: doorbell record", what[how]);
		memqp_free(&m);
	}
}

/* Larger than one half (ds 17 > 256/16): 8-byte doorbell. */
Test(send_wqe, bf_wqe_larger_than_half_gets_8_byte_doorbell)
{
	struct memqp m;
	struct ibv_sge s[16];
	uint8_t before[512], want[512];

	for (unsigned i = 0; i < 16; i++)
		s[i] = sge(i, 8);
	struct memqp_cfg c = cfg(FV_QPT_RC, 16, 0);

	memqp_init(&m, &c);
	poison(m.bf, 512, 0x33);
	memcpy(before, m.bf, 512);
	cr_assert_eq(fv_send_sgl((struct fv_rc *)&m.qp, 1, 0, s, 16), 0);
	cr_assert_eq(ctrl_ds(&m, 0), 17);
	fv_ring((struct fv_rc *)&m.qp);
	expect_bf(want, before, 0, memqp_block(&m, 0), 8);
	assert_bf(&m, want, "ds 17");
	memqp_free(&m);
}

/* Each doorbell uses the other half: 0, 0x100, 0, 0x100, ... whatever the kind of write. */
Test(send_wqe, bf_halves_alternate)
{
	struct memqp m;
	struct fv_rc *rc = (struct fv_rc *)&m.qp;
	struct ibv_sge s = sge(0, 32);

	struct memqp_cfg c = cfg(FV_QPT_RC, 16, 0);

	memqp_init(&m, &c);
	for (int i = 0; i < 6; i++) {
		uint8_t before[512], want[512];
		uint32_t pi = m.qp.sq.pi;
		size_t half = (size_t)(i & 1) * 0x100;
		int lone_copy = i % 3 != 2;	/* every third ring is a NOP: 8-byte doorbell */

		poison(m.bf, 512, (uint8_t)(0x40 + i));
		memcpy(before, m.bf, 512);
		cr_assert_eq(lone_copy ? fv_write(rc, 1, 0, &s, RADDR, RKEY) : fv_nop(rc, 1, FV_SIGNALED), 0);
		fv_ring(rc);
		expect_bf(want, before, half, memqp_block(&m, pi), lone_copy ? 64 : 8);
		assert_bf(&m, want, lone_copy ? "write" : "nop");
		m.qp.sq.ci = m.qp.sq.pi;
	}
	memqp_free(&m);
}

/* bf_size 0 (bfreg 0, doorbell only): always 8 bytes at offset 0, never a copy. */
Test(send_wqe, bf_size_0_always_8_bytes_at_offset_0)
{
	struct rig g;
	struct memqp_cfg c = cfg(FV_QPT_UD, 16, 0);
	struct ibv_sge s = sge(0, 32);

	c.bf_size = 0;
	rig_open(&g, &c);
	for (int i = 0; i < 4; i++) {
		uint8_t before[512], want[512];
		uint32_t pi = g.t.qp.sq.pi;

		poison(g.t.bf, 512, (uint8_t)i);
		memcpy(g.v.bf, g.t.bf, 512);
		memcpy(before, g.t.bf, 512);
		post_both(&g, &(struct req){ .op = SEND, .sgl = &s, .nsge = 1 }, "UD send, bf_size 0");
		expect_bf(want, before, 0, memqp_block(&g.t, pi), 8);
		assert_bf(&g.t, want, "bf_size 0");
		assert_bf(&g.v, want, "bf_size 0");
	}
	rig_close(&g);
}

/* fv_ring with nothing built since the last one: no register write, dbrec unchanged. */
Test(send_wqe, ring_with_nothing_new_writes_nothing)
{
	struct memqp m;
	struct fv_rc *rc = (struct fv_rc *)&m.qp;
	uint8_t before[512];
	__be32 dbr;

	struct memqp_cfg c = cfg(FV_QPT_RC, 16, 0x1234);

	memqp_init(&m, &c);
	poison(m.bf, 512, 0x77);
	memcpy(before, m.bf, 512);
	dbr = m.dbrec[MLX5_SND_DBR];
	fv_ring(rc);
	cr_assert_arr_eq(m.bf, before, 512, "fresh QP: register written");
	cr_assert_eq(m.dbrec[MLX5_SND_DBR], dbr);

	cr_assert_eq(fv_nop(rc, 1, 0), 0);
	fv_ring(rc);
	poison(m.bf, 512, 0x78);
	memcpy(before, m.bf, 512);
	dbr = m.dbrec[MLX5_SND_DBR];
	cr_assert_eq(be32toh(dbr), 0x1235);
	fv_ring(rc);
	fv_ring(rc);
	cr_assert_arr_eq(m.bf, before, 512, "second ring: register written");
	cr_assert_eq(m.dbrec[MLX5_SND_DBR], dbr);
	/* and the half did not advance: the next real doorbell goes to 0x100 */
	cr_assert_eq(fv_nop(rc, 2, 0), 0);
	fv_ring(rc);
	cr_assert_arr_eq(m.bf + 0x100, memqp_block(&m, 0x1235), 8);
	memqp_free(&m);
}
