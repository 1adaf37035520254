/* The simulated fabric of this process: its devices, the open contexts and the lists the
 * engine scans. One mutex serialises commands, the device thread and the step API. */
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
};

extern struct sim_world sim_world;

void sim_world_init(void); /* idempotent */
void sim_lock(void);
void sim_unlock(void);

/* Port addressed by a LID anywhere in the fabric; NULL if no port has it. */
struct sim_dev *sim_find_lid(uint16_t lid, int *port);

struct sim_ctx *sim_ctx_new(int dev_index, int cmd_fd);
void sim_ctx_destroy(struct sim_ctx *ctx); /* releases every object it still owns */

uint32_t sim_handle_new(struct sim_ctx *ctx, int type, void *obj); /* UINT32_MAX on ENOMEM */
void *sim_handle_get(struct sim_ctx *ctx, uint32_t handle, int type);
void sim_handle_del(struct sim_ctx *ctx, uint32_t handle);

#endif
