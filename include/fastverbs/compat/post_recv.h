/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ibv_post_recv(3) / ibv_post_srq_recv(3) drop-ins, with libmlx5's semantics: walk the list,
 * stop at the first WR that cannot be posted, set *bad_wr to it and return its errno value
 * (EINVAL: too many SGEs or no RQ; ENOMEM: queue full). The WRs before it are posted and
 * published with one doorbell-record write at the end; nothing of the bad WR is written.
 * Each holds its queue's lock over the list and the doorbell record (sync.h), as libmlx5 does:
 * receives may be posted from any thread, the poller's included.
 */
#ifndef FASTVERBS_COMPAT_POST_RECV_H
#define FASTVERBS_COMPAT_POST_RECV_H

#include "../sync.h"

FV__EXTERN_C_BEGIN

/*
 * The leading WRs of a list that take the common shape (one SGE of nonzero length, room before
 * lim, max_recv_sge at least 1), posted with the RQ's fields held in registers across the list
 * and head stored once. Returns the first WR it did not post (NULL: all of them); that one goes
 * through fv__recv, which tests it in libmlx5's order.
 */
static FV__ALWAYS_INLINE struct ibv_recv_wr *fv__post_recv_head(struct fv__rq *rq, struct ibv_recv_wr *wr)
{
	uint8_t *const buf = rq->buf;
	struct fv__wr_id *const wrid = (struct fv__wr_id *)rq->wrid;
	const uint32_t mask = rq->mask, shift = rq->stride_shift, lim = rq->lim.v;
	/* the terminator's offset: after the entry, or under it when the WQE holds one (the
	 * entry's store, of the same type, follows) */
	const size_t toff = rq->max_gs > 1 ? FV__DS : 0;
	uint32_t head = rq->head.v;

	if (__builtin_expect(!rq->max_sge, 0))
		return wr;
	FV__TEST_YIELD();	/* a test's window: two unlocked posters now share head */
	for (; wr; wr = wr->next) {
		const struct ibv_sge *s = wr->sg_list;
		uint64_t w;
		size_t i = head & mask;	/* made before the tests: fewer instructions (docs/performance.md §8.2.6) */
		uint8_t *d;

		if (__builtin_expect(wr->num_sge != 1 || head == lim, 0))
			break;
		/* head is short of lim, so its slot is free: the rest path overwrites it, or the WR
		 * is refused and the slot never reported */
		wrid[i].v = wr->wr_id;
		w = fv__load64(&s->length);	/* length and lkey, one load */
		if (__builtin_expect(!fv__sge_word_len(w), 0))
			break;
		w = fv__sge_word_be(w);
		FV__HIDE(i);	/* the WQE's address from i after the wr_id's store: shifted in place */
		d = buf + (i << shift);
		fv__unit_put(d + toff, FV__IMAGE(fv__2x32(0, htobe32(MLX5_INVALID_LKEY)), 0), 0);
		fv__unit_put(d, FV__IMAGE(w, htobe64(s->addr)), 0);
		head++;
	}
	rq->head.v = head;
	return wr;
}

/*
 * From a WR the head did not post: it through fv__recv, the WRs after it through the head until
 * the next such WR, and so on; at the first refused WR, *bad_wr. Then the doorbell record if
 * anything was posted, and the lock's release. Out of line: the common list never comes here.
 */
static FV__NOINLINE int fv__post_recv_rest(struct fv_qp *qp, struct ibv_recv_wr *wr, const struct ibv_recv_wr *first,
					   struct ibv_recv_wr **bad_wr)
{
	int err;

	do {
		err = fv__recv(qp, wr->wr_id, wr->sg_list, wr->num_sge, 0);
		if (err) {
			*bad_wr = wr;
			break;
		}
		wr = fv__post_recv_head(&qp->rq, wr->next);
	} while (wr);
	if (wr != first)
		fv_recv_ring(qp);
	fv__leave_at(&qp->rq_lock, qp->locking, qp);
	return err;
}

