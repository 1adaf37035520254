/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One request -> one send WQE. The typed builders (ops.h) go through fv__build(), fv_post_send
 * through fv__build_wqe(); the typed builders pass compile-time QP type, opcode, segments and
 * payload form, so the tests below and every ds computation fold away.
 *
 * Segment order (docs/formats.md §3.7):
 *   RC/UC      ctrl [raddr [atomic]] payload
 *   UD         ctrl av(48)           payload
 *   XRC_SEND   ctrl xrc [raddr [atomic]] payload
 *   DCI        ctrl av(48)           [raddr [atomic]] payload   (dc.h)
 *   UMR        ctrl umr_ctrl(48) mkey(64) [klm(64)] payload    (RC, UC, XRC_SEND: wqe.h)
 *   RAW_PACKET ctrl eth(32, or more with a TSO header) payload   (eth.h: its own builder)
 */
#ifndef FASTVERBS_BUILD_H
#define FASTVERBS_BUILD_H

#include "qp.h"
#include "eth.h"
#include "dc.h"

FV__EXTERN_C_BEGIN

/* Units of the transport segment (UD address vector, XRC SRQ number) a message carries. */
static FV__ALWAYS_INLINE unsigned fv__transport_ds(enum fv_qpt qpt)
{
	return qpt == FV_QPT_UD || qpt == FV_QPT_DCI ? 3 : qpt == FV_QPT_XRC ? 1 : 0;
}

/*
 * 16-byte units before the payload of an operation of segments segs (FV__SEG_*, not a UMR) on
 * a QP of type qpt: the ctrl, the transport's, the remote address's, the atomic's. From segs
 * alone, so that fv_post_send's fast path can ask before it makes a request (post_send_ring.h).
 * A macro: as a function of its own, called by fv__req_hdr_ds too, it moved clang's code in the
 * fv_wr_* loops and the FV_NO_TUNE build's (docs/performance.md §1.5).
 */
#define FV__SEG_HDR_DS(qpt, segs) \
	(1 + fv__transport_ds(qpt) + !!((segs) & FV__SEG_RADDR) + !!((segs) & FV__SEG_ATOMIC))

/* 16-byte units before the payload. A NOP (no payload at all) is the control segment alone. */
static FV__ALWAYS_INLINE unsigned fv__req_hdr_ds(enum fv_qpt qpt, const struct fv__req *r)
{
	if (r->segs & FV__SEG_UMR)
		return 1 + FV__UMR_CTRL_UNITS + FV__UMR_MKEY_UNITS +
		       (r->bind && r->bind->length ? (unsigned)FV__UMR_KLM_UNITS : 0u);
	if (r->payload == FV__PL_NONE)
		return 1;
	return FV__SEG_HDR_DS(qpt, r->segs);
}

/* Payload units: one per non-empty SGE (empty ones are skipped, as libmlx5 does). */
static FV__ALWAYS_INLINE unsigned fv__req_payload_ds(const struct fv__req *r)
{
	unsigned n = 0;

	if (r->payload == FV__PL_SGL) {
		for (int i = 0; i < r->nsge; i++)
			n += r->sgl[i].length != 0;
		return n;
	}
	if (r->payload == FV__PL_INLINE || r->payload == FV__PL_INLINE_BUFS)
		return r->len ? fv__inline_ds(r->len) : 0;
	return 0;
}

/* Units between the ctrl and the payload at most (DCI: AV, remote address, atomic). */
#define FV__HDR_UNITS 5

/*
 * How many units lie between a request's ctrl and its payload (docs/formats.md §3.7): a
 * constant for a typed builder.
 */
static FV__ALWAYS_INLINE unsigned fv__req_hdr_count(enum fv_qpt qpt, const struct fv__req *r)
{
	if (r->payload == FV__PL_NONE)
		return 0;
	if (qpt == FV_QPT_UD)	/* no remote address or atomic on UD (ops.def) */
		return 3;
	return fv__transport_ds(qpt) + !!(r->segs & FV__SEG_RADDR) + !!(r->segs & FV__SEG_ATOMIC);
}

/*
 * The image of unit i (below fv__req_hdr_count) of those, in their order: the fast path's
 * form, one unit at a time (i and the QP type are constants there).
 */
