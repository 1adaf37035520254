#include "cqe.h"

#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "../common/be.h"
#include "../common/log.h"
#include "../common/mapped.h"
#include "../model/model.h"
#include "now.h"
#include "synd.h"

bool sim_cq_room(const struct sim_cq *cq, uint32_t n)
{
	uint32_t ci = ld_dbrec(&cq->dbrec[0]) & 0xffffff;
	uint32_t used = (cq->pi - ci) & 0xffffff;

	if (cq->ignore_overrun)
		return true;
	/* A consumer index ahead of what we produced is garbage: treat the CQ as full
	 * rather than overwrite CQEs the user may still be reading. */
	return used <= cq->cqe_cnt && cq->cqe_cnt - used >= n;
}

#define CQE_RESIZE 5

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

int sim_cq_resize(struct sim_cq *cq, uint32_t cqe, uint64_t buf, uint32_t cqe_size)
{
	uint32_t ci = ld_dbrec(&cq->dbrec[0]) & 0xffffff;
	uint32_t used = (cq->pi - ci) & 0xffffff, cnt;
	uint8_t *entry, *c;
	int err;

	if (cqe_size != cq->cqe_size || cqe >= (1u << 22))
		return EINVAL; /* libmlx5 keeps the CQE size */
	cnt = roundup_pow2(cqe + 1);
	/* The unpolled CQEs move to the new ring (libmlx5 shifts them one slot, past the
	 * marker's index): they must fit there. */
	if (used > cnt)
		return EINVAL;
	if (!sim_cq_room(cq, 1))
		return EBUSY;
	if ((err = sim_range_mapped(buf, (uint64_t)cnt * cqe_size)))
		return err;
	entry = cq->buf + (size_t)(cq->pi & (cq->cqe_cnt - 1)) * cq->cqe_size;
	c = cq->cqe_size == 128 ? entry + 64 : entry;
	memset(c, 0, 63);
	__atomic_store_n(&c[63], (uint8_t)(CQE_RESIZE << 4 | ((cq->pi >> cq->log_cnt) & 1)),
			 __ATOMIC_RELEASE);
	cq->pi++;
	cq->buf = (uint8_t *)(uintptr_t)buf;
	cq->cqe_cnt = cnt;
	cq->log_cnt = 0;
	while ((1u << cq->log_cnt) < cnt)
		cq->log_cnt++;
	sim_dbg("CQ 0x%x resized to %u entries", cq->cqn, cnt);
	return 0;
}

/* Most paths wait for room before they start work that completes. One that cannot (an
 * answer from another process arrives for a WQE posted while there was room) meets the
 * hardware's rule: the CQ overruns into error, its owner gets IBV_EVENT_CQ_ERR, and
 * nothing is written over CQEs the application has not polled. A CQ created with
 * IGNORE_OVERRUN always has room (sim_cq_room), so it never gets here. */
static bool overruns(struct sim_cq *cq)
{
	if (cq->overrun)
		return true;
	if (sim_cq_room(cq, 1))
		return false;
	cq->overrun = true;
	sim_warn("CQ 0x%x overrun: the CQ is in error", cq->cqn);
	sim_async_event(cq->ctx, cq->event_chan, cq->user_handle, IBV_EVENT_CQ_ERR);
	return true;
}

void sim_cq_push(struct sim_cq *cq, const struct sim_cqe *e)
{
	uint8_t *entry = cq->buf + (size_t)(cq->pi & (cq->cqe_cnt - 1)) * cq->cqe_size;
	uint8_t *c = cq->cqe_size == 128 ? entry + 64 : entry;
	uint8_t owner = (cq->pi >> cq->log_cnt) & 1;
	bool err = e->op == CQE_REQ_ERR || e->op == CQE_RESP_ERR;

	if (overruns(cq)) {
		sim_info("CQ 0x%x: CQE op %u for QP 0x%x dropped (CQ in error)", cq->cqn, e->op,
			 e->qpn);
		return;
	}

	/* Bytes 0..62 first; op_own last with release order, so a poller that sees the new
	 * owner bit also sees the rest (docs/formats.md §5.4). Scatter-to-CQE format bits are
	 * never set: data always lands in the WQE's buffers. */
	memset(c, 0, 63);
	st_be32(c + 32, e->srqn_uidx);
	if (err) {
		c[54] = e->vendor;
		c[55] = e->syndrome;
		st_be32(c + 56, (uint32_t)e->sop << 24 | (e->qpn & 0xffffff));
	} else {
		st_be16(c + 22, e->slid);
		st_be32(c + 24, e->flags_rqpn);
		c[28] = e->hds_ip_ext;
		c[29] = e->l4_hdr_type;
		memcpy(c + 36, e->imm, 4);
		st_be32(c + 44, e->byte_cnt);
		/* The device clock at completion; error CQEs have their syndromes there. */
		st_be64(c + 48, sim_now_ns());
		st_be32(c + 56, (e->op == CQE_REQ ? (uint32_t)e->sop << 24 : 0) |
					(e->qpn & 0xffffff));
	}
	st_be16(c + 60, e->wqe_counter);
	__atomic_store_n(&c[63], (uint8_t)(e->op << 4 | (e->se ? 2 : 0) | owner),
			 __ATOMIC_RELEASE);
	cq->pi++;
	sim_dbg("CQ 0x%x: CQE op %u synd 0x%x qpn 0x%x wqe %u len %u", cq->cqn, e->op,
		e->syndrome, e->qpn, e->wqe_counter, e->byte_cnt);
	sim_cq_event_after_push(cq, e->se || err);
}
