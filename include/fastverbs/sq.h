/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The send ring: producer/consumer counters in WQEBBs, free space, per-slot wr_id and end,
 * signalling policy, fence cache and the doorbell.
 *
 *   ci ........ rung_pi ........ last_pi ...... pi ........ lim     (32-bit WQEBB counters)
 *   |retired    |device told     |last WQE built |next free  |fast path ends
 *
 * The device gets only the low 16 bits (ctrl WQE index, doorbell record).
 *
 * Building a WQE costs one test beyond its stores: does it end at or before lim? lim is the
 * nearer of ci + ring size (room, as of the last look at ci) and sig_pi + unsig_max (where
 * the unsignaled run would need a forced completion); a cached fence sets it to pi. Past lim,
 * fv__sq_take_slow() decides with the live ci and moves lim on. ci only grows, so a stale lim is
 * merely early. An sq_sig_all QP has no unsignaled run (unsig_max 0), so lim stays at pi: every
 * WQE takes the slow path, and the typed builders' fast path needs no sig_all term in its flags
 * word (one register and one OR less per WR in a caller's loop; a QP that asks for a completion
 * on every WQE pays far more for those completions). pi <= lim <= pi + ring size always: only
 * fv__sq_set_pi, fv__sq_cache_fence and fv__sq_take_slow set lim, so set the counters and the
 * fence through them.
 */
#ifndef FASTVERBS_SQ_H
#define FASTVERBS_SQ_H

#include <errno.h>
#include "arch.h"
#include "lock.h"
#include "registry.h"
#include "wqe.h"

FV__EXTERN_C_BEGIN

/* Per-WQE flags of the typed API: they are the control segment's fm_ce_se bits. */
enum {
	FV_SIGNALED  = MLX5_WQE_CTRL_CQ_UPDATE,	/* ask for a completion */
	FV_SOLICITED = MLX5_WQE_CTRL_SOLICITED,	/* solicited event at the responder */
	FV_FENCE     = MLX5_WQE_CTRL_FENCE,	/* wait for earlier READ/atomic responses */
	FV_IP_CSUM   = 0x100,	/* raw Ethernet: the device fills in IPv4 and TCP/UDP checksums
				 * (no ctrl bit: the Ethernet segment's cs_flags; ignored elsewhere) */
};

/* A slot's wr_id, written through this type only (like a WQE, see struct fv__unit). */
struct fv__wr_id {
	uint64_t v;
};

/*
 * Per slot (a WQE's first WQEBB), for the completion that names the WQE: its end, written
 * only when a completion is asked for (FV_SIGNALED, or forced by fastverbs), so an
 * unsignaled WQE costs no store here; a stale end is told apart by where it lies (fv__sq_end).
 */
struct fv__sq_meta {
	uint32_t end;		/* the counter just past the WQE: ci once it completes */
	uint32_t forced;	/* == end: fastverbs asked for this completion itself (the caller did
				 * not); written only when that happens, by fv__sq_take_slow */
};

/*
 * Between the two stores of a forced completion's meta (fv__sq_take_slow): gcc would pair
 * them into one vector store typed as their field alone, which may alias every uint32_t of a
 * struct fv_qp, so a caller's loop would read the ring's counters again after it. With m
 * hidden from it, the two stores stay the struct's. clang does not pair them (FV__META_APART,
 * tune.h).
 */

/* A slot's meta, stored whole (as in FV__IMAGE, wqe.h: a compound literal in C only). */
#ifdef __cplusplus
static inline struct fv__sq_meta fv__sq_meta_of(uint32_t end, uint32_t forced)
{
	struct fv__sq_meta m = { end, forced };

	return m;
}
#define FV__SQ_META(end, forced) fv__sq_meta_of(end, forced)
#else
#define FV__SQ_META(end_, forced_) ((struct fv__sq_meta){ .end = (end_), .forced = (forced_) })
#endif

/* A UD SEND of one SGE in 16-byte units: the ctrl, the datagram segment (3), the data segment. */
#define FV__UD_DS1 5u

