#include "world.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
			struct sim_port *port = &dev->port[p];

			port->eth = w->cfg.eth[p];
			if (!port->eth) {
				port->lid = sim_port_lid(d, p, dev->nports);
				sim_port_gid(d, p, port->gid);
				continue;
			}
			sim_port_mac(d, p, port->mac);
			sim_roce_gids(&w->cfg, d, p, port->gids);
			memcpy(port->gid, port->gids[0].gid, 16);
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
			if (!dev->port[p].eth && dev->port[p].lid == lid) {
				*port = p;
				return dev;
			}
		}
	}
	return NULL;
}

struct sim_dev *sim_find_gid(const uint8_t gid[16], int *port)
{
	static const uint8_t zero[16];

	if (!memcmp(gid, zero, 16))
		return NULL;
	for (int d = 0; d < sim_world.ndev; d++) {
		struct sim_dev *dev = &sim_world.dev[d];

		for (int p = 1; p <= dev->nports; p++) {
			if (!dev->port[p].eth)
				continue;
			for (int i = 0; i < SIM_GID_TBL_LEN; i++) {
				if (!memcmp(dev->port[p].gids[i].gid, gid, 16)) {
					*port = p;
					return dev;
				}
			}
		}
	}
	return NULL;
}

int sim_gid_to_mac(const uint8_t gid[16], uint8_t mac[6])
{
	static const uint8_t ll[8] = { 0xfe, 0x80 };
	struct sim_dev *dev;
	int port;

	dev = sim_find_gid(gid, &port);
	if (dev) {
		memcpy(mac, dev->port[port].mac, 6);
		return 0;
	}
	/* A link-local GID built from a MAC (modified EUI-64) names that MAC. */
	if (!memcmp(gid, ll, 8) && gid[11] == 0xff && gid[12] == 0xfe) {
		mac[0] = gid[8] ^ 2;
		mac[1] = gid[9];
		mac[2] = gid[10];
		memcpy(mac + 3, gid + 13, 3);
		return 0;
	}
	return EHOSTUNREACH;
}
