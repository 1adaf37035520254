/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * struct fv_cq and taking a CQ over (fv_cq_init, fv_cq_init_geom), struct fv_wc. The poll
 * loop is cq.h's; cq_decode.h decodes one CQE, cq_run.h the run cache (per
 * QP, the completion its requester CQEs share).
 */
#ifndef FASTVERBS_CQ_INIT_H
#define FASTVERBS_CQ_INIT_H

#include "recv.h"

FV__EXTERN_C_BEGIN

#define FV__CQ_SET_CI 0	/* CQ doorbell record words (libmlx5's MLX5_CQ_SET_CI / _ARM_DB) */
#define FV__CQ_ARM_DB 1

/*
 * The run cache of a CQ: per QP and send opcode (a way, found by a hash of the two), the
 * completion its successful requester CQEs share, so that those CQEs are decoded from their
 * WQE index alone, however the completions of the QPs on the CQ interleave. QPs whose numbers
 * differ only in the low four bits get ways of their own for any one opcode; others may take
 * turns in one (the general path decodes what the way does not hold). Plain receives have
 * ways of their own (struct fv__cq_rway). Kept in the CQ across calls; cq_run.h reads it.
 */
#define FV__CQ_WAYS 16	/* fv__cq_way_at takes 4 bits of its hash */

struct fv__cq_way {
	__be32 key;		/* the sop_drop_qpn of the CQEs it decodes; in an empty way, one that
				 * hashes to another way: no CQE matches it */
	struct fv_qp *qp;	/* the QP of that QPN (NULL in an empty way) */
	fv_u64x2 t[3];		/* their completion, as 16-byte pieces; the wr_id is each CQE's */
};

static_assert(sizeof(struct fv__cq_way) == 64, "a way is 64 bytes: fv__cq_way_at's offset");

/*
 * A receive way: per QP, the completion its plain receives (RESP_SEND, format 0, no solicited
 * event) share while the CQE fields it is made of stay what they were (the sender's QPN word
 * and the words at 32..39, and for struct ibv_wc at 16..23: slid, path bits); the wr_id and
 * byte_len are each CQE's. Found by the same hash as a way (fv__cq_rway_at), in a table of
 * FV__CQ_WAYS the CQ allocates with its first plain receive (struct fv_cq's rway): kept out
 * of struct fv_cq, whose size (and the offsets of what follows it in a caller's struct) stays.
 */
struct fv__cq_rway {
	__be32 key;		/* the receives' sop_drop_qpn; in an empty way one that hashes to
				 * another way */
	__be32 rqpn;		/* their flags_rqpn */
	uint64_t m;		/* their bytes 32..39: srqn_uidx, imm_inval_pkey */
	uint64_t p;		/* their bytes 16..23 (struct ibv_wc only) */
	void *q;		/* the QP's struct fv__rq, or (srq) its struct fv_srq */
	uint32_t srq;
	fv_u64x2 t[3];		/* their completion, as 16-byte pieces */
	uint8_t pad[32];	/* 128 bytes: its offset is a way's times 2 */
};

static_assert(sizeof(struct fv__cq_rway) == 128, "a receive way is 128 bytes: fv__cq_rway_at");

struct fv__cq_run {
	struct fv__cq_way way[FV__CQ_WAYS];
	uint32_t tag;		/* the registry's gen | ibv (1: t is a struct ibv_wc): the ways hold
				 * while it matches */
};

/*
 * The offset of the way of a CQE's sop_drop_qpn (big-endian: send opcode, QPN 23:0) in the
 * run cache: bits 29:26 of the key, taken as opcode | QPN 23:16 << 8 | 15:8 << 16 | 7:0 << 24,
 * times a multiple of 4 whose odd part is large (one multiply, three instructions). For one
 * opcode and the QPN's upper bits, the QPN's low four bits land on those four bits times an
 * odd number: all 16 ways. The opcode and the upper bits reach them too, so one QP's two
 * opcodes mostly get ways of their own.
 */
