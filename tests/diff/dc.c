/*
 * Differential test on the software device, DC: twin DCIs made by mlx5dv_create_qp, one driven
 * by libmlx5's ibv_wr_* with mlx5dv_wr_set_dc_addr(_stream), the other taken over by fastverbs
 * and driven, round by round, by fv_wr_* on its struct fv_qp, by fv_wr_* on its typed handle,
 * or by the typed builders. Each twin has three DCTs of its own (the same place in both: the
 * same role; map_twin names fastverbs' as libmlx5's); every WR of a seeded random batch goes to
 * one of them, picked per WR, with a random operation (SEND, SEND with immediate, RDMA WRITE
 * with and without immediate, READ, compare-and-swap, fetch-and-add), payload form, flags,
 * stream, and the destination set before or after the payload. Now and then a batch has a
 * call both libraries refuse (too many SGEs, inline too long: ENOMEM) or is aborted, and now
 * and then a WR names a DCT with a wrong key or a DCT number nobody has: both DCIs then end in
 * retry-exceeded and are made again. Small rings, so segments wrap. Compared: the complete's
 * errno, doorbell record, every meaningful WQE byte, the BlueFlame writes, the completions, and
 * what landed (the remote and local buffers, each receive a DCT took, polled by ibv_poll_cq on
 * libmlx5's DCTs and by fv_poll_cq through fv_dct_init on fastverbs'). With BIND_MW and
 * LOCAL_INV among the DCI's operations (libmlx5 44 gives a DCI RC's, and builds their UMR
 * WQEs with no address vector), some WRs bind or invalidate type 2 windows of each twin's own,
 * in all three ways. DIFF_TRACE=1 prints each round.
 */
#include "diff-send.h"
#include "sim-dc.h"
#include "once.h"

#define DC_ROUNDS 6000
#define NDCT      3
#define NRECV     32		/* receives kept posted on each DCT's SRQ */
#define MAX_SGE   20
#define DCKEY     0x0badc0de600dcafeull
#define NO_DCT    0x7fedcbu	/* a DCT number nobody has */
#define MAX_MSGS  (2 * MAX_LIST)
#define NWIN      4		/* type 2 memory windows of each twin (with BIND_MW) */

enum dop { D_SEND, D_SEND_IMM, D_WRITE, D_WRITE_IMM, D_READ, D_CAS, D_FADD, D_BIND, D_LINV, D_OPS };
enum dform { F_SGE, F_SGL, F_INLINE, F_INLINE_LIST };
enum mode { M_WR_QP, M_WR_HANDLE, M_TYPED, M_MODES };
enum dest { DEST_OK, DEST_BAD_KEY, DEST_NO_DCT };

struct dct_set {
	struct ibv_cq *cq;
	struct ibv_srq *srq[NDCT];
	struct ibv_qp *qp[NDCT];
	struct fv_cq fcq;		/* FV's: polled by fastverbs */
	struct fv_srq fsrq[NDCT];
	struct fv_dct fdct[NDCT];
};

struct dstep {
	enum dop op;
	enum dform form;
	unsigned flags;
	uint64_t wr_id, raddr, compare, swap;
	__be32 imm;
	int dct, dest_after;
	enum dest dest;
	uint16_t stream;	/* 0: mlx5dv_wr_set_dc_addr, else _stream */
	uint32_t len;
	size_t n;
	struct ibv_sge sge[MAX_SGE];
	struct ibv_data_buf buf[MAX_SGE];
	int win;		/* D_BIND, D_LINV: which window; tag: its key's low byte */
	uint8_t tag;
	struct ibv_mw_bind_info bind;
};

struct dbatch {
	struct dstep s[MAX_LIST];
	int n, abort, want;
	enum mode mode;
};

static struct dct_set dcts[2];
static struct fv_ah fah;

/*
 * Each twin's type 2 windows (the same place: the same role; twin.win_map names them) and what
 * the generator expects of them: bound or not, the key's tag. with_mw: the DCIs have BIND_MW
 * and LOCAL_INV.
 */
static struct {
	struct ibv_mw *mw[2][NWIN];
	bool bound[NWIN];
	uint8_t tag[NWIN];
} wins;
static bool with_mw;

static void wins_open(struct env *e, struct twin *t)
{
	t->nwin_map = NWIN;
	for (int i = 0; i < NWIN; i++) {
		for (int s = LIB; s <= FV; s++) {
			wins.mw[s][i] = ibv_alloc_mw(e->d.pd, IBV_MW_TYPE_2);
			cr_assert(wins.mw[s][i], "ibv_alloc_mw: %s", strerror(errno));
			t->win_map[i][s] = wins.mw[s][i]->rkey;
		}
		wins.bound[i] = false;
		wins.tag[i] = (uint8_t)wins.mw[LIB][i]->rkey;
	}
}

