/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fv_post_send: ibv_post_send(3) as libmlx5 implements it, on fastverbs builders.
 *
 * Same errno as libmlx5 for the same mistake (EINVAL bad opcode, ENOMEM too many SGEs /
 * inline too long / SQ full), stop at the first bad WR and return it in *bad_wr, one
 * doorbell for the WRs before it. Deliberately better (docs/compat.md §5):
 *  - an operation the QP type does not allow (RDMA/atomic on UD, READ/atomic on UC),
 *    INLINE on READ/atomic, a UD WR without an AH, a negative num_sge: EINVAL;
 *  - a BIND_MW without a window, or with a length and no MR: EINVAL;
 *  - a BIND_MW longer than 2 GiB is refused with libmlx5's EOPNOTSUPP, but leaves no fence
 *    for the next WQE (libmlx5 caches one even for the refused WR);
 *  - the refused WR leaves no trace in the ring, the doorbell record or the BF register;
 *  - free space is counted in WQEBBs, not worst-case WRs.
 * Raw Ethernet QPs (eth.h) take SEND and TSO, with IBV_SEND_IP_CSUM when the QP has checksum
 * offload (else EINVAL, as libmlx5); every other opcode there is EINVAL.
 */
#ifndef FASTVERBS_COMPAT_POST_SEND_H
#define FASTVERBS_COMPAT_POST_SEND_H

#include "../gen/ops.h"		/* the typed builders come with the compat calls, as they always did */
#include "../sync.h"
#include "../gen/post_send_ops.h"

FV__EXTERN_C_BEGIN

/* fm_ce_se bits for the IBV_SEND_* flags that have one (FENCE, SIGNALED, SOLICITED). */
#define FV__SEND_FM(f) (((f) & IBV_SEND_FENCE ? (unsigned)FV_FENCE : 0u) | \
		       ((f) & IBV_SEND_SIGNALED ? (unsigned)FV_SIGNALED : 0u) | \
		       ((f) & IBV_SEND_SOLICITED ? (unsigned)FV_SOLICITED : 0u))

/* FV__SEND_FM of each of the 8 combinations, for fv__send_flags. */
static inline const uint8_t *fv__send_fm_table(void)
{
	static const uint8_t fm[8] = {
		FV__SEND_FM(0), FV__SEND_FM(1), FV__SEND_FM(2), FV__SEND_FM(3),
		FV__SEND_FM(4), FV__SEND_FM(5), FV__SEND_FM(6), FV__SEND_FM(7),
	};

	return fm;
}

/*
 * FV__SEND_FM of flags read from memory (a WR's): a lookup in fm (fv__send_fm_table),
 * cheaper than the tests. The compiler is told what the table holds: it then masks nothing
 * out of fm_ce_se.
 */
static FV__ALWAYS_INLINE unsigned fv__send_flags_in(const uint8_t *fm, unsigned ibv_flags)
{
	unsigned f = fm[ibv_flags & 7];

	static_assert(IBV_SEND_FENCE == 1 && IBV_SEND_SIGNALED == 2 && IBV_SEND_SOLICITED == 4,
		       "IBV_SEND_* bits");
	if (f & ~(unsigned)(FV_FENCE | FV_SIGNALED | FV_SOLICITED))
		__builtin_unreachable();
	return f;
}

static inline unsigned fv__send_flags(unsigned ibv_flags)
{
	return fv__send_flags_in(fv__send_fm_table(), ibv_flags);
}

/*
 * FV_IP_CSUM for IBV_SEND_IP_CSUM on a raw Ethernet QP; elsewhere libmlx5 ignores the flag,
 * and so does fastverbs.
 */
static inline unsigned fv__send_csum(enum fv_qpt qpt, unsigned ibv_flags)
{
	return qpt == FV_QPT_RAW && (ibv_flags & IBV_SEND_IP_CSUM) ? (unsigned)FV_IP_CSUM : 0u;
}

