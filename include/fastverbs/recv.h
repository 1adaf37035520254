/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Receive queue and SRQ posting (docs/formats.md §4).
 *
 * RQ WQE (stride = 16 * max_gs bytes), one per receive WR, slot = head & mask:
 *
 *   +-----------+-----------+-----+----------------------------+
 *   | data seg0 | data seg1 | ... | terminator (if < max_gs)   |
 *   +-----------+-----------+-----+----------------------------+
 *   data seg: BE32 byte_count | BE32 lkey | BE64 addr
 *   terminator: byte_count 0, lkey MLX5_INVALID_LKEY (0x100), addr 0
 *
 * SRQ WQE: a 16-byte next segment, then the data segments as above.
 *
 *   0: rsvd(2) | BE16 next_wqe_index | signature | rsvd(11)      16..: data segs
 *
 * The SRQ's free WQEs form a list linked through next_wqe_index, from head (filled by the
 * next post) to tail (never filled: head == tail means full). A completion returns its WQE
 * index to the tail. This is libmlx5's scheme; fastverbs continues it from the head/tail
 * mlx5dv_init_obj reports.
 *
 * Posting writes WQEs only; fv_recv_ring / fv_srq_ring publish them through the doorbell
 * record (receive queues have no MMIO doorbell).
 *
 * Which SRQ a responder completion belongs to (used by cq.h):
 *   - a registered fv_qp attached to an SRQ: qp->srq, set by fv_qp_attach_srq() or, for a
 *     QP taken over from an ibv_qp, resolved on its first completion from ibqp->srq through
 *     the SRQ table of registry.h (every fv_srq_init / fv_srq_init_geom registers);
 *   - a QPN no fv_qp registered (an XRC target QP, which fastverbs does not own): the SRQ
 *     bound to the CQ with fv_cq_bind_srq() if any, else the registered SRQ whose number
 *     equals the CQE's srqn_uidx. The number rule holds for CQE version 0 only; with CQE
 *     version 1 that field is a user index mlx5dv does not expose, so bind the XRC SRQ to
 *     its CQ (an XRC SRQ names its CQ at creation; give each XRC SRQ its own CQ).
 */
#ifndef FASTVERBS_RECV_H
#define FASTVERBS_RECV_H

#include "qp.h"

FV__EXTERN_C_BEGIN

/* The RQ's tail as the poster reads it: a poller in another thread moves it (fv__rq_set_tail). */
static inline uint32_t fv__rq_tail(const struct fv__rq *rq)
{
	return fv__load_acquire(&rq->tail);
}

/* The poller frees the receive WQEs before tail, after its last read of them. */
static FV__ALWAYS_INLINE void fv__rq_set_tail(struct fv__rq *rq, uint32_t tail)
{
	__atomic_store_n(&rq->tail, tail, __ATOMIC_RELEASE);
}

/*
 * Write sgl into the scatter list at d of max_gs entries: zero-length entries dropped, the
 * invalid-lkey terminator after the last one if the list is not full. Stored as units (wqe.h):
 * a type nothing else has, so that in a caller's loop the compiler keeps the RQ's fields and
 * the caller's values in registers across the stores. term_first: a list of one entry stores
 * the terminator before it, with no test (fv_srq_recv; docs/performance.md §8.2.3).
 */
static FV__ALWAYS_INLINE void fv__rsegs(uint8_t *d, uint32_t max_gs, const struct ibv_sge *sgl, int nsge,
				       const int term_first)
{
	uint32_t n = 0;	/* entries written */

	if (nsge == 1) {	/* the common list, without the loop's count and pointer */
		/* a length the caller fixes: its fields one by one, the length's swap folded */
		unsigned how = FV__CONST_P(sgl->length) ? FV__VEC : 0;

		if (term_first && sgl->length) {
			/* the terminator first, after the entry or, when the list holds one entry only,
			 * under it (the entry's store, of the same type, follows): one store where the
			 * test took two instructions a WR */
			fv__unit_put(d + (max_gs > 1 ? FV__DS : 0), FV__IMAGE(fv__2x32(0, htobe32(MLX5_INVALID_LKEY)), 0), 0);
			fv__unit_put(d, fv__sge_image(sgl, how), 0);
			return;
		}
		if (sgl->length)
			fv__unit_put(d, fv__sge_image(sgl, how), 0), n = 1;
	} else {
		for (int i = 0; i < nsge; i++)
			if (sgl[i].length)
				fv__unit_put(d + (size_t)n++ * FV__DS, fv__sge_image(&sgl[i], 0), 0);
	}
	if (n < max_gs)
		fv__unit_put(d + (size_t)n * FV__DS, FV__IMAGE(fv__2x32(0, htobe32(MLX5_INVALID_LKEY)), 0), 0);
}

