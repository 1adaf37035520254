/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The machinery under the fv_wr_* calls (ibv_wr_post(3); the calls themselves are generated
 * into gen/wr.h from ops.def): a batch, its open WQE, its first error, its rollback.
 *
 *   fv_wr_start    remember the send ring's counters, clear the error
 *   builder        open a WQE: opcode and operands into qp->wr, wr_id and wr_flags read now;
 *                  a WQE still open (a setter missing) is an error. A memory-window builder
 *                  (fv_wr_bind_mw, fv_wr_local_inv) builds its whole WQE at once instead
 *   setters        the destination (UD address, XRC SRQ) and the payload (one per WQE), in
 *                  either order; the payload setter builds the WQE in the ring (build.h) and
 *                  a destination set after it is written over the WQE's placeholder units
 *   fv_wr_complete one doorbell for the batch (BlueFlame for a lone WQE that fits, sq.h), or,
 *                  after any error, the counters of fv_wr_start again and that error
 *
 * libmlx5 44 finalises a WQE (ds, producer) in its last setter as well; its errors (too many
 * SGEs, inline too long, ring full) are latched and returned by ibv_wr_complete, which then
 * rings nothing. Where fastverbs does better (README, Differences): a builder on a full ring
 * writes nothing (libmlx5's setters then write into the WQE before, possibly posted), a
 * missing setter, an extra one and an operation the QP type does not allow are EINVAL.
 * Nothing of a failed batch is visible to the device: it only ever writes past the doorbell
 * record's producer, which stays where it was.
 */
#ifndef FASTVERBS_COMPAT_WR_BATCH_H
#define FASTVERBS_COMPAT_WR_BATCH_H

#include <limits.h>
#include "post_send.h"
#include "wr_raw.h"
#include "wr_inline.h"

FV__EXTERN_C_BEGIN

/* Setters the open WQE still owes (struct fv__wr_batch.need). */
enum { FV__WR_NEED_DATA = 1, FV__WR_NEED_DEST = 2, FV__WR_NEED_STREAM = 4 };

/* A zero address vector: the placeholder of a UD WQE built before its destination is set (fv__wr_req). */
static const struct mlx5_wqe_av fv__wr_no_av = FV__ZERO_INIT;

/*
 * Whether a typed handle calls a payload setter (fv__wr_spent): the setters' argument after the
 * QP type, FV__WR_TYPED(true) from a typed handle's front, FV__WR_TYPED(false) from a struct
 * fv_qp *'s (gen/wr.h). Without FV__WR_CLEAR_SPENT (tune.h) the setters have no such argument:
 * not used, it still moved gcc's inlining in a FV_NO_TUNE build.
 */
#if FV__WR_CLEAR_SPENT
#define FV__WR_TYPED(typed) , typed
#define FV__WR_TYPED_PARAM , bool typed
#else
#define FV__WR_TYPED(typed)
#define FV__WR_TYPED_PARAM
#endif

/*
 * Whether fv_wr_start and fv_wr_complete were handed a typed handle: h's type, not its value
 * (fv__wr_typed, at the end), passed as an argument only where a switch of tune.h asks it.
 * - FV__WR_LATE: a typed handle's fv_wr_complete asks whether the lone WQE fits a BlueFlame
 *   half after the register's lock (FV__DB_LATE, sq.h fv__sq_ring_as); on a struct fv_qp *
 *   gcc's UD loops of 32 lost a register to it (docs/performance.md §3.1).
 * - FV__WR_LEAN: a typed handle's fv_wr_start without locking takes nothing (wr_open 3), so
 *   its batch's end runs no unlock asm, which names the whole QP as memory it writes
 *   (FV__WR_START_LEAN; docs/performance.md §9). On a struct fv_qp * gcc's UD loops rose by it.
 */
#define FV__WR_BY_HANDLE (FV__DB_LATE || FV__WR_START_LEAN)
#if FV__WR_BY_HANDLE
#define FV__WR_HANDLE(h) , fv__wr_typed(h)
#define FV__WR_HANDLE_PARAM , const bool typed
#define FV__WR_HANDLE_TYPED typed
#else
#define FV__WR_HANDLE(h)
#define FV__WR_HANDLE_PARAM
#define FV__WR_HANDLE_TYPED false
#endif
#define FV__WR_LATE (FV__DB_LATE && FV__WR_HANDLE_TYPED)
#define FV__WR_LEAN (FV__WR_START_LEAN && FV__WR_HANDLE_TYPED)

/* The open WQE's groups as a payload setter leaves them (fv__wr_spent). */
static const struct fv__wr_op fv__wr_no_op = FV__ZERO_INIT;
static const struct fv__wr_to fv__wr_no_to = FV__ZERO_INIT;

/*
 * wr_flags as the ctrl's flags, computed (FV__SEND_FM), not looked up as fv_post_send does: the
 * compiler carries what it knows of a caller's wr_flags through it (a loop that sets
 * IBV_SEND_SIGNALED or 0 pays one shift), where a table costs its address and a load.
 */
static FV__ALWAYS_INLINE unsigned fv__wr_flags(unsigned f)
{
	return FV__SEND_FM(f);
}

/* Remember the batch's first error. */
static inline void fv__wr_fail(struct fv_qp *qp, int err)
{
	if (!qp->wr.err)
		qp->wr.err = err;
}

/* The send ring's counters a batch may move, kept by fv_wr_start (struct fv__wr_batch). */
#define FV__WR_KEPT(X) X(pi) X(lim) X(last_pi) X(rung_pi) X(sig_pi) X(fence_cache)
#define FV__WR_KEEP(f)    b->f = sq->f;
#define FV__WR_RESTORE(f) sq->f = b->f;

/*
 * fv_wr_start on a struct fv_qp: takes the send queue (its lock, sync.h) until fv_wr_complete
 * or fv_wr_abort, as libmlx5 does; inside this thread's fv_lock the queue is held already, and
 * stays held after the batch. A second fv_wr_start by the thread of an open batch cannot begin
 * another: it fails the open one instead (its fv_wr_complete returns EINVAL, posting nothing),
 * so no work is posted or dropped unseen.
 */
static inline void fv__wr_start_qp(struct fv_qp *qp FV__WR_HANDLE_PARAM)
{
	const struct fv__sq *sq = &qp->sq;
	struct fv__wr_batch *b = &qp->wr;
	/*
	 * 3: a typed handle's batch without locking takes nothing, its end gives nothing back.
	 * Locking expected, as below: else gcc lays out the unlocked way first (locked rows +1).
	 */
	uint32_t open = FV__WR_LEAN && !__builtin_expect(qp->locking, 1) ? 3 : 1;

	/* wr_open is the holder's: with locking, read it only once the queue is this thread's */
	if (__builtin_expect(qp->locking, 1) ? fv__sq_hold(qp) : qp->wr_open || qp->sq_lock) {
		if (qp->wr_open) {
			FV__ASSERT_MSG(0, "fv_wr_start on a QP whose fv_wr_* batch is open");
			fv__wr_fail(qp, EINVAL);
			return;
		}
		open = 2;	/* inside this thread's fv_lock, which keeps the queue */
	}
	qp->wr_open = open;
	b->err = 0;
	b->need = 0;
	FV__WR_KEPT(FV__WR_KEEP)
}

/* The batch is over, open its wr_open: the send queue goes back, unless fv_lock keeps it. */
static inline void fv__wr_end_as(struct fv_qp *qp, uint32_t open)
{
	qp->wr_open = 0;
	if (open == 1)	/* not 3: a typed handle's batch without locking took nothing */
		fv__sq_drop(qp);	/* without locking the word is 0 already: no test */
}

static inline void fv__wr_end(struct fv_qp *qp)
{
	fv__wr_end_as(qp, qp->wr_open);
}

/*
 * Forget the batch: the counters of fv_wr_start again, and the meta of every block the batch
 * took made stale (end at ci, nothing forced), as fv__sq_set_pi leaves a free slot. Nothing
 * was rung, so the device never saw any of it.
 */
static inline void fv__wr_rollback(struct fv_qp *qp)
{
	struct fv__sq *sq = &qp->sq;
	struct fv__wr_batch *b = &qp->wr;

	struct fv__sq_meta stale = FV__ZERO_INIT;

	stale.end = fv__sq_ci(sq);
	stale.forced = stale.end - 1;
	for (uint32_t i = b->pi; i != sq->pi; i++)
		sq->meta[i & sq->mask] = stale;
	FV__WR_KEPT(FV__WR_RESTORE)
	b->need = 0;
}

/*
 * fv_wr_complete on a struct fv_qp: 0 and one doorbell, or the first error and nothing rung.
 * EINVAL without an open batch (no fv_wr_start, or it was refused).
 */
static FV__ALWAYS_INLINE int fv__wr_complete_qp(struct fv_qp *qp FV__WR_HANDLE_PARAM)
{
	const uint32_t open = qp->wr_open;
	int err;

	if (__builtin_expect(!open, 0)) {
		FV__ASSERT_MSG(0, "fv_wr_complete without fv_wr_start");
		return EINVAL;
	}
	if (qp->wr.need)
		fv__wr_fail(qp, EINVAL);		/* the last WQE lacks a setter */
	err = qp->wr.err;
	if (__builtin_expect(err, 0)) {
		fv__wr_rollback(qp);
		qp->wr.err = 0;
		fv__wr_end(qp);
		return err;
	}
	FV__TEST_YIELD();
	fv__sq_ring_as(&qp->sq, FV__WR_LATE);
	/* a typed handle: wr_open as read above, not loaded again after the doorbell's barrier
	 * (on a struct fv_qp * gcc's UD loops of 32 lost a register to it, docs/performance.md §9) */
	if (FV__WR_LATE)
		fv__wr_end_as(qp, open);
	else
		fv__wr_end(qp);
	return 0;
}

/* fv_wr_abort on a struct fv_qp: the batch is dropped, nothing rung. */
static inline void fv__wr_abort_qp(struct fv_qp *qp)
{
	if (!qp->wr_open) {
		FV__ASSERT_MSG(0, "fv_wr_abort without fv_wr_start");
		return;
	}
	fv__wr_rollback(qp);
	qp->wr.err = 0;
	fv__wr_end(qp);
}

/*
 * A builder on a QP of type qpt: r holds the opcode and operands; wr_id and wr_flags are read
 * now, as libmlx5 reads them in its builders. The WQE needs its payload, and on UD and XRC
 * its destination too. bad: the QP type does not have this call (fv__wr_open_any), tested
 * with need in one branch.
 */
static FV__ALWAYS_INLINE void fv__wr_open_if(struct fv_qp *qp, enum fv_qpt qpt, unsigned bad, const struct fv__req *r)
{
	struct fv__wr_batch *b = &qp->wr;

	if (__builtin_expect(b->need | bad, 0))
		fv__wr_fail(qp, EINVAL);		/* the WQE before lacks a setter, or bad */
	b->op.opcode = r->opcode;
	b->op.segs = r->segs;
	if (fv__op_has_imm(r->opcode))		/* the setter reads only what opcode and segs name */
		b->op.imm = r->imm;
	if (r->segs & FV__SEG_RADDR) {
		b->op.raddr = r->raddr;
		b->op.rkey = r->rkey;
	}
	if (r->segs & FV__SEG_ATOMIC) {
		b->swap_add = r->swap_add;
		b->compare = r->compare;
	}
	if (r->segs & FV__SEG_TSO) {
		b->hdr = r->hdr;
		b->hdr_sz = r->hdr_sz;
		b->mss = r->mss;
	}
	b->op.wr_id = qp->wr_id;
	b->op.flags = fv__wr_flags(qp->wr_flags) | fv__send_csum(qpt, qp->wr_flags);
	b->need = FV__WR_NEED_DATA | (fv__transport_ds(qpt) ? FV__WR_NEED_DEST : 0);
}

/* A builder on a typed handle: its QP type has the call. */
static FV__ALWAYS_INLINE void fv__wr_open(struct fv_qp *qp, enum fv_qpt qpt, const struct fv__req *r)
{
	fv__wr_open_if(qp, qpt, 0, r);
}

/*
 * A builder on a struct fv_qp: allowed is the mask of QP types (1 << enum fv_qpt) it suits.
 * No branch decides what is stored: a call the QP type does not have only marks the batch
 * failed, and its setters build into the ring like any call of a failed batch (rolled back
 * at fv_wr_complete). So the setter after it sees one state, whatever the QP type, and the
 * compiler keeps the ring's fields in registers across a caller's loop.
 */
static FV__ALWAYS_INLINE void fv__wr_open_any(struct fv_qp *qp, unsigned allowed, const struct fv__req *r)
{
	fv__wr_open_if(qp, qp->qpt, ~allowed >> qp->qpt & 1, r);	/* the man page's table */
}

/*
 * Before a setter's switch on a struct fv_qp's QP type: read the fields every arm's build
 * reads. Loads only some arms make may not be moved out of a caller's loop (they might
 * fault where the arm would not run); made here, on every path, they may, and the arm's own
 * loads of the same fields then reuse them. "g": a value kept on the stack is named there,
 * not loaded into a register for the asm alone.
 */
static FV__ALWAYS_INLINE void fv__wr_touch(const struct fv_qp *qp)
{
	const struct fv__sq *sq = &qp->sq;

	FV__USE("g"(sq->ring.buf), "g"(sq->ring.end), "g"(sq->wr_id), "g"(sq->mask8), "g"(sq->qpn_be));
	(void)sq;	/* FV_NO_TUNE: no asm */
}

/*
 * A memory-window builder (fv_wr_bind_mw, fv_wr_local_inv) on a QP of type qpt: r is the
 * whole request but wr_id and flags; no setters follow, so the WQE is built now, as libmlx5
 * builds it in its builder (ENOMEM: no room; EOPNOTSUPP: a bind longer than 2 GiB), and the
 * next WQE gets the initiator fence (build.h; fv_wr_start's counters keep the fence too).
 */
static FV__ALWAYS_INLINE void fv__wr_umr(struct fv_qp *qp, enum fv_qpt qpt, struct fv__req *r)
{
	int err;

	if (qp->wr.need) {
		fv__wr_fail(qp, EINVAL);		/* the WQE before lacks a setter */
		qp->wr.need = 0;
	}
	r->wr_id = qp->wr_id;
	r->flags = fv__send_flags(qp->wr_flags);
	r->payload = FV__PL_NONE;
	err = fv__build_any(qp, qpt, r);	/* also after an earlier error: rolled back anyway */
	if (__builtin_expect(err, 0))
		fv__wr_fail(qp, err);
}

/*
 * A memory-window builder on a struct fv_qp: allowed as in fv__wr_open_any. The UMR WQE has
 * no transport segment (no UD address, no XRC SRQ), so one QP type stands for all allowed.
 */
static FV__ALWAYS_INLINE void fv__wr_umr_any(struct fv_qp *qp, unsigned allowed, struct fv__req *r)
{
	if (__builtin_expect(!(allowed >> qp->qpt & 1), 0)) {
		fv__wr_fail(qp, EINVAL);		/* the man page's table: not on this QP type */
		qp->wr.need = 0;
		return;
	}
	fv__wr_umr(qp, FV_QPT_RC, r);
}

/* The open WQE as a request, without its payload. */
static FV__ALWAYS_INLINE struct fv__req fv__wr_req(const struct fv_qp *qp, enum fv_qpt qpt)
{
	const struct fv__wr_batch *b = &qp->wr;
	struct fv__req r = FV__ZERO_INIT;

	r.wr_id = b->op.wr_id;
	r.flags = b->op.flags;
	r.opcode = b->op.opcode;
	r.segs = b->op.segs;
	r.imm = fv__op_has_imm(b->op.opcode) ? b->op.imm : 0;
	r.sge_len = true;
	if (b->op.segs & FV__SEG_RADDR) {
		r.raddr = b->op.raddr;
		r.rkey = b->op.rkey;
	}
	if (b->op.segs & FV__SEG_ATOMIC) {
		r.swap_add = b->swap_add;
		r.compare = b->compare;
	}
	if (b->op.segs & FV__SEG_TSO) {
		r.hdr = b->hdr;
		r.hdr_sz = b->hdr_sz;
		r.mss = b->mss;
	}
	if (qpt == FV_QPT_UD || qpt == FV_QPT_DCI) {	/* the AV's bytes 0-15 as two words */
		r.av = b->need & FV__WR_NEED_DEST ? &fv__wr_no_av : b->to.av;	/* no store of it per builder */
		r.av_word = true;
		r.av_w = b->to.av_w;
		r.remote_qpn = (uint32_t)(b->to.av_w >> 32);	/* with the extended-AV bit, which it gets anyway */
		r.qkey = b->to.qkey;
		r.dc_key = (uint64_t)b->to.qkey << 32 | b->to.key_lo;	/* a UD QP's Q_Key as a DCI's key */
	}
	if (qpt == FV_QPT_XRC)
		r.srqn = b->to.srqn;
	return r;
}

/*
 * A DCI WQE's stream (fv_wr_set_dc_addr_stream) into its ctrl at wqe, bytes 9-10, which every
 * builder leaves 0 as libmlx5's do. Not in the request: a test of need, which the payload
 * setter has in a register, costs a UD WQE on the same arm (gen/wr.h) less than a load.
 */
static inline void fv__wr_dc_stream(uint8_t *wqe, uint16_t stream)
{
	fv__ctrl_stream_put(wqe, htobe16(stream));
}

/*
 * The open WQE's fields, once its payload setter has read them, cleared: nothing reads them
 * again (a destination set after the payload brings its own, the next builder stores them
 * anew). In a caller's loop gcc then drops the stores the builder and the destination setter
 * made of them, and clears each group with a vector store or two (FV__WR_CLEAR_SPENT, tune.h;
 * docs/performance.md §9). Only on a typed handle: on a struct fv_qp * the destination is
 * stored on one arm of the QP type's tests, which the clearing does not follow, and every
 * such loop rose (2 to 17 a WR).
 */
static FV__ALWAYS_INLINE void fv__wr_spent(struct fv_qp *qp, enum fv_qpt qpt)
{
	struct fv__wr_batch *b = &qp->wr;

	b->op = fv__wr_no_op;
	if (fv__transport_ds(qpt) == 3)
		b->to = fv__wr_no_to;
	else if (fv__transport_ds(qpt))
		b->to.srqn = 0;
}

/*
 * The payload setter: r is the open WQE with its payload; err a mistake the setter found
 * (ENOMEM: too many SGEs, inline too long). Builds the WQE (ENOMEM: no room in the ring).
 */
static FV__ALWAYS_INLINE void fv__wr_payload(struct fv_qp *qp, enum fv_qpt qpt FV__WR_TYPED_PARAM,
					   const struct fv__req *r, int err)
{
	const unsigned need = qp->wr.need;

	/*
	 * Stored first, on every path: right after the builder's store of need, which the
	 * compiler then drops in a caller's loop.
	 */
	qp->wr.need = need & ~(unsigned)(FV__WR_NEED_DATA | FV__WR_NEED_STREAM);
#if FV__WR_CLEAR_SPENT
	if (typed)
		fv__wr_spent(qp, qpt);
#endif
	if (!(need & FV__WR_NEED_DATA)) {
		fv__wr_fail(qp, EINVAL);		/* no builder before it, or a second payload */
		return;
	}
	if (err)
		;
	else if (qpt == FV_QPT_RAW && (r->payload == FV__PL_SGL || r->payload == FV__PL_INLINE) && r->nsge == 1)
		err = fv__raw_build_one(qp, r);		/* no call: see compat/wr_raw.h */
	else if (r->payload == FV__PL_INLINE && r->nsge == 1)
		err = fv__wr_inline_build(qp, qpt, r);	/* no call: see compat/wr_inline.h */
	else	/* also after an earlier error: the batch is rolled back anyway */
		err = fv__build_any(qp, qpt, r);
	if (__builtin_expect(err, 0))
		fv__wr_fail(qp, err);
	else if (qpt == FV_QPT_DCI && (need & FV__WR_NEED_STREAM))
		fv__wr_dc_stream(fv__sq_wqe(&qp->sq, qp->sq.last_pi), qp->wr.stream);	/* its destination came first */
}

/* The payload setters (fv_wr_set_sge, _sge_list, _inline_data, _inline_data_list) on a QP of type qpt. */
static FV__ALWAYS_INLINE void fv__wr_sge_at(struct fv_qp *qp, enum fv_qpt qpt FV__WR_TYPED_PARAM, uint32_t lkey,
					  uint64_t addr, uint32_t length)
{
	struct ibv_sge s = { addr, length, lkey };
	struct fv__req r = fv__wr_req(qp, qpt);

	r.payload = FV__PL_SGL;
	r.sgl = &s;
	r.nsge = 1;
	fv__wr_payload(qp, qpt FV__WR_TYPED(typed), &r, 0);
}

static FV__ALWAYS_INLINE void fv__wr_sge_list_at(struct fv_qp *qp, enum fv_qpt qpt FV__WR_TYPED_PARAM,
					       size_t num_sge, const struct ibv_sge *sg_list)
{
	struct fv__req r = fv__wr_req(qp, qpt);

	r.payload = FV__PL_SGL;
	r.sgl = sg_list;
	r.nsge = (int)num_sge;
	fv__wr_payload(qp, qpt FV__WR_TYPED(typed), &r, num_sge > qp->max_send_sge ? ENOMEM : 0);
}

static FV__ALWAYS_INLINE void fv__wr_inline_at(struct fv_qp *qp, enum fv_qpt qpt FV__WR_TYPED_PARAM, const void *addr,
					     size_t length)
{
	struct ibv_sge s = { (uintptr_t)addr, (uint32_t)length, 0 };
	struct fv__req r = fv__wr_req(qp, qpt);

	r.payload = FV__PL_INLINE;
	r.sgl = &s;
	r.nsge = 1;
	r.len = (uint32_t)length;
	fv__wr_payload(qp, qpt FV__WR_TYPED(typed), &r, length > qp->max_inline ? ENOMEM : 0);
}

static FV__ALWAYS_INLINE void fv__wr_inline_list_at(struct fv_qp *qp, enum fv_qpt qpt FV__WR_TYPED_PARAM,
						  size_t num_buf, const struct ibv_data_buf *buf_list)
{
	struct fv__req r = fv__wr_req(qp, qpt);
	size_t total = 0;
	int err = num_buf > INT_MAX ? ENOMEM : 0;

	for (size_t i = 0; i < num_buf && !err; i++) {	/* no sum that can wrap */
		if (buf_list[i].length > qp->max_inline - total)
			err = ENOMEM;
		else
			total += buf_list[i].length;
	}
	r.payload = FV__PL_INLINE_BUFS;
	r.bufs = buf_list;
	r.nsge = (int)num_buf;
	r.len = (uint32_t)total;
	fv__wr_payload(qp, qpt FV__WR_TYPED(typed), &r, err);
}

/*
 * The destination setter of a UD (av, remote_qpn, qkey), DCI (av, DCT number, dc_key, stream)
 * or XRC (srqn) WQE. Before the payload it goes into the open WQE; after it, over the WQE's
 * destination units (the first block, right after the ctrl: never past the ring end).
 */
static FV__ALWAYS_INLINE void fv__wr_dest(struct fv_qp *qp, enum fv_qpt qpt, const struct mlx5_wqe_av *av,
					uint64_t av_w, uint32_t qkey, uint32_t srqn, uint64_t dc_key, uint16_t stream)
{
	struct fv__wr_batch *o = &qp->wr;
	const unsigned need = qp->wr.need;
	const bool bad = !(need & FV__WR_NEED_DEST) || ((qpt == FV_QPT_UD || qpt == FV_QPT_DCI) && !av);

	/* first: as in fv__wr_payload; a DCI's stream, set before the payload, is owed by it */
	qp->wr.need = bad ? need : (need & ~(unsigned)FV__WR_NEED_DEST) |
				   (qpt == FV_QPT_DCI && stream && (need & FV__WR_NEED_DATA) ? FV__WR_NEED_STREAM : 0);
	if (bad) {
		fv__wr_fail(qp, EINVAL);		/* no builder, a second destination, no mlx5 AH */
		return;
	}
	o->to.av = av;
	o->to.av_w = av_w;
	if (qpt == FV_QPT_DCI) {	/* the key in the Q_Key's place and key_lo (qp.h) */
		o->to.key_lo = (uint32_t)dc_key;
		o->to.qkey = (uint32_t)(dc_key >> 32);
		if (stream)	/* read only when FV__WR_NEED_STREAM says so */
			o->stream = stream;
	} else {
		o->to.qkey = qkey;
		o->to.srqn = srqn;
	}
	if ((need & FV__WR_NEED_DATA) || qp->wr.err)	/* need as read: the builder's, known in a caller's loop */
		return;

	uint8_t *p = fv__sq_wqe(&qp->sq, qp->sq.last_pi) + FV__DS;
	struct fv__image u[3];
	unsigned n = 1;

	if (qpt == FV_QPT_UD || qpt == FV_QPT_DCI) {
		u[0] = qpt == FV_QPT_UD ? fv__av_head_image(qkey, av_w) : fv__dc_head_image(dc_key, av_w);
		u[1] = fv__av_unit(av, 1);
		u[2] = fv__av_unit(av, 2);
		n = 3;
		if (qpt == FV_QPT_DCI && stream)
			fv__wr_dc_stream(p - FV__DS, stream);
	} else {
		u[0] = fv__xrc_image(srqn);
	}
	for (unsigned i = 0; i < n; i++)
		fv__unit_put(p + i * FV__DS, u[i], FV__VEC);
}

/*
 * A destination setter on a struct fv_qp * of a QP type without it: the batch fails, and the
 * open WQE is left as the setter's success leaves it (its destination no longer owed, the AV
 * the zero placeholder, never a stale pointer a UD or DCI payload setter would read), so that
 * need is one value after the setter on every arm and a caller's loop folds its tests. The
 * first error kept by a select, not fv__wr_fail's branch (docs/performance.md §2: gcc's
 * registers in the slow path of loop (f)'s SEND).
 */
static FV__ALWAYS_INLINE void fv__wr_dest_refused(struct fv_qp *qp)
{
	qp->wr.to.av = &fv__wr_no_av;
	qp->wr.need &= ~(unsigned)FV__WR_NEED_DEST;
	qp->wr.err = qp->wr.err ? qp->wr.err : EINVAL;
}

/*
 * The datagram segment's bytes 8-15 for av and remote_qpn, as one big-endian number: an fv_ah
 * keeps them so (fv__ah_av_word), a verbs AH's AV has its bytes 12-15. Made here, where the
 * caller's kind of AH is known: the payload setter then takes one form, one swap.
 */
static FV__ALWAYS_INLINE uint64_t fv__wr_av_word(const struct mlx5_wqe_av *av, bool av_fv, uint32_t remote_qpn)
{
	uint32_t rest;

	if (av_fv)
		return fv__ah_av_word(av, remote_qpn);
	memcpy(&rest, (const uint8_t *)av + 12, sizeof(rest));
	return (uint64_t)(remote_qpn | MLX5_EXTENDED_UD_AV) << 32 | be32toh(rest);
}

/* fv_wr_set_ud_addr's address: an fv_ah (fah), or a verbs AH (ibah) looked up as fv_post_send does. */
static FV__ALWAYS_INLINE void fv__wr_ud_addr_at(struct fv_qp *qp, const struct fv_ah *fah, struct ibv_ah *ibah,
					      uint32_t remote_qpn, uint32_t remote_qkey)
{
	const struct mlx5_wqe_av *av = fah ? &fah->av : ibah ? fv__qp_av(qp, ibah) : NULL;

	fv__wr_dest(qp, FV_QPT_UD, av, av ? fv__wr_av_word(av, fah != NULL, remote_qpn) : 0, remote_qkey, 0, 0, 0);
}

/*
 * fv_wr_set_dc_addr(_stream)'s address: the AV as for UD (fah or ibah), its bytes 8-15 with the
 * DCT number (libmlx5's set_dc_addr: the AH's AV, the DCT number or-ed into its bytes 8-11 with
 * the extended bit, the key over bytes 0-7).
 */
static FV__ALWAYS_INLINE void fv__wr_dc_addr_at(struct fv_qp *qp, const struct fv_ah *fah, struct ibv_ah *ibah,
					      uint32_t dctn, uint64_t dc_key, uint16_t stream)
{
	const struct mlx5_wqe_av *av = fah ? &fah->av : ibah ? fv__qp_av(qp, ibah) : NULL;

	fv__wr_dest(qp, FV_QPT_DCI, av, av ? fv__wr_av_word(av, fah != NULL, dctn) : 0, 0, 0, dc_key, stream);
}

/* The struct fv_qp of a struct fv_qp * (fv__wr_qp). */
static inline struct fv_qp *fv__qp_wr_qp(struct fv_qp *qp)
{
	return qp;
}

FV__EXTERN_C_END

/* Whether h is a typed handle, not a struct fv_qp *: from its type alone, h not evaluated. */
#ifdef __cplusplus
char fv__wr_tag(struct fv_qp *);
long fv__wr_tag(const void *);
#define fv__wr_typed(h) (sizeof(fv__wr_tag(h)) != 1)
#else
#define fv__wr_typed(h) _Generic((h), struct fv_qp *: false, default: true)
#endif

/* fv_wr_set_ud_addr's ah argument as one of two pointers, the other NULL (a constant; C++: overloads, wr.h). */
#define FV__WR_FV_AH(ah)  _Generic((ah), struct ibv_ah *: (const struct fv_ah *)0, default: (ah))
#define FV__WR_IBV_AH(ah) _Generic((ah), struct ibv_ah *: (ah), default: (struct ibv_ah *)0)

/* The handle, first of a front's arguments (a builder may have no others). */
#define FV__WR_H(...) FV__WR_H_(__VA_ARGS__, 0)
#define FV__WR_H_(h, ...) (h)

#endif /* FASTVERBS_COMPAT_WR_BATCH_H */
