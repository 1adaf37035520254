/*
 * The send side of the differential test (tests/diff/send.c, tests/diff/xrc.c).
 *
 * Twin QPs with the same type and caps: one is driven by libmlx5 (ibv_post_send +
 * ibv_poll_cq), the other is taken over by fastverbs (fv_post_send + fv_poll_cq). Each twin
 * talks to its own sink QP; all sinks share one MR, so both twins name the same rkey. Every
 * round posts the same seeded random WR list (valid and invalid WRs) on both and compares
 * the return code, *bad_wr, the doorbell record, every meaningful WQE byte and what each post
 * wrote to its BlueFlame/doorbell register; then the device executes everything and both
 * completion lists must match (diff-util.h). WRs on which fastverbs deliberately differs from
 * libmlx5 (README, "Differences from libmlx5") are checked against fastverbs' documented
 * errno, and the libmlx5 twin gets the list cut before them. DIFF_TRACE=1 in the environment
 * prints every round's lists and outcomes.
 */
#ifndef DIFF_SEND_H
#define DIFF_SEND_H

#include "diff-util.h"

#define ROUNDS      20000	/* a twin that never errs posts ~85000 WQEBBs: the 16-bit index wraps */
#define MAX_LIST    6
#define BUF_SIZE    (1u << 16)
#define SINK_RECVS  256
#define RECV_SIZE   4096
#define QKEY        0x11111111u
#define XRC_SRQS    3		/* XRC SRQs on the sink side, named at random by the WRs */
#define XRC_RECVS   64		/* receives kept posted on each */
#define BAD_SRQN    0x7abcdu	/* no such XRC SRQ: the message fails at the responder */
#define REG_BYTES   512		/* both halves of a BlueFlame register */

/* The caps of one twin pair; libmlx5 grants more than asked (read back with ibv_query_qp). */
struct caps {
	enum ibv_qp_type type;
	uint32_t wr, sge, inl;
	int sig_all;
	int no_bf;	/* FVSIM_NO_BLUEFLAME: doorbell-only QPs (mlx5dv bf.size 0) */
	uint64_t send_ops;	/* non-zero: both twins made by ibv_create_qp_ex with these send_ops_flags */
};

struct twin {
	struct ibv_qp *qp[2], *sink[2];
	struct ibv_cq *cq[2], *sink_cq[2];
	struct mlx5dv_qp dv[2];
	struct fv_qp fq;
	struct fv_cq fc;
	uint32_t sink_posted[2];
	uint32_t sink_next[2];	/* the next receive's buffer slot: FIFO, so 256 in a row differ */
	uint32_t fv_rings;	/* fastverbs' doorbells on this QP */
	/* libmlx5 dropped the initiator fence a BIND_MW / LOCAL_INV left for the next WQE when it
	 * refused a WR after its size checks (inline too long); fastverbs keeps it for the next
	 * WQE it builds (README, Differences): that WQE's fm_ce_se differs in 0x20 alone. */
	int fence_owed;
	bool stale_imm;		/* libmlx5 drives its twin by ibv_wr_*: see mask_wqe() */
	/* Objects each twin has its own of, which its WQEs name (map_twin): memory windows by
	 * the key they were allocated with, libmlx5's twin's first. */
	uint32_t win_map[8][2];
	int nwin_map;
	/* DC (tests/diff/dc.c): each twin's own DCTs, named in the AV's bytes 8-11 (WQE bytes 24-27) */
	uint32_t dct_map[8][2];
	int ndct_map;
};

struct env {
	struct simt_dev d;
	uint8_t *local, *remote, *sinkbuf;
	struct ibv_mr *local_mr, *remote_mr, *sink_mr;
	/* Memory windows for BIND_MW and LOCAL_INV WRs that succeed on both twins alike: a type
	 * 1 window any QP may bind again and again, and a type 2 window never bound, which
	 * LOCAL_INV may name (invalidating a free window is allowed). */
	struct ibv_mw *mw1, *mw2;
	struct ibv_ah *ah;
	uint64_t seed;
	/* libmlx5's BlueFlame registers: its doorbells so far on each (see bf_halves()) */
	struct { const void *reg; uint32_t rings; } libreg[16];
	int nlibreg;
	/* XRC: one domain; its SRQs take the messages of both twins' target QPs */
	struct ibv_xrcd *xrcd;
	struct ibv_srq *xsrq[XRC_SRQS];
	struct ibv_cq *xcq;
	uint32_t srqn[XRC_SRQS], xposted[XRC_SRQS];
	bool xbusy[XRC_SRQS][XRC_RECVS];	/* receive buffers (xrc_buf) posted and not yet back */
};

static inline uint64_t rnd(struct env *e, uint64_t n)
{
	return diff_rnd(&e->seed, n);
}

/* ---- the sinks ---- */

static inline void sink_fill(struct env *e, struct twin *t, int s)
{
	while (t->sink_posted[s] < SINK_RECVS) {
		uint32_t i = t->sink_next[s]++ % SINK_RECVS;

		t->sink_posted[s]++;
		simt_post_recv(t->sink[s], i, e->sinkbuf + (size_t)i * RECV_SIZE, RECV_SIZE,
			       e->sink_mr->lkey);
	}
}

/* The buffer of an XRC receive: one per (SRQ, slot), wr_id = SRQ * XRC_RECVS + slot. */
static inline uint8_t *xrc_buf(struct env *e, uint64_t wr_id)
{
	return e->sinkbuf + (size_t)wr_id * RECV_SIZE;
}

/* Keep every XRC SRQ full, each receive with a buffer of its own. */
static inline void xrc_fill(struct env *e)
{
	_Static_assert(XRC_SRQS * XRC_RECVS <= SINK_RECVS, "XRC receive buffers fit the sink buffer");
	for (uint32_t k = 0; k < XRC_SRQS; k++)
		for (uint32_t i = 0; i < XRC_RECVS && e->xposted[k] < XRC_RECVS; i++) {
			if (e->xbusy[k][i])
				continue;
			e->xbusy[k][i] = true;
			e->xposted[k]++;
			simt_post_srq_recv(e->xsrq[k], k * XRC_RECVS + i, xrc_buf(e, k * XRC_RECVS + i), RECV_SIZE,
					   e->sink_mr->lkey);
		}
}

