/*
 * Cost of posting send WRs, six ways, on the device (the software one under sim/fvsim-run in
 * single-step mode, or a real mlx5 HCA):
 *
 *   ibv      libmlx5 ibv_post_send, filling the ibv_send_wr list first
 *   wr       libmlx5 ibv_wr_start / ibv_wr_<op> / ibv_wr_set_* / ibv_wr_complete
 *   fvps     fastverbs fv_post_send, filling the same ibv_send_wr list
 *   typed    fastverbs typed builders (fv_write, fv_send_inline, ...) + fv_ring
 *   fvwr     fastverbs fv_wr_start / fv_wr_<op> / fv_wr_set_* / fv_wr_complete on the typed
 *            handles (the wr path's code with fv_ for ibv_; the UD address an fv_ah)
 *   fvwrq    the same on the handles' struct fv_qp (the QP type checked at run time)
 *   floor    a minimal builder written here, not in the library: the WQE's units, its 16-bit
 *            index, the doorbell record and one BlueFlame copy (or 8-byte doorbell), nothing
 *            else (no wr_id, no room test, no signalling policy); the bound for the others
 *
 * for six operations (RC RDMA_WRITE with one 64-byte SGE, RC RDMA_WRITE inline 16 B, RC SEND
 * inline 16 B, RC RDMA_READ 64 B, RC FETCH_ADD, UD SEND with one 64-byte SGE) at 1 and 32 WRs
 * per doorbell, every WR the same; and four application-shaped loops, where each WR differs
 * from the one before and the compiler cannot compute it once, outside the loop:
 *
 *   adv_write            RC RDMA_WRITE, 1 SGE; the remote address advances 64 B per WR (in a
 *                        4 KiB window) and every 64th WR is signaled, decided per WR
 *   adv_write_sge        the same, the local SGE's address advancing too
 *   adv_ud_send          UD SEND, 1 SGE, to one of 16 destinations (address handle and QPN
 *                        picked per WR), every 64th signaled
 *   adv_write_inline16   RC RDMA_WRITE inline 16 B, addressed and signaled as adv_write
 *
 * and loop (e), the shape many programs have: one loop over the WRs whose body posts a WR,
 * checks the error, and rings when the WR is the last of its batch (`if ((i & 31) == 31)`), in
 * place of a nested loop of constant length per batch:
 *
 *   ring_write           adv_write's WRs, posted so
 *   ring_ud_send         adv_ud_send's WRs, posted so
 *
 * (the list paths fill the WR's entry of the list in the body and post the list at its last
 * WR; the ibv_wr_* / fv_wr_* paths open the batch at its first WR and complete it at its last).
 *
 * and loop (f), DC, in a build of its own too (BENCH_DC: build/bench/post-dc): adv_write's and
 * adv_ud_send's WRs on a DCI, each to one of 16 DCTs (address handle, DCT number and access
 * key picked per WR), with no list paths (ibv_post_send cannot name a DCT; fv_post_send refuses
 * a DCI); the wr path sets the address with mlx5dv_wr_set_dc_addr, fastverbs' paths with
 * fv_wr_set_dc_addr or the typed builders' last arguments, the floor stores the DC address
 * vector itself (access key, DCT number with the extended bit, the AH's AV bytes):
 *
 *   dc_write             RDMA_WRITE, 1 SGE, remote address advancing, every 64th signaled
 *   dc_send              SEND, 1 SGE, every 64th signaled (the DCTs share one SRQ)
 *
 * Every path posts the same requests on its own QPs.
 *
 * One measured call, m_<path>_<op>_<batch>(), posts ROUND WRs (unsignaled, constant flags 0, in
 * the identical-WR loops; two of them signaled in the others) with a doorbell every <batch>.
 * The per-WR values come from the wr_id the call is given, a value it cannot know in advance.
 * Outside it, one signaled WR of the same kind
 * through the same path retires the ring, the device runs until idle and its completion is
 * polled; SENDs get their receives posted (and reaped) outside as well.
 *
 *   post count   under callgrind (bench/run.sh): COUNT_ROUNDS measured calls per case, then
 *                CALLGRIND_DUMP_STATS_AT("post <op> <path> <batch> <WRs>")
 *   post time    clock_gettime around each measured call; REPS repetitions of TIME_ROUNDS
 *                calls per case, paths interleaved; prints "time post <op> <path> <batch>
 *                <ns per WR, median of the repetitions>"
 */
#include <fastverbs/fastverbs.h>
#include "bench.h"

#define ROUND 128		/* WRs per measured call: a multiple of 32 and of SIG_EVERY */
#define SEND_WR 512		/* max_send_wr: a round and its retiring WR fit easily */
#define WARM_ROUNDS 2
#define COUNT_ROUNDS 8
#define TIME_ROUNDS 48
#define REPS 5

enum op {
	OP_WRITE, OP_WRITE_INL, OP_SEND_INL, OP_READ, OP_FADD, OP_UD_SEND,
	OP_A_WRITE, OP_A_WRITE_SGE, OP_A_UD_SEND, OP_A_WRITE_INL, OP_E_WRITE, OP_E_UD_SEND,
	OP_DC_WRITE, OP_DC_SEND, OP_COUNT
};
enum path { P_IBV, P_WR, P_FVPS, P_TYPED, P_FVWR, P_FVWRQ, P_FLOOR, P_COUNT };

static const char *const op_name[OP_COUNT] = {
	"write", "write_inline16", "send_inline16", "read", "fetch_add", "ud_send",
	"adv_write", "adv_write_sge", "adv_ud_send", "adv_write_inline16", "ring_write", "ring_ud_send",
	"dc_write", "dc_send",
};
static const char *const path_name[P_COUNT] = { "ibv", "wr", "fvps", "typed", "fvwr", "fvwrq", "floor" };

#define NDEST 16		/* UD destinations of adv_ud_send, DCTs of dc_write and dc_send */
#define SIG_EVERY 64		/* the application-shaped loops signal every 64th WR */
#define WINDOW 4096		/* ... and advance addresses 64 B per WR within it */
static const int batches[2] = { 1, 32 };

#define INL 16			/* inline payload bytes */

/* What every path posts, filled once. */
struct args {
	struct ibv_sge sge;	/* 64 bytes, local (WRITE/READ/UD SEND) */
	struct ibv_sge sge8;	/* 8 bytes, local (fetch-add result) */
	struct ibv_sge inl;	/* 16 bytes, sent inline */
	uint64_t raddr, raddr8;	/* remote: 64-byte area, 8-byte counter */
	uint32_t rkey;
	struct ibv_ah *ah;
	struct fv_ah fah;
	uint32_t ud_qpn;
	struct ibv_ah *ahs[NDEST];	/* adv_ud_send's destinations; the DCTs' too */
	struct fv_ah fahs[NDEST];
	uint32_t qpns[NDEST];
	uint32_t dctns[NDEST];		/* the DC loops' DCTs: numbers and access keys */
	uint64_t dckeys[NDEST];
};

/*
 * The floor's view of one send queue: where WQEs go and how the device is told, kept in
 * locals while a measured call runs.
 */
