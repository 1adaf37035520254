/*
 * Differential test on the software device, the ibv_wr_* API: twin QPs made by
 * ibv_create_qp_ex with send_ops_flags, one driven by libmlx5's ibv_wr_*, the other taken
 * over by fastverbs and driven by fv_wr_* on its struct fv_qp. Every round runs the same
 * seeded random batch on both: builders with random operands and wr_flags, the destination
 * setter (UD, XRC) before or after the payload setter (one SGE, an SGE list, inline data, an
 * inline list), and on RC, UC and XRC memory-window builders (bind a type 2 window of the
 * twin's own, invalidate it); now and then a call both libraries refuse (too many SGEs,
 * inline data past max_inline_data: ENOMEM; a bind longer than 2 GiB: EOPNOTSUPP; part-way
 * through the batch), an abort, or a bind the device refuses (the window is bound already).
 * Compared, with the engine of tests/lib/diff-send.h: fv_wr_complete's return against
 * ibv_wr_complete's, doorbell record, every meaningful WQE byte (fastverbs' windows named as
 * libmlx5's twin's, map_twin), what each wrote to its BlueFlame/doorbell register, the data
 * that arrives and the completions. The data: the device runs libmlx5's batch alone first;
 * what it wrote (the remote buffer of WRITEs and atomics, the local one of READ and atomic
 * results, each message a sink received, with its completion) is kept and the two buffers
 * put back as they were; then fastverbs' batch runs and must leave the same. DIFF_TRACE=1
 * prints each round.
 */
#include "diff-send.h"
#include "once.h"

#define WR_ROUNDS 20000
#define MAX_SGE   20

#define NWIN      2		/* type 2 windows per twin */
#define MAX_MSGS  (2 * MAX_LIST)

enum wop { W_SEND, W_SEND_IMM, W_SEND_INV, W_WRITE, W_WRITE_IMM, W_READ, W_CAS, W_FADD, W_BIND, W_LINV, W_OPS };
enum wform { F_SGE, F_SGL, F_INLINE, F_INLINE_LIST };

/* The send_ops_flags bit of each builder (what the QP was created for). */
static const uint64_t wop_flag[W_OPS] = {
	IBV_QP_EX_WITH_SEND, IBV_QP_EX_WITH_SEND_WITH_IMM, IBV_QP_EX_WITH_SEND_WITH_INV,
	IBV_QP_EX_WITH_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, IBV_QP_EX_WITH_RDMA_READ,
	IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	IBV_QP_EX_WITH_BIND_MW, IBV_QP_EX_WITH_LOCAL_INV,
};

/*
 * Each twin's type 2 windows (the same place in both arrays: the same role) and what the
 * generator expects of them once a batch has run: bound or not, the key's tag.
 */
struct wins {
	struct ibv_mw *mw[2][NWIN];
	bool bound[NWIN];
	uint8_t tag[NWIN];
};

static void wins_open(struct env *e, struct twin *t, struct wins *w)
{
	t->nwin_map = NWIN;
	for (int i = 0; i < NWIN; i++) {
		for (int s = LIB; s <= FV; s++) {
			w->mw[s][i] = ibv_alloc_mw(e->d.pd, IBV_MW_TYPE_2);
			cr_assert(w->mw[s][i], "ibv_alloc_mw: %s", strerror(errno));
			t->win_map[i][s] = w->mw[s][i]->rkey;
		}
		w->bound[i] = false;
		w->tag[i] = (uint8_t)w->mw[LIB][i]->rkey;
	}
}

static void wins_close(struct wins *w)
{
	for (int i = 0; i < NWIN; i++)
		for (int s = LIB; s <= FV; s++)
			cr_assert_eq(ibv_dealloc_mw(w->mw[s][i]), 0);
}

struct wstep {
	enum wop op;
	enum wform form;
	unsigned flags;		/* IBV_SEND_*, INLINE and IP_CSUM included at random (no effect) */
	uint64_t wr_id, raddr, compare, swap;
	__be32 imm;
	uint32_t srqn, len;	/* len: F_SGE's length */
	int dest_after;
	size_t n;		/* F_SGL: SGEs; F_INLINE_LIST: buffers */
	struct ibv_sge sge[MAX_SGE];
	struct ibv_data_buf buf[MAX_SGE];
	int win;		/* W_BIND, W_LINV: which window; tag: its key's low byte */
	uint8_t tag;
	struct ibv_mw_bind_info bind;
};