/* An XRC receive came back (its completion, wr_id). */
static inline void xrc_done(struct env *e, uint64_t wr_id)
{
	e->xposted[wr_id / XRC_RECVS]--;
	e->xbusy[wr_id / XRC_RECVS][wr_id % XRC_RECVS] = false;
}

static inline void xrc_open(struct env *e)
{
	e->xrcd = simt_xrcd(&e->d);
	e->xcq = simt_cq(&e->d, 2 * XRC_SRQS * XRC_RECVS);
	for (int k = 0; k < XRC_SRQS; k++) {
		e->xsrq[k] = simt_xrc_srq(&e->d, e->xrcd, e->xcq, XRC_RECVS, 1);
		cr_assert_eq(ibv_get_srq_num(e->xsrq[k], &e->srqn[k]), 0);
	}
	xrc_fill(e);
}

static inline void xrc_close(struct env *e)
{
	for (int k = 0; k < XRC_SRQS; k++)
		cr_assert_eq(ibv_destroy_srq(e->xsrq[k]), 0);
	cr_assert_eq(ibv_destroy_cq(e->xcq), 0);
	cr_assert_eq(ibv_close_xrcd(e->xrcd), 0);
}

/* An XRC initiator QP and its target QP in the environment's domain. */
static inline void xrc_pair(struct env *e, struct twin *t, int s, const struct caps *c)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = e->d.pd,
		.send_cq = t->cq[s], .sq_sig_all = c->sig_all,
		.cap = { .max_send_wr = c->wr, .max_send_sge = c->sge, .max_inline_data = c->inl },
	};

	if (c->send_ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = c->send_ops;
	}
	t->qp[s] = ibv_create_qp_ex(e->d.ctx, &a);
	cr_assert(t->qp[s], "XRC_SEND QP: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	a.xrcd = e->xrcd;
	t->sink[s] = ibv_create_qp_ex(e->d.ctx, &a);
	cr_assert(t->sink[s], "XRC_RECV QP: %s", strerror(errno));
	simt_connect(t->qp[s], e->d.lid, t->sink[s]->qp_num, 0, 7, 7);
	simt_connect(t->sink[s], e->d.lid, t->qp[s]->qp_num, SIMT_ACCESS_ALL, 7, 7);
}

/* A twin made by ibv_create_qp_ex with the caps' send_ops_flags (the ibv_wr_* API). */
static inline struct ibv_qp *twin_qp_ex(struct env *e, const struct caps *c, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = c->type, .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = e->d.pd, .send_cq = cq, .recv_cq = cq, .sq_sig_all = c->sig_all,
		.cap = { .max_send_wr = c->wr, .max_recv_wr = 1, .max_send_sge = c->sge, .max_recv_sge = 1,
			 .max_inline_data = c->inl },
		.send_ops_flags = c->send_ops,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(e->d.ctx, &a);

	cr_assert(qp, "ibv_create_qp_ex (send_ops_flags %#llx): %s", (unsigned long long)c->send_ops,
		  strerror(errno));
	return qp;
}

static inline void twin_open(struct env *e, struct twin *t, const struct caps *c)
{
	memset(t, 0, sizeof(*t));
	t->stale_imm = c->send_ops != 0;
	for (int s = LIB; s <= FV; s++) {
		t->cq[s] = simt_cq(&e->d, 1024);
		if (c->type == IBV_QPT_XRC_SEND) {
			xrc_pair(e, t, s, c);
		} else {
			t->sink_cq[s] = simt_cq(&e->d, 2 * SINK_RECVS);
			t->qp[s] = c->send_ops ? twin_qp_ex(e, c, t->cq[s]) :
				simt_qp(&e->d, &(struct setup_qp_cfg){ .type = c->type, .scq = t->cq[s],
				.max_send_wr = c->wr, .max_send_sge = c->sge, .max_inline = c->inl,
				.sq_sig_all = c->sig_all, .max_recv_wr = 1, .max_recv_sge = 1 });
			t->sink[s] = simt_qp(&e->d, &(struct setup_qp_cfg){ .type = c->type, .scq = t->sink_cq[s],
				.max_recv_wr = SINK_RECVS, .max_recv_sge = 1 });
			if (c->type == IBV_QPT_UD) {
				simt_ud_ready(t->qp[s], QKEY);
				simt_ud_ready(t->sink[s], QKEY);
			} else {
				simt_connect(t->qp[s], e->d.lid, t->sink[s]->qp_num, SIMT_ACCESS_ALL, 7, 7);
				simt_connect(t->sink[s], e->d.lid, t->qp[s]->qp_num, SIMT_ACCESS_ALL, 7, 7);
			}
			sink_fill(e, t, s);
		}
		struct mlx5dv_obj o = { .qp = { .in = t->qp[s], .out = &t->dv[s] } };
		cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
		/* FVSIM_NO_BLUEFLAME is read once per process: check it took effect (or did not). */
		cr_assert_eq(t->dv[s].bf.size, c->no_bf ? 0u : 256u, "bf.size %u", t->dv[s].bf.size);
	}
	cr_assert_eq(fv_qp_init(&t->fq, t->qp[FV]), 0);
	cr_assert_eq(fv_cq_init(&t->fc, t->cq[FV]), 0);
	cr_assert_eq(t->dv[LIB].sq.wqe_cnt, t->dv[FV].sq.wqe_cnt, "twins got different rings");
}

static inline void twin_close(struct twin *t)
{
	fv_cq_cleanup(&t->fc);
	fv_qp_cleanup(&t->fq);
	for (int s = LIB; s <= FV; s++) {
		cr_assert_eq(ibv_destroy_qp(t->qp[s]), 0);
		cr_assert_eq(ibv_destroy_qp(t->sink[s]), 0);
		cr_assert_eq(ibv_destroy_cq(t->cq[s]), 0);
		if (t->sink_cq[s])
			cr_assert_eq(ibv_destroy_cq(t->sink_cq[s]), 0);
	}
}