struct floor {
	uint8_t *buf;
	uint32_t mask;		/* WQEBBs - 1 */
	uint32_t pi;		/* WQEBBs built */
	__be32 qpn_be;		/* htobe32(qpn << 8) */
	volatile __be32 *dbrec;
	uint8_t *bf;		/* the BlueFlame half the next doorbell writes */
	uintptr_t bf_toggle;
};

/* One path's QPs: an RC requester connected to its own RC responder, a UD requester, a DCI. */
struct lane {
	struct ibv_cq *scq;	/* requester completions; taken over (fcq) on the fastverbs paths */
	struct fv_cq fcq;
	struct ibv_qp *rc, *ud, *peer;
	struct ibv_qp_ex *rcx, *udx;
	struct fv_rc frc;
	struct fv_ud fud;
	struct floor flrc, flud;	/* P_FLOOR: frc's and fud's rings, posted by the floor */
	int fv;			/* polled by fastverbs (and, but for the floor, posted) */
	struct ibv_qp *dci;	/* the DC loops' DCI (BENCH_DC only), its handles, its floor */
	struct ibv_qp_ex *dcix;
	struct mlx5dv_qp_ex *dcidv;	/* P_WR: mlx5dv_wr_set_dc_addr's handle, looked up once */
	struct fv_dci fdci;
	struct floor fldc;
};

struct ctx {
	struct bench_dev d;
	struct args a;
	struct lane lane[P_COUNT];
	struct ibv_cq *rcq;	/* responders' receive completions */
	struct ibv_qp *udt;	/* UD target (no receives: the datagrams are dropped) */
	struct ibv_qp *udts[NDEST];	/* adv_ud_send's targets, likewise */
	struct ibv_srq *dsrq;	/* the DCTs' SRQ (dc_send's receives) */
	struct ibv_qp *dcts[NDEST];
	struct ibv_recv_wr rwr[ROUND + 1];
	struct ibv_sge rsge;
	uint64_t id;
};

#define ALWAYS static inline __attribute__((always_inline, unused))	/* unused: one of two builds */

/* ---- the paths, one body each; op, n, batch and flags fold in every instance ---- */

static inline int op_adv(enum op op)
{
	return op >= OP_A_WRITE;
}

static inline int op_ud(enum op op)
{
	return op == OP_UD_SEND || op == OP_A_UD_SEND || op == OP_E_UD_SEND;
}

/* The DC loops: adv_write's and adv_ud_send's WRs on a DCI, each to one of NDEST DCTs. */
static inline int op_dc(enum op op)
{
	return op == OP_DC_WRITE || op == OP_DC_SEND;
}

/* Loop (e)'s WRs are those of the loop it is named after (vals_of takes either). */
ALWAYS enum op op_base(enum op op)
{
	return op == OP_E_WRITE ? OP_A_WRITE : op == OP_E_UD_SEND ? OP_A_UD_SEND : op;
}

static inline int op_inline(enum op op)
{
	return op == OP_WRITE_INL || op == OP_SEND_INL || op == OP_A_WRITE_INL;
}

/* What one WR of op carries: constant in the identical-WR loops, from its wr_id in the others. */
struct vals {
	uint64_t raddr;
	struct ibv_sge sge;	/* the local SGE (or the 8-byte one of FETCH_ADD) */
	int sig;		/* IBV_SEND_SIGNALED / FV_SIGNALED wanted */
	unsigned dest;		/* UD destination index */
};

ALWAYS struct vals vals_of(const struct args *a, enum op op, uint64_t id, int sig)
{
#ifdef BENCH_SGE_FIELDS
	/*
	 * A second clang build (bench/bench.mk): the SGE copied field by field. clang 14 makes
	 * the whole-struct copy below loads with no type, which may alias every store in the
	 * loop, so it reads the SGE again every WR; this build shows what that costs.
	 */
	const struct ibv_sge *s = op == OP_FADD ? &a->sge8 : &a->sge;
	struct vals v = { a->raddr, { s->addr, s->length, s->lkey }, sig, 0 };
#else
	struct vals v = { a->raddr, op == OP_FADD ? a->sge8 : a->sge, sig, 0 };
#endif
	uint64_t k = id % SIG_EVERY;

	if (op == OP_FADD)
		v.raddr = a->raddr8;
	if (op_adv(op)) {
		v.raddr += k * 64;
		v.sig = sig || k == SIG_EVERY - 1;
		if (op == OP_A_WRITE_SGE)
			v.sge.addr += k * 64;
		v.dest = (unsigned)(id % NDEST);
	}
	return v;
}

ALWAYS void fill_wr(struct ibv_send_wr *w, struct ibv_send_wr *next, struct ibv_sge *sge,
		    const struct args *a, enum op op, uint64_t id, int sig)
{
	const struct vals v = vals_of(a, op, id, sig);
	unsigned f = v.sig ? IBV_SEND_SIGNALED : 0;

	w->wr_id = id;
	w->next = next;
	w->num_sge = 1;
	switch (op) {
	case OP_A_WRITE_SGE:	/* the WR's own SGE */
		*sge = v.sge;
		w->opcode = IBV_WR_RDMA_WRITE;
		w->send_flags = f;
		w->sg_list = sge;
		w->wr.rdma.remote_addr = v.raddr;
		w->wr.rdma.rkey = a->rkey;
		break;
	case OP_A_UD_SEND:
		w->opcode = IBV_WR_SEND;
		w->send_flags = f;
		w->sg_list = (struct ibv_sge *)&a->sge;
		w->wr.ud.ah = a->ahs[v.dest];
		w->wr.ud.remote_qpn = a->qpns[v.dest];
		w->wr.ud.remote_qkey = BENCH_QKEY;
		break;
	case OP_WRITE:
	case OP_WRITE_INL:
	case OP_A_WRITE:
	case OP_A_WRITE_INL:
		w->opcode = IBV_WR_RDMA_WRITE;
		w->send_flags = f | (op_inline(op) ? IBV_SEND_INLINE : 0);
		w->sg_list = op_inline(op) ? (struct ibv_sge *)&a->inl : (struct ibv_sge *)&a->sge;
		w->wr.rdma.remote_addr = v.raddr;
		w->wr.rdma.rkey = a->rkey;
		break;
	case OP_SEND_INL:
		w->opcode = IBV_WR_SEND;
		w->send_flags = f | IBV_SEND_INLINE;
		w->sg_list = (struct ibv_sge *)&a->inl;
		break;
	case OP_READ:
		w->opcode = IBV_WR_RDMA_READ;
		w->send_flags = f;
		w->sg_list = (struct ibv_sge *)&a->sge;
		w->wr.rdma.remote_addr = a->raddr;
		w->wr.rdma.rkey = a->rkey;
		break;
	case OP_FADD:
		w->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		w->send_flags = f;
		w->sg_list = (struct ibv_sge *)&a->sge8;
		w->wr.atomic.remote_addr = a->raddr8;
		w->wr.atomic.compare_add = 1;
		w->wr.atomic.rkey = a->rkey;
		break;
	case OP_UD_SEND:
	default:
		w->opcode = IBV_WR_SEND;
		w->send_flags = f;
		w->sg_list = (struct ibv_sge *)&a->sge;
		w->wr.ud.ah = a->ah;
		w->wr.ud.remote_qpn = a->ud_qpn;
		w->wr.ud.remote_qkey = BENCH_QKEY;
		break;
	}
}

