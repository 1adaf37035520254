/*
 * Differential test on the software device, the ibv_wr_* API: twin QPs made by
 * ibv_create_qp_ex with send_ops_flags, one driven by libmlx5's ibv_wr_*, the other taken
 * over by fastverbs and driven by fv_wr_* on its struct fv_qp. Every round runs the same
 * seeded random batch on both: builders with random operands and wr_flags, the destination
 * setter (UD, XRC) before or after the payload setter (one SGE, an SGE list, inline data, an
 * inline list); now and then a setter both libraries refuse (too many SGEs, inline data past
 * max_inline_data: ENOMEM, part-way through the batch) or an abort. Compared, with the
 * engine of tests/lib/diff-send.h: fv_wr_complete's return against ibv_wr_complete's,
 * doorbell record, every meaningful WQE byte, what each wrote to its BlueFlame/doorbell
 * register, then the completions and (on the sinks) the data. DIFF_TRACE=1 prints each round.
 */
#include "diff-send.h"

#define WR_ROUNDS 20000
#define MAX_SGE   20

enum wop { W_SEND, W_SEND_IMM, W_SEND_INV, W_WRITE, W_WRITE_IMM, W_READ, W_CAS, W_FADD, W_OPS };
enum wform { F_SGE, F_SGL, F_INLINE, F_INLINE_LIST };

/* The send_ops_flags bit of each builder (what the QP was created for). */
static const uint64_t wop_flag[W_OPS] = {
	IBV_QP_EX_WITH_SEND, IBV_QP_EX_WITH_SEND_WITH_IMM, IBV_QP_EX_WITH_SEND_WITH_INV,
	IBV_QP_EX_WITH_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, IBV_QP_EX_WITH_RDMA_READ,
	IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
};

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
};

struct wbatch {
	struct wstep s[MAX_LIST];
	int n, abort, want;	/* want: the errno both must return */
};

static bool wop_atomic(enum wop o)
{
	return o == W_CAS || o == W_FADD;
}

/* One random WQE; fail: make its payload setter one both libraries refuse (ENOMEM). */
static void make_step(struct env *e, struct wstep *w, const struct caps *c, const struct ibv_qp_cap *cap, bool fail)
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
	if (w->form == F_INLINE)
		w->len = (uint32_t)rnd(e, (uint64_t)cap->max_inline_data + 1);
	for (size_t k = 0, room = cap->max_inline_data; w->form == F_INLINE_LIST && k < w->n; k++) {
		if (w->buf[k].length > room)	/* within max_inline_data, unless it is to fail */
			w->buf[k].length = room;
		room -= w->buf[k].length;
	}
	if (!fail)
		return;
	if (w->form == F_SGE)
		w->form = F_SGL;
	if (w->form == F_SGL)
		w->n = cap->max_send_sge + 1 + rnd(e, 3);
	else if (w->form == F_INLINE)
		w->len = cap->max_inline_data + 1;
	else
		w->buf[w->n - 1].length = cap->max_inline_data + 1;
}

static void make_batch(struct env *e, struct wbatch *b, const struct caps *c, const struct ibv_qp_cap *cap)
{
	int fail_at = rnd(e, 10) == 0 ? (int)rnd(e, MAX_LIST) : -1;

	b->n = 1 + (int)rnd(e, MAX_LIST);
	b->abort = rnd(e, 30) == 0;
	b->want = 0;
	for (int i = 0; i < b->n; i++) {
		make_step(e, &b->s[i], c, cap, i == fail_at);
		b->want = i == fail_at ? ENOMEM : b->want;
	}
	b->s[b->n - 1].flags |= IBV_SEND_SIGNALED;	/* everything posted completes each round */
}

/*
 * The batch through one API: P is ibv (q an ibv_qp_ex *) or fv (q a struct fv_qp *); the
 * two have the same names, arguments and wr_id / wr_flags members. Returns the complete's
 * errno, or 0 after an abort.
 */
#define RUN_BATCH(P, q, b, ah, remote_qpn)                                                              \
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
			default:          P##_wr_atomic_fetch_add(q, e->remote_mr->rkey, w_->raddr,    \
								  w_->compare); break;                  \
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

