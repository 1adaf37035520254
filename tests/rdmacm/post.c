/*
 * fv_rdma_post_* against librdmacm's inline rdma_post_* (rdma_verbs.h, through libmlx5) on
 * twin ids, send side: the twins of tests/lib/diff-send.h, each wrapped in a struct
 * rdma_cm_id built by hand (the inlines use only id->qp, pd and the CQs). Each round makes
 * the same seeded random calls on both -- every rdma_post_* that sends, with or without mr,
 * inline or not, signaled, solicited, fenced; too many SGEs and inline data too long (both
 * refuse) -- and compares the return value, errno, doorbell record, WQE bytes and
 * BlueFlame/doorbell writes; then the completions (fv_rdma's CQ polled by fv_poll_cq).
 * Calls librdmacm crashes on or posts a WQE the HCA fails are made on fastverbs alone and
 * must be refused with EINVAL and leave nothing behind.
 */
#include <rdma/rdma_verbs.h>
#include <fastverbs/compat/rdmacm.h>

#include "diff-send.h"

#define PROUNDS 3000
#define PCALLS  6

enum call { C_SEND, C_SENDV, C_WRITE, C_WRITEV, C_READ, C_READV, C_UD_SEND, C_COUNT };

struct ptwin {
	struct twin t;
	struct rdma_cm_id id[2];
	struct fv_rdma r;
};

/* One call's arguments, given to both libraries. */
struct pargs {
	enum call call;
	void *context;
	uint8_t *addr;
	size_t length;
	struct ibv_mr *mr;
	int flags;
	struct ibv_sge sgl[20];
	int nsge;
	uint64_t raddr;
	uint32_t rkey;
	int fv_only;		/* a call fastverbs refuses with EINVAL and librdmacm is not given */
};

struct pstats { int calls, refused_both, fv_only, inline_calls, no_mr; };

static void ptwin_open(struct env *e, struct ptwin *p, const struct caps *c)
{
	twin_open(e, &p->t, c);
	for (int s = LIB; s <= FV; s++) {
		memset(&p->id[s], 0, sizeof(p->id[s]));
		p->id[s].verbs = e->d.ctx;
		p->id[s].pd = e->d.pd;
		p->id[s].qp = p->t.qp[s];
		p->id[s].send_cq = p->id[s].recv_cq = p->t.cq[s];
	}
	cr_assert_eq(fv_rdma_init(&p->r, &p->id[FV]), 0, "fv_rdma_init: %s", strerror(errno));
	cr_assert(p->r.cq[1].cq.ibcq == NULL, "one CQ for both: taken over once");
}

static void ptwin_close(struct ptwin *p)
{
	fv_rdma_cleanup(&p->r);
	twin_close(&p->t);
}

static int call_allowed(enum ibv_qp_type type, enum call k)
{
	switch (k) {
	case C_UD_SEND:
		return 1;
	case C_SEND: case C_SENDV:	/* on UD only _ud_send names a destination */
		return type != IBV_QPT_UD;
	case C_WRITE: case C_WRITEV:
		return type != IBV_QPT_UD;
	default:
		return type == IBV_QPT_RC;
	}
}

static int is_send_like(enum call k)
{
	return k == C_SEND || k == C_SENDV || k == C_UD_SEND || k == C_WRITE || k == C_WRITEV;
}

static int is_vector(enum call k)
{
	return k == C_SENDV || k == C_WRITEV || k == C_READV;
}

static void make_call(struct env *e, struct pargs *a, enum ibv_qp_type type, const struct ibv_qp_cap *cap,
		      struct pstats *st)
{
	uint32_t kind = (uint32_t)rnd(e, 100);