/*
 * Building a WQE (inline payloads aside) stores only into the ring (through fastverbs' own
 * types, see wqe.h), the wr_id and meta tables (likewise) and 32-bit counters of this struct,
 * and calls nothing: the compiler can tell those stores apart and need not reload the
 * struct's fields, or the caller's request, after them (so no uint8_t fields either: a char
 * may alias anything).
 */
struct fv__sq {
	/* Building a WQE (the typed builders read all of these up front): */
	struct fv_ring ring;
	struct fv__wr_id *wr_id;	/* per slot: the caller's wr_id */
	struct fv__sq_meta *meta;	/* per slot */
	uint32_t mask;		/* WQEBBs in the ring - 1 */
	uint32_t mask8;		/* mask * 8: (pi * 8) & mask8 is a slot's offset in the wr_id table,
				 * and an eighth of its WQE's offset in the ring */
	uint32_t pi;		/* WQEBBs built */
	uint32_t lim;		/* WQEs that end at or before lim take the fast path (see top) */
	uint32_t last_pi;	/* first WQEBB of the last WQE built */
	/* With the three above, what fv_wr_start keeps (FV__WR_KEPT): side by side, one copy */
	uint32_t rung_pi;	/* pi at the last doorbell */
	uint32_t sig_pi;	/* pi just past the last WQE known to ask for a completion */
	uint32_t fence_cache;	/* fence the next WQE owes to a local-invalidate / bind */
	__be32 qpn_be;		/* htobe32(qpn << 8): the ctrl's qpn_ds word without ds */
	__be32 sig_all;		/* FV_SIGNALED when the QP was created with sq_sig_all, as in fm_be */
	/* Ringing: */
	uint32_t bf_nbb;	/* WQEBBs in one BlueFlame half (0: 8-byte doorbells only): a lone
				 * WQE in as many blocks or fewer goes by BlueFlame */
	__be32 qpn_ds_ud;	/* qpn_be | htobe32(FV__UD_DS1): a typed UD SEND's, in the padding
				 * before bf (build.h fv__build_fast_at) */
	struct fv__bf *bf;	/* the register as the process's QPs share it: the half the next
				 * doorbell writes, and the lock around it (registry.h) */
	uintptr_t bf_toggle;	/* bf->cur ^= bf_toggle moves it to the other half */
	volatile __be32 *dbrec;	/* send doorbell record (dbrec[MLX5_SND_DBR]) */
	/* Completions and the slow path: */
	uint32_t ci;		/* WQEBBs the device is known to be done with: written by the poller,
				 * read by the poster, both atomically (fv__sq_ci, fv__sq_set_ci) */
	uint32_t unsig_max;	/* longest unsignaled run before fastverbs asks for a completion */
};

/* WQEBBs a WQE of ds units occupies. */
static inline unsigned fv__ds_to_bb(unsigned ds)
{
	return (ds + 3) / 4;
}

/*
 * ci as the poster reads it: a poller in another thread may move it. Acquire: what the poller
 * read of a slot (its wr_id, meta, WQE) came before it freed the slot.
 */
static inline uint32_t fv__sq_ci(const struct fv__sq *sq)
{
	return fv__load_acquire(&sq->ci);
}

/*
 * The poller frees the WQEBBs before ci for the poster. Release: call it after the last read
 * of the freed slots (wr_id, meta, the WQE itself), which the poster may overwrite from then on.
 */
static FV__ALWAYS_INLINE void fv__sq_set_ci(struct fv__sq *sq, uint32_t ci)
{
	__atomic_store_n(&sq->ci, ci, __ATOMIC_RELEASE);
}

/* Free WQEBBs with the producer at pi: ring size minus what the device may still read. */
static inline uint32_t fv__sq_room_at(const struct fv__sq *sq, uint32_t pi)
{
	return sq->mask + 1 - (pi - fv__sq_ci(sq));
}

/* Free WQEBBs. */
static inline uint32_t fv__sq_room(const struct fv__sq *sq)
{
	return fv__sq_room_at(sq, sq->pi);
}

/*
 * Where the WQE that starts at counter pi goes: its first block, and its wr_id. Both come
 * from (pi * 8) & mask8, which x86 scales by 8 (and by 1) in the address itself.
 */
static inline uint8_t *fv__sq_wqe(const struct fv__sq *sq, uint32_t pi)
{
	return sq->ring.buf + (size_t)((pi * 8) & sq->mask8) * 8;
}