static FV__ALWAYS_INLINE struct fv__image fv__req_hdr_image(enum fv_qpt qpt, const struct fv__req *r, unsigned i)
{
	if (qpt == FV_QPT_UD && r->av_word && i == 0)
		return fv__av_head_image(r->qkey, r->av_w);
	if (qpt == FV_QPT_UD)
		return r->av_fv ? fv__ah_av_image(r->av, r->remote_qpn, r->qkey, i) :
				  fv__av_image(r->av, r->remote_qpn, r->qkey, i);
	if (qpt == FV_QPT_XRC && i-- == 0)
		return fv__xrc_image(r->srqn);
	if (qpt == FV_QPT_DCI && i < 3)
		return fv__dc_av_image(r, i);
	if (qpt == FV_QPT_DCI)
		i -= 3;
	if ((r->segs & FV__SEG_RADDR) && i-- == 0)
		return fv__raddr_image(r->raddr, r->rkey);
	return fv__atomic_image(r->swap_add, r->compare);
}

/*
 * The images of the units between a request's ctrl and its payload, in their order, into u;
 * returns how many. The general path's form: with a QP type known only at run time
 * (fv_post_send), one pass over the request's segments.
 */
static FV__ALWAYS_INLINE unsigned fv__req_hdr_images(enum fv_qpt qpt, const struct fv__req *r,
						   struct fv__image u[FV__HDR_UNITS])
{
	unsigned n = 0;

	if (r->payload == FV__PL_NONE)
		return 0;
	if (qpt == FV_QPT_UD) {	/* no remote address or atomic on UD (ops.def) */
		fv__av_images(u, r->av, r->remote_qpn, r->qkey);
		return 3;
	}
	if (qpt == FV_QPT_XRC)
		u[n++] = fv__xrc_image(r->srqn);
	for (unsigned i = 0; qpt == FV_QPT_DCI && i < 3; i++)
		u[n++] = fv__dc_av_image(r, i);
	if (r->segs & FV__SEG_RADDR)
		u[n++] = fv__raddr_image(r->raddr, r->rkey);
	if (r->segs & FV__SEG_ATOMIC)
		u[n++] = fv__atomic_image(r->swap_add, r->compare);
	return n;
}

/*
 * The data segment image of the request's SGE s; an atomic's result is 8 bytes (ibv_post_send
 * writes 8 whatever the SGE says; ibv_wr_set_sge writes the SGE's length: sge_len).
 */
static FV__ALWAYS_INLINE struct fv__image fv__req_data_image(const struct fv__req *r, const struct ibv_sge *s,
							  unsigned how)
{
	return r->segs & FV__SEG_ATOMIC && !r->sge_len ? fv__data_image(8, s->lkey, s->addr) : fv__sge_image(s, how);
}

/*
 * A memory window's UMR segments (wqe.h) from p, after the ctrl; returns where the payload
 * would go. Always FV__WRAP: the WQE spans blocks.
 */
static inline uint8_t *fv__wqe_umr(const struct fv_ring *ring, const struct fv__req *r, uint32_t qpn,
				  uint8_t *p)
{
	struct fv__image u[FV__UMR_CTRL_UNITS];
	const uint64_t len = r->bind ? r->bind->length : 0;

	fv__umr_ctrl_images(u, r->mw_type, len);
	for (unsigned i = 0; i < FV__UMR_CTRL_UNITS; i++)
		p = fv__unit_write(ring, p, u[i], FV__WRAP);
	p = fv__wqe_mkey(ring, p, r->mw_type, r->new_rkey, qpn, r->bind, FV__WRAP);
	if (len)
		p = fv__wqe_klm(ring, p, r->bind, FV__WRAP);
	return p;
}

