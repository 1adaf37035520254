/*
 * Memory-window WQEs byte for byte against libmlx5: replay tests/vectors/libmlx5-44/mw.txt
 * (BIND_MW, LOCAL_INV, ibv_bind_mw, the wr_* API, the fence on the next WQE, a chain, a bind
 * with an SGE after it, a bind across the ring end) on rings of the producer's geometry,
 * once through fv_post_send, once through the typed builders and once through fv_wr_*
 * (fv_wr_bind_mw, fv_wr_local_inv), comparing every WQEBB, the doorbell record and the
 * BlueFlame register.
 */
#include <stdio.h>
#include <criterion/criterion.h>
#include <fastverbs/compat/verbs.h>
#include "memqp.h"
#include "vecfile.h"

#define VECTORS FV_TOP "/tests/vectors/libmlx5-44/mw.txt"
#define BUF     0x10000000ull	/* the producer's data buffer */

/* The keys the device handed out when the file was made ("#! keys" line). */
static struct {
	uint32_t mr, lkey;
	struct ibv_mr bmr;
	struct ibv_mw mw2[4], mw1;
} k;

static void load_keys(void)
{
	FILE *f = fopen(VECTORS, "r");
	char line[256];
	int got = 0;

	cr_assert(f);
	while (!got && fgets(line, sizeof(line), f))
		got = sscanf(line, "#! keys mr %x lkey %x mw2 %x %x %x %x mw1 %x", &k.mr, &k.lkey,
			     &k.mw2[0].rkey, &k.mw2[1].rkey, &k.mw2[2].rkey, &k.mw2[3].rkey,
			     &k.mw1.rkey) == 7;
	fclose(f);
	cr_assert(got, "no keys line in %s", VECTORS);
	k.bmr.lkey = k.lkey;
	for (int i = 0; i < 4; i++)
		k.mw2[i].type = IBV_MW_TYPE_2;
	k.mw1.type = IBV_MW_TYPE_1;
}

/* What a case title says: "MW bind2 w<n> <rights> off 0x<o> len 0x<l> [sge] <flags>", ... */
struct mwcase {
	unsigned send_flags;
	unsigned fv_flags;
	int win;		/* bind2: which type 2 window */
	unsigned access;
	uint64_t off, len;
};

static void parse(const char *t, struct mwcase *c)
{
	const char *p;

	memset(c, 0, sizeof(*c));
	if (strstr(t, "SIGNALED")) {
		c->send_flags |= IBV_SEND_SIGNALED;
		c->fv_flags |= FV_SIGNALED;
	}
	if (strstr(t, "SOLICITED")) {
		c->send_flags |= IBV_SEND_SOLICITED;
		c->fv_flags |= FV_SOLICITED;
	}
	if (strstr(t, "FENCE")) {
		c->send_flags |= IBV_SEND_FENCE;
		c->fv_flags |= FV_FENCE;
	}
	for (p = strstr(t, " w"); p; p = strstr(p + 1, " w"))
		if (p[2] >= '0' && p[2] <= '3') {
			c->win = p[2] - '0';
			break;
		}
	if (strstr(t, "RR"))
		c->access |= IBV_ACCESS_REMOTE_READ;
	if (strstr(t, "RW"))
		c->access |= IBV_ACCESS_REMOTE_WRITE;
	if (strstr(t, "LW"))
		c->access |= IBV_ACCESS_LOCAL_WRITE;
	if (strstr(t, "ATOMIC"))
		c->access |= IBV_ACCESS_REMOTE_ATOMIC;
	if (strstr(t, "ZERO_BASED"))
		c->access |= IBV_ACCESS_ZERO_BASED;
	if ((p = strstr(t, "off 0x")))
		c->off = strtoull(p + 4, NULL, 16);
	if ((p = strstr(t, "len 0x")))
		c->len = strtoull(p + 4, NULL, 16);
}

static struct ibv_mw_bind_info bind_info(const struct mwcase *c)
{
	return (struct ibv_mw_bind_info){ .mr = &k.bmr, .addr = BUF + c->off, .length = c->len,
					  .mw_access_flags = c->access };
}

static struct ibv_sge send_sge(void)
{
	return (struct ibv_sge){ .addr = BUF + 0x1000, .length = 64, .lkey = k.mr };
}

