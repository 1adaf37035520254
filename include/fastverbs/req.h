/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One send request, as every builder takes it (build.h): what the typed builders, fv_post_send
 * and the fv_wr_* calls (gen/wr.h) fill in, and struct fv_qp keeps for an fv_wr_* WQE whose
 * setters are still to come.
 */
#ifndef FASTVERBS_REQ_H
#define FASTVERBS_REQ_H

#include <stdbool.h>
#include "wqe.h"

/* A WQE's payload; FV__PL_DATA only in ops.def's payload column: an SGE list or inline data. */
enum fv__payload {
	FV__PL_NONE,		/* ctrl-only WQE (NOP) */
	FV__PL_SGL,		/* data segments from an SGE list */
	FV__PL_INLINE,		/* inline segment gathered from an SGE list */
	FV__PL_INLINE_BUFS,	/* inline segment gathered from an ibv_data_buf list (bufs) */
	FV__PL_DATA,		/* an operation's: SGL or INLINE, as IBV_SEND_INLINE says */
};

enum { FV__SEG_RADDR = 1, FV__SEG_ATOMIC = 2, FV__SEG_UMR = 4, FV__SEG_TSO = 8 };

/* Everything one WQE needs; unused fields stay zero. */
struct fv__req {
	uint64_t wr_id;
	unsigned flags;			/* FV_SIGNALED | FV_SOLICITED | FV_FENCE */
	uint8_t opcode;			/* MLX5_OPCODE_* */
	uint8_t segs;			/* FV__SEG_RADDR | FV__SEG_ATOMIC, or FV__SEG_UMR, or FV__SEG_TSO */
	uint8_t payload;		/* enum fv__payload */
	__be32 imm;			/* immediate data, or BE32 rkey to invalidate */
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap_add, compare;	/* atomic operands */
	const struct mlx5_wqe_av *av;	/* UD, DCI destination (DCI: remote_qpn is the DCT number) */
	uint32_t remote_qpn, qkey;
	uint64_t dc_key;		/* DCI: the DCT's access key */
	uint32_t srqn;			/* XRC destination SRQ */
	const struct ibv_mw_bind_info *bind;	/* FV__SEG_UMR: the bind, NULL to invalidate */
	uint32_t new_rkey;		/* FV__SEG_UMR: the window's key after the bind */
	uint8_t mw_type;		/* FV__SEG_UMR: IBV_MW_TYPE_1 or _2 (invalidate: 2) */
	const void *hdr;		/* FV__SEG_TSO: the packet header inlined in the Ethernet segment */
	uint16_t hdr_sz, mss;		/* FV__SEG_TSO: its size, and the segments' payload size */
	const struct ibv_sge *sgl;	/* the payload's pieces */
	int nsge;
	const struct ibv_data_buf *bufs;	/* FV__PL_INLINE_BUFS: the pieces (nsge of them) */
	uint32_t len;			/* FV__PL_INLINE, FV__PL_INLINE_BUFS: total bytes */
	bool sge_len;			/* an atomic's data segment keeps its SGE's length (ibv_wr_*) */
	bool from_wr;			/* fv_post_send: read from an ibv_send_wr (no FV__VEC, wqe.h) */
	bool av_fv;			/* av is an fv_ah's (ah.h, fv__ah_av_image) */
	bool av_word;			/* the datagram segment's bytes 8-15 are htobe64(av_w) (fv_wr_*) */
	uint64_t av_w;
};

#endif /* FASTVERBS_REQ_H */
