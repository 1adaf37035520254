/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * struct fv_qp and the typed handles; taking a QP over from libmlx5 (mlx5dv_init_obj +
 * ibv_query_qp for the granted caps) or describing one by raw geometry (tests, plain memory).
 */
#ifndef FASTVERBS_QP_H
#define FASTVERBS_QP_H

#include <stdlib.h>
#include "sq.h"
#include "req.h"
#include "registry.h"

FV__EXTERN_C_BEGIN

/* QP types fastverbs drives; the row index of the operation table (ops.def). */
enum fv_qpt { FV_QPT_RC, FV_QPT_UC, FV_QPT_UD, FV_QPT_XRC, FV_QPT_RAW, FV_QPT_DCI, FV__QPT_COUNT };

/*
 * The RQ's head and lim: a type nothing but these two fields has, stored through a pointer of
 * its own by fv_recv (fv__rq_ctr_put, recv.h). Read them as rq.head.v, never as a uint32_t.
 */
struct fv__rq_ctr {
	uint32_t v;
};

/* Receive queue: one WQE per receive WR, stride bytes each. */
struct fv__rq {
	uint8_t *buf;
	uint32_t mask;		/* entries - 1 (0 entries: no RQ, e.g. SRQ-attached) */
	uint32_t entries;
	uint32_t stride_shift;	/* log2(stride) */
	uint32_t max_gs;	/* data segments per WQE: stride / 16 */
	uint32_t max_sge;	/* SGEs a receive may have: max_recv_sge, at most max_gs */
	struct fv__rq_ctr head;	/* receive WQEs posted */
	uint32_t tail;		/* receive WQEs completed: written by the poller, read by the poster
				 * (atomically: fv__rq_tail) */
	struct fv__rq_ctr lim;	/* head may reach it without reading tail: tail + entries, as last read */
	volatile __be32 *dbrec;	/* dbrec[MLX5_RCV_DBR] */
	uint64_t *wrid;
};

struct fv_srq;

/*
 * The open WQE of an fv_wr_* batch (struct fv__wr_batch), as struct fv__req's fields of the
 * same names: its builder's (op) and its destination setter's (to). A typed handle's payload
 * setter clears each group at once after reading it (fv__wr_spent, compat/wr_batch.h).
 */
struct fv__wr_op {
	uint8_t opcode, segs;
	unsigned flags;
	__be32 imm;
	uint32_t rkey;
	uint64_t wr_id, raddr;
};

struct fv__wr_to {
	/*
	 * The AV's bytes 0-7 as a number, qkey << 32 | key_lo: UD's Q_Key << 32 (a UD QP never
	 * stores a key_lo but 0), or DCI's access key (compat/wr_batch.h, fv__wr_req). key_lo,
	 * qkey: DCI's one store, one load; qkey, srqn: UD's one store.
	 */
	uint32_t key_lo, qkey, srqn;
	uint64_t av_w;		/* UD: the datagram segment's bytes 8-15, byte-swapped (fv__wr_av_word) */
	const struct mlx5_wqe_av *av;
};

/*
 * The batch of fv_wr_start .. fv_wr_complete (gen/wr.h): the first error, the WQE whose
 * setters are still to come (its builder's part and destination, field by field: a builder's
 * stores then reach its setter's loads in registers), and the send ring's counters at
 * fv_wr_start, restored when the batch fails or is aborted.
 */
struct fv__wr_batch {
	int err;		/* first error: fv_wr_complete returns it and posts nothing */
	unsigned need;		/* setters the open WQE still owes (FV__WR_NEED_*, compat/wr_batch.h) */
	/* FV__WR_KEPT (compat/wr_batch.h): struct fv__sq's order, side by side in both (two moves) */
	uint32_t pi, lim, last_pi, rung_pi, sig_pi, fence_cache;
	struct fv__wr_op op;	/* the open WQE: its builder's fields */
	struct fv__wr_to to;	/* and its destination's */
	uint64_t swap_add, compare;
	uint16_t stream;	/* DCI: its stream id, when FV__WR_NEED_STREAM (compat/wr_batch.h) */
	const void *hdr;	/* TSO: the header, its size and the MSS */
	uint16_t hdr_sz, mss;
};