	memset(a, 0, sizeof(*a));
	do
		a->call = (enum call)rnd(e, C_COUNT);
	while (!call_allowed(type, a->call));
	a->context = (void *)(uintptr_t)(0x1000 + rnd(e, 1u << 20));
	a->flags = (rnd(e, 3) == 0 ? IBV_SEND_SIGNALED : 0) | (rnd(e, 8) == 0 ? IBV_SEND_SOLICITED : 0) |
		   (rnd(e, 8) == 0 ? IBV_SEND_FENCE : 0);
	a->raddr = (uintptr_t)e->remote + rnd(e, BUF_SIZE / 2) / 8 * 8;
	a->rkey = e->remote_mr->rkey;
	a->addr = e->local + rnd(e, BUF_SIZE / 2);
	a->length = rnd(e, 4) ? rnd(e, 200) : 0;
	a->mr = e->local_mr;
	if (is_vector(a->call)) {
		a->nsge = (int)rnd(e, (uint64_t)cap->max_send_sge + 1);
		if (kind < 5)
			a->nsge = (int)cap->max_send_sge + 1 + (int)rnd(e, 3);	/* both: ENOMEM */
		for (int k = 0; k < a->nsge; k++)
			a->sgl[k] = (struct ibv_sge){ .addr = (uintptr_t)e->local + rnd(e, BUF_SIZE / 2),
						      .length = (uint32_t)rnd(e, 100), .lkey = e->local_mr->lkey };
	}
	if (is_send_like(a->call) && rnd(e, 3) == 0) {
		uint64_t total = a->length;

		if (is_vector(a->call))
			for (int k = total = 0; k < a->nsge; k++)
				total += a->sgl[k].length;
		a->flags |= IBV_SEND_INLINE;
		st->inline_calls++;
		if (kind >= 5 && kind < 10) {		/* both: ENOMEM */
			if (is_vector(a->call) && a->nsge)
				over_inline(a->sgl, a->nsge, cap->max_inline_data + 1);
			else
				a->length = cap->max_inline_data + 1 + rnd(e, 64);
		} else if (total > cap->max_inline_data) {
			a->flags &= ~IBV_SEND_INLINE;
		}
		if (!is_vector(a->call) && (a->flags & IBV_SEND_INLINE) && rnd(e, 2)) {
			a->mr = NULL;			/* inline data needs no lkey */
			st->no_mr++;
		}
	}
	if ((a->call == C_READ || (a->call == C_READV && a->nsge && a->nsge <= (int)cap->max_send_sge)) &&
	    kind >= 10 && kind < 13) {
		a->flags |= IBV_SEND_INLINE;		/* libmlx5: an inline READ the HCA fails */
		a->fv_only = 1;
	}
}

/* Make call a on twin s (librdmacm's inline for LIB, fastverbs' for FV); errno in *err. */
static int do_call(struct ptwin *p, int s, struct env *e, struct pargs *a, int *err)
{
	struct rdma_cm_id *id = &p->id[LIB];
	struct fv_rdma *r = &p->r;
	uint32_t qpn = p->t.sink[LIB]->qp_num;	/* one sink for both: the same AV and QPN */
	int rc = -2;

	errno = 0;
	switch (a->call) {
	case C_SEND:
		rc = s == LIB ? rdma_post_send(id, a->context, a->addr, a->length, a->mr, a->flags)
			      : fv_rdma_post_send(r, a->context, a->addr, a->length, a->mr, a->flags);
		break;
	case C_SENDV:
		rc = s == LIB ? rdma_post_sendv(id, a->context, a->sgl, a->nsge, a->flags)
			      : fv_rdma_post_sendv(r, a->context, a->sgl, a->nsge, a->flags);
		break;
	case C_WRITE:
		rc = s == LIB ? rdma_post_write(id, a->context, a->addr, a->length, a->mr, a->flags, a->raddr, a->rkey)
			      : fv_rdma_post_write(r, a->context, a->addr, a->length, a->mr, a->flags, a->raddr, a->rkey);
		break;
	case C_WRITEV:
		rc = s == LIB ? rdma_post_writev(id, a->context, a->sgl, a->nsge, a->flags, a->raddr, a->rkey)
			      : fv_rdma_post_writev(r, a->context, a->sgl, a->nsge, a->flags, a->raddr, a->rkey);
		break;
	case C_READ:
		rc = s == LIB ? rdma_post_read(id, a->context, a->addr, a->length, a->mr, a->flags, a->raddr, a->rkey)
			      : fv_rdma_post_read(r, a->context, a->addr, a->length, a->mr, a->flags, a->raddr, a->rkey);
		break;
	case C_READV:
		rc = s == LIB ? rdma_post_readv(id, a->context, a->sgl, a->nsge, a->flags, a->raddr, a->rkey)
			      : fv_rdma_post_readv(r, a->context, a->sgl, a->nsge, a->flags, a->raddr, a->rkey);
		break;
	case C_UD_SEND:
		rc = s == LIB ? rdma_post_ud_send(id, a->context, a->addr, a->length, a->mr, a->flags, e->ah, qpn)
			      : fv_rdma_post_ud_send(r, a->context, a->addr, a->length, a->mr, a->flags, e->ah, qpn);
		break;
	default:
		break;
	}
	*err = errno;
	return rc;
}

