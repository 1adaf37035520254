/*
 * Differential test on the software device, receive side: twin receive queues, one posted by
 * libmlx5 (ibv_post_recv / ibv_post_srq_recv) and polled by ibv_poll_cq, the other posted by
 * fastverbs (fv_post_recv / fv_post_srq_recv) and polled by fv_poll_cq.
 *
 * Each round posts the same seeded random receive list on both -- valid WRs, too many SGEs,
 * zero-length SGEs, a bad lkey now and then, lists longer than the room left (queue full),
 * a negative num_sge (README: fastverbs refuses it; libmlx5, which posts an empty WQE, gets
 * the list cut before it) -- and compares return code, *bad_wr, doorbell record and the
 * receive WQEs. Then libmlx5-driven senders send the same messages to both twins (SEND, SEND
 * with immediate, RDMA WRITE with immediate; now and then one too long for its receive, which
 * takes both receivers to the error state and the round starts them again), and the receive
 * completions (diff-util.h: every ibv_wc field), the senders' completions and the bytes that
 * landed in the twins' buffers must match. Modes: an RQ per QP, an SRQ shared by two QPs,
 * and an XRC SRQ behind two XRC target QPs. DIFF_TRACE=1 prints every round.
 */
#include "diff-util.h"

#define RROUNDS    20000	/* ~68000 receives: the SRQs' 16-bit counter wraps */
#define RMAX_LIST  8
#define RMAX_SGE   8		/* granted max_recv_sge of the configurations, at most */
#define RBUF       (1u << 16)	/* per twin: receive buffers below RBUF / 2, RDMA WRITE targets above */
#define SBUF       8192
#define MAX_MSGS   10
#define NQP        2
#define FIFO       256
#define BAD_LKEY   0x7abcdu
#define QKEY       0x22222222u
#define GRH        40		/* UD receives take the GRH area first */

enum rmode { M_RQ, M_SRQ, M_XRC };

struct rcaps { enum ibv_qp_type type; enum rmode mode; uint32_t wr, sge; };

/* What outlives a round that ends in error: buffers, CQs, the twin SRQs. */
struct renv {
	struct simt_dev d;
	const struct rcaps *c;
	uint64_t seed;
	uint8_t *buf[2], *sbuf;
	struct ibv_mr *mr[2], *smr;
	struct ibv_ah *ah;
	struct ibv_cq *rcq[2], *scq[2];
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq[2];
	uint32_t srqn[2];
	struct mlx5dv_srq dsrq[2];
	struct fv_srq fs;
	struct fv_cq fc;
	uint32_t srq_head;	/* libmlx5's SRQ free-list head, followed WQE by WQE */
	uint32_t cap[FIFO];	/* bytes each posted, unconsumed receive takes, oldest first */
	uint32_t cap_head, cap_tail;
	int nqp;		/* receiving QPs per twin */
};

/* Receiving QPs and their senders; started again after an error. */
struct rtwin {
	struct ibv_qp *rx[2][NQP], *tx[2][NQP];
	struct mlx5dv_qp dv[2];	/* rx[s][0]: its RQ (M_RQ) */
	struct fv_qp fq[NQP];	/* rx[FV][q] taken over (M_RQ, M_SRQ; XRC targets are not) */
};

struct rstats { int posted, einval, full, cut, zero_sges, msgs, recvs, errored, wraps; };

static uint64_t rnd(struct renv *e, uint64_t n)
{
	return diff_rnd(&e->seed, n);
}

/* ---- setup ---- */

static struct ibv_qp *xrc_qp(struct renv *e, enum ibv_qp_type type, struct ibv_cq *scq)
{
	struct ibv_qp_init_attr_ex a = { .qp_type = type };
	struct ibv_qp *qp;

	if (type == IBV_QPT_XRC_SEND) {
		a.comp_mask = IBV_QP_INIT_ATTR_PD;
		a.pd = e->d.pd;
		a.send_cq = scq;
		a.cap = (struct ibv_qp_cap){ .max_send_wr = 64, .max_send_sge = 1 };
	} else {
		a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		a.xrcd = e->xrcd;
	}
	qp = ibv_create_qp_ex(e->d.ctx, &a);
	cr_assert(qp, "XRC QP: %s", strerror(errno));
	return qp;
}

