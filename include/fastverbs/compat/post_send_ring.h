/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fv_post_send's fast path (compat/post_send.h): the send ring's fields it reads and moves,
 * held in locals while it walks a WR list, and the builder of a one-SGE WQE on them.
 *
 * The typed builders (build.h) leave the ring's fields in struct fv__sq and let the compiler
 * keep them in registers across the caller's loop. fv_post_send's loop is its own: it reads
 * each WR through pointers the compiler cannot tell from the ring, so a field left in the
 * struct would be read again for every WR. Here they are read once per list (and again after
 * each WR the general path builds), and the producer is written back once.
 */
#ifndef FASTVERBS_COMPAT_POST_SEND_RING_H
#define FASTVERBS_COMPAT_POST_SEND_RING_H

#include "../build.h"
#include "../ah.h"

FV__EXTERN_C_BEGIN

/*
 * The counters the fast path moves, in locals; the rest (buffer, masks, QPN, caps, lim,
 * which only the general path moves) it reads from the QP where it uses them, as memory
 * operands: kept in registers too they would crowd out a WR's values.
 */
struct fv__ps {
	uint32_t pi, last_pi;	/* struct fv__sq's fields of the same names */
	intptr_t ah_off;	/* UD: where an ibv_ah keeps its AV (fv__ah_av_offset), 0: not known yet */
};

/* Read the counters into ps: before the first WR and after the general path built one. */
static FV__ALWAYS_INLINE void fv__ps_load(struct fv__ps *ps, const struct fv_qp *qp, const enum fv_qpt qpt)
{
	ps->pi = qp->sq.pi, ps->last_pi = qp->sq.last_pi;
	ps->ah_off = qpt == FV_QPT_UD ? __atomic_load_n(fv__ah_av_offset(), __ATOMIC_RELAXED) : 0;
}

/* The producer and the last WQE back into the ring (before the general path, and at the end). */
static FV__ALWAYS_INLINE void fv__ps_store(const struct fv__ps *ps, struct fv_qp *qp)
{
	qp->sq.pi = ps->pi;
	qp->sq.last_pi = ps->last_pi;
	fv__sq_check(&qp->sq);
}

/*
 * The AV of a UD WR's address handle by the learned offset (fv__qp_av gives the same), or
 * NULL: no handle; the general path decides then. The fast path runs on a UD QP only once
 * the offset is known (compat/post_send.h): the general path learns it from the first WR.
 */
static FV__ALWAYS_INLINE const struct mlx5_wqe_av *fv__ps_av(const struct fv__ps *ps, const struct ibv_ah *ah)
{
	if (!ah)
		return NULL;
	return (const struct mlx5_wqe_av *)(const void *)((const char *)ah + ps->ah_off);
}

/*
 * An inline segment of len bytes (1 to 44, a length known only now) at p: the bytes
 * fv__wqe_inline stores, padding left as it is. 8-byte pieces from the front while more
 * than 8 bytes follow them, then one ending at len (it may overlap the one before), or two
 * overlapping 4- or 2-byte ones: no loop, and nothing read or written past len.
 */
static FV__ALWAYS_INLINE void fv__ps_inline(uint8_t *p, const void *src, uint32_t len)
{
	const uint8_t *s = (const uint8_t *)src;
	uint8_t *d = p + 4;

	((struct fv__inl4 *)p)->v = htobe32(len | MLX5_INLINE_SEG);
	if (len >= 8) {
		fv__inl_copy8(d, s);
		if (len > 16) {
			fv__inl_copy8(d + 8, s + 8);
			if (len > 24) {
				fv__inl_copy8(d + 16, s + 16);
				if (len > 32) {
					fv__inl_copy8(d + 24, s + 24);
					if (len > 40)
						fv__inl_copy8(d + 32, s + 32);
				}
			}
		}
		fv__inl_copy8(d + len - 8, s + len - 8);
	} else if (len >= 4) {
		fv__inl_copy4(d, s);
		fv__inl_copy4(d + len - 4, s + len - 4);
	} else {
		if (len >= 2)
			fv__inl_copy2(d + len - 2, s + len - 2);
		d[0] = s[0];	/* a character store: no other type holds a single byte */
	}
}

/* Blocks of a fast-path WQE: one SGE (UD: two blocks), or inline data in the first block. */
static FV__ALWAYS_INLINE unsigned fv__ps_nbb(const unsigned hdr, const bool inl)
{
	return inl ? 1 : fv__ds_to_bb(hdr + 1);
}

/*
 * Whether the fast path builds a WR of segments segs on a QP of type qpt whose one SGE is
 * s (inline if inl): asked before the WR's other fields are read, so that they are read
 * right where they are stored (fv__ps_build). Not for: an inline payload that is empty,
 * longer than the first block holds or than max_inline; an empty SGE in a second block or
 * alone after the ctrl; the slow side of lim (room, the unsignaled run, a cached fence:
 * sq.h). The general path decides those.
 */