/* One call on both twins (or on fastverbs alone), compared as diff-send.h compares posts. */
static void call_round(struct env *e, struct ptwin *p, struct pargs *a, enum ibv_qp_type type, int round,
		       struct pstats *st)
{
	struct twin *t = &p->t;
	uint8_t reg[2][REG_BYTES];
	uint32_t before = sq_dbr(&t->dv[LIB]);
	int rc[2] = { 0, 0 }, err[2] = { 0, 0 };

	cr_assert_eq(sq_dbr(&t->dv[FV]), before, "round %d: twins out of step", round);
	memset(reg, 0, sizeof(reg));
	for (int s = a->fv_only ? FV : LIB; s <= FV; s++) {
		memset(t->dv[s].bf.reg, 0, REG_BYTES);
		rc[s] = do_call(p, s, e, a, &err[s]);
		memcpy(reg[s], t->dv[s].bf.reg, REG_BYTES);
	}
	st->calls++;
	if (a->fv_only) {
		cr_assert_eq(rc[FV], -1, "round %d: call %d: fastverbs posted what it must refuse", round, a->call);
		cr_assert_eq(err[FV], EINVAL, "round %d: errno %d", round, err[FV]);
		cr_assert_eq(sq_dbr(&t->dv[FV]), before, "round %d: a refused call moved the doorbell record", round);
		cr_assert(diff_zero(reg[FV], REG_BYTES), "round %d: a refused call rang", round);
		st->fv_only++;
		return;
	}
	cr_assert_eq(rc[FV], rc[LIB], "round %d: call %d returned %d, librdmacm %d (errno %d / %d)", round, a->call,
		     rc[FV], rc[LIB], err[FV], err[LIB]);
	if (rc[LIB]) {
		cr_assert_eq(err[FV], err[LIB], "round %d: call %d: errno %d, librdmacm %d", round, a->call, err[FV],
			     err[LIB]);
		st->refused_both++;
	}
	uint32_t after = sq_dbr(&t->dv[LIB]);

	cr_assert_eq(sq_dbr(&t->dv[FV]), after, "round %d: doorbell record %#x vs %#x", round, sq_dbr(&t->dv[FV]),
		     after);
	compare_rings(t, before, after, type, round);
	compare_reg(e, t, reg, type, after != before, 0, before, after, round);
}

static void prun(const struct caps *c, uint64_t seed)
{
	struct env e;
	struct ptwin p;
	struct ibv_qp_cap cap;
	struct pargs a;
	struct pstats st = { 0 };
	struct diff_wcs w;

	env_open(&e, c, seed);
	ptwin_open(&e, &p, c);
	cap = twin_caps(&p.t);
	for (int round = 0; round < PROUNDS; round++) {
		int n = 1 + (int)rnd(&e, PCALLS);

		for (int i = 0; i < n; i++) {
			make_call(&e, &a, c->type, &cap, &st);
			call_round(&e, &p, &a, c->type, round, &st);
		}
		/* A signaled zero-length call retires the round's unsignaled WQEs on both. */
		memset(&a, 0, sizeof(a));
		a.call = c->type == IBV_QPT_UD ? C_UD_SEND : C_WRITE;
		a.context = (void *)(uintptr_t)0xc105e;
		a.addr = e.local;
		a.mr = e.local_mr;
		a.flags = IBV_SEND_SIGNALED;
		a.raddr = (uintptr_t)e.remote;
		a.rkey = e.remote_mr->rkey;
		call_round(&e, &p, &a, c->type, round, &st);
		cr_assert_eq(twin_compare(&p.t, &p.r.cq[0].cq, &w, round), 0, "round %d: an error completion",
			     round);
		sinks_settle(&e, &p.t);
	}
	cr_log_info("%s: %d calls, %d refused alike, %d refused by fastverbs alone, %d inline (%d without mr)",
		    type_name(c->type), st.calls, st.refused_both, st.fv_only, st.inline_calls, st.no_mr);
	cr_assert_gt(st.refused_both, 0);
	cr_assert_gt(st.no_mr, 0);
	if (c->type == IBV_QPT_RC)
		cr_assert_gt(st.fv_only, 0);
	ptwin_close(&p);
	env_close(&e);
}

TestSuite(sim_rdmacm_post, .timeout = 300);