struct fv_qp {
	struct fv__sq sq;
	struct fv__rq rq;
	uint32_t qpn;
	enum fv_qpt qpt;
	uint32_t max_inline;	/* granted max_inline_data */
	uint32_t max_send_sge;	/* granted max_send_sge */
	uint32_t max_recv_sge;	/* granted max_recv_sge */
	/* Raw Ethernet (FV_QPT_RAW; eth.h): what libmlx5 keeps per QP and context for it. */
	uint32_t eth_inline;	/* header bytes a plain send inlines: 18 (L2 mode) or 0 */
	uint32_t max_tso_header;	/* the QP's max_tso_header (ibv_create_qp_ex) */
	uint32_t max_tso;	/* TSO payload bytes per send (the device's tso_caps), 0: none */
	uint32_t raw_csum;	/* checksum offload: IBV_SEND_IP_CSUM and IBV_WC_IP_CSUM_OK */
	struct fv_srq *srq;	/* attached SRQ, if any */
	struct ibv_qp *ibqp;	/* NULL when described by raw geometry */
	const struct ibv_ah *ah_cache_key;	/* last ibv_ah seen by fv_post_send */
	const struct mlx5_wqe_av *ah_cache_av;
	void *mem;		/* the bookkeeping arrays, one allocation */
	/* The ibv_qp_ex members of the fv_wr_* calls: set before each builder, read by it. */
	uint64_t wr_id;
	unsigned int wr_flags;	/* IBV_SEND_SIGNALED, _FENCE, _SOLICITED, _IP_CSUM (raw); _INLINE: no effect */
	struct fv__wr_batch wr;	/* fv_wr_* state */
	/* Threads (sync.h): the compat calls' locks, as libmlx5 keeps them per queue. */
	uint64_t sq_lock;	/* fv_post_send, fv_wr_start .. fv_wr_complete, fv_lock: 0 free,
				 * else fv__self() of the holder, so that a thread that holds it
				 * (an open batch, fv_lock) and posts is refused, not deadlocked */
	uint32_t rq_lock;	/* fv_post_recv */
	uint32_t locking;	/* the compat calls take the locks (fv_set_lock) */
	uint32_t wr_open;	/* an fv_wr_* batch is open: fv_wr_start was called, its
				 * fv_wr_complete or fv_wr_abort not yet (1; 2: inside fv_lock;
				 * 3: a typed handle's, no locking, nothing taken) */
};

/* Typed handles: each offers only the operations its QP type allows (ops.h). */
struct fv_rc  { struct fv_qp qp; };
struct fv_uc  { struct fv_qp qp; };
struct fv_ud  { struct fv_qp qp; };
struct fv_xrc { struct fv_qp qp; };
struct fv_raw { struct fv_qp qp; };
struct fv_dci { struct fv_qp qp; };

/* The struct fv_qp inside a typed handle. */
#define fv__qp_of(h) (&(h)->qp)

/*
 * Ring the doorbell once for everything built on h (a typed handle or a struct fv_qp *)
 * since the last ring. Every store before it (WQEs, payloads) is made before the doorbell;
 * unlike a call to ibv_post_send it leaves the compiler's knowledge of memory alone: read
 * what the device writes after fv_poll.
 */
#define fv_ring(h) fv__ring_checked(fv__ring_qp(h))

static FV__ALWAYS_INLINE void fv__ring_checked(struct fv_qp *qp)
{
	/* the batch's WQEs would reach the device before fv_wr_complete decides on them */
	FV__ASSERT_MSG(!qp->wr_open, "fv_ring on a QP with an open fv_wr_* batch "
		      "(fv_wr_start without fv_wr_complete or fv_wr_abort)");
	fv__sq_ring_as(&qp->sq, FV__DB_LATE);
}

