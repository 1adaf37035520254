/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Threads: the compat calls keep libmlx5's locking contract, the typed calls lock nothing.
 *
 *   object          word          taken by (compat calls)                      fv_lock(h)
 *   send queue      qp->sq_lock   fv_post_send (WR list and doorbell),         QP handles
 *                                 fv_wr_start until fv_wr_complete/_abort
 *   receive queue   qp->rq_lock   fv_post_recv                                 -
 *   SRQ             srq->lock     fv_post_srq_recv; polling, to free a WQE     struct fv_srq *
 *   CQ              cq->lock      fv_poll_cq                                   struct fv_cq *
 *   BF register     bf->cur       every doorbell of every path (sq.h)          -
 *
 * Locking is on by default and decided at init, as libmlx5 decides it at context creation:
 * off for every QP, SRQ and CQ when MLX5_SINGLE_THREADED is "1". libmlx5 also drops the QP
 * and SRQ locks for objects created on a parent domain with a thread domain (ibv_alloc_td);
 * nothing public tells such a PD from another, so say it with fv_set_lock(h, 0).
 *
 * Without locks a compat call still refuses what it cannot do safely: fv_post_send on a QP
 * whose fv_wr_* batch is open (or that the caller holds with fv_lock) is EINVAL, not a
 * deadlock or a WQE rung with the batch. With locks, a thread that waits for another's batch
 * just waits; the thread that holds the batch gets EINVAL.
 *
 * A poster and a poller of one queue may be two threads without any lock: the poller frees
 * ring space by atomic stores (sq.h fv__sq_set_ci, recv.h fv__rq_set_tail) after its last
 * read of the freed slots, and the poster reads them atomically.
 */
#ifndef FASTVERBS_SYNC_H
#define FASTVERBS_SYNC_H

#include "cq_init.h"

FV__EXTERN_C_BEGIN

/*
 * Enter the send queue for a compat call: 0, or EINVAL when this thread holds it already (an
 * open fv_wr_* batch, fv_lock). Without locking no other thread touches the queue (the
 * caller's promise): plain reads of the batch mark and the word do.
 */
static FV__ALWAYS_INLINE int fv__sq_enter(struct fv_qp *qp)
{
	uint64_t was;

	if (!__builtin_expect(qp->locking, 1))
		return (qp->wr_open | qp->sq_lock) ? EINVAL : 0;	/* one branch, not two */
	fv__own_take(&qp->sq_lock, (uint64_t)fv__self(), qp, was);
	return was ? EINVAL : 0;
}

/* Leave it: without locking the word is 0 already, so the store needs no test. */
static FV__ALWAYS_INLINE void fv__sq_leave(struct fv_qp *qp)
{
	fv__own_unlock_at(&qp->sq_lock, qp);
}

/*
 * Hold the send queue across calls (fv_wr_start with locking, fv_lock): as fv__sq_enter's
 * locked form. Without locking a batch is marked by wr_open alone.
 */
static inline int fv__sq_hold(struct fv_qp *qp)
{
	int held;

	fv__own_lock(&qp->sq_lock, (uint64_t)fv__self(), qp, held);
	return held ? EINVAL : 0;
}

/* Release what fv__sq_hold took. */
static inline void fv__sq_drop(struct fv_qp *qp)
{
	fv__own_unlock(&qp->sq_lock, qp);
}

/* Lock word w of object rec when on (a receive queue, an SRQ, a CQ) for a compat call. */
#define fv__enter(w, on, rec)                                                                      \
	do {                                                                                       \
		if (on)                                                                            \
			fv__rec_lock(w, rec);                                                      \
	} while (0)
/* Release it: the word is 0 when on is not (the caller's promise), so the store needs no test. */
#define fv__leave(w, on, rec) do { (void)(on); fv__rec_unlock(w, rec); } while (0)
/* The same through fv__rec_unlock_at (fv_post_recv: a register fewer in its loop). */
#define fv__leave_at(w, on, rec) do { (void)(on); fv__rec_unlock_at(w, rec); } while (0)

/* ---- public: fv_lock, fv_unlock, fv_set_lock ---- */

static inline int fv__lock_qp(struct fv_qp *qp)
{
	return fv__sq_hold(qp);
}

static inline int fv__unlock_qp(struct fv_qp *qp)
{
	if (__atomic_load_n(&qp->sq_lock, __ATOMIC_RELAXED) != (uint64_t)fv__self() || qp->wr_open)
		return EPERM;	/* not held by this thread through fv_lock */
	fv__sq_drop(qp);
	return 0;
}