static void pair_open(struct renv *e, struct rtwin *t, int s, int q)
{
	const struct rcaps *c = e->c;

	if (c->mode == M_XRC) {
		t->rx[s][q] = xrc_qp(e, IBV_QPT_XRC_RECV, NULL);
		t->tx[s][q] = xrc_qp(e, IBV_QPT_XRC_SEND, e->scq[s]);
	} else {
		t->rx[s][q] = simt_qp(&e->d, &(struct setup_qp_cfg){ .type = c->type, .scq = e->rcq[s],
			.srq = e->srq[s], .max_send_wr = 1, .max_send_sge = 1, .max_recv_wr = c->wr,
			.max_recv_sge = c->sge });
		t->tx[s][q] = simt_qp(&e->d, &(struct setup_qp_cfg){ .type = c->type, .scq = e->scq[s],
			.max_send_wr = 64, .max_send_sge = 1, .max_recv_wr = 1, .max_recv_sge = 1 });
	}
	if (c->type == IBV_QPT_UD) {
		simt_ud_ready(t->rx[s][q], QKEY);
		simt_ud_ready(t->tx[s][q], QKEY);
	} else {
		simt_connect(t->tx[s][q], e->d.lid, t->rx[s][q]->qp_num, 0, 7, 7);
		simt_connect(t->rx[s][q], e->d.lid, t->tx[s][q]->qp_num, SIMT_ACCESS_ALL, 7, 7);
	}
}

static void rtwin_open(struct renv *e, struct rtwin *t)
{
	memset(t, 0, sizeof(*t));
	for (int s = LIB; s <= FV; s++)
		for (int q = 0; q < e->nqp; q++)
			pair_open(e, t, s, q);
	if (e->c->mode == M_XRC)
		return;
	for (int q = 0; q < e->nqp; q++)	/* SRQ receivers: fastverbs finds the SRQ from them */
		cr_assert_eq(fv_qp_init(&t->fq[q], t->rx[FV][q]), 0);
	for (int s = LIB; s <= FV; s++) {
		struct mlx5dv_obj o = { .qp = { .in = t->rx[s][0], .out = &t->dv[s] } };

		cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	}
	cr_assert_eq(t->dv[LIB].rq.wqe_cnt, t->dv[FV].rq.wqe_cnt, "twins got different RQs");
}

static void rtwin_close(struct renv *e, struct rtwin *t)
{
	for (int q = 0; q < e->nqp && e->c->mode != M_XRC; q++)
		fv_qp_cleanup(&t->fq[q]);
	for (int s = LIB; s <= FV; s++)
		for (int q = 0; q < e->nqp; q++) {
			cr_assert_eq(ibv_destroy_qp(t->rx[s][q]), 0);
			cr_assert_eq(ibv_destroy_qp(t->tx[s][q]), 0);
		}
	if (e->c->mode == M_RQ)
		e->cap_head = e->cap_tail;	/* the RQs went with their QPs */
}

static struct ibv_srq *make_srq(struct renv *e, int s)
{
	struct ibv_srq_init_attr_ex a = { .attr = { .max_wr = e->c->wr, .max_sge = e->c->sge },
					  .comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
					  .srq_type = IBV_SRQT_BASIC, .pd = e->d.pd };
	struct ibv_srq *srq;

	if (e->c->mode == M_XRC) {
		a.comp_mask |= IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
		a.srq_type = IBV_SRQT_XRC;
		a.xrcd = e->xrcd;
		a.cq = e->rcq[s];
	}
	srq = ibv_create_srq_ex(e->d.ctx, &a);
	cr_assert(srq, "SRQ: %s", strerror(errno));
	return srq;
}