/* The struct fv_qp of h, the first member of every typed handle; anything else is refused
 * at compile time with a message naming fv_ring. */
#ifndef __cplusplus
struct fv_qp *fv__ring_not_a_qp(const void *h)
	FV__COMPILE_ERROR("fv_ring takes a struct fv_qp * or a typed handle (struct fv_rc *, fv_uc *, fv_ud *, fv_xrc *, fv_raw *, fv_dci *)");
#define fv__ring_qp(h) _Generic((h), struct fv_qp *: (struct fv_qp *)(void *)(h), \
	struct fv_rc *: (struct fv_qp *)(void *)(h), struct fv_uc *: (struct fv_qp *)(void *)(h), \
	struct fv_ud *: (struct fv_qp *)(void *)(h), struct fv_xrc *: (struct fv_qp *)(void *)(h), \
	struct fv_raw *: (struct fv_qp *)(void *)(h), struct fv_dci *: (struct fv_qp *)(void *)(h), \
	default: fv__ring_not_a_qp(h))
#else
} /* the overloads need C++ linkage */
static inline struct fv_qp *fv__ring_qp(struct fv_qp *q) { return q; }
static inline struct fv_qp *fv__ring_qp(struct fv_rc *h) { return &h->qp; }
static inline struct fv_qp *fv__ring_qp(struct fv_uc *h) { return &h->qp; }
static inline struct fv_qp *fv__ring_qp(struct fv_ud *h) { return &h->qp; }
static inline struct fv_qp *fv__ring_qp(struct fv_xrc *h) { return &h->qp; }
static inline struct fv_qp *fv__ring_qp(struct fv_raw *h) { return &h->qp; }
static inline struct fv_qp *fv__ring_qp(struct fv_dci *h) { return &h->qp; }
template <class H> struct fv__ring_refused { static const bool value = false; };
template <class H> struct fv_qp *fv__ring_qp(H)
{
	static_assert(fv__ring_refused<H>::value,
		      "fv_ring takes a struct fv_qp * or a typed handle (struct fv_rc *, fv_uc *, fv_ud *, fv_xrc *, fv_raw *, fv_dci *)");
	return 0;
}
extern "C" {
#endif

/*
 * Free 64-byte blocks (WQEBBs) in the send ring of h (a typed handle or a struct fv_qp *) now:
 * a WQE of n blocks fits while it is at least n. Space comes back as fv_poll retires the
 * completions of WQEs rung. (fv_sq_room(3): the blocks each request takes.)
 */
#define fv_sq_room(h) fv__sq_room(&fv__ring_qp(h)->sq)

/* A QP described by its raw geometry: what mlx5dv_init_obj and ibv_query_qp would give. */
struct fv_qp_geom {
	enum fv_qpt qpt;
	uint32_t qpn;
	void *sq_buf;			/* first send WQEBB */
	uint32_t sq_wqe_cnt;		/* WQEBBs, a power of two <= 2^16 (mlx5: <= 2^15) */
	void *rq_buf;
	uint32_t rq_wqe_cnt;		/* a power of two, or 0 */
	uint32_t rq_stride;		/* bytes, a power of two >= 16 */
	volatile __be32 *dbrec;		/* [MLX5_RCV_DBR], [MLX5_SND_DBR] */
	void *bf_reg;			/* BlueFlame / UAR register base */
	uint32_t bf_size;		/* one BlueFlame half, bytes: a multiple of 64, or 0 = doorbell only */
	uint32_t max_inline;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	int sq_sig_all;
	/* FV_QPT_RAW only (struct fv_qp's fields of the same names): */
	uint32_t eth_inline, max_tso_header, max_tso, raw_csum;
};

static inline int fv__is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* The fastverbs QP type of a verbs QP type, or -1. */
static inline int fv__qpt_of(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC:       return FV_QPT_RC;
	case IBV_QPT_UC:       return FV_QPT_UC;
	case IBV_QPT_UD:       return FV_QPT_UD;
	case IBV_QPT_XRC_SEND: return FV_QPT_XRC;
	case IBV_QPT_RAW_PACKET: return FV_QPT_RAW;
	case IBV_QPT_DRIVER:   return FV_QPT_DCI;	/* or a DCT: fv__qp_take tells them apart */
	default:               return -1;
	}
}