/* The WQE's segments after its ctrl, from p on; how as in wqe.h. Empty SGEs are skipped. */
static FV__ALWAYS_INLINE void fv__wqe_body(const struct fv_ring *ring, enum fv_qpt qpt,
					 const struct fv__req *r, uint8_t *p, unsigned how, uint32_t qpn)
{
	struct fv__image u[FV__HDR_UNITS];
	unsigned n = 0;

	if (r->segs & FV__SEG_UMR)	/* in place of the transport and remote segments */
		p = fv__wqe_umr(ring, r, qpn, p);
	else
		n = fv__req_hdr_images(qpt, r, u);
FV__UNROLL(5)	/* n is a constant for a typed builder: the units stay in registers */
	for (unsigned i = 0; i < n; i++)
		p = fv__unit_write(ring, p, u[i], how);
	if (r->payload == FV__PL_SGL && FV__CONST_P(r->nsge) && r->nsge == 1) {
		/* no loop: gcc may not see that a loop of one pass ends, and a loop it cannot
		 * bound inside a caller's loop stops it from moving stores out of that loop */
		if (r->sgl->length)
			fv__unit_write(ring, p, fv__req_data_image(r, r->sgl, how), how);
	} else if (r->payload == FV__PL_SGL) {
		for (int i = 0; i < r->nsge; i++)
			if (r->sgl[i].length)
				p = fv__unit_write(ring, p, fv__req_data_image(r, &r->sgl[i], how), how);
	} else if (r->payload == FV__PL_INLINE && r->len) {
		fv__wqe_inline(ring, p, r->sgl, r->nsge, r->len, how);
	} else if (r->payload == FV__PL_INLINE_BUFS && r->len) {
		fv__wqe_inline_bufs(ring, p, r->bufs, r->nsge, r->len, how);
	}
}

/*
 * Build the request's WQE at the producer counter pi; the producer stays (fv__sq_advance).
 * Checks what can vary at run time: SGE count, inline length and ring space. Returns the
 * WQE's blocks, or -ENOMEM (libmlx5's errno for all three), or -EOPNOTSUPP for a window
 * bind longer than 2 GiB (libmlx5's), with nothing written.
 */
static FV__ALWAYS_INLINE int fv__build_wqe_at(struct fv_qp *qp, enum fv_qpt qpt, const struct fv__req *r,
					    uint32_t pi)
{
	struct fv__sq *sq = &qp->sq;
	unsigned hdr = fv__req_hdr_ds(qpt, r), ds, nbb, max_ds = FV__MAX_DS;
	__be32 fm;

	if (qpt == FV_QPT_RAW)
		return fv__build_eth_at(qp, r, pi);
	/* the window's length first: libmlx5 refuses a long bind before it looks at the payload */
	if ((r->segs & FV__SEG_UMR) && r->bind && r->bind->length > FV__UMR_KLM_MAX)
		return -EOPNOTSUPP;	/* libmlx5's errno: one KLM covers 2 GiB */
	if (r->payload == FV__PL_SGL) {
		if (r->nsge != 1 && (unsigned)r->nsge > qp->max_send_sge)	/* also nsge < 0 */
			return -ENOMEM;
		max_ds = hdr + (unsigned)r->nsge;
	} else if (r->payload == FV__PL_INLINE || r->payload == FV__PL_INLINE_BUFS) {
		if (r->len > qp->max_inline)
			return -ENOMEM;
	} else {
		max_ds = hdr;
	}
	ds = hdr + fv__req_payload_ds(r);
	nbb = fv__ds_to_bb(ds);
	if (!fv__sq_take_at(sq, pi, r->flags, nbb, &fm))
		return -ENOMEM;

	uint8_t *wqe = fv__sq_wqe(sq, pi);

	/* A WQE that fits its first block never meets the ring end. */
	fv__wqe_body(&sq->ring, qpt, r, wqe + FV__DS,
		    (max_ds > 4 && ds > 4 ? FV__WRAP : 0) | (r->from_wr ? 0 : FV__VEC), qp->qpn);
	fv__wqe_ctrl(wqe, pi, 0, r->opcode, sq->qpn_be, ds, fm, r->imm);
	fv__sq_record(sq, pi, r->wr_id, r->flags, nbb);
	if (ds == 1)
		fv__sq_no_bf(sq);
	return (int)nbb;
}

/*
 * The producer moves past the WQE built at pi. After a memory window's UMR WQE the next WQE
 * owes it an initiator fence, as in libmlx5 (cached only now: the cache sets lim to pi).
 */
static FV__ALWAYS_INLINE void fv__build_advance(struct fv_qp *qp, const struct fv__req *r, uint32_t pi,
					      unsigned nbb)
{
	fv__sq_advance(&qp->sq, pi, nbb);
	if (r->segs & FV__SEG_UMR)
		fv__sq_cache_fence(&qp->sq, MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE);
}