/*
 * Store v to the RQ's counter at offset off (head or lim). own (fv_recv): through a struct
 * fv__rq_ctr pointer made from the offset, which the compiler does not fold back into the
 * field's path: the store then has a type of fastverbs' own that no caller's struct holds,
 * and a caller's uint32_t (an lkey) stays in a register across it. A read through the field
 * (rq->head.v) still sees it: the field has that type. Otherwise as a field: in
 * fv_post_recv's caller the store of own type costs a spilled register (docs/performance.md
 * §8.2.5).
 */
static FV__ALWAYS_INLINE void fv__rq_ctr_put(struct fv__rq *rq, size_t off, uint32_t v, const int own)
{
	if (own)
		((struct fv__rq_ctr *)((uint8_t *)rq + off))->v = v;
	else if (off == offsetof(struct fv__rq, lim))
		rq->lim.v = v;
	else
		rq->head.v = v;
}

/* Receive WQEs posted on qp's RQ (tests; what fv_recv_ring publishes, mod 2^16). */
static inline uint32_t fv__rq_head(const struct fv_qp *qp)
{
	return qp->rq.head.v;
}

/*
 * Whether the RQ is full, head at lim: lim moves on from the live tail (a poller in another
 * thread moves it). Read only there, as the send queue reads its ci past its own lim.
 */
static inline bool fv__rq_full(struct fv__rq *rq, uint32_t head, const int own)
{
	uint32_t lim = fv__rq_tail(rq) + rq->entries;

	fv__rq_ctr_put(rq, offsetof(struct fv__rq, lim), lim, own);
	return head == lim;
}

/*
 * Post one receive WQE on qp's RQ: scatter list sgl[0..nsge) (zero-length entries are
 * dropped), wr_id reported by its completion. No doorbell: call fv_recv_ring() after a
 * batch. Returns 0; ENOMEM if the RQ is full (checked first, as libmlx5 does); EINVAL if
 * nsge is negative or above max_recv_sge, or the QP has no RQ. Nothing is written when
 * refused.
 */
static FV__ALWAYS_INLINE int fv__recv(struct fv_qp *qp, uint64_t wr_id, const struct ibv_sge *sgl, int nsge, const int upfront)
{
	struct fv__rq *rq = &qp->rq;
	uint8_t *buf FV__PLAIN_INIT(NULL);
	struct fv__wr_id *wrid FV__PLAIN_INIT(NULL);
	uint32_t head = rq->head.v, mask FV__PLAIN_INIT(0), shift FV__PLAIN_INIT(0), max_gs FV__PLAIN_INIT(0), max_sge FV__PLAIN_INIT(0);

	if (upfront) {
		buf = rq->buf, wrid = (struct fv__wr_id *)rq->wrid;
		mask = rq->mask, shift = rq->stride_shift, max_gs = rq->max_gs, max_sge = rq->max_sge;
	}
	/*
	 * one: a list of one entry that fv_recv's caller fixes (a count FV__CONST_P sees). Its
	 * count test and its terminator's test are then one compare of k, which gcc computes
	 * outside a caller's loop: 1, the WQE holds one segment and the RQ allows one; 2, the WQE
	 * holds more (a terminator follows); 0, max_recv_sge is 0 (refused).
	 */
	const bool one = upfront && FV__CONST_P(nsge) && nsge == 1;
	const unsigned k = !one ? 0 : !max_sge ? 0 : max_gs > 1 ? 2 : 1;

	if (__builtin_expect(head == rq->lim.v, 0) && fv__rq_full(rq, head, upfront))
		return rq->entries ? ENOMEM : EINVAL;
	if (!upfront)
		max_sge = rq->max_sge;
	if (one ? __builtin_expect(k != 1, 0) && !k : __builtin_expect((unsigned)nsge > max_sge, 0))
		return EINVAL;
	FV__TEST_YIELD();	/* a test's window: two unlocked posters now share head */
	if (!upfront)
		buf = rq->buf, wrid = (struct fv__wr_id *)rq->wrid, mask = rq->mask, shift = rq->stride_shift,
		max_gs = rq->max_gs;
	if (one && k == 1) {
		size_t i = head & mask;

		/* the wr_id first, then the WQE's address from the index hidden: gcc shifts the
		 * index in its register, where it copied it for the wr_id's store */
		wrid[i].v = wr_id;
		FV__HIDE(i);
		fv__rsegs(buf + (i << shift), 1, sgl, 1, 0);
	} else {
		fv__rsegs(buf + ((size_t)(head & mask) << shift), max_gs, sgl, nsge, 0);
		wrid[head & mask].v = wr_id;
	}
	fv__rq_ctr_put(rq, offsetof(struct fv__rq, head), head + 1, upfront);
	FV__ASSERT(rq->head.v - fv__rq_tail(rq) <= rq->entries);	/* the RQ holds at most its entries */
	return 0;
}