/*
 * WQEBBs of the largest WQE the QP's caps allow: ctrl, transport, raddr, atomic + payload;
 * raw Ethernet: ctrl, Ethernet segment with the longer of its inline headers + payload.
 */
static inline uint32_t fv__max_wqe_bb(const struct fv_qp_geom *g)
{
	uint32_t hdr = 1 + (g->qpt == FV_QPT_UD || g->qpt == FV_QPT_DCI ? 3 : g->qpt == FV_QPT_XRC ? 1 : 0) + 2;

	if (g->qpt == FV_QPT_RAW) {
		uint32_t tso = g->max_tso_header > 2 ? (g->max_tso_header - 2 + FV__DS - 1) / FV__DS : 0;

		hdr = 1 + 1 + (tso > 1 ? tso : 1);
	}
	uint32_t inl = fv__inline_ds(g->max_inline), sges = g->max_send_sge;
	uint32_t ds = hdr + (inl > sges ? inl : sges);

	return fv__ds_to_bb(ds > FV__MAX_DS ? FV__MAX_DS : ds);
}

/*
 * Longest unsignaled run (WQEBBs) before fastverbs asks for a completion itself: at most half
 * the ring, and small enough that the largest WQE always fits beside it, so a refusal for
 * lack of space always has a signaled WQE outstanding whose completion frees room.
 */
static inline uint32_t fv__unsig_max(const struct fv_qp_geom *g)
{
	uint32_t half = g->sq_wqe_cnt / 2, big = fv__max_wqe_bb(g);
	uint32_t fit = g->sq_wqe_cnt > big ? g->sq_wqe_cnt - big : 0;

	return fit < half ? fit : half;
}

/*
 * Set up qp from a raw geometry and register it for CQ polling. Producer counters continue from the doorbell records,
 * so a QP can be taken over after libmlx5 posted on it (once its work has completed).
 * Returns 0, EINVAL (bad geometry) or ENOMEM.
 */