struct wbatch {
	struct wstep s[MAX_LIST];
	int n, abort, want;	/* want: the errno both must return */
};

static bool wop_atomic(enum wop o)
{
	return o == W_CAS || o == W_FADD;
}

/*
 * A memory-window step on window w->win, valid for what ws expects (which it updates): a
 * bind of a free window with a new tag, a range of the local MR and random rights, or an
 * invalidation of a bound one with its key. Rarely one the device refuses (MW_BIND_ERR: a
 * bound window bound again, a stale key). fail: a bind longer than 2 GiB (EOPNOTSUPP).
 */
static int make_mw_step(struct env *e, struct wstep *w, struct wins *ws, bool fail)
{
	static const unsigned rights[] = { IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE,
					   IBV_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_LOCAL_WRITE };
	int i = w->win = (int)rnd(e, NWIN);
	bool odd = rnd(e, 300) == 0;

	if (fail)
		w->op = W_BIND;
	else if (w->op == W_BIND && ws->bound[i] && !odd)
		w->op = W_LINV;
	else if (w->op == W_LINV && !ws->bound[i] && !odd)
		w->op = W_BIND;
	if (w->op == W_LINV) {
		w->tag = (uint8_t)(ws->tag[i] + (odd && !ws->bound[i]));	/* a stale key */
		ws->bound[i] = false;
		return 0;
	}
	uint64_t off = rnd(e, BUF_SIZE / 2);

	w->tag = ++ws->tag[i];
	ws->bound[i] = true;
	w->bind = (struct ibv_mw_bind_info){ .mr = e->local_mr, .addr = (uintptr_t)e->local + off,
					     .length = 1 + rnd(e, BUF_SIZE / 2) };
	for (unsigned k = 0; k < 4; k++)
		w->bind.mw_access_flags |= rnd(e, 2) ? rights[k] : 0;
	if (!fail)
		return 0;
	w->bind.length = (1ull << 31) + 1 + rnd(e, 1u << 20);
	return EOPNOTSUPP;
}

/*
 * One random WQE; fail: make it one both libraries refuse (ENOMEM from its payload setter,
 * or EOPNOTSUPP from a bind longer than 2 GiB). Returns that errno, or 0.
 */
static int make_step(struct env *e, struct wstep *w, const struct caps *c, const struct ibv_qp_cap *cap, bool fail,
		     struct wins *ws)
{
	memset(w, 0, sizeof(*w));
	do	/* SEND with invalidate: rare, it fails at the responder (no memory window to invalidate) */
		w->op = (enum wop)rnd(e, W_OPS);
	while (!(c->send_ops & wop_flag[w->op]) || (w->op == W_SEND_INV && rnd(e, 500)));
	w->flags = (rnd(e, 3) == 0 ? IBV_SEND_SIGNALED : 0) | (rnd(e, 8) == 0 ? IBV_SEND_SOLICITED : 0) |
		   (rnd(e, 8) == 0 ? IBV_SEND_FENCE : 0) | (rnd(e, 8) == 0 ? IBV_SEND_INLINE : 0) |
		   (rnd(e, 8) == 0 ? IBV_SEND_IP_CSUM : 0);
	w->wr_id = 0x1000 + rnd(e, 1u << 20);
	w->raddr = (uintptr_t)e->remote + rnd(e, BUF_SIZE / 2) / 8 * 8;
	w->compare = rnd(e, 1000);
	w->swap = rnd(e, 1000);
	w->imm = htobe32((uint32_t)rnd(e, 1u << 31));
	w->srqn = rnd(e, 5000) == 0 ? BAD_SRQN : e->srqn[rnd(e, XRC_SRQS)];
	w->dest_after = (int)rnd(e, 2);
	bool atomic = wop_atomic(w->op), data = w->op != W_READ && !atomic;