static void srqs_open(struct renv *e)
{
	if (e->c->mode == M_XRC)
		e->xrcd = simt_xrcd(&e->d);
	for (int s = LIB; s <= FV; s++) {
		struct mlx5dv_obj o = { .srq = { .in = NULL, .out = &e->dsrq[s] } };

		e->srq[s] = make_srq(e, s);
		o.srq.in = e->srq[s];
		e->dsrq[s].comp_mask = MLX5DV_SRQ_MASK_SRQN;
		cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_SRQ), 0);
		if (e->c->mode == M_XRC)
			cr_assert_eq(ibv_get_srq_num(e->srq[s], &e->srqn[s]), 0);
	}
	cr_assert(e->dsrq[LIB].head == e->dsrq[FV].head && e->dsrq[LIB].tail == e->dsrq[FV].tail &&
		  e->dsrq[LIB].stride == e->dsrq[FV].stride, "twin SRQs differ");
	e->srq_head = e->dsrq[LIB].head;
	cr_assert_eq(fv_srq_init(&e->fs, e->srq[FV]), 0);
}

static void renv_open(struct renv *e, const struct rcaps *c, uint64_t seed)
{
	memset(e, 0, sizeof(*e));
	e->c = c;
	e->seed = seed;
	e->nqp = c->mode == M_RQ ? 1 : NQP;
	fvsim_set_step_mode(1);
	simt_open(&e->d, 0);
	e->sbuf = aligned_alloc(4096, SBUF);
	for (uint32_t i = 0; i < SBUF; i++)
		e->sbuf[i] = (uint8_t)(i * 7 + 3);
	e->smr = simt_mr(&e->d, e->sbuf, SBUF, SIMT_ACCESS_ALL);
	for (int s = LIB; s <= FV; s++) {
		e->buf[s] = simt_mem(&e->d, RBUF, SIMT_ACCESS_ALL, &e->mr[s]);
		e->rcq[s] = simt_cq(&e->d, 512);
		e->scq[s] = simt_cq(&e->d, 256);
	}
	e->ah = ibv_create_ah(e->d.pd, &(struct ibv_ah_attr){ .dlid = e->d.lid, .port_num = 1 });
	cr_assert(e->ah);
	if (c->mode != M_RQ)
		srqs_open(e);
	cr_assert_eq(fv_cq_init(&e->fc, e->rcq[FV]), 0);
	if (c->mode == M_XRC)	/* XRC targets are not fastverbs': tell it the CQ's SRQ */
		fv_cq_bind_srq(&e->fc, &e->fs);
}

static void renv_close(struct renv *e)
{
	fv_cq_cleanup(&e->fc);
	if (e->c->mode != M_RQ) {
		fv_srq_cleanup(&e->fs);
		for (int s = LIB; s <= FV; s++)
			cr_assert_eq(ibv_destroy_srq(e->srq[s]), 0);
	}
	if (e->xrcd)
		cr_assert_eq(ibv_close_xrcd(e->xrcd), 0);
	for (int s = LIB; s <= FV; s++) {
		cr_assert_eq(ibv_destroy_cq(e->rcq[s]), 0);
		cr_assert_eq(ibv_destroy_cq(e->scq[s]), 0);
		ibv_dereg_mr(e->mr[s]);
		free(e->buf[s]);
	}
	ibv_destroy_ah(e->ah);
	ibv_dereg_mr(e->smr);
	free(e->sbuf);
	simt_close(&e->d);
}

/* ---- random receive lists ---- */

struct rwrl {
	struct ibv_recv_wr wr[2][RMAX_LIST];
	struct ibv_sge sge[2][RMAX_LIST][RMAX_SGE + 3];
	uint32_t cap[RMAX_LIST];	/* bytes the WQE takes */
	int n, cut;
};

/*
 * One random receive WR, the same on both twins but for the buffer (each twin's own, at the
 * same offset) and its lkey. Returns 1 if only fastverbs refuses it (README: negative num_sge).
 */
