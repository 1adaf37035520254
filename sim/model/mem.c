/* Protection domains, memory regions, address handles and XRC domains. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <fcntl.h>

#include <infiniband/verbs.h>

#include "../common/log.h"
#include "../common/mapped.h"
#include "../common/sys.h"
#include "../fabric/mrtab.h"
#include "../fabric/owners.h"
#include "model.h"
#include "world.h"

int sim_pd_alloc(struct sim_ctx *ctx, struct sim_pd **out)
{
	struct sim_pd *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return ENOMEM;
	pd->ctx = ctx;
	pd->pdn = ctx->dev->next_pdn++;
	*out = pd;
	return 0;
}

int sim_pd_free(struct sim_pd *pd)
{
	if (pd->users)
		return EBUSY;
	free(pd);
	return 0;
}

/* Access bits the kernel accepts for ibv_reg_mr; the optional range (bit 20 and up,
 * relaxed ordering) is ignored like the kernel ignores it. */
#define MR_ACCESS_KNOWN                                                                   \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |      \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |          \
	 IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB)
#define MR_ACCESS_OPTIONAL 0xfff00000u

uint32_t sim_mkey_new(struct sim_dev *dev)
{
	uint32_t index = sim_fabric_on() ? sim_fabric_next_mkey(dev->index) : dev->next_mkey++;

	return (index << 8) | ((index * 0x3b + 0x5a) & 0xff);
}

/* The range and access checks of REG_MR, also applied to what REREG_MR changes. */
static int check_range(uint64_t start, uint64_t len, uint64_t iova, uint32_t access)
{
	if (!len || start + len < start || iova + len < iova)
		return EINVAL;
	if ((start & 4095) != (iova & 4095))
		return EINVAL;
	/* Pinning fails on unmapped memory; on-demand paging regions are not pinned. */
	return access & IBV_ACCESS_ON_DEMAND ? 0 : sim_range_mapped(start, len);
}

static int check_access(uint32_t access)
{
	if (access & ~(MR_ACCESS_KNOWN | MR_ACCESS_OPTIONAL))
		return EINVAL;
	/* Remote write or atomic access needs local write (IB spec, enforced by the kernel). */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	return 0;
}

/* Requesters in other processes may place RDMA WRITEs into a published MR themselves. */
static void publish(const struct sim_mr *mr)
{
	if (sim_fabric_on())
		sim_fabric_mr_publish(mr->ctx->dev->index, mr->key, mr->pd->pdn, mr->access,
				      mr->iova, mr->len, mr->host);
}

/* Closes the MR to them; returns once none of them copies into it any more. */
static void withdraw(const struct sim_mr *mr)
{
	if (sim_fabric_on())
		sim_fabric_mr_withdraw(mr->ctx->dev->index, mr->key);
}

int sim_mr_reg(struct sim_ctx *ctx, struct sim_pd *pd, uint64_t start, uint64_t len,
	       uint64_t iova, uint32_t access, struct sim_mr **out)
{
	struct sim_dev *dev = ctx->dev;
	struct sim_mr *mr;
	int err;

	if ((err = check_access(access)) || (err = check_range(start, len, iova, access)))
		return err;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return ENOMEM;
	mr->ctx = ctx;
	mr->pd = pd;
	mr->key = sim_mkey_new(dev);
	mr->iova = iova;
	mr->len = len;
	mr->host = start;
	mr->access = access;
	if (sim_idmap_put(&dev->mrs, mr->key >> 8, mr)) {
		free(mr);
		return ENOMEM;
	}
	pd->users++;
	publish(mr);
	sim_dbg("%s: MR key 0x%x [0x%llx +0x%llx) access 0x%x", dev->name, mr->key,
		(unsigned long long)iova, (unsigned long long)len, access);
	*out = mr;
	return 0;
}

