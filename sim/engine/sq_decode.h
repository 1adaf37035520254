/* Decoding one send WQE from the SQ ring into its segments (docs/formats.md §2, §3). */
#ifndef FVSIM_SQ_DECODE_H
#define FVSIM_SQ_DECODE_H

#include "../model/obj.h"
#include "xlate.h"

#define SIM_WQE_MAX_BYTES (63 * 16)
/* A UMR WQE holds at least control, UMR control and mkey context segments. */
#define SIM_UMR_MIN_BYTES (16 + 48 + 64)

/* One piece of payload: a pointer segment (lkey, addr) or inline bytes of the WQE. */
struct sim_piece {
	bool inl;
	uint32_t lkey, len;
	uint64_t addr; /* pointer: local address; inline: offset into raw[] */
};

struct sim_av {
	uint64_t dc_key; /* DCI: the 8-byte key field (UD uses its low half as the Q_Key) */
	uint32_t qkey, dqpn;
	uint16_t rlid;
	uint8_t sl;
	bool grh;
	uint8_t tclass, hop_limit, sgid_index;
	uint32_t flow_label;
	uint8_t rgid[16];
};

struct sim_wqe {
	uint8_t raw[SIM_WQE_MAX_BYTES]; /* the WQE unwrapped from the ring */
	uint16_t idx;
	uint8_t opcode, opmod, fm_ce_se, ds;
	uint32_t qpn, nbb;
	uint8_t imm[4];
	bool has_raddr, has_atomic, has_av, has_xrc, has_eth;
	uint8_t cs_flags; /* Ethernet segment (RAW_PACKET): checksum offload, TSO MSS, */
	uint16_t mss, eth_hdr; /* bytes of inlined header (the first piece) */
	uint64_t raddr, swap_add, compare;
	uint32_t rkey, xrc_srqn;
	struct sim_av av;
	int npieces;
	struct sim_piece piece[63];
	uint64_t len; /* payload bytes */
};

/* The SQ doorbell record is ahead of what the device consumed. */
bool sim_sq_pending(const struct sim_qp *qp);

/* Reads the control segment at WQEBB counter ci: opcode, WQE index and size, enough to
 * retire the WQE even when the rest is garbage. Returns the WQEBBs to retire: those it
 * spans (>= 1), but never more than the SQ doorbell record has posted past ci. */
uint32_t sim_wqe_peek(const struct sim_qp *qp, uint32_t ci, uint8_t *opcode);

/* Full decode and structural check of the WQE at ci; SYND_OK or the error syndrome the
 * HCA would report (LOC_QP_OP for a WQE running past the doorbell record). w->nbb is
 * valid either way, bounded by the doorbell record as in sim_wqe_peek(). */
int sim_wqe_parse(const struct sim_qp *qp, uint32_t ci, struct sim_wqe *w);

#endif