static int make_rwr(struct renv *e, struct rwrl *l, int i, uint32_t max_sge)
{
	uint32_t kind = (uint32_t)rnd(e, 100), cap = 0;
	int ud = e->c->type == IBV_QPT_UD, nsge;

	if (kind < 3)
		nsge = (int)max_sge + 1 + (int)rnd(e, 3);	/* both: EINVAL */
	else if (kind < 5)
		nsge = -1 - (int)rnd(e, 2);			/* fastverbs: EINVAL */
	else	/* UD: a first SGE that holds the GRH, so most messages fit */
		nsge = ud ? 1 + (int)rnd(e, max_sge) : (int)rnd(e, max_sge + 1);
	uint64_t wr_id = 0x2000 + rnd(e, 1u << 20);

	for (int k = 0; k < nsge && k < RMAX_SGE + 3; k++) {
		uint32_t len = ud && k == 0 ? GRH + (uint32_t)rnd(e, 300) : rnd(e, 4) ? 1 + (uint32_t)rnd(e, 300) : 0;
		uint32_t off = (uint32_t)rnd(e, RBUF / 2 - 512) / 8 * 8;
		int bad = kind == 5 && k == 0;				/* both: LOC_PROT_ERR on arrival */

		for (int s = LIB; s <= FV; s++)
			l->sge[s][i][k] = (struct ibv_sge){ .addr = (uintptr_t)e->buf[s] + off, .length = len,
							    .lkey = bad ? BAD_LKEY : e->mr[s]->lkey };
		cap += len;
	}
	for (int s = LIB; s <= FV; s++)
		l->wr[s][i] = (struct ibv_recv_wr){ .wr_id = wr_id, .sg_list = l->sge[s][i], .num_sge = nsge,
						    .next = NULL };
	l->cap[i] = cap;
	return nsge < 0;
}

static void make_rlist(struct renv *e, struct rwrl *l, uint32_t max_sge)
{
	l->n = 1 + (int)rnd(e, RMAX_LIST);
	l->cut = l->n;
	for (int i = 0; i < l->n; i++) {
		if (make_rwr(e, l, i, max_sge) && l->cut == l->n)
			l->cut = i;
		for (int s = LIB; s <= FV && i; s++)
			l->wr[s][i - 1].next = &l->wr[s][i];
	}
}

/* ---- comparison ---- */

static uint32_t lkey_of(const uint8_t *seg)
{
	return (uint32_t)seg[4] << 24 | (uint32_t)seg[5] << 16 | (uint32_t)seg[6] << 8 | seg[7];
}

static int zero_len(const uint8_t *seg)
{
	return !seg[0] && !seg[1] && !seg[2] && !seg[3];
}

/*
 * An RQ WQE: its data segments up to and including the invalid-lkey terminator (none when all
 * max_gs are used) must be equal; what follows is an earlier WQE's and never read. Both
 * libraries drop zero-length SGEs here.
 */
static void compare_rq_wqe(const struct rtwin *t, uint32_t slot, int round)
{
	uint32_t stride = t->dv[LIB].rq.stride, gs = stride / 16;
	const uint8_t *a = (const uint8_t *)t->dv[LIB].rq.buf + (size_t)slot * stride;
	const uint8_t *b = (const uint8_t *)t->dv[FV].rq.buf + (size_t)slot * stride;

	/* byte counts here; address and lkey name each twin's own buffer: check_addrs() */
	for (uint32_t i = 0; i < gs; i++, a += 16, b += 16) {
		cr_assert_eq(memcmp(a, b, 4), 0, "round %d: RQ slot %u entry %u: byte count\nlib %s\nfv  %s", round,
			     slot, i, diff_hex(a, 16), diff_hex(b, 16));
		if (lkey_of(a) == MLX5_INVALID_LKEY) {
			cr_assert_arr_eq(a, b, 16, "round %d: RQ slot %u entry %u: terminator", round, slot, i);
			return;
		}
	}
}

/* The scatter list of an SRQ WQE as the device reads it, zero-length entries left out. */
static int srq_list(const uint8_t *w, uint32_t gs, const uint8_t *list[], int *zeros)
{
	int n = 0;

	for (uint32_t i = 0; i < gs; i++) {
		const uint8_t *seg = w + 16 + 16 * i;

		if (lkey_of(seg) == MLX5_INVALID_LKEY)
			break;
		if (zero_len(seg))
			(*zeros)++;
		else
			list[n++] = seg;
	}
	return n;
}

/*
 * An SRQ WQE: the same next index, and the same scatter list once libmlx5's zero-length
 * entries are left out (README: libmlx5 writes them on an SRQ, fastverbs drops them as both
 * do on an RQ). Returns how many libmlx5 wrote.
 */