static inline int fv_qp_init_geom(struct fv_qp *qp, const struct fv_qp_geom *g)
{
	size_t sq_n = g->sq_wqe_cnt, rq_n = g->rq_wqe_cnt;
	uint8_t *mem;

	if (!fv__is_pow2(g->sq_wqe_cnt) || sq_n > 0x10000 || (rq_n && (!fv__is_pow2(g->rq_wqe_cnt) ||
	    !fv__is_pow2(g->rq_stride) || g->rq_stride < FV__DS)) || (unsigned)g->qpt >= FV__QPT_COUNT ||
	    !g->sq_buf || !g->dbrec || !g->bf_reg || g->bf_size % FV__WQEBB || g->qpn > 0xffffff)
		return EINVAL;
	/* per send slot: wr_id and meta; wr_id per receive WQE */
	mem = (uint8_t *)calloc(1, sq_n * (sizeof(struct fv__wr_id) + sizeof(struct fv__sq_meta)) +
		     rq_n * sizeof(uint64_t));
	if (!mem)
		return ENOMEM;
	memset(qp, 0, sizeof(*qp));
	qp->mem = mem;
	qp->qpn = g->qpn;
	qp->qpt = g->qpt;
	qp->max_inline = g->max_inline;
	qp->max_send_sge = g->max_send_sge;
	qp->max_recv_sge = g->max_recv_sge;
	if (g->qpt == FV_QPT_RAW) {
		qp->eth_inline = g->eth_inline;
		qp->max_tso_header = g->max_tso_header;
		qp->max_tso = g->max_tso;
		qp->raw_csum = g->raw_csum;
	}

	struct fv__sq *sq = &qp->sq;
	sq->ring.buf = (uint8_t *)g->sq_buf;
	sq->ring.end = (uint8_t *)g->sq_buf + sq_n * FV__WQEBB;
	sq->wr_id = (struct fv__wr_id *)mem;
	sq->meta = (struct fv__sq_meta *)(mem + sq_n * sizeof(struct fv__wr_id));
	sq->mask = g->sq_wqe_cnt - 1;
	sq->mask8 = sq->mask * 8;
	sq->dbrec = &g->dbrec[MLX5_SND_DBR];
	sq->unsig_max = g->sq_sig_all ? 0 : fv__unsig_max(g);	/* sq_sig_all: no unsignaled run (sq.h) */
	fv__sq_set_pi(sq, be32toh(*sq->dbrec) & 0xffff);
	sq->qpn_be = htobe32(g->qpn << 8);
	sq->qpn_ds_ud = htobe32(g->qpn << 8 | FV__UD_DS1);
	sq->sig_all = htobe32(g->sq_sig_all ? FV_SIGNALED : 0);
	sq->bf_nbb = g->bf_size / FV__WQEBB;
	sq->bf = fv__registry_bf_get((uintptr_t)g->bf_reg);
	if (!sq->bf) {
		free(mem);
		qp->mem = NULL;
		return ENOMEM;
	}
	sq->bf_toggle = (uintptr_t)g->bf_reg ^ ((uintptr_t)g->bf_reg + g->bf_size);

	struct fv__rq *rq = &qp->rq;
	rq->dbrec = &g->dbrec[MLX5_RCV_DBR];
	if (rq_n) {
		rq->buf = (uint8_t *)g->rq_buf;
		rq->entries = g->rq_wqe_cnt;
		rq->mask = g->rq_wqe_cnt - 1;
		rq->stride_shift = (uint32_t)__builtin_ctz(g->rq_stride);
		rq->max_gs = g->rq_stride / FV__DS;
		rq->max_sge = qp->max_recv_sge < rq->max_gs ? qp->max_recv_sge : rq->max_gs;
		rq->head.v = rq->tail = be32toh(*rq->dbrec) & 0xffff;
		rq->lim.v = rq->head.v + rq->entries;
		rq->wrid = (uint64_t *)(mem + sq_n * (sizeof(struct fv__wr_id) + sizeof(struct fv__sq_meta)));
	}
	qp->locking = fv__locking_default();
	if (fv_registry_set(qp->qpn, qp)) {
		fv__registry_bf_put(sq->bf);
		free(mem);
		qp->mem = NULL;
		return ENOMEM;
	}
	return 0;
}

/*
 * A raw Ethernet QP's caps, as libmlx5 learns them: on a port whose link layer is Ethernet,
 * checksum offload if the device has IBV_DEVICE_RAW_IP_CSUM, and TSO up to tso_caps.max_tso
 * if tso_caps names RAW_PACKET QPs; the L2 minimum inline header (libmlx5 keeps the device's
 * mode private; a device in the NONE mode accepts the 18 bytes too). max_tso_header is the
 * caller's (fv_raw_init). Returns 0 or an errno value.
 */
static inline int fv__raw_caps(struct fv_qp_geom *g, struct ibv_context *ctx, uint8_t port)
{
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;

	memset(&dx, 0, sizeof(dx));
	memset(&pa, 0, sizeof(pa));
	if (ibv_query_device_ex(ctx, NULL, &dx) || ibv_query_port(ctx, port, &pa))
		return errno ? errno : EIO;
	g->eth_inline = 18;
	g->raw_csum = g->max_tso = 0;
	if (pa.link_layer == IBV_LINK_LAYER_ETHERNET) {
		g->raw_csum = !!(dx.orig_attr.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM);
		if (dx.tso_caps.supported_qpts & (1u << IBV_QPT_RAW_PACKET))
			g->max_tso = dx.tso_caps.max_tso;
	}
	return 0;
}