	w->form = (enum wform)rnd(e, data ? 4 : 2);
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
	if ((w->op == W_BIND || w->op == W_LINV) || (fail && (c->send_ops & IBV_QP_EX_WITH_BIND_MW) && rnd(e, 3) == 0))
		return make_mw_step(e, w, ws, fail);
	if (w->form == F_INLINE)
		w->len = (uint32_t)rnd(e, (uint64_t)cap->max_inline_data + 1);
	for (size_t k = 0, room = cap->max_inline_data; w->form == F_INLINE_LIST && k < w->n; k++) {
		if (w->buf[k].length > room)	/* within max_inline_data, unless it is to fail */
			w->buf[k].length = room;
		room -= w->buf[k].length;
	}
	if (!fail)
		return 0;
	if (w->form == F_SGE)
		w->form = F_SGL;
	if (w->form == F_SGL)
		w->n = cap->max_send_sge + 1 + rnd(e, 3);
	else if (w->form == F_INLINE)
		w->len = cap->max_inline_data + 1;
	else
		w->buf[w->n - 1].length = cap->max_inline_data + 1;
	return ENOMEM;
}

/* ws: what the windows will be if the batch runs (the caller keeps the state before). */
static void make_batch(struct env *e, struct wbatch *b, const struct caps *c, const struct ibv_qp_cap *cap,
		       struct wins *ws)
{
	int fail_at = rnd(e, 10) == 0 ? (int)rnd(e, MAX_LIST) : -1;

	b->n = 1 + (int)rnd(e, MAX_LIST);
	b->abort = rnd(e, 30) == 0;
	b->want = 0;
	for (int i = 0; i < b->n; i++) {
		int err = make_step(e, &b->s[i], c, cap, i == fail_at, ws);

		b->want = b->want ? b->want : err;
	}
	b->s[b->n - 1].flags |= IBV_SEND_SIGNALED;	/* everything posted completes each round */
}

/*
 * The batch through one API: P is ibv (q an ibv_qp_ex *) or fv (q a struct fv_qp *); the
 * two have the same names, arguments and wr_id / wr_flags members; mws: the twin's windows.
 * Returns the complete's errno, or 0 after an abort.
 */
