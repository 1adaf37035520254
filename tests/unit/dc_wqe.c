/*
 * DCI WQEs byte for byte against bytes composed from docs/formats.md (§2 control segment,
 * §3.10 the DCI's address vector, §3.1-§3.4 the segments after it), with no fastverbs writer:
 * every operation a DCI has, one SGE, an SGE list and inline data, through the typed
 * builders and through fv_wr_* with the destination before and after the payload, with and
 * without a stream; each WQE built at the ring's first block and at its last, so that the
 * segments after the AV continue at block 0. Also the doorbell record, and fv_post_send's
 * refusal (EINVAL, nothing written).
 */
#include <string.h>

#include <criterion/criterion.h>
#include <fastverbs/fastverbs.h>

#include "memqp.h"
#include "wqe-expect.h"
#include "once.h"

#define QPN    0x1234u
#define DCTN   0xabcdeu
#define DCKEY  0x0badc0de5eed1234ull
#define RKEY   0x77u
#define RADDR  0x1122334455667788ull
#define LKEY   0x99u
#define NBB    16u

enum op { SEND, SEND_IMM, SEND_INV, WRITE, WRITE_IMM, READ, CAS, FADD, NOP, NOPS };
enum form { ONE, LIST, INL };
enum path { TYPED, WR_DEST_FIRST, WR_DEST_LAST, WR_STREAM, PATHS };

static const uint8_t opcode[NOPS] = { X_OP_SEND, X_OP_SEND_IMM, X_OP_SEND_INVAL, X_OP_RDMA_WRITE,
				      X_OP_RDMA_WRITE_IMM, X_OP_RDMA_READ, X_OP_ATOMIC_CS, X_OP_ATOMIC_FA, X_OP_NOP };

static uint8_t av[48];		/* an AH's AV as libmlx5 builds it: bytes 0-11 are 0 */
static uint8_t payload[256];
static struct fv_ah ah;

static void setup(void)
{
	memset(av, 0, sizeof(av));
	for (int i = 12; i < 48; i++)
		av[i] = (uint8_t)(0x40 + i);
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13 + 5);
	fv__ah_fill(&ah, (const struct mlx5_wqe_av *)(const void *)av);	/* as fv_ah_init */
}

/* §3.10: the AH's 48 bytes, the access key over 0-7, the DCT number with the extended bit at 8. */
static void xw_dc_av(struct xwqe *w)
{
	size_t at = w->start + w->len;

	x_copy(w->x, at, av, 48);
	x_put_be64(w->x, at, DCKEY);
	x_put_be32(w->x, at + 8, DCTN | X_EXT_AV_BIT);
	w->len += 48;
}

static bool has_imm(enum op o)
{
	return o == SEND_IMM || o == SEND_INV || o == WRITE_IMM;
}

static bool remote(enum op o)
{
	return o == WRITE || o == WRITE_IMM || o == READ || o == CAS || o == FADD;
}

static bool atomic(enum op o)
{
	return o == CAS || o == FADD;
}

/* The SGEs of form f (LIST: three, the second empty, skipped). */
static int sges(enum op o, enum form f, struct ibv_sge s[3])
{
	uint32_t len = atomic(o) ? 8 : 40;

	s[0] = (struct ibv_sge){ (uintptr_t)payload, len, LKEY };
	s[1] = (struct ibv_sge){ (uintptr_t)payload + 64, 0, LKEY };
	s[2] = (struct ibv_sge){ (uintptr_t)payload + 128, 24, LKEY + 1 };
	return f == LIST && !atomic(o) ? 3 : 1;	/* an atomic takes one 8-byte result */
}

