/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Send WQE segments: the image of each (its 16-byte units as stored) and its writer.
 *
 * A WQE is a run of 16-byte units starting at a 64-byte block (WQEBB) of the send ring:
 *
 *   +------+--------+-------+--------+-----------------+
 *   | ctrl | [xrc]  | [av]  | [raddr | [atomic]] data…  |   (docs/formats.md §3.7)
 *   +------+--------+-------+--------+-----------------+
 *     16      16      48       16       16      16 each, or one inline segment
 *
 * or, for a memory window (BIND_MW, LOCAL_INV; no xrc segment even on XRC):
 *
 *   | ctrl | UMR control | mkey context | [translation] | [data…] |
 *     16        48             64             64
 *
 * A WQE may run past the ring end and continue at block 0. Every writer takes the ring and
 * a constant how (FV__WRAP, FV__VEC below): without FV__WRAP, when the caller knows the WQE
 * fits in its first block (ds <= 4), the end-of-ring checks fold away. Units never straddle
 * the end (it is 64-byte aligned); inline payload may, and is copied in two pieces.
 */
#ifndef FASTVERBS_WQE_H
#define FASTVERBS_WQE_H

#include "portable.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

FV__EXTERN_C_BEGIN

#define FV__WQEBB 64u	/* send WQE basic block */
#define FV__DS    16u	/* one WQE size unit (octoword) */
#define FV__MAX_DS 63u	/* 6-bit ds field */

/* The send ring's bounds, all a segment writer needs to know. */
struct fv_ring {
	uint8_t *buf;	/* block 0 */
	uint8_t *end;	/* one past the last block */
};

/*
 * How a writer writes (constants, or-ed):
 *   FV__WRAP  the WQE may meet the ring end: check for it after each unit;
 *   FV__VEC   a unit is one 16-byte vector store, and an SGE's fields are read one by one: a
 *            loop posting the same values (typed builders) then reads them once and keeps
 *            each unit in one SSE register (two 64-bit registers otherwise, which a loop of
 *            builders runs short of). Without it, values new in every WQE (an ibv_send_wr's)
 *            take fewer instructions: two 64-bit stores, and the SGE's length and lkey read
 *            as one word.
 *   FV__CTRL_A (fv__ctrl_put; other writers ignore it) the ctrl's first word, the same for every WQE of a builder,
 *            goes in a vector store, the second (its flags, decided per WR) over it: the
 *            first then waits in a vector register, not in one of the integer registers a
 *            caller's loop runs short of, and no vector is built per WR. The flags word is
 *            stored only when it is not 0.
 */
enum { FV__WRAP = 1, FV__VEC = 2, FV__CTRL_A = 4 };

/* Move p forward by n bytes (a multiple of 16), continuing at block 0 past the end (FV__WRAP). */
static inline uint8_t *fv__ring_add(const struct fv_ring *r, uint8_t *p, size_t n, unsigned how)
{
	p += n;
	if ((how & FV__WRAP) && p >= r->end)
		p -= r->end - r->buf;
	return p;
}

/* *p, a block's end, moves to where the next block starts: block 0 at the ring end. */
static FV__ALWAYS_INLINE void fv__ring_wrap(const struct fv_ring *r, uint8_t **p)
{
	if (*p == r->end)
		*p = r->buf;
}

/* Copy bytes into the ring at dst, splitting at the ring end; returns the byte after. */
static inline uint8_t *fv__ring_copy(const struct fv_ring *r, uint8_t *dst, const void *src, size_t len)
{
	size_t room = (size_t)(r->end - dst);

	if (len >= room) {
		memcpy(dst, src, room);
		src = (const uint8_t *)src + room;
		len -= room;
		dst = r->buf;
	}
	memcpy(dst, src, len);
	return dst + len;
}

/* The 64-bit value whose memory image is the 32-bit word a, then b (both as stored). */
static inline uint64_t fv__2x32(uint32_t a, uint32_t b)
{
#if __BYTE_ORDER == __LITTLE_ENDIAN
	return (uint64_t)b << 32 | a;
#else
	return (uint64_t)a << 32 | b;
#endif
}

