/* Map from a 32-bit hardware number (QPN, CQN, SRQN, mkey index) to an object: open
 * addressing with linear probing, because lookups happen per packet on the data path. */
#ifndef FVSIM_IDMAP_H
#define FVSIM_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct sim_idmap {
	uint32_t *keys;
	void **vals;
	size_t cap; /* power of two, 0 when empty */
	size_t used; /* live + deleted slots */
	size_t live;
};

int sim_idmap_put(struct sim_idmap *m, uint32_t key, void *val); /* 0 or ENOMEM */
void *sim_idmap_get(const struct sim_idmap *m, uint32_t key);
void sim_idmap_del(struct sim_idmap *m, uint32_t key);
void sim_idmap_free(struct sim_idmap *m);

#endif