static void wins_close(void)
{
	for (int i = 0; i < NWIN; i++)
		for (int s = LIB; s <= FV; s++)
			cr_assert_eq(ibv_dealloc_mw(wins.mw[s][i]), 0);
}

/* A window's key with tag as its low byte. */
static uint32_t win_key(int s, int i, uint8_t tag)
{
	return (wins.mw[s][i]->rkey & ~0xffu) | tag;
}

/*
 * A memory-window step on window w->win, mostly one the device takes: a bind of a free window
 * with a new tag over a range of the local MR with random rights, or an invalidation of a
 * bound one with its key; now and then a stale key. fail: a bind longer than 2 GiB, which both
 * refuse (EOPNOTSUPP). Returns that errno, or 0.
 */
static int make_mw_step(struct env *e, struct dstep *w, bool fail)
{
	static const unsigned rights[] = { IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE,
					   IBV_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_LOCAL_WRITE };
	int i = w->win = (int)rnd(e, NWIN);
	bool odd = rnd(e, 300) == 0;

	if (fail)
		w->op = D_BIND;
	else if (w->op == D_BIND && wins.bound[i] && !odd)
		w->op = D_LINV;
	else if (w->op == D_LINV && !wins.bound[i] && !odd)
		w->op = D_BIND;
	if (w->op == D_LINV) {
		w->tag = (uint8_t)(wins.tag[i] + (odd && !wins.bound[i]));
		wins.bound[i] = false;
		return 0;
	}
	w->tag = ++wins.tag[i];
	wins.bound[i] = true;
	w->bind = (struct ibv_mw_bind_info){ .mr = e->local_mr, .addr = (uintptr_t)e->local + rnd(e, BUF_SIZE / 2),
					     .length = 1 + rnd(e, BUF_SIZE / 2) };
	for (unsigned k = 0; k < 4; k++)
		w->bind.mw_access_flags |= rnd(e, 2) ? rights[k] : 0;
	if (!fail)
		return 0;
	w->bind.length = (1ull << 31) + 1 + rnd(e, 1u << 20);
	return EOPNOTSUPP;
}

static uint64_t recv_id(int s, int d, int k)
{
	return (uint64_t)((s * NDCT + d) * NRECV + k);
}

static uint8_t *recv_buf(struct env *e, uint64_t id)
{
	return e->sinkbuf + id * RECV_SIZE;
}

static void post_recv(struct env *e, int s, uint64_t id)
{
	int d = (int)(id / NRECV) % NDCT;
	struct ibv_sge sge = { (uintptr_t)recv_buf(e, id), RECV_SIZE, e->sink_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (s == LIB)
		cr_assert_eq(ibv_post_srq_recv(dcts[s].srq[d], &wr, &bad), 0);
	else
		cr_assert_eq(fv_post_srq_recv(&dcts[s].fsrq[d], &wr, &bad), 0);
}

static void dcts_open(struct env *e, struct twin *t)
{
	for (int s = LIB; s <= FV; s++) {
		struct dct_set *ds = &dcts[s];

		ds->cq = simt_cq(&e->d, 4 * NDCT * NRECV);
		if (s == FV)
			cr_assert_eq(fv_cq_init(&ds->fcq, ds->cq), 0);
		for (int d = 0; d < NDCT; d++) {
			struct ibv_srq_init_attr sa = { .attr = { .max_wr = 2 * NRECV, .max_sge = 1 } };
			struct dc_cfg c = { .dct = true, .pd = e->d.pd, .cq = ds->cq, .key = DCKEY };

			ds->srq[d] = c.srq = ibv_create_srq(e->d.pd, &sa);
			cr_assert(ds->srq[d], "ibv_create_srq: %s", strerror(errno));
			ds->qp[d] = dc_create(e->d.ctx, &c);
			cr_assert(ds->qp[d], "DCT: %s", strerror(errno));
			cr_assert_eq(dct_up(ds->qp[d], SIMT_ACCESS_ALL, e->d.lid), 0);
			if (s == FV) {
				cr_assert_eq(fv_srq_init(&ds->fsrq[d], ds->srq[d]), 0);
				cr_assert_eq(fv_dct_init(&ds->fdct[d], ds->qp[d], &ds->fsrq[d]), 0);
			}
			for (int k = 0; k < NRECV; k++)
				post_recv(e, s, recv_id(s, d, k));
			t->dct_map[d][s] = ds->qp[d]->qp_num;
		}
	}
	t->ndct_map = NDCT;
}

static void dcts_close(void)
{
	for (int s = LIB; s <= FV; s++) {
		for (int d = 0; d < NDCT; d++) {
			if (s == FV)
				fv_dct_cleanup(&dcts[s].fdct[d]);
			cr_assert_eq(ibv_destroy_qp(dcts[s].qp[d]), 0);
			if (s == FV)
				fv_srq_cleanup(&dcts[s].fsrq[d]);
			cr_assert_eq(ibv_destroy_srq(dcts[s].srq[d]), 0);
		}
		if (s == FV)
			fv_cq_cleanup(&dcts[s].fcq);
		cr_assert_eq(ibv_destroy_cq(dcts[s].cq), 0);
	}
}

/* The twin DCIs (t->qp), brought up, fastverbs' taken over; the DCT map survives. */
static void dci_twins_open(struct env *e, struct twin *t, const struct caps *c)
{
	uint32_t map[8][2], wmap[8][2];
	int nwin = t->nwin_map;

	memcpy(map, t->dct_map, sizeof(map));
	memcpy(wmap, t->win_map, sizeof(wmap));
	memset(t, 0, sizeof(*t));
	memcpy(t->dct_map, map, sizeof(map));
	memcpy(t->win_map, wmap, sizeof(wmap));
	t->nwin_map = nwin;
	t->ndct_map = NDCT;
	t->stale_imm = true;
	for (int s = LIB; s <= FV; s++) {
		struct ibv_qp_init_attr_ex a = {
			.qp_type = IBV_QPT_DRIVER, .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = e->d.pd, .send_ops_flags = c->send_ops, .sq_sig_all = c->sig_all,
			.cap = { .max_send_wr = c->wr, .max_send_sge = c->sge, .max_inline_data = c->inl },
		};
		struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
						  .dc_init_attr = { .dc_type = MLX5DV_DCTYPE_DCI } };

		t->cq[s] = simt_cq(&e->d, 1024);
		a.send_cq = a.recv_cq = t->cq[s];
		t->qp[s] = mlx5dv_create_qp(e->d.ctx, &a, &dv);
		cr_assert(t->qp[s], "DCI: %s", strerror(errno));
		cr_assert_eq(dci_up(t->qp[s], 7), 0);

		struct mlx5dv_obj o = { .qp = { .in = t->qp[s], .out = &t->dv[s] } };

		cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	}
	cr_assert_eq(fv_qp_init(&t->fq, t->qp[FV]), 0);
	cr_assert_eq(t->fq.qpt, FV_QPT_DCI);
	cr_assert_eq(fv_cq_init(&t->fc, t->cq[FV]), 0);
	cr_assert_eq(t->dv[LIB].sq.wqe_cnt, t->dv[FV].sq.wqe_cnt, "twins got different rings");
}