/* fv__build_wqe_at at the producer, which then moves past the WQE. Returns 0 or an errno. */
static FV__ALWAYS_INLINE int fv__build_wqe(struct fv_qp *qp, enum fv_qpt qpt, const struct fv__req *r)
{
	uint32_t pi = qp->sq.pi;
	int nbb = fv__build_wqe_at(qp, qpt, r, pi);

	if (nbb < 0)
		return -nbb;
	fv__build_advance(qp, r, pi, (unsigned)nbb);
	return 0;
}

/* Units after the ctrl the fast path stores at most: a DCI atomic's AV, raddr, atomic, data. */
#define FV__FAST_UNITS 6

/*
 * Unit i after the ctrl of a request whose payload is its one SGE or none: the units before
 * the payload (fv__req_hdr_image), then the SGE's data segment.
 */
static FV__ALWAYS_INLINE struct fv__image fv__req_unit(enum fv_qpt qpt, const struct fv__req *r, unsigned how,
						    unsigned i)
{
	return i < fv__req_hdr_count(qpt, r) ? fv__req_hdr_image(qpt, r, i) : fv__req_data_image(r, r->sgl, how);
}

/*
 * The ds of the request's WQE when the fast path below builds it (a constant then), else 0:
 * one SGE, no payload, or an inline payload of a length the compiler knows that fits the
 * first block (not from a WR list); no UMR.
 */
static FV__ALWAYS_INLINE unsigned fv__fast_ds(enum fv_qpt qpt, const struct fv__req *r)
{
	if (r->segs & FV__SEG_UMR)
		return 0;
	if (r->payload == FV__PL_NONE)
		return 1;	/* the ctrl alone */

	/* the units before the payload from the segments, not fv__req_hdr_ds: not inlined, a call a WR */
	const unsigned hdr = FV__SEG_HDR_DS(qpt, r->segs);

	if (r->payload == FV__PL_SGL)
		return r->nsge == 1 ? hdr + 1 : 0;
	if (r->payload == FV__PL_INLINE)
		return r->nsge == 1 && FV__CONST_P(r->len) && r->len &&
		       hdr + fv__inline_ds(r->len) <= 4 ? hdr + fv__inline_ds(r->len) : 0;
	return 0;
}

/*
 * Whether the fast path takes a typed UD builder's empty SGE that would start a second block
 * (below). gcc then keeps the general path out of a caller's loop; clang spills the sizes it
 * computes per WR and does better leaving that WQE to the general path (FV__FAST_EMPTY_2ND,
 * tune.h).
 */

/*
 * The typed builders read the producer with a relaxed atomic load under clang: one it cannot
 * carry from the last WR's store. Carried, it becomes an induction variable of a caller's
 * loop, which clang then keeps in three or four registers (pi, pi * 8, pi + 1, the loop's own
 * count) and spills the rest; read, it is one load (FV__READ_PI, tune.h). FV__EMPTY_COLD: see
 * fv__build_fast_at.
 */

/*
 * Under gcc, a typed builder whose flags are decided per WR builds a WR that has no flags and
 * no immediate (what an application leaves unsignaled) in a copy of its code in which they
 * are the constant 0 (fv__build): the caller's loop then branches on its own test of the
 * signal, once, and computes no flags word for those WRs; past lim the copy hands the WR to
 * fv__build_wqe_at, as constant flags do. Not for UD or inline payloads, which measured
 * slower with it, nor for a memory window's UMR WQE, nor under clang, which resolves
 * __builtin_constant_p only after optimising and so carries both copies' code through it.
 * The switch: FV__SPLIT_UNSIG (tune.h).
 */

/* A typed builder's request: not fv_post_send's (from_wr), not fv_wr_*'s (sge_len). */
static FV__ALWAYS_INLINE bool fv__req_typed(const struct fv__req *r)
{
	return !r->from_wr && !r->sge_len;
}

/* An empty SGE in the WQE's first block (empty): the ctrl c's ds one less (its byte is the word's last). */
static FV__ALWAYS_INLINE void fv__ctrl_drop_empty(struct fv__image *c, bool empty)
{
	c->a -= (uint64_t)empty * fv__2x32(0, htobe32(1));
}