/* ibv_post_send (fv = 0) or fv_post_send (fv = 1) of lists of batch WRs. */
ALWAYS void body_list(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig,
		      uint64_t id, const int fv)
{
	struct ibv_send_wr wrs[32], *bad;
	struct ibv_sge sges[32];

	for (int i = 0; i < n; i += batch) {
		int err;

		for (int j = 0; j < batch; j++)
			fill_wr(&wrs[j], j + 1 < batch ? &wrs[j + 1] : NULL, &sges[j], a, op, id++, sig);
		if (fv)
			err = fv_post_send(op_ud(op) ? &l->fud.qp : &l->frc.qp, wrs, &bad);
		else
			err = ibv_post_send(op_ud(op) ? l->ud : l->rc, wrs, &bad);
		if (__builtin_expect(err, 0))
			bench_fail("%s_post_send (%s): %s", fv ? "fv" : "ibv", op_name[op], strerror(err));
	}
}

ALWAYS void body_ibv(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	body_list(l, a, op, n, batch, sig, id, 0);
}

ALWAYS void body_fvps(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	body_list(l, a, op, n, batch, sig, id, 1);
}

/* Where the wr_id and wr_flags members are: the struct ibv_qp_ex, the handle's struct fv_qp. */
#define QX_ibv(q) (q)
#define QX_fv(q)  fv__wr_qp(q)
#define AH_ibv(a) ((a)->ah)
#define AH_fv(a)  (&(a)->fah)
#define AHS_ibv(a, i) ((a)->ahs[i])
#define AHS_fv(a, i)  (&(a)->fahs[i])
/* The DC address of DCT i: libmlx5's setter takes the DCI's mlx5dv_qp_ex, fastverbs' the handle. */
#define DCADDR_ibv(q, a, i) mlx5dv_wr_set_dc_addr(l->dcidv, (a)->ahs[i], (a)->dctns[i], (a)->dckeys[i])
#define DCADDR_fv(q, a, i)  fv_wr_set_dc_addr(q, &(a)->fahs[i], (a)->dctns[i], (a)->dckeys[i])

/*
 * P_wr_start, batch x (wr_id, wr_flags, P_wr_<op>, P_wr_set_*), P_wr_complete, where P is ibv
 * (q_rc, q_ud: struct ibv_qp_ex *) or fv (the typed handles struct fv_rc *, struct fv_ud *, or
 * their struct fv_qp *): the two APIs share names and arguments.
 */