/*
 * WQE stores go through two types of fastverbs' own, which nothing else has: the compiler
 * then knows that a WQE store changes neither the caller's requests (struct ibv_sge,
 * ibv_send_wr) nor fastverbs' structs, and keeps what it read of them in registers.
 */
typedef uint64_t fv_u64x2 __attribute__((vector_size(16)));
struct fv__unit {
	fv_u64x2 v;
};

struct fv__unit_words {	/* structs, not a union: clang takes a union access for a char one */
	uint64_t lo, hi;	/* members, not an array: clang tags an array's element as a plain uint64_t */
};

/*
 * clang's type-based alias analysis takes a store of a vector type for a char one, which may
 * change anything: in a caller's loop it then reads the ring's fields and the caller's
 * requests again after every unit. Under clang a unit is stored as two words (FV__VEC's other
 * effect, on how an SGE is read, stays). The switch: FV__VEC_STORES (tune.h).
 */

/*
 * Under clang a typed builder reads an SGE's length and lkey as one word (fv__build) and makes
 * its data segment's first word from it with one swap and a rotation (fv__sge_image): clang
 * reads a caller's copied SGE again in every WR (the copy's loads carry no type), and field by
 * field that is two loads, a shift, an OR and a swap each time. The word's read has no type
 * either, so an SGE passed by pointer, the same every WR, is read every WR too; two typed reads
 * would be made once, but cost the copied SGE more (docs/performance.md §1.4). The switch:
 * FV__SGE_WORD (tune.h).
 */

/* An SGE's length and lkey, read as one word from its length on: each. */
static inline uint32_t fv__sge_word_len(uint64_t w)
{
#if __BYTE_ORDER == __LITTLE_ENDIAN
	return (uint32_t)w;
#else
	return (uint32_t)(w >> 32);
#endif
}

static inline uint32_t fv__sge_word_lkey(uint64_t w)
{
#if __BYTE_ORDER == __LITTLE_ENDIAN
	return (uint32_t)(w >> 32);
#else
	return (uint32_t)w;
#endif
}

/* A data segment's first word (length, lkey; both big-endian) from that word: one swap, and on
 * a little-endian CPU a rotation, as the swap leaves the two halves in each other's place. */
static inline uint64_t fv__sge_word_be(uint64_t w)
{
	w = htobe64(w);
#if __BYTE_ORDER == __LITTLE_ENDIAN
	w = w << 32 | w >> 32;
#endif
	return w;
}

/*
 * A unit's image: its two 8-byte words as they are stored. The segment images below compute
 * a unit without storing it, so a builder can compute all of a WQE before it knows whether
 * it may write it (in a caller's loop the compiler then computes what does not change once).
 */
struct fv__image {
	uint64_t a, b;
};

/*
 * An image of two words: a compound literal in C, the form the fast path's code was tuned
 * with; a function in C++, which has no compound literals.
 */
#ifdef __cplusplus
static inline struct fv__image fv__image_of(uint64_t a, uint64_t b)
{
	struct fv__image u = { a, b };

	return u;
}
#define FV__IMAGE(a, b) fv__image_of(a, b)
#else
#define FV__IMAGE(a, b) ((struct fv__image){ (a), (b) })
#endif

/* A vector of two words. */
static inline fv_u64x2 fv__u64x2_of(uint64_t a, uint64_t b)
{
	fv_u64x2 v = { a, b };

	return v;
}

/* Store the unit image u at p; FV__VEC: as one vector. */
static inline void fv__unit_put(uint8_t *p, struct fv__image u, unsigned how)
{
	if ((how & FV__VEC) && FV__VEC_STORES) {
		((struct fv__unit *)p)->v = fv__u64x2_of(u.a, u.b);
	} else {
		((struct fv__unit_words *)p)->lo = u.a;
		((struct fv__unit_words *)p)->hi = u.b;
	}
}

/* Store the unit image u at p, then move p past it (continuing at block 0 with FV__WRAP). */
static inline uint8_t *fv__unit_write(const struct fv_ring *r, uint8_t *p, struct fv__image u, unsigned how)
{
	fv__unit_put(p, u, how);
	return fv__ring_add(r, p, FV__DS, how);
}