static void bind_wr(struct ibv_send_wr *w, struct ibv_mw *mw, uint32_t rkey, const struct mwcase *c)
{
	w->opcode = IBV_WR_BIND_MW;
	w->bind_mw.mw = mw;
	w->bind_mw.rkey = rkey;
	w->bind_mw.bind_info = bind_info(c);
}

/* The case through fv_post_send, with the WR list the producer used. */
static void post_compat(struct memqp *m, const char *t)
{
	struct ibv_sge s[2] = { send_sge(), { BUF + 0x3000, 64, 0 } };
	struct ibv_send_wr w[3], *bad = NULL;
	struct mwcase c;

	parse(t, &c);
	memset(w, 0, sizeof(w));
	w[0].send_flags = c.send_flags;
	s[1].lkey = k.mr;
	if (strstr(t, "bind2") && !strstr(t, "MW chain")) {
		bind_wr(&w[0], &k.mw2[c.win], ibv_inc_rkey(k.mw2[c.win].rkey), &c);
		if (strstr(t, " sge ")) {
			w[0].sg_list = s;
			w[0].num_sge = 1;
		}
	} else if (strstr(t, "MW ibv_bind_mw")) {
		if (strstr(t, "unbind"))
			c.off = c.len = 0;
		bind_wr(&w[0], &k.mw1, ibv_inc_rkey(k.mw1.rkey), &c);
		if (strstr(t, "unbind"))
			w[0].bind_mw.bind_info.addr = 0;
	} else if (strstr(t, "MW local_inv w0")) {
		w[0].opcode = IBV_WR_LOCAL_INV;
		w[0].invalidate_rkey = ibv_inc_rkey(k.mw2[0].rkey);
	} else if (strstr(t, "local_inv 0x") && !strstr(t, "MW chain")) {
		w[0].opcode = IBV_WR_LOCAL_INV;
		w[0].invalidate_rkey = (uint32_t)strtoul(strstr(t, "local_inv 0x") + 10, NULL, 16);
		if (strstr(t, "+ send")) {	/* the wr_* case sent from the bindable MR */
			s[0].lkey = k.lkey;
			w[0].send_flags = 0;
			w[0].next = &w[1];
			w[1].opcode = IBV_WR_SEND;
			w[1].send_flags = c.send_flags;
			w[1].sg_list = s;
			w[1].num_sge = 1;
		}
	} else if (strstr(t, "MW chain")) {
		w[0].send_flags = 0;
		bind_wr(&w[0], &k.mw2[1], ibv_inc_rkey(ibv_inc_rkey(k.mw2[1].rkey)), &c);
		w[0].next = &w[1];
		w[1].opcode = IBV_WR_LOCAL_INV;
		w[1].invalidate_rkey = 0x12345678;
		w[1].next = &w[2];
		w[2].opcode = IBV_WR_SEND;
		w[2].send_flags = IBV_SEND_SIGNALED;
		w[2].sg_list = &s[1];
		w[2].num_sge = 1;
	} else if (strstr(t, "API bind_mw")) {
		bind_wr(&w[0], &k.mw2[c.win], ibv_inc_rkey(ibv_inc_rkey(k.mw2[c.win].rkey)), &c);
	} else {	/* "MW ... send" */
		w[0].opcode = IBV_WR_SEND;
		w[0].sg_list = s;
		w[0].num_sge = 1;
	}
	cr_assert_eq(fv_post_send(&m->qp, w, &bad), 0, "%s: fv_post_send failed", t);
	cr_assert_null(bad);
	if (w[0].opcode == IBV_WR_BIND_MW && w[0].bind_mw.mw == &k.mw1)
		k.mw1.rkey = w[0].bind_mw.rkey;	/* what ibv_bind_mw does after posting */
}

