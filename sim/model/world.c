#include "world.h"

#include <stdio.h>

#include "../common/log.h"
#include "../fabric/segment.h"

struct sim_world sim_world = { .lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_once_t world_once = PTHREAD_ONCE_INIT;

/* A fork while another thread holds the lock would leave the child's copy locked
 * forever; holding it across fork() makes the child's copy consistent. */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&sim_world.lock);
}

static void atfork_release(void)
{
	pthread_mutex_unlock(&sim_world.lock);
}

static void world_setup(void)
{
	struct sim_world *w = &sim_world;

	sim_log_init();
	sim_config_load(&w->cfg);
	sim_list_init(&w->ctxs);
	sim_list_init(&w->qps);
	sim_list_init(&w->cqs);
	w->ndev = w->cfg.ndev;
	for (int d = 0; d < w->ndev; d++) {
		struct sim_dev *dev = &w->dev[d];

		dev->index = d;
		snprintf(dev->name, sizeof(dev->name), "mlx5_%d", d);
		dev->nports = w->cfg.nports;
		dev->node_guid = sim_node_guid(d);
		for (int p = 1; p <= dev->nports; p++) {
			dev->port[p].lid = sim_port_lid(d, p, dev->nports);
			sim_port_gid(d, p, dev->port[p].gid);
		}
		/* Start numbers like a real HCA would hand them out: non-zero and distinct
		 * per device, so a wrong-device lookup never succeeds by accident. */
		dev->next_pdn = 1;
		dev->next_cqn = 0x400 * (uint32_t)(d + 1);
		dev->next_qpn = 0x100 + 0x10000 * (uint32_t)d;
		dev->next_srqn = 0x80 + 0x1000 * (uint32_t)d;
		dev->next_xrcdn = 1;
		dev->next_mkey = 0x100 + 0x10000 * (uint32_t)d;
		sim_list_init(&dev->xrcds);
	}
	pthread_atfork(atfork_prepare, atfork_release, atfork_release);
	if (w->cfg.fabric[0])
		w->fabric_refused = !sim_fabric_attach(w->cfg.fabric);
}

void sim_world_init(void)
{
	pthread_once(&world_once, world_setup);
}

void sim_lock(void)
{
	pthread_mutex_lock(&sim_world.lock);
}

bool sim_trylock(void)
{
	return pthread_mutex_trylock(&sim_world.lock) == 0;
}

void sim_unlock(void)
{
	pthread_mutex_unlock(&sim_world.lock);
}

struct sim_dev *sim_find_lid(uint16_t lid, int *port)
{
	for (int d = 0; d < sim_world.ndev; d++) {
		struct sim_dev *dev = &sim_world.dev[d];

		for (int p = 1; p <= dev->nports; p++) {
			if (dev->port[p].lid == lid) {
				*port = p;
				return dev;
			}
		}
	}
	return NULL;
}