static FV__ALWAYS_INLINE int fv_recv(struct fv_qp *qp, uint64_t wr_id, const struct ibv_sge *sgl, int nsge)
{
	return fv__recv(qp, wr_id, sgl, nsge, 1);
}

/*
 * Publish the posted receive WQEs: WQE stores, then dbrec[MLX5_RCV_DBR] = head (16 bits). The
 * barrier is the send doorbell's (arch.h, fv__dbrec_publish32): the device only reads memory
 * here, so the compiler keeps the RQ's fields and the caller's values in registers across it.
 */
static inline void fv_recv_ring(struct fv_qp *qp)
{
	fv__dbrec_publish32(qp->rq.dbrec, htobe32(qp->rq.head.v & 0xffff));
}

struct fv_srq {
	uint8_t *buf;
	uint32_t stride_shift;	/* log2(stride) */
	uint32_t max_gs;	/* data segments per WQE: stride / 16 - 1 */
	uint32_t mask;		/* WQE indices are masked with it (wqe_cnt - 1) */
	uint32_t head;		/* first free WQE: the next post fills it */
	uint32_t tail;		/* last free WQE: never filled, completions link after it */
	uint32_t srqn;
	uint16_t counter;	/* WQEs posted, mod 2^16: the doorbell record value */
	uint16_t mask16;	/* mask's 16 bits, those of a WQE index (fv__srq_next): a type
				 * that tells the compiler so, where mask & 0xffff gets the and
				 * applied again to every index */
	uint32_t toff;		/* a one-entry list's terminator from its entry: 16 if max_gs > 1,
				 * else 0 (fv__post_srq_recv_head); in what was padding */
	volatile __be32 *dbrec;
	uint64_t *wrid;		/* per WQE index */
	struct ibv_srq *ibsrq;	/* key for QPs taken over from an ibv_qp */
	uint32_t lock;		/* fv_post_srq_recv and the pollers' fv__srq_free_locked (sync.h) */
	uint32_t locking;	/* they take it (fv_set_lock) */
};

/* An SRQ described by its raw geometry (tests, plain memory). */
struct fv_srq_geom {
	void *buf;
	uint32_t wqe_cnt;	/* WQEs in buf, a power of two */
	uint32_t stride;	/* bytes, a power of two >= 32 */
	volatile __be32 *dbrec;	/* dbrec[0]: the counter; posting continues from it */
	uint32_t srqn;
	uint32_t head, tail;	/* free list ends, as mlx5dv_srq reports them */
	int link;		/* nonzero: write the free list head -> head+1 -> ... -> tail first */
	struct ibv_srq *ibsrq;	/* optional registry key */
};

/* The registered fv_srq for ibsrq (by_ib) or with SRQ number num, or NULL. */
static inline struct fv_srq *fv__srq_lookup(const struct ibv_srq *ibsrq, uint32_t num, int by_ib)
{
	struct fv_registry *r = fv_registry_get();

	for (unsigned i = 0; i < FV__SRQ_MAX; i++) {
		struct fv_srq *s = fv__registry_srq_at(r, i);

		if (s && (by_ib ? s->ibsrq == ibsrq : s->srqn == num))
			return s;
	}
	return NULL;
}

/*
 * Set srq up from a raw geometry and register it. Returns 0, EINVAL (bad geometry) or
 * ENOMEM (no memory, or FV__SRQ_MAX SRQs registered).
 */
