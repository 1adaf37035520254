/*
 * fv_post_send's inline fast path (compat/post_send_ring.h: any length that fits the WQE's
 * first block, copied in overlapping pieces) against the typed builders' general inline
 * build (wqe.h's fv__wqe_inline) for RC RDMA_WRITE and SEND: every length from 0 to 64, at
 * every place in a small ring (WQEs across its end), signaled or not, on two rings of plain
 * memory filled alike. Return code, every ring byte, the counters and the doorbell record
 * must agree, and the bytes after the payload must be left as they were.
 */
#include <criterion/criterion.h>
#include <fastverbs/compat/post_send.h>
#include "memqp.h"

#define RING 8

static uint8_t src[128];

static int post_fv(struct memqp *m, int send, uint32_t len, int sig)
{
	struct ibv_sge s = { (uintptr_t)(src + 3), len, 0 };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &s, .num_sge = 1,
				  .opcode = send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_INLINE | (sig ? IBV_SEND_SIGNALED : 0) }, *bad = NULL;

	wr.wr.rdma.remote_addr = 0x1234567800ull;
	wr.wr.rdma.rkey = 0xabcd;
	return fv_post_send(&m->qp, &wr, &bad);
}

static int post_typed(struct memqp *m, int send, uint32_t len, int sig)
{
	struct fv_rc *h = (struct fv_rc *)&m->qp;
	volatile uint32_t n = len;	/* a length the compiler does not know: the general build */
	int rc = send ? fv_send_inline(h, 9, sig ? FV_SIGNALED : 0, src + 3, n)
		      : fv_write_inline(h, 9, sig ? FV_SIGNALED : 0, src + 3, n, 0x1234567800ull, 0xabcd);

	fv_ring(h);
	return rc;
}

Test(post_inline, every_length_and_place_matches_the_general_build)
{
	struct memqp_cfg cfg = { .qpt = FV_QPT_RC, .qpn = 0x77, .sq_wqe_cnt = RING, .bf_size = 256,
				 .max_inline = 60, .max_send_sge = 2 };
	struct memqp m[2];
	unsigned seed = 1;

	for (unsigned i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 13 + 1);
	for (int send = 0; send < 2; send++)
		for (uint32_t len = 0; len <= 64; len++)
			for (int at = 0; at < RING; at++) {
				int rc[2], sig = (len + (uint32_t)at) % 3 == 0;

				cfg.start_pi = 0xfff0u + (uint32_t)at;	/* the 16-bit index wraps too */
				for (int k = 0; k < 2; k++)
					memqp_init(&m[k], &cfg);
				for (uint32_t i = 0; i < RING * 64; i++) {
					seed = seed * 1103515245 + 12345;
					m[0].sq[i] = m[1].sq[i] = (uint8_t)(seed >> 16);
				}
				rc[0] = post_fv(&m[0], send, len, sig);
				rc[1] = post_typed(&m[1], send, len, sig);
				cr_assert_eq(rc[0], rc[1], "send %d len %u at %d: fv_post_send %d, typed %d", send, len,
					     at, rc[0], rc[1]);
				cr_assert_eq(m[0].qp.sq.pi, m[1].qp.sq.pi, "send %d len %u at %d: producer", send, len, at);
				cr_assert_eq(memcmp(m[0].sq, m[1].sq, RING * 64), 0, "send %d len %u at %d: ring bytes differ",
					     send, len, at);
				cr_assert_eq(memqp_sq_dbr(&m[0]), memqp_sq_dbr(&m[1]), "send %d len %u at %d: doorbell record",
					     send, len, at);
				cr_assert_eq(memcmp(m[0].bf, m[1].bf, 512), 0, "send %d len %u at %d: BlueFlame bytes",
					     send, len, at);
				for (int k = 0; k < 2; k++)
					memqp_free(&m[k]);
			}
}
