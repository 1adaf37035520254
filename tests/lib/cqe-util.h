/*
 * Test helpers for the completion side: a CQ on plain memory with a "device" end that
 * writes CQEs as docs/formats.md §5.4 says (fields first, op_own last, owner = bit
 * log2(entries) of the producer counter), and a send-WQE writer for requester completions.
 * Header-only: every .c file in tests/lib is linked into every test binary.
 */
#ifndef TESTS_CQE_UTIL_H
#define TESTS_CQE_UTIL_H

#include <stdio.h>
#include <criterion/criterion.h>
#include <fastverbs/cq.h>
#include <fastverbs/compat/poll_cq.h>

/* A QP on plain memory (rings rounded up to whole pages, any size): what fv_qp_init_geom needs. */
struct tqp {
	struct fv_qp qp;
	uint8_t *sq, *rq, *bf;
	__be32 *dbrec;		/* [MLX5_RCV_DBR], [MLX5_SND_DBR] */
};

struct tqp_cfg {
	enum fv_qpt qpt;
	uint32_t qpn;
	uint32_t sq_wqe_cnt, rq_wqe_cnt, rq_stride;
	uint32_t max_send_sge, max_recv_sge;
	uint32_t start_pi;	/* send counters start here (32 bits) */
	int sq_sig_all;
};

static inline void *tqp_alloc(size_t n)
{
	void *p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095);

	cr_assert(p);
	memset(p, 0, n);
	return p;
}

static inline void tqp_init(struct tqp *t, const struct tqp_cfg *c)
{
	memset(t, 0, sizeof(*t));
	t->sq = tqp_alloc((size_t)c->sq_wqe_cnt * 64);
	t->rq = c->rq_wqe_cnt ? tqp_alloc((size_t)c->rq_wqe_cnt * c->rq_stride) : NULL;
	t->bf = tqp_alloc(512);
	t->dbrec = tqp_alloc(64);
	t->dbrec[MLX5_SND_DBR] = htobe32(c->start_pi & 0xffff);

	struct fv_qp_geom g = {
		.qpt = c->qpt, .qpn = c->qpn, .sq_buf = t->sq, .sq_wqe_cnt = c->sq_wqe_cnt,
		.rq_buf = t->rq, .rq_wqe_cnt = c->rq_wqe_cnt, .rq_stride = c->rq_stride,
		.dbrec = t->dbrec, .bf_reg = t->bf, .bf_size = 256,
		.max_send_sge = c->max_send_sge, .max_recv_sge = c->max_recv_sge,
		.sq_sig_all = c->sq_sig_all,
	};
	cr_assert_eq(fv_qp_init_geom(&t->qp, &g), 0);
	fv__sq_set_pi(&t->qp.sq, c->start_pi);
}

static inline void tqp_free(struct tqp *t)
{
	fv_qp_cleanup(&t->qp);
	free(t->sq);
	free(t->rq);
	free(t->bf);
	free(t->dbrec);
}

/* n bytes as hex into a static string, for assertion messages. */
static inline const char *cqe_hex(const void *p, size_t n)
{
	static char s[3 * 256 + 1];
	size_t o = 0;

	for (size_t i = 0; i < n && i < 256; i++)
		o += (size_t)snprintf(s + o, sizeof(s) - o, "%s%02x", i ? " " : "", ((const uint8_t *)p)[i]);
	s[o] = 0;
	return s;
}

/* The send block of counter idx. */
static inline uint8_t *tqp_block(const struct tqp *t, uint32_t idx)
{
	return t->sq + ((size_t)(idx & t->qp.sq.mask) << 6);
}

struct cqe_cq {
	struct fv_cq cq;
	uint8_t *buf;
	__be32 *dbrec;		/* [0] consumer index, [1] arm */
	uint32_t cnt, size;
	uint32_t pi;		/* CQEs the device wrote */
};

/* A CQ of cnt entries of size bytes, every op_own 0xF0 as libmlx5 leaves it, consumption
 * starting at start_ci (through the doorbell record). */
