/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Decoding one CQE into a completion (the CQE's layout: cq.h): the tables from send and
 * responder opcodes and error syndromes to ibv_wc values, scatter-to-CQE, consuming the
 * receive WQE a responder CQE completes, and the stores of struct fv_wc / struct ibv_wc.
 */
#ifndef FASTVERBS_CQ_DECODE_H
#define FASTVERBS_CQ_DECODE_H

#include "cq_init.h"
#include "gen/wc_op.h"

FV__EXTERN_C_BEGIN

/* The requester completion per send opcode, fv__sq_wc_op and its FV__WC_* bits: ops.def. */

/* Responder CQE opcode (1..4) -> ibv_wc opcode and flags. */
static const uint16_t fv__rq_wc_op[5] = {
	0,
	IBV_WC_RECV_RDMA_WITH_IMM | FV__WC_IMM,			/* MLX5_CQE_RESP_WR_IMM */
	IBV_WC_RECV,						/* MLX5_CQE_RESP_SEND */
	IBV_WC_RECV | FV__WC_IMM,				/* MLX5_CQE_RESP_SEND_IMM */
	IBV_WC_RECV | ((unsigned)IBV_WC_WITH_INV << 8),		/* MLX5_CQE_RESP_SEND_INV */
};
static_assert(MLX5_CQE_RESP_WR_IMM == 1 && MLX5_CQE_RESP_SEND == 2 && MLX5_CQE_RESP_SEND_IMM == 3 &&
	      MLX5_CQE_RESP_SEND_INV == 4, "fv__rq_wc_op positions");

/*
 * IBV_WC_IP_CSUM_OK for a frame a raw Ethernet QP with checksum offload received: an IPv4
 * packet whose IP header and TCP/UDP checksums the device found good, as libmlx5 tells it.
 */
static inline unsigned fv__cqe_csum_ok(const struct mlx5_cqe64 *cqe)
{
	unsigned ok = MLX5_CQE_L3_OK | MLX5_CQE_L4_OK;

	return (cqe->hds_ip_ext & ok) == ok &&
	       ((cqe->l4_hdr_type_etc >> 2) & 3) == MLX5_CQE_L3_HDR_TYPE_IPV4 ? (unsigned)IBV_WC_IP_CSUM_OK : 0u;
}

/* ibv_wc_status of an error CQE syndrome (the table of docs/formats.md §5.3). */
static inline uint8_t fv__cqe_status(uint8_t syndrome)
{
	switch (syndrome) {
	case MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR:	return IBV_WC_LOC_LEN_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR:		return IBV_WC_LOC_QP_OP_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_PROT_ERR:		return IBV_WC_LOC_PROT_ERR;
	case MLX5_CQE_SYNDROME_WR_FLUSH_ERR:		return IBV_WC_WR_FLUSH_ERR;
	case MLX5_CQE_SYNDROME_MW_BIND_ERR:		return IBV_WC_MW_BIND_ERR;
	case MLX5_CQE_SYNDROME_BAD_RESP_ERR:		return IBV_WC_BAD_RESP_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR:	return IBV_WC_LOC_ACCESS_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR:	return IBV_WC_REM_INV_REQ_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR:	return IBV_WC_REM_ACCESS_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_OP_ERR:		return IBV_WC_REM_OP_ERR;
	case MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR:	return IBV_WC_RETRY_EXC_ERR;
	case MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR:	return IBV_WC_RNR_RETRY_EXC_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR:	return IBV_WC_REM_ABORT_ERR;
	default:					return IBV_WC_GENERAL_ERR;
	}
}

/*
 * Whether the UMR WQE in slot is a local invalidate, not a bind: it frees the window (mkey
 * context byte 0, the WQE's second block), checks the QPN (UMR control flags, byte 16) and
 * sets no key byte (qpn_mkey 0xffffff00). A type 1 unbind checks no QPN; a type 2 zero-length
 * bind differs only in its key byte, so one whose new key byte is 0 reads as an invalidate.
 */
static inline bool fv__umr_is_local_inv(const struct fv__sq *sq, uint32_t slot)
{
	const uint8_t *ctrl = sq->ring.buf + ((size_t)(slot & sq->mask) << 6);
	const uint8_t *mkey = sq->ring.buf + ((size_t)((slot + 1) & sq->mask) << 6);
	uint32_t qpn_mkey;

	memcpy(&qpn_mkey, mkey + 4, 4);
	return (mkey[0] & MLX5_WQE_MKEY_CONTEXT_FREE) && (ctrl[16] & MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN) &&
	       qpn_mkey == htobe32(0xffffff00u);
}

/*
 * The requester entries fv__sq_wc_op cannot give alone: byte_len from the CQE (READ) into *len,
 * and UMR (bind or local invalidate: fv__umr_is_local_inv).
 */
static inline unsigned fv__sq_wc_more(const struct fv__sq *sq, uint32_t slot, unsigned e,
				   const struct mlx5_cqe64 *cqe, uint32_t *len)
{
	if (e & FV__WC_CNT)
		*len = be32toh(cqe->byte_cnt);
	if (e & FV__WC_UMR)
		e = fv__umr_is_local_inv(sq, slot) ? IBV_WC_LOCAL_INV : IBV_WC_BIND_MW;
	return e;
}

/*
 * Copy len bytes from src into the scatter list d (at most n data segments, stopping at the
 * invalid-lkey terminator; segments continue at ring after end). Returns an ibv_wc_status.
 */
static inline uint8_t fv__scatter(const struct mlx5_wqe_data_seg *d, uint32_t n, const void *end,
				 const void *ring, const uint8_t *src, uint32_t len)
{
	for (uint32_t i = 0; len && i < n; i++, d++) {
		if ((const void *)d == end)
			d = (const struct mlx5_wqe_data_seg *)ring;
		if (d->lkey == htobe32(MLX5_INVALID_LKEY))
			break;
		uint32_t c = be32toh(d->byte_count);

		c = c < len ? c : len;
		memcpy((void *)(uintptr_t)be64toh(d->addr), src, c);
		src += c;
		len -= c;
	}
	return len ? IBV_WC_LOC_LEN_ERR : IBV_WC_SUCCESS;
}

/* Where scatter-to-CQE data sits: format 1 in the CQE itself, format 2 in the 64 bytes before. */
static inline const uint8_t *fv__cqe_data(const struct mlx5_cqe64 *cqe, uint8_t op_own)
{
	return (const uint8_t *)cqe - ((op_own & MLX5_INLINE_SCATTER_64) ? 64 : 0);
}

/*
 * Requester scatter-to-CQE (RDMA READ / atomic response): into the data segments of the
 * send WQE in slot, found past its ctrl, [xrc | DCI's av], raddr and [atomic] segments; the WQE may
 * continue at block 0.
 */
static FV__COLD uint8_t
fv__scatter_send(const struct fv_qp *qp, uint32_t slot, const uint8_t *src, uint32_t len)
{
	const struct fv__sq *sq = &qp->sq;
	const uint8_t *c = sq->ring.buf + ((size_t)slot << 6);
	unsigned skip = 1 + (qp->qpt == FV_QPT_XRC) + 3 * (qp->qpt == FV_QPT_DCI), ds = fv__ctrl_ds(c);

	switch (c[3]) {
	case MLX5_OPCODE_RDMA_READ:	skip += 1; break;
	case MLX5_OPCODE_ATOMIC_CS:
	case MLX5_OPCODE_ATOMIC_FA:	skip += 2; break;
	default:			return IBV_WC_GENERAL_ERR;	/* no scatter list to fill */
	}
	if (ds <= skip)
		return IBV_WC_LOC_LEN_ERR;
	return fv__scatter((const struct mlx5_wqe_data_seg *)(c + skip * FV__DS), ds - skip,
			  sq->ring.end, sq->ring.buf, src, len);
}

/* The SRQ a responder CQE of qp (NULL: a QPN fastverbs does not own) belongs to; recv.h rule. */
static FV__COLD struct fv_srq *
fv__cq_find_srq(const struct fv_cq *cq, struct fv_qp *qp, uint32_t srqn_uidx)
{
	if (qp) {
		if (!qp->srq && qp->ibqp && qp->ibqp->srq)
			qp->srq = fv__srq_lookup(qp->ibqp->srq, 0, 1);
		return qp->srq;
	}
	return cq->srq ? cq->srq : fv__srq_lookup(NULL, srqn_uidx & 0xffffff, 0);
}

/* The receive WQE a responder CQE consumed, to be freed once read (fv__cq_recv_free). */
struct fv__rx {
	struct fv__rq *rq;	/* the RQ's oldest WQE, or */
	struct fv_srq *srq;	/* the SRQ's WQE idx */
	uint32_t idx;
};

/* Where a responder CQE's receive WQE is: found from qp and the CQE, or known to the caller. */
enum { FV__RX_FIND, FV__RX_RQ, FV__RX_SRQ };

/*
 * The receive WQE a responder (or responder error) CQE completes: the RQ's oldest, or the SRQ
 * WQE named by wqe_counter. Sets *wr_id, *max_gs and *rx, returns the WQE's scatter list;
 * NULL (nothing changed) if there is no RQ or SRQ to take from. where: FV__RX_RQ, the caller
 * knows qp has an RQ; FV__RX_SRQ, an SRQ already found (qp->srq). The WQE stays the poller's
 * until fv__cq_recv_free.
 */
static FV__ALWAYS_INLINE const struct mlx5_wqe_data_seg *
fv__cq_take_recv(const struct fv_cq *cq, struct fv_qp *qp, const struct mlx5_cqe64 *cqe,
		uint64_t *wr_id, uint32_t *max_gs, struct fv__rx *rx, const int where)
{
	if (where == FV__RX_RQ || (where == FV__RX_FIND && qp && qp->rq.entries)) {
		struct fv__rq *rq = &qp->rq;
		uint32_t slot = rq->tail & rq->mask;

		rx->rq = rq, rx->srq = NULL, rx->idx = 0;
		*wr_id = rq->wrid[slot];
		*max_gs = rq->max_gs;
		return (const struct mlx5_wqe_data_seg *)(rq->buf + ((size_t)slot << rq->stride_shift));
	}

	struct fv_srq *srq = where == FV__RX_SRQ ? qp->srq :
			     (qp && qp->srq) ? qp->srq : fv__cq_find_srq(cq, qp, be32toh(cqe->srqn_uidx));
	uint32_t idx = be16toh(cqe->wqe_counter);

	if (where == FV__RX_FIND && !srq)
		return NULL;
	idx &= srq->mask;
	rx->rq = NULL;
	rx->srq = srq;
	rx->idx = idx;
	*wr_id = srq->wrid[idx];
	*max_gs = srq->max_gs;
	return (const struct mlx5_wqe_data_seg *)(fv__srq_wqe(srq, idx) + 1);
}

/*
 * Give the receive WQE of rx back to its poster, after its last read: the RQ's tail moves
 * past it (a poster in another thread may fill it from then on), or the SRQ links it after
 * its free list's tail (under the SRQ's lock when its compat calls lock, sync.h; ibv picks the
 * lock's release, fv__srq_free_locked).
 */
static FV__ALWAYS_INLINE void fv__cq_recv_free(const struct fv__rx *rx, const int ibv)
{
	if (rx->rq)
		fv__rq_set_tail(rx->rq, rx->rq->tail + 1);
	else
		fv__srq_free_locked(rx->srq, rx->idx, ibv);
}

/* What decoding one CQE gave. */
enum { FV__CQE_BAD = -1, FV__CQE_HIDE = 0, FV__CQE_REPORT = 1 };

/* Four bytes as the 32-bit word whose memory image they are. */
static inline uint32_t fv__4x8(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
#if __BYTE_ORDER == __LITTLE_ENDIAN
	/* b and c grouped: gcc then sees the ibv_wc opcode and flags as one 16-bit value */
	return (uint32_t)d << 24 | (uint32_t)(b | c << 8) << 8 | a;
#else
	return (uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d;
#endif
}

/*
 * The caller's completion entries, as the 8-byte words fastverbs stores: a union with the
 * struct itself, so that the stores are, as far as aliasing goes, stores to a struct fv_wc
 * (or ibv_wc) and to nothing else: the compiler keeps the QP's fields in registers across
 * them (field by field, compilers make a narrow store of each).
 */
typedef uint64_t fv_u64x2u __attribute__((vector_size(16), aligned(8)));	/* 8-byte aligned */

union fv__wc_words {
	struct fv_wc wc;
	uint64_t w[4];
	fv_u64x2u v[2];
};

union fv__ibv_wc_words {
	struct ibv_wc wc;
	uint64_t w[6];
	fv_u64x2u v[3];
};

/* Word i of the completion entry at o (ibv: struct ibv_wc, else struct fv_wc). */
static FV__ALWAYS_INLINE uint64_t *fv__wc_word(void *o, const int ibv, unsigned i)
{
	return ibv ? &((union fv__ibv_wc_words *)o)->w[i] : &((union fv__wc_words *)o)->w[i];
}

/* Its 16-byte piece i. */
static FV__ALWAYS_INLINE fv_u64x2u *fv__wc_piece(void *o, const int ibv, unsigned i)
{
	return ibv ? &((union fv__ibv_wc_words *)o)->v[i] : &((union fv__wc_words *)o)->v[i];
}

/*
 * Store the completion w (decoded from cqe) at o as fv_poll (ibv = 0: struct fv_wc) or
 * fv_poll_cq (ibv = 1: struct ibv_wc, filled as libmlx5 fills it, docs/formats.md §5.5)
 * reports it. Returns FV__CQE_REPORT.
 */
static FV__ALWAYS_INLINE int
fv__cqe_put(void *o, const int ibv, const struct mlx5_cqe64 *cqe, uint8_t op_own, const struct fv_wc *w)
{
	if (!ibv) {
		uint64_t v[4] = {
			w->wr_id, fv__2x32(w->byte_len, w->qp_num), fv__2x32(w->src_qp, w->invalidated_rkey),
			fv__2x32(fv__4x8(w->status, w->opcode, w->wc_flags, w->vendor_err), 0),
		};

		static_assert(sizeof(struct fv_wc) == sizeof(v) && offsetof(struct fv_wc, byte_len) == 8 &&
			       offsetof(struct fv_wc, src_qp) == 16 && offsetof(struct fv_wc, status) == 24,
			       "struct fv_wc layout");
		for (unsigned i = 0; i < 4; i++)
			*fv__wc_word(o, 0, i) = v[i];
	} else {
		/* responder fields only for a successful responder completion */
		bool resp = (uint32_t)(op_own >> 4) - 1 < MLX5_CQE_RESP_SEND_INV && w->status == IBV_WC_SUCCESS;
		uint32_t pkey = resp ? be32toh(cqe->imm_inval_pkey) & 0xffff : 0;
		uint32_t slid = resp ? be16toh(cqe->slid) : 0;
		uint8_t sl = resp ? (be32toh(cqe->flags_rqpn) >> 24) & 0xf : 0;
		uint8_t path = resp ? cqe->ml_path & 0x7f : 0;
		uint64_t v[6] = {
			w->wr_id, fv__2x32(w->status, w->opcode), fv__2x32(w->vendor_err, w->byte_len),
			fv__2x32(w->imm_data, w->qp_num), fv__2x32(w->src_qp, w->wc_flags),
#if __BYTE_ORDER == __LITTLE_ENDIAN
			fv__2x32(slid << 16 | pkey, fv__4x8(sl, path, 0, 0)),
#else
			fv__2x32(pkey << 16 | slid, fv__4x8(sl, path, 0, 0)),
#endif
		};

		static_assert(sizeof(struct ibv_wc) == sizeof(v) && offsetof(struct ibv_wc, opcode) == 12 &&
			       offsetof(struct ibv_wc, byte_len) == 20 && offsetof(struct ibv_wc, qp_num) == 28 &&
			       offsetof(struct ibv_wc, wc_flags) == 36 && offsetof(struct ibv_wc, slid) == 42 &&
			       offsetof(struct ibv_wc, dlid_path_bits) == 45, "struct ibv_wc layout");
		for (unsigned i = 0; i < 6; i++)
			*fv__wc_word(o, 1, i) = v[i];
	}
	return FV__CQE_REPORT;
}

/*
 * A responder CQE (RESP_WR_IMM, _SEND, _SEND_IMM, _SEND_INV) of qp into its completion at o,
 * its receive WQE (found as fv__cq_take_recv says: where) given back. slow: scattered data
 * may come with it. Returns FV__CQE_REPORT, or FV__CQE_BAD (nothing changed) when there is no
 * receive WQE to take.
 */
static FV__ALWAYS_INLINE int
fv__cqe_resp(const struct fv_cq *cq, struct fv_qp *qp, const struct mlx5_cqe64 *cqe, uint8_t op_own,
	     void *o, const int ibv, const int slow, const int where)
{
	uint32_t op = op_own >> 4, max_gs FV__PLAIN_INIT(0);
	unsigned scat = op_own & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64);
	uint32_t qpn = qp ? qp->qpn : be32toh(cqe->sop_drop_qpn) & 0xffffff;
	uint64_t wr_id FV__PLAIN_INIT(0);
	unsigned e, status = IBV_WC_SUCCESS;	/* e: opcode | wc_flags << 8 */
	struct fv__rx rx FV__PLAIN_INIT({ NULL, NULL, 0 });
	const struct mlx5_wqe_data_seg *sg = fv__cq_take_recv(cq, qp, cqe, &wr_id, &max_gs, &rx, where);
	uint32_t rqpn = be32toh(cqe->flags_rqpn), len = be32toh(cqe->byte_cnt);
	uint32_t imm = cqe->imm_inval_pkey;	/* immediate: raw, as on the wire */

	if (slow && !sg)
		return FV__CQE_BAD;
	e = fv__rq_wc_op[op] | ((rqpn & 0x30000000) ? IBV_WC_GRH << 8 : 0);
	if (qp && qp->raw_csum)
		e |= fv__cqe_csum_ok(cqe) << 8;
	if (op == MLX5_CQE_RESP_SEND_INV)
		imm = be32toh(imm);	/* invalidated rkey: host order */
	if (slow && scat)
		status = fv__scatter(sg, max_gs, NULL, NULL, fv__cqe_data(cqe, op_own), len);
	fv__cq_recv_free(&rx, ibv);
	struct fv_wc w = FV__ZERO_INIT;

	w.wr_id = wr_id, w.byte_len = len, w.qp_num = qpn, w.src_qp = rqpn & 0xffffff;
	w.invalidated_rkey = imm, w.status = (uint8_t)status, w.opcode = (uint8_t)e;
	w.wc_flags = (uint8_t)(e >> 8);
	return fv__cqe_put(o, ibv, cqe, op_own, &w);
}

/*
 * After the decoder reported the plain receive cqe at o for qp (which has an RQ or an SRQ):
 * its QP's receive way keeps the completion, with the CQE fields it is made of
 * (fv__cq_rway_take, cq_run.h, compares them). Not for raw Ethernet QPs with checksum offload,
 * whose flags are each frame's.
 */
static FV__ALWAYS_INLINE void
fv__cq_rway_fill(struct fv__cq_rway *rway, struct fv_qp *qp, const struct mlx5_cqe64 *cqe, const void *o,
		 const int ibv)
{
	const unsigned np = (ibv ? sizeof(struct ibv_wc) : sizeof(struct fv_wc)) / 16;
	__be32 key = cqe->sop_drop_qpn;

	if (qp->raw_csum)
		return;

	struct fv__cq_rway *w = (struct fv__cq_rway *)(uintptr_t)fv__cq_rway_at(rway, key);

	w->key = key;	/* its tag is already the call's (fv__cq_poll_core) */
	w->rqpn = cqe->flags_rqpn;
	memcpy(&w->m, (const uint8_t *)cqe + 32, 8);
	memcpy(&w->p, (const uint8_t *)cqe + 16, 8);
	w->srq = !qp->rq.entries;
	w->q = qp->rq.entries ? (void *)&qp->rq : (void *)qp->srq;
	for (unsigned i = 0; i < np; i++)
		w->t[i] = *fv__wc_piece((void *)(uintptr_t)o, ibv, i);
}

/*
 * fv__cq_rway_fill in cq's receive ways, out of line (once per QP, its code kept out of the poll
 * loop); the first one allocates the table (none without memory: the general path decodes).
 */
static FV__NOINLINE void
fv__cq_rway_fill_out(struct fv_cq *cq, struct fv_qp *qp, const struct mlx5_cqe64 *cqe, const void *o, int ibv)
{
	if (!cq->rway) {
		cq->rway = (struct fv__cq_rway *)aligned_alloc(64, FV__CQ_WAYS * sizeof(struct fv__cq_rway));
		if (!cq->rway)
			return;
		fv__cq_rway_reset(cq->rway);
	}
	if (ibv)
		fv__cq_rway_fill(cq->rway, qp, cqe, o, 1);
	else
		fv__cq_rway_fill(cq->rway, qp, cqe, o, 0);
}

static FV__COLD int fv__cqe_decode_slow(const struct fv_cq *cq, struct fv_qp *qp, const struct mlx5_cqe64 *cqe,
			       uint8_t op_own, void *o, int ibv);

/*
 * Decode one software-owned CQE and store its completion at o (fv__cqe_put); qp is the fv_qp
 * its QPN names (NULL: none). slow = 0 is the inlined fast path: requester CQEs, and responder
 * CQEs without scattered data on an RQ or on an SRQ already found for the QP (qp->srq). It
 * hands everything else to the slow = 1 instance of this same body, out of line:
 * scatter-to-CQE, a QP's first receive on an SRQ, errors, CQEs it cannot decode.
 * Returns FV__CQE_REPORT, FV__CQE_HIDE (a forced completion) or FV__CQE_BAD (no queue changed);
 * o is written only for FV__CQE_REPORT.
 */
static FV__ALWAYS_INLINE int
fv__cqe_decode(const struct fv_cq *cq, struct fv_qp *qp, const struct mlx5_cqe64 *cqe,
	      uint8_t op_own, void *o, const int ibv, const int slow)
{
	uint32_t op = op_own >> 4, max_gs FV__PLAIN_INIT(0);
	uint8_t send_op = *(const uint8_t *)&cqe->sop_drop_qpn;	/* big-endian: bits 31:24 first */
	unsigned scat = op_own & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64);
	uint64_t wr_id FV__PLAIN_INIT(0);
	unsigned e, status = IBV_WC_SUCCESS;	/* e: opcode | wc_flags << 8 */

	/* Fast: REQ (op_own 7:2 all zero) or RESP_* on an RQ or an SRQ found before (qp->srq),
	 * no scattered data, known QP. */
	if (!slow && __builtin_expect(!qp || ((op_own & 0xfc) &&
				      (scat || op > MLX5_CQE_RESP_SEND_INV || (!qp->rq.entries && !qp->srq))), 0))
		return fv__cqe_decode_slow(cq, qp, cqe, op_own, o, ibv);
	if (slow && (scat == 0x0c || (!qp && (op == MLX5_CQE_REQ || op == MLX5_CQE_REQ_ERR))))
		return FV__CQE_BAD;	/* compressed CQEs are never requested */

	uint32_t qpn = qp ? qp->qpn : be32toh(cqe->sop_drop_qpn) & 0xffffff;

	/* Each kind stores its own completion: its constants fold into the stores. */
	if (op == MLX5_CQE_REQ) {
		uint16_t wqe_counter = be16toh(cqe->wqe_counter);
		uint32_t slot = wqe_counter & qp->sq.mask, len;
		uint32_t end = qp->sq.sig_all ? fv__sq_done_end(&qp->sq, slot, wqe_counter) :
			       fv__sq_asked_end(&qp->sq, slot);

		/* The slot is read whole before ci frees it for a poster in another thread. */
		wr_id = qp->sq.wr_id[slot].v;
		e = fv__sq_wc_op[send_op];
		len = e >> 24;
		if (__builtin_expect(e & (FV__WC_CNT | FV__WC_UMR), 0))
			e = fv__sq_wc_more(&qp->sq, slot, e, cqe, &len);
		if (slow && scat)
			status = fv__scatter_send(qp, slot, fv__cqe_data(cqe, op_own), len);
		if (__builtin_expect(fv__sq_forced(&qp->sq, slot, end), 0)) {
			fv__sq_unforce(&qp->sq, slot);
			fv__sq_set_ci(&qp->sq, end);
			if (status == IBV_WC_SUCCESS)
				return FV__CQE_HIDE;	/* asked by fastverbs, not by the caller */
		} else {
			fv__sq_set_ci(&qp->sq, end);
		}
		struct fv_wc w = FV__ZERO_INIT;

		w.wr_id = wr_id, w.byte_len = len, w.qp_num = qpn, w.status = (uint8_t)status;
		w.opcode = (uint8_t)e, w.wc_flags = (uint8_t)(e >> 8);
		return fv__cqe_put(o, ibv, cqe, op_own, &w);
	}
	if (op - 1 < MLX5_CQE_RESP_SEND_INV) {	/* RESP_WR_IMM, _SEND, _SEND_IMM, _SEND_INV */
		if (slow)
			return fv__cqe_resp(cq, qp, cqe, op_own, o, ibv, 1, FV__RX_FIND);
		return qp->rq.entries ? fv__cqe_resp(cq, qp, cqe, op_own, o, ibv, 0, FV__RX_RQ)
				      : fv__cqe_resp(cq, qp, cqe, op_own, o, ibv, 0, FV__RX_SRQ);
	}
	if (!slow)
		__builtin_unreachable();	/* the fast path sent everything else here */

	/* Error CQE: status from the syndrome, the WQE retired as a success would be. */
	const struct mlx5_err_cqe *x = (const struct mlx5_err_cqe *)cqe;
	struct fv__rx rx FV__PLAIN_INIT({ NULL, NULL, 0 });

	if (op == MLX5_CQE_REQ_ERR) {
		uint16_t wqe_counter = be16toh(cqe->wqe_counter);
		uint32_t slot = wqe_counter & qp->sq.mask, len;
		uint32_t end = fv__sq_done_end(&qp->sq, slot, wqe_counter);

		wr_id = qp->sq.wr_id[slot].v;
		fv__sq_unforce(&qp->sq, slot);	/* reported, forced or not */
		/* libmlx5 leaves the opcode undefined on errors; give the failed WQE's. */
		e = fv__sq_wc_more(&qp->sq, slot, fv__sq_wc_op[send_op], cqe, &len) & 0xff;
		fv__sq_set_ci(&qp->sq, end);	/* the slot read: free it */
	} else if (op == MLX5_CQE_RESP_ERR && fv__cq_take_recv(cq, qp, cqe, &wr_id, &max_gs, &rx, 0)) {
		fv__cq_recv_free(&rx, ibv);
		e = IBV_WC_RECV;
	} else {
		return FV__CQE_BAD;	/* resize, tag matching, signature error: not driven here */
	}
	struct fv_wc w = FV__ZERO_INIT;

	w.wr_id = wr_id, w.qp_num = qpn, w.status = fv__cqe_status(x->syndrome), w.opcode = (uint8_t)e;
	w.vendor_err = x->vendor_err_synd;
	return fv__cqe_put(o, ibv, cqe, op_own, &w);
}

static FV__COLD int fv__cqe_decode_slow(const struct fv_cq *cq, struct fv_qp *qp, const struct mlx5_cqe64 *cqe,
			       uint8_t op_own, void *o, int ibv)
{
	return fv__cqe_decode(cq, qp, cqe, op_own, o, ibv, 1);
}

FV__EXTERN_C_END

#endif /* FASTVERBS_CQ_DECODE_H */