static FV__ALWAYS_INLINE struct fv__wr_id *fv__sq_wr_id_at(struct fv__wr_id *wr_ids, uint32_t mask8, uint32_t pi)
{
	return (struct fv__wr_id *)((uint8_t *)wr_ids + ((pi * 8) & mask8));
}

static inline struct fv__wr_id *fv__sq_wr_id_of(const struct fv__sq *sq, uint32_t pi)
{
	return fv__sq_wr_id_at(sq->wr_id, sq->mask8, pi);
}

/* Address of the next WQE's first block. */
static inline uint8_t *fv__sq_next_wqe(const struct fv__sq *sq)
{
	return fv__sq_wqe(sq, sq->pi);
}

/* Whether a WQE of nbb blocks at pi ends at or before lim: the fast side (see top). */
static FV__ALWAYS_INLINE bool fv__sq_before_lim(uint32_t lim, uint32_t pi, unsigned nbb)
{
	return nbb <= lim - pi;	/* pi <= lim <= pi + ring size */
}

/*
 * The ctrl's fm_ce_se word as stored (big-endian, at byte 8) for the typed flags. They are
 * its low byte, so on a little-endian host a shift makes the word, not a byte swap: a flag
 * decided per WR (FV_SIGNALED every n-th) then costs the test's setcc and one shift.
 */
static inline __be32 fv__sq_fm_be(unsigned flags)
{
	uint32_t fm = flags & (FV_SIGNALED | FV_SOLICITED | FV_FENCE);

#if __BYTE_ORDER == __LITTLE_ENDIAN
	return fm << 24;
#else
	return fm;
#endif
}

/* The ctrl's big-endian word at byte 8 for a WQE built with flags: fm_ce_se, sq_sig_all included. */
static FV__ALWAYS_INLINE __be32 fv__sq_fm(const struct fv__sq *sq, unsigned flags)
{
	return fv__sq_fm_be(flags) | sq->sig_all;
}

/* The WQE of nbb blocks at pi asks for a completion: keep its end for it (fv__sq_end). */
static FV__ALWAYS_INLINE void fv__sq_mark_end(struct fv__sq *sq, uint32_t pi, unsigned nbb)
{
	sq->meta[pi & sq->mask].end = pi + nbb;
}

/*
 * The ring's invariants (see top), checked with -DFV_DEBUG (FV__ASSERT): the device may hold at
 * most the ring, pi <= lim <= pi + ring size, and the last WQE built lies before pi.
 */
static FV__ALWAYS_INLINE void fv__sq_check(const struct fv__sq *sq)
{
	(void)sq;
	FV__ASSERT(sq->pi - fv__sq_ci(sq) <= sq->mask + 1);
	FV__ASSERT(sq->lim - sq->pi <= sq->mask + 1);
	FV__ASSERT(sq->pi - sq->last_pi - 1 <= sq->mask);
}

/* The nearer of the two limits of the fast path (see top), both at or past the producer pi. */
static inline uint32_t fv__sq_lim_at(const struct fv__sq *sq, uint32_t pi)
{
	uint32_t room_end = fv__sq_ci(sq) + sq->mask + 1, run_end = sq->sig_pi + sq->unsig_max;

	return room_end - pi < run_end - pi ? room_end : run_end;
}

static inline uint32_t fv__sq_lim(const struct fv__sq *sq)
{
	return fv__sq_lim_at(sq, sq->pi);
}

/*
 * An empty ring whose counters all start at pi (taking a QP over; tests start anywhere).
 * Every slot's meta is stale (end at or before ci) and marks nothing forced.
 */
static inline void fv__sq_set_pi(struct fv__sq *sq, uint32_t pi)
{
	sq->pi = sq->ci = sq->rung_pi = sq->sig_pi = pi;
	sq->last_pi = pi - 1;	/* not rung_pi: fv__sq_ring takes that for a WQE to ring */
	sq->lim = fv__sq_lim(sq);
	for (uint32_t i = 0; i <= sq->mask; i++)
		sq->meta[i] = FV__SQ_META(pi, pi - 1);
}