#define RUN_BATCH(P, q, b, ah, remote_qpn, mws)                                                         \
	({                                                                                              \
		P##_wr_start(q);                                                                        \
		for (int i_ = 0; i_ < (b)->n; i_++) {                                                   \
			const struct wstep *w_ = &(b)->s[i_];                                           \
			(q)->wr_id = w_->wr_id;                                                         \
			(q)->wr_flags = w_->flags;                                                      \
			switch (w_->op) {                                                               \
			case W_SEND:      P##_wr_send(q); break;                                        \
			case W_SEND_IMM:  P##_wr_send_imm(q, w_->imm); break;                           \
			case W_SEND_INV:  P##_wr_send_inv(q, be32toh(w_->imm)); break;                  \
			case W_WRITE:     P##_wr_rdma_write(q, e->remote_mr->rkey, w_->raddr); break;   \
			case W_WRITE_IMM: P##_wr_rdma_write_imm(q, e->remote_mr->rkey, w_->raddr, w_->imm); break; \
			case W_READ:      P##_wr_rdma_read(q, e->remote_mr->rkey, w_->raddr); break;    \
			case W_CAS:       P##_wr_atomic_cmp_swp(q, e->remote_mr->rkey, w_->raddr,      \
								w_->compare, w_->swap); break;          \
			case W_FADD:      P##_wr_atomic_fetch_add(q, e->remote_mr->rkey, w_->raddr,    \
								  w_->compare); break;                  \
			case W_BIND:      P##_wr_bind_mw(q, (mws)[w_->win],                            \
							 ((mws)[w_->win]->rkey & ~0xffu) | w_->tag, &w_->bind); \
					  continue;                                                     \
			default:          P##_wr_local_inv(q, ((mws)[w_->win]->rkey & ~0xffu) | w_->tag); \
					  continue;                                                     \
			}                                                                               \
			for (int pass_ = 0; pass_ < 2; pass_++) {                                       \
				if (pass_ == w_->dest_after) {                                          \
					if (c->type == IBV_QPT_UD)                                      \
						P##_wr_set_ud_addr(q, ah, remote_qpn, QKEY);            \
					else if (c->type == IBV_QPT_XRC_SEND)                           \
						P##_wr_set_xrc_srqn(q, w_->srqn);                       \
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

struct wstats { int posted, refused, aborted, errored, bf, wraps, umr, msgs, remote, local, too_long; };

static void trace_batch(const struct wbatch *b, int round, const int rc[2], uint32_t before, uint32_t after)
{
	fprintf(stderr, "round %d: %#x -> %#x rc %d/%d abort %d:", round, before, after, rc[LIB], rc[FV], b->abort);
	for (int i = 0; i < b->n; i++)
		fprintf(stderr, " [op %d form %d fl %#x n %zu len %u after %d win %d tag %#x]", b->s[i].op, b->s[i].form,
			b->s[i].flags, b->s[i].n, b->s[i].len, b->s[i].dest_after, b->s[i].win, b->s[i].tag);
	fprintf(stderr, "\n");
}

/* ---- the data that arrives ---- */

/* What one twin's batch left: the two buffers, and each message a sink took, in order. */
struct landed {
	uint8_t remote[BUF_SIZE], local[BUF_SIZE];
	int n;
	struct ibv_wc wc[MAX_MSGS];
	uint8_t data[MAX_MSGS][RECV_SIZE];
};

static struct landed landed[2];
static uint8_t kept_remote[BUF_SIZE], kept_local[BUF_SIZE];

static void land_msg(struct landed *l, const struct ibv_wc *wc, const uint8_t *buf, int round)
{
	if (diff_trace())
		fprintf(stderr, "  landed: wr_id %#llx status %d opcode %d len %u qp %#x\n", (unsigned long long)wc->wr_id,
			wc->status, wc->opcode, wc->byte_len, wc->qp_num);
	(void)round;
	if (l->n < MAX_MSGS) {	/* more: a sink in error flushed all its receives */
		l->wc[l->n] = *wc;
		if (wc->status == IBV_WC_SUCCESS && wc->opcode == IBV_WC_RECV)
			memcpy(l->data[l->n], buf, wc->byte_len < RECV_SIZE ? wc->byte_len : RECV_SIZE);
	}
	l->n++;
}

/* Let the device run what is posted; keep what arrived (the sinks' receives are given back later). */
static void land(struct env *e, struct twin *t, struct landed *l, int round)
{
	struct ibv_wc wc[16];
	int n;

	fvsim_run_until_idle();
	l->n = 0;
	for (int s = LIB; s <= FV && t->sink_cq[LIB]; s++)
		while ((n = ibv_poll_cq(t->sink_cq[s], 16, wc)) > 0)
			for (int i = 0; i < n; i++) {
				t->sink_posted[s]--;
				land_msg(l, &wc[i], e->sinkbuf + (size_t)wc[i].wr_id * RECV_SIZE, round);
			}
	while (e->xrcd && (n = ibv_poll_cq(e->xcq, 16, wc)) > 0)
		for (int i = 0; i < n; i++) {
			xrc_done(e, wc[i].wr_id);
			land_msg(l, &wc[i], xrc_buf(e, wc[i].wr_id), round);
		}
	memcpy(l->remote, e->remote, BUF_SIZE);
	memcpy(l->local, e->local, BUF_SIZE);
}

/* The two twins' landings: the same messages (completion and bytes) and the same buffers. */
/* grh: bytes a receive starts with that are no data (UD: the 40-byte GRH room, left as it was). */
static void compare_landed(const struct landed *a, const struct landed *b, uint32_t grh, int round,
			   struct wstats *st)
{
	cr_assert_eq(a->n, b->n, "round %d: the sinks took %d messages of libmlx5's, %d of fastverbs'", round, a->n,
		     b->n);
	for (int i = 0; i < a->n && i < MAX_MSGS; i++) {
		const struct ibv_wc *x = &a->wc[i], *y = &b->wc[i];

		/* an error completion's opcode and flags are undefined (ibv_poll_cq(3)): status only */
		cr_assert_eq(x->status, y->status, "round %d, message %d: status %d/%d", round, i, x->status, y->status);
		if (x->status != IBV_WC_SUCCESS)
			continue;
		cr_assert(x->opcode == y->opcode && x->wc_flags == y->wc_flags,
			  "round %d, message %d: opcode %d/%d wc_flags %#x/%#x", round, i, x->opcode, y->opcode,
			  x->wc_flags, y->wc_flags);
		cr_assert_eq(x->byte_len, y->byte_len, "round %d, message %d: byte_len", round, i);
		if (x->wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV))
			cr_assert_eq(x->imm_data, y->imm_data, "round %d, message %d: imm_data", round, i);
		if (x->opcode != IBV_WC_RECV)	/* WRITE with immediate: its data is in the remote buffer */
			continue;
		cr_assert_geq(x->byte_len, grh, "round %d, message %d: shorter than the GRH", round, i);
		cr_assert_arr_eq(a->data[i] + grh, b->data[i] + grh,
				 (x->byte_len < RECV_SIZE ? x->byte_len : RECV_SIZE) - grh,
				 "round %d, message %d: the data differs", round, i);
		st->msgs++;
	}
	for (int k = 0; k < 2; k++) {
		const uint8_t *x = k ? a->local : a->remote, *y = k ? b->local : b->remote;
		const uint8_t *was = k ? kept_local : kept_remote;
		size_t first = diff_first_diff(x, y, BUF_SIZE);

		cr_assert_eq(first, BUF_SIZE, "round %d: the %s buffer differs at +%#zx: %02x vs %02x", round,
			     k ? "local" : "remote", first, x[first], y[first]);
		if (memcmp(x, was, BUF_SIZE))
			(*(k ? &st->local : &st->remote))++;
	}
}

/* One batch on both twins, one after the other; compare everything either may have written. */
static void wr_round(struct env *e, struct twin *t, const struct caps *c, struct wbatch *b, int round,
		     struct wstats *st, struct wins *ws)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(t->qp[LIB]);
	struct fv_qp *fq = &t->fq;
	uint32_t rqpn = t->sink[LIB]->qp_num;	/* UD: one sink, the same AV bytes */
	uint8_t reg[2][REG_BYTES];
	uint32_t before = sq_dbr(&t->dv[LIB]);
	int rc[2];

	cr_assert_eq(sq_dbr(&t->dv[FV]), before, "round %d: twins out of step", round);
	memcpy(kept_remote, e->remote, BUF_SIZE);
	memcpy(kept_local, e->local, BUF_SIZE);
	memset(t->dv[LIB].bf.reg, 0, REG_BYTES);
	rc[LIB] = RUN_BATCH(ibv, qx, b, e->ah, rqpn, ws->mw[LIB]);
	memcpy(reg[LIB], t->dv[LIB].bf.reg, REG_BYTES);
	land(e, t, &landed[LIB], round);
	memcpy(e->remote, kept_remote, BUF_SIZE);	/* fastverbs' batch meets what libmlx5's met */
	memcpy(e->local, kept_local, BUF_SIZE);
	memset(t->dv[FV].bf.reg, 0, REG_BYTES);
	rc[FV] = RUN_BATCH(fv, fq, b, e->ah, rqpn, ws->mw[FV]);
	memcpy(reg[FV], t->dv[FV].bf.reg, REG_BYTES);
	land(e, t, &landed[FV], round);

	uint32_t after = sq_dbr(&t->dv[LIB]);

	if (diff_trace())
		trace_batch(b, round, rc, before, after);
	cr_assert_eq(rc[LIB], rc[FV], "round %d: ibv_wr_complete %d, fv_wr_complete %d", round, rc[LIB], rc[FV]);
	cr_assert_eq(rc[FV], b->abort ? 0 : b->want, "round %d: errno %d, want %d", round, rc[FV], b->want);
	cr_assert_eq(sq_dbr(&t->dv[FV]), after, "round %d: doorbell record %#x vs %#x", round, after,
		     sq_dbr(&t->dv[FV]));
	cr_assert(after == before || (!rc[LIB] && !b->abort), "round %d: a failed batch moved the doorbell record",
		  round);
	compare_rings(t, before, after, c->type, round);
	compare_reg(e, t, reg, c->type, after != before, 0, before, after, round);
	compare_landed(&landed[LIB], &landed[FV], c->type == IBV_QPT_UD ? 40 : 0, round, st);
	st->posted += after != before;
	st->refused += rc[LIB] != 0;
	st->too_long += rc[LIB] == EOPNOTSUPP;
	st->aborted += b->abort;
	st->bf += after != before && (!diff_zero(reg[FV] + 8, 56) || !diff_zero(reg[FV] + REG_BYTES / 2 + 8, 56));
	st->wraps += (after & (t->dv[LIB].sq.wqe_cnt - 1)) < (before & (t->dv[LIB].sq.wqe_cnt - 1));
	for (int i = 0; i < b->n && after != before; i++)
		st->umr += b->s[i].op == W_BIND || b->s[i].op == W_LINV;
}

