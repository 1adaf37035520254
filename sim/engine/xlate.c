#include "xlate.h"

#include <infiniband/verbs.h>

#include "../model/model.h"
#include "synd.h"

static bool in_mr(const struct sim_mr *mr, uint64_t addr, uint64_t len)
{
	return addr >= mr->iova && addr + len >= addr && addr + len <= mr->iova + mr->len;
}

int sim_xlate_local(struct sim_dev *dev, const struct sim_pd *pd, const struct sim_sge *sg,
		    int n, uint64_t off, uint64_t len, uint32_t need, struct sim_iov *out,
		    int *nout)
{
	int k = 0;

	for (int i = 0; i < n && len; i++) {
		uint64_t l = sg[i].len, a = sg[i].addr;
		const struct sim_mr *mr;

		if (off >= l) {
			off -= l;
			continue;
		}
		a += off;
		l -= off;
		off = 0;
		if (l > len)
			l = len;
		mr = sim_mr_find(dev, sg[i].lkey);
		if (!mr || mr->pd != pd || (mr->access & need) != need || !in_mr(mr, a, l))
			return SYND_LOC_PROT;
		if (k == SIM_MAX_IOV)
			return SYND_LOC_LEN;
		out[k].addr = mr->host + (a - mr->iova);
		out[k].len = l;
		k++;
		len -= l;
	}
	*nout = k;
	return len ? SYND_LOC_LEN : SYND_OK;
}

/* The MR address behind window address raddr, or false if the window does not grant it. */
static bool through_window(struct sim_dev *dev, const struct sim_pd *pd, uint32_t qpn,
			   uint32_t rkey, uint64_t raddr, uint64_t len, uint32_t need,
			   const struct sim_mr **mr, uint64_t *addr)
{
	const struct sim_mw *mw = sim_mw_find(dev, rkey);

	if (!mw || !mw->bound || mw->pd != pd || (mw->access & need) != need)
		return false;
	if (mw->type == IBV_MW_TYPE_2 && mw->qpn != qpn)
		return false;
	if (raddr < mw->start || raddr + len < raddr || raddr + len > mw->start + mw->len)
		return false;
	*mr = sim_mr_find(dev, mw->mr_key);
	*addr = mw->mr_addr + (raddr - mw->start);
	return *mr != NULL;
}

bool sim_xlate_remote(struct sim_dev *dev, const struct sim_pd *pd, uint32_t qpn,
		      uint32_t rkey, uint64_t raddr, uint64_t len, uint32_t need,
		      struct sim_iov *out)
{
	const struct sim_mr *mr = sim_mr_find(dev, rkey);
	uint64_t a = raddr;

	if (mr) {
		if (mr->pd != pd || (mr->access & need) != need || !in_mr(mr, a, len))
			return false;
	} else if (!through_window(dev, pd, qpn, rkey, raddr, len, need, &mr, &a) ||
		   !in_mr(mr, a, len)) {
		return false;
	}
	out->addr = mr->host + (a - mr->iova);
	out->len = len;
	return true;
}