/* Compose the WQE at pi: returns its blocks. */
static unsigned expect(struct xring *x, uint32_t pi, enum op o, enum form f, uint16_t stream)
{
	struct xwqe w;
	struct ibv_sge s[3];
	int n = sges(o, f, s);
	__be32 imm = htobe32(0xfeed0000u | o);

	xw_ctrl(&w, x, pi, opcode[o], QPN, X_FM_CQ_UPDATE, has_imm(o) ? &imm : NULL);
	if (stream)
		x_put_be16(x, w.start + 9, stream);
	if (o == NOP)
		return xw_end(&w);
	xw_dc_av(&w);
	if (remote(o))
		xw_raddr(&w, RADDR, RKEY);
	if (o == CAS)
		xw_atomic(&w, 0x5555, 0x3333);
	if (o == FADD)
		xw_atomic(&w, 0x5555, 0);
	if (f == INL)
		xw_inline(&w, payload, s[0].length);
	else
		for (int i = 0; i < n; i++)
			if (s[i].length)
				xw_data(&w, s[i].length, s[i].lkey, s[i].addr);
	return xw_end(&w);
}

/* The typed builder of (o, f): one function per operation, since a function with every
 * builder expanded in it took the compiler superlinear time (a third of this file's compile). */
#define DEST &ah, DCTN, DCKEY
#define FORMS(call, ...)                                                                           \
	(f == ONE ? fv_##call(h, 7, fl, s, __VA_ARGS__) : f == LIST ? fv_##call##_sgl(h, 7, fl, s, n, __VA_ARGS__) \
		  : fv_##call##_inline(h, 7, fl, payload, s[0].length, __VA_ARGS__))
#define SGL_FORMS(call, ...) \
	(f == ONE ? fv_##call(h, 7, fl, s, __VA_ARGS__) : fv_##call##_sgl(h, 7, fl, s, n, __VA_ARGS__))
#define TYPED_OP(name, expr)                                                                       \
	static __attribute__((noinline)) int name(struct fv_dci *h, enum form f, struct ibv_sge *s, int n, \
						  __be32 imm)                                      \
	{ const unsigned fl = FV_SIGNALED; (void)f; (void)s; (void)n; (void)imm; return expr; }
TYPED_OP(typed_send, FORMS(send, DEST))
TYPED_OP(typed_send_imm, FORMS(send_imm, imm, DEST))
TYPED_OP(typed_send_inv, FORMS(send_inv, be32toh(imm), DEST))
TYPED_OP(typed_write, FORMS(write, RADDR, RKEY, DEST))
TYPED_OP(typed_write_imm, FORMS(write_imm, RADDR, RKEY, imm, DEST))
TYPED_OP(typed_read, SGL_FORMS(read, RADDR, RKEY, DEST))
TYPED_OP(typed_cas, SGL_FORMS(cas, RADDR, RKEY, 0x3333, 0x5555, DEST))
TYPED_OP(typed_fadd, SGL_FORMS(fadd, RADDR, RKEY, 0x5555, DEST))
TYPED_OP(typed_nop, fv_nop(h, 7, fl))
#undef TYPED_OP
#undef FORMS
#undef SGL_FORMS
#undef DEST

static int typed(struct fv_dci *h, enum op o, enum form f)
{
	struct ibv_sge s[3];
	int n = sges(o, f, s);
	__be32 imm = htobe32(0xfeed0000u | o);

	switch (o) {
	case SEND:      return typed_send(h, f, s, n, imm);
	case SEND_IMM:  return typed_send_imm(h, f, s, n, imm);
	case SEND_INV:  return typed_send_inv(h, f, s, n, imm);
	case WRITE:     return typed_write(h, f, s, n, imm);
	case WRITE_IMM: return typed_write_imm(h, f, s, n, imm);
	case READ:      return typed_read(h, f, s, n, imm);
	case CAS:       return typed_cas(h, f, s, n, imm);
	case FADD:      return typed_fadd(h, f, s, n, imm);
	default:        return typed_nop(h, f, s, n, imm);
	}
}

/* The same WQE through fv_wr_* on the typed handle (odd) or its struct fv_qp (even). */
static int wr(struct fv_dci *h, enum op o, enum form f, enum path p, int on_qp)
{
	struct ibv_sge s[3];
	int n = sges(o, f, s);
	__be32 imm = htobe32(0xfeed0000u | o);
	struct fv_qp *q = &h->qp;

	fv_wr_start(h);
	q->wr_id = 7;
	q->wr_flags = IBV_SEND_SIGNALED;
	switch (o) {
	case SEND:      on_qp ? fv_wr_send(q) : fv_wr_send(h); break;
	case SEND_IMM:  on_qp ? fv_wr_send_imm(q, imm) : fv_wr_send_imm(h, imm); break;
	case SEND_INV:  on_qp ? fv_wr_send_inv(q, be32toh(imm)) : fv_wr_send_inv(h, be32toh(imm)); break;
	case WRITE:     on_qp ? fv_wr_rdma_write(q, RKEY, RADDR) : fv_wr_rdma_write(h, RKEY, RADDR); break;
	case WRITE_IMM: on_qp ? fv_wr_rdma_write_imm(q, RKEY, RADDR, imm) : fv_wr_rdma_write_imm(h, RKEY, RADDR, imm); break;
	case READ:      on_qp ? fv_wr_rdma_read(q, RKEY, RADDR) : fv_wr_rdma_read(h, RKEY, RADDR); break;
	case CAS:       on_qp ? fv_wr_atomic_cmp_swp(q, RKEY, RADDR, 0x3333, 0x5555)
			      : fv_wr_atomic_cmp_swp(h, RKEY, RADDR, 0x3333, 0x5555); break;
	default:        on_qp ? fv_wr_atomic_fetch_add(q, RKEY, RADDR, 0x5555)
			      : fv_wr_atomic_fetch_add(h, RKEY, RADDR, 0x5555); break;
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pass == (p == WR_DEST_LAST)) {
			if (p == WR_STREAM)
				on_qp ? fv_wr_set_dc_addr_stream(q, &ah, DCTN, DCKEY, 0x5a17)
				      : fv_wr_set_dc_addr_stream(h, &ah, DCTN, DCKEY, 0x5a17);
			else
				on_qp ? fv_wr_set_dc_addr(q, &ah, DCTN, DCKEY) : fv_wr_set_dc_addr(h, &ah, DCTN, DCKEY);
			continue;
		}
		if (f == ONE)
			fv_wr_set_sge(h, s[0].lkey, s[0].addr, s[0].length);
		else if (f == LIST)
			fv_wr_set_sge_list(q, (size_t)n, s);
		else
			fv_wr_set_inline_data(h, payload, s[0].length);
	}
	return fv_wr_complete(h);
}

static void one(enum op o, enum form f, enum path p, uint32_t start, int on_qp)
{
	struct memqp m;
	struct memqp_cfg c = { .qpt = FV_QPT_DCI, .qpn = QPN, .sq_wqe_cnt = NBB, .bf_size = 256,
			       .max_inline = 64, .max_send_sge = 4, .start_pi = start };
	struct xring x;
	struct fv_dci *h;
	int err;

	memqp_init(&m, &c);
	h = (struct fv_dci *)(void *)&m.qp;
	memset(m.sq, 0xa5, m.sq_bytes);
	xr_init(&x, m.sq, m.sq_bytes);
	unsigned nbb = expect(&x, start, o, f, p == WR_STREAM ? 0x5a17 : 0);

	if (p == TYPED) {
		err = typed(h, o, f);
		fv_ring(h);
	} else {
		err = wr(h, o, f, p, on_qp);
	}
	cr_assert_eq(err, 0, "op %d form %d path %d start %u: %d", o, f, p, start, err);
	const char *d = x_diff(m.sq, x.b, m.sq_bytes);

	cr_assert_null(d, "op %d form %d path %d start %u on_qp %d: %s", o, f, p, start, on_qp, d);
	cr_assert_eq(memqp_sq_dbr(&m), (start + nbb) & 0xffff, "op %d form %d path %d: doorbell record", o, f, p);
	xr_free(&x);
	memqp_free(&m);
}

TestSuite(dc_wqe, .init = setup);

/* Every operation, form and path, at the first block and at the last (segments wrap). */
Test(dc_wqe, every_op_form_path)
{
	unsigned n = 0;

	for (enum op o = SEND; o < NOPS; o++)
		for (enum form f = ONE; f <= INL; f++) {
			if (f == INL && (o == READ || atomic(o) || o == NOP))
				continue;
			if (o == NOP && f != ONE)
				continue;
			for (enum path p = TYPED; p < PATHS; p++) {
				if (o == NOP && p != TYPED)	/* typed only: libmlx5 has no ibv_wr_nop */
					continue;
				for (int k = 0; k < 2; k++) {
					one(o, f, p, k ? NBB - 1 : 0, k);
					one(o, f, p, k ? 0x10000 - 1 : NBB - 1, !k);
					n += 2;
				}
			}
		}
	cr_assert_gt(n, 200);
}

/* fv_post_send on a DCI: EINVAL and bad_wr, the ring, doorbell record and BlueFlame untouched. */
Test(dc_wqe, post_send_refused)
{
	struct memqp m;
	struct memqp_cfg c = { .qpt = FV_QPT_DCI, .qpn = QPN, .sq_wqe_cnt = NBB, .bf_size = 256,
			       .max_inline = 64, .max_send_sge = 4 };
	struct ibv_sge s = { (uintptr_t)payload, 8, LKEY };
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad = NULL;
	uint8_t before[NBB * 64], bf[512];

	memqp_init(&m, &c);
	memset(m.sq, 0xa5, m.sq_bytes);
	memset(m.bf, 0x33, 512);
	memcpy(before, m.sq, sizeof(before));
	memcpy(bf, m.bf, sizeof(bf));
	for (int op = IBV_WR_RDMA_WRITE; op <= IBV_WR_SEND_WITH_INV; op++) {
		w.opcode = (enum ibv_wr_opcode)op;
		cr_assert_eq(fv_post_send(&m.qp, &w, &bad), EINVAL, "opcode %d", op);
		cr_assert_eq(bad, &w);
	}
	cr_assert_arr_eq(m.sq, before, sizeof(before));
	cr_assert_arr_eq(m.bf, bf, sizeof(bf));
	cr_assert_eq(memqp_sq_dbr(&m), 0);
	cr_assert_eq(m.qp.sq.pi, 0);
	memqp_free(&m);
}

/* A destination setter missing, repeated, or of the wrong kind: EINVAL, nothing posted. */
Test(dc_wqe, wr_setter_rules)
{
	struct memqp m;
	struct memqp_cfg c = { .qpt = FV_QPT_DCI, .qpn = QPN, .sq_wqe_cnt = NBB, .bf_size = 256,
			       .max_inline = 64, .max_send_sge = 4 };
	struct fv_dci *h;

	memqp_init(&m, &c);
	h = (struct fv_dci *)(void *)&m.qp;
	fv_wr_start(h);
	fv_wr_send(h);
	fv_wr_set_sge(h, LKEY, (uintptr_t)payload, 8);
	cr_assert_eq(fv_wr_complete(h), EINVAL, "no destination");
	fv_wr_start(h);
	fv_wr_send(h);
	fv_wr_set_dc_addr(h, &ah, DCTN, DCKEY);
	fv_wr_set_dc_addr(h, &ah, DCTN, DCKEY);
	fv_wr_set_sge(h, LKEY, (uintptr_t)payload, 8);
	cr_assert_eq(fv_wr_complete(h), EINVAL, "two destinations");
	fv_wr_start(&m.qp);
	fv_wr_send(&m.qp);
	fv_wr_set_ud_addr(&m.qp, &ah, DCTN, 5);
	fv_wr_set_sge(&m.qp, LKEY, (uintptr_t)payload, 8);
	cr_assert_eq(fv_wr_complete(&m.qp), EINVAL, "a UD destination on a DCI");
	fv_wr_start(&m.qp);
	fv_wr_send(&m.qp);
	fv_wr_set_dc_addr(&m.qp, (struct ibv_ah *)NULL, DCTN, DCKEY);
	fv_wr_set_sge(&m.qp, LKEY, (uintptr_t)payload, 8);
	cr_assert_eq(fv_wr_complete(&m.qp), EINVAL, "no address handle");
	cr_assert_eq(memqp_sq_dbr(&m), 0);
	cr_assert_eq(m.qp.sq.pi, 0);
	memqp_free(&m);
}