/* Drain what the sinks received and give them their receive buffers back. */
static inline void sinks_settle(struct env *e, struct twin *t)
{
	struct ibv_wc wc[64];
	int n;

	for (int s = LIB; s <= FV && t->sink_cq[LIB]; s++) {
		while ((n = ibv_poll_cq(t->sink_cq[s], 64, wc)) > 0)
			t->sink_posted[s] -= (uint32_t)n;
		sink_fill(e, t, s);
	}
	if (!e->xrcd)
		return;
	while ((n = ibv_poll_cq(e->xcq, 64, wc)) > 0)
		for (int i = 0; i < n; i++)
			xrc_done(e, wc[i].wr_id);
	xrc_fill(e);
}

/* ---- random WR lists ---- */

struct wrl {
	struct ibv_send_wr wr[MAX_LIST];
	struct ibv_sge sge[MAX_LIST][20];
	int n;
	int cut;		/* first WR fastverbs refuses on purpose where libmlx5 does not; n if none */
	int cut_errno;
};

static inline int allowed(enum ibv_qp_type t, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND: case IBV_WR_SEND_WITH_IMM:
		return 1;
	case IBV_WR_RDMA_WRITE: case IBV_WR_RDMA_WRITE_WITH_IMM:
		return t != IBV_QPT_UD;
	case IBV_WR_RDMA_READ: case IBV_WR_ATOMIC_CMP_AND_SWP: case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND;
	case IBV_WR_BIND_MW: case IBV_WR_LOCAL_INV:
		return t != IBV_QPT_UD;
	default:
		return 0;
	}
}

static const enum ibv_wr_opcode ops[] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
	IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	IBV_WR_BIND_MW, IBV_WR_LOCAL_INV,
};

/*
 * A memory-window WR (BIND_MW of the type 1 window over a random part of the local MR with
 * random rights, zero length to unbind; LOCAL_INV of the free type 2 window), any SGEs of it
 * kept (libmlx5 writes them after the UMR segments) but never inline: libmlx5 44 writes an
 * inline segment past the ring end when the UMR segments end there. kind 16: a bind longer
 * than 2 GiB, EOPNOTSUPP in both, but libmlx5 rings its half-built WQE: fastverbs only.
 */
static inline int make_mw_wr(struct env *e, struct ibv_send_wr *w, uint32_t kind)
{
	static const unsigned rights[] = { IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE,
					   IBV_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_LOCAL_WRITE };
	uint64_t off = rnd(e, BUF_SIZE / 2);

	w->send_flags &= ~(unsigned)IBV_SEND_INLINE;
	if (w->opcode == IBV_WR_LOCAL_INV) {
		w->invalidate_rkey = e->mw2->rkey;
		return 0;
	}
	w->bind_mw.mw = e->mw1;
	w->bind_mw.rkey = (e->mw1->rkey & ~0xffu) | (uint32_t)rnd(e, 256);
	w->bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = e->local_mr,
		.addr = (uintptr_t)e->local + off, .length = rnd(e, 4) ? rnd(e, BUF_SIZE / 2) : 0 };
	for (unsigned i = 0; i < 4; i++)
		w->bind_mw.bind_info.mw_access_flags |= rnd(e, 2) ? rights[i] : 0;
	if (kind == 16) {
		w->bind_mw.bind_info.length = (1ull << 31) + 1 + rnd(e, 1u << 20);
		return EOPNOTSUPP;
	}
	return 0;
}

/*
 * Make the SGEs total exactly want bytes (one past max_inline_data) by resizing the first;
 * if the others already hold more than that, they give up their bytes to the first one.
 * (Adding want - total to the first length once wrapped it past 2^31 when the others held
 * more: libmlx5 then took it as a negative int and overwrote the WQEs before the failing one,
 * the failures once blamed on the device. Such a length is now a case of its own: see
 * huge_inline() and the README row.)
 */
static inline void over_inline(struct ibv_sge *s, int n, uint32_t want)
{
	uint32_t rest = 0;

	for (int k = 1; k < n; k++)
		rest += s[k].length;
	if (rest > want) {
		for (int k = 1; k < n; k++)
			s[k].length = 0;
		rest = 0;
	}
	s[0].length = want - rest;
}

/*
 * An inline SEND with one SGE of 2 GiB or more. libmlx5 44 (set_data_inl_seg) holds the
 * length in an int: it turns negative, passes the max_inline_data test and memcpy gets a
 * size near 2^64; its write pointer then moves back 2^32 - length bytes and the next SGEs
 * overwrite the WQEs posted before this one. fastverbs sums the lengths in 64 bits: ENOMEM. Never given to
 * libmlx5 (its list is cut before it).
 */
static inline void huge_inline(struct env *e, struct ibv_send_wr *w, const struct ibv_qp_cap *cap)
{
	w->opcode = IBV_WR_SEND;
	w->send_flags |= IBV_SEND_INLINE;
	w->num_sge = 1 + (int)rnd(e, cap->max_send_sge);
	w->sg_list[rnd(e, (uint64_t)w->num_sge)].length = 0x80000000u | (uint32_t)rnd(e, 1u << 20);
}

/*
 * One random WR. Most are valid for the QP; some carry mistakes both libraries refuse the
 * same way (bad opcode, too many SGEs, inline too long), some fail at the responder on both
 * (XRC: an SRQ number nobody has), and a few carry a mistake only fastverbs refuses (an
 * operation the QP type does not allow, INLINE on READ/atomics, an inline SGE of 2 GiB).
 * Returns the errno fastverbs gives for such a deliberate difference, else 0.
 */