static void dci_twins_close(struct twin *t)
{
	fv_cq_cleanup(&t->fc);
	fv_qp_cleanup(&t->fq);
	for (int s = LIB; s <= FV; s++) {
		cr_assert_eq(ibv_destroy_qp(t->qp[s]), 0);
		cr_assert_eq(ibv_destroy_cq(t->cq[s]), 0);
	}
}

/* One random WR; fail: one both refuse (ENOMEM). Returns that errno, or 0. */
static int make_step(struct env *e, struct dstep *w, const struct ibv_qp_cap *cap, bool fail, bool typed)
{
	memset(w, 0, sizeof(*w));
	w->op = (enum dop)rnd(e, with_mw ? D_OPS : D_BIND);
	w->flags = (rnd(e, 3) == 0 ? IBV_SEND_SIGNALED : 0) | (rnd(e, 8) == 0 ? IBV_SEND_SOLICITED : 0) |
		   (rnd(e, 8) == 0 ? IBV_SEND_FENCE : 0);
	w->wr_id = 0x1000 + rnd(e, 1u << 20);
	w->raddr = (uintptr_t)e->remote + rnd(e, BUF_SIZE / 2) / 8 * 8;
	w->compare = rnd(e, 1000);
	w->swap = rnd(e, 1000);
	w->imm = htobe32((uint32_t)rnd(e, 1u << 31));
	w->dct = (int)rnd(e, NDCT);
	w->dest = rnd(e, 400) ? DEST_OK : rnd(e, 2) ? DEST_BAD_KEY : DEST_NO_DCT;
	w->stream = typed || rnd(e, 3) ? 0 : (uint16_t)(1 + rnd(e, 0xfffe));
	w->dest_after = (int)rnd(e, 2);
	if (w->op == D_BIND || w->op == D_LINV)	/* no destination, no payload */
		return make_mw_step(e, w, fail);
	bool atomic = w->op == D_CAS || w->op == D_FADD, data = w->op != D_READ && !atomic;

	w->form = (enum dform)rnd(e, data ? (typed ? 3 : 4) : 2);
	w->n = atomic ? 1 : rnd(e, (uint64_t)cap->max_send_sge + 1);
	if (w->form == F_INLINE_LIST)
		w->n = 1 + rnd(e, 4);
	for (size_t k = 0; k < MAX_SGE; k++) {
		uint32_t len = atomic ? 8 : (uint32_t)(rnd(e, 4) ? rnd(e, 200) : 0);
		uint8_t *a = e->local + rnd(e, BUF_SIZE / 2) / 8 * 8;

		w->sge[k] = (struct ibv_sge){ .addr = (uintptr_t)a, .length = len, .lkey = e->local_mr->lkey };
		w->buf[k] = (struct ibv_data_buf){ .addr = a, .length = len / 4 };
	}
	w->len = w->sge[0].length;
	if (w->form == F_INLINE)
		w->len = (uint32_t)rnd(e, (uint64_t)cap->max_inline_data + 1);
	for (size_t k = 0, room = cap->max_inline_data; w->form == F_INLINE_LIST && k < w->n; k++) {
		if (w->buf[k].length > room)
			w->buf[k].length = room;
		room -= w->buf[k].length;
	}
	if (!fail)
		return 0;
	if (w->form == F_SGE)
		w->form = F_SGL;
	if (w->form == F_SGL)
		w->n = cap->max_send_sge + 1;
	else if (w->form == F_INLINE)
		w->len = cap->max_inline_data + 1;
	else
		w->buf[w->n - 1].length = cap->max_inline_data + 1;
	return ENOMEM;
}