/*
 * A test of the BlueFlame register's lock looks at the register while the lock is held, and
 * runs a negative control without it: it defines (before including fastverbs)
 * FV__TEST_BF_NOLOCK, true when the lock is to be left out, and FV__TEST_BF_RUNG(sq, reg, nbb),
 * called with the half and the blocks copied to it (0: an 8-byte doorbell), which returns reg.
 */
#ifndef FV__TEST_BF_NOLOCK
#define FV__TEST_BF_NOLOCK 0
#endif
#ifndef FV__TEST_BF_RUNG
#define FV__TEST_BF_RUNG(sq, reg, nbb) (reg)
#endif

/*
 * The register's lock (lock.h): its word is the next half, 0 while a doorbell holds it, and its
 * critical section the record. Taking it yields the half to write; giving it back stores the
 * next one.
 */
static FV__ALWAYS_INLINE uintptr_t fv__bf_take(struct fv__bf *bf)
{
	uintptr_t reg;

	if (FV__TEST_BF_NOLOCK)
		return bf->cur;
	fv__take_word(&bf->cur, reg, bf);
	return reg;
}

static FV__ALWAYS_INLINE void fv__bf_give(struct fv__bf *bf, uintptr_t next)
{
	if (FV__TEST_BF_NOLOCK)
		bf->cur = next;
	else
		fv__give_word(&bf->cur, next, bf);
}

#ifdef FV__DB_CHAIN
/*
 * The doorbell chain's first and last links with the register's lock (arch.h, FV__DB_CHAIN):
 * asms that are not volatile, so clang does not take the lock for a store to all memory. The
 * first reads memory of unknown extent (the barrier, as fv__db_start's), stores the doorbell
 * record val at rec, takes the lock (the exchange orders the record before the register's
 * stores: no sfence) and returns the half to write. The last stores the next half and
 * releases the lock; it passes pi on, which the caller stores, so it is neither dropped nor
 * moved before the flush whose result it stores. The stores to the record are not declared:
 * the program reads it only through what these return.
 */
static FV__ALWAYS_INLINE uintptr_t fv__db_start_locked(volatile void *rec, uint32_t val, struct fv__bf *bf)
{
	uintptr_t reg;

	if (FV__TEST_BF_NOLOCK)
		return fv__db_start(rec, val, ((volatile struct fv__bf *)bf)->cur);
	__asm__("# fv__dma_wmb_sq\n\t"
		"movl %k[val], %[rec]\n"
		"1:\txorl %k[reg], %k[reg]\n\t"
		"xchgq %[reg], %c[co](%[bf])\n\t"
		"testq %[reg], %[reg]\n\t"
		"jnz 3f\n"
		"2:\tpause\n\t"
		"cmpq $0, %c[co](%[bf])\n\t"
		"je 2b\n\t"
		"jmp 1b\n"
		"3:"
		: [reg] "=&r"(reg)
		: [rec] "m"(*(const char *)fv__untraced((const void *)(uintptr_t)rec)), [val] "r"(val),
		  [bf] "r"(bf), [co] "i"(offsetof(struct fv__bf, cur))
		: "cc");
	return reg;
}

static FV__ALWAYS_INLINE uint32_t fv__db_unlock(struct fv__bf *bf, uintptr_t next, uint32_t pi)
{
	if (FV__TEST_BF_NOLOCK) {
		((volatile struct fv__bf *)bf)->cur = next;
		return pi;
	}
	__asm__("movq %[n], %c[co](%[bf])"
		: "+r"(pi)
		: [bf] "r"(bf), [n] "r"(next), [co] "i"(offsetof(struct fv__bf, cur)));
	return pi;
}
#endif

/*
 * The WQE just built rings with an 8-byte doorbell even when lone: one of ds 1 (a NOP, a SEND
 * without data), as in libmlx5. The doorbell mark moves back one block, so fv__sq_ring takes
 * it for part of a batch; the ring costs no test for it.
 */
static inline void fv__sq_no_bf(struct fv__sq *sq)
{
	sq->rung_pi--;
}

/* The next WQE owes fm (an initiator fence) to the one before; FV_FENCE on it overrides. */
static inline void fv__sq_cache_fence(struct fv__sq *sq, uint8_t fm)
{
	sq->fence_cache = fm;
	sq->lim = sq->pi;	/* so the next WQE takes the slow path, which applies it */
}

