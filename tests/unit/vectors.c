/*
 * Byte-for-byte against libmlx5 (docs/design.md §3.5): replay every send case of
 * tests/vectors/libmlx5-44/all.txt — the WQEs, doorbell records and BlueFlame writes the
 * stock libmlx5 produced — on rings of the same geometry, once through fv_post_send and
 * once through the typed builders, and compare every byte.
 */
#include <stdio.h>
#include <criterion/criterion.h>
#include <fastverbs/compat/post_send.h>
#include "memqp.h"
#include "vecfile.h"

#define VECTORS FV_TOP "/tests/vectors/libmlx5-44/all.txt"
#define BUF     0x10000000ull	/* the producer's data buffer; only the inline bytes are read */
#define LKEY    0x100000u
#define RADDR   0x20001000ull
#define RKEY    0xabcd1234u

static uint8_t pattern[4096];	/* byte i = i, like the producer's buffer */

static struct ibv_sge sge(uint32_t off, uint32_t len)
{
	return (struct ibv_sge){ .addr = BUF + off, .length = len, .lkey = LKEY };
}

static struct ibv_sge inline_sge(uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)pattern + 0x40, .length = len, .lkey = LKEY };
}

/* The four QPs of the producer, with libmlx5's geometry for them. */
struct qps {
	struct memqp rc, ud, rcx, udx;
	struct fv_ah ah;
};

static void qps_init(struct qps *q)
{
	memqp_init(&q->rc, &(struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = 0x100, .sq_wqe_cnt = 2048,
		.bf_size = 256, .max_inline = 220, .max_send_sge = 4 });
	memqp_init(&q->ud, &(struct memqp_cfg){ .qpt = FV_QPT_UD, .qpn = 0x101, .sq_wqe_cnt = 1024,
		.bf_size = 256, .max_inline = 76, .max_send_sge = 4 });
	memqp_init(&q->rcx, &(struct memqp_cfg){ .qpt = FV_QPT_RC, .qpn = 0x102, .sq_wqe_cnt = 1024,
		.bf_size = 256, .max_inline = 220, .max_send_sge = 4 });
	memqp_init(&q->udx, &(struct memqp_cfg){ .qpt = FV_QPT_UD, .qpn = 0x103, .sq_wqe_cnt = 1024,
		.bf_size = 256, .max_inline = 76, .max_send_sge = 4 });
	/* The AV libmlx5 built for { dlid 2, port 1 }: all zero but the destination LID. */
	struct mlx5_wqe_av av;

	memset(&av, 0, sizeof(av));
	av.rlid = htobe16(2);
	fv__ah_fill(&q->ah, &av);	/* as fv_ah_init */
}

static struct memqp *qp_of(struct qps *q, const char *name)
{
	return !strcmp(name, "RC") ? &q->rc : !strcmp(name, "UD") ? &q->ud :
	       !strcmp(name, "RCX") ? &q->rcx : &q->udx;
}

/* The producer's classic RC cases: name, opcode, SGE count, inline bytes. */
static const struct { const char *name; enum ibv_wr_opcode op; int nsge, inl; } rc_cases[] = {
	{ "send_1sge", IBV_WR_SEND, 1, 0 },
	{ "send_3sge", IBV_WR_SEND, 3, 0 },
	{ "send_with_imm", IBV_WR_SEND_WITH_IMM, 1, 0 },
	{ "send_inline12", IBV_WR_SEND, 1, 12 },
	{ "send_inline100", IBV_WR_SEND, 1, 100 },
	{ "rdma_write", IBV_WR_RDMA_WRITE, 1, 0 },
	{ "rdma_write_with_imm", IBV_WR_RDMA_WRITE_WITH_IMM, 1, 0 },
	{ "rdma_read", IBV_WR_RDMA_READ, 1, 0 },
	{ "atomic_cmp_swp", IBV_WR_ATOMIC_CMP_AND_SWP, 1, 0 },
	{ "atomic_fetch_add", IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0 },
};