#define BODY_WR(P, q_rc, q_ud)                                                                     \
	do {                                                                                       \
		for (int i = 0; i < n; i += batch) {                                               \
			int err;                                                                   \
			if (op_ud(op))                                                             \
				P##_wr_start(q_ud);                                                \
			else                                                                       \
				P##_wr_start(q_rc);                                                \
			for (int j = 0; j < batch; j++) {                                          \
				__typeof__(q_rc) q = q_rc;                                         \
				const struct vals v = vals_of(a, op, id, sig);                     \
				const struct ibv_sge *s = &v.sge;                                  \
				(op_ud(op) ? QX_##P(q_ud) : QX_##P(q_rc))->wr_id = id++;           \
				(op_ud(op) ? QX_##P(q_ud) : QX_##P(q_rc))->wr_flags =              \
					v.sig ? IBV_SEND_SIGNALED : 0;                             \
				switch (op) {                                                      \
				case OP_WRITE:                                                     \
				case OP_A_WRITE:                                                   \
				case OP_A_WRITE_SGE:                                               \
					P##_wr_rdma_write(q, a->rkey, v.raddr);                    \
					P##_wr_set_sge(q, s->lkey, s->addr, s->length);            \
					break;                                                     \
				case OP_WRITE_INL:                                                 \
				case OP_A_WRITE_INL:                                               \
					P##_wr_rdma_write(q, a->rkey, v.raddr);                    \
					P##_wr_set_inline_data(q, (void *)(uintptr_t)a->inl.addr, INL); \
					break;                                                     \
				case OP_SEND_INL:                                                  \
					P##_wr_send(q);                                            \
					P##_wr_set_inline_data(q, (void *)(uintptr_t)a->inl.addr, INL); \
					break;                                                     \
				case OP_READ:                                                      \
					P##_wr_rdma_read(q, a->rkey, v.raddr);                     \
					P##_wr_set_sge(q, s->lkey, s->addr, s->length);            \
					break;                                                     \
				case OP_FADD:                                                      \
					P##_wr_atomic_fetch_add(q, a->rkey, v.raddr, 1);           \
					P##_wr_set_sge(q, s->lkey, s->addr, s->length);            \
					break;                                                     \
				case OP_A_UD_SEND:                                                 \
					P##_wr_send(q_ud);                                         \
					P##_wr_set_ud_addr(q_ud, AHS_##P(a, v.dest), a->qpns[v.dest], \
							   BENCH_QKEY);                            \
					P##_wr_set_sge(q_ud, s->lkey, s->addr, s->length);         \
					break;                                                     \
				case OP_UD_SEND:                                                   \
				default:                                                           \
					P##_wr_send(q_ud);                                         \
					P##_wr_set_ud_addr(q_ud, AH_##P(a), a->ud_qpn, BENCH_QKEY); \
					P##_wr_set_sge(q_ud, s->lkey, s->addr, s->length);         \
					break;                                                     \
				}                                                                  \
			}                                                                          \
			err = op_ud(op) ? P##_wr_complete(q_ud) : P##_wr_complete(q_rc);          \
			if (__builtin_expect(err, 0))                                              \
				bench_fail(#P "_wr_complete (%s): %s", op_name[op], strerror(err)); \
		}                                                                                  \
	} while (0)

ALWAYS void body_wr(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	BODY_WR(ibv, l->rcx, l->udx);
}

ALWAYS void body_fvwr(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	BODY_WR(fv, &l->frc, &l->fud);
}

ALWAYS void body_fvwrq(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	BODY_WR(fv, &l->frc.qp, &l->fud.qp);
}

/* The typed builders, one fv_ring per batch. */
ALWAYS void body_typed(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	struct fv_rc *rc = &l->frc;
	struct fv_ud *ud = &l->fud;
	const void *data = (const void *)(uintptr_t)a->inl.addr;
	const uint32_t rkey = a->rkey, qpn = a->ud_qpn;

	for (int i = 0; i < n; i += batch) {
		for (int j = 0; j < batch; j++) {
			const struct vals v = vals_of(a, op, id, sig);
			const unsigned flags = v.sig ? FV_SIGNALED : 0;
			int err;

			switch (op) {
			case OP_WRITE:
			case OP_A_WRITE:
			case OP_A_WRITE_SGE: err = fv_write(rc, id++, flags, &v.sge, v.raddr, rkey); break;
			case OP_WRITE_INL:
			case OP_A_WRITE_INL: err = fv_write_inline(rc, id++, flags, data, INL, v.raddr, rkey); break;
			case OP_SEND_INL:    err = fv_send_inline(rc, id++, flags, data, INL); break;
			case OP_READ:        err = fv_read(rc, id++, flags, &v.sge, v.raddr, rkey); break;
			case OP_FADD:        err = fv_fadd(rc, id++, flags, &v.sge, v.raddr, rkey, 1); break;
			case OP_A_UD_SEND:
				err = fv_send(ud, id++, flags, &v.sge, &a->fahs[v.dest], a->qpns[v.dest], BENCH_QKEY);
				break;
			case OP_UD_SEND:
			default:             err = fv_send(ud, id++, flags, &v.sge, &a->fah, qpn, BENCH_QKEY); break;
			}
			if (__builtin_expect(err, 0))
				bench_fail("typed %s: %s", op_name[op], strerror(err));
		}
		if (op_ud(op))
			fv_ring(ud);
		else
			fv_ring(rc);
	}
}

/*
 * The floor: what any builder must do for these WRs and nothing more. Its queue's fields are
 * read once into locals and written back once, as a hand-written loop would keep them; the
 * WQE's 16-byte units are stored as pairs of 8-byte words, the 16-bit index with the opcode,
 * then the doorbell record, and the BlueFlame copy of a lone WQE or the 8-byte doorbell of a
 * batch's last. Room, wr_ids and signalling policy are the caller's business here (the bench
 * drains after every call), so the others pay for those and the floor does not.
 */
struct floor_unit {	/* a WQE store through a type of its own: it changes no uint64_t of ours */
	uint64_t w[2];
};

ALWAYS void floor_put(uint8_t *p, uint64_t w0, uint64_t w1)
{
	struct floor_unit *u = (struct floor_unit *)p;

	u->w[0] = w0;
	u->w[1] = w1;
}

ALWAYS uint64_t be2x32(uint32_t hi, uint32_t lo)	/* two big-endian words, in memory order */
{
	return (uint64_t)htobe32(hi) | (uint64_t)htobe32(lo) << 32;
}

/* The floor's WQE of op o at pi, w pointing at it; pi moves past it (body_floor's locals in scope). */
#define FLOOR_WQE(o)                                                                               \
	do {                                                                                       \
		const struct vals v = vals_of(a, o, id++, sig);                                    \
		uint8_t *p;                                                                        \
                                                                                                   \
		w = buf + (size_t)(pi & mask) * 64;                                                \
		floor_put(w, be2x32((pi & 0xffff) << 8 | opc, ds) | (uint64_t)qpn_be << 32,        \
			  (uint64_t)(v.sig ? htobe32(MLX5_WQE_CTRL_CQ_UPDATE) : 0));               \
		p = w + 16;                                                                        \
		if (op_ud(o)) {                                                                    \
			const struct mlx5_wqe_av *av = o == OP_A_UD_SEND ? &a->fahs[v.dest].av : &a->fah.av; \
			const uint32_t dqpn = o == OP_A_UD_SEND ? a->qpns[v.dest] : a->ud_qpn;     \
			const uint64_t *src = (const uint64_t *)av;                                \
                                                                                                   \
			floor_put(p, (uint64_t)htobe32(BENCH_QKEY),                                \
				  (uint64_t)htobe32(dqpn | MLX5_EXTENDED_UD_AV) | (src[1] & 0xffffffff00000000ull)); \
			floor_put(p + 16, src[2], src[3]);                                         \
			floor_put(p + 32, src[4], src[5]);                                         \
			p = buf + (size_t)((pi + 1) & mask) * 64;	/* the second block */     \
		} else if (op_dc(o)) {	/* the DC address: access key, DCT number, the AH's AV */  \
			const uint64_t *src = (const uint64_t *)&a->fahs[v.dest].av;               \
                                                                                                   \
			floor_put(p, htobe64(a->dckeys[v.dest]), (uint64_t)htobe32(a->dctns[v.dest] | \
				  MLX5_EXTENDED_UD_AV) | (src[1] & 0xffffffff00000000ull));        \
			floor_put(p + 16, src[2], src[3]);                                         \
			floor_put(p + 32, src[4], src[5]);                                         \
			p = buf + (size_t)((pi + 1) & mask) * 64;	/* the second block */     \
			if (o == OP_DC_WRITE) {                                                    \
				floor_put(p, htobe64(v.raddr), (uint64_t)htobe32(a->rkey));        \
				p += 16;                                                           \
			}                                                                          \
		} else if (o != OP_SEND_INL) {                                                     \
			floor_put(p, htobe64(v.raddr), (uint64_t)htobe32(a->rkey));                \
			p += 16;                                                                   \
		}                                                                                  \
		if (o == OP_FADD) {                                                                \
			floor_put(p, htobe64(1), 0);                                               \
			p += 16;                                                                   \
		}                                                                                  \
		if (op_inline(o)) {                                                                \
			const uint64_t *d = (const uint64_t *)(uintptr_t)a->inl.addr;              \
                                                                                                   \
			floor_put(p, (uint64_t)htobe32(INL | MLX5_INLINE_SEG) | d[0] << 32, d[0] >> 32 | d[1] << 32); \
			floor_put(p + 16, d[1] >> 32, 0);                                          \
		} else {                                                                           \
			floor_put(p, be2x32(v.sge.length, v.sge.lkey), htobe64(v.sge.addr));       \
		}                                                                                  \
		pi += nbb;                                                                         \
	} while (0)

/* The floor's doorbell for the WQEs up to pi, the last at w. */
#define FLOOR_RING()                                                                               \
	do {                                                                                       \
		__asm__ __volatile__("" ::: "memory");	/* the WQEs before the doorbell record */  \
		*dbrec = htobe32(pi & 0xffff);                                                     \
		fv__wc_start();                                                                    \
		if (batch == 1) {                                                                  \
			fv__bf_copy64(bf, w);                                                      \
			if (nbb > 1)                                                               \
				fv__bf_copy64(bf + 64, buf + (size_t)((pi - 1) & mask) * 64);      \
		} else {                                                                           \
			fv__mmio_write64(bf, *(const uint64_t *)w);                                \
		}                                                                                  \
		fv__wc_flush();                                                                    \
		bf = (uint8_t *)((uintptr_t)bf ^ toggle);                                          \
	} while (0)

/* The floor's view of the queue op posts on. */
ALWAYS struct floor *lane_floor(struct lane *l, enum op op)
{
	return op_dc(op) ? &l->fldc : op_ud(op) ? &l->flud : &l->flrc;
}

ALWAYS void body_floor(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	struct floor *f = lane_floor(l, op);
	uint8_t *const buf = f->buf, *bf = f->bf;
	const uint32_t mask = f->mask, qpn_be = f->qpn_be;
	const uintptr_t toggle = f->bf_toggle;
	volatile __be32 *const dbrec = f->dbrec;
	uint32_t pi = f->pi;
	const unsigned opc = op == OP_READ ? MLX5_OPCODE_RDMA_READ : op == OP_FADD ? MLX5_OPCODE_ATOMIC_FA :
			     op_ud(op) || op == OP_SEND_INL || op == OP_DC_SEND ? MLX5_OPCODE_SEND :
			     MLX5_OPCODE_RDMA_WRITE;
	/* units: ctrl, [raddr | av(3) | DC av(3) [raddr]], [atomic], data or inline (4 + 16 bytes: 2) */
	const unsigned ds = 1 + (op_ud(op) ? 3 : op_dc(op) ? 3 + (op == OP_DC_WRITE) : op == OP_SEND_INL ? 0 : 1) +
			    (op == OP_FADD) + (op_inline(op) ? 2 : 1);
	const unsigned nbb = (ds + 3) / 4;

	for (int i = 0; i < n; i += batch) {
		uint8_t *w = buf;

		for (int j = 0; j < batch; j++)
			FLOOR_WQE(op);
		FLOOR_RING();
	}
	f->pi = pi;
	f->bf = bf;
}

#ifdef BENCH_DC
/*
 * The DC loops, dc_write and dc_send: adv_write's and adv_ud_send's WRs on the DCI, each to one
 * of NDEST DCTs (address handle, DCT number and access key picked per WR). Bodies of their own,
 * in a build of their own (BENCH_DC), so that nothing here changes the other loops' code.
 */

/* The DC address of DCT i: libmlx5's setter takes the DCI's mlx5dv_qp_ex, fastverbs' the handle. */
#define DCADDR_ibv(q, a, i) mlx5dv_wr_set_dc_addr(l->dcidv, (a)->ahs[i], (a)->dctns[i], (a)->dckeys[i])
#define DCADDR_fv(q, a, i)  fv_wr_set_dc_addr(q, &(a)->fahs[i], (a)->dctns[i], (a)->dckeys[i])

/* BODY_WR's form on the DCI q (struct ibv_qp_ex *, struct fv_dci * or its struct fv_qp *). */
#define BODY_WR_DC(P, q)                                                                           \
	do {                                                                                       \
		for (int i = 0; i < n; i += batch) {                                               \
			int err;                                                                   \
			P##_wr_start(q);                                                           \
			for (int j = 0; j < batch; j++) {                                          \
				const struct vals v = vals_of(a, op, id, sig);                     \
				QX_##P(q)->wr_id = id++;                                           \
				QX_##P(q)->wr_flags = v.sig ? IBV_SEND_SIGNALED : 0;               \
				if (op == OP_DC_WRITE)                                             \
					P##_wr_rdma_write(q, a->rkey, v.raddr);                    \
				else                                                               \
					P##_wr_send(q);                                            \
				DCADDR_##P(q, a, v.dest);                                          \
				P##_wr_set_sge(q, v.sge.lkey, v.sge.addr, v.sge.length);           \
			}                                                                          \
			err = P##_wr_complete(q);                                                  \
			if (__builtin_expect(err, 0))                                              \
				bench_fail(#P "_wr_complete (%s): %s", op_name[op], strerror(err)); \
		}                                                                                  \
	} while (0)

ALWAYS void body_wr_dc(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	BODY_WR_DC(ibv, l->dcix);
}

ALWAYS void body_fvwr_dc(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	BODY_WR_DC(fv, &l->fdci);
}

ALWAYS void body_fvwrq_dc(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	BODY_WR_DC(fv, &l->fdci.qp);
}

/* The typed builders: fv_write or fv_send on the DCI, the destination last; one fv_ring per batch. */
ALWAYS void body_typed_dc(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	struct fv_dci *dci = &l->fdci;
	const uint32_t rkey = a->rkey;

	for (int i = 0; i < n; i += batch) {
		for (int j = 0; j < batch; j++) {
			const struct vals v = vals_of(a, op, id, sig);
			const unsigned flags = v.sig ? FV_SIGNALED : 0;
			const unsigned d = v.dest;
			int err = op == OP_DC_WRITE ?
				  fv_write(dci, id++, flags, &v.sge, v.raddr, rkey, &a->fahs[d], a->dctns[d], a->dckeys[d]) :
				  fv_send(dci, id++, flags, &v.sge, &a->fahs[d], a->dctns[d], a->dckeys[d]);

			if (__builtin_expect(err, 0))
				bench_fail("typed %s: %s", op_name[op], strerror(err));
		}
		fv_ring(dci);
	}
}

ALWAYS void body_floor_dc(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	body_floor(l, a, op, n, batch, sig, id);
}
#endif /* BENCH_DC */

/*
 * Loop (e), ring_write and ring_ud_send: one loop over the WRs, whose body posts one WR (as
 * adv_write's or adv_ud_send's), checks for an error and, at a batch's last WR, rings.
 */

/* The list paths: the WR's entry filled in the body, the list posted at its last WR. */
ALWAYS void body_list_e(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig,
			uint64_t id, const int fv)
{
	struct ibv_send_wr wrs[32], *bad;
	struct ibv_sge sges[32];

	for (int i = 0; i < n; i++) {
		const int j = i & (batch - 1);

		fill_wr(&wrs[j], j + 1 < batch ? &wrs[j + 1] : NULL, &sges[j], a, op_base(op), id++, sig);
		if (j == batch - 1) {
			int err = fv ? fv_post_send(op_ud(op) ? &l->fud.qp : &l->frc.qp, wrs, &bad)
				     : ibv_post_send(op_ud(op) ? l->ud : l->rc, wrs, &bad);

			if (__builtin_expect(err, 0))
				bench_fail("%s_post_send (%s): %s", fv ? "fv" : "ibv", op_name[op], strerror(err));
		}
	}
}

ALWAYS void body_ibv_e(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	body_list_e(l, a, op, n, batch, sig, id, 0);
}

ALWAYS void body_fvps_e(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	body_list_e(l, a, op, n, batch, sig, id, 1);
}

/* The ibv_wr_* / fv_wr_* paths: the batch opened at its first WR, completed at its last. */
#define BODY_WR_E(P, q_rc, q_ud)                                                                   \
	do {                                                                                       \
		for (int i = 0; i < n; i++) {                                                      \
			const int j = i & (batch - 1);                                             \
			const struct vals v = vals_of(a, op, id, sig);                             \
			const unsigned f = v.sig ? IBV_SEND_SIGNALED : 0;                          \
			if (op_ud(op)) {                                                           \
				if (j == 0)                                                        \
					P##_wr_start(q_ud);                                        \
				QX_##P(q_ud)->wr_id = id++;                                        \
				QX_##P(q_ud)->wr_flags = f;                                        \
				P##_wr_send(q_ud);                                                 \
				P##_wr_set_ud_addr(q_ud, AHS_##P(a, v.dest), a->qpns[v.dest], BENCH_QKEY); \
				P##_wr_set_sge(q_ud, v.sge.lkey, v.sge.addr, v.sge.length);        \
			} else {                                                                   \
				if (j == 0)                                                        \
					P##_wr_start(q_rc);                                        \
				QX_##P(q_rc)->wr_id = id++;                                        \
				QX_##P(q_rc)->wr_flags = f;                                        \
				P##_wr_rdma_write(q_rc, a->rkey, v.raddr);                         \
				P##_wr_set_sge(q_rc, v.sge.lkey, v.sge.addr, v.sge.length);        \
			}                                                                          \
			if (j == batch - 1) {                                                      \
				int err = op_ud(op) ? P##_wr_complete(q_ud) : P##_wr_complete(q_rc); \
				if (__builtin_expect(err, 0))                                      \
					bench_fail(#P "_wr_complete (%s): %s", op_name[op], strerror(err)); \
			}                                                                          \
		}                                                                                  \
	} while (0)

ALWAYS void body_wr_e(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	BODY_WR_E(ibv, l->rcx, l->udx);
}

ALWAYS void body_fvwr_e(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	BODY_WR_E(fv, &l->frc, &l->fud);
}

ALWAYS void body_fvwrq_e(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	BODY_WR_E(fv, &l->frc.qp, &l->fud.qp);
}

/* The typed builders: fv_write or fv_send, the error checked, fv_ring at a batch's last WR. */
ALWAYS void body_typed_e(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	struct fv_rc *rc = &l->frc;
	struct fv_ud *ud = &l->fud;
	const uint32_t rkey = a->rkey;

	for (int i = 0; i < n; i++) {
		const struct vals v = vals_of(a, op, id, sig);
		const unsigned flags = v.sig ? FV_SIGNALED : 0;
		int err = op_ud(op) ? fv_send(ud, id++, flags, &v.sge, &a->fahs[v.dest], a->qpns[v.dest], BENCH_QKEY)
				    : fv_write(rc, id++, flags, &v.sge, v.raddr, rkey);

		if (__builtin_expect(err, 0))
			bench_fail("typed %s: %s", op_name[op], strerror(err));
		if ((i & (batch - 1)) == batch - 1) {
			if (op_ud(op))
				fv_ring(ud);
			else
				fv_ring(rc);
		}
	}
}

/* The floor: its WQE in the body, its doorbell at a batch's last WR. */
ALWAYS void body_floor_e(struct lane *l, const struct args *a, enum op op, int n, int batch, int sig, uint64_t id)
{
	const enum op o = op_base(op);
	struct floor *f = op_ud(op) ? &l->flud : &l->flrc;
	uint8_t *const buf = f->buf, *bf = f->bf;
	const uint32_t mask = f->mask, qpn_be = f->qpn_be;
	const uintptr_t toggle = f->bf_toggle;
	volatile __be32 *const dbrec = f->dbrec;
	uint32_t pi = f->pi;
	const unsigned opc = op_ud(o) ? MLX5_OPCODE_SEND : MLX5_OPCODE_RDMA_WRITE;
	const unsigned ds = op_ud(o) ? 5 : 3;	/* ctrl, raddr or av (3), data */
	const unsigned nbb = (ds + 3) / 4;

	for (int i = 0; i < n; i++) {
		uint8_t *w;

		FLOOR_WQE(o);
		if ((i & (batch - 1)) == batch - 1)
			FLOOR_RING();
	}
	f->pi = pi;
	f->bf = bf;
}

/* ---- instances: m_* measured (ROUND unsignaled WRs), r_* the signaled WR that retires them ---- */

typedef void fn_t(struct lane *, const struct args *, uint64_t);

/*
 * Loop (e) is a build of its own (BENCH_RING, bench/bench.mk: build/bench/post-ring): in this
 * one its instances would grow the unit past gcc's inline-unit-growth limit, and gcc would then
 * call fv__sq_take and its like out of line in the other loops, changing their counts.
 */
#ifdef BENCH_RING
#define BODY(path) body_##path##_e
#elif defined(BENCH_DC)
#define BODY(path) body_##path##_dc
#else
#define BODY(path) body_##path
#endif

#define INSTANCES(path, op)                                                                        \
	__attribute__((noinline)) static void m_##path##_##op##_1(struct lane *l, const struct args *a, \
								   uint64_t id)                   \
	{                                                                                          \
		BODY(path)(l, a, op, ROUND, 1, 0, id);                                             \
	}                                                                                          \
	__attribute__((noinline)) static void m_##path##_##op##_32(struct lane *l, const struct args *a,\
								    uint64_t id)                  \
	{                                                                                          \
		BODY(path)(l, a, op, ROUND, 32, 0, id);                                            \
	}                                                                                          \
	__attribute__((noinline)) static void r_##path##_##op(struct lane *l, const struct args *a,     \
							       uint64_t id)                       \
	{                                                                                          \
		BODY(path)(l, a, op, 1, 1, 1, id);                                                 \
	}

#ifdef BENCH_RING
#define PATH_INSTANCES(path) INSTANCES(path, OP_E_WRITE) INSTANCES(path, OP_E_UD_SEND)
#elif defined(BENCH_DC)
#define PATH_INSTANCES(path) INSTANCES(path, OP_DC_WRITE) INSTANCES(path, OP_DC_SEND)
#else
#define PATH_INSTANCES(path)                                                                       \
	INSTANCES(path, OP_WRITE) INSTANCES(path, OP_WRITE_INL) INSTANCES(path, OP_SEND_INL)       \
	INSTANCES(path, OP_READ) INSTANCES(path, OP_FADD) INSTANCES(path, OP_UD_SEND)              \
	INSTANCES(path, OP_A_WRITE) INSTANCES(path, OP_A_WRITE_SGE) INSTANCES(path, OP_A_UD_SEND)  \
	INSTANCES(path, OP_A_WRITE_INL)
#endif

/* The DC loops have no list paths: ibv_post_send cannot name a DCT, fv_post_send refuses a DCI. */
#ifdef BENCH_DC
#define LIST_INSTANCES(path)
#else
#define LIST_INSTANCES(path) PATH_INSTANCES(path)
#endif

LIST_INSTANCES(ibv)
PATH_INSTANCES(wr)
LIST_INSTANCES(fvps)
PATH_INSTANCES(typed)
PATH_INSTANCES(fvwr)
PATH_INSTANCES(fvwrq)
PATH_INSTANCES(floor)

#define ROW(path, op) { m_##path##_##op##_1, m_##path##_##op##_32, r_##path##_##op }
#ifdef BENCH_RING
#define PATH_ROWS(path) { [OP_E_WRITE] = ROW(path, OP_E_WRITE), [OP_E_UD_SEND] = ROW(path, OP_E_UD_SEND) }
#elif defined(BENCH_DC)
#define PATH_ROWS(path) { [OP_DC_WRITE] = ROW(path, OP_DC_WRITE), [OP_DC_SEND] = ROW(path, OP_DC_SEND) }
#else
#define PATH_ROWS(path)                                                                            \
	{ ROW(path, OP_WRITE), ROW(path, OP_WRITE_INL), ROW(path, OP_SEND_INL), ROW(path, OP_READ), \
	  ROW(path, OP_FADD), ROW(path, OP_UD_SEND), ROW(path, OP_A_WRITE), ROW(path, OP_A_WRITE_SGE), \
	  ROW(path, OP_A_UD_SEND), ROW(path, OP_A_WRITE_INL) }
#endif

#ifdef BENCH_DC
#define LIST_ROWS(path) { { 0 } }
#else
#define LIST_ROWS(path) PATH_ROWS(path)
#endif

/* fns[path][op]: measured at batch 1, measured at batch 32, retire; NULL: not in this build */
static fn_t *const fns[P_COUNT][OP_COUNT][3] = {
	LIST_ROWS(ibv), PATH_ROWS(wr), LIST_ROWS(fvps), PATH_ROWS(typed), PATH_ROWS(fvwr), PATH_ROWS(fvwrq),
	PATH_ROWS(floor),
};

/* ---- setup ---- */

static void floor_open(struct floor *f, const struct fv__sq *sq)
{
	f->buf = sq->ring.buf;
	f->mask = sq->mask;
	f->pi = sq->pi;
	f->qpn_be = sq->qpn_be;
	f->dbrec = sq->dbrec;
	f->bf = (uint8_t *)sq->bf->cur;
	f->bf_toggle = sq->bf_toggle;
}

/*
 * After the floor posted n WRs of nbb blocks from pi0 on (ids from id0): tell fastverbs, which
 * polls the floor's CQ, where the signaled ones end and where the ring stands.
 */
static void floor_sync(struct lane *l, const struct args *a, enum op op, uint32_t pi0, uint64_t id0, int n, int sig)
{
	struct floor *f = lane_floor(l, op);
	struct fv__sq *sq = op_dc(op) ? &l->fdci.qp.sq : op_ud(op) ? &l->fud.qp.sq : &l->frc.qp.sq;
	uint32_t nbb = (f->pi - pi0) / (uint32_t)n;

	for (int k = 0; k < n; k++)
		if (vals_of(a, op, id0 + (uint64_t)k, sig).sig) {
			uint32_t pi = pi0 + (uint32_t)k * nbb;

			sq->meta[pi & sq->mask].end = pi + nbb;
			sq->sig_pi = pi + nbb;
		}
	sq->pi = sq->rung_pi = f->pi;
	sq->last_pi = f->pi - nbb;
	sq->bf->cur = (uintptr_t)f->bf;
	sq->lim = fv__sq_lim(sq);
}

#ifdef BENCH_DC
static const int with_dc = 1;	/* the DC loops' QPs are made in this build only */
#else
static const int with_dc = 0;
#endif
#define DC_KEY 0x0dc0ffee00000000ull	/* DCT i's access key: DC_KEY + i */

static void lane_open(struct ctx *c, struct lane *l, enum path p)
{
	struct bench_dev *d = &c->d;
	uint64_t rc_ops = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ |
			  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

	l->fv = p == P_FVPS || p == P_TYPED || p == P_FVWR || p == P_FVWRQ || p == P_FLOOR;
	l->scq = bench_cq(d, 256);
	l->rc = bench_qp(d, IBV_QPT_RC, l->scq, c->rcq, SEND_WR, 1, p == P_WR ? rc_ops : 0);
	l->ud = bench_qp(d, IBV_QPT_UD, l->scq, c->rcq, SEND_WR, 1, p == P_WR ? IBV_QP_EX_WITH_SEND : 0);
	l->peer = bench_qp(d, IBV_QPT_RC, c->rcq, c->rcq, 1, 2 * ROUND, 0);
	bench_rc_connect(d, l->rc, l->peer->qp_num);
	bench_rc_connect(d, l->peer, l->rc->qp_num);
	bench_ud_ready(l->ud);
	if (with_dc) {
		l->dci = bench_dc_qp(d, l->scq, NULL, SEND_WR, p == P_WR ? IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND : 0, 0);
		bench_dc_ready(d, l->dci, 0);
	}
	if (p == P_WR && with_dc) {
		l->dcix = ibv_qp_to_qp_ex(l->dci);
		l->dcidv = l->dcix ? mlx5dv_qp_ex_from_ibv_qp_ex(l->dcix) : NULL;
		if (!l->dcidv)
			bench_fail("ibv_qp_to_qp_ex (DCI)");
	}
	if (p == P_WR) {
		l->rcx = ibv_qp_to_qp_ex(l->rc);
		l->udx = ibv_qp_to_qp_ex(l->ud);
		if (!l->rcx || !l->udx)
			bench_fail("ibv_qp_to_qp_ex");
	}
	if (l->fv) {
		int err = fv_rc_init(&l->frc, l->rc);

		if (!err)
			err = fv_ud_init(&l->fud, l->ud);
		if (!err && with_dc)
			err = fv_dci_init(&l->fdci, l->dci);
		if (!err)
			err = fv_cq_init(&l->fcq, l->scq);
		if (err)
			bench_fail("taking the QPs and CQ over: %s", strerror(err));
		/* The compat rows lock only when FVBENCH_LOCKED is set (bench/run.sh's "_locked"
		 * rows): otherwise their counts are the unlocked form's, as before locks came. */
		int locked = getenv("FVBENCH_LOCKED") != NULL;

		fv_set_lock(&l->frc, locked);
		fv_set_lock(&l->fud, locked);
		if (with_dc)
			fv_set_lock(&l->fdci, locked);
		fv_set_lock(&l->fcq, locked);
	}
	if (p == P_FLOOR) {
		floor_open(&l->flrc, &l->frc.qp.sq);
		floor_open(&l->flud, &l->fud.qp.sq);
		if (with_dc)
			floor_open(&l->fldc, &l->fdci.qp.sq);
	}
}

static void ctx_open(struct ctx *c)
{
	struct bench_dev *d = &c->d;
	uint8_t *b;

	memset(c, 0, sizeof(*c));
	bench_open(d);
	b = d->buf;
	for (int i = 0; i < 256; i++)
		b[i] = (uint8_t)i;
	c->a.sge = (struct ibv_sge){ .addr = (uintptr_t)b, .length = 64, .lkey = d->mr->lkey };
	c->a.inl = (struct ibv_sge){ .addr = (uintptr_t)b + 64, .length = INL, .lkey = d->mr->lkey };
	c->a.sge8 = (struct ibv_sge){ .addr = (uintptr_t)b + 128, .length = 8, .lkey = d->mr->lkey };
	c->a.raddr = (uintptr_t)b + 4096;
	c->a.raddr8 = (uintptr_t)b + 8192;
	c->a.rkey = d->mr->rkey;
	c->rcq = bench_cq(d, 1024);
	c->udt = bench_qp(d, IBV_QPT_UD, c->rcq, c->rcq, 1, 1, 0);
	bench_ud_ready(c->udt);
	c->a.ud_qpn = c->udt->qp_num;
	c->a.ah = bench_ah(d);
	if (fv_ah_init(&c->a.fah, c->a.ah))
		bench_fail("fv_ah_init");
	for (int i = 0; i < NDEST; i++) {
		c->udts[i] = bench_qp(d, IBV_QPT_UD, c->rcq, c->rcq, 1, 1, 0);
		bench_ud_ready(c->udts[i]);
		c->a.qpns[i] = c->udts[i]->qp_num;
		c->a.ahs[i] = bench_ah(d);
		if (fv_ah_init(&c->a.fahs[i], c->a.ahs[i]))
			bench_fail("fv_ah_init");
	}
	if (with_dc) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 2 * ROUND, .max_sge = 1 } };

		c->dsrq = ibv_create_srq(d->pd, &sa);
		if (!c->dsrq)
			bench_fail("ibv_create_srq: %s", strerror(errno));
		for (int i = 0; i < NDEST; i++) {
			c->a.dckeys[i] = DC_KEY + (uint64_t)i;
			c->dcts[i] = bench_dc_qp(d, c->rcq, c->dsrq, 0, 0, c->a.dckeys[i]);
			bench_dc_ready(d, c->dcts[i], 1);
			c->a.dctns[i] = c->dcts[i]->qp_num;	/* there from RTR on */
		}
	}
	c->rsge = (struct ibv_sge){ .addr = (uintptr_t)b + 16384, .length = 64, .lkey = d->mr->lkey };
	for (int i = 0; i <= ROUND; i++) {
		c->rwr[i].wr_id = (uint64_t)i;
		c->rwr[i].sg_list = &c->rsge;
		c->rwr[i].num_sge = 1;
		c->rwr[i].next = i < ROUND ? &c->rwr[i + 1] : NULL;
	}
	for (int p = 0; p < P_COUNT; p++)
		lane_open(c, &c->lane[p], (enum path)p);
}