/*
 * The control segment as stored: its image as one unit, then the WQE index (big-endian, at
 * byte 1) over it. Both stores go through this one union: the compiler then sees that they
 * overlap and keeps them in order (through two unrelated types it may swap them, or take a
 * later read of the unit for the image alone). No character type in it, which would make its
 * stores alias everything: a bool stands for byte 0, never accessed.
 */
struct __attribute__((packed)) fv__ctrl_index {
	bool byte0;
	__be16 v;
};

/* The control segment as three words: fv__ctrl_put_w's stores. */
struct fv__ctrl_words {
	__be32 opcode;		/* opmod(8) | wqe index(16), stored over it | opcode(8) */
	__be32 qpn_ds;
	uint64_t b;		/* fm_ce_se and the immediate, as in the image */
};

/* A DCI's stream id in its control segment (bytes 9-10), typed as fv__ctrl_index is. */
struct __attribute__((packed)) fv__ctrl_stream {
	uint64_t w0;
	bool signature;
	__be16 v;
};

union fv__ctrl_unit {
	fv_u64x2 v;
	uint64_t w[2];
	struct fv__ctrl_words words;
	struct fv__ctrl_index index;
	struct fv__ctrl_stream stream;
};

/*
 * Control segment, always at the start of a block.
 *   0: opmod(8) | wqe index(16) | opcode(8)     4: qpn(24) | ds(8)
 *   8: signature 0, stream id 0, fm_ce_se        12: imm / invalidate key
 * qpn_be is htobe32(qpn << 8); fm_be is the word at byte 8, htobe32(fm_ce_se).
 * Its image but for the index (bytes 1-2 zero): the rest (QPN, opcode, ds, flags) is one
 * unit, computed once in a loop; fv__ctrl_put stores it, then the index over it.
 */
static inline struct fv__image fv__ctrl_image(uint8_t opmod, uint8_t opcode, __be32 qpn_be, unsigned ds,
					    __be32 fm_be, __be32 imm)
{
	return FV__IMAGE(fv__2x32(htobe32((uint32_t)opmod << 24 | opcode), qpn_be | htobe32(ds)),
			fv__2x32(fm_be, imm));
}

/* Store the control segment of image c at p (a block's start), with the index of pi. */
static inline uint8_t *fv__ctrl_put(uint8_t *p, uint32_t pi, struct fv__image c, unsigned how)
{
#if FV__VEC_STORES
	union fv__ctrl_unit *u = (union fv__ctrl_unit *)p;

	if (how & FV__CTRL_A) {
		/*
		 * The second word (flags, immediate) only when it is not 0, as the vector stored:
		 * in a loop that asks for a completion every nth WR, gcc merges this test with the
		 * builder's test of the signal, and the other WQEs go without the store.
		 */
		u->v = fv__u64x2_of(c.a, 0);
		if (c.b)
			u->w[1] = c.b;
	} else if (how & FV__VEC) {
		u->v = fv__u64x2_of(c.a, c.b);
	} else {
		u->w[0] = c.a;
		u->w[1] = c.b;
	}
	u->index.v = htobe16((uint16_t)pi);	/* the low 16 bits of pi */
#else
	/*
	 * clang takes the union's stores for char ones (which may change anything); two structs
	 * of fastverbs' own instead. Both stores are made through p itself, at offsets that
	 * overlap: clang's alias analysis sees that before it looks at their types, and keeps
	 * them in order.
	 */
	(void)how;
	((struct fv__unit_words *)p)->lo = c.a;
	((struct fv__unit_words *)p)->hi = c.b;
	((struct fv__ctrl_index *)p)->v = htobe16((uint16_t)pi);
#endif
	return p + FV__DS;
}

/*
 * Store a stream id s over the control segment at p (a block's start). Not a char store, which
 * would change anything: in a caller's loop the compiler would then read the QP's fields
 * again after every WQE, on any QP type whose code has this store.
 */
static inline void fv__ctrl_stream_put(uint8_t *p, __be16 s)
{
#if FV__VEC_STORES
	((union fv__ctrl_unit *)p)->stream.v = s;	/* through the union: kept after fv__ctrl_put */
#else
	((struct fv__ctrl_stream *)p)->v = s;		/* through p itself, as fv__ctrl_put */
#endif
}