static inline void cqe_cq_init(struct cqe_cq *c, uint32_t cnt, uint32_t size, uint32_t start_ci)
{
	memset(c, 0, sizeof(*c));
	c->cnt = cnt;
	c->size = size;
	c->buf = aligned_alloc(4096, (cnt * size + 4095) & ~4095u);
	c->dbrec = aligned_alloc(64, 64);
	cr_assert(c->buf && c->dbrec);
	memset(c->buf, 0, cnt * size);
	for (uint32_t i = 0; i < cnt; i++)
		c->buf[i * size + size - 1] = 0xf0;
	memset(c->dbrec, 0, 64);
	c->dbrec[0] = htobe32(start_ci & 0xffffff);
	c->pi = start_ci;

	struct fv_cq_geom g = { .buf = c->buf, .cqe_cnt = cnt, .cqe_size = size, .dbrec = c->dbrec, .cqn = 7 };
	cr_assert_eq(fv_cq_init_geom(&c->cq, &g), 0);
}

static inline void cqe_cq_free(struct cqe_cq *c)
{
	fv_cq_cleanup(&c->cq);
	free(c->buf);
	free(c->dbrec);
}

/* The next entry the device will write, zeroed (both halves of a 128-byte entry) except
 * op_own, which keeps the previous pass's value until cqe_push. Returns its cqe64. */
static inline struct mlx5_cqe64 *cqe_next(struct cqe_cq *c)
{
	uint8_t *e = c->buf + (c->pi & (c->cnt - 1)) * c->size;

	memset(e, 0, c->size - 1);
	return (struct mlx5_cqe64 *)(e + c->size - 64);
}

/* The 64 bytes before cqe (the scatter area of a 128-byte entry). */
static inline uint8_t *cqe_prefix(struct mlx5_cqe64 *cqe)
{
	return (uint8_t *)cqe - 64;
}

/* Hand cqe to software: op_own = opcode | format/SE bits | owner, written last. */
static inline void cqe_push(struct cqe_cq *c, struct mlx5_cqe64 *cqe, uint8_t opcode, uint8_t bits)
{
	uint8_t owner = (c->pi & c->cnt) ? 1 : 0;

	__atomic_store_n(&cqe->op_own, (uint8_t)(opcode << 4 | bits | owner), __ATOMIC_RELEASE);
	c->pi++;
}

/* Requester CQE for the send WQE whose ctrl index is wqe_counter. */
static inline struct mlx5_cqe64 *cqe_req(struct cqe_cq *c, uint32_t qpn, uint8_t send_opcode,
					 uint16_t wqe_counter, uint32_t byte_cnt, uint8_t bits)
{
	struct mlx5_cqe64 *e = cqe_next(c);

	e->sop_drop_qpn = htobe32((uint32_t)send_opcode << 24 | qpn);
	e->wqe_counter = htobe16(wqe_counter);
	e->byte_cnt = htobe32(byte_cnt);
	cqe_push(c, e, MLX5_CQE_REQ, bits);
	return e;
}

/* Responder CQE fields (the rest zero). */
struct cqe_resp {
	uint8_t opcode;		/* MLX5_CQE_RESP_* */
	uint32_t qpn, byte_cnt, flags_rqpn, srqn_uidx;
	__be32 imm_inval_pkey;
	uint16_t wqe_counter, slid;
	uint8_t ml_path, bits;	/* bits: format / SE of op_own */
	const void *data;	/* scatter data: format 1 into the CQE, format 2 into the prefix */
	uint32_t data_len;
};

static inline struct mlx5_cqe64 *cqe_resp(struct cqe_cq *c, const struct cqe_resp *r)
{
	struct mlx5_cqe64 *e = cqe_next(c);

	/* Format 1 data takes bytes 0..31 of the CQE: ml_path, slid and flags_rqpn are not there. */
	if (r->bits & MLX5_INLINE_SCATTER_32) {
		memcpy(e, r->data, r->data_len);
	} else {
		if (r->data_len)
			memcpy(cqe_prefix(e), r->data, r->data_len);
		e->ml_path = r->ml_path;
		e->slid = htobe16(r->slid);
		e->flags_rqpn = htobe32(r->flags_rqpn);
	}
	e->srqn_uidx = htobe32(r->srqn_uidx);
	e->imm_inval_pkey = r->imm_inval_pkey;
	e->byte_cnt = htobe32(r->byte_cnt);
	e->sop_drop_qpn = htobe32(r->qpn);
	e->wqe_counter = htobe16(r->wqe_counter);
	cqe_push(c, e, r->opcode, r->bits);
	return e;
}