/*
 * fv__sq_take past lim, for a WQE at pi (the producer; sq->pi is not read, so a builder may
 * have moved it on already): room from the live ci, the cached fence, and the unsignaled run:
 * one longer than unsig_max WQEBBs gets a completion fastverbs asks for itself (marked forced
 * in its meta, and hidden when polling), so ci can always advance and the ring always drains.
 * Inline, not called: a call would make the compiler forget the ring's fields (FV__SLOW_INLINE,
 * tune.h).
 */
static FV__SLOW_INLINE bool fv__sq_take_slow(struct fv__sq *sq, uint32_t pi, unsigned nbb, __be32 *fm_be)
{
	uint32_t end = pi + nbb, fm = be32toh(*fm_be);

	if (nbb > fv__sq_room_at(sq, pi))
		return false;
	if (!(fm & FV_FENCE))
		fm |= sq->fence_cache;
	sq->fence_cache = 0;
	if (!(fm & FV_SIGNALED) && end - sq->sig_pi > sq->unsig_max) {
		struct fv__sq_meta *m = &sq->meta[pi & sq->mask];

		fm |= FV_SIGNALED;
		m->end = end;	/* field by field: clang takes a whole struct's store for a char one */
		FV__META_APART(m);
		m->forced = end;
	}
	if (fm & FV_SIGNALED)
		sq->sig_pi = end;
	sq->lim = fv__sq_lim_at(sq, pi);
	*fm_be = htobe32(fm);
	return true;
}


/*
 * Take the nbb blocks at pi (the producer) for a WQE built with flags; its fm_ce_se goes to
 * *fm_be as the ctrl segment's big-endian word at byte 8 (signature and stream id 0): built
 * that way, a WQE needs no byte swap for it. Returns false, changing nothing, if the ring has
 * no room. FENCE overrides a cached initiator fence, as in libmlx5. Call right before writing
 * the WQE: it takes the cached fence and a place in the unsignaled run.
 */
static inline bool fv__sq_take_at(struct fv__sq *sq, uint32_t pi, unsigned flags, unsigned nbb, __be32 *fm_be)
{
	*fm_be = fv__sq_fm(sq, flags);
	if (__builtin_expect(!fv__sq_before_lim(sq->lim, pi, nbb), 0))
		return fv__sq_take_slow(sq, pi, nbb, fm_be);
	/* No sq_sig_all WQE gets here: such a QP's lim stays at pi (top). */
	if (flags & FV_SIGNALED)
		sq->sig_pi = pi + nbb;
	return true;
}

/* fv__sq_take_at the producer. */
static inline bool fv__sq_take(struct fv__sq *sq, unsigned flags, unsigned nbb, __be32 *fm_be)
{
	return fv__sq_take_at(sq, sq->pi, flags, nbb, fm_be);
}

/*
 * The WQE of nbb blocks at pi, built with flags, is written: keep its wr_id, and its end when
 * a completion is asked for. The producer stays (fv__sq_advance moves it).
 */
static inline void fv__sq_record(struct fv__sq *sq, uint32_t pi, uint64_t wr_id, unsigned flags,
				unsigned nbb)
{
	fv__sq_wr_id_of(sq, pi)->v = wr_id;
	if (flags & FV_SIGNALED)
		fv__sq_mark_end(sq, pi, nbb);
}

/*
 * Move the producer past the WQE of nbb blocks built at pi. The builders do it in one place
 * whichever way they built the WQE: one store of each counter a WQE. gcc 12 does not keep them
 * in registers across a caller's loop, and made to, it was slower (docs/performance.md §1.2).
 */
static inline void fv__sq_advance(struct fv__sq *sq, uint32_t pi, unsigned nbb)
{
	sq->last_pi = pi;
	sq->pi = pi + nbb;
	fv__sq_check(sq);
}

/* fv__sq_record and fv__sq_advance for the WQE at the producer. */
static inline void fv__sq_commit(struct fv__sq *sq, uint64_t wr_id, unsigned flags, unsigned nbb)
{
	uint32_t pi = sq->pi;

	fv__sq_record(sq, pi, wr_id, flags, nbb);
	fv__sq_advance(sq, pi, nbb);
}