static void run_wr(const struct caps *c, uint64_t seed)
{
	struct env e;
	struct twin t;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct wbatch b;
	struct wstats st = { 0 };
	struct diff_wcs w;
	struct wins ws;

	env_open(&e, c, seed);
	for (size_t i = 0; i < BUF_SIZE; i++) {	/* so that a WRITE, READ or atomic shows */
		e.local[i] = (uint8_t)(i * 131 + (i >> 8));
		e.remote[i] = (uint8_t)~(i * 71 + (i >> 9));
	}
	twin_open(&e, &t, c);
	wins_open(&e, &t, &ws);
	cr_assert_eq(ibv_query_qp(t.qp[LIB], &attr, IBV_QP_CAP, &init), 0);
	for (int round = 0; round < WR_ROUNDS; round++) {
		struct diff_qpns qps = { { { t.qp[LIB]->qp_num, t.qp[FV]->qp_num } }, 1 }, none = { .n = 0 };
		struct wins was = ws;

		make_batch(&e, &b, c, &attr.cap, &ws);
		wr_round(&e, &t, c, &b, round, &st, &ws);
		if (b.abort || b.want)
			ws = was;	/* nothing of the batch ran */
		if (diff_poll_compare(t.cq[LIB], &t.fc, &w, &qps, &none, "send", round)) {
			/* both twins in the error state (XRC: an unknown SRQ; a bind the device
			 * refused): again, with fresh windows (the old ones may be bound to the
			 * old QPs) */
			st.errored++;
			wins_close(&ws);
			twin_close(&t);
			twin_open(&e, &t, c);
			wins_open(&e, &t, &ws);
		}
		sinks_settle(&e, &t);
	}
	cr_log_info("%s sge %u inline %u sig_all %d ops %#llx%s: %d rounds, %d posted, %d refused alike, "
		    "%d aborted, %d lone WQEs copied by BlueFlame, %d ended in error, %d ring wraps, %d window WQEs "
		    "posted, %d binds over 2 GiB refused; arrived alike: %d messages, %d rounds' remote and %d rounds' "
		    "local writes", type_name(c->type), attr.cap.max_send_sge, attr.cap.max_inline_data, c->sig_all,
		    (unsigned long long)c->send_ops, c->no_bf ? " doorbell-only" : "", WR_ROUNDS, st.posted, st.refused,
		    st.aborted, st.bf, st.errored, st.wraps, st.umr, st.too_long, st.msgs, st.remote, st.local);
	cr_assert_gt(st.posted, WR_ROUNDS / 2, "too few rounds posted anything");
	cr_assert_gt(st.refused, 0, "no refused batch exercised");
	cr_assert_gt(st.aborted, 0, "no abort exercised");
	cr_assert_gt(st.wraps, 0, "the ring never wrapped");
	cr_assert_gt(st.msgs, 0, "no message compared");
	if (c->send_ops & IBV_QP_EX_WITH_RDMA_WRITE)
		cr_assert_gt(st.remote, 0, "no remote write compared");
	if (c->send_ops & IBV_QP_EX_WITH_RDMA_READ)
		cr_assert_gt(st.local, 0, "no READ or atomic result compared");
	if (c->send_ops & IBV_QP_EX_WITH_BIND_MW) {
		cr_assert_gt(st.umr, 0, "no memory-window WQE posted");
		cr_assert_gt(st.too_long, 0, "no bind over 2 GiB refused");
	}
	if (c->type == IBV_QPT_XRC_SEND)
		cr_assert_gt(st.errored, 0, "no unknown SRQ number exercised");
	wins_close(&ws);
	twin_close(&t);
	env_close(&e);
}