static inline int fv__lock_cq(struct fv_cq *cq)
{
	fv__spin_lock(&cq->lock);
	return 0;
}

static inline int fv__lock_srq(struct fv_srq *srq)
{
	fv__spin_lock(&srq->lock);
	return 0;
}

/* Release a word fv_lock took; EPERM if it is not held. */
static inline int fv__unlock_word(uint32_t *w)
{
	if (!__atomic_load_n(w, __ATOMIC_RELAXED))
		return EPERM;
	fv__spin_unlock(w);
	return 0;
}

static inline int fv__unlock_cq(struct fv_cq *cq)
{
	return fv__unlock_word(&cq->lock);
}

static inline int fv__unlock_srq(struct fv_srq *srq)
{
	return fv__unlock_word(&srq->lock);
}

static inline void fv__set_lock_qp(struct fv_qp *qp, int on)
{
	qp->locking = !!on;
}

static inline void fv__set_lock_cq(struct fv_cq *cq, int on)
{
	cq->locking = !!on;
}

static inline void fv__set_lock_srq(struct fv_srq *srq, int on)
{
	srq->locking = !!on;
}

/* fv_lock, fv_unlock and fv_set_lock of each typed QP handle: those of its struct fv_qp. */
#define FV__LOCK_FNS(t)                                                                            \
	static inline int fv__lock_##t(struct fv_##t *h) { return fv__lock_qp(&h->qp); }         \
	static inline int fv__unlock_##t(struct fv_##t *h) { return fv__unlock_qp(&h->qp); }     \
	static inline void fv__set_lock_##t(struct fv_##t *h, int on) { fv__set_lock_qp(&h->qp, on); }
FV__LOCK_FNS(rc)
FV__LOCK_FNS(uc)
FV__LOCK_FNS(ud)
FV__LOCK_FNS(xrc)
FV__LOCK_FNS(raw)
FV__LOCK_FNS(dci)
#undef FV__LOCK_FNS

#ifndef __cplusplus
#define fv__lock_pick(h, f) _Generic((h), \
	struct fv_qp *: f##_qp, struct fv_rc *: f##_rc, struct fv_uc *: f##_uc, struct fv_ud *: f##_ud, \
	struct fv_xrc *: f##_xrc, struct fv_raw *: f##_raw, struct fv_dci *: f##_dci, struct fv_cq *: f##_cq, \
	struct fv_srq *: f##_srq)

/*
 * fv_lock(h): hold h's lock -- a QP handle's send queue, a struct fv_cq * or struct fv_srq * --
 * so that typed calls on h may come from several threads, one at a time, beside the compat
 * calls of other threads. 0; for a QP, EINVAL if this thread holds it already.
 */
#define fv_lock(h) fv__lock_pick(h, fv__lock)(h)

/* fv_unlock(h): release what fv_lock(h) took. 0; EPERM if not held (for a QP: by this thread). */
#define fv_unlock(h) fv__lock_pick(h, fv__unlock)(h)

/*
 * fv_set_lock(h, on): whether h's compat calls lock (1) or not (0), in place of init's default
 * (on, unless MLX5_SINGLE_THREADED=1). Set it before any thread uses h.
 */
#define fv_set_lock(h, on) fv__lock_pick(h, fv__set_lock)(h, on)
#endif

FV__EXTERN_C_END

#ifdef __cplusplus
/* fv_lock, fv_unlock, fv_set_lock as overloads (see the C macros above). */
#define FV__LOCK_OVERLOADS(t, T)                                                                  \
	static inline int fv_lock(T *h) { return fv__lock_##t(h); }                               \
	static inline int fv_unlock(T *h) { return fv__unlock_##t(h); }                           \
	static inline void fv_set_lock(T *h, int on) { fv__set_lock_##t(h, on); }
FV__LOCK_OVERLOADS(qp, struct fv_qp)
FV__LOCK_OVERLOADS(rc, struct fv_rc)
FV__LOCK_OVERLOADS(uc, struct fv_uc)
FV__LOCK_OVERLOADS(ud, struct fv_ud)
FV__LOCK_OVERLOADS(xrc, struct fv_xrc)
FV__LOCK_OVERLOADS(raw, struct fv_raw)
FV__LOCK_OVERLOADS(dci, struct fv_dci)
FV__LOCK_OVERLOADS(cq, struct fv_cq)
FV__LOCK_OVERLOADS(srq, struct fv_srq)
#undef FV__LOCK_OVERLOADS
#endif

#endif /* FASTVERBS_SYNC_H */