static inline int fv_srq_init_geom(struct fv_srq *srq, const struct fv_srq_geom *g)
{
	if (!g->buf || !g->dbrec || !fv__is_pow2(g->wqe_cnt) || !fv__is_pow2(g->stride) ||
	    g->stride < 2 * FV__DS || g->head >= g->wqe_cnt || g->tail >= g->wqe_cnt)
		return EINVAL;
	memset(srq, 0, sizeof(*srq));
	srq->wrid = (uint64_t *)calloc(g->wqe_cnt, sizeof(uint64_t));
	if (!srq->wrid)
		return ENOMEM;
	srq->buf = (uint8_t *)g->buf;
	srq->stride_shift = (uint32_t)__builtin_ctz(g->stride);
	srq->max_gs = g->stride / FV__DS - 1;
	srq->mask = g->wqe_cnt - 1;
	srq->mask16 = (uint16_t)srq->mask;
	srq->toff = srq->max_gs > 1 ? FV__DS : 0;
	srq->head = g->head;
	srq->tail = g->tail;
	srq->srqn = g->srqn;
	srq->counter = (uint16_t)be32toh(*g->dbrec);
	srq->dbrec = g->dbrec;
	srq->ibsrq = g->ibsrq;
	srq->locking = fv__locking_default();
	for (uint32_t i = g->head; g->link && i != g->tail; i = (i + 1) & srq->mask) {
		struct mlx5_wqe_srq_next_seg *n =
			(struct mlx5_wqe_srq_next_seg *)(srq->buf + ((size_t)i << srq->stride_shift));

		n->next_wqe_index = htobe16((uint16_t)((i + 1) & srq->mask));
	}
	if (fv__registry_srq_swap(NULL, srq)) {
		free(srq->wrid);
		srq->wrid = NULL;
		return ENOMEM;
	}
	return 0;
}

/*
 * Take over a basic or XRC SRQ created by libmlx5 (mlx5dv_init_obj with its SRQ number;
 * the WQE count from ibv_query_srq). Posting continues libmlx5's free list and doorbell
 * counter; afterwards post only through fastverbs. Returns 0 or an errno value.
 */
static inline int fv_srq_init(struct fv_srq *srq, struct ibv_srq *ibsrq)
{
	struct mlx5dv_srq dv;
	struct mlx5dv_obj obj;
	struct ibv_srq_attr attr;
	uint32_t cnt;
	int err;

	memset(&dv, 0, sizeof(dv));
	memset(&obj, 0, sizeof(obj));
	dv.comp_mask = MLX5DV_SRQ_MASK_SRQN;
	obj.srq.in = ibsrq;
	obj.srq.out = &dv;
	err = mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ);
	if (err)
		return err;
	if (ibv_query_srq(ibsrq, &attr))
		return errno ? errno : EIO;
	/* libmlx5 sizes the buffer to a power of two above max_wr (plus its wait queue). */
	cnt = attr.max_wr + 1;
	if (cnt < dv.head + 1)
		cnt = dv.head + 1;
	if (cnt < dv.tail + 1)
		cnt = dv.tail + 1;
	while (!fv__is_pow2(cnt))
		cnt += cnt & -cnt;

	struct fv_srq_geom g = FV__ZERO_INIT;

	g.buf = dv.buf, g.wqe_cnt = cnt, g.stride = dv.stride, g.dbrec = dv.dbrec;
	g.srqn = (dv.comp_mask & MLX5DV_SRQ_MASK_SRQN) ? dv.srqn : 0;
	g.head = dv.head, g.tail = dv.tail, g.ibsrq = ibsrq;
	return fv_srq_init_geom(srq, &g);
}

/* Unregister srq and free its bookkeeping. Clean up the QPs and CQs using it first. */
static inline void fv_srq_cleanup(struct fv_srq *srq)
{
	if (srq->wrid)
		fv__registry_srq_swap(srq, NULL);
	free(srq->wrid);
	srq->wrid = NULL;
}

/* WQE index idx of srq. */
static inline struct mlx5_wqe_srq_next_seg *fv__srq_wqe(const struct fv_srq *srq, uint32_t idx)
{
	return (struct mlx5_wqe_srq_next_seg *)(srq->buf + ((size_t)idx << srq->stride_shift));
}

/*
 * The index of the WQE after n in the free list, masked with mask16 (struct fv_srq): the big-endian
 * word of bytes 0-3 (reserved, next_wqe_index) with its upper half dropped by the mask, one
 * load and one swap (a 16-bit swap takes two more, zero-extending).
 */
static inline uint32_t fv__srq_next(const struct mlx5_wqe_srq_next_seg *n, uint32_t mask16)
{
	uint32_t w;

	memcpy(&w, n, sizeof(w));
	return be32toh(w) & mask16;
}

/*
 * Post one receive WQE on srq (zero-length SGEs are dropped as on an RQ; libmlx5 writes
 * them on an SRQ). No doorbell: call fv_srq_ring() after a batch. Returns 0; EINVAL if
 * nsge is negative or above the SRQ's max_gs (checked first, as libmlx5 does); ENOMEM if
 * the SRQ is full. Nothing is written when refused. upfront: 1 (fv_post_srq_recv) reads the
 * SRQ's fields before the tests; 2 (fv_srq_recv) too, and stores a one-entry list's
 * terminator first (fv__rsegs), which costs fv_post_srq_recv 5 instructions a WR.
 */