/*
 * The same for the SGE's length len, with no compare: an empty SGE's len - 1 in 64 bits has
 * its top bit set. gcc moves no compare out of a caller's loop (its flags are a hard
 * register), so for an SGE whose length stays the ds is dropped once, before the loop, not in
 * every WR (FV__EMPTY_ARITH, tune.h; docs/performance.md §1.2).
 */
static FV__ALWAYS_INLINE void fv__ctrl_drop_len(struct fv__image *c, uint32_t len)
{
	c->a -= (((uint64_t)len - 1) >> 63) * fv__2x32(0, htobe32(1));
}

/*
 * How a fast-path WQE is laid out and stored: the plan of fv__build_fast_at, from the
 * request's shape (constants for the typed builders). What it follows from (ds, sge1) and the
 * way a WQE takes past lim (shared, empty_cold) stay named values there: gcc threads its
 * tests through values, not through a struct's fields in memory (docs/performance.md §1.5).
 */
struct fv__fast_plan {
	unsigned nbb1;		/* the WQE's 64-byte blocks */
	bool inl1;		/* the payload is a short inline copy, in the first block */
	unsigned how;		/* store mode of the units: FV__VEC but for fv_post_send's WRs */
	bool typed;		/* a typed builder's request (fv__req_typed) */
	unsigned n;		/* units stored after the ctrl, inline data aside */
	unsigned put_how;	/* how, and FV__CTRL_A for a typed builder's ctrl */
	bool words0;		/* the first unit stored as two words (UD: see fv__fast_put) */
};

/*
 * The stores of a fast-path WQE (below) at wqe, its ctrl's image c: the ctrl, its n units
 * after it (skip_last: not the last), an inline payload. words0: the first unit as two
 * words, not one vector (a UD WQE's first: its Q_Key word is the same WR after WR, its QPN
 * word new in each; joined in a vector they cost a register shuffle more).
 */
static FV__ALWAYS_INLINE void fv__fast_put(struct fv__sq *sq, const struct fv__req *r, uint8_t *wqe, uint32_t pi,
					 struct fv__image c, const struct fv__image u[FV__FAST_UNITS], unsigned n, bool inl1,
					 bool skip_last, bool words0, unsigned how)
{
	/* Flags decided per WR: the ctrl's two words stored as they are, not joined in a vector first. */
	uint8_t *p = fv__ctrl_put(wqe, pi, c, FV__CONST_P(r->flags) ? how & ~FV__CTRL_A :
					      how & FV__VEC ? how & FV__CTRL_A : 0);

FV__UNROLL(6)	/* n is a constant (FV__FAST_UNITS at most): the units stay in registers */
	for (unsigned i = 0; i < n; i++) {
		if (!(i == n - 1 && skip_last))	/* not an empty SGE that would start a second block */
			fv__unit_put(p, u[i], i == 0 && words0 ? how & ~(unsigned)FV__VEC : how);
		p += FV__DS;
		if ((i + 2) % 4 == 0)	/* a block ends: the ring may too */
			fv__ring_wrap(&sq->ring, &p);
	}
	/* 16 bytes a vector for a typed builder's only: fv_wr_*'s loops grew with it (FV__INL_VEC16) */
	if (inl1)
		fv__wqe_inline_small(p, (const void *)(uintptr_t)r->sgl->addr, r->len, FV__INL_VEC16 && fv__req_typed(r));
}

/* A WQE that asks for a completion: the last signaled WQE's end, its slot's mark (sq.h). */
static FV__ALWAYS_INLINE void fv__fast_signaled(struct fv__sq *sq, uint32_t pi, unsigned nbb)
{
	sq->sig_pi = pi + nbb;
	fv__sq_mark_end(sq, pi, nbb);
}

/* After a WQE's stores: a NOP never goes by BlueFlame; the wr_id into its slot. Its blocks. */
static FV__ALWAYS_INLINE int fv__fast_done(struct fv__sq *sq, struct fv__wr_id *wr_ids, uint32_t mask8,
					 uint32_t pi, unsigned ds, uint64_t wr_id, unsigned nbb)
{
	if (ds == 1)
		fv__sq_no_bf(sq);
	fv__sq_wr_id_at(wr_ids, mask8, pi)->v = wr_id;
	return (int)nbb;
}

