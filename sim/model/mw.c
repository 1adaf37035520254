/* Memory windows: allocation from the mkey space the MRs use, lookup by key. Binding and
 * invalidation are work requests the engine executes (engine/umr.c). */
#include <errno.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

#include "../common/log.h"
#include "model.h"

int sim_mw_alloc(struct sim_ctx *ctx, struct sim_pd *pd, uint32_t type, struct sim_mw **out)
{
	struct sim_dev *dev = ctx->dev;
	struct sim_mw *mw;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)
		return EINVAL;
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return ENOMEM;
	mw->ctx = ctx;
	mw->pd = pd;
	mw->type = (uint8_t)type;
	mw->key = sim_mkey_new(dev); /* one index space with the MRs */
	if (sim_idmap_put(&dev->mws, mw->key >> 8, mw)) {
		free(mw);
		return ENOMEM;
	}
	pd->users++;
	sim_dbg("%s: MW key 0x%x type %u", dev->name, mw->key, type);
	*out = mw;
	return 0;
}

int sim_mw_dealloc(struct sim_mw *mw)
{
	sim_idmap_del(&mw->ctx->dev->mws, mw->key >> 8);
	mw->pd->users--;
	free(mw);
	return 0;
}

struct sim_mw *sim_mw_find(struct sim_dev *dev, uint32_t key)
{
	struct sim_mw *mw = sim_idmap_get(&dev->mws, key >> 8);

	return mw && mw->key == key ? mw : NULL;
}