#define OPS_MW  (IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV)
#define OPS_RC  (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV | \
		 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | OPS_MW)
#define OPS_UC  (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV | \
		 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | OPS_MW)
#define OPS_UD  (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define OPS_MIN (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE)

Test(sim_diff_wr, rc_1sge_no_inline)  { run_wr(&(struct caps){ IBV_QPT_RC, 64, 1, 0, 0, 0, OPS_RC }, 21); }
Test(sim_diff_wr, rc_4sge_inline64_send_write) { run_wr(&(struct caps){ IBV_QPT_RC, 64, 4, 64, 0, 0, OPS_MIN }, 22); }
Test(sim_diff_wr, rc_16sge_inline256_sig_all) { run_wr(&(struct caps){ IBV_QPT_RC, 256, 16, 256, 1, 0, OPS_RC }, 23); }
Test(sim_diff_wr, uc_4sge_inline64)   { run_wr(&(struct caps){ IBV_QPT_UC, 64, 4, 64, 0, 0, OPS_UC }, 24); }
Test(sim_diff_wr, ud_1sge_inline64)   { run_wr(&(struct caps){ IBV_QPT_UD, 64, 1, 64, 0, 0, OPS_UD }, 25); }
Test(sim_diff_wr, ud_4sge_inline256)  { run_wr(&(struct caps){ IBV_QPT_UD, 256, 4, 256, 0, 0, OPS_UD }, 26); }
Test(sim_diff_wr, xrc_4sge_inline64)  { run_wr(&(struct caps){ IBV_QPT_XRC_SEND, 64, 4, 64, 0, 0, OPS_RC }, 27); }
Test(sim_diff_wr, xrc_16sge_inline256_sig_all) { run_wr(&(struct caps){ IBV_QPT_XRC_SEND, 256, 16, 256, 1, 0, OPS_RC }, 28); }
Test(sim_diff_wr, rc_4sge_inline64_doorbell_only) { run_wr(&(struct caps){ IBV_QPT_RC, 64, 4, 64, 0, 1, OPS_RC }, 29); }
Test(sim_diff_wr, ud_4sge_inline64_doorbell_only) { run_wr(&(struct caps){ IBV_QPT_UD, 128, 4, 64, 1, 1, OPS_UD }, 30); }

