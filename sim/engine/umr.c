/* UMR WQEs as libmlx5 builds them for memory windows (docs/formats.md §3.8):
 *
 *   offset  size  segment
 *   0       16    control: opcode 0x25, imm = the window's key (or the key to invalidate)
 *   16      48    UMR control: flags @0, klm_octowords BE16 @4, mkey_mask BE64 @8
 *   64      64    mkey context: free 0x40 @0, access @2, qpn_mkey BE32 @4,
 *                 start_addr BE64 @16, len BE64 @24
 *   128     64    translation (bind with length only): one KLM, byte_count BE32 @0,
 *                 mkey BE32 @4 (the MR), address BE64 @8
 *
 * A bind names the window by the index in imm (the tag may be stale: the bind sets a new
 * one from qpn_mkey's low byte); an invalidation must name the full key. */
#include "umr.h"

#include <infiniband/verbs.h>

#include "../common/be.h"
#include "../common/log.h"
#include "../model/model.h"
#include "synd.h"

enum {
	UMR_CHECK_FREE = 0x20,
	UMR_CHECK_QPN = 0x08,
	MKEY_MASK_FREE = 1u << 29,
	MKEY_FREE = 0x40,
	MKEY_LW = 0x08,
	MKEY_RR = 0x10,
	MKEY_RW = 0x20,
	MKEY_ATOMIC = 0x40,
	KLM_MAX = 1u << 31, /* one KLM entry covers at most 2 GiB */
};

struct umr {
	uint32_t key, qpn_mkey, klm_bytes, klm_key;
	uint8_t flags, access;
	bool free, has_klm;
	uint64_t mask, start, len, klm_addr;
};

static void decode(const struct sim_wqe *w, struct umr *u)
{
	const uint8_t *c = w->raw + 16, *k = w->raw + 64, *t = w->raw + 128;

	*u = (struct umr){ 0 };
	u->key = ld_be32(w->imm);
	u->flags = c[0];
	u->has_klm = ld_be16(c + 4) != 0 && w->ds * 16u >= 128 + 16;
	u->mask = ld_be64(c + 8);
	u->free = (u->mask & MKEY_MASK_FREE) && (k[0] & MKEY_FREE);
	u->access = k[2];
	u->qpn_mkey = ld_be32(k + 4);
	u->start = ld_be64(k + 16);
	u->len = ld_be64(k + 24);
	if (u->has_klm) {
		u->klm_bytes = ld_be32(t);
		u->klm_key = ld_be32(t + 4);
		u->klm_addr = ld_be64(t + 8);
	}
}

static uint32_t rights(uint8_t access)
{
	return (access & MKEY_LW ? IBV_ACCESS_LOCAL_WRITE : 0) |
	       (access & MKEY_RR ? IBV_ACCESS_REMOTE_READ : 0) |
	       (access & MKEY_RW ? IBV_ACCESS_REMOTE_WRITE : 0) |
	       (access & MKEY_ATOMIC ? IBV_ACCESS_REMOTE_ATOMIC : 0);
}

/* Unbind (type 1, a zero-length bind: the new tag applies) or local invalidate (type 2:
 * only the QP the window is bound to may free it; the key stays until the next bind). */
static int unbind(struct sim_qp *qp, struct sim_mw *mw, const struct umr *u)
{
	if (mw->type == IBV_MW_TYPE_1) {
		if (u->flags & UMR_CHECK_QPN)
			return SYND_MW_BIND; /* LOCAL_INV cannot invalidate a type 1 window */
		mw->key = (mw->key & ~0xffu) | (u->qpn_mkey & 0xff);
	} else if (mw->key != u->key || (mw->bound && mw->qpn != qp->qpn)) {
		return SYND_MW_BIND;
	}
	mw->bound = false;
	return SYND_OK;
}

static int bind(struct sim_qp *qp, struct sim_mw *mw, const struct umr *u)
{
	bool type1_shape = (u->qpn_mkey >> 8) == 0xffffff;
	uint32_t access = rights(u->access);
	const struct sim_mr *mr;

	if (!u->has_klm || u->klm_bytes != u->len || u->len > KLM_MAX)
		return SYND_MW_BIND;
	if (mw->type == IBV_MW_TYPE_1 ? !type1_shape :
	    type1_shape || (u->qpn_mkey >> 8) != qp->qpn ||
	    ((u->flags & UMR_CHECK_FREE) && mw->bound))
		return SYND_MW_BIND;
	/* The MR: same PD, bindable, covering the range; remote write, atomics and local
	 * write through the window need local write on the MR (IB spec 10.6.7.2). */
	mr = sim_mr_find(qp->ctx->dev, u->klm_key);
	if (!mr || mr->pd != mw->pd || !(mr->access & IBV_ACCESS_MW_BIND))
		return SYND_MW_BIND;
	if (u->klm_addr < mr->iova || u->klm_addr + u->len < u->klm_addr ||
	    u->klm_addr + u->len > mr->iova + mr->len)
		return SYND_MW_BIND;
	if ((access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return SYND_MW_BIND;
	mw->bound = true;
	mw->qpn = qp->qpn;
	mw->key = (mw->key & ~0xffu) | (u->qpn_mkey & 0xff);
	mw->mr_key = mr->key;
	mw->start = u->start;
	mw->len = u->len;
	mw->mr_addr = u->klm_addr;
	mw->access = access;
	sim_dbg("QP 0x%x: MW 0x%x bound to MR 0x%x [0x%llx +0x%llx) access 0x%x", qp->qpn,
		mw->key, mr->key, (unsigned long long)u->start, (unsigned long long)u->len,
		access);
	return SYND_OK;
}

int sim_umr_exec(struct sim_qp *qp, const struct sim_wqe *w)
{
	struct sim_mw *mw;
	struct umr u;

	decode(w, &u);
	mw = sim_idmap_get(&qp->ctx->dev->mws, u.key >> 8);
	/* Windows only: an MR key is not invalidated (user MRs are not remotely
	 * invalidatable on mlx5), and the window must be of the QP's PD. */
	if (!mw || mw->pd != qp->pd)
		return SYND_MW_BIND;
	return u.free ? unbind(qp, mw, &u) : bind(qp, mw, &u);
}

bool sim_mw_remote_inv(struct sim_dev *dev, const struct sim_pd *pd, uint32_t qpn,
		       uint32_t key, bool invalidate)
{
	struct sim_mw *mw = sim_mw_find(dev, key);

	if (!mw || mw->type != IBV_MW_TYPE_2 || !mw->bound || mw->pd != pd || mw->qpn != qpn)
		return false;
	if (invalidate)
		mw->bound = false;
	return true;
}