/* A lone WQE (the only one since the last doorbell) that fits one BlueFlame half: copied whole. */
static FV__ALWAYS_INLINE bool fv__sq_bf_fits(const struct fv__sq *sq, int32_t since, uint32_t nbb)
{
	return since == 0 && nbb <= sq->bf_nbb;
}

/*
 * Tell the device about everything built since the last doorbell (docs/design.md §3.2):
 * WQE stores -> DMA barrier -> doorbell record -> register lock (the WC start) -> BlueFlame
 * copy of a lone WQE that fits one BF half, else the 8-byte doorbell of the last WQE -> WC
 * flush -> next half -> unlock. Where the last WQE starts, against the last doorbell, says it
 * all: at it, the WQE is lone; before it, nothing is new; past it, a batch. Always inlined:
 * right after a build, the compiler still knows the last WQE's place.
 *
 * The register may serve other QPs of the process, posted from other threads (libmlx5 hands
 * one register to several QPs): the lock keeps their copies from interleaving in one half,
 * and the half alternates per register. The flush stays inside the lock, so that one
 * doorbell cannot overtake another from a write-combining buffer. On x86 the exchange that
 * takes the lock orders the record's store before the register's, as the WC start's sfence
 * would: it takes the sfence's place.
 *
 * late: whether a lone WQE fits a half is asked after the lock, not before it (the same
 * answer: the ring's fields are read before the lock either way and bf_nbb does not change).
 * For fv_ring, fv_post_send's leaf and a typed handle's fv_wr_complete (FV__DB_LATE, tune.h),
 * where gcc keeps the answer early as a flag.
 */
static FV__ALWAYS_INLINE void fv__sq_ring_as(struct fv__sq *sq, const bool late)
{
	uint32_t pi = sq->pi, last = sq->last_pi, nbb = pi - last;
	int32_t since = (int32_t)(last - sq->rung_pi);	/* the two are less than 2^31 apart */
	uint8_t *wqe = fv__sq_wqe(sq, last);
	struct fv__bf *bf = sq->bf;
	uint8_t *reg;

	if (since < 0)
		return;		/* nothing new */
#ifdef FV__DB_CHAIN
	bool bf_copy = fv__sq_bf_fits(sq, since, nbb);

	(void)late;
	/* the start in both branches: clang would otherwise keep bf_copy in a register across it */
	uintptr_t r;

	if (bf_copy) {
		r = fv__db_start_locked(sq->dbrec, htobe32(pi & 0xffff), bf);
		r = fv__db_bf64_0(r, wqe);
		for (uint32_t i = 1; i < nbb; i++)
			r = fv__db_bf64(r, i * FV__WQEBB, fv__sq_wqe(sq, last + i));
	} else {
		r = fv__db_start_locked(sq->dbrec, htobe32(pi & 0xffff), bf);
		r = fv__db_word(r, fv__load64(wqe));
	}
	reg = (uint8_t *)FV__TEST_BF_RUNG(sq, (uint8_t *)fv__db_flush(r), bf_copy ? nbb : 0);
	sq->rung_pi = fv__db_unlock(bf, (uintptr_t)reg ^ sq->bf_toggle, pi);
#else
	bool bf_copy = !late && fv__sq_bf_fits(sq, since, nbb);

	fv__dma_wmb_sq(sq->ring.buf);
	fv__dbrec_write32(sq->dbrec, htobe32(pi & 0xffff));
	reg = (uint8_t *)fv__bf_take(bf);
#if !defined(__x86_64__) && !defined(__i386__)
	fv__wc_start();
#endif
	if (late)
		bf_copy = fv__sq_bf_fits(sq, since, nbb);
	if (bf_copy) {
		fv__bf_copy64(reg, wqe);
		if (nbb > 1) {	/* its other blocks; they may continue at block 0 */
			/* the second (a UD WQE's) on its own: no counter to set up for it */
			wqe += FV__WQEBB;
			fv__ring_wrap(&sq->ring, &wqe);
			fv__bf_copy64(reg + FV__WQEBB, wqe);
			for (uint32_t i = 2; i < nbb; i++) {
				wqe += FV__WQEBB;
				fv__ring_wrap(&sq->ring, &wqe);
				fv__bf_copy64(reg + i * FV__WQEBB, wqe);
			}
		}
	} else {
		fv__mmio_write64(reg, fv__load64(wqe));	/* the ctrl's first 8 bytes, as any store left them */
	}
	fv__wc_flush();
	reg = (uint8_t *)FV__TEST_BF_RUNG(sq, reg, bf_copy ? nbb : 0);
	fv__bf_give(bf, (uintptr_t)reg ^ sq->bf_toggle);
	sq->rung_pi = pi;
#endif
}