/*
 * fv__ctrl_put for a writer that keeps no image (fv_post_send's fast path): the first word
 * stored as its two halves, opcode (a constant) and qpn_ds (read from the QP for each WQE),
 * one instruction fewer than joining them into one word; b is the image's second word.
 */
static inline uint8_t *fv__ctrl_put_w(uint8_t *p, uint32_t pi, uint8_t opcode, __be32 qpn_ds, uint64_t b)
{
#if FV__VEC_STORES
	union fv__ctrl_unit *u = (union fv__ctrl_unit *)p;

	u->words.opcode = htobe32(opcode);
	u->words.qpn_ds = qpn_ds;
	u->words.b = b;
	u->index.v = htobe16((uint16_t)pi);
#else
	struct fv__ctrl_words *w = (struct fv__ctrl_words *)p;	/* through p itself, as fv__ctrl_put */

	w->opcode = htobe32(opcode);
	w->qpn_ds = qpn_ds;
	w->b = b;
	((struct fv__ctrl_index *)p)->v = htobe16((uint16_t)pi);
#endif
	return p + FV__DS;
}

/* The ds (16-byte units) of the WQE whose control segment is at ctrl, as written: byte 7. */
static inline unsigned fv__ctrl_ds(const uint8_t *ctrl)
{
	return ctrl[7] & 0x3f;
}

/* Control segment written in one go. */
static inline uint8_t *fv__wqe_ctrl(uint8_t *p, uint32_t pi, uint8_t opmod, uint8_t opcode,
				   __be32 qpn_be, unsigned ds, __be32 fm_be, __be32 imm)
{
	return fv__ctrl_put(p, pi, fv__ctrl_image(opmod, opcode, qpn_be, ds, fm_be, imm), 0);
}

/* Remote address segment: BE64 address, BE32 rkey, 4 reserved bytes written as 0. */
static inline struct fv__image fv__raddr_image(uint64_t raddr, uint32_t rkey)
{
	return FV__IMAGE(htobe64(raddr), fv__2x32(htobe32(rkey), 0));
}

/* Atomic segment: swap (CAS) or add (FAA) value, then the compare value. */
static inline struct fv__image fv__atomic_image(uint64_t swap_add, uint64_t compare)
{
	return FV__IMAGE(htobe64(swap_add), htobe64(compare));
}

/* Data (pointer) segment: BE32 byte count (bit 31 clear), BE32 lkey, BE64 address. */
static inline struct fv__image fv__data_image(uint32_t len, uint32_t lkey, uint64_t addr)
{
	return FV__IMAGE(fv__2x32(htobe32(len), htobe32(lkey)), htobe64(addr));
}

/*
 * The data segment of an SGE as it is. FV__VEC (an SGE a loop may post again and again): its
 * fields one by one, each swapped on its own; a compiler keeps such reads apart and, when
 * nothing in the loop can change them, makes them once before the loop. Otherwise (an SGE
 * new in every WQE): its length and lkey, side by side in struct ibv_sge, as one word (read
 * from memory, a compiler merges the two reads), made big-endian with one swap and put back
 * in order with a rotation.
 */
static inline struct fv__image fv__sge_image(const struct ibv_sge *sge, unsigned how)
{
	if ((how & FV__VEC) && !FV__SGE_WORD)
		return fv__data_image(sge->length, sge->lkey, sge->addr);

	static_assert(offsetof(struct ibv_sge, lkey) == offsetof(struct ibv_sge, length) + 4,
		       "lkey follows length");
	return FV__IMAGE(fv__sge_word_be(fv__2x32(sge->length, sge->lkey)), htobe64(sge->addr));
}

/* XRC segment: the remote XRC SRQ number, 12 reserved bytes written as 0. */
static inline struct fv__image fv__xrc_image(uint32_t srqn)
{
	return FV__IMAGE(fv__2x32(htobe32(srqn), 0), 0);
}

/* 8 bytes at p as one 64-bit word (no alignment or type assumed). */
static inline uint64_t fv__load64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Unit i (0-2) of the AH's 48-byte extended address vector, as it is. */
static FV__ALWAYS_INLINE struct fv__image fv__av_unit(const struct mlx5_wqe_av *av, unsigned i)
{
	const uint8_t *src = (const uint8_t *)av + i * FV__DS;

	return FV__IMAGE(fv__load64(src), fv__load64(src + 8));
}