/* Post one case through fv_post_send with the WR list the producer used. */
static void post_compat(struct qps *q, struct memqp *m, const char *t)
{
	struct ibv_sge s[3] = { sge(0x1000, 64), sge(0x2000, 128), sge(0x3000, 256) };
	struct ibv_send_wr w[3], *bad = NULL;
	int sig = strstr(t, "SIGNALED") != NULL;
	char name[64];

	memset(w, 0, sizeof(w));
	w[0].sg_list = s;
	w[0].num_sge = 1;
	w[0].send_flags = sig ? IBV_SEND_SIGNALED : 0;
	if (sscanf(t, "RC %63s", name) == 1 && strncmp(t, "RC send FENCE", 13) &&
	    strncmp(t, "RC send SOLIC", 13) && strncmp(t, "RC chain", 8)) {
		size_t i = 0;

		while (strcmp(rc_cases[i].name, name))
			i++;
		w[0].opcode = rc_cases[i].op;
		w[0].num_sge = rc_cases[i].nsge;
		w[0].imm_data = htobe32(0x11223344);
		if (rc_cases[i].inl) {
			s[0] = inline_sge((uint32_t)rc_cases[i].inl);
			w[0].send_flags |= IBV_SEND_INLINE;
		}
		if (w[0].opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w[0].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			s[0].length = 8;
			w[0].wr.atomic.remote_addr = RADDR;
			w[0].wr.atomic.rkey = RKEY;
			w[0].wr.atomic.compare_add = w[0].opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
						     0x1111111111111111ull : 5;
			w[0].wr.atomic.swap = 0x2222222222222222ull;
		} else {
			w[0].wr.rdma.remote_addr = RADDR;
			w[0].wr.rdma.rkey = RKEY;
		}
	} else if (!strncmp(t, "RC send FENCE", 13)) {
		w[0].opcode = IBV_WR_SEND;
		w[0].send_flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED;
	} else if (!strncmp(t, "RC send SOLIC", 13)) {
		w[0].opcode = IBV_WR_SEND;
		w[0].send_flags = IBV_SEND_SOLICITED | IBV_SEND_SIGNALED;
	} else if (!strncmp(t, "RC chain", 8) || strstr(t, "batch of 3")) {
		s[1] = sge(0x2000, 64);
		s[2] = sge(0x3000, 64);
		for (int i = 0; i < 3; i++) {
			w[i].sg_list = &s[i];
			w[i].num_sge = 1;
			w[i].next = i < 2 ? &w[i + 1] : NULL;
			w[i].opcode = i < 2 ? IBV_WR_RDMA_WRITE : IBV_WR_SEND;
			w[i].wr.rdma.remote_addr = RADDR + 64 * (uint64_t)i;
			w[i].wr.rdma.rkey = RKEY;
			w[i].send_flags = 0;
		}
		w[2].send_flags = sig ? IBV_SEND_SIGNALED : 0;
	} else if (!strncmp(t, "UD send", 7) || strstr(t, "UD send+")) {
		w[0].opcode = IBV_WR_SEND;
		if (strstr(t, "inline 12")) {
			s[0] = inline_sge(12);
			w[0].send_flags |= IBV_SEND_INLINE;
		}
		/* fv_post_send takes the AV from the ibv_ah; seed its cache with the test AV. */
		m->qp.ah_cache_key = (struct ibv_ah *)&q->ah;
		m->qp.ah_cache_av = &q->ah.av;
		w[0].wr.ud.ah = (struct ibv_ah *)&q->ah;
		w[0].wr.ud.remote_qpn = 0x1234;
		w[0].wr.ud.remote_qkey = 0x11111111;
	} else if (strstr(t, "wr_* API")) {
		w[0].wr.rdma.remote_addr = RADDR;
		w[0].wr.rdma.rkey = RKEY;
		if (strstr(t, "rdma_write+"))
			w[0].opcode = IBV_WR_RDMA_WRITE;
		else if (strstr(t, "rdma_read+"))
			w[0].opcode = IBV_WR_RDMA_READ;
		else if (strstr(t, "set_inline_data(12)")) {
			w[0].opcode = IBV_WR_SEND;
			s[0] = inline_sge(12);
			w[0].send_flags |= IBV_SEND_INLINE;
		} else if (strstr(t, "atomic_fetch_add+")) {
			w[0].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			s[0].length = 8;
			w[0].wr.atomic.remote_addr = RADDR;
			w[0].wr.atomic.rkey = RKEY;
			w[0].wr.atomic.compare_add = 5;
		} else
			w[0].opcode = IBV_WR_SEND;
	}
	cr_assert_eq(fv_post_send(&m->qp, w, &bad), 0, "%s: fv_post_send failed", t);
	cr_assert_null(bad);
}