/*
 * The fast path of the builders: a WQE of constant size (one SGE, no payload, or an inline
 * payload of a length the compiler knows that fits the first block) is one straight run of
 * stores, its size folded into them. In steps: the plan (what the request's shape decides),
 * the units and the ctrl, the test that leaves the WQE to the general path, the bookkeeping
 * (fv__fast_signaled, or the slow take past lim), the stores (fv__fast_put) and the wr_id
 * (fv__fast_done). Its units and ctrl are computed before the test of lim (sq.h): in a
 * caller's loop the compiler computes what does not change once, before the loop. An empty
 * SGE that ends the first block needs no test either: its data segment is written past ds,
 * inside the block, where the device does not look. Builds the WQE at pi and returns its
 * blocks; returns 0 (nothing written) when it is not such a one (SGE lists, other inline data,
 * an empty SGE after the ctrl alone, or in a second block but for a typed builder's, which
 * keeps to the first), or past lim but for shared requests: fv__build_wqe_at builds it then,
 * or refuses it; -ENOMEM (nothing written) when the ring is full or an inline payload is
 * longer than max_inline, in that case. The producer stays.
 *
 * The plan's fields are set where each is needed first, in this order, and the slow take
 * stays in line: the plan computed in one place, returned by a function, or the take as a
 * function each changed gcc's or clang's code, up to 34 instructions more in a typed builder;
 * with ds or sge1 in the struct, or nbb1 after sge1, the FV_NO_TUNE build's fv__build_fast_at
 * grew by 68 to 86 instructions (docs/performance.md §1.5).
 */