Test(sim_rdmacm_post, rc_4sge_inline64) { prun(&(struct caps){ IBV_QPT_RC, 64, 4, 64, 0, 0, 0 }, 11); }
Test(sim_rdmacm_post, uc_2sge_inline128) { prun(&(struct caps){ IBV_QPT_UC, 64, 2, 128, 0, 0, 0 }, 12); }
Test(sim_rdmacm_post, ud_1sge_inline64) { prun(&(struct caps){ IBV_QPT_UD, 64, 1, 64, 0, 0, 0 }, 13); }
Test(sim_rdmacm_post, rc_sig_all_doorbell_only) { prun(&(struct caps){ IBV_QPT_RC, 128, 3, 32, 1, 1, 0 }, 14); }

/* ---- what librdmacm crashes or asserts on: fastverbs refuses it, and nothing is written ---- */

static struct env fe;
static struct ptwin fp;

static void fsetup(void)
{
	env_open(&fe, &(struct caps){ IBV_QPT_UD, 64, 1, 64, 0, 0, 0 }, 21);
	ptwin_open(&fe, &fp, &(struct caps){ IBV_QPT_UD, 64, 1, 64, 0, 0, 0 });
}

static void fteardown(void)
{
	ptwin_close(&fp);
	env_close(&fe);
}

/* rc must be -1 with errno want, the send ring and doorbell record untouched. */
static void expect_refused(int rc, int want, const char *what)
{
	int err = errno;

	cr_assert_eq(rc, -1, "%s: returned %d", what, rc);
	cr_assert_eq(err, want, "%s: errno %d (%s), want %d", what, err, strerror(err), want);
	cr_assert_eq(sq_dbr(&fp.t.dv[FV]), 0, "%s: the doorbell record moved", what);
	cr_assert_eq(fv__rq_head(&fp.r.qp), 0, "%s: a receive was posted", what);
}

Test(sim_rdmacm_post, refusals, .init = fsetup, .fini = fteardown)
{
	struct fv_rdma *r = &fp.r;
	struct ibv_mr *mr = fe.local_mr;
	struct ibv_sge sge = { (uintptr_t)fe.local, 8, mr->lkey };
	uint8_t *end = fe.local + BUF_SIZE;

	expect_refused(fv_rdma_post_ud_send(r, NULL, fe.local, 8, mr, 0, NULL, 1), EINVAL, "ud_send without ah");
	expect_refused(fv_rdma_post_send(r, NULL, fe.local, 8, mr, 0), EINVAL, "send on UD (no ah)");
	expect_refused(fv_rdma_post_sendv(r, NULL, &sge, 1, 0), EINVAL, "sendv on UD (no ah)");
	expect_refused(fv_rdma_post_write(r, NULL, fe.local, 8, mr, 0, 0, 1), EINVAL, "write on UD");
	expect_refused(fv_rdma_post_read(r, NULL, fe.local, 8, NULL, 0, 0, 1), EINVAL, "read without mr");
	expect_refused(fv_rdma_post_recv(r, NULL, fe.local, 8, NULL), EINVAL, "recv without mr");
	expect_refused(fv_rdma_post_recv(r, NULL, fe.local - 1, 8, mr), EINVAL, "recv before mr");
	expect_refused(fv_rdma_post_recv(r, NULL, end - 7, 8, mr), EINVAL, "recv past mr");
	expect_refused(fv_rdma_post_recv(r, NULL, end, (size_t)-1, mr), EINVAL, "recv length wrapping");
	expect_refused(fv_rdma_post_recvv(r, NULL, &sge, -1), EINVAL, "recvv negative nsge");
	{
		struct ibv_wc wc;
		struct rdma_cm_id noqp;
		struct fv_rdma r2;

		/* The twin's CQ has no completion channel: nothing to wait on. */
		expect_refused(fv_rdma_get_send_comp(r, &wc), EINVAL, "get_send_comp without a channel");
		memset(&noqp, 0, sizeof(noqp));
		expect_refused(fv_rdma_init(&r2, &noqp), EINVAL, "init of an id without QP");
		expect_refused(fv_rdma_init(&r2, NULL), EINVAL, "init without id");
	}
	/* The same calls, valid, are taken: the checks above refused for their reason alone. */
	cr_assert_eq(fv_rdma_post_recv(r, (void *)1, end - 8, 8, mr), 0, "recv at the end of mr: %s", strerror(errno));
	cr_assert_eq(fv__rq_head(&r->qp), 1);
	cr_assert_eq(fv_rdma_post_ud_send(r, (void *)2, fe.local, 8, mr, IBV_SEND_SIGNALED, fe.ah, 1), 0);
	cr_assert_neq(sq_dbr(&fp.t.dv[FV]), 0, "the valid send was not posted");
}