static void make_batch(struct env *e, struct dbatch *b, const struct ibv_qp_cap *cap, int round)
{
	b->mode = (enum mode)(round % M_MODES);
	int typed = b->mode == M_TYPED;
	int fail_at = !typed && rnd(e, 10) == 0 ? (int)rnd(e, MAX_LIST) : -1;

	b->n = 1 + (int)rnd(e, MAX_LIST);
	b->abort = !typed && rnd(e, 30) == 0;
	b->want = 0;
	for (int i = 0; i < b->n; i++) {
		int err = make_step(e, &b->s[i], cap, i == fail_at, typed);

		b->want = b->want ? b->want : err;
	}
	b->s[b->n - 1].flags |= IBV_SEND_SIGNALED;	/* everything posted completes each round */
}

/* The DCT a step names on twin s, its number and key. */
static uint32_t step_dctn(const struct dstep *w, int s)
{
	return w->dest == DEST_NO_DCT ? NO_DCT : dcts[s].qp[w->dct]->qp_num;
}

static uint64_t step_key(const struct dstep *w)
{
	return w->dest == DEST_BAD_KEY ? DCKEY ^ 1 : DCKEY;
}

/*
 * The batch through ibv_wr_* (P ibv, q an ibv_qp_ex *) or fv_wr_* (P fv, q a struct fv_qp * or
 * struct fv_dci *): the same names, arguments and wr_id / wr_flags members; DEST(w) sets the
 * DC address the API's way. Returns the complete's errno, or 0 after an abort.
 */
#define RUN_WR(P, q, x, b, DEST, mws)                                                                   \
	({                                                                                              \
		P##_wr_start(q);                                                                        \
		for (int i_ = 0; i_ < (b)->n; i_++) {                                                   \
			const struct dstep *w_ = &(b)->s[i_];                                           \
			(x)->wr_id = w_->wr_id;                                                         \
			(x)->wr_flags = w_->flags;                                                      \
			switch (w_->op) {                                                               \
			case D_SEND:      P##_wr_send(q); break;                                        \
			case D_SEND_IMM:  P##_wr_send_imm(q, w_->imm); break;                           \
			case D_WRITE:     P##_wr_rdma_write(q, e->remote_mr->rkey, w_->raddr); break;   \
			case D_WRITE_IMM: P##_wr_rdma_write_imm(q, e->remote_mr->rkey, w_->raddr, w_->imm); break; \
			case D_READ:      P##_wr_rdma_read(q, e->remote_mr->rkey, w_->raddr); break;    \
			case D_CAS:       P##_wr_atomic_cmp_swp(q, e->remote_mr->rkey, w_->raddr,      \
								w_->compare, w_->swap); break;          \
			case D_FADD:      P##_wr_atomic_fetch_add(q, e->remote_mr->rkey, w_->raddr,    \
								  w_->compare); break;                  \
			case D_BIND:      P##_wr_bind_mw(q, (mws)[w_->win],                            \
							 ((mws)[w_->win]->rkey & ~0xffu) | w_->tag, &w_->bind); \
					  continue;	/* the whole WQE: no setters */                 \
			default:          P##_wr_local_inv(q, ((mws)[w_->win]->rkey & ~0xffu) | w_->tag); \
					  continue;                                                     \
			}                                                                               \
			for (int pass_ = 0; pass_ < 2; pass_++) {                                       \
				if (pass_ == w_->dest_after) {                                          \
					DEST(w_);                                                       \
					continue;                                                       \
				}                                                                       \
				switch (w_->form) {                                                     \
				case F_SGE:    P##_wr_set_sge(q, w_->sge[0].lkey, w_->sge[0].addr, w_->len); break; \
				case F_SGL:    P##_wr_set_sge_list(q, w_->n, w_->sge); break;           \
				case F_INLINE: P##_wr_set_inline_data(q, (void *)(uintptr_t)w_->sge[0].addr, \
								      w_->len); break;                  \
				default:       P##_wr_set_inline_data_list(q, w_->n, w_->buf); break;   \
				}                                                                       \
			}                                                                               \
		}                                                                                       \
		int rc_ = 0;                                                                            \
		if ((b)->abort)                                                                         \
			P##_wr_abort(q);                                                                \
		else                                                                                    \
			rc_ = P##_wr_complete(q);                                                       \
		rc_;                                                                                    \
	})