static FV__ALWAYS_INLINE uint32_t fv__cq_way_off(__be32 key)
{
#if __BYTE_ORDER == __LITTLE_ENDIAN
	uint32_t k = (uint32_t)key;	/* its memory image: the order above */
#else
	uint32_t k = __builtin_bswap32((uint32_t)key);
#endif
	return (k * 0x9e3779b4u) >> (26 - 6) & ((FV__CQ_WAYS - 1) << 6);
}

static FV__ALWAYS_INLINE const struct fv__cq_way *
fv__cq_way_at(const struct fv__cq_run *run, __be32 key)
{
	return (const struct fv__cq_way *)((const uint8_t *)run->way + fv__cq_way_off(key));
}

/* The receive way of a receive CQE's sop_drop_qpn in the table rway: at twice a way's offset. */
static FV__ALWAYS_INLINE const struct fv__cq_rway *
fv__cq_rway_at(const struct fv__cq_rway *rway, __be32 key)
{
	return (const struct fv__cq_rway *)((const uint8_t *)rway + (size_t)fv__cq_way_off(key) * 2);
}

/* A key no CQE of way i's carries: send opcode 0xff, a QPN whose hash is another way's. */
static inline __be32 fv__cq_no_key(unsigned i)
{
	for (uint32_t q = 0;; q++) {
		__be32 key = htobe32(0xffu << 24 | q);

		if (fv__cq_way_off(key) != i << 6)
			return key;
	}
}

/* Empty every way; tag: the one they are filled under from now on. Rare: out of line. */
static FV__COLD void fv__cq_run_reset(struct fv__cq_run *run, uint32_t tag)
{
	for (unsigned i = 0; i < FV__CQ_WAYS; i++) {
		run->way[i].key = fv__cq_no_key(i);
		run->way[i].qp = NULL;
	}
	run->tag = tag;
}

/* Empty every receive way of the table rway (FV__CQ_WAYS of them). */
static FV__COLD void fv__cq_rway_reset(struct fv__cq_rway *rway)
{
	for (unsigned i = 0; i < FV__CQ_WAYS; i++) {
		rway[i].key = fv__cq_no_key(i);
		rway[i].q = NULL;
	}
}

struct fv_cq {
	struct fv__cq_run run;	/* first: a way's address is the CQ's plus the QPN's low bits << 6 */
	uint8_t *buf64;		/* the mlx5_cqe64 of entry 0: buf + cqe_size - 64 */
	uint32_t ci;		/* CQEs consumed */
	uint32_t off;		/* entry ci's offset from buf64: (ci & mask) * cqe_size */
	uint32_t own;		/* the owner bit of a new CQE at ci: bit log2(entries) of ci */
	uint32_t ring;		/* entries * cqe_size: offsets wrap there */
	uint32_t mask;		/* entries - 1 */
	uint32_t cqe_size;	/* 64 or 128 */
	uint32_t shift;		/* log2(cqe_size) */
	struct fv_registry *reg;	/* the process's tables (registry.h): found once, at init */
	volatile __be32 *dbrec;	/* [FV__CQ_SET_CI] consumer index, [FV__CQ_ARM_DB] arm */
	struct fv_srq *srq;	/* fv_cq_bind_srq(): receives of QPs fastverbs does not own */
	struct ibv_cq *ibcq;	/* NULL when described by raw geometry */
	uint32_t cqn;
	uint32_t lock;		/* fv_poll_cq, fv_lock (sync.h) */
	uint32_t locking;	/* fv_poll_cq takes it (fv_set_lock) */
	struct fv__cq_rway *rway;	/* the receive ways (FV__CQ_WAYS), allocated with the first
					 * plain receive; NULL before (or without memory): none */
};

/* Empty the run cache and the receive ways; tag: the one they are filled under from now on. */
static FV__COLD void fv__cq_reset(struct fv_cq *cq, uint32_t tag)
{
	fv__cq_run_reset(&cq->run, tag);
	if (cq->rway)
		fv__cq_rway_reset(cq->rway);
}

/* A CQ described by its raw geometry (tests, plain memory). */
struct fv_cq_geom {
	void *buf;
	uint32_t cqe_cnt;	/* entries, a power of two <= 2^24 */
	uint32_t cqe_size;	/* 64 or 128 */
	volatile __be32 *dbrec;	/* consumption continues from dbrec[FV__CQ_SET_CI] */
	uint32_t cqn;
};