static FV__ALWAYS_INLINE bool fv__ps_fits(const struct fv__ps *ps, const struct fv_qp *qp, const enum fv_qpt qpt,
					 const unsigned segs, const struct ibv_sge *s, const bool inl)
{
	const unsigned hdr = FV__SEG_HDR_DS(qpt, segs);
	const uint32_t len = s->length;

	if (inl ? hdr >= 4 || len - 1 >= (4 - hdr) * FV__DS - 4 || len > qp->max_inline
		: !len && (hdr == 1 || hdr + 1 > 4))
		return false;
	return fv__sq_before_lim(qp->sq.lim, ps->pi, fv__ps_nbb(hdr, inl));
}

/*
 * Build r, which fv__ps_fits took from wr (one SGE; with inl, the SGE's bytes inline), on a
 * QP of type qpt at ps's producer, which then moves past it: the same bytes as
 * fv__build_fast_at (an empty SGE's unit is written too, past ds, inside the block).
 * Returns 0. What the WQE needs of wr beyond r (UD's Q_Key and QP, the completion flag) is
 * read from wr again where it is stored: held in r, gcc kept it in a register, or on the
 * stack, from the first store to the last.
 */
static FV__ALWAYS_INLINE int fv__ps_build(struct fv__ps *ps, struct fv_qp *qp, const enum fv_qpt qpt,
					 const struct fv__req *r, const struct ibv_send_wr *wr, const bool inl)
{
	struct fv__sq *sq = &qp->sq;
	const unsigned hdr = fv__req_hdr_ds(qpt, r);
	const unsigned nbb = fv__ps_nbb(hdr, inl);
	const struct ibv_sge *s = r->sgl;
	struct fv__image u[FV__HDR_UNITS];
	uint32_t pi = ps->pi, len = s->length;
	unsigned n, ds = inl ? hdr + fv__inline_ds(len) : hdr + (len != 0);

	/*
	 * UD: pi hidden from gcc's induction-variable pass, which otherwise keeps pi + 2, 8 * pi
	 * and lim - pi in registers of their own across the caller's loop, and UD's values
	 * (the AV, Q_Key, QP) wait on the stack. clang's code is one instruction shorter without.
	 */
	if (FV__UD_PI_HIDDEN && qpt == FV_QPT_UD)
		FV__HIDE(pi);

	uint8_t *p = fv__sq_wqe(sq, pi);

	/*
	 * Each unit stored as soon as it is computed, in the WQE's order: its reads (of the WR,
	 * the AV) may not move before a store the compiler cannot tell from them, so values
	 * read first would wait in registers, or on the stack, until the last store. No
	 * sq_sig_all WQE comes here (its QP's lim stays at pi, sq.h): fm_ce_se is the WR's alone.
	 */
	FV__ASSERT(!sq->sig_all);
	fv__sq_wr_id_of(sq, pi)->v = r->wr_id;
	p = fv__ctrl_put_w(p, pi, r->opcode, sq->qpn_be | htobe32(ds), fv__2x32(fv__sq_fm_be(r->flags), r->imm));
	/*
	 * UD: the AV's three units as they are, one 16-byte load and store each (FV__VEC), the
	 * WR's Q_Key and destination QP over the first (fv__av_head_put).
	 */
	if (qpt == FV_QPT_UD) {
		fv__av_head_put(p, r->av, wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey);
		for (unsigned i = 1; i < 3; i++)
			fv__unit_put(p + i * FV__DS, fv__av_unit(r->av, i), FV__VEC);
		p += 3 * FV__DS;
		/*
		 * Read again after the units, as memory operands, what the second block needs
		 * (the SGE, the ring's start): kept from before, gcc held them on the stack.
		 */
		FV__RELOAD();
	} else {
		n = fv__req_hdr_images(qpt, r, u);
FV__UNROLL(3)	/* n is a constant */
		for (unsigned i = 0; i < n; i++, p += FV__DS)
			fv__unit_put(p, u[i], 0);
	}
	if (hdr == 4)	/* the first block ends: the ring may too */
		fv__ring_wrap(&sq->ring, &p);
	if (inl)
		fv__ps_inline(p, (const void *)(uintptr_t)s->addr, len);
	else
		fv__unit_put(p, fv__req_data_image(r, s, 0), 0);
	if (wr->send_flags & IBV_SEND_SIGNALED) {	/* r->flags' FV_SIGNALED */
		sq->sig_pi = pi + nbb;
		fv__sq_mark_end(sq, pi, nbb);
	}
	ps->last_pi = pi;
	ps->pi = pi + nbb;
	return 0;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_COMPAT_POST_SEND_RING_H */