static int run_lib(struct env *e, struct twin *t, const struct dbatch *b)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(t->qp[LIB]);
	struct mlx5dv_qp_ex *dv = mlx5dv_qp_ex_from_ibv_qp_ex(qx);

#define LIB_DEST(w)                                                                              \
	((w)->stream ? mlx5dv_wr_set_dc_addr_stream(dv, e->ah, step_dctn(w, LIB), step_key(w), (w)->stream) \
		     : mlx5dv_wr_set_dc_addr(dv, e->ah, step_dctn(w, LIB), step_key(w)))
	return RUN_WR(ibv, qx, qx, b, LIB_DEST, wins.mw[LIB]);
#undef LIB_DEST
}

/* fastverbs' flags of a step (the typed builders take FV_*). */
static unsigned fv_flags(unsigned f)
{
	return (f & IBV_SEND_SIGNALED ? FV_SIGNALED : 0u) | (f & IBV_SEND_SOLICITED ? FV_SOLICITED : 0u) |
	       (f & IBV_SEND_FENCE ? FV_FENCE : 0u);
}

/* One step through the typed builders (forms SGE, SGL, INLINE). 0 or the builder's errno. */
/* One function per operation: a function with every typed builder expanded in it took the
 * compiler superlinear time (most of this file's compile). Each starts from the step's values. */
