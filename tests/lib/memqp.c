#include "memqp.h"

#include <stdio.h>
#include <criterion/criterion.h>

void memqp_init(struct memqp *m, const struct memqp_cfg *c)
{
	memset(m, 0, sizeof(*m));
	m->sq_bytes = c->sq_wqe_cnt * 64;
	m->sq = aligned_alloc(4096, (m->sq_bytes + 4095) & ~4095u);	/* C11: size a multiple of the alignment */
	m->rq = c->rq_wqe_cnt ? aligned_alloc(4096, (c->rq_wqe_cnt * c->rq_stride + 4095) & ~4095u) : NULL;
	m->dbrec = aligned_alloc(64, 64);
	m->bf = aligned_alloc(64, 512);
	cr_assert(m->sq && m->dbrec && m->bf && (!c->rq_wqe_cnt || m->rq));
	memset(m->sq, 0, m->sq_bytes);
	if (m->rq)
		memset(m->rq, 0, c->rq_wqe_cnt * c->rq_stride);
	memset(m->dbrec, 0, 64);
	memset(m->bf, 0, 512);
	m->dbrec[MLX5_SND_DBR] = htobe32(c->start_pi & 0xffff);
	m->dbrec[MLX5_RCV_DBR] = 0;

	struct fv_qp_geom g = {
		.qpt = c->qpt, .qpn = c->qpn, .sq_buf = m->sq, .sq_wqe_cnt = c->sq_wqe_cnt,
		.rq_buf = m->rq, .rq_wqe_cnt = c->rq_wqe_cnt, .rq_stride = c->rq_stride,
		.dbrec = m->dbrec, .bf_reg = m->bf, .bf_size = c->bf_size,
		.max_inline = c->max_inline, .max_send_sge = c->max_send_sge,
		.max_recv_sge = c->max_recv_sge, .sq_sig_all = c->sq_sig_all,
		.eth_inline = c->eth_inline, .max_tso_header = c->max_tso_header, .max_tso = c->max_tso,
		.raw_csum = c->raw_csum,
	};
	cr_assert_eq(fv_qp_init_geom(&m->qp, &g), 0);
	/* Counters wider than 16 bits: start the producer where the test asked. */
	fv__sq_set_pi(&m->qp.sq, c->start_pi);
}

void memqp_free(struct memqp *m)
{
	fv_qp_cleanup(&m->qp);
	free(m->sq);
	free(m->rq);
	free(m->dbrec);
	free(m->bf);
}

uint32_t memqp_sq_dbr(const struct memqp *m)
{
	return be32toh(m->dbrec[MLX5_SND_DBR]);
}

uint8_t *memqp_block(const struct memqp *m, uint32_t idx)
{
	return m->sq + (size_t)(idx & m->qp.sq.mask) * 64;
}

bool memqp_forced(const struct memqp *m, uint32_t idx)
{
	return (memqp_block(m, idx)[11] & MLX5_WQE_CTRL_CQ_UPDATE) &&
	       fv__sq_forced_wqe(&m->qp.sq, idx);
}

const char *hexstr(const void *p, size_t n)
{
	static char s[4096];
	size_t o = 0;

	for (size_t i = 0; i < n && o + 4 < sizeof(s); i++)
		o += (size_t)snprintf(s + o, sizeof(s) - o, "%s%02x", i && !(i % 16) ? "\n" : i ? " " : "",
				      ((const uint8_t *)p)[i]);
	s[o] = 0;
	return s;
}