static int compare_srq_wqe(const struct renv *e, uint32_t idx, int round)
{
	uint32_t stride = e->dsrq[LIB].stride, gs = stride / 16 - 1;
	const uint8_t *a = (const uint8_t *)e->dsrq[LIB].buf + (size_t)idx * stride;
	const uint8_t *b = (const uint8_t *)e->dsrq[FV].buf + (size_t)idx * stride;
	const uint8_t *la[RMAX_SGE + 1], *lb[RMAX_SGE + 1];
	int zeros = 0, fv_zeros = 0, na = srq_list(a, gs, la, &zeros), nb = srq_list(b, gs, lb, &fv_zeros);

	cr_assert(a[2] == b[2] && a[3] == b[3], "round %d: SRQ WQE %u: next index", round, idx);
	cr_assert_eq(fv_zeros, 0, "round %d: SRQ WQE %u: fastverbs wrote a zero-length entry", round, idx);
	cr_assert_eq(na, nb, "round %d: SRQ WQE %u: %d entries vs %d", round, idx, na, nb);
	for (int i = 0; i < na; i++)
		cr_assert_eq(memcmp(la[i], lb[i], 4), 0, "round %d: SRQ WQE %u entry %d\nlib %s\nfv  %s", round, idx,
			     i, diff_hex(la[i], 16), diff_hex(lb[i], 16));
	return zeros;
}

/*
 * Every data segment names each twin's own buffer at the same offset with its own MR's lkey
 * (or the same bad lkey): check that translation on what compare_*_wqe found equal in length.
 */
static void check_addrs(const struct renv *e, const uint8_t *a, const uint8_t *b, int round)
{
	uint64_t aa, ab;
	uint32_t ka = lkey_of(a), kb = lkey_of(b);

	memcpy(&aa, a + 8, 8);
	memcpy(&ab, b + 8, 8);
	aa = be64toh(aa);
	ab = be64toh(ab);

	cr_assert_eq(aa - (uintptr_t)e->buf[LIB], ab - (uintptr_t)e->buf[FV], "round %d: addresses differ", round);
	cr_assert((ka == e->mr[LIB]->lkey && kb == e->mr[FV]->lkey) || (ka == BAD_LKEY && kb == BAD_LKEY),
		  "round %d: lkeys %#x, %#x", round, ka, kb);
}

static uint32_t rcv_dbr(const struct renv *e, const struct rtwin *t, int s)
{
	return be32toh(e->c->mode == M_RQ ? t->dv[s].dbrec[MLX5_RCV_DBR] : e->dsrq[s].dbrec[0]) & 0xffff;
}

/* The WQEs one post wrote: k of them, from RQ slot first or along the SRQ free list. */
static void compare_posted(struct renv *e, const struct rtwin *t, uint32_t first, int k, int round,
			   struct rstats *st)
{
	for (int i = 0; i < k; i++) {
		const uint8_t *a, *b;
		uint32_t gs;

		if (e->c->mode == M_RQ) {
			uint32_t slot = (first + (uint32_t)i) & (t->dv[LIB].rq.wqe_cnt - 1);

			compare_rq_wqe(t, slot, round);
			a = (const uint8_t *)t->dv[LIB].rq.buf + (size_t)slot * t->dv[LIB].rq.stride;
			b = (const uint8_t *)t->dv[FV].rq.buf + (size_t)slot * t->dv[LIB].rq.stride;
			gs = t->dv[LIB].rq.stride / 16;
		} else {	/* the next WQE libmlx5 posts to is the one this one links to */
			const uint8_t *w = (const uint8_t *)e->dsrq[LIB].buf + (size_t)e->srq_head * e->dsrq[LIB].stride;

			st->zero_sges += compare_srq_wqe(e, e->srq_head, round);
			a = w + 16;
			b = (const uint8_t *)e->dsrq[FV].buf + (size_t)e->srq_head * e->dsrq[LIB].stride + 16;
			gs = e->dsrq[LIB].stride / 16 - 1;
			e->srq_head = (uint32_t)w[2] << 8 | w[3];
		}
		/* fastverbs' entries, each matched with libmlx5's next non-empty one */
		for (uint32_t j = 0, ja = 0; j < gs && lkey_of(b + 16 * j) != MLX5_INVALID_LKEY; j++, ja++) {
			while (ja < gs && zero_len(a + 16 * ja))
				ja++;
			cr_assert_lt(ja, gs, "round %d: libmlx5's WQE is shorter", round);
			check_addrs(e, a + 16 * ja, b + 16 * j, round);
		}
	}
	if (e->c->mode != M_RQ)
		cr_assert_eq(e->srq_head, e->fs.head, "round %d: SRQ heads %u vs %u", round, e->srq_head, e->fs.head);
}