/* Poll the fastverbs CQ until n successful completions arrived. */
static void fv_drain(struct bench_dev *d, struct fv_cq *cq, int n, const char *what)
{
	struct fv_wc wc[16];
	uint64_t t0 = bench_now_ns();

	while (n > 0) {
		int r = fv_poll(cq, wc, n < 16 ? n : 16);

		if (r < 0)
			bench_fail("fv_poll (%s): %s", what, strerror(errno));
		for (int i = 0; i < r; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				bench_fail("%s: completion %llu: %s", what, (unsigned long long)wc[i].wr_id,
					   ibv_wc_status_str((enum ibv_wc_status)wc[i].status));
		n -= r;
		if (!r)
			bench_wait(d, t0, what);
	}
}

/* One measured call of (path, op, batch index) with everything around it; returns its ns. */
static uint64_t round_once(struct ctx *c, enum path p, enum op op, int bi)
{
	struct lane *l = &c->lane[p];
	struct ibv_recv_wr *bad;
	uint64_t t0, t1;

	if (op == OP_SEND_INL && ibv_post_recv(l->peer, c->rwr, &bad))
		bench_fail("ibv_post_recv: %s", strerror(errno));
	if (op == OP_DC_SEND && ibv_post_srq_recv(c->dsrq, c->rwr, &bad))
		bench_fail("ibv_post_srq_recv: %s", strerror(errno));
	uint32_t pi0 = lane_floor(l, op)->pi;
	int comps = 1 + (op_adv(op) ? ROUND / SIG_EVERY : 0);	/* ROUND is a multiple of SIG_EVERY */

	t0 = bench_now_ns();
	fns[p][op][bi](l, &c->a, c->id);
	t1 = bench_now_ns();
	if (p == P_FLOOR)
		floor_sync(l, &c->a, op, pi0, c->id, ROUND, 0);
	c->id += ROUND;
	pi0 = lane_floor(l, op)->pi;
	fns[p][op][2](l, &c->a, c->id);
	if (p == P_FLOOR)
		floor_sync(l, &c->a, op, pi0, c->id, 1, 1);
	c->id++;
	bench_device_run(&c->d);
	if (l->fv)
		fv_drain(&c->d, &l->fcq, comps, op_name[op]);
	else
		bench_ibv_drain(&c->d, l->scq, comps, op_name[op]);
	if (op == OP_SEND_INL || op == OP_DC_SEND)
		bench_ibv_drain(&c->d, c->rcq, ROUND + 1, "receives");
	return t1 - t0;
}

/* Whether name is in the comma-separated list of environment variable var (unset: all are). */
static int listed(const char *var, const char *name)
{
	const char *want = getenv(var);
	size_t n = strlen(name);

	for (const char *p = want; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ','))
		if (strcspn(p, ",") == n && !strncmp(p, name, n))
			return 1;
	return !want || !*want;
}