/* fv_qp_init, with the max_tso_header of a RAW_PACKET QP. */
static inline int fv__qp_take(struct fv_qp *qp, struct ibv_qp *ibqp, uint32_t max_tso_header)
{
	struct mlx5dv_qp dv;
	struct mlx5dv_obj obj;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	int qpt = fv__qpt_of(ibqp->qp_type), err;

	if (qpt < 0)
		return EOPNOTSUPP;
	/*
	 * First: a DCT (also IBV_QPT_DRIVER) answers no query of its caps, and mlx5dv_init_obj
	 * would dereference its missing BlueFlame register (dct.h).
	 */
	if (ibv_query_qp(ibqp, &attr, IBV_QP_CAP | (qpt == FV_QPT_RAW ? IBV_QP_PORT : 0), &init))
		return qpt == FV_QPT_DCI ? EINVAL : errno ? errno : EIO;
	memset(&dv, 0, sizeof(dv));
	memset(&obj, 0, sizeof(obj));
	obj.qp.in = ibqp;
	obj.qp.out = &dv;
	err = mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP);
	if (err)
		return err;
	if (dv.sq.stride != FV__WQEBB)
		return EINVAL;

	struct fv_qp_geom g = FV__ZERO_INIT;

	g.qpt = (enum fv_qpt)qpt, g.qpn = ibqp->qp_num;
	g.sq_buf = dv.sq.buf, g.sq_wqe_cnt = dv.sq.wqe_cnt;
	g.rq_buf = dv.rq.buf, g.rq_wqe_cnt = dv.rq.wqe_cnt, g.rq_stride = dv.rq.stride;
	g.dbrec = dv.dbrec, g.bf_reg = dv.bf.reg, g.bf_size = dv.bf.size;
	g.max_inline = init.cap.max_inline_data, g.max_send_sge = init.cap.max_send_sge;
	g.max_recv_sge = init.cap.max_recv_sge, g.sq_sig_all = init.sq_sig_all;
	if (qpt == FV_QPT_RAW) {
		err = fv__raw_caps(&g, ibqp->context, attr.port_num);
		if (err)
			return err;
		g.max_tso_header = max_tso_header;
	}
	err = fv_qp_init_geom(qp, &g);
	if (err)
		return err;
	qp->ibqp = ibqp;
	return 0;
}

/*
 * Take over a verbs QP (RC, UC, UD, XRC_SEND, RAW_PACKET, or a DCI: IBV_QPT_DRIVER; a DCT is
 * EINVAL, see fv_dct_init) created by libmlx5: its rings,
 * doorbell record and BlueFlame register from mlx5dv_init_obj, its granted caps and
 * sq_sig_all from ibv_query_qp. Afterwards post only through fastverbs. Returns 0 or an errno
 * value (EOPNOTSUPP for other QP types). A RAW_PACKET QP taken over here has max_tso_header
 * 0 (every TSO send is refused): fv_raw_init takes the QP's.
 */
static inline int fv_qp_init(struct fv_qp *qp, struct ibv_qp *ibqp)
{
	return fv__qp_take(qp, ibqp, 0);
}

/*
 * Take over a RAW_PACKET ibv_qp (fv_qp_init) as a typed handle. max_tso_header: the value the
 * QP was created with (struct ibv_qp_init_attr_ex; 0 if none), which libmlx5 checks TSO
 * headers against and does not let anyone query. EINVAL for another QP type.
 */
static inline int fv_raw_init(struct fv_raw *h, struct ibv_qp *ibqp, uint32_t max_tso_header)
{
	int err;

	if (ibqp->qp_type != IBV_QPT_RAW_PACKET)
		return EINVAL;
	err = fv__qp_take(&h->qp, ibqp, max_tso_header);
	return err;
}

/* Release what fv_qp_init / fv_qp_init_geom set up. The ibv_qp itself stays the caller's. */
static inline void fv_qp_cleanup(struct fv_qp *qp)
{
	if (qp->mem && fv_registry_qp(qp->qpn) == qp)
		fv_registry_set(qp->qpn, NULL);
	if (qp->mem)
		fv__registry_bf_put(qp->sq.bf);
	free(qp->mem);
	qp->mem = NULL;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_QP_H */