/* The same case through the typed builders (RC or UC handle), then one ring. */
#define TYPED(h, title)                                                                          \
	do {                                                                                 \
		struct ibv_sge s0 = send_sge(), s3 = { BUF + 0x3000, 64, k.mr };             \
		struct ibv_mw_bind_info bi;                                                  \
		struct mwcase mc;                                                            \
		int r = -1;                                                                  \
                                                                                             \
		const char *t = (title);                                                     \
		parse(t, &mc);                                                               \
		bi = bind_info(&mc);                                                         \
		if (strstr(t, "bind2") && !strstr(t, "MW chain"))                           \
			r = fv_bind_mw(h, 0x800, mc.fv_flags, &k.mw2[mc.win],                   \
				       ibv_inc_rkey(k.mw2[mc.win].rkey), &bi);                 \
		else if (strstr(t, "MW ibv_bind_mw")) {                                      \
			if (strstr(t, "unbind"))                                             \
				bi = (struct ibv_mw_bind_info){ .mr = &k.bmr };              \
			r = fv_bind_mw(h, 0x803, mc.fv_flags, &k.mw1, ibv_inc_rkey(k.mw1.rkey), &bi); \
			k.mw1.rkey = ibv_inc_rkey(k.mw1.rkey);                               \
		} else if (strstr(t, "MW local_inv w0"))                                      \
			r = fv_local_inv(h, 0x802, mc.fv_flags, ibv_inc_rkey(k.mw2[0].rkey));  \
		else if (strstr(t, "local_inv 0x") && !strstr(t, "MW chain")) {              \
			uint32_t key = (uint32_t)strtoul(strstr(t, "local_inv 0x") + 10, NULL, 16); \
                                                                                             \
			s0.lkey = k.lkey;                                                    \
			if (strstr(t, "+ send"))                                             \
				r = fv_local_inv(h, 0x821, 0, key) ?: fv_send(h, 0x822, mc.fv_flags, &s0); \
			else                                                                 \
				r = fv_local_inv(h, 0x802, mc.fv_flags, key);                 \
		} else if (strstr(t, "MW chain"))                                            \
			r = fv_bind_mw(h, 0x810, 0, &k.mw2[1], ibv_inc_rkey(ibv_inc_rkey(k.mw2[1].rkey)), &bi) ?: \
			    fv_local_inv(h, 0x811, 0, 0x12345678) ?: fv_send(h, 0x812, FV_SIGNALED, &s3); \
		else if (strstr(t, "API bind_mw"))                                           \
			r = fv_bind_mw(h, 0x820, mc.fv_flags, &k.mw2[mc.win],                   \
				       ibv_inc_rkey(ibv_inc_rkey(k.mw2[mc.win].rkey)), &bi);   \
		else                                                                         \
			r = fv_send(h, 0x801, mc.fv_flags, &s0);                               \
		cr_assert_eq(r, 0, "%s: typed build failed", t);                             \
		fv_ring(h);                                                                  \
	} while (0)

/*
 * The same case through fv_wr_* on h (a struct fv_qp * or a typed handle), one batch. Binds
 * of the type 1 window and binds with an SGE have no ibv_wr_* form (ibv_wr_bind_mw builds a
 * type 2 bind, with no setters): those go through fv_post_send.
 */
#define WRAPI(m, h, title)                                                                       \
	do {                                                                                 \
		struct ibv_sge s0 = send_sge(), s3 = { BUF + 0x3000, 64, k.mr };             \
		struct ibv_mw_bind_info bi;                                                  \
		struct mwcase mc;                                                            \
		struct fv_qp *q_ = fv__wr_qp(h);                                              \
                                                                                             \
		const char *t = (title);                                                     \
		parse(t, &mc);                                                               \
		bi = bind_info(&mc);                                                         \
		if (strstr(t, "MW ibv_bind_mw")) {                                           \
			post_compat(m, t);                                                   \
			break;                                                               \
		}                                                                            \
		fv_wr_start(h);                                                              \
		q_->wr_id = 0x830;                                                           \
		q_->wr_flags = mc.send_flags;                                                \
		if (strstr(t, "bind2") && !strstr(t, "MW chain"))                           \
			fv_wr_bind_mw(h, &k.mw2[mc.win], ibv_inc_rkey(k.mw2[mc.win].rkey), &bi); \
		else if (strstr(t, "MW local_inv w0"))                                       \
			fv_wr_local_inv(h, ibv_inc_rkey(k.mw2[0].rkey));                       \
		else if (strstr(t, "local_inv 0x") && !strstr(t, "MW chain")) {              \
			uint32_t key = (uint32_t)strtoul(strstr(t, "local_inv 0x") + 10, NULL, 16); \
                                                                                             \
			if (strstr(t, "+ send")) {                                           \
				q_->wr_flags = 0;                                            \
				fv_wr_local_inv(h, key);                                     \
				q_->wr_flags = mc.send_flags;                                \
				fv_wr_send(h);                                               \
				fv_wr_set_sge(h, k.lkey, s0.addr, s0.length);                \
			} else {                                                             \
				fv_wr_local_inv(h, key);                                     \
			}                                                                    \
		} else if (strstr(t, "MW chain")) {                                          \
			q_->wr_flags = 0;                                                    \
			fv_wr_bind_mw(h, &k.mw2[1], ibv_inc_rkey(ibv_inc_rkey(k.mw2[1].rkey)), &bi); \
			fv_wr_local_inv(h, 0x12345678);                                      \
			q_->wr_flags = IBV_SEND_SIGNALED;                                    \
			fv_wr_send(h);                                                       \
			fv_wr_set_sge(h, s3.lkey, s3.addr, s3.length);                       \
		} else if (strstr(t, "API bind_mw")) {                                       \
			fv_wr_bind_mw(h, &k.mw2[mc.win], ibv_inc_rkey(ibv_inc_rkey(k.mw2[mc.win].rkey)), &bi); \
		} else {                                                                     \
			fv_wr_send(h);                                                       \
			fv_wr_set_sge(h, s0.lkey, s0.addr, s0.length);                       \
		}                                                                            \
		cr_assert_eq(fv_wr_complete(h), 0, "%s: fv_wr_complete failed", t);          \
	} while (0)