/* ---- one round ---- */

static int post_recv_list(struct renv *e, struct rtwin *t, int s, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	if (s == LIB)
		return e->c->mode == M_RQ ? ibv_post_recv(t->rx[LIB][0], wr, bad) : ibv_post_srq_recv(e->srq[LIB], wr, bad);
	return e->c->mode == M_RQ ? fv_post_recv(&t->fq[0], wr, bad) : fv_post_srq_recv(&e->fs, wr, bad);
}

static void rpost_round(struct renv *e, struct rtwin *t, struct rwrl *l, int round, struct rstats *st)
{
	struct ibv_recv_wr *bad[2] = { NULL, NULL };
	uint32_t before = rcv_dbr(e, t, LIB);
	int rc[2] = { 0, 0 };

	cr_assert_eq(rcv_dbr(e, t, FV), before, "round %d: twins out of step", round);
	if (l->cut > 0) {	/* libmlx5 gets the list up to the WR fastverbs refuses */
		l->wr[LIB][l->cut - 1].next = NULL;
		rc[LIB] = post_recv_list(e, t, LIB, l->wr[LIB], &bad[LIB]);
	}
	rc[FV] = post_recv_list(e, t, FV, l->wr[FV], &bad[FV]);

	int lib_bad = rc[LIB] ? (int)(bad[LIB] - l->wr[LIB]) : -1, fv_bad = rc[FV] ? (int)(bad[FV] - l->wr[FV]) : -1;
	int posted = lib_bad >= 0 ? lib_bad : l->cut;

	if (diff_trace()) {
		fprintf(stderr, "recv round %d: %#x -> %#x/%#x rc %d/%d bad %d/%d cut %d:", round, before,
			rcv_dbr(e, t, LIB), rcv_dbr(e, t, FV), rc[LIB], rc[FV], lib_bad, fv_bad, l->cut);
		for (int i = 0; i < l->n; i++)
			fprintf(stderr, " [nsge %d cap %u]", l->wr[LIB][i].num_sge, l->cap[i]);
		fprintf(stderr, "\n");
	}
	if (l->cut < l->n && lib_bad < 0) {
		/* On an RQ both libraries test for room first: a full RQ refuses it with ENOMEM, as
		 * libmlx5 would have; fastverbs' SRQ tests num_sge first, libmlx5's too (README). */
		int full = e->c->mode == M_RQ && fv__rq_head(&t->fq[0]) - t->fq[0].rq.tail == t->fq[0].rq.entries;

		cr_assert(fv_bad == l->cut && rc[FV] == (full ? ENOMEM : EINVAL), "round %d: fastverbs should "
			  "refuse WR %d with %s (got %d at %d)", round, l->cut, full ? "ENOMEM" : "EINVAL", rc[FV], fv_bad);
		st->cut++;
	} else {
		cr_assert(rc[LIB] == rc[FV] && lib_bad == fv_bad, "round %d: libmlx5 returned %d at WR %d, "
			  "fastverbs %d at WR %d", round, rc[LIB], lib_bad, rc[FV], fv_bad);
		st->einval += rc[LIB] == EINVAL;
		st->full += rc[LIB] == ENOMEM;
	}
	cr_assert_eq(rcv_dbr(e, t, FV), rcv_dbr(e, t, LIB), "round %d: doorbell records %#x vs %#x", round,
		     rcv_dbr(e, t, LIB), rcv_dbr(e, t, FV));
	cr_assert_eq((uint16_t)(rcv_dbr(e, t, LIB) - before), posted, "round %d: %d posted, the record says %u",
		     round, posted, (uint16_t)(rcv_dbr(e, t, LIB) - before));
	compare_posted(e, t, before, posted, round, st);
	for (int i = 0; i < posted; i++)
		e->cap[e->cap_tail++ % FIFO] = l->cap[i];
	st->posted += posted;
	st->wraps += rcv_dbr(e, t, LIB) < before;
}