static FV__ALWAYS_INLINE int fv__srq_recv(struct fv_srq *srq, uint64_t wr_id, const struct ibv_sge *sgl, int nsge,
					const int upfront)
{
	uint8_t *buf FV__PLAIN_INIT(NULL);
	struct fv__wr_id *wrid FV__PLAIN_INIT(NULL);
	uint32_t head = srq->head, shift FV__PLAIN_INIT(0), max_gs = srq->max_gs, mask FV__PLAIN_INIT(0);
	struct mlx5_wqe_srq_next_seg *n;

	if (upfront) {
		buf = srq->buf, wrid = (struct fv__wr_id *)srq->wrid, shift = srq->stride_shift;
		mask = srq->mask16;
	}
	/* max_gs is at least 1 (fv_srq_init_geom): a list of one entry fixed by the caller's code
	 * needs no test, which gcc would otherwise keep in a caller's loop */
	if (!(FV__CONST_P(nsge) && (unsigned)nsge <= 1) && __builtin_expect((unsigned)nsge > max_gs, 0))
		return EINVAL;
	if (__builtin_expect(head == srq->tail, 0))
		return ENOMEM;
	if (!upfront)
		buf = srq->buf, wrid = (struct fv__wr_id *)srq->wrid, shift = srq->stride_shift,
		mask = srq->mask16, max_gs = srq->max_gs;
	FV__TEST_YIELD();	/* a test's window: two unlocked posters now share head */
	size_t h = head;
	wrid[h].v = wr_id;
	FV__HIDE(h);	/* the WQE's address from h after the wr_id's store: gcc shifts h in place, no copy */
	n = (struct mlx5_wqe_srq_next_seg *)(buf + (h << shift));
	fv__rsegs((uint8_t *)(n + 1), max_gs, sgl, nsge, upfront == 2);
	srq->head = fv__srq_next(n, mask);
	srq->counter++;
	return 0;
}

static FV__ALWAYS_INLINE int fv_srq_recv(struct fv_srq *srq, uint64_t wr_id, const struct ibv_sge *sgl, int nsge)
{
	return fv__srq_recv(srq, wr_id, sgl, nsge, 2);
}

/*
 * Publish the posted SRQ WQEs: WQE stores, then dbrec[0] = WQEs posted (16 bits). The counter
 * is read anew (volatile), not taken from the last post's register: each post then adds to it
 * in memory with one instruction, where it took a load, an add and a store. The barrier's
 * hidden pointer is the record's (fv__dbrec_publish32), so the WQE buffer's stays where it is.
 */
static inline void fv_srq_ring(struct fv_srq *srq)
{
	fv__dbrec_publish32(srq->dbrec, htobe32(*(const volatile uint16_t *)&srq->counter));
}

/* WQE idx was consumed: link it after the tail of the free list. */
static inline void fv__srq_free(struct fv_srq *srq, uint32_t idx)
{
	fv__srq_wqe(srq, srq->tail)->next_wqe_index = htobe16((uint16_t)idx);
	srq->tail = idx;
}

/*
 * fv__srq_free by a poller: under the SRQ's lock when its compat calls lock, so that receives
 * may be posted (fv_post_srq_recv) from a thread other than the one that polls, as libmlx5
 * allows. Rare enough (a receive on an SRQ) not to matter beside the CQE's decoding. at: the
 * release with the word as a memory operand (fv_poll_cq; in fv_poll it costs a register,
 * docs/performance.md §8.2.3).
 */
static inline void fv__srq_free_locked(struct fv_srq *srq, uint32_t idx, const int at)
{
	if (srq->locking) {
		fv__rec_lock(&srq->lock, srq);
		fv__srq_free(srq, idx);
		if (at)
			fv__rec_unlock_at(&srq->lock, srq);
		else
			fv__rec_unlock(&srq->lock, srq);
	} else {
		fv__srq_free(srq, idx);
	}
}

/*
 * Attach qp (created on ibv SRQ srq, so it has no RQ) to srq for completion polling. Only
 * needed for QPs described by raw geometry; a QP taken over from an ibv_qp finds its SRQ
 * through ibqp->srq on its first completion.
 */
static inline void fv_qp_attach_srq(struct fv_qp *qp, struct fv_srq *srq)
{
	qp->srq = srq;
	fv__registry_touch();	/* a CQ's receive way of qp names the SRQ it had (cq_init.h) */
}

FV__EXTERN_C_END

#endif /* FASTVERBS_RECV_H */