static inline int make_wr(struct env *e, struct wrl *l, int i, enum ibv_qp_type type, const struct ibv_qp_cap *cap)
{
	struct ibv_send_wr *w = &l->wr[i];
	struct ibv_sge *s = l->sge[i];
	uint32_t kind = (uint32_t)rnd(e, 100);
	int cut = 0;

	memset(w, 0, sizeof(*w));
	w->wr_id = 0x1000 + rnd(e, 1u << 20);
	w->sg_list = s;
	do
		w->opcode = ops[rnd(e, sizeof(ops) / sizeof(ops[0]))];
	while (kind >= 4 && !allowed(type, w->opcode));
	if (kind < 4 && !allowed(type, w->opcode))
		cut = EINVAL;
	w->send_flags = (rnd(e, 3) == 0 ? IBV_SEND_SIGNALED : 0) | (rnd(e, 8) == 0 ? IBV_SEND_SOLICITED : 0) |
			(rnd(e, 8) == 0 ? IBV_SEND_FENCE : 0);
	w->imm_data = htobe32((uint32_t)rnd(e, 1u << 31));
	int atomic = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
	int max_sge = (int)cap->max_send_sge;

	w->num_sge = atomic ? 1 : (int)rnd(e, (uint64_t)max_sge + 1);
	if (kind == 10)
		w->num_sge = max_sge + 1 + (int)rnd(e, 3);	/* both: ENOMEM */
	for (int k = 0; k < w->num_sge && k < 20; k++) {
		uint32_t len = atomic ? 8 : (uint32_t)(rnd(e, 4) ? rnd(e, 200) : 0);

		s[k] = (struct ibv_sge){ .addr = (uintptr_t)e->local + rnd(e, BUF_SIZE / 2) / 8 * 8,
					 .length = len, .lkey = e->local_mr->lkey };
	}
	int umr = w->opcode == IBV_WR_BIND_MW || w->opcode == IBV_WR_LOCAL_INV;

	if (w->opcode != IBV_WR_RDMA_READ && !atomic && !umr && w->num_sge <= max_sge && rnd(e, 3) == 0) {
		uint32_t total = 0;

		for (int k = 0; k < w->num_sge; k++)
			total += s[k].length;
		w->send_flags |= IBV_SEND_INLINE;
		if (kind == 11 && w->num_sge)	/* both: ENOMEM */
			over_inline(s, w->num_sge, cap->max_inline_data + 1);
		else if (total > cap->max_inline_data)
			w->send_flags &= ~(unsigned)IBV_SEND_INLINE;
	}
	if ((w->opcode == IBV_WR_RDMA_READ || atomic) && kind == 12 && w->num_sge) {
		w->send_flags |= IBV_SEND_INLINE;	/* fastverbs: EINVAL */
		cut = EINVAL;
	}
	if (kind == 13)
		w->opcode = (enum ibv_wr_opcode)(12 + rnd(e, 8));	/* both: EINVAL */
	if (kind == 15 && cap->max_inline_data) {
		huge_inline(e, w, cap);				/* fastverbs: ENOMEM */
		atomic = 0;
		cut = ENOMEM;
	}
	uint64_t raddr = (uintptr_t)e->remote + rnd(e, BUF_SIZE / 2) / 8 * 8;
	if (atomic) {
		w->wr.atomic.remote_addr = raddr;
		w->wr.atomic.rkey = e->remote_mr->rkey;
		w->wr.atomic.compare_add = rnd(e, 1000);
		w->wr.atomic.swap = rnd(e, 1000);
	} else if (type == IBV_QPT_UD) {
		w->wr.ud.ah = e->ah;
		w->wr.ud.remote_qkey = QKEY;	/* remote_qpn: filled per twin */
	} else {
		w->wr.rdma.remote_addr = raddr;
		w->wr.rdma.rkey = e->remote_mr->rkey;
	}
	if (type == IBV_QPT_XRC_SEND)		/* both: REM_INV_REQ_ERR for BAD_SRQN */
		w->qp_type.xrc.remote_srqn = kind == 14 ? BAD_SRQN : e->srqn[rnd(e, XRC_SRQS)];
	if (w->opcode == IBV_WR_BIND_MW || w->opcode == IBV_WR_LOCAL_INV) {
		int mw_cut = make_mw_wr(e, w, kind);

		cut = cut ? cut : mw_cut;
	}
	return cut;
}

static inline void make_list(struct env *e, struct wrl *l, enum ibv_qp_type type, const struct ibv_qp_cap *cap)
{
	l->n = 1 + (int)rnd(e, MAX_LIST);
	l->cut = l->n;
	for (int i = 0; i < l->n; i++) {
		int cut = make_wr(e, l, i, type, cap);

		if (cut && l->cut == l->n) {
			l->cut = i;
			l->cut_errno = cut;
		}
		l->wr[i].next = i + 1 < l->n ? &l->wr[i + 1] : NULL;
	}
	/* End every list signaled so both twins retire everything each round. */
	l->wr[l->n - 1].send_flags |= IBV_SEND_SIGNALED;
}

/* A valid, signaled, zero-length WR that retires everything before it on both twins. */
static inline void make_closing(struct env *e, struct wrl *l, enum ibv_qp_type type)
{
	memset(l->wr, 0, sizeof(l->wr[0]));
	l->n = l->cut = 1;
	l->wr[0].wr_id = 0xc105e;
	l->wr[0].opcode = type == IBV_QPT_UD ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
	l->wr[0].send_flags = IBV_SEND_SIGNALED;
	if (type == IBV_QPT_UD) {
		l->wr[0].wr.ud.ah = e->ah;
		l->wr[0].wr.ud.remote_qkey = QKEY;
	} else {
		l->wr[0].wr.rdma.remote_addr = (uintptr_t)e->remote;
		l->wr[0].wr.rdma.rkey = e->remote_mr->rkey;
	}
	if (type == IBV_QPT_XRC_SEND)
		l->wr[0].qp_type.xrc.remote_srqn = e->srqn[0];
}

/* ---- comparison ---- */

/* Bytes of the WQE at ring offset off (mod the ring), up to n. */
static inline void ring_read(const struct mlx5dv_qp *dv, uint32_t off, uint8_t *out, uint32_t n)
{
	uint32_t size = dv->sq.wqe_cnt * 64;

	for (uint32_t i = 0; i < n; i++)
		out[i] = ((const uint8_t *)dv->sq.buf)[(off + i) % size];
}