static FV__ALWAYS_INLINE int fv__build_fast_at(struct fv_qp *qp, enum fv_qpt qpt, const struct fv__req *r,
					     uint32_t pi)
{
	struct fv__sq *sq = &qp->sq;
	/*
	 * The plan (struct fv__fast_plan) and what it follows from:
	 *   ds        the WQE's 16-byte units (0: not a fast-path WQE)
	 *   sge1      the payload is one SGE
	 *   skip_ok   an empty SGE here would start a second block, and may be left out (below)
	 *   shared    flags decided per WR, not from a WR list: built here past lim too (below)
	 *   empty_cold  an empty SGE goes to the cold side with lim's test (below)
	 */
	struct fv__fast_plan p;
	const unsigned ds = fv__fast_ds(qpt, r);

	p.nbb1 = fv__ds_to_bb(ds);
	const bool sge1 = ds && r->payload == FV__PL_SGL;
	p.inl1 = ds && r->payload == FV__PL_INLINE;
	p.how = r->from_wr ? 0 : FV__VEC;
	p.typed = fv__req_typed(r);
	uint8_t *wqe = fv__sq_wqe(sq, pi);
	struct fv__wr_id *wr_ids = sq->wr_id;	/* read up front; the slot's address where it is stored */
	uint32_t lim = sq->lim, mask8 = sq->mask8;
	/*
	 * A typed builder's flags word without sq_sig_all, added past lim only: such a QP never
	 * gets before it (sq.h). The fv_wr_* calls keep it: their loop allocates better with it.
	 */
	__be32 fm = p.typed ? fv__sq_fm_be(r->flags) : fv__sq_fm(sq, r->flags);
	p.n = fv__req_hdr_count(qpt, r) + sge1;
	/* computed before the test of lim: in a caller's loop, what does not change, once */
	const struct fv__image u[FV__FAST_UNITS] = {
		p.n > 0 ? fv__req_unit(qpt, r, p.how, 0) : FV__IMAGE(0, 0),
		p.n > 1 ? fv__req_unit(qpt, r, p.how, 1) : FV__IMAGE(0, 0),
		p.n > 2 ? fv__req_unit(qpt, r, p.how, 2) : FV__IMAGE(0, 0),
		p.n > 3 ? fv__req_unit(qpt, r, p.how, 3) : FV__IMAGE(0, 0),
		p.n > 4 ? fv__req_unit(qpt, r, p.how, 4) : FV__IMAGE(0, 0),
		p.n > 5 ? fv__req_unit(qpt, r, p.how, 5) : FV__IMAGE(0, 0),
	};
	const bool empty = sge1 && !r->sgl->length;
	/*
	 * skip_ok: an empty SGE that would start a second block (UD): a typed builder's WQE keeps
	 * to its first block here, ds and blocks one less and the data segment not stored (in a
	 * caller's loop, the general path then stays out of it, and the test of the length with
	 * it when the SGE is the loop's own). fv_post_send and fv_wr_* (from_wr, sge_len), whose
	 * lengths are new in every WR, leave it to the general path: one test, no sizes per WR.
	 */
	const bool skip_ok = FV__FAST_EMPTY_2ND && qpt == FV_QPT_UD && !r->from_wr && !r->sge_len && ds > 4;
	/* no compare, as fv__ctrl_drop_len: the sizes of a loop's own SGE are then computed once */
	const unsigned skip = !skip_ok ? 0 : FV__EMPTY_ARITH ? (unsigned)(((uint64_t)r->sgl->length - 1) >> 63) : empty;
	const unsigned nbb = p.nbb1 - skip;
	struct fv__image c = fv__ctrl_image(0, r->opcode, sq->qpn_be, ds - skip, fm, r->imm);

	/* the qpn_ds word read whole: gcc then makes the ctrl's first word before a caller's loop
	 * (docs/performance.md §1.3) */
	if (skip_ok && ds == FV__UD_DS1)
		c.a = fv__2x32(htobe32(r->opcode), sq->qpn_ds_ud - htobe32(skip));
	p.put_how = p.how | (p.typed ? FV__CTRL_A : 0);
	p.words0 = qpt == FV_QPT_UD;

	/*
	 * shared: past lim with flags decided per WR (the typed builders in an application's
	 * loop), the WQE is written here too, after fv__sq_take_slow: the ctrl changes with every
	 * WR anyway, and the loop then carries no general builder whose registers it would share.
	 * With constant flags (a ctrl the same every time stays so) and for fv_post_send (its
	 * loop is its own), the general path builds it.
	 */
	const bool shared = !FV__CONST_P(r->flags) && !r->from_wr;

	/* an empty SGE in a second block, or the only unit after the ctrl (ds 2); UMR; no fixed size */
	if (!ds || __builtin_expect((((ds > 4 && !skip_ok) || ds == 2) && empty) || (p.inl1 && r->len > qp->max_inline) ||
				    (!shared && !fv__sq_before_lim(lim, pi, nbb)), 0))
		return shared && p.inl1 ? -ENOMEM : 0;	/* inline too long: fv__build_wqe_at's answer */
	/*
	 * empty_cold: under clang (FV__EMPTY_COLD), a typed builder's empty SGE goes to the cold
	 * side with the test of lim: clang reads an SGE the caller copied as a whole again in
	 * every WR (the copy's loads carry no type), and the ctrl's ds would then cost arithmetic
	 * and a register in every WR, against a test and a branch here.
	 */
	const bool past = !fv__sq_before_lim(lim, pi, nbb), empty_cold = FV__EMPTY_COLD && shared && sge1 && ds <= 4;

	if (sge1 && ds <= 4 && !empty_cold && FV__EMPTY_ARITH && p.typed)
		fv__ctrl_drop_len(&c, r->sgl->length);
	else if (sge1 && ds <= 4 && !empty_cold)
		fv__ctrl_drop_empty(&c, empty);
	if (shared && __builtin_expect(past || (empty_cold && empty), 0)) {
		/* the cold side: past lim (the slow take may force a completion into fm), or empty_cold */
		if (empty_cold)
			fv__ctrl_drop_empty(&c, empty);
		if (past) {
			if (p.typed)
				fm |= sq->sig_all;
			if (!fv__sq_take_slow(sq, pi, nbb, &fm))
				return -ENOMEM;
			if (r->flags & FV_SIGNALED)
				fv__sq_mark_end(sq, pi, nbb);
			c.b = fv__2x32(fm, r->imm);
		} else if (fm & fv__sq_fm_be(FV_SIGNALED)) {
			fv__fast_signaled(sq, pi, nbb);
		}
		if (empty_cold) {	/* stored here: on the hot side the ctrl's first word stays one value */
			fv__fast_put(sq, r, wqe, pi, c, u, p.n, p.inl1, skip, p.words0, p.put_how);
			return fv__fast_done(sq, wr_ids, mask8, pi, ds, r->wr_id, nbb);
		}
	} else if (shared ? fm & fv__sq_fm_be(FV_SIGNALED) : r->flags & FV_SIGNALED) {
		/*
		 * It asks for a completion. Constant flags tell at compile time; flags decided per
		 * WR are tested in fm, which the ctrl takes anyway (one register less in a caller's
		 * loop). sq_sig_all WQEs never come here: fv__sq_take_slow sees to them (sq.h).
		 */
		fv__fast_signaled(sq, pi, nbb);
	}
	fv__fast_put(sq, r, wqe, pi, c, u, p.n, p.inl1, skip, p.words0, p.put_how);
	return fv__fast_done(sq, wr_ids, mask8, pi, ds, r->wr_id, nbb);
}

