/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fv_wr_set_inline_data on an RC, UC, UD or XRC QP (compat/wr_batch.h): the WQE of one piece
 * of inline data built without a call. The builders' fast path (build.h) takes what fits
 * its first block; the rest (a UD or XRC WQE, a longer payload) is built here, not by
 * build.h's general path, whose copy calls memcpy.
 *
 * Why: fv_wr_set_inline_data on a struct fv_qp * switches on the QP type in the caller's
 * loop, and one call on any of its arms, even one the loop never takes, makes the compiler
 * read the ring's fields again for every WR and keep less in registers (RC RDMA_WRITE inline
 * 16 B, 32 per batch: 101 -> 88 instructions per WR without it). The bytes are build.h's:
 * the same checks in the same order, the units before the payload, the inline segment (its
 * byte count, then the bytes, which may run on past the ring end), the ctrl.
 */
#ifndef FASTVERBS_COMPAT_WR_INLINE_H
#define FASTVERBS_COMPAT_WR_INLINE_H

#include "wr_raw.h"

FV__EXTERN_C_BEGIN

/*
 * Build r (payload: FV__PL_INLINE, one piece of r->len bytes; no UMR) at the producer counter
 * pi, as fv__build_wqe_at does; the producer stays. Returns the WQE's blocks, or -ENOMEM (too
 * long, no room) with nothing written.
 */
static FV__ALWAYS_INLINE int fv__wr_inline_wqe_at(struct fv_qp *qp, enum fv_qpt qpt, const struct fv__req *r,
						uint32_t pi)
{
	struct fv__sq *sq = &qp->sq;
	const unsigned hdr = fv__req_hdr_ds(qpt, r);
	unsigned ds, nbb, how, n;
	struct fv__image u[FV__HDR_UNITS];
	__be32 fm;

	if (r->len > qp->max_inline)
		return -ENOMEM;
	ds = hdr + (r->len ? fv__inline_ds(r->len) : 0);
	nbb = fv__ds_to_bb(ds);
	if (!fv__sq_take_at(sq, pi, r->flags, nbb, &fm))
		return -ENOMEM;

	uint8_t *wqe = fv__sq_wqe(sq, pi), *p = wqe + FV__DS;

	how = (ds > 4 ? FV__WRAP : 0) | FV__VEC;	/* a WQE that fits its first block never meets the ring end */
	n = fv__req_hdr_images(qpt, r, u);
FV__UNROLL(3)
	for (unsigned i = 0; i < n; i++)
		p = fv__unit_write(&sq->ring, p, u[i], how);
	if (r->len) {
		((struct fv__inl4 *)p)->v = htobe32(r->len | MLX5_INLINE_SEG);
		fv__raw_ring_copy(&sq->ring, p + 4, (const uint8_t *)(uintptr_t)r->sgl->addr, r->len);
	}
	fv__wqe_ctrl(wqe, pi, 0, r->opcode, sq->qpn_be, ds, fm, r->imm);
	fv__sq_record(sq, pi, r->wr_id, r->flags, nbb);
	if (ds == 1)
		fv__sq_no_bf(sq);
	return (int)nbb;
}

/* Build r (as above) at the producer, which then moves past it: 0, or ENOMEM with nothing written. */
static FV__ALWAYS_INLINE int fv__wr_inline_build(struct fv_qp *qp, enum fv_qpt qpt, const struct fv__req *r)
{
	const uint32_t pi = qp->sq.pi;
	int nbb = fv__build_fast_at(qp, qpt, r, pi);

	if (!nbb)
		nbb = fv__wr_inline_wqe_at(qp, qpt, r, pi);
	if (nbb < 0)
		return -nbb;
	fv__sq_advance(&qp->sq, pi, (unsigned)nbb);
	return 0;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_COMPAT_WR_INLINE_H */