/* The smallest and largest capacity among the next m receives. */
static void cap_range(const struct renv *e, int m, uint32_t *lo, uint32_t *hi)
{
	*lo = UINT32_MAX;
	*hi = 0;
	for (int i = 0; i < m; i++) {
		uint32_t c = e->cap[(e->cap_head + (uint32_t)i) % FIFO];

		*lo = c < *lo ? c : *lo;
		*hi = c > *hi ? c : *hi;
	}
}

/*
 * Up to MAX_MSGS messages, never more than the receives waiting (an RC message without one
 * would be retried forever): the same operation, length, payload and immediate from each
 * twin's sender. Most fit every receive they may land in (which QP takes which SRQ WQE
 * depends on the order the device serves the senders); one in 50 fits none.
 */
static int send_msgs(struct renv *e, struct rtwin *t, int round)
{
	uint32_t waiting = e->cap_tail - e->cap_head, lo, hi;
	/* Every fourth round or so sends nothing, so the queue fills up now and then. */
	int m = rnd(e, 4) ? (int)rnd(e, (waiting < MAX_MSGS ? waiting : MAX_MSGS) + 1u) : 0;
	int ud = e->c->type == IBV_QPT_UD;

	cap_range(e, m, &lo, &hi);
	for (int i = 0; i < m; i++) {
		uint32_t k = (uint32_t)rnd(e, 10), q = (uint32_t)rnd(e, (uint64_t)e->nqp), len;
		enum ibv_wr_opcode op = k < 5 ? IBV_WR_SEND : k < 8 || ud ? IBV_WR_SEND_WITH_IMM : IBV_WR_RDMA_WRITE_WITH_IMM;
		uint32_t room = lo > (ud ? GRH : 0) ? lo - (ud ? GRH : 0) : 0;

		if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
			len = (uint32_t)rnd(e, 512);			/* lands outside the receive */
		else if (rnd(e, 50) == 0)
			len = hi + 1 + (uint32_t)rnd(e, 64);		/* both: LOC_LEN_ERR */
		else
			len = (uint32_t)rnd(e, room + 1u);
		uint32_t soff = (uint32_t)rnd(e, SBUF - 4096), roff = RBUF / 2 + (uint32_t)rnd(e, RBUF / 2 - 512);
		__be32 imm = htobe32((uint32_t)rnd(e, 1u << 31));

		for (int s = LIB; s <= FV; s++) {
			struct ibv_sge sge = { (uintptr_t)e->sbuf + soff, len, e->smr->lkey };
			struct ibv_send_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = len ? 1 : 0,
						  .opcode = op, .send_flags = IBV_SEND_SIGNALED, .imm_data = imm }, *bad;

			if (ud) {
				wr.wr.ud.ah = e->ah;
				wr.wr.ud.remote_qpn = t->rx[s][q]->qp_num;
				wr.wr.ud.remote_qkey = QKEY;
			} else {
				wr.wr.rdma.remote_addr = (uintptr_t)e->buf[s] + roff;
				wr.wr.rdma.rkey = e->mr[s]->rkey;
			}
			if (e->c->mode == M_XRC)
				wr.qp_type.xrc.remote_srqn = e->srqn[s];
			cr_assert_eq(ibv_post_send(t->tx[s][q], &wr, &bad), 0, "round %d: sender", round);
		}
	}
	return m;
}

/* The senders' completions (libmlx5 on both sides) must match too. */
static void compare_senders(struct renv *e, int round)
{
	struct ibv_wc a[64], b[64];
	int na = ibv_poll_cq(e->scq[LIB], 64, a), nb = ibv_poll_cq(e->scq[FV], 64, b);

	cr_assert_eq(na, nb, "round %d: senders completed %d vs %d", round, na, nb);
	for (int i = 0; i < na; i++)
		cr_assert(a[i].wr_id == b[i].wr_id && a[i].status == b[i].status, "round %d: sender completion %d: "
			  "%s vs %s", round, i, ibv_wc_status_str(a[i].status), ibv_wc_status_str(b[i].status));
}