/*
 * FVBENCH_OPS="adv_write,ud_send" and FVBENCH_PATHS="typed,floor" run those only (while
 * working on one, or for a second build: bench/run.sh counts the clang builds' typed and floor
 * paths, their names given FVBENCH_SUFFIX "_clang", "_clangf").
 */
static int op_wanted(enum op op)
{
	if (!fns[P_FLOOR][op][0])	/* in another build (BENCH_RING, BENCH_DC) */
		return 0;
#ifdef BENCH_SGE_FIELDS
	if (op_inline(op))	/* no SGE to copy: the same as the other clang build's */
		return 0;
#endif
	return listed("FVBENCH_OPS", op_name[op]);
}

static int path_wanted(int p, int op)
{
	return fns[p][op][0] && listed("FVBENCH_PATHS", path_name[p]);	/* the DC loops have no list paths */
}

/*
 * Whether a counted path's count is dumped (FVBENCH_DUMP_PATHS, unset: all). The others still
 * run their rounds: the wr_ids, and so where the every-64th signal falls against each ring's
 * room, stay those of the run that dumps them all (bench/run.sh's locked pass).
 */
static int path_dumped(int p)
{
	return listed("FVBENCH_DUMP_PATHS", path_name[p]);
}

static const char *suffix(void)
{
	const char *s = getenv("FVBENCH_SUFFIX");

	return s ? s : "";
}

