/*
 * Expected send-queue bytes, built field by field from docs/formats.md (§2 control
 * segment, §3 segments, §3.7 order and ds) without calling any fastverbs
 * writer. Tests compose the WQE they expect into a model ring, then compare it with the
 * real ring byte for byte.
 *
 * The model ring takes every offset modulo its size, so a WQE that runs past the ring end
 * continues at byte 0 exactly as §1.3 describes — an implementation of the wrap that shares
 * nothing with the library's.
 */
#ifndef TESTS_WQE_EXPECT_H
#define TESTS_WQE_EXPECT_H

#include <stddef.h>
#include <stdint.h>
#include "memqp.h"

/* Values restated from docs/formats.md, so a wrong constant in a header cannot hide. */
enum {
	X_OP_NOP = 0x00, X_OP_SEND_INVAL = 0x01, X_OP_RDMA_WRITE = 0x08, X_OP_RDMA_WRITE_IMM = 0x09,
	X_OP_SEND = 0x0a, X_OP_SEND_IMM = 0x0b, X_OP_RDMA_READ = 0x10, X_OP_ATOMIC_CS = 0x11,
	X_OP_ATOMIC_FA = 0x12,				/* §2.2 */
	X_FM_SOLICITED = 0x02, X_FM_CQ_UPDATE = 0x08, X_FM_FENCE = 0x80,	/* §2.1 */
	X_INLINE_BIT = 0x80000000u,			/* §3.4 byte_count flag */
	X_EXT_AV_BIT = 0x80000000u,			/* §3.5 dqp_dct flag */
};

/* A model of a send ring: offsets wrap at size (a multiple of 64). */
struct xring {
	uint8_t *b;
	size_t size;
};

/* A model ring starting as a copy of size bytes at init (the real ring before posting). */
void xr_init(struct xring *x, const void *init, size_t size);
void xr_free(struct xring *x);
/* Make the model equal the real ring again (after a step that is checked separately). */
void xr_sync(struct xring *x, const void *ring);

void x_put8(struct xring *x, size_t off, uint8_t v);
void x_put_be16(struct xring *x, size_t off, uint16_t v);
void x_put_be32(struct xring *x, size_t off, uint32_t v);
void x_put_be64(struct xring *x, size_t off, uint64_t v);
void x_copy(struct xring *x, size_t off, const void *src, size_t n);

/* One WQE being composed: segments are appended at start + len. */
struct xwqe {
	struct xring *x;
	size_t start;		/* byte offset of the first WQEBB in the ring */
	size_t len;		/* bytes composed so far, a multiple of 16 */
	uint32_t qpn;
};

/*
 * Control segment (§2) of the WQE whose first WQEBB has counter pi: opmod 0, WQE index =
 * pi & 0xffff, opcode; qpn (ds is filled by xw_end); signature and stream id 0, fm_ce_se;
 * imm as 4 raw bytes (NULL: zero).
 */
void xw_ctrl(struct xwqe *w, struct xring *x, uint32_t pi, uint8_t opcode, uint32_t qpn,
	     uint8_t fm_ce_se, const void *imm);
/* XRC segment (§3.6): BE32 remote SRQ number, 12 reserved bytes 0. */
void xw_xrc(struct xwqe *w, uint32_t srqn);
/* Datagram segment (§3.5): the AH's 48 bytes, Q_Key at 0, 0 at 4, remote QPN | ext bit at 8. */
void xw_av(struct xwqe *w, const uint8_t av[48], uint32_t remote_qpn, uint32_t qkey);
/* Remote address segment (§3.1): BE64 address, BE32 rkey, 4 bytes 0. */
void xw_raddr(struct xwqe *w, uint64_t raddr, uint32_t rkey);
/* Atomic segment (§3.2): BE64 swap/add, BE64 compare. */
void xw_atomic(struct xwqe *w, uint64_t swap_add, uint64_t compare);
/* Data segment (§3.3): BE32 byte count, BE32 lkey, BE64 address. */
void xw_data(struct xwqe *w, uint32_t len, uint32_t lkey, uint64_t addr);
/*
 * The same segment written past the WQE's end, not counted in ds: the fast path's empty SGE
 * (one SGE of length 0 that would end the WQE's first block), where the device does not look.
 */
void xw_data_past_ds(struct xwqe *w, uint32_t len, uint32_t lkey, uint64_t addr);
/*
 * Inline segment (§3.4): BE32 len | 0x80000000, then the payload; ceil((4+len)/16) units,
 * pad bytes left as they were. len 0: no segment at all.
 */
void xw_inline(struct xwqe *w, const void *payload, uint32_t len);
/* Fill in ds (= composed bytes / 16) and return the WQE's WQEBBs, ceil(ds/4). */
unsigned xw_end(struct xwqe *w);


/* NULL when n bytes are equal; else a static description of the first difference. */
const char *x_diff(const void *got, const void *want, size_t n);

/*
 * The longest unsignaled run (WQEBBs) before fastverbs must ask for a completion itself
 * (docs/design.md §3.3): half the ring, or less when the QP's largest possible WQE would not
 * fit beside the run.
 */
uint32_t model_unsig_max(const struct memqp_cfg *c);

#endif
