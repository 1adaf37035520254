/* The topology of this process's devices: the devices and their ports (fixed at setup),
 * the open contexts and the lists the engine scans. One mutex serialises commands, the
 * device thread and the step API. */
#ifndef FVSIM_WORLD_H
#define FVSIM_WORLD_H

#include <pthread.h>

#include "obj.h"

struct sim_world {
	pthread_mutex_t lock;
	struct sim_config cfg;
	int ndev;
	struct sim_dev dev[SIM_MAX_DEVICES];
	struct sim_list ctxs, qps, cqs;
	/* FVSIM_FABRIC names a fabric whose segment cannot be used: no device opens, rather
	 * than a private one that would reuse the fabric's QP numbers and keys. */
	bool fabric_refused;
};

extern struct sim_world sim_world;

void sim_world_init(void); /* idempotent */
void sim_lock(void);
bool sim_trylock(void); /* true: taken */
void sim_unlock(void);

/* Port addressed by a LID anywhere in the fabric; NULL if no port has it. */
struct sim_dev *sim_find_lid(uint16_t lid, int *port);


#endif