/* The datagram segment's words the WR fills in over the AV's first unit. */
struct fv__av_head_words {
	uint64_t qkey;		/* the Q_Key and the reserved word (0) after it */
	__be32 dqp;		/* remote QPN | MLX5_EXTENDED_UD_AV */
};

static FV__ALWAYS_INLINE struct fv__av_head_words fv__av_head_words(uint32_t remote_qpn, uint32_t qkey)
{
	const struct fv__av_head_words w = { fv__2x32(htobe32(qkey), 0), htobe32(remote_qpn | MLX5_EXTENDED_UD_AV) };

	return w;
}

/*
 * Datagram segment, three units: the AH's prebuilt 48-byte extended address vector, with the
 * Q_Key (0 in the reserved word after it), the remote QPN and the extended-AV bit filled in.
 * Unit i of it (i a constant where it is inlined): a writer needs no array of them (gcc keeps
 * a local array in memory, and its loop optimizer gives up on a loop that holds one).
 */
static FV__ALWAYS_INLINE struct fv__image fv__av_image(const struct mlx5_wqe_av *av,
							 uint32_t remote_qpn, uint32_t qkey, unsigned i)
{
	uint32_t rest;	/* bytes 12..15: stat_rate_sl, fl_mlid, rlid */

	if (i)
		return fv__av_unit(av, i);
	memcpy(&rest, (const uint8_t *)av + 12, sizeof(rest));

	const struct fv__av_head_words w = fv__av_head_words(remote_qpn, qkey);

	return FV__IMAGE(w.qkey, fv__2x32(w.dqp, rest));
}

/*
 * The datagram segment's first unit over a copy of the AV's (fv_post_send's fast path, which
 * keeps no image): the AV's 16 bytes as they are, then the Q_Key and the remote QPN over
 * them; fewer instructions than the image's bytes 8-15. The reserved word between them stays
 * the AV's, as libmlx5 leaves it (0 in every AH it makes). The stores go through one union
 * (gcc keeps them in order), or under clang through p at overlapping offsets, as
 * fv__ctrl_put's.
 */
struct fv__av_put_words {
	__be32 qkey;
	__be32 reserved;	/* not stored */
	__be32 dqp;		/* remote QPN | MLX5_EXTENDED_UD_AV */
};

union fv__av_head_unit {
	fv_u64x2 v;
	struct fv__av_put_words w;
};

static inline void fv__av_head_put(uint8_t *p, const struct mlx5_wqe_av *av, uint32_t remote_qpn, uint32_t qkey)
{
	const struct fv__image head = fv__av_unit(av, 0);
	/* both big-endian by one 8-byte swap (the WR holds them side by side: one load) */
	const uint64_t kq = htobe64((uint64_t)qkey << 32 | remote_qpn);
	__be32 w[2];

	memcpy(w, &kq, sizeof(w));
#if FV__VEC_STORES
	union fv__av_head_unit *u = (union fv__av_head_unit *)p;

	u->v = fv__u64x2_of(head.a, head.b);
	u->w.qkey = w[0];
	u->w.dqp = w[1] | htobe32(MLX5_EXTENDED_UD_AV);
#else
	fv__unit_put(p, head, 0);
	((struct fv__av_put_words *)p)->qkey = w[0];
	((struct fv__av_put_words *)p)->dqp = w[1] | htobe32(MLX5_EXTENDED_UD_AV);
#endif
}

/* The datagram segment's first unit: the Q_Key, 0, and its bytes 8-15 given as one big-endian number w. */
static inline struct fv__image fv__av_head_image(uint32_t qkey, uint64_t w)
{
	return FV__IMAGE(fv__2x32(htobe32(qkey), 0), htobe64(w));
}

/*
 * The datagram segment's bytes 8-15 as one big-endian number, from an fv_ah's AV (ah.h): its
 * first 8 bytes (the Q_Key and reserved words, which every WQE overwrites) fv_ah_init filled
 * with them, the remote QPN zero; the QPN is or-ed in.
 */
static inline uint64_t fv__ah_av_word(const struct mlx5_wqe_av *av, uint32_t remote_qpn)
{
	return av->key.dc_key | (uint64_t)remote_qpn << 32;	/* typed: no load that may read anything */
}