/* Total inline bytes of wr's SGEs, or UINT32_MAX if it cannot fit any QP. */
static inline uint32_t fv__sgl_bytes(const struct ibv_sge *sgl, int n)
{
	uint64_t total = 0;

	for (int i = 0; i < n; i++)
		total += sgl[i].length;
	return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

/*
 * Check one WR against the table and the QP's caps and build it. 0 or an errno. The general
 * path, table-driven (one copy, not inlined): fv__post_send_list sends here what the fast
 * path does not build.
 */
static FV__NOINLINE int fv__post_send_one(struct fv_qp *qp, const struct ibv_send_wr *wr)
{
	const struct fv__op_info *info;

	if ((unsigned)wr->opcode >= FV__WR_OPCODE_SLOTS)
		return EINVAL;
	info = &fv__op_table[qp->qpt][wr->opcode];
	if (!info->allowed)
		return EINVAL;
	if (wr->num_sge < 0)
		return EINVAL;
	if ((unsigned)wr->num_sge > qp->max_send_sge)
		return ENOMEM;

	/* Initialized, not memset: the compiler then keeps the fields in registers. */
	struct fv__req r = FV__ZERO_INIT;
	/* the conversion the fast path uses too (post_send_ops.h) */
	int err = fv__send_wr_req(qp, wr, fv__send_flags(wr->send_flags) | fv__send_csum(qp->qpt, wr->send_flags),
				 wr->num_sge, &r);

	if (err)
		return err;
	/* libmlx5 appends a window's SGEs (or inline data) after the UMR segments: so do we. */
	if ((wr->send_flags & IBV_SEND_INLINE) && wr->num_sge) {
		if (info->payload == FV__PL_SGL)
			return EINVAL;
		r.payload = FV__PL_INLINE;
		r.len = fv__sgl_bytes(wr->sg_list, wr->num_sge);
	}
	return fv__build_wqe(qp, qp->qpt, &r);	/* nothing is a constant here: one copy of the body */
}

/* Whether the raw fast path built its WR (nbb blocks at pi, then the producer moves on). */
static FV__ALWAYS_INLINE bool fv__post_send_eth_end(struct fv_qp *qp, uint32_t pi, unsigned nbb)
{
	if (!nbb)
		return false;
	fv__sq_advance(&qp->sq, pi, nbb);
	return true;
}

/*
 * A raw Ethernet WR of one SGE, not inline: SEND or TSO through the Ethernet builder's
 * inline cases (eth.h). Whether it built the WR; if not, nothing was written.
 */
static FV__ALWAYS_INLINE bool fv__post_send_eth_fast(struct fv_qp *qp, const struct ibv_send_wr *wr)
{
	uint32_t pi = qp->sq.pi;

	if (wr->num_sge != 1 || (wr->send_flags & IBV_SEND_INLINE) ||
	    (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_TSO))
		return false;

	struct fv__req r = FV__ZERO_INIT;

	r.wr_id = wr->wr_id, r.flags = fv__send_flags(wr->send_flags) | fv__send_csum(FV_QPT_RAW, wr->send_flags);
	r.payload = FV__PL_SGL, r.sgl = wr->sg_list, r.nsge = 1, r.from_wr = true;
	r.opcode = MLX5_OPCODE_SEND;
	if (wr->opcode == IBV_WR_TSO) {
		r.opcode = MLX5_OPCODE_TSO, r.segs = FV__SEG_TSO;
		r.hdr = wr->tso.hdr, r.hdr_sz = wr->tso.hdr_sz, r.mss = wr->tso.mss;
		if (FV__ETH_BUILD_EACH)	/* a build of its own: SEND's then has no TSO field to test */
			return fv__post_send_eth_end(qp, pi, fv__build_eth_fast(qp, &r, pi));
	}
	return fv__post_send_eth_end(qp, pi, fv__build_eth_fast(qp, &r, pi));
}

/*
 * Whether the fast path built wr (one SGE, inline or not, on a QP of type qpt, not raw) on
 * the ring state ps. Inline or not is a constant in each call: the WRs that are not pay
 * nothing for those that are.
 */
static FV__ALWAYS_INLINE bool fv__post_send_fast_wr(struct fv__ps *ps, struct fv_qp *qp, const enum fv_qpt qpt,
						   const struct ibv_send_wr *wr, const uint8_t *fm)
{
	unsigned flags = fv__send_flags_in(fm, wr->send_flags);

	if (wr->num_sge != 1)
		return false;
	if (__builtin_expect(wr->send_flags & IBV_SEND_INLINE, 0))
		return !fv__post_send_fast(ps, qp, qpt, wr, flags, true);
	return !fv__post_send_fast(ps, qp, qpt, wr, flags, false);
}

/*
 * fv_post_send for a QP of type qpt, a constant: a WR of one SGE, inline or not (most WRs),
 * goes straight into the builder of its (QP type, opcode), on the ring's fields held in
 * locals (compat/post_send_ring.h); whatever that does not build, fv__post_send_one does,
 * out of line, with the fields written back before and read again after.
 */
static FV__ALWAYS_INLINE int
fv__post_send_list(struct fv_qp *qp, const enum fv_qpt qpt, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	for (;;) {
		struct fv__ps ps;
		int err;

		if (qpt == FV_QPT_RAW) {	/* eth.h's fast cases, on the ring itself */
			while (wr && fv__post_send_eth_fast(qp, wr))
				wr = wr->next;
		} else {
			fv__ps_load(&ps, qp, qpt);
			FV__TEST_YIELD();	/* a test's window: two unlocked posters now share pi */
			/* Not on a QP without SGEs (no WR has a data segment to build), nor on a UD
			 * one before the general path has learnt where an ibv_ah keeps its AV. */
			if (qp->max_send_sge && (qpt != FV_QPT_UD || ps.ah_off))
				while (wr && fv__post_send_fast_wr(&ps, qp, qpt, wr, fv__send_fm_table()))
					wr = wr->next;
			fv__ps_store(&ps, qp);
		}
		if (!wr)
			return 0;
		err = fv__post_send_one(qp, wr);
		if (err) {
			*bad_wr = wr;
			return err;
		}
		wr = wr->next;
	}
}

/* The end of a list: its doorbell, then the queue's release (a test's window before them). */
static FV__ALWAYS_INLINE void fv__post_send_close(struct fv_qp *qp)
{
	FV__TEST_YIELD();
	fv__sq_ring_as(&qp->sq, FV__DB_LATE);
	fv__sq_leave(qp);
}

/* The list, its doorbell and the queue's release (the QP types other than RC and UD). */
static FV__ALWAYS_INLINE int fv__post_send_rung(struct fv_qp *qp, const enum fv_qpt qpt, struct ibv_send_wr *wr,
						struct ibv_send_wr **bad_wr)
{
	int err = fv__post_send_list(qp, qpt, wr, bad_wr);

	fv__post_send_close(qp);
	return err;
}

/*
 * A list on an RC or UD QP (qpt) from wr: the WRs the fast path builds, then, if that was
 * all of them, the doorbell and the release (NULL). Else the first WR it did not build,
 * nothing rung: fv__post_send_rest goes on from there. It calls nothing, so it saves no
 * registers: its values stay in those a call may clobber.
 */
static FV__ALWAYS_INLINE struct ibv_send_wr *fv__post_send_head(struct fv_qp *qp, const enum fv_qpt qpt,
								struct ibv_send_wr *wr)
{
	struct fv__ps ps;
	const uint8_t *fm = fv__send_fm_table();

	/* In a register for the whole list: gcc otherwise computes its address for each WR. */
	FV__HIDE(fm);
	fv__ps_load(&ps, qp, qpt);
	FV__TEST_YIELD();	/* as in fv__post_send_list */
	if (qp->max_send_sge && (qpt != FV_QPT_UD || ps.ah_off))
		while (wr && __builtin_expect(fv__post_send_fast_wr(&ps, qp, qpt, wr, fm), 1))
			wr = wr->next;
	fv__ps_store(&ps, qp);
	if (wr)
		return wr;
	fv__post_send_close(qp);
	return NULL;
}

static FV__NOINLINE struct ibv_send_wr *fv__post_send_head_rc(struct fv_qp *qp, struct ibv_send_wr *wr)
{
	return fv__post_send_head(qp, FV_QPT_RC, wr);
}

static FV__NOINLINE struct ibv_send_wr *fv__post_send_head_ud(struct fv_qp *qp, struct ibv_send_wr *wr)
{
	return fv__post_send_head(qp, FV_QPT_UD, wr);
}

/*
 * From a WR the fast path did not build: it through the general path, the WRs after it
 * through fv__post_send_head_<qpt> until the next such WR, and so on; at the first
 * refused WR, *bad_wr, and the WRs before it rung.
 */
static FV__ALWAYS_INLINE int fv__post_send_rest(struct fv_qp *qp, const enum fv_qpt qpt, struct ibv_send_wr *wr,
						struct ibv_send_wr **bad_wr)
{
	do {
		int err = fv__post_send_one(qp, wr);

		if (err) {
			*bad_wr = wr;
			fv__post_send_close(qp);
			return err;
		}
		wr = qpt == FV_QPT_UD ? fv__post_send_head_ud(qp, wr->next) : fv__post_send_head_rc(qp, wr->next);
	} while (wr);
	return 0;
}

static FV__NOINLINE int fv__post_send_rest_rc(struct fv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return fv__post_send_rest(qp, FV_QPT_RC, wr, bad_wr);
}

static FV__NOINLINE int fv__post_send_rest_ud(struct fv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return fv__post_send_rest(qp, FV_QPT_UD, wr, bad_wr);
}

/*
 * fv_post_send on a QP of another type than RC and UD: raw Ethernet, UC, XRC, and a DCI, which
 * takes no ibv_send_wr. One function, out of line, that enters the queue itself: a raw
 * Ethernet list then costs what it did before RC and UD had their own.
 */
static FV__NOINLINE int fv__post_send_other(struct fv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	int err = fv__sq_enter(qp);

	if (__builtin_expect(err, 0)) {
		*bad_wr = wr;
		return err;
	}
	/* raw first, by its own test: the cheapest shape measured (docs/performance.md §3.1) */
	if (qp->qpt == FV_QPT_RAW)
		return fv__post_send_rung(qp, FV_QPT_RAW, wr, bad_wr);
	switch (qp->qpt) {
	case FV_QPT_UC:
		return fv__post_send_rung(qp, FV_QPT_UC, wr, bad_wr);
	case FV_QPT_XRC:
		return fv__post_send_rung(qp, FV_QPT_XRC, wr, bad_wr);
	default:	/* a DCI: an ibv_send_wr cannot name a DCT (libmlx5 posts it without one) */
		err = wr ? EINVAL : 0;
		if (err)
			*bad_wr = wr;
		fv__post_send_close(qp);
		return err;
	}
}

/*
 * ibv_post_send(3) on a QP taken over with fv_qp_init. Returns 0, or the errno of the first
 * refused WR with *bad_wr set to it; the WRs before it are posted and rung. Holds the send
 * queue's lock over the list and the doorbell, as libmlx5 does (sync.h); EINVAL, nothing
 * posted, while this thread holds the queue (an open fv_wr_* batch, fv_lock).
 */
static inline int fv_post_send(struct fv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	/* RC or UD (0 or 2) by one test, the other types to one call: cheaper than a jump table. */
	static_assert(FV_QPT_RC == 0 && FV_QPT_UD == 2, "QP types");
	int err;

	if (qp->qpt & ~(unsigned)FV_QPT_UD)
		return fv__post_send_other(qp, wr, bad_wr);
	err = fv__sq_enter(qp);
	if (__builtin_expect(err, 0)) {
		*bad_wr = wr;
		return err;
	}
	if (qp->qpt == FV_QPT_RC)
		return (wr = fv__post_send_head_rc(qp, wr)) ? fv__post_send_rest_rc(qp, wr, bad_wr) : 0;
	return (wr = fv__post_send_head_ud(qp, wr)) ? fv__post_send_rest_ud(qp, wr, bad_wr) : 0;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_COMPAT_POST_SEND_H */