#define fv__sq_ring(sq) fv__sq_ring_as(sq, false)

/*
 * The end of the WQE in slot whose 16-bit index is wqe_counter: from its meta if that was
 * written for it (ci < end <= ci + ring size: a stale end, of an earlier WQE in the slot,
 * lies at or before ci), else from the ds in its ctrl. ci is at or before the WQE.
 */
static inline uint32_t fv__sq_end(const struct fv__sq *sq, uint32_t slot, uint16_t wqe_counter)
{
	uint32_t end = sq->meta[slot].end;

	if (__builtin_expect(end - sq->ci - 1 > sq->mask, 0))
		end = sq->ci + (uint16_t)(wqe_counter - sq->ci) +
		      fv__ds_to_bb(fv__ctrl_ds(sq->ring.buf + ((size_t)slot << 6)));
	return end;
}

/*
 * Where the WQE whose ctrl index is wqe_counter ends: a requester completion (or error) for
 * it retires everything up to there (fv__sq_set_ci, once the poller has read the slot). The
 * ring has at most 2^16 WQEBBs (fv_qp_init_geom), so the 16-bit index names the slot.
 */
static inline uint32_t fv__sq_done_end(const struct fv__sq *sq, uint32_t slot, uint16_t wqe_counter)
{
	uint32_t end = fv__sq_end(sq, slot, wqe_counter);

	FV__ASSERT(end - sq->ci <= sq->pi - sq->ci);	/* not past pi */
	return end;
}

/*
 * fv__sq_done_end for a WQE known to have asked for its completion (FV_SIGNALED, or forced by
 * fastverbs): its end was written. A successful requester completion on a QP without
 * sq_sig_all is one (the device completes only WQEs that ask, or fail).
 */
static inline uint32_t fv__sq_asked_end(const struct fv__sq *sq, uint32_t slot)
{
	FV__ASSERT(sq->meta[slot].end - sq->ci <= sq->pi - sq->ci);	/* not past pi */
	return sq->meta[slot].end;
}

/* Retire everything up to and including the WQE whose ctrl index is wqe_counter; its slot. */
static inline uint32_t fv__sq_retire(struct fv__sq *sq, uint16_t wqe_counter)
{
	uint32_t slot = wqe_counter & sq->mask;

	fv__sq_set_ci(sq, fv__sq_done_end(sq, slot, wqe_counter));
	return slot;
}

/*
 * Whether a completion for the WQE ending at end, in slot, is one fastverbs forced: its
 * caller asked for none (no FV_SIGNALED, no sq_sig_all), so it completes only because
 * fastverbs signaled it (or failed).
 */
static inline bool fv__sq_forced(const struct fv__sq *sq, uint32_t slot, uint32_t end)
{
	return sq->meta[slot].forced == end;
}

/* Whether the WQE that starts at counter start (not yet retired) was signaled by fastverbs. */
static inline bool fv__sq_forced_wqe(const struct fv__sq *sq, uint32_t start)
{
	uint32_t slot = start & sq->mask;

	return fv__sq_forced(sq, slot, fv__sq_end(sq, slot, (uint16_t)start));
}

/*
 * The forced completion of the WQE in slot was seen: clear its mark (to a counter no WQE in
 * the slot ends at for 2^32 WQEBBs), so that a later WQE ending at the same 32-bit counter
 * is not taken for it.
 */
static inline void fv__sq_unforce(struct fv__sq *sq, uint32_t slot)
{
	sq->meta[slot].forced = sq->meta[slot].end - 1;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_SQ_H */