/*
 * Unit i of the datagram segment from an fv_ah's AV: the word of fv__ah_av_word swapped once
 * (three instructions, against six from the AV's own bytes).
 */
static FV__ALWAYS_INLINE struct fv__image fv__ah_av_image(const struct mlx5_wqe_av *av,
							    uint32_t remote_qpn, uint32_t qkey, unsigned i)
{
	if (i)
		return fv__av_image(av, remote_qpn, qkey, i);
	return fv__av_head_image(qkey, fv__ah_av_word(av, remote_qpn));
}

/* The datagram segment's three units into u. */
static inline void fv__av_images(struct fv__image u[3], const struct mlx5_wqe_av *av, uint32_t remote_qpn,
				uint32_t qkey)
{
	for (unsigned i = 0; i < 3; i++)
		u[i] = fv__av_image(av, remote_qpn, qkey, i);
}

/* The segment writers: each unit may be the last before the ring end. */
static inline uint8_t *fv__wqe_raddr(const struct fv_ring *r, uint8_t *p, uint64_t raddr,
				    uint32_t rkey, unsigned how)
{
	return fv__unit_write(r, p, fv__raddr_image(raddr, rkey), how);
}

static inline uint8_t *fv__wqe_atomic(const struct fv_ring *r, uint8_t *p, uint64_t swap_add,
				     uint64_t compare, unsigned how)
{
	return fv__unit_write(r, p, fv__atomic_image(swap_add, compare), how);
}

static inline uint8_t *fv__wqe_data(const struct fv_ring *r, uint8_t *p, uint32_t len,
				   uint32_t lkey, uint64_t addr, unsigned how)
{
	return fv__unit_write(r, p, fv__data_image(len, lkey, addr), how);
}

static inline uint8_t *fv__wqe_xrc(const struct fv_ring *r, uint8_t *p, uint32_t srqn, unsigned how)
{
	return fv__unit_write(r, p, fv__xrc_image(srqn), how);
}

static inline uint8_t *fv__wqe_av(const struct fv_ring *r, uint8_t *p, const struct mlx5_wqe_av *av,
				 uint32_t remote_qpn, uint32_t qkey, unsigned how)
{
	p = fv__unit_write(r, p, fv__av_image(av, remote_qpn, qkey, 0), how);
	p = fv__unit_write(r, p, fv__av_image(av, remote_qpn, qkey, 1), how);
	return fv__unit_write(r, p, fv__av_image(av, remote_qpn, qkey, 2), how);
}

/* Octowords an inline segment of len payload bytes takes (4-byte header + payload). */
static inline unsigned fv__inline_ds(uint32_t len)
{
	return (4 + len + FV__DS - 1) / FV__DS;
}

/* One piece of an inline payload at dst, which may run past the ring end; returns where the next goes. */
static inline uint8_t *fv__inline_piece(const struct fv_ring *r, uint8_t *dst, const void *src, size_t len,
				       unsigned how)
{
	if (how & FV__WRAP)
		return fv__ring_copy(r, dst, src, len);
	memcpy(dst, src, len);
	return dst + len;
}

/*
 * Inline segment: BE32 (total | MLX5_INLINE_SEG), then the SGEs' bytes back to back; the
 * payload may continue at block 0. Pad bytes after it are left as they are, as libmlx5 does.
 */
static inline uint8_t *fv__wqe_inline(const struct fv_ring *r, uint8_t *p, const struct ibv_sge *sgl,
				     int nsge, uint32_t total, unsigned how)
{
	uint8_t *dst = p + 4;

	*(__be32 *)p = htobe32(total | MLX5_INLINE_SEG);
	for (int i = 0; i < nsge; i++)
		dst = fv__inline_piece(r, dst, (const void *)(uintptr_t)sgl[i].addr, sgl[i].length, how);
	return fv__ring_add(r, p, fv__inline_ds(total) * FV__DS, how);
}

/*
 * A WQE's inline bytes stored through types of fastverbs' own (as its units are, above): the
 * compiler then knows they change none of the caller's data or fastverbs' structs. Their
 * members may sit anywhere (the payload starts 4 bytes into a unit); not packed structs,
 * whose stores compilers take for stores to anything of the member's type.
 */