/* ---- posting before the id is connected: libmlx5's state rules, through both ---- */

/* The same call on both twins: the same return value and errno, and errno want. */
#define BOTH(what, want, lib_call, fv_call)                                                           \
	do {                                                                                          \
		int rl_, el_, rf_, ef_;                                                               \
		errno = 0;                                                                            \
		rl_ = (lib_call);                                                                     \
		el_ = errno;                                                                          \
		errno = 0;                                                                            \
		rf_ = (fv_call);                                                                      \
		ef_ = errno;                                                                          \
		cr_assert_eq(rf_, rl_, "%s in %s: returned %d, librdmacm %d", what, step[k], rf_, rl_);   \
		cr_assert_eq(ef_, el_, "%s in %s: errno %d, librdmacm %d", what, step[k], ef_, el_);      \
		cr_assert_eq(rf_ ? ef_ : 0, want, "%s in %s: errno %d, not %d", what, step[k], ef_, want); \
	} while (0)

/* RESET: receives EINVAL, sends ENOMEM; INIT: receives taken, sends ENOMEM; RTS: both taken. */
Test(sim_rdmacm_post, before_rts)
{
	static const char *const step[] = { "RESET", "INIT", "RTS" };
	static const int recv_err[] = { EINVAL, 0, 0 }, send_err[] = { ENOMEM, ENOMEM, 0 };
	struct simt_dev d;
	static uint8_t buf[4096];
	struct ibv_mr *mr;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2], *peer[2];
	struct rdma_cm_id id[2];
	struct fv_rdma r;

	fvsim_set_step_mode(1);
	simt_open(&d, 0);
	mr = simt_mr(&d, buf, sizeof(buf), SIMT_ACCESS_ALL);
	for (int s = LIB; s <= FV; s++) {
		cq[s] = simt_cq(&d, 64);
		qp[s] = simt_qp(&d, &(struct setup_qp_cfg){ .type = IBV_QPT_RC, .scq = cq[s], .max_inline = 64 });
		peer[s] = simt_qp(&d, &(struct setup_qp_cfg){ .type = IBV_QPT_RC, .scq = cq[s] });
		memset(&id[s], 0, sizeof(id[s]));
		id[s].verbs = d.ctx;
		id[s].pd = d.pd;
		id[s].qp = qp[s];
		id[s].send_cq = id[s].recv_cq = cq[s];
	}
	cr_assert_eq(fv_rdma_init(&r, &id[FV]), 0, "fv_rdma_init in RESET: %s", strerror(errno));
	for (int k = 0; k < 3; k++) {
		BOTH("recv", recv_err[k], rdma_post_recv(&id[LIB], NULL, buf, 64, mr),
		     fv_rdma_post_recv(&r, NULL, buf, 64, mr));
		BOTH("send", send_err[k], rdma_post_send(&id[LIB], NULL, buf, 8, NULL, IBV_SEND_INLINE),
		     fv_rdma_post_send(&r, NULL, buf, 8, NULL, IBV_SEND_INLINE));
		BOTH("write", send_err[k], rdma_post_write(&id[LIB], NULL, buf, 8, mr, 0, (uintptr_t)buf, mr->rkey),
		     fv_rdma_post_write(&r, NULL, buf, 8, mr, 0, (uintptr_t)buf, mr->rkey));
		BOTH("readv", send_err[k], rdma_post_readv(&id[LIB], NULL, NULL, 0, 0, (uintptr_t)buf, mr->rkey),
		     fv_rdma_post_readv(&r, NULL, NULL, 0, 0, (uintptr_t)buf, mr->rkey));
		for (int s = LIB; s <= FV && k == 0; s++) {	/* to INIT */
			struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

			cr_assert_eq(ibv_modify_qp(qp[s], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						     IBV_QP_ACCESS_FLAGS), 0);
		}
		for (int s = LIB; s <= FV && k == 1; s++) {	/* INIT again, RTR, RTS */
			simt_connect(qp[s], d.lid, peer[s]->qp_num, SIMT_ACCESS_ALL, 7, 7);
			simt_connect(peer[s], d.lid, qp[s]->qp_num, SIMT_ACCESS_ALL, 7, 7);
		}
	}
	fv_rdma_cleanup(&r);
	for (int s = LIB; s <= FV; s++) {
		ibv_destroy_qp(qp[s]);
		ibv_destroy_qp(peer[s]);
		ibv_destroy_cq(cq[s]);
	}
	ibv_dereg_mr(mr);
	simt_close(&d);
}