/* fv__build_fast_at at the producer, which then moves past the WQE. 0 if built, else -1. */
static FV__ALWAYS_INLINE int fv__build_fast(struct fv_qp *qp, enum fv_qpt qpt, const struct fv__req *r)
{
	uint32_t pi = qp->sq.pi;
	int nbb = fv__build_fast_at(qp, qpt, r, pi);

	if (nbb <= 0)
		return -1;
	fv__sq_advance(&qp->sq, pi, (unsigned)nbb);
	return 0;
}

/*
 * One request, built: the fast path, else fv__build_wqe_at, both from one copy of a single
 * SGE read field by field up front (what a caller's loop posts again and again is then read
 * once, before the loop), and the producer moved in one place for both. The typed builders
 * (fv__build) and the fv_wr_* payload setters come here.
 */
static FV__ALWAYS_INLINE int fv__build_any(struct fv_qp *qp, enum fv_qpt qpt, const struct fv__req *r)
{
	struct fv__req one = *r;
	struct ibv_sge s = { 0, 0, 0 };
	uint32_t pi = FV__READ_PI(&qp->sq);
	int nbb;

	if (qpt == FV_QPT_RAW) {	/* eth.h: its own fast path */
		nbb = fv__build_eth_at(qp, r, pi);
		if (nbb < 0)
			return -nbb;
		fv__sq_advance(&qp->sq, pi, (unsigned)nbb);
		return 0;
	}
	if (r->payload == FV__PL_SGL && r->nsge == 1) {
#if FV__SGE_WORD
		uint64_t w;

		memcpy(&w, &r->sgl->length, sizeof(w));
		s.addr = r->sgl->addr, s.length = fv__sge_word_len(w), s.lkey = fv__sge_word_lkey(w);
#else
		s.addr = r->sgl->addr, s.length = r->sgl->length, s.lkey = r->sgl->lkey;
#endif
		one.sgl = &s;
	}
	if (FV__SPLIT_UNSIG && !FV__CONST_P(r->flags) && fv__req_typed(r) && qpt != FV_QPT_UD &&
	    r->payload != FV__PL_INLINE && !(r->segs & FV__SEG_UMR) && __builtin_expect(!r->flags && !r->imm, 1)) {
		one.flags = 0, one.imm = 0;	/* constants in this copy of the call (FV__SPLIT_UNSIG) */
		nbb = fv__build_fast_at(qp, qpt, &one, pi);
	} else {
		nbb = fv__build_fast_at(qp, qpt, &one, pi);
	}
	if (!nbb)
		nbb = fv__build_wqe_at(qp, qpt, &one, pi);
	if (nbb < 0)
		return -nbb;
	fv__build_advance(qp, r, pi, (unsigned)nbb);
	return 0;
}

/*
 * The typed builders' entry (ops.h). Inside an fv_wr_* batch a WQE built here would be rung
 * with the batch, or left in a ring the batch's rollback rewinds: -DFV_DEBUG stops there.
 */
static FV__ALWAYS_INLINE int fv__build(struct fv_qp *qp, enum fv_qpt qpt, const struct fv__req *r)
{
	FV__ASSERT_MSG(!qp->wr_open, "typed builder on a QP with an open fv_wr_* batch "
		      "(fv_wr_start without fv_wr_complete or fv_wr_abort)");
	return fv__build_any(qp, qpt, r);
}

FV__EXTERN_C_END

#endif /* FASTVERBS_BUILD_H */