/* Each expansion in a function of its own: one function holding all four took the
 * sanitized build's compiler minutes (its passes grow faster than the function). */
static FV__NOINLINE void wrapi_qp(struct memqp *m, const char *title)
{
	WRAPI(m, &m->qp, title);
}

static FV__NOINLINE void wrapi_uc(struct memqp *m, const char *title)
{
	WRAPI(m, (struct fv_uc *)&m->qp, title);
}

static FV__NOINLINE void typed_rc(struct memqp *m, const char *title)
{
	TYPED((struct fv_rc *)&m->qp, title);
}

static FV__NOINLINE void typed_uc(struct memqp *m, const char *title)
{
	TYPED((struct fv_uc *)&m->qp, title);
}

/* how: 0 fv_post_send, 1 the typed builders, 2 fv_wr_* */
static void replay(int how)
{
	static struct vcase cases[64];
	struct memqp rc, uc;
	uint32_t mw1;
	int n;

	load_keys();
	mw1 = k.mw1.rkey;
	n = vec_load(VECTORS, cases, 64);
	cr_assert_geq(n, 20, "parsed %d cases", n);
	memqp_init(&rc, &(struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = 0x100, .sq_wqe_cnt = 2048,
		.bf_size = 256, .max_inline = 220, .max_send_sge = 4 });
	memqp_init(&uc, &(struct memqp_cfg){ .qpt = FV_QPT_UC, .qpn = 0x101, .sq_wqe_cnt = 16,
		.bf_size = 256, .max_inline = 92, .max_send_sge = 4 });
	for (int i = 0; i < n; i++) {
		struct vcase *c = &cases[i];
		struct memqp *m = !strcmp(c->qp, "RCM") ? &rc : &uc;

		cr_assert(!strcmp(c->qp, "RCM") || !strcmp(c->qp, "UCM"), "QP %s", c->qp);
		memset(m->bf, 0, 512);
		m->qp.sq.ci = m->qp.sq.pi;	/* the device completed the earlier WQEs (a small ring) */
		if (!how)
			post_compat(m, c->title);
		else if (strstr(c->title, " sge "))	/* typed binds carry no payload */
			post_compat(m, c->title);
		else if (how == 2 && m == &rc)
			wrapi_qp(m, c->title);
		else if (how == 2)
			wrapi_uc(m, c->title);
		else if (m == &rc)
			typed_rc(m, c->title);
		else
			typed_uc(m, c->title);
		vec_expect(m, c);
	}
	cr_assert_neq(k.mw1.rkey, mw1, "the type 1 window's key moved on");
	memqp_free(&rc);
	memqp_free(&uc);
}

Test(vectors_mw, compat_path_matches_libmlx5)
{
	replay(0);
}

Test(vectors_mw, typed_path_matches_libmlx5)
{
	replay(1);
}

Test(vectors_mw, wr_api_matches_libmlx5)
{
	replay(2);
}