/*
 * Bytes libmlx5 leaves unspecified or that name the twin itself, zeroed before comparing:
 * the QPN in ctrl, an inline segment's pad after its payload; and, where README documents
 * that fastverbs writes 0 and libmlx5 leaves the ring's old bytes, a fetch-and-add's compare
 * half and the XRC segment's 12 reserved bytes. stale_imm (libmlx5's ibv_wr_* builders, README
 * row): the ctrl's immediate word of a WQE that carries none, left as the ring held it.
 */
static inline void mask_wqe(uint8_t *w, unsigned ds, enum ibv_qp_type type, bool stale_imm)
{
	uint8_t opcode = w[3];
	unsigned at = 16 + (type == IBV_QPT_UD ? 48 : 0) + (type == IBV_QPT_XRC_SEND ? 16 : 0);

	memset(w + 4, 0, 3);
	if (opcode == MLX5_OPCODE_UMR) {
		/* The mkey context bytes neither library writes hold the ring's old bytes, which
		 * differ where the twins' earlier WQEs differed in bytes masked here. */
		if (ds * 16 >= 128) {
			w[65] = w[67] = 0;
			memset(w + 72, 0, 8);
			memset(w + 96, 0, 32);
			if (w[64] & MLX5_WQE_MKEY_CONTEXT_FREE) {	/* invalidate: no rights, no range */
				w[66] = 0;
				memset(w + 80, 0, 16);
			}
		}
		return;
	}
	if (stale_imm && opcode != MLX5_OPCODE_SEND_IMM && opcode != MLX5_OPCODE_RDMA_WRITE_IMM &&
	    opcode != MLX5_OPCODE_SEND_INVAL)
		memset(w + 12, 0, 4);
	if (type == IBV_QPT_XRC_SEND && ds > 1)
		memset(w + 20, 0, 12);
	if (opcode == MLX5_OPCODE_RDMA_WRITE || opcode == MLX5_OPCODE_RDMA_WRITE_IMM ||
	    opcode == MLX5_OPCODE_RDMA_READ || opcode == MLX5_OPCODE_ATOMIC_CS ||
	    opcode == MLX5_OPCODE_ATOMIC_FA)
		at += 16;
	if (opcode == MLX5_OPCODE_ATOMIC_CS || opcode == MLX5_OPCODE_ATOMIC_FA) {
		if (opcode == MLX5_OPCODE_ATOMIC_FA)
			memset(w + at + 8, 0, 8);
		at += 16;
	}
	if (at < ds * 16 && (w[at] & 0x80)) {
		uint32_t len = ((uint32_t)w[at] << 24 | (uint32_t)w[at + 1] << 16 | (uint32_t)w[at + 2] << 8 | w[at + 3]) & 0x3ff;

		memset(w + at + 4 + len, 0, ds * 16 - (at + 4 + len));
	}
}

/*
 * fastverbs' twin's WQE (ds units) in the names of libmlx5's twin: a DCI's DCT as libmlx5's
 * twin's DCT of the same place in dct_map; in a UMR WQE, a window of its own
 * in the ctrl's immediate as libmlx5's twin's window of the same place in win_map (a bind
 * names the window by the key it was allocated with, an invalidation by index and current
 * tag), its QP number in a type 2 bind's mkey context as the other twin's. Everything else
 * must already be equal.
 */
static inline void map_twin(const struct twin *t, uint8_t *w, unsigned ds)
{
	if (w[3] != MLX5_OPCODE_UMR && t->ndct_map && ds >= 4) {	/* a DCI's WQE: the DCT it names */
		uint32_t dctn = (uint32_t)w[25] << 16 | (uint32_t)w[26] << 8 | w[27];

		for (int i = 0; i < t->ndct_map; i++)
			if (dctn == t->dct_map[i][FV]) {
				w[25] = (uint8_t)(t->dct_map[i][LIB] >> 16);
				w[26] = (uint8_t)(t->dct_map[i][LIB] >> 8);
				w[27] = (uint8_t)t->dct_map[i][LIB];
			}
	}
	if (w[3] != MLX5_OPCODE_UMR)
		return;
	uint32_t key = (uint32_t)w[12] << 24 | (uint32_t)w[13] << 16 | (uint32_t)w[14] << 8 | w[15];

	for (int i = 0; i < t->nwin_map; i++) {
		bool inv = w[64] & MLX5_WQE_MKEY_CONTEXT_FREE;	/* ds >= 8 for both kinds */
		uint32_t to = inv ? (t->win_map[i][LIB] & ~0xffu) | (key & 0xff) : t->win_map[i][LIB];

		if (key >> 8 == t->win_map[i][FV] >> 8) {
			w[12] = (uint8_t)(to >> 24);
			w[13] = (uint8_t)(to >> 16);
			w[14] = (uint8_t)(to >> 8);
			w[15] = (uint8_t)to;
			break;
		}
	}
	uint32_t qpn = (uint32_t)w[68] << 16 | (uint32_t)w[69] << 8 | w[70];

	if (ds * 16 >= 128 && qpn == t->qp[FV]->qp_num) {
		w[68] = (uint8_t)(t->qp[LIB]->qp_num >> 16);
		w[69] = (uint8_t)(t->qp[LIB]->qp_num >> 8);
		w[70] = (uint8_t)t->qp[LIB]->qp_num;
	}
}

/* The one documented difference of t->fence_owed: fastverbs' WQE a fence 0x20 that libmlx5's lacks. */
static inline void forgive_fence(const uint8_t *lib, uint8_t *fv)
{
	if ((fv[11] & 0xa0) == 0x20 && !(lib[11] & 0x20))
		fv[11] &= (uint8_t)~0x20;
}