static void run_count(struct ctx *c)
{
	for (int op = 0; op < OP_COUNT; op++) {
		if (!op_wanted((enum op)op))
			continue;
		fprintf(stderr, "post: counting instructions: %s\n", op_name[op]);
		for (int bi = 0; bi < 2; bi++)
			for (int p = 0; p < P_COUNT; p++) {
				char label[128];

				if (!path_wanted(p, op))
					continue;
				for (int r = 0; r < WARM_ROUNDS; r++)
					round_once(c, (enum path)p, (enum op)op, bi);
				CALLGRIND_ZERO_STATS;
				for (int r = 0; r < COUNT_ROUNDS; r++)
					round_once(c, (enum path)p, (enum op)op, bi);
				if (!path_dumped(p))
					continue;
				snprintf(label, sizeof(label), "post %s %s%s %d %d", op_name[op], path_name[p],
					 suffix(), batches[bi], COUNT_ROUNDS * ROUND);
				CALLGRIND_DUMP_STATS_AT(label);
			}
	}
}

static void run_time(struct ctx *c)
{
	static double ns[OP_COUNT][2][P_COUNT][REPS];

	for (int rep = 0; rep < REPS; rep++) {
		fprintf(stderr, "post: timing, repetition %d of %d\n", rep + 1, REPS);
		for (int op = 0; op < OP_COUNT; op++)
			for (int bi = 0; bi < 2 && op_wanted((enum op)op); bi++)
				for (int p = 0; p < P_COUNT; p++) {
					uint64_t t = 0;

					if (!path_wanted(p, op))
						continue;
					round_once(c, (enum path)p, (enum op)op, bi);	/* warm up */
					for (int r = 0; r < TIME_ROUNDS; r++)
						t += round_once(c, (enum path)p, (enum op)op, bi);
					ns[op][bi][p][rep] = (double)t / (TIME_ROUNDS * ROUND);
				}
	}
	for (int op = 0; op < OP_COUNT; op++)
		for (int bi = 0; bi < 2 && op_wanted((enum op)op); bi++)
			for (int p = 0; p < P_COUNT; p++)
				if (path_wanted(p, op))
					printf("time post %s %s%s %d %.2f\n", op_name[op], path_name[p], suffix(),
					       batches[bi], bench_median(ns[op][bi][p], REPS));
}

static void open_any(void *c)  { ctx_open(c); }
static void count_any(void *c) { run_count(c); }
static void time_any(void *c)  { run_time(c); }

int main(int argc, char **argv)
{
	static struct ctx c;
	static const struct bench_prog prog = { "post", open_any, count_any, time_any };

	return bench_main(argc, argv, &prog, &c, &c.d);
}