struct wstats { int posted, refused, aborted, errored, bf, wraps; };

static void trace_batch(const struct wbatch *b, int round, const int rc[2], uint32_t before, uint32_t after)
{
	fprintf(stderr, "round %d: %#x -> %#x rc %d/%d abort %d:", round, before, after, rc[LIB], rc[FV], b->abort);
	for (int i = 0; i < b->n; i++)
		fprintf(stderr, " [op %d form %d fl %#x n %zu len %u after %d]", b->s[i].op, b->s[i].form, b->s[i].flags,
			b->s[i].n, b->s[i].len, b->s[i].dest_after);
	fprintf(stderr, "\n");
}

/* One batch on both twins; compare everything either may have written. */
static void wr_round(struct env *e, struct twin *t, const struct caps *c, struct wbatch *b, int round,
		     struct wstats *st)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(t->qp[LIB]);
	struct fv_qp *fq = &t->fq;
	uint32_t rqpn = t->sink[LIB]->qp_num;	/* UD: one sink, the same AV bytes */
	uint8_t reg[2][REG_BYTES];
	uint32_t before = sq_dbr(&t->dv[LIB]);
	int rc[2];

	cr_assert_eq(sq_dbr(&t->dv[FV]), before, "round %d: twins out of step", round);
	memset(t->dv[LIB].bf.reg, 0, REG_BYTES);
	rc[LIB] = RUN_BATCH(ibv, qx, b, e->ah, rqpn);
	memcpy(reg[LIB], t->dv[LIB].bf.reg, REG_BYTES);
	memset(t->dv[FV].bf.reg, 0, REG_BYTES);
	rc[FV] = RUN_BATCH(fv, fq, b, e->ah, rqpn);
	memcpy(reg[FV], t->dv[FV].bf.reg, REG_BYTES);

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
	st->posted += after != before;
	st->refused += rc[LIB] != 0;
	st->aborted += b->abort;
	st->bf += after != before && (!diff_zero(reg[FV] + 8, 56) || !diff_zero(reg[FV] + REG_BYTES / 2 + 8, 56));
	st->wraps += (after & (t->dv[LIB].sq.wqe_cnt - 1)) < (before & (t->dv[LIB].sq.wqe_cnt - 1));
}

static void run_wr(const struct caps *c, uint64_t seed)
{
	struct env e;
	struct twin t;
	struct ibv_qp_cap cap;
	struct wbatch b;
	struct wstats st = { 0 };
	struct diff_wcs w;

	env_open(&e, c, seed);
	twin_open(&e, &t, c);
	cap = twin_caps(&t);
	for (int round = 0; round < WR_ROUNDS; round++) {
		make_batch(&e, &b, c, &cap);
		wr_round(&e, &t, c, &b, round, &st);
		if (twin_compare(&t, &t.fc, &w, round)) {
			st.errored++;	/* XRC: an unknown SRQ */
			twin_reopen(&e, &t, c);
		}
		sinks_settle(&e, &t);
	}
	cr_log_info("%s sge %u inline %u sig_all %d ops %#llx%s: %d rounds, %d posted, %d refused alike (ENOMEM), "
		    "%d aborted, %d lone WQEs copied by BlueFlame, %d ended in error, %d ring wraps", type_name(c->type),
		    cap.max_send_sge, cap.max_inline_data, c->sig_all, (unsigned long long)c->send_ops,
		    c->no_bf ? " doorbell-only" : "", WR_ROUNDS, st.posted, st.refused, st.aborted, st.bf, st.errored,
		    st.wraps);
	cr_assert_gt(st.posted, WR_ROUNDS / 2, "too few rounds posted anything");
	cr_assert_gt(st.refused, 0, "no refused batch exercised");
	cr_assert_gt(st.aborted, 0, "no abort exercised");
	cr_assert_gt(st.wraps, 0, "the ring never wrapped");
	if (c->type == IBV_QPT_XRC_SEND)
		cr_assert_gt(st.errored, 0, "no unknown SRQ number exercised");
	twin_close(&t);
	env_close(&e);
}

#define OPS_RC  (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV | \
		 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
#define OPS_UC  (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV | \
		 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
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