int sim_mr_rereg(struct sim_mr *mr, uint32_t flags, struct sim_pd *pd, uint64_t start,
		 uint64_t len, uint64_t iova, uint32_t access)
{
	uint32_t new_access = flags & SIM_REREG_ACCESS ? access : mr->access;
	int err;

	if ((flags & SIM_REREG_ACCESS) && (err = check_access(access)))
		return err;
	if (flags & SIM_REREG_TRANS) {
		if ((err = check_range(start, len, iova, new_access)))
			return err;
	} else if ((flags & SIM_REREG_ACCESS) && (err = check_range(mr->host, mr->len, mr->iova,
								   new_access))) {
		return err; /* leaving on-demand paging pins the old range */
	}
	/* All checked: change everything at once, keeping the key (the mkey is updated in
	 * place, as mlx5 does with UMR). Other processes' requesters stop first. */
	withdraw(mr);
	if (flags & SIM_REREG_TRANS) {
		mr->host = start;
		mr->len = len;
		mr->iova = iova;
	}
	if (flags & SIM_REREG_PD) {
		mr->pd->users--;
		mr->pd = pd;
		pd->users++;
	}
	mr->access = new_access;
	publish(mr);
	sim_dbg("MR key 0x%x re-registered [0x%llx +0x%llx) access 0x%x", mr->key,
		(unsigned long long)mr->iova, (unsigned long long)mr->len, mr->access);
	return 0;
}

int sim_mr_dereg(struct sim_mr *mr)
{
	withdraw(mr);
	sim_idmap_del(&mr->ctx->dev->mrs, mr->key >> 8);
	mr->pd->users--;
	free(mr);
	return 0;
}

struct sim_mr *sim_mr_find(struct sim_dev *dev, uint32_t key)
{
	struct sim_mr *mr = sim_idmap_get(&dev->mrs, key >> 8);

	return mr && mr->key == key ? mr : NULL;
}

int sim_ah_create(struct sim_ctx *ctx, struct sim_pd *pd, struct sim_ah **out)
{
	struct sim_ah *ah = calloc(1, sizeof(*ah));

	if (!ah)
		return ENOMEM;
	ah->ctx = ctx;
	ah->pd = pd;
	pd->users++;
	*out = ah;
	return 0;
}

int sim_ah_destroy(struct sim_ah *ah)
{
	ah->pd->users--;
	free(ah);
	return 0;
}

/* An XRC domain opened with a file is shared by every context that opens the same
 * inode; without a file (fd -1) each open makes a private one. */
int sim_xrcd_open(struct sim_ctx *ctx, int fd, int oflags, struct sim_xrcd **out)
{
	struct sim_dev *dev = ctx->dev;
	struct sim_xrcd *x = NULL;
	struct stat st;
	bool found = false;

	if (fd != -1) {
		if (sim_sys_fstat(fd, &st))
			return EBADF;
		struct sim_list *pos, *tmp;
		sim_list_for_each_safe(pos, tmp, &dev->xrcds) {
			struct sim_xrcd *c = sim_container_of(pos, struct sim_xrcd, link);

			if (c->has_inode && c->st_dev == st.st_dev && c->st_ino == st.st_ino) {
				x = c;
				found = true;
				break;
			}
		}
		if (found && (oflags & O_CREAT) && (oflags & O_EXCL))
			return EEXIST;
		if (!found && !(oflags & O_CREAT))
			return ENOENT;
	}
	if (!x) {
		x = calloc(1, sizeof(*x));
		if (!x)
			return ENOMEM;
		x->dev = dev;
		x->xrcdn = dev->next_xrcdn++;
		if (fd != -1) {
			x->has_inode = true;
			x->st_dev = st.st_dev;
			x->st_ino = st.st_ino;
		}
		sim_list_add_tail(&dev->xrcds, &x->link);
	}
	x->opens++;
	*out = x;
	return 0;
}

int sim_xrcd_close(struct sim_xrcd *x, bool force)
{
	if (x->users && x->opens == 1 && !force)
		return EBUSY;
	if (--x->opens == 0 && x->users == 0) {
		sim_list_del(&x->link);
		free(x);
	}
	return 0;
}

void sim_xrcd_put(struct sim_xrcd *x)
{
	if (--x->users == 0 && x->opens == 0) {
		sim_list_del(&x->link);
		free(x);
	}
}