#define FORMS(call, ...)                                                                                 \
	(w->form == F_SGE ? fv_##call(h, w->wr_id, fl, &one, __VA_ARGS__)                                \
	 : w->form == F_SGL ? fv_##call##_sgl(h, w->wr_id, fl, w->sge, (int)w->n, __VA_ARGS__)            \
			    : fv_##call##_inline(h, w->wr_id, fl, (void *)(uintptr_t)w->sge[0].addr, w->len, __VA_ARGS__))
#define SGLS(call, ...) \
	(w->form == F_SGE ? fv_##call(h, w->wr_id, fl, &one, __VA_ARGS__) \
			  : fv_##call##_sgl(h, w->wr_id, fl, w->sge, (int)w->n, __VA_ARGS__))
#define STEP_FN(name, expr)                                                                              \
	static __attribute__((noinline)) int name(struct env *e, struct fv_dci *h, const struct dstep *w) \
	{                                                                                                \
		const unsigned fl = fv_flags(w->flags);                                                  \
		const uint32_t rkey = e->remote_mr->rkey, dctn = step_dctn(w, FV);                       \
		const uint64_t key = step_key(w);                                                        \
		struct ibv_sge one = w->sge[0];                                                          \
                                                                                                         \
		one.length = w->len;                                                                     \
		(void)rkey; (void)dctn; (void)key; (void)one;                                            \
		return expr;                                                                             \
	}
STEP_FN(step_send, FORMS(send, &fah, dctn, key))
STEP_FN(step_send_imm, FORMS(send_imm, w->imm, &fah, dctn, key))
STEP_FN(step_write, FORMS(write, w->raddr, rkey, &fah, dctn, key))
STEP_FN(step_write_imm, FORMS(write_imm, w->raddr, rkey, w->imm, &fah, dctn, key))
STEP_FN(step_read, SGLS(read, w->raddr, rkey, &fah, dctn, key))
STEP_FN(step_cas, SGLS(cas, w->raddr, rkey, w->compare, w->swap, &fah, dctn, key))
STEP_FN(step_fadd, SGLS(fadd, w->raddr, rkey, w->compare, &fah, dctn, key))
STEP_FN(step_bind, fv_bind_mw(h, w->wr_id, fl, wins.mw[FV][w->win], win_key(FV, w->win, w->tag), &w->bind))
STEP_FN(step_local_inv, fv_local_inv(h, w->wr_id, fl, win_key(FV, w->win, w->tag)))
#undef STEP_FN
#undef FORMS
#undef SGLS

static int typed_step(struct env *e, struct fv_dci *h, const struct dstep *w)
{
	switch (w->op) {
	case D_SEND:      return step_send(e, h, w);
	case D_SEND_IMM:  return step_send_imm(e, h, w);
	case D_WRITE:     return step_write(e, h, w);
	case D_WRITE_IMM: return step_write_imm(e, h, w);
	case D_READ:      return step_read(e, h, w);
	case D_CAS:       return step_cas(e, h, w);
	case D_FADD:      return step_fadd(e, h, w);
	case D_BIND:      return step_bind(e, h, w);
	default:          return step_local_inv(e, h, w);
	}
}

/* the fv_ah and the ibv_ah, by turns: both must give libmlx5's AV. The two handles' batches
 * in functions of their own, like the typed steps (compile time). */
static __attribute__((noinline)) int run_fv_wr_qp(struct env *e, struct fv_qp *q, const struct dbatch *b)
{
#define FV_DEST_QP(w)                                                                                    \
	((w)->stream ? fv_wr_set_dc_addr_stream(q, e->ah, step_dctn(w, FV), step_key(w), (w)->stream)        \
		     : fv_wr_set_dc_addr(q, &fah, step_dctn(w, FV), step_key(w)))
	return RUN_WR(fv, q, q, b, FV_DEST_QP, wins.mw[FV]);
#undef FV_DEST_QP
}

static __attribute__((noinline)) int run_fv_wr_h(struct env *e, struct fv_dci *h, const struct dbatch *b)
{
	struct fv_qp *q = &h->qp;

#define FV_DEST_H(w)                                                                                     \
	((w)->stream ? fv_wr_set_dc_addr_stream(h, &fah, step_dctn(w, FV), step_key(w), (w)->stream)         \
		     : fv_wr_set_dc_addr(h, e->ah, step_dctn(w, FV), step_key(w)))
	return RUN_WR(fv, h, q, b, FV_DEST_H, wins.mw[FV]);
#undef FV_DEST_H
}

static int run_fv(struct env *e, struct twin *t, const struct dbatch *b)
{
	struct fv_qp *q = &t->fq;
	struct fv_dci *h = (struct fv_dci *)(void *)q;

	if (b->mode == M_TYPED) {
		for (int i = 0; i < b->n; i++)
			cr_assert_eq(typed_step(e, h, &b->s[i]), 0, "typed builder refused step %d", i);
		fv_ring(h);
		return 0;
	}
	if (b->mode == M_WR_QP)
		return run_fv_wr_qp(e, q, b);
	return run_fv_wr_h(e, h, b);
}

/* ---- what landed ---- */

struct landed {
	uint8_t remote[BUF_SIZE], local[BUF_SIZE];
	int n;
	struct ibv_wc wc[MAX_MSGS];
	uint8_t data[MAX_MSGS][256];
};

static struct landed landed[2];
static uint8_t kept_remote[BUF_SIZE], kept_local[BUF_SIZE];

/* Let the device run twin s's batch; keep what its DCTs received (and give the buffers back). */
static void land(struct env *e, int s, struct landed *l)
{
	struct ibv_wc wc[16];
	int n;

	fvsim_run_until_idle();
	l->n = 0;
	while ((n = s == LIB ? ibv_poll_cq(dcts[s].cq, 16, wc) : fv_poll_cq(&dcts[s].fcq, 16, wc)) > 0)
		for (int i = 0; i < n; i++) {
			cr_assert_lt(l->n, MAX_MSGS);
			l->wc[l->n] = wc[i];
			if (wc[i].status == IBV_WC_SUCCESS && wc[i].opcode == IBV_WC_RECV)
				memcpy(l->data[l->n], recv_buf(e, wc[i].wr_id),
				       wc[i].byte_len < 256 ? wc[i].byte_len : 256);
			l->n++;
			post_recv(e, s, wc[i].wr_id);
		}
	cr_assert_geq(n, 0, "polling the DCTs' CQ");
	memcpy(l->remote, e->remote, BUF_SIZE);
	memcpy(l->local, e->local, BUF_SIZE);
}

struct dstats { int posted, refused, aborted, errored, bf, wraps, msgs, remote, local, streams, mws, modes[M_MODES]; };

static void compare_landed(const struct landed *a, const struct landed *b, int round, struct dstats *st)
{
	cr_assert_eq(a->n, b->n, "round %d: the DCTs took %d messages of libmlx5's, %d of fastverbs'", round, a->n, b->n);
	for (int i = 0; i < a->n; i++) {
		const struct ibv_wc *x = &a->wc[i], *y = &b->wc[i];

		/* an error completion's opcode, flags and length are undefined (ibv_poll_cq(3)) */
		cr_assert_eq(x->status, y->status, "round %d, message %d: status %d/%d", round, i, x->status, y->status);
		cr_assert(x->status != IBV_WC_SUCCESS || (x->opcode == y->opcode && x->wc_flags == y->wc_flags &&
							  x->byte_len == y->byte_len),
			  "round %d, message %d: opcode %d/%d flags %#x/%#x len %u/%u", round, i, x->opcode, y->opcode,
			  x->wc_flags, y->wc_flags, x->byte_len, y->byte_len);
		cr_assert_eq(x->wr_id % (NDCT * NRECV) / NRECV, y->wr_id % (NDCT * NRECV) / NRECV,
			     "round %d, message %d: another DCT", round, i);
		cr_assert_eq(x->qp_num, dcts[LIB].qp[x->wr_id % (NDCT * NRECV) / NRECV]->qp_num);
		cr_assert_eq(y->qp_num, dcts[FV].qp[y->wr_id % (NDCT * NRECV) / NRECV]->qp_num);
		st->msgs++;
		if (x->status != IBV_WC_SUCCESS)
			continue;
		if (x->wc_flags & IBV_WC_WITH_IMM)
			cr_assert_eq(x->imm_data, y->imm_data, "round %d, message %d: imm_data", round, i);
		if (x->opcode == IBV_WC_RECV)
			cr_assert_arr_eq(a->data[i], b->data[i], x->byte_len < 256 ? x->byte_len : 256,
					 "round %d, message %d: the data differs", round, i);
	}
	for (int k = 0; k < 2; k++) {
		const uint8_t *x = k ? a->local : a->remote, *y = k ? b->local : b->remote;
		const uint8_t *was = k ? kept_local : kept_remote;
		size_t first = diff_first_diff(x, y, BUF_SIZE);

		cr_assert_eq(first, BUF_SIZE, "round %d: the %s buffer differs at +%#zx", round, k ? "local" : "remote", first);
		if (memcmp(x, was, BUF_SIZE))
			(*(k ? &st->local : &st->remote))++;
	}
}

static void trace(const struct dbatch *b, int round, const int rc[2], uint32_t before, uint32_t after)
{
	fprintf(stderr, "round %d mode %d: %#x -> %#x rc %d/%d abort %d:", round, b->mode, before, after, rc[LIB], rc[FV],
		b->abort);
	for (int i = 0; i < b->n; i++)
		fprintf(stderr, " [op %d form %d fl %#x n %zu len %u dct %d dest %d stream %#x after %d]", b->s[i].op,
			b->s[i].form, b->s[i].flags, b->s[i].n, b->s[i].len, b->s[i].dct, b->s[i].dest, b->s[i].stream,
			b->s[i].dest_after);
	fprintf(stderr, "\n");
}

static void dc_round(struct env *e, struct twin *t, struct dbatch *b, int round, struct dstats *st)
{
	uint8_t reg[2][REG_BYTES];
	uint32_t before = sq_dbr(&t->dv[LIB]);
	int rc[2];

	cr_assert_eq(sq_dbr(&t->dv[FV]), before, "round %d: twins out of step", round);
	memcpy(kept_remote, e->remote, BUF_SIZE);
	memcpy(kept_local, e->local, BUF_SIZE);
	memset(t->dv[LIB].bf.reg, 0, REG_BYTES);
	rc[LIB] = run_lib(e, t, b);
	memcpy(reg[LIB], t->dv[LIB].bf.reg, REG_BYTES);
	land(e, LIB, &landed[LIB]);
	memcpy(e->remote, kept_remote, BUF_SIZE);
	memcpy(e->local, kept_local, BUF_SIZE);
	memset(t->dv[FV].bf.reg, 0, REG_BYTES);
	rc[FV] = run_fv(e, t, b);
	memcpy(reg[FV], t->dv[FV].bf.reg, REG_BYTES);
	land(e, FV, &landed[FV]);

	uint32_t after = sq_dbr(&t->dv[LIB]);

	if (diff_trace())
		trace(b, round, rc, before, after);
	cr_assert_eq(rc[LIB], rc[FV], "round %d: ibv_wr_complete %d, fastverbs %d", round, rc[LIB], rc[FV]);
	cr_assert_eq(rc[FV], b->abort ? 0 : b->want, "round %d: errno %d, want %d", round, rc[FV], b->want);
	cr_assert_eq(sq_dbr(&t->dv[FV]), after, "round %d: doorbell record %#x vs %#x", round, after, sq_dbr(&t->dv[FV]));
	compare_rings(t, before, after, IBV_QPT_UD, round);	/* UD's layout: the AV after the ctrl */
	compare_reg(e, t, reg, IBV_QPT_UD, after != before, 0, before, after, round);
	compare_landed(&landed[LIB], &landed[FV], round, st);
	st->posted += after != before;
	st->refused += rc[LIB] != 0;
	st->aborted += b->abort;
	st->bf += after != before && (!diff_zero(reg[FV] + 8, 56) || !diff_zero(reg[FV] + REG_BYTES / 2 + 8, 56));
	st->wraps += (after & (t->dv[LIB].sq.wqe_cnt - 1)) < (before & (t->dv[LIB].sq.wqe_cnt - 1));
	st->modes[b->mode] += after != before;
	for (int i = 0; i < b->n && after != before; i++) {
		st->streams += b->s[i].stream != 0;
		st->mws += b->s[i].op == D_BIND || b->s[i].op == D_LINV;
	}
}

static void run_dc(const struct caps *c, uint64_t seed)
{
	struct env e;
	struct twin t;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct dbatch b;
	struct dstats st = { 0 };
	struct diff_wcs w;

	env_open(&e, c, seed);
	for (size_t i = 0; i < BUF_SIZE; i++) {
		e.local[i] = (uint8_t)(i * 131 + (i >> 8));
		e.remote[i] = (uint8_t)~(i * 71 + (i >> 9));
	}
	cr_assert_eq(fv_ah_init(&fah, e.ah), 0);
	memset(&t, 0, sizeof(t));
	with_mw = c->send_ops & IBV_QP_EX_WITH_BIND_MW;
	if (with_mw)
		wins_open(&e, &t);
	dcts_open(&e, &t);
	dci_twins_open(&e, &t, c);
	cr_assert_eq(ibv_query_qp(t.qp[LIB], &attr, IBV_QP_CAP, &init), 0);
	for (int round = 0; round < DC_ROUNDS; round++) {
		struct diff_qpns qps = { { { t.qp[LIB]->qp_num, t.qp[FV]->qp_num } }, 1 }, none = { .n = 0 };

		make_batch(&e, &b, &attr.cap, round);
		dc_round(&e, &t, &b, round, &st);
		if (diff_poll_compare(t.cq[LIB], &t.fc, &w, &qps, &none, "send", round)) {
			/* both DCIs in error (a wrong key, no such DCT, a window the device
			 * refused): new ones, and new windows (a type 2 window stays bound to the
			 * QP it was bound by, which only that QP may invalidate) */
			st.errored++;
			dci_twins_close(&t);
			if (with_mw) {
				wins_close();
				wins_open(&e, &t);
			}
			dci_twins_open(&e, &t, c);
		}
	}
	cr_log_info("DCI sge %u inline %u wr %u sig_all %d%s: %d rounds, %d posted (fv_wr_* on the QP %d, on the handle "
		    "%d, typed %d), %d refused alike, %d aborted, %d lone WQEs by BlueFlame, %d ended in error, %d ring "
		    "wraps, %d WRs with a stream, %d memory-window WQEs; arrived alike: %d messages, %d rounds' remote and %d rounds' local writes",
		    attr.cap.max_send_sge, attr.cap.max_inline_data, attr.cap.max_send_wr, c->sig_all,
		    c->no_bf ? " doorbell-only" : "", DC_ROUNDS, st.posted, st.modes[M_WR_QP], st.modes[M_WR_HANDLE],
		    st.modes[M_TYPED], st.refused, st.aborted, st.bf, st.errored, st.wraps, st.streams, st.mws, st.msgs, st.remote,
		    st.local);
	cr_assert_gt(st.posted, DC_ROUNDS / 2, "too few rounds posted anything");
	for (int m = 0; m < M_MODES; m++)
		cr_assert_gt(st.modes[m], 0, "mode %d never posted", m);
	cr_assert_gt(st.refused, 0, "no refused batch exercised");
	cr_assert_gt(st.aborted, 0, "no abort exercised");
	cr_assert_gt(st.wraps, 0, "the ring never wrapped");
	cr_assert_gt(st.errored, 0, "no wrong key or absent DCT exercised");
	cr_assert_gt(st.streams, 0, "no stream exercised");
	cr_assert(!with_mw || st.mws > 0, "no memory-window WQE posted");
	cr_assert_gt(st.msgs, 0, "no message compared");
	cr_assert_gt(st.remote, 0, "no remote write compared");
	cr_assert_gt(st.local, 0, "no READ or atomic result compared");
	if (!c->no_bf)
		cr_assert_gt(st.bf, 0, "no BlueFlame copy compared");
	dci_twins_close(&t);
	dcts_close();
	if (with_mw)
		wins_close();
	env_close(&e);
}

#define OPS_DCI (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE | \
		 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

TestSuite(sim_diff_dc, .timeout = 600);

Test(sim_diff_dc, dci_1sge_no_inline)    { run_dc(&(struct caps){ IBV_QPT_DRIVER, 16, 1, 0, 0, 0, OPS_DCI }, 41); }
Test(sim_diff_dc, dci_4sge_inline64)     { run_dc(&(struct caps){ IBV_QPT_DRIVER, 16, 4, 64, 0, 0, OPS_DCI }, 42); }
Test(sim_diff_dc, dci_8sge_inline128_sig_all) { run_dc(&(struct caps){ IBV_QPT_DRIVER, 32, 8, 128, 1, 0, OPS_DCI }, 43); }
Test(sim_diff_dc, dci_4sge_inline64_doorbell_only) { run_dc(&(struct caps){ IBV_QPT_DRIVER, 16, 4, 64, 0, 1, OPS_DCI }, 44); }
/* libmlx5 44 gives a DCI RC's operations, memory windows included (MLX5_SUPPORTED_SEND_OPS_FLAGS_DCI) */
Test(sim_diff_dc, dci_memory_windows)    { run_dc(&(struct caps){ IBV_QPT_DRIVER, 16, 4, 64, 0, 0,
							   OPS_DCI | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV }, 45); }