static inline void compare_rings(struct twin *t, uint32_t from, uint32_t to, enum ibv_qp_type type, int round)
{
	uint8_t a[1024], b[1024];

	for (uint32_t pi = from; pi != to;) {
		uint32_t off = (pi & (t->dv[LIB].sq.wqe_cnt - 1)) * 64;
		unsigned ds;

		ring_read(&t->dv[LIB], off, a, 16);
		ds = a[7] & 0x3f;
		if (!ds) {
			uint8_t f[64];

			ring_read(&t->dv[LIB], off, a, 64);
			ring_read(&t->dv[FV], off, f, 64);
			cr_assert_fail("round %d: libmlx5 WQE at %#x has ds 0 (from %#x to %#x)\nlib %s\nfv  %s", round, pi,
				       from, to, diff_hex(a, 64), diff_hex(f, 64));
		}
		ring_read(&t->dv[LIB], off, a, ds * 16);
		ring_read(&t->dv[FV], off, b, ds * 16);
		map_twin(t, b, ds);
		mask_wqe(a, ds, type, t->stale_imm);
		mask_wqe(b, ds, type, t->stale_imm);
		if (pi == from && t->fence_owed)
			forgive_fence(a, b);
		unsigned first = (unsigned)diff_first_diff(a, b, ds * 16);

		cr_assert_eq(first, ds * 16, "round %d: WQE at %#x (opcode %#x, ds %u) differs at byte %u: %02x vs %02x\n"
			     "lib %s\nfv  %s", round, pi, a[3], ds, first, a[first], b[first],
			     diff_hex(a + first / 64 * 64, 64), diff_hex(b + first / 64 * 64, 64));
		pi = (pi + (ds + 3) / 4) & 0xffff;	/* from and to are doorbell records: 16 bits */
	}
}

static inline uint32_t sq_dbr(const struct mlx5dv_qp *dv)
{
	return be32toh(dv->dbrec[MLX5_SND_DBR]) & 0xffff;
}

/* The register half (0 or 1) a post wrote, -1 if it wrote nothing; it never writes both. */
static inline int written_half(const uint8_t *reg, int round)
{
	int a = !diff_zero(reg, REG_BYTES / 2), b = !diff_zero(reg + REG_BYTES / 2, REG_BYTES / 2);

	cr_assert(!(a && b), "round %d: one post wrote both register halves", round);
	return a ? 0 : b ? 1 : -1;
}

/*
 * What one post wrote to its register, as the start of a half: an 8-byte doorbell or a whole
 * WQE copy. Masked like a WQE in the ring; a copy carries whole 64-byte blocks, and past ds
 * the bytes are old ring contents the device never reads.
 */
static inline void mask_half(uint8_t *h, enum ibv_qp_type type, bool stale_imm)
{
	unsigned ds = h[7] & 0x3f;

	if (ds * 16 > REG_BYTES / 2)
		ds = 1;
	mask_wqe(h, ds, type, stale_imm);
	memset(h + ds * 16, 0, REG_BYTES / 2 - ds * 16);
}

/*
 * The register half each library's next doorbell goes to. libmlx5 alternates per register
 * (struct mlx5_bf.offset ^= buf_size), and a register is shared by the QPs created on it, so
 * a new QP continues where earlier QPs on its register left off; only the libmlx5 twins ring
 * through libmlx5 here. fastverbs alternates per QP from the first half (it cannot see
 * libmlx5's offset). Doorbell-only register 0 has buf_size 0 in both: always the first half.
 */
static inline void bf_halves(struct env *e, struct twin *t, int want[2])
{
	int i = 0;

	while (i < e->nlibreg && e->libreg[i].reg != t->dv[LIB].bf.reg)
		i++;
	if (i == e->nlibreg) {
		cr_assert_lt(i, 16, "too many BlueFlame registers");
		e->libreg[e->nlibreg].reg = t->dv[LIB].bf.reg;
		e->libreg[e->nlibreg++].rings = 0;
	}
	want[LIB] = t->dv[LIB].bf.size ? (int)(e->libreg[i].rings++ & 1) : 0;
	want[FV] = t->dv[FV].bf.size ? (int)(t->fv_rings++ & 1) : 0;
}

/*
 * libmlx5 failed an inline WR after others and, as README documents, rang with the failed
 * WR's control segment, whose first 8 bytes are still an earlier lap's: its register starts
 * with the ring's bytes at the failed WR's slot (after), or holds nothing visible if those
 * are zero. fastverbs rang for one of the WQEs it built in this post.
 */
static inline void check_half_built(const struct twin *t, const uint8_t *reg_lib, int hl, const uint8_t *reg_fv,
				    int hf, uint32_t before, uint32_t after, int round)
{
	uint8_t stale[8], mine[8];
	const uint8_t *b = reg_fv + hf * REG_BYTES / 2;
	uint32_t idx = (uint32_t)b[1] << 8 | b[2];

	ring_read(&t->dv[LIB], (after & (t->dv[LIB].sq.wqe_cnt - 1)) * 64, stale, 8);
	if (hl < 0) {
		cr_assert(diff_zero(stale, 8), "round %d: libmlx5 rang without a register write", round);
	} else {
		cr_assert_arr_eq(reg_lib + hl * REG_BYTES / 2, stale, 8,
				 "round %d: libmlx5 rang with something else than the failed WR's ctrl", round);
	}
	cr_assert((uint16_t)(idx - before) < (uint16_t)(after - before),
		  "round %d: fastverbs rang for WQE %#x, not one of this post", round, idx);
	ring_read(&t->dv[FV], (idx & (t->dv[FV].sq.wqe_cnt - 1)) * 64, mine, 8);
	cr_assert_arr_eq(b, mine, 8, "round %d: fastverbs rang with other bytes than its WQE's", round);
}

/*
 * The register writes of one post, reg[LIB] and reg[FV] (snapshots taken right after each
 * post: doorbell-only QPs share register 0). rang: the doorbell record moved. half_built:
 * see check_half_built().
 */