/* Error CQE (MLX5_CQE_REQ_ERR / MLX5_CQE_RESP_ERR), laid out as struct mlx5_err_cqe. */
static inline struct mlx5_cqe64 *cqe_err(struct cqe_cq *c, uint8_t opcode, uint32_t qpn, uint8_t send_opcode,
					 uint8_t syndrome, uint8_t vendor, uint16_t wqe_counter, uint32_t srqn)
{
	struct mlx5_cqe64 *e = cqe_next(c);
	struct mlx5_err_cqe *x = (struct mlx5_err_cqe *)e;

	x->srqn = htobe32(srqn);
	x->vendor_err_synd = vendor;
	x->syndrome = syndrome;
	x->s_wqe_opcode_qpn = htobe32((uint32_t)send_opcode << 24 | qpn);
	x->wqe_counter = htobe16(wqe_counter);
	cqe_push(c, e, opcode, 0);
	return e;
}

/*
 * Write one send WQE at sq.pi the way the send side lays it out (§3.7): ctrl, [xrc],
 * [raddr], [atomic], data segments for sgl. flags are FV_SIGNALED etc.; returns the WQE's
 * producer counter (its ctrl index is the low 16 bits).
 */
static inline uint32_t cqe_post_send(struct fv_qp *qp, uint8_t opcode, unsigned flags, uint64_t wr_id,
				     const struct ibv_sge *sgl, int nsge)
{
	struct fv__sq *sq = &qp->sq;
	int raddr = opcode == MLX5_OPCODE_RDMA_READ || opcode == MLX5_OPCODE_RDMA_WRITE ||
		    opcode == MLX5_OPCODE_RDMA_WRITE_IMM || opcode == MLX5_OPCODE_ATOMIC_CS ||
		    opcode == MLX5_OPCODE_ATOMIC_FA;
	int atomic = opcode == MLX5_OPCODE_ATOMIC_CS || opcode == MLX5_OPCODE_ATOMIC_FA;
	unsigned ds = 1 + (qp->qpt == FV_QPT_XRC) + raddr + atomic + (unsigned)nsge;
	unsigned nbb = fv__ds_to_bb(ds);
	__be32 fm;

	cr_assert(fv__sq_take(sq, flags, nbb, &fm), "room for %u WQEBBs", nbb);
	uint8_t *p = fv__sq_next_wqe(sq);
	uint32_t at = sq->pi;

	p = fv__wqe_ctrl(p, sq->pi, 0, opcode, sq->qpn_be, ds, fm, 0);
	if (qp->qpt == FV_QPT_XRC)
		p = fv__wqe_xrc(&sq->ring, p, 0x55, true);
	if (raddr)
		p = fv__wqe_raddr(&sq->ring, p, 0x20001000, 0xabcd1234, true);
	if (atomic)
		p = fv__wqe_atomic(&sq->ring, p, 1, 2, true);
	for (int i = 0; i < nsge; i++)
		p = fv__wqe_data(&sq->ring, p, atomic ? 8 : sgl[i].length, sgl[i].lkey, sgl[i].addr, true);
	fv__sq_commit(sq, wr_id, flags, nbb);
	return at;
}

/* Poll exactly one completion through fv_poll_cq and check the call returned 1. */
static inline struct ibv_wc cqe_poll1_ibv(struct fv_cq *cq)
{
	struct ibv_wc wc[2];

	memset(wc, 0xee, sizeof(wc));
	cr_assert_eq(fv_poll_cq(cq, 2, wc), 1);
	return wc[0];
}

/* Same through fv_poll. */
static inline struct fv_wc cqe_poll1_fv(struct fv_cq *cq)
{
	struct fv_wc wc[2];

	memset(wc, 0xee, sizeof(wc));
	cr_assert_eq(fv_poll(cq, wc, 2), 1);
	return wc[0];
}

#endif