/* Post a list of receive WRs on qp's RQ, as ibv_post_recv(qp->ibqp, wr, bad_wr) would. */
static FV__ALWAYS_INLINE int fv_post_recv(struct fv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct ibv_recv_wr *first = wr;	/* not NULL: something was posted, if all was */
	uint32_t on = qp->locking;

	fv__enter(&qp->rq_lock, on, qp);
	FV__TEST_YIELD();

	wr = fv__post_recv_head(&qp->rq, wr);
	if (__builtin_expect(wr != NULL, 0))
		return fv__post_recv_rest(qp, wr, first, bad_wr);
	if (first)
		fv_recv_ring(qp);
	fv__leave_at(&qp->rq_lock, on, qp);
	return 0;
}

/*
 * fv__post_recv_head on an SRQ: the leading WRs of one SGE of nonzero length while the free
 * list has room, the SRQ's fields in registers, head and the counter stored once.
 */
static FV__ALWAYS_INLINE struct ibv_recv_wr *fv__post_srq_recv_head(struct fv_srq *srq, struct ibv_recv_wr *wr)
{
	uint8_t *const buf = srq->buf;
	struct fv__wr_id *const wrid = (struct fv__wr_id *)srq->wrid;
	const uint32_t shift = srq->stride_shift, tail = srq->tail, mask = srq->mask16;
	/* the terminator's offset from the entry's, as in fv__post_recv_head */
	const size_t toff = srq->toff;
	uint32_t head = srq->head;

	FV__TEST_YIELD();	/* a test's window: two unlocked posters now share head */
	for (; wr; wr = wr->next) {
		const struct ibv_sge *s = wr->sg_list;
		uint64_t w;
		size_t h = head;	/* as in fv__post_recv_head */
		uint8_t *d;

		if (__builtin_expect(wr->num_sge != 1 || head == tail, 0))
			break;
		wrid[h].v = wr->wr_id;	/* the free list's head: free, as in fv__post_recv_head */
		w = fv__load64(&s->length);	/* length and lkey, one load */
		if (__builtin_expect(!fv__sge_word_len(w), 0))
			break;

		w = fv__sge_word_be(w);
		FV__HIDE(h);	/* as in fv__post_recv_head */
		d = buf + (h << shift);
		fv__unit_put(d + FV__DS + toff, FV__IMAGE(fv__2x32(0, htobe32(MLX5_INVALID_LKEY)), 0), 0);
		fv__unit_put(d + FV__DS, FV__IMAGE(w, htobe64(s->addr)), 0);
		head = fv__srq_next((const struct mlx5_wqe_srq_next_seg *)d, mask);
		srq->counter++;
	}
	srq->head = head;
	return wr;
}

/* fv__post_recv_rest on an SRQ. */
static FV__NOINLINE int fv__post_srq_recv_rest(struct fv_srq *srq, struct ibv_recv_wr *wr,
					       const struct ibv_recv_wr *first, struct ibv_recv_wr **bad_wr)
{
	int err;

	do {
		err = fv__srq_recv(srq, wr->wr_id, wr->sg_list, wr->num_sge, 1);
		if (err) {
			*bad_wr = wr;
			break;
		}
		wr = fv__post_srq_recv_head(srq, wr->next);
	} while (wr);
	if (wr != first)
		fv_srq_ring(srq);
	fv__leave(&srq->lock, srq->locking, srq);
	return err;
}

/* Post a list of receive WRs on srq, as ibv_post_srq_recv(srq->ibsrq, wr, bad_wr) would. */
static FV__ALWAYS_INLINE int fv_post_srq_recv(struct fv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct ibv_recv_wr *first = wr;	/* as in fv_post_recv */
	uint32_t on = srq->locking;

	fv__enter(&srq->lock, on, srq);
	FV__TEST_YIELD();

	wr = fv__post_srq_recv_head(srq, wr);
	if (__builtin_expect(wr != NULL, 0))
		return fv__post_srq_recv_rest(srq, wr, first, bad_wr);
	if (first)
		fv_srq_ring(srq);
	fv__leave_at(&srq->lock, on, srq);
	return 0;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_COMPAT_POST_RECV_H */
