/* A QP on plain memory for tests: page-aligned rings, a doorbell record pair and a
 * 512-byte BlueFlame register, described to fastverbs by fv_qp_init_geom. */
#ifndef TESTS_MEMQP_H
#define TESTS_MEMQP_H

#include <fastverbs/qp.h>

struct memqp {
	struct fv_qp qp;
	uint8_t *sq;		/* sq_wqe_cnt * 64 bytes */
	uint8_t *rq;
	__be32 *dbrec;		/* [0] receive, [1] send */
	uint8_t *bf;		/* two 256-byte halves */
	uint32_t sq_bytes;
};

struct memqp_cfg {
	enum fv_qpt qpt;
	uint32_t qpn;
	uint32_t sq_wqe_cnt;
	uint32_t rq_wqe_cnt, rq_stride;
	uint32_t bf_size;		/* 0: doorbell only */
	uint32_t max_inline, max_send_sge, max_recv_sge;
	int sq_sig_all;
	uint32_t start_pi;		/* doorbell record before init: where counters start */
	uint32_t eth_inline, max_tso_header, max_tso, raw_csum;	/* FV_QPT_RAW */
};

/* Allocate and init; aborts the test on failure. */
void memqp_init(struct memqp *m, const struct memqp_cfg *cfg);
void memqp_free(struct memqp *m);

/* Host-order value of the send doorbell record. */
uint32_t memqp_sq_dbr(const struct memqp *m);

/* Bytes of the WQEBB whose 16-bit-or-wider counter is idx. */
uint8_t *memqp_block(const struct memqp *m, uint32_t idx);

/* The WQE at counter idx asks for a completion its caller did not: one fastverbs forced. */
bool memqp_forced(const struct memqp *m, uint32_t idx);

/* Hex dump of n bytes into a static string, for assertion messages. */
const char *hexstr(const void *p, size_t n);

#endif
