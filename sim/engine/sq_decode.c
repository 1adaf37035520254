#include "sq_decode.h"

#include <string.h>

#include <infiniband/verbs.h>

#include "../common/be.h"
#include "synd.h"

#define MAX_MSG (1ull << 30) /* the port's max_msg_sz */
#define UD_MTU 4096u

/* Copies len bytes starting at byte offset off of the ring, wrapping at its end: a WQE
 * that starts in the last slots continues at slot 0 (docs/formats.md §1.3). */
static void ring_copy(const struct sim_qp *qp, uint32_t off, void *dst, uint32_t len)
{
	uint32_t size = qp->sq_cnt * 64, first;

	off &= size - 1;
	first = size - off < len ? size - off : len;
	memcpy(dst, qp->sq_buf + off, first);
	if (len > first)
		memcpy((uint8_t *)dst + first, qp->sq_buf, len - first);
}

bool sim_sq_pending(const struct sim_qp *qp)
{
	return qp->sq_cnt && (ld_dbrec(&qp->dbrec[1]) & 0xffff) != (qp->sq_ci & 0xffff);
}

/* WQEBBs the doorbell record has posted past ci (16-bit counters). */
static uint32_t posted(const struct sim_qp *qp, uint32_t ci)
{
	return (ld_dbrec(&qp->dbrec[1]) - ci) & 0xffff;
}

/* The WQEBBs the control segment at ci claims (ds 0 counts as one). */
static uint32_t claimed(const struct sim_qp *qp, uint32_t ci, uint8_t *opcode)
{
	uint8_t ctrl[16];
	uint32_t ds;

	ring_copy(qp, (ci & (qp->sq_cnt - 1)) * 64, ctrl, 16);
	*opcode = ctrl[3];
	ds = ctrl[7] & 0x3f;
	return ds ? (ds + 3) / 4 : 1;
}

/* Ordering rule: the device never consumes past the doorbell record, whatever ds says.
 * A WQE claiming more blocks than are posted retires only the posted ones. */
uint32_t sim_wqe_peek(const struct sim_qp *qp, uint32_t ci, uint8_t *opcode)
{
	uint32_t nbb = claimed(qp, ci, opcode), avail = posted(qp, ci);

	return nbb <= avail || !avail ? nbb : avail;
}

static bool opcode_allowed(uint8_t type, uint8_t op)
{
	if (type == IBV_QPT_RAW_PACKET)
		return op == OP_NOP || op == OP_SEND || op == OP_TSO;
	switch (op) {
	case OP_NOP:
	case OP_SEND:
	case OP_SEND_IMM:
		return true;
	case OP_SEND_INVAL:
	case OP_UMR: /* memory window bind and local invalidate */
	case OP_RDMA_WRITE:
	case OP_RDMA_WRITE_IMM:
		return type != IBV_QPT_UD;
	case OP_RDMA_READ:
	case OP_ATOMIC_CS:
	case OP_ATOMIC_FA: /* a DCI (IBV_QPT_DRIVER) has RC's operations */
		return type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND || type == IBV_QPT_DRIVER;
	default:
		return false; /* masked atomics, TSO: not modelled */
	}
}

static void parse_av(const uint8_t *p, struct sim_av *av)
{
	uint32_t grh = ld_be32(p + 28);

	av->dc_key = ld_be64(p);
	av->qkey = ld_be32(p);
	av->dqpn = ld_be32(p + 8) & 0xffffff;
	av->sl = p[12] & 0xf;
	av->rlid = ld_be16(p + 14);
	av->grh = false;
	if (ld_be32(p + 8) & 0x80000000u) { /* extended AV: GRH fields present */
		av->grh = grh & (1u << 30);
		av->sgid_index = (grh >> 20) & 0xff;
		av->flow_label = grh & 0xfffff;
		av->tclass = p[26];
		av->hop_limit = p[27];
		memcpy(av->rgid, p + 32, 16);
	}
}