/*
 * libmlx5 44 has no ibv_wr_flush (the header has no IBV_QP_EX_WITH_FLUSH: bit 11 in later
 * rdma-core) and no ibv_wr_atomic_write for mlx5: a QP asked for either is not created, so
 * fastverbs has neither (README). Each of RC, UC, UD and XRC refuses them; with the same caps
 * and only SEND the QP is created.
 */
Test(sim_diff_wr, no_flush_or_atomic_write)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_XRC_SEND };
	struct simt_dev d;

	simt_open(&d, 0);
	struct ibv_cq *cq = simt_cq(&d, 16);

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		for (int k = 0; k < 3; k++) {
			uint64_t extra = k == 0 ? 0 : k == 1 ? IBV_QP_EX_WITH_ATOMIC_WRITE : 1u << 11;
			struct ibv_qp_init_attr_ex a = {
				.qp_type = types[i], .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
				.pd = d.pd, .send_cq = cq, .recv_cq = cq,
				.cap = { .max_send_wr = 16, .max_recv_wr = types[i] == IBV_QPT_XRC_SEND ? 0 : 16,
					 .max_send_sge = 1, .max_recv_sge = 1 },
				.send_ops_flags = IBV_QP_EX_WITH_SEND | extra,
			};

			errno = 0;
			struct ibv_qp *qp = ibv_create_qp_ex(d.ctx, &a);

			if (!extra) {
				cr_assert(qp, "type %d, SEND only: %s", types[i], strerror(errno));
				cr_assert_eq(ibv_destroy_qp(qp), 0);
			} else {
				cr_assert_null(qp, "type %d: send_ops_flags %#llx accepted", types[i],
					       (unsigned long long)extra);
				cr_assert_eq(errno, EOPNOTSUPP, "type %d, %#llx: errno %d", types[i],
					     (unsigned long long)extra, errno);
			}
		}
	}
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	simt_close(&d);
}