static inline void compare_reg(struct env *e, struct twin *t, uint8_t reg[2][REG_BYTES], enum ibv_qp_type type,
			       int rang, int half_built, uint32_t before, uint32_t after, int round)
{
	int hl = written_half(reg[LIB], round), hf = written_half(reg[FV], round);

	if (!rang) {
		cr_assert(hl < 0 && hf < 0, "round %d: a register written without a post", round);
		return;
	}
	int want[2];

	bf_halves(e, t, want);
	cr_assert_eq(hf, want[FV], "round %d: fastverbs rang in half %d, not %d", round, hf, want[FV]);
	cr_assert(hl < 0 || hl == want[LIB], "round %d: libmlx5 rang in half %d, not %d", round, hl, want[LIB]);
	if (half_built) {
		check_half_built(t, reg[LIB], hl, reg[FV], hf, before, after, round);
		return;
	}
	cr_assert(hl >= 0, "round %d: libmlx5 posted without a doorbell", round);

	uint8_t *a = reg[LIB] + hl * REG_BYTES / 2, *b = reg[FV] + hf * REG_BYTES / 2;

	if ((b[7] & 0x3f) * 16 <= REG_BYTES / 2)	/* a whole WQE, not a doorbell */
		map_twin(t, b, b[7] & 0x3f);
	mask_half(a, type, t->stale_imm);
	mask_half(b, type, t->stale_imm);
	if (t->fence_owed)
		forgive_fence(a, b);
	unsigned first = (unsigned)diff_first_diff(a, b, REG_BYTES / 2);

	cr_assert_eq(first, REG_BYTES / 2, "round %d: register writes differ at +%#x\nlib %s\nfv  %s", round, first,
		     diff_hex(a + first / 64 * 64, 64), diff_hex(b + first / 64 * 64, 64));
}

/* Post l on one twin, capturing what it wrote to its register. */
static inline int post_one(struct twin *t, int s, struct ibv_send_wr *wr, struct ibv_send_wr **bad,
			   uint8_t reg[REG_BYTES])
{
	int rc;

	memset(t->dv[s].bf.reg, 0, REG_BYTES);
	rc = s == LIB ? ibv_post_send(t->qp[LIB], wr, bad) : fv_post_send(&t->fq, wr, bad);
	memcpy(reg, t->dv[s].bf.reg, REG_BYTES);
	return rc;
}

struct stats { int refused_both, cut_fv, cut_enomem, half_built, posted, errored, wraps; };

static inline void trace_round(const struct wrl *l, int round, uint32_t before, const struct twin *t,
			       const int rc[2], int lib_bad, int fv_bad)
{
	fprintf(stderr, "round %d: %#x -> %#x/%#x rc %d/%d bad %d/%d cut %d:", round, before,
		sq_dbr(&t->dv[LIB]), sq_dbr(&t->dv[FV]), rc[LIB], rc[FV], lib_bad, fv_bad, l->cut);
	for (int i = 0; i < l->n; i++) {
		uint64_t tot = 0;

		for (int k = 0; k < l->wr[i].num_sge && k < 20; k++)
			tot += l->wr[i].sg_list[k].length;
		fprintf(stderr, " [op %d fl %#x nsge %d len %llu]", l->wr[i].opcode, l->wr[i].send_flags,
			l->wr[i].num_sge, (unsigned long long)tot);
	}
	fprintf(stderr, "\n");
}

/*
 * Post list l on both twins and compare what each library did: return code, *bad_wr,
 * doorbell record, WQE bytes, register writes. Returns nonzero if either refused a WR.
 */
static inline int post_round(struct env *e, struct twin *t, struct wrl *l, enum ibv_qp_type type, int round,
			     struct stats *st)
{
	struct ibv_send_wr *bad[2] = { NULL, NULL };
	uint8_t reg[2][REG_BYTES];
	uint32_t before = sq_dbr(&t->dv[LIB]);
	int rc[2] = { 0, 0 };

	cr_assert_eq(sq_dbr(&t->dv[FV]), before, "round %d: twins out of step", round);
	for (int i = 0; i < l->n && type == IBV_QPT_UD; i++)
		l->wr[i].wr.ud.remote_qpn = t->sink[LIB]->qp_num;	/* one sink: same AV bytes */
	memset(reg[LIB], 0, REG_BYTES);
	if (l->cut > 0) {	/* libmlx5 gets the list up to the WR fastverbs refuses */
		l->wr[l->cut - 1].next = NULL;
		rc[LIB] = post_one(t, LIB, l->wr, &bad[LIB], reg[LIB]);
		l->wr[l->cut - 1].next = l->cut < l->n ? &l->wr[l->cut] : NULL;
	}
	rc[FV] = post_one(t, FV, l->wr, &bad[FV], reg[FV]);

	int lib_bad = rc[LIB] ? (int)(bad[LIB] - l->wr) : -1, fv_bad = rc[FV] ? (int)(bad[FV] - l->wr) : -1;

	if (diff_trace())
		trace_round(l, round, before, t, rc, lib_bad, fv_bad);
	if (l->cut < l->n && lib_bad < 0) {
		/* fastverbs stops at the cut with its documented errno; libmlx5 posted the same before it. */
		cr_assert_eq(fv_bad, l->cut, "round %d: fastverbs should refuse WR %d (got %d)", round, l->cut, fv_bad);
		cr_assert_eq(rc[FV], l->cut_errno, "round %d: fastverbs errno %d", round, rc[FV]);
		st->cut_fv++;
		st->cut_enomem += rc[FV] == ENOMEM;
	} else {
		cr_assert_eq(rc[LIB], rc[FV], "round %d: libmlx5 returned %d, fastverbs %d (bad WR %d vs %d)",
			     round, rc[LIB], rc[FV], lib_bad, fv_bad);
		cr_assert_eq(lib_bad, fv_bad, "round %d: *bad_wr is WR %d for libmlx5, %d for fastverbs",
			     round, lib_bad, fv_bad);
		st->refused_both += rc[LIB] != 0;
	}
	uint32_t after = sq_dbr(&t->dv[LIB]);

	cr_assert_eq(sq_dbr(&t->dv[FV]), after, "round %d: doorbell record %#x vs %#x", round, after,
		     sq_dbr(&t->dv[FV]));
	compare_rings(t, before, after, type, round);
	int half_built = rc[LIB] == ENOMEM && lib_bad > 0 && (l->wr[lib_bad].send_flags & IBV_SEND_INLINE);