int sim_wqe_parse(const struct sim_qp *qp, uint32_t ci, struct sim_wqe *w)
{
	uint32_t total, pos = 16, word;
	uint8_t type = qp->type;

	uint32_t claim = claimed(qp, ci, &w->opcode);

	w->nbb = sim_wqe_peek(qp, ci, &w->opcode);
	w->ds = 0;
	w->npieces = 0;
	w->len = 0;
	w->has_raddr = w->has_atomic = w->has_av = w->has_xrc = w->has_eth = false;
	ring_copy(qp, (ci & (qp->sq_cnt - 1)) * 64, w->raw, 16);
	word = ld_be32(w->raw);
	w->opmod = (uint8_t)(word >> 24);
	w->idx = (uint16_t)(word >> 8);
	w->qpn = ld_be32(w->raw + 4) >> 8;
	w->ds = w->raw[7] & 0x3f;
	w->fm_ce_se = w->raw[11];
	memcpy(w->imm, w->raw + 12, 4);
	/* Stale or foreign WQEs: the index must be the producer counter at this slot and
	 * the QPN our own; the WQE must fit the ring. */
	if (!w->ds || claim > qp->sq_cnt || w->idx != (uint16_t)ci || w->qpn != qp->qpn)
		return SYND_LOC_QP_OP;
	/* Running past the doorbell record: a garbage ds, or a doorbell rung mid-WQE. */
	if (claim != w->nbb)
		return SYND_LOC_QP_OP;
	total = w->ds * 16u;
	ring_copy(qp, (ci & (qp->sq_cnt - 1)) * 64, w->raw, total);
	if (!opcode_allowed(type, w->opcode))
		return SYND_LOC_QP_OP;
	if (w->opcode == OP_NOP)
		return SYND_OK;
	/* UMR segments follow the control segment directly, even on XRC (engine/umr.c). */
	if (w->opcode == OP_UMR)
		return total >= SIM_UMR_MIN_BYTES ? SYND_OK : SYND_LOC_QP_OP;

	if (type == IBV_QPT_XRC_SEND) {
		if (pos + 16 > total)
			return SYND_LOC_QP_OP;
		w->has_xrc = true;
		w->xrc_srqn = ld_be32(w->raw + pos) & 0xffffff;
		pos += 16;
	}
	/* A DCI's WQE names its DCT the way a UD WQE names its QP: by the address vector.
	 * Only what the AV's flags say is present is read (a producer may leave the rest
	 * stale, UCX the reserved word and, without a GRH, the GRH fields). */
	if (type == IBV_QPT_UD || type == IBV_QPT_DRIVER) {
		uint32_t avlen;

		if (pos + 16 > total)
			return SYND_LOC_QP_OP;
		avlen = (ld_be32(w->raw + pos + 8) & 0x80000000u) ? 48 : 16;
		if (pos + avlen > total)
			return SYND_LOC_QP_OP;
		w->has_av = true;
		parse_av(w->raw + pos, &w->av);
		pos += avlen;
	}
	if (type == IBV_QPT_RAW_PACKET) {
		/* Ethernet segment: cs_flags at 4, MSS at 6, the inlined header's size at 12
		 * and its bytes from 14 on, the segment padded to 16 bytes. The header is the
		 * frame's first piece. */
		uint32_t hsz, seglen;

		if (pos + 16 > total)
			return SYND_LOC_QP_OP;
		w->has_eth = true;
		w->cs_flags = w->raw[pos + 4];
		w->mss = ld_be16(w->raw + pos + 6);
		hsz = ld_be16(w->raw + pos + 12) & 0x3ff;
		seglen = (14 + hsz + 15) & ~15u;
		if (pos + seglen > total)
			return SYND_LOC_QP_OP;
		w->eth_hdr = (uint16_t)hsz;
		if (hsz) {
			w->piece[0] = (struct sim_piece){ .inl = true, .len = hsz, .addr = pos + 14 };
			w->npieces = 1;
			w->len = hsz;
		}
		pos += seglen;
	}
	if (w->opcode == OP_RDMA_WRITE || w->opcode == OP_RDMA_WRITE_IMM ||
	    w->opcode == OP_RDMA_READ || w->opcode == OP_ATOMIC_CS || w->opcode == OP_ATOMIC_FA) {
		if (pos + 16 > total)
			return SYND_LOC_QP_OP;
		w->has_raddr = true;
		w->raddr = ld_be64(w->raw + pos);
		w->rkey = ld_be32(w->raw + pos + 8);
		pos += 16;
	}
	if (w->opcode == OP_ATOMIC_CS || w->opcode == OP_ATOMIC_FA) {
		if (pos + 16 > total)
			return SYND_LOC_QP_OP;
		w->has_atomic = true;
		w->swap_add = ld_be64(w->raw + pos);
		w->compare = ld_be64(w->raw + pos + 8);
		pos += 16;
	}
	/* The rest is data: pointer segments, or inline segments flagged by bit 31. */
	while (pos < total) {
		uint32_t bc = ld_be32(w->raw + pos);
		struct sim_piece *pc = &w->piece[w->npieces++];

		if (bc & 0x80000000u) {
			uint32_t len = bc & 0x7fffffffu;

			if (4 + len > total - pos)
				return SYND_LOC_QP_OP;
			pc->inl = true;
			pc->len = len;
			pc->addr = pos + 4;
			pc->lkey = 0;
			pos += (4 + len + 15) & ~15u;
		} else {
			pc->inl = false;
			pc->len = bc;
			pc->lkey = ld_be32(w->raw + pos + 4);
			pc->addr = ld_be64(w->raw + pos + 8);
			pos += 16;
		}
		w->len += pc->len;
	}

	switch (w->opcode) {
	case OP_RDMA_READ:
	case OP_ATOMIC_CS:
	case OP_ATOMIC_FA:
		/* The data segments name where the response lands: no inline allowed. */
		for (int i = 0; i < w->npieces; i++)
			if (w->piece[i].inl)
				return SYND_LOC_QP_OP;
		if (w->opcode != OP_RDMA_READ && w->len < 8)
			return SYND_LOC_LEN;
		break;
	default:
		break;
	}
	if (w->len > MAX_MSG)
		return SYND_LOC_LEN;
	if (type == IBV_QPT_UD && w->len > UD_MTU)
		return SYND_LOC_LEN;
	if (w->opcode == OP_TSO && type != IBV_QPT_RAW_PACKET)
		return SYND_LOC_QP_OP;
	return SYND_OK;
}
