/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The send WQE of a raw Ethernet (RAW_PACKET) QP, as libmlx5 44 builds it:
 *
 *   | ctrl | Ethernet segment | [more TSO header] | payload (data segments or one inline) |
 *     16      32 (16 + 16)
 *
 * The Ethernet segment (docs/formats.md §3.9): bytes 0-3 zero, 4 cs_flags (L3 and L4
 * checksum), 5 zero, 6 BE16 MSS (TSO), 8-11 zero, 12 BE16 inline header size, 14.. the
 * inline header. A plain send inlines the QP's minimum (the first 18 bytes of its payload:
 * the L2 header and a VLAN tag) and its payload goes on from there; with a minimum of 0 the
 * segment is one unit. A TSO send inlines the whole header it is given (14 bytes up to the
 * QP's max_tso_header), which may run on past the ring end; its payload then follows it.
 * Both write the segment's 32 bytes first (zeros, then the fields), as libmlx5 does: never
 * past the ring end, since the segment starts 16 bytes into a block.
 */
#ifndef FASTVERBS_ETH_H
#define FASTVERBS_ETH_H

#include "qp.h"

FV__EXTERN_C_BEGIN

#define FV__ETH_INLINE_L2  18u	/* the L2 minimum inline mode: Ethernet header + VLAN tag */
#define FV__ETH_TSO_HDR_MIN 14u	/* a TSO header holds at least the Ethernet header */
#define FV__ETH_SEG_BYTES  32u	/* the segment as libmlx5 clears it */
#define FV__ETH_HDR_AT     14u	/* where the inline header starts in the segment */

/* Units of the Ethernet segment and the header inlined in it. */
static inline unsigned fv__eth_ds(const struct fv_qp *qp, const struct fv__req *r)
{
	if (r->segs & FV__SEG_TSO)
		return 1 + (r->hdr_sz - 2u + FV__DS - 1) / FV__DS;
	return (FV__DS + qp->eth_inline) / FV__DS;
}

/*
 * Where a raw send's payload starts after the header it inlines: the SGE (index) and the byte
 * in it (offset). A plain send takes qp->eth_inline bytes from the front of its payload;
 * returns EINVAL if the payload is shorter (or has no piece at all), as libmlx5 does.
 */
struct fv__eth_at {
	int index;
	uint32_t offset;
};

static FV__ALWAYS_INLINE int fv__eth_hdr_at(const struct fv_qp *qp, const struct fv__req *r, struct fv__eth_at *at)
{
	uint32_t need = qp->eth_inline;

	at->index = 0;
	at->offset = 0;
	if (r->segs & FV__SEG_TSO)
		return 0;
	if (r->nsge < 1)
		return EINVAL;
	for (int i = 0; i < r->nsge && need; i++) {
		uint32_t len = r->payload == FV__PL_INLINE_BUFS ? (uint32_t)r->bufs[i].length : r->sgl[i].length;
		uint32_t take = len < need ? len : need;

		need -= take;
		at->index = i;
		at->offset = take;
		if (take == len) {	/* this piece went whole into the header */
			at->index = i + 1;
			at->offset = 0;
		}
	}
	return need ? EINVAL : 0;
}

/* Piece i of the payload: its address and length. */
static inline const uint8_t *fv__eth_piece(const struct fv__req *r, int i, uint32_t *len)
{
	if (r->payload == FV__PL_INLINE_BUFS) {
		*len = (uint32_t)r->bufs[i].length;
		return (const uint8_t *)r->bufs[i].addr;
	}
	*len = r->sgl[i].length;
	return (const uint8_t *)(uintptr_t)r->sgl[i].addr;
}

/*
 * Check a raw send as libmlx5 does, in its order: checksum offload the QP lacks, a TSO header
 * outside [14, max_tso_header], too little payload for the inline header: EINVAL; too much
 * inline payload: ENOMEM; a TSO data segment past max_tso: EINVAL. Fills at and the payload's
 * units (*pl_ds).
 */
static FV__ALWAYS_INLINE int fv__eth_check(const struct fv_qp *qp, const struct fv__req *r, struct fv__eth_at *at,
			       unsigned *pl_ds)
{
	int err;

	*pl_ds = 0;
	if ((r->flags & FV_IP_CSUM) && !qp->raw_csum)
		return EINVAL;
	if ((r->segs & FV__SEG_TSO) && (r->hdr_sz < FV__ETH_TSO_HDR_MIN || r->hdr_sz > qp->max_tso_header))
		return EINVAL;
	err = fv__eth_hdr_at(qp, r, at);
	if (err)
		return err;
	if (r->payload == FV__PL_INLINE || r->payload == FV__PL_INLINE_BUFS) {
		uint64_t rest = 0;

		for (int i = at->index; i < r->nsge; i++) {
			uint32_t len;

			fv__eth_piece(r, i, &len);
			rest += len - (i == at->index ? at->offset : 0);
		}
		if (rest > qp->max_inline)
			return ENOMEM;
		*pl_ds = rest ? fv__inline_ds((uint32_t)rest) : 0;
		return 0;
	}
	uint64_t tso_left = qp->max_tso;

	for (int i = at->index; i < r->nsge; i++) {
		if (!r->sgl[i].length)
			continue;
		if (r->segs & FV__SEG_TSO) {
			if (tso_left < r->sgl[i].length)
				return EINVAL;
			tso_left -= r->sgl[i].length;
		}
		(*pl_ds)++;
	}
	return 0;
}

/* The Ethernet segment at p (16 bytes into the WQE's first block); returns where the payload goes. */
static inline uint8_t *fv__wqe_eth(const struct fv_ring *ring, const struct fv_qp *qp, const struct fv__req *r,
				  uint8_t *p)
{
	uint8_t cs = r->flags & FV_IP_CSUM ? MLX5_ETH_WQE_L3_CSUM | MLX5_ETH_WQE_L4_CSUM : 0;
	uint16_t mss = r->segs & FV__SEG_TSO ? r->mss : 0;
	uint16_t hsz = r->segs & FV__SEG_TSO ? r->hdr_sz : (uint16_t)qp->eth_inline;

	memset(p, 0, FV__ETH_SEG_BYTES);
	p[4] = cs;
	*(__be16 *)(p + 6) = htobe16(mss);
	*(__be16 *)(p + 12) = htobe16(hsz);
	if (r->segs & FV__SEG_TSO) {
		fv__ring_copy(ring, p + FV__ETH_HDR_AT, r->hdr, r->hdr_sz);
		return fv__ring_add(ring, p, (size_t)fv__eth_ds(qp, r) * FV__DS, FV__WRAP);
	}
	uint8_t *dst = p + FV__ETH_HDR_AT;

	for (int i = 0, need = (int)hsz; need > 0; i++) {	/* fv__eth_hdr_at found enough */
		uint32_t len;
		const uint8_t *src = fv__eth_piece(r, i, &len);
		uint32_t take = len < (uint32_t)need ? len : (uint32_t)need;

		memcpy(dst, src, take);
		dst += take;
		need -= (int)take;
	}
	return p + (size_t)fv__eth_ds(qp, r) * FV__DS;
}

/* The payload after the inline header: data segments, or one inline segment; from at on. */
static inline void fv__wqe_eth_payload(const struct fv_ring *ring, const struct fv__req *r,
				      const struct fv__eth_at *at, uint8_t *p)
{
	if (r->payload == FV__PL_INLINE || r->payload == FV__PL_INLINE_BUFS) {
		uint8_t *dst = p + 4;
		uint32_t total = 0;

		if (p == ring->end)
			p = dst = ring->buf, dst += 4;
		for (int i = at->index; i < r->nsge; i++) {
			uint32_t len, off = i == at->index ? at->offset : 0;
			const uint8_t *src = fv__eth_piece(r, i, &len);

			dst = fv__ring_copy(ring, dst, src + off, len - off);
			total += len - off;
		}
		if (total)
			*(__be32 *)p = htobe32(total | MLX5_INLINE_SEG);
		return;
	}
	for (int i = at->index; i < r->nsge; i++) {
		const struct ibv_sge *s = &r->sgl[i];
		uint32_t off = i == at->index ? at->offset : 0;

		if (!s->length)
			continue;
		if (p == ring->end)
			p = ring->buf;
		p = fv__unit_write(ring, p, fv__data_image(s->length - off, s->lkey, s->addr + off), FV__WRAP);
	}
}

/*
 * The general build of the raw send r at the producer counter pi (the producer stays).
 * Returns the WQE's blocks, or a negative errno (fv__eth_check's, or -ENOMEM: too many SGEs,
 * no room) with nothing written. Out of line: fv__build_eth_at inlines the common cases.
 */
static FV__NOINLINE int fv__build_eth_slow(struct fv_qp *qp, const struct fv__req *r, uint32_t pi)
{
	struct fv__sq *sq = &qp->sq;
	struct fv__eth_at at;
	unsigned pl_ds, ds, nbb;
	__be32 fm;
	int err;

	if (r->payload == FV__PL_SGL && r->nsge > 0 && (unsigned)r->nsge > qp->max_send_sge)
		return -ENOMEM;
	if (r->nsge < 0)
		return -EINVAL;
	err = fv__eth_check(qp, r, &at, &pl_ds);
	if (err)
		return -err;
	ds = 1 + fv__eth_ds(qp, r) + pl_ds;
	if (ds > FV__MAX_DS)
		return -ENOMEM;
	nbb = fv__ds_to_bb(ds);
	if (!fv__sq_take(sq, r->flags, nbb, &fm))
		return -ENOMEM;

	uint8_t *wqe = fv__sq_wqe(sq, pi);

	fv__wqe_eth_payload(&sq->ring, r, &at, fv__wqe_eth(&sq->ring, qp, r, wqe + FV__DS));
	fv__wqe_ctrl(wqe, pi, 0, r->opcode, sq->qpn_be, ds, fm, 0);
	fv__sq_record(sq, pi, r->wr_id, r->flags, nbb);
	return (int)nbb;
}

/* Two 16-bit values in memory order: a at the lower address (each as its own 2 bytes lie). */
static FV__ALWAYS_INLINE uint32_t fv__eth_2x16(uint16_t a, uint16_t b)
{
#if __BYTE_ORDER == __LITTLE_ENDIAN
	return (uint32_t)b << 16 | a;
#else
	return (uint32_t)a << 16 | b;
#endif
}

/*
 * The Ethernet segment's first unit: cs_flags, MSS, the inline header's size and first 2 bytes.
 * Composed in two words, not through a byte array: the compiler then builds it in registers
 * instead of storing a constant, patching its bytes in memory and loading it back.
 */
static FV__ALWAYS_INLINE struct fv__image fv__eth_unit0(uint8_t cs, uint16_t mss, uint16_t hsz, const uint8_t *h2)
{
	uint16_t h;
#if __BYTE_ORDER == __LITTLE_ENDIAN
	uint16_t cs0 = cs;		/* bytes 4, 5: cs_flags, 0 */
#else
	uint16_t cs0 = (uint16_t)(cs << 8);
#endif

	memcpy(&h, h2, 2);
	return FV__IMAGE(fv__2x32(0, fv__eth_2x16(cs0, htobe16(mss))), fv__2x32(0, fv__eth_2x16(htobe16(hsz), h)));
}

/*
 * The common raw sends, inline: a SEND of one SGE longer than the 18-byte inline header (one
 * block: ctrl, the segment with the header, one data segment), and a TSO of one SGE whose
 * header does not meet the ring end. Returns the blocks, or 0 (nothing written) for anything
 * else, which fv__build_eth_slow builds or refuses.
 */
static FV__ALWAYS_INLINE unsigned fv__build_eth_fast(struct fv_qp *qp, const struct fv__req *r, uint32_t pi)
{
	struct fv__sq *sq = &qp->sq;
	const struct ibv_sge *s = r->sgl;
	uint8_t *wqe = fv__sq_wqe(sq, pi);
	const unsigned how = r->from_wr ? 0 : FV__VEC;
	uint8_t cs = r->flags & FV_IP_CSUM ? MLX5_ETH_WQE_L3_CSUM | MLX5_ETH_WQE_L4_CSUM : 0;
	unsigned ds, nbb;
	__be32 fm;

	if (r->payload != FV__PL_SGL || r->nsge != 1 || (cs && !qp->raw_csum))
		return 0;
	if (!(r->segs & FV__SEG_TSO)) {
		if (qp->eth_inline != FV__ETH_INLINE_L2 || s->length <= FV__ETH_INLINE_L2)
			return 0;
		if (!fv__sq_take(sq, r->flags, 1, &fm))
			return 0;
		const uint8_t *h = (const uint8_t *)(uintptr_t)s->addr;
		struct fv__image h16;

		memcpy(&h16, h + 2, sizeof(h16));
		fv__ctrl_put(wqe, pi, fv__ctrl_image(0, r->opcode, sq->qpn_be, 4, fm, 0), how);
		fv__unit_put(wqe + FV__DS, fv__eth_unit0(cs, 0, FV__ETH_INLINE_L2, h), how);
		fv__unit_put(wqe + 2 * FV__DS, h16, how);
		fv__unit_put(wqe + 3 * FV__DS, fv__data_image(s->length - FV__ETH_INLINE_L2, s->lkey,
							   s->addr + FV__ETH_INLINE_L2), how);
		fv__sq_record(sq, pi, r->wr_id, r->flags, 1);
		return 1;
	}
	uint32_t hunits = (r->hdr_sz - 2u + FV__DS - 1) / FV__DS;
	uint8_t *eseg = wqe + FV__DS, *p = eseg + FV__DS + (size_t)hunits * FV__DS;

	if (r->hdr_sz < FV__ETH_TSO_HDR_MIN || r->hdr_sz > qp->max_tso_header || s->length > qp->max_tso ||
	    p > sq->ring.end)
		return 0;
	ds = 2 + hunits + (s->length != 0);
	nbb = fv__ds_to_bb(ds);
	if (!fv__sq_take(sq, r->flags, nbb, &fm))
		return 0;
	fv__unit_put(eseg, fv__eth_unit0(cs, r->mss, r->hdr_sz, (const uint8_t *)r->hdr), how);
	fv__unit_put(eseg + FV__DS, FV__IMAGE(0, 0), how);	/* the segment's 32 bytes, as libmlx5 clears them */
	memcpy(eseg + FV__ETH_HDR_AT + 2, (const uint8_t *)r->hdr + 2, r->hdr_sz - 2u);
	if (s->length) {
		if (p == sq->ring.end)
			p = sq->ring.buf;
		fv__unit_put(p, fv__data_image(s->length, s->lkey, s->addr), how);
	}
	fv__ctrl_put(wqe, pi, fv__ctrl_image(0, r->opcode, sq->qpn_be, ds, fm, 0), how);
	fv__sq_record(sq, pi, r->wr_id, r->flags, nbb);
	return nbb;
}

/*
 * Build the raw send r at pi (the producer stays): the common cases inline, the rest out of
 * line. Returns the WQE's blocks, or a negative errno with nothing written.
 */
static FV__ALWAYS_INLINE int fv__build_eth_at(struct fv_qp *qp, const struct fv__req *r, uint32_t pi)
{
	unsigned nbb = fv__build_eth_fast(qp, r, pi);

	if (nbb)
		return (int)nbb;
	/*
	 * A copy for the call, of the fields a raw send has: the caller's request then need not
	 * be kept in memory for it. A whole-struct copy made the compiler zero the request in
	 * memory before every WR, the fast ones too (16 stores a WR).
	 */
	struct fv__req c = FV__ZERO_INIT;

	c.wr_id = r->wr_id, c.flags = r->flags, c.opcode = r->opcode, c.segs = r->segs;
	c.payload = r->payload, c.hdr = r->hdr, c.hdr_sz = r->hdr_sz, c.mss = r->mss;
	c.sgl = r->sgl, c.nsge = r->nsge, c.bufs = r->bufs, c.len = r->len, c.from_wr = r->from_wr;
	return fv__build_eth_slow(qp, &c, pi);
}

FV__EXTERN_C_END

#endif /* FASTVERBS_ETH_H */