typedef uint64_t fv_any_u64 __attribute__((aligned(1)));
typedef uint32_t fv_any_u32 __attribute__((aligned(1)));
typedef uint16_t fv_any_u16 __attribute__((aligned(1)));
typedef uint64_t fv_any_u64x2 __attribute__((vector_size(16), aligned(1)));
struct fv__inl16 { fv_any_u64x2 v; };
struct fv__inl8 { fv_any_u64 v; };
struct fv__inl4 { fv_any_u32 v; };
struct fv__inl2 { fv_any_u16 v; };

/* 16, 8, 4 and 2 bytes from s to d through the types above (s and d may sit anywhere). */
static FV__ALWAYS_INLINE void fv__inl_copy16(uint8_t *d, const uint8_t *s)
{
	fv_u64x2 v;

	memcpy(&v, s, 16);
	((struct fv__inl16 *)d)->v = v;
}

static FV__ALWAYS_INLINE void fv__inl_copy8(uint8_t *d, const uint8_t *s)
{
	uint64_t v;

	memcpy(&v, s, 8);
	((struct fv__inl8 *)d)->v = v;
}

static FV__ALWAYS_INLINE void fv__inl_copy4(uint8_t *d, const uint8_t *s)
{
	uint32_t v;

	memcpy(&v, s, 4);
	((struct fv__inl4 *)d)->v = v;
}

static FV__ALWAYS_INLINE void fv__inl_copy2(uint8_t *d, const uint8_t *s)
{
	uint16_t v;

	memcpy(&v, s, 2);
	((struct fv__inl2 *)d)->v = v;
}

/*
 * An inline segment of len bytes from src at p, for a len the compiler knows, all of it in the
 * WQE's first block: the same bytes fv__wqe_inline stores (the byte count, then the payload;
 * the padding left as it is), in 8-byte pieces read into registers; vec16: 16 bytes at a time
 * first, one unaligned vector load and store each (FV__INL_VEC16, tune.h).
 */
static inline void fv__wqe_inline_small(uint8_t *p, const void *src, uint32_t len, bool vec16)
{
	const uint8_t *s = (const uint8_t *)src;
	uint8_t *d = p + 4;
	uint32_t i = 0;

	((struct fv__inl4 *)p)->v = htobe32(len | MLX5_INLINE_SEG);
	for (; vec16 && i + 16 <= len; i += 16)
		fv__inl_copy16(d + i, s + i);
	for (; i + 8 <= len; i += 8)
		fv__inl_copy8(d + i, s + i);
	if (len - i >= 4) {
		fv__inl_copy4(d + i, s + i);
		i += 4;
	}
	if (len - i >= 2) {
		fv__inl_copy2(d + i, s + i);
		i += 2;
	}
	if (len - i)	/* an odd length's last byte: a character store (no other type holds any byte) */
		d[i] = s[i];
}

/* fv__wqe_inline from an ibv_data_buf list (ibv_wr_set_inline_data_list). */
static inline uint8_t *fv__wqe_inline_bufs(const struct fv_ring *r, uint8_t *p, const struct ibv_data_buf *bufs,
					  int n, uint32_t total, unsigned how)
{
	uint8_t *dst = p + 4;

	*(__be32 *)p = htobe32(total | MLX5_INLINE_SEG);
	for (int i = 0; i < n; i++)
		dst = fv__inline_piece(r, dst, bufs[i].addr, bufs[i].length, how);
	return fv__ring_add(r, p, fv__inline_ds(total) * FV__DS, how);
}

/*
 * Memory-window UMR segments (BIND_MW, LOCAL_INV), after the ctrl (whose imm is the window's
 * key, or the key to invalidate), as libmlx5 44 builds them:
 *
 *   UMR control, 48 bytes (3 units, all written):
 *     0 flags  4 BE16 klm_octowords  6 BE16 translation offset 0  8 BE64 mkey_mask  16.. 0
 *   mkey context, 64 bytes (a block), of which only these bytes are written:
 *     0 free (0x40 invalidate / unbind)  2 access  4 BE32 qpn_mkey
 *     16 BE64 start_addr  24 BE64 len    (bind only; access too)
 *   translation, 64 bytes (bind with a length only): one KLM (BE32 length, BE32 MR lkey,
 *     BE64 address), 48 zero bytes.
 *
 * The mkey context's other bytes are left as they are, as libmlx5 leaves them: the device
 * reads only what mkey_mask names. Each segment after the UMR control starts a block, so a
 * WQE may meet the ring end only between segments.
 */
