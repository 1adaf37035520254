/*
 * Compiled, not run (tools/check-codegen.sh): the payload a request points at must be stored
 * before the send doorbell's barrier (the "# fv__dma_wmb_sq" marker), wherever it lives. Each
 * probe_* function stores FV_PAYLOAD (0x5a5a5a5a) into its payload, then posts an RDMA WRITE
 * of it and rings, in straight-line code (in a loop, the order of the text is not the order
 * of execution). Each then stores 0 over the payload, as if reusing the buffer: a compiler
 * that took the doorbell for a reader of nothing would drop the first store as dead.
 */
#include <fastverbs/fastverbs.h>

#define FV_PAYLOAD 0x5a5a5a5au

uint32_t payload_buf[16];
void keep(void *p);	/* registers memory, as ibv_reg_mr does: its address escapes */

static inline __attribute__((always_inline)) void post(struct fv_rc *rc, const void *buf, uint32_t lkey)
{
	struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 4, .lkey = lkey };

	if (!fv_write(rc, 1, 0, &s, 0x1000, 7))
		fv_ring(rc);
	*(uint32_t *)(uintptr_t)s.addr = 0;
}

/* A global buffer. */
void probe_global(struct fv_rc *rc, uint32_t lkey)
{
	payload_buf[0] = FV_PAYLOAD;
	post(rc, payload_buf, lkey);
}

/* A buffer reached through a pointer (heap, registered elsewhere). */
void probe_pointer(struct fv_rc *rc, uint32_t *buf, uint32_t lkey)
{
	buf[0] = FV_PAYLOAD;
	post(rc, buf, lkey);
}

/* A buffer on the stack, registered here: nothing reads it after the doorbell in C. */
void probe_stack(struct fv_rc *rc, uint32_t lkey)
{
	uint32_t buf[16];

	keep(buf);
	buf[0] = FV_PAYLOAD;
	post(rc, buf, lkey);
}

/* A QP on plain memory set up here: the compiler sees where its ring is. */
static uint8_t known_sq[64 * 64] __attribute__((aligned(4096)));
static __be32 known_db[2];
static uint8_t known_bf[512] __attribute__((aligned(64)));

static inline __attribute__((always_inline)) int known_init(struct fv_rc *rc)
{
	return fv_qp_init_geom(&rc->qp, &(struct fv_qp_geom){ .qpt = FV_QPT_RC, .qpn = 1, .sq_buf = known_sq,
			       .sq_wqe_cnt = 64, .dbrec = known_db, .bf_reg = known_bf, .bf_size = 256,
			       .max_send_sge = 1 });
}

void probe_known_ring(uint32_t lkey)
{
	struct fv_rc rc;

	if (known_init(&rc))
		return;
	payload_buf[0] = FV_PAYLOAD;
	post(&rc, payload_buf, lkey);
	fv_qp_cleanup(&rc.qp);
}

/*
 * The barrier alone, between a store and the store over it: it must read the payload, so
 * the first store stays (before it).
 */
void probe_barrier_global(struct fv_rc *rc)
{
	payload_buf[0] = FV_PAYLOAD;
	fv__dma_wmb_sq(rc->qp.sq.ring.buf);
	payload_buf[0] = 0;
}

void probe_barrier_stack(struct fv_rc *rc)
{
	uint32_t buf[16];

	keep(buf);
	buf[0] = FV_PAYLOAD;
	fv__dma_wmb_sq(rc->qp.sq.ring.buf);
	buf[0] = 0;
}

void probe_barrier_known_ring(void)
{
	struct fv_rc rc;

	if (known_init(&rc))
		return;
	payload_buf[0] = FV_PAYLOAD;
	fv__dma_wmb_sq(rc.qp.sq.ring.buf);
	payload_buf[0] = 0;
	fv_qp_cleanup(&rc.qp);
}

/* A ring whose place the compiler knows exactly: the barrier still reads the payload. */
void probe_barrier_own_ring(void)
{
	struct fv_ring ring = { .buf = known_sq, .end = known_sq + sizeof(known_sq) };

	payload_buf[0] = FV_PAYLOAD;
	fv__dma_wmb_sq(ring.buf);
	payload_buf[0] = 0;
}

void probe_barrier_own_ring_stack(void)
{
	struct fv_ring ring = { .buf = known_sq, .end = known_sq + sizeof(known_sq) };
	uint32_t buf[16];

	keep(buf);
	buf[0] = FV_PAYLOAD;
	fv__dma_wmb_sq(ring.buf);
	buf[0] = 0;
}