/* One completion, the lean form of struct ibv_wc (same values and flags). */
struct fv_wc {
	uint64_t wr_id;
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t src_qp;	/* responder: the sender's QPN */
	union {
		__be32 imm_data;	/* IBV_WC_WITH_IMM: as on the wire */
		uint32_t invalidated_rkey;	/* IBV_WC_WITH_INV */
	};
	uint8_t status;		/* enum ibv_wc_status */
	uint8_t opcode;		/* enum ibv_wc_opcode */
	uint8_t wc_flags;	/* IBV_WC_GRH, IBV_WC_WITH_IMM, IBV_WC_WITH_INV, IBV_WC_IP_CSUM_OK */
	uint8_t vendor_err;	/* error CQEs: the vendor syndrome */
};

/* Set cq up from a raw geometry. Returns 0 or EINVAL. */
static inline int fv_cq_init_geom(struct fv_cq *cq, const struct fv_cq_geom *g)
{
	if (!g->buf || !g->dbrec || !fv__is_pow2(g->cqe_cnt) || g->cqe_cnt > (1u << 24) ||
	    (g->cqe_size != 64 && g->cqe_size != 128))
		return EINVAL;
	memset(cq, 0, sizeof(*cq));
	cq->buf64 = (uint8_t *)g->buf + g->cqe_size - 64;
	cq->mask = g->cqe_cnt - 1;
	cq->cqe_size = g->cqe_size;
	cq->dbrec = g->dbrec;
	cq->shift = (uint32_t)__builtin_ctz(g->cqe_size);
	cq->ci = be32toh(g->dbrec[FV__CQ_SET_CI]) & 0xffffff;
	cq->off = (cq->ci & cq->mask) * cq->cqe_size;
	cq->own = !!(cq->ci & g->cqe_cnt);
	cq->ring = g->cqe_cnt * g->cqe_size;
	fv__cq_run_reset(&cq->run, 0);
	cq->reg = fv_registry_get();
	cq->cqn = g->cqn;
	cq->locking = fv__locking_default();	/* as libmlx5: thread domains do not count for CQs */
	return 0;
}

/* ibcq's mlx5dv_cq (the CQ becomes DV-owned). Returns 0 or an errno value. */
static inline int fv_cq_dv(struct ibv_cq *ibcq, struct mlx5dv_cq *dv)
{
	struct mlx5dv_obj obj;

	memset(dv, 0, sizeof(*dv));
	memset(&obj, 0, sizeof(obj));
	obj.cq.in = ibcq;
	obj.cq.out = dv;
	return mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ);
}

/*
 * Take over a CQ created by libmlx5 (mlx5dv_init_obj: the CQ becomes DV-owned; from now on
 * poll it only through fastverbs). Returns 0 or an errno value.
 */
static inline int fv_cq_init(struct fv_cq *cq, struct ibv_cq *ibcq)
{
	struct mlx5dv_cq dv;
	int err = fv_cq_dv(ibcq, &dv);

	if (err)
		return err;

	struct fv_cq_geom g = FV__ZERO_INIT;

	g.buf = dv.buf, g.cqe_cnt = dv.cqe_cnt, g.cqe_size = dv.cqe_size, g.dbrec = dv.dbrec;
	g.cqn = dv.cqn;
	err = fv_cq_init_geom(cq, &g);
	if (!err)
		cq->ibcq = ibcq;
	return err;
}

/* Release what fv_cq_init set up (the receive ways' table; the ibv_cq stays the caller's). */
static inline void fv_cq_cleanup(struct fv_cq *cq)
{
	free(cq->rway);
	memset(cq, 0, sizeof(*cq));
}

/*
 * Receive completions on cq for QPs no fv_qp registered (XRC target QPs) belong to srq.
 * Bind an XRC SRQ to the CQ it was created with (see recv.h for the full rule).
 */
static inline void fv_cq_bind_srq(struct fv_cq *cq, struct fv_srq *srq)
{
	cq->srq = srq;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_CQ_INIT_H */