enum {
	FV__UMR_CTRL_UNITS = 3,
	FV__UMR_MKEY_UNITS = 4,
	FV__UMR_KLM_UNITS = 4,
};
#define FV__UMR_KLM_MAX (1u << 31)	/* one KLM covers at most 2 GiB (past an enum's int range) */

/* The UMR control segment of a bind (len > 0) or invalidate (len 0) of a window of type. */
static inline void fv__umr_ctrl_images(struct fv__image u[FV__UMR_CTRL_UNITS], uint8_t type, uint64_t len)
{
	uint64_t mask = MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE | MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY;
	uint8_t flags = MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET | MLX5_WQE_UMR_CTRL_FLAG_INLINE;
	uint16_t klm_octo = 0;

	if (type == IBV_MW_TYPE_2)
		mask |= MLX5_WQE_UMR_CTRL_MKEY_MASK_QPN;
	if (len) {
		klm_octo = 4;	/* one KLM, rounded up to a 64-byte translation block */
		if (type == IBV_MW_TYPE_2)
			flags |= MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE;
		mask |= MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN | MLX5_WQE_UMR_CTRL_MKEY_MASK_START_ADDR |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC;
	} else if (type == IBV_MW_TYPE_2) {
		flags |= MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN;
	}
	u[0] = FV__IMAGE(fv__2x32(flags, (uint32_t)htobe16(klm_octo)), htobe64(mask));
	u[1] = u[2] = FV__IMAGE(0, 0);
}

/* The mkey context's access byte for a window's IBV_ACCESS_* rights. */
static inline uint8_t fv__mkey_access(unsigned ibv_access)
{
	return (uint8_t)((ibv_access & IBV_ACCESS_LOCAL_WRITE ? MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE : 0) |
			 (ibv_access & IBV_ACCESS_REMOTE_WRITE ? MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE : 0) |
			 (ibv_access & IBV_ACCESS_REMOTE_READ ? MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ : 0) |
			 (ibv_access & IBV_ACCESS_REMOTE_ATOMIC ? MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC : 0));
}

/*
 * The mkey context at p (a block's start): the window's new key byte, with qpn (type 2
 * binding) or 0xffffff (type 1, or an invalidate) above it; a bind's rights and range, or
 * the free bit. Only the fields above are stored.
 */
static inline uint8_t *fv__wqe_mkey(const struct fv_ring *r, uint8_t *p, uint8_t type, uint32_t new_rkey,
				   uint32_t qpn, const struct ibv_mw_bind_info *b, unsigned how)
{
	struct mlx5_wqe_mkey_context_seg *m = (struct mlx5_wqe_mkey_context_seg *)p;
	const uint64_t len = b ? b->length : 0;

	m->qpn_mkey = htobe32((new_rkey & 0xff) | (type == IBV_MW_TYPE_1 || !len ? 0xffffff00u : qpn << 8));
	if (len) {
		m->access_flags = fv__mkey_access(b->mw_access_flags);
		m->free = 0;
		m->start_addr = b->mw_access_flags & IBV_ACCESS_ZERO_BASED ? 0 : htobe64(b->addr);
		m->len = htobe64(len);
	} else {
		m->free = MLX5_WQE_MKEY_CONTEXT_FREE;
	}
	return fv__ring_add(r, p, FV__UMR_MKEY_UNITS * FV__DS, how);
}

/* The translation block of a bind: the KLM naming the MR's range, then zeros. */
static inline uint8_t *fv__wqe_klm(const struct fv_ring *r, uint8_t *p, const struct ibv_mw_bind_info *b,
				  unsigned how)
{
	p = fv__unit_write(r, p, fv__data_image((uint32_t)b->length, b->mr->lkey, b->addr), how);
	for (unsigned i = 1; i < FV__UMR_KLM_UNITS; i++)
		p = fv__unit_write(r, p, FV__IMAGE(0, 0), how);
	return p;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_WQE_H */
