/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fv_wr_set_sge and fv_wr_set_inline_data on a raw Ethernet QP (compat/wr_batch.h): the WQE
 * of one SGE or one piece of inline data built without a call, a memset or a character store,
 * in whatever case (eth.h's fast cases call memcpy for a TSO header, and its general build is
 * out of line).
 *
 * Why: fv_wr_set_sge on a struct fv_qp * switches on the QP type in the caller's loop, and
 * one call on any of its arms, even one the loop never takes, makes the compiler read every
 * ring field again for every WR of every QP type and keep less in registers (RC RDMA_WRITE,
 * 32 per batch: 80 -> 118 instructions per WR). The bytes are eth.h's: the same checks in
 * the same order (fv__eth_check), the Ethernet segment's 32 bytes (zeros, then its fields and
 * the inline header), the header run on past the ring end, then the data segment (or the
 * inline segment, its bytes run on past the ring end as eth.h's are).
 */
#ifndef FASTVERBS_COMPAT_WR_RAW_H
#define FASTVERBS_COMPAT_WR_RAW_H

#include "../build.h"

FV__EXTERN_C_BEGIN

/*
 * len bytes (1 or more) from s to d, all of them before the ring end, through the inline
 * types of wqe.h: 8-byte pieces, the last one ending at len (it may overlap the one before),
 * or two overlapping 4- or 2-byte ones. A single byte is written as the 16-bit word it
 * shares with its neighbour inside the ring, the neighbour read and stored unchanged.
 */
static FV__ALWAYS_INLINE void fv__raw_copy(const struct fv_ring *ring, uint8_t *d, const uint8_t *s, uint32_t len)
{
	if (len >= 8) {
		for (uint32_t i = 0; i + 8 < len; i += 8)
			fv__inl_copy8(d + i, s + i);
		fv__inl_copy8(d + len - 8, s + len - 8);
	} else if (len >= 4) {	/* both read before either store, which may alias s */
		uint32_t a, b;

		memcpy(&a, s, 4);
		memcpy(&b, s + len - 4, 4);
		((struct fv__inl4 *)d)->v = a;
		((struct fv__inl4 *)(d + len - 4))->v = b;
	} else if (len >= 2) {
		uint16_t a, b;

		memcpy(&a, s, 2);
		memcpy(&b, s + len - 2, 2);
		((struct fv__inl2 *)d)->v = a;
		((struct fv__inl2 *)(d + len - 2))->v = b;
	} else {
		uint8_t *w = d + 1 < ring->end ? d : d - 1;	/* the word of d and a neighbour */
		uint8_t b[2];
		uint16_t v;

		memcpy(b, w, 2);
		b[d - w] = s[0];
		memcpy(&v, b, 2);
		((struct fv__inl2 *)w)->v = v;
	}
}

/* fv__raw_copy of len bytes (0 or more) that may run past the ring end and go on at block 0. */
static FV__ALWAYS_INLINE void fv__raw_ring_copy(const struct fv_ring *ring, uint8_t *d, const uint8_t *s, uint32_t len)
{
	uint32_t room = (uint32_t)(ring->end - d);

	if (len > room) {
		fv__raw_copy(ring, d, s, room);
		s += room, len -= room, d = ring->buf;
	}
	if (len)
		fv__raw_copy(ring, d, s, len);
}

/*
 * Build the raw send r (payload: one SGE, or one piece of inline data) at the producer, which
 * then moves past it. 0, or the errno eth.h's build gives (EINVAL, ENOMEM) with nothing
 * written.
 */
static FV__ALWAYS_INLINE int fv__raw_build_one(struct fv_qp *qp, const struct fv__req *r)
{
	struct fv__sq *sq = &qp->sq;
	const struct fv_qp *caps = qp;
	const struct ibv_sge *s = r->sgl;
	const bool tso = (r->segs & FV__SEG_TSO) != 0;
	const bool inl = r->payload == FV__PL_INLINE;

	/*
	 * The QP's raw caps read through a pointer the compiler cannot follow: else it reads
	 * them before a caller's loop, for every QP type, and keeps them in registers the other
	 * QP types' arms then lack.
	 */
	FV__HIDE(caps);

	const uint8_t *h = tso ? (const uint8_t *)r->hdr : (const uint8_t *)(uintptr_t)s->addr;
	const uint32_t hsz = tso ? r->hdr_sz : caps->eth_inline;	/* inline header bytes */
	uint32_t pi = sq->pi;
	struct fv__eth_at at;
	unsigned pl_ds, ds, nbb;
	__be32 fm;
	int err;

	if (!inl && !caps->max_send_sge)
		return ENOMEM;
	err = fv__eth_check(caps, r, &at, &pl_ds);
	if (err)
		return err;
	ds = 1 + fv__eth_ds(caps, r) + pl_ds;
	if (ds > FV__MAX_DS)
		return ENOMEM;
	nbb = fv__ds_to_bb(ds);
	if (!fv__sq_take(sq, r->flags, nbb, &fm))
		return ENOMEM;

	uint8_t *wqe = fv__sq_wqe(sq, pi), *eseg = wqe + FV__DS, *p;
	uint8_t h2[2] = { 0, 0 }, b[16] = { 0 };	/* the header's first 2 bytes, its next 16 */
	uint8_t cs = r->flags & FV_IP_CSUM ? MLX5_ETH_WQE_L3_CSUM | MLX5_ETH_WQE_L4_CSUM : 0;
	struct fv__image u1;

	if (hsz) {	/* fv__eth_check: at least 14 bytes (TSO), or the payload holds them */
		memcpy(h2, h, 2);
		if (hsz >= 18)
			memcpy(b, h + 2, 16);
		else	/* a TSO header of 14 to 17 bytes */
			for (uint32_t i = 0; i + 2 < hsz; i++)
				b[i] = h[i + 2];
	}
	memcpy(&u1, b, sizeof(u1));
	fv__unit_put(eseg, fv__eth_unit0(cs, tso ? r->mss : 0, (uint16_t)hsz, h2), 0);
	fv__unit_put(eseg + FV__DS, u1, 0);	/* the segment's 32 bytes, as libmlx5 clears them */
	if (hsz > 18)	/* the rest of a TSO header, from 16 bytes before the block's end */
		fv__raw_ring_copy(&sq->ring, eseg + 2 * FV__DS, h + 18, hsz - 18);
	p = tso ? fv__ring_add(&sq->ring, eseg, (size_t)fv__eth_ds(caps, r) * FV__DS, FV__WRAP)
		: eseg + (size_t)fv__eth_ds(caps, r) * FV__DS;
	if (pl_ds) {	/* the piece after the header it gave (at.index 0 here) */
		if (p == sq->ring.end)
			p = sq->ring.buf;
		if (inl) {	/* its byte count, then its bytes, which may go on at block 0 */
			const uint32_t rest = s->length - at.offset;

			((struct fv__inl4 *)p)->v = htobe32(rest | MLX5_INLINE_SEG);
			fv__raw_ring_copy(&sq->ring, p + 4, (const uint8_t *)(uintptr_t)s->addr + at.offset, rest);
		} else {
			fv__unit_put(p, fv__data_image(s->length - at.offset, s->lkey, s->addr + at.offset), 0);
		}
	}
	fv__wqe_ctrl(wqe, pi, 0, r->opcode, sq->qpn_be, ds, fm, 0);
	fv__sq_record(sq, pi, r->wr_id, r->flags, nbb);
	fv__sq_advance(sq, pi, nbb);
	return 0;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_COMPAT_WR_RAW_H */