static void run(const struct rcaps *c, uint64_t seed)
{
	struct renv e;
	struct rtwin t;
	struct rwrl l;
	struct rstats st = { 0 };
	struct diff_wcs w;
	uint32_t max_sge;

	renv_open(&e, c, seed);
	rtwin_open(&e, &t);
	if (c->mode == M_RQ) {
		struct ibv_qp_attr attr;
		struct ibv_qp_init_attr init;

		cr_assert_eq(ibv_query_qp(t.rx[LIB][0], &attr, IBV_QP_CAP, &init), 0);
		max_sge = attr.cap.max_recv_sge;
	} else {
		max_sge = e.dsrq[LIB].stride / 16 - 1;	/* what libmlx5 checks num_sge against */
	}
	cr_assert_leq(max_sge, RMAX_SGE);

	for (int round = 0; round < RROUNDS; round++) {
		struct diff_qpns qps = { .n = e.nqp }, srcs = { .n = e.nqp };

		for (int q = 0; q < e.nqp; q++) {
			qps.pair[q][LIB] = t.rx[LIB][q]->qp_num;
			qps.pair[q][FV] = t.rx[FV][q]->qp_num;
			srcs.pair[q][LIB] = t.tx[LIB][q]->qp_num;
			srcs.pair[q][FV] = t.tx[FV][q]->qp_num;
		}
		make_rlist(&e, &l, max_sge);
		rpost_round(&e, &t, &l, round, &st);
		st.msgs += send_msgs(&e, &t, round);
		int errors = diff_poll_compare(e.rcq[LIB], &e.fc, &w, &qps, &srcs, "recv", round);

		compare_senders(&e, round);
		cr_assert_eq(memcmp(e.buf[LIB], e.buf[FV], RBUF), 0, "round %d: the data landed differently", round);
		for (int i = 0; i < w.n[LIB]; i++)	/* each consumed a receive; flushes end the RQ anyway */
			e.cap_head++;
		st.recvs += w.n[LIB];
		if (errors) {	/* both receivers (and RC senders) are in the error state: start again */
			st.errored++;
			rtwin_close(&e, &t);
			rtwin_open(&e, &t);
		}
	}
	cr_log_info("%s %s max_sge %u: %d rounds, %d receives posted, %d lists refused alike (%d EINVAL, %d queue "
		    "full), %d refused by fastverbs only (documented), %d zero-length SRQ entries libmlx5 wrote "
		    "(documented), %d messages, %d receive completions, %d ended in error, %d wraps of the 16-bit counter",
		    c->type == IBV_QPT_RC ? "RC" : c->type == IBV_QPT_UC ? "UC" : c->type == IBV_QPT_UD ? "UD" : "XRC",
		    c->mode == M_RQ ? "RQ" : c->mode == M_SRQ ? "SRQ" : "SRQ", max_sge, RROUNDS, st.posted,
		    st.einval + st.full, st.einval, st.full, st.cut, st.zero_sges, st.msgs, st.recvs, st.errored,
		    st.wraps);
	cr_assert(st.posted > RROUNDS && st.einval && st.full && st.cut && st.msgs > RROUNDS && st.errored,
		  "a case went unexercised");
	/* An SRQ outlives the errors (an RQ goes with its QP): its counter must have wrapped. */
	cr_assert(c->mode == M_RQ || (st.zero_sges && st.wraps), "no zero-length SGE or no wrap on the SRQ");
	rtwin_close(&e, &t);
	renv_close(&e);
}

Test(sim_diff_recv, rc_rq_4sge)  { run(&(struct rcaps){ IBV_QPT_RC, M_RQ, 16, 4 }, 21); }
Test(sim_diff_recv, uc_rq_1sge)  { run(&(struct rcaps){ IBV_QPT_UC, M_RQ, 16, 1 }, 22); }
Test(sim_diff_recv, ud_rq_3sge)  { run(&(struct rcaps){ IBV_QPT_UD, M_RQ, 32, 3 }, 23); }
Test(sim_diff_recv, rc_srq_4sge) { run(&(struct rcaps){ IBV_QPT_RC, M_SRQ, 16, 4 }, 24); }
Test(sim_diff_recv, xrc_srq_2sge) { run(&(struct rcaps){ IBV_QPT_XRC_SEND, M_XRC, 16, 2 }, 25); }