/* Post the same case through the typed builders, then ring once. */
static void post_typed(struct qps *q, struct memqp *m, const char *t)
{
	struct fv_rc *rc = (struct fv_rc *)&m->qp;
	struct fv_ud *ud = (struct fv_ud *)&m->qp;
	struct ibv_sge s[3] = { sge(0x1000, 64), sge(0x2000, 128), sge(0x3000, 256) };
	unsigned f = strstr(t, "SIGNALED") ? FV_SIGNALED : 0;
	__be32 imm = htobe32(0x11223344);
	int r = -1;

	if (!strncmp(t, "RC send_1sge", 12) || strstr(t, "API send+set_sge"))
		r = fv_send(rc, 1, f, &s[0]);
	else if (!strncmp(t, "RC send_3sge", 12))
		r = fv_send_sgl(rc, 1, f, s, 3);
	else if (!strncmp(t, "RC send_with_imm", 16))
		r = fv_send_imm(rc, 1, f, &s[0], imm);
	else if (!strncmp(t, "RC send_inline12", 16) || strstr(t, "set_inline_data(12)"))
		r = fv_send_inline(rc, 1, f, pattern + 0x40, 12);
	else if (!strncmp(t, "RC send_inline100", 17))
		r = fv_send_inline(rc, 1, f, pattern + 0x40, 100);
	else if (!strncmp(t, "RC rdma_write_with_imm", 22))
		r = fv_write_imm(rc, 1, f, &s[0], RADDR, RKEY, imm);
	else if (!strncmp(t, "RC rdma_write", 13) || strstr(t, "rdma_write+"))
		r = fv_write(rc, 1, f, &s[0], RADDR, RKEY);
	else if (!strncmp(t, "RC rdma_read", 12) || strstr(t, "rdma_read+"))
		r = fv_read(rc, 1, f, &s[0], RADDR, RKEY);
	else if (!strncmp(t, "RC atomic_cmp_swp", 17)) {
		s[0].length = 8;
		r = fv_cas(rc, 1, f, &s[0], RADDR, RKEY, 0x1111111111111111ull, 0x2222222222222222ull);
	} else if (!strncmp(t, "RC atomic_fetch_add", 19) || strstr(t, "atomic_fetch_add+")) {
		s[0].length = 8;
		r = fv_fadd(rc, 1, f, &s[0], RADDR, RKEY, 5);
	} else if (!strncmp(t, "RC send FENCE", 13))
		r = fv_send(rc, 1, FV_FENCE | FV_SIGNALED, &s[0]);
	else if (!strncmp(t, "RC send SOLIC", 13))
		r = fv_send(rc, 1, FV_SOLICITED | FV_SIGNALED, &s[0]);
	else if (!strncmp(t, "RC chain", 8) || strstr(t, "batch of 3")) {
		struct ibv_sge a = sge(0x1000, 64), b = sge(0x2000, 64), c = sge(0x3000, 64);

		r = fv_write(rc, 1, 0, &a, RADDR, RKEY) | fv_write(rc, 2, 0, &b, RADDR + 64, RKEY) |
		    fv_send(rc, 3, f, &c);
	} else if (strstr(t, "UD send inline 12"))
		r = fv_send_inline(ud, 1, f, pattern + 0x40, 12, &q->ah, 0x1234, 0x11111111);
	else if (!strncmp(t, "UD send", 7) || strstr(t, "UD send+"))
		r = fv_send(ud, 1, f, &s[0], &q->ah, 0x1234, 0x11111111);
	cr_assert_eq(r, 0, "%s: typed build failed or case unknown", t);
	fv_ring(rc);
}

static void replay(int typed)
{
	static struct vcase cases[64];
	struct qps q;
	int n = vec_load(VECTORS, cases, 64);

	for (int i = 0; i < (int)sizeof(pattern); i++)
		pattern[i] = (uint8_t)i;
	cr_assert_geq(n, 39, "expected the 39 send cases, parsed %d", n);
	qps_init(&q);
	for (int i = 0; i < n; i++) {
		struct vcase *c = &cases[i];
		struct memqp *m = qp_of(&q, c->qp);

		memset(m->bf, 0, 512);
		if (typed)
			post_typed(&q, m, c->title);
		else
			post_compat(&q, m, c->title);
		vec_expect(m, c);
	}
	memqp_free(&q.rc);
	memqp_free(&q.ud);
	memqp_free(&q.rcx);
	memqp_free(&q.udx);
}

Test(vectors, compat_path_matches_libmlx5)
{
	replay(0);
}

Test(vectors, typed_path_matches_libmlx5)
{
	replay(1);
}