	compare_reg(e, t, reg, type, after != before, half_built, before, after, round);
	if (after != before)
		t->fence_owed = 0;
	if (rc[LIB] == ENOMEM && (l->wr[lib_bad].send_flags & IBV_SEND_INLINE) &&
	    l->wr[lib_bad].num_sge <= (int)t->fq.max_send_sge && t->fq.sq.fence_cache)
		t->fence_owed = 1;
	st->half_built += half_built;
	st->posted += after != before;
	st->wraps += after < before;
	return rc[LIB] | rc[FV];
}

static inline const char *type_name(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC ? "RC" : type == IBV_QPT_UC ? "UC" : type == IBV_QPT_UD ? "UD" : "XRC";
}

static inline void env_open(struct env *e, const struct caps *c, uint64_t seed)
{
	memset(e, 0, sizeof(*e));
	e->seed = seed;
	/* The device reads FVSIM_* once, at its first use in this (fresh) test process. */
	if (c->no_bf)
		setenv("FVSIM_NO_BLUEFLAME", "1", 1);
	fvsim_set_step_mode(1);
	simt_open(&e->d, 0);
	e->local = aligned_alloc(4096, BUF_SIZE);
	e->remote = aligned_alloc(4096, BUF_SIZE);
	e->sinkbuf = aligned_alloc(4096, (size_t)SINK_RECVS * RECV_SIZE);
	memset(e->local, 0x5c, BUF_SIZE);
	e->local_mr = simt_mr(&e->d, e->local, BUF_SIZE, SIMT_ACCESS_ALL | IBV_ACCESS_MW_BIND);
	e->mw1 = ibv_alloc_mw(e->d.pd, IBV_MW_TYPE_1);
	e->mw2 = ibv_alloc_mw(e->d.pd, IBV_MW_TYPE_2);
	cr_assert(e->mw1 && e->mw2, "ibv_alloc_mw: %s", strerror(errno));
	e->remote_mr = simt_mr(&e->d, e->remote, BUF_SIZE, SIMT_ACCESS_ALL);
	e->sink_mr = simt_mr(&e->d, e->sinkbuf, (size_t)SINK_RECVS * RECV_SIZE, SIMT_ACCESS_ALL);
	e->ah = ibv_create_ah(e->d.pd, &(struct ibv_ah_attr){ .dlid = e->d.lid, .port_num = 1 });
	cr_assert(e->ah);
	if (c->type == IBV_QPT_XRC_SEND)
		xrc_open(e);
}

static inline void env_close(struct env *e)
{
	if (e->xrcd)
		xrc_close(e);
	ibv_destroy_ah(e->ah);
	ibv_dealloc_mw(e->mw1);
	ibv_dealloc_mw(e->mw2);
	ibv_dereg_mr(e->local_mr);
	ibv_dereg_mr(e->remote_mr);
	ibv_dereg_mr(e->sink_mr);
	free(e->local);
	free(e->remote);
	free(e->sinkbuf);
	simt_close(&e->d);
}

/* The LIB twin's capabilities, which every round's work requests stay within. */
static inline struct ibv_qp_cap twin_caps(struct twin *t)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;

	cr_assert_eq(ibv_query_qp(t->qp[LIB], &attr, IBV_QP_CAP, &init), 0);
	return attr.cap;
}

/* Compares the round's send completions of the twins (fv: the fastverbs twin's CQ);
 * nonzero when an error completion moved both twins to the error state. */
static inline int twin_compare(struct twin *t, struct fv_cq *fv, struct diff_wcs *w, int round)
{
	struct diff_qpns qps = { { { t->qp[LIB]->qp_num, t->qp[FV]->qp_num } }, 1 }, none = { .n = 0 };

	return diff_poll_compare(t->cq[LIB], fv, w, &qps, &none, "send", round);
}

/* Both twins are in the error state: fresh ones. */
static inline void twin_reopen(struct env *e, struct twin *t, const struct caps *c)
{
	twin_close(t);
	twin_open(e, t, c);
}

static inline void run(const struct caps *c, uint64_t seed)
{
	struct env e;
	struct twin t;
	struct ibv_qp_cap cap;
	struct wrl l;
	struct stats st = { 0 };
	struct diff_wcs w;

	env_open(&e, c, seed);
	twin_open(&e, &t, c);
	cap = twin_caps(&t);
	for (int round = 0; round < ROUNDS; round++) {
		make_list(&e, &l, c->type, &cap);
		if (post_round(&e, &t, &l, c->type, round, &st) || l.cut < l.n) {
			/* what was posted may end unsignaled: close it signaled */
			make_closing(&e, &l, c->type);
			post_round(&e, &t, &l, c->type, round, &st);
		}
		if (twin_compare(&t, &t.fc, &w, round)) {
			st.errored++;
			twin_reopen(&e, &t, c);
		}
		sinks_settle(&e, &t);
	}
	cr_log_info("%s sge %u inline %u sig_all %d%s: %d rounds, %d posted, %d refused alike (%d after others "
		    "with a half-built ctrl rung by libmlx5, documented), %d refused by fastverbs only (documented; %d "
		    "of them a 2 GiB inline SGE), %d ended in error, %d wraps of the 16-bit index", type_name(c->type),
		    cap.max_send_sge, cap.max_inline_data, c->sig_all, c->no_bf ? " doorbell-only" : "",
		    ROUNDS, st.posted, st.refused_both, st.half_built, st.cut_fv, st.cut_enomem, st.errored, st.wraps);
	cr_assert_gt(st.posted, ROUNDS / 2, "too few rounds posted anything");
	cr_assert_gt(st.refused_both, 0, "no shared refusal exercised");
	cr_assert_gt(st.cut_fv, 0, "no deliberate difference exercised");
	if (c->type == IBV_QPT_XRC_SEND)
		cr_assert_gt(st.errored, 0, "no unknown SRQ number exercised");
	else	/* the others never err: one pair of twins posts all rounds */
		cr_assert_gt(st.wraps, 0, "the WQE index never wrapped");
	twin_close(&t);
	env_close(&e);
}

#endif
