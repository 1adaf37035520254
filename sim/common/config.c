#include "config.h"

#include <stdlib.h>
#include <string.h>

static int env_int(const char *name, int def, int lo, int hi)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	n = strtol(v, &end, 10);
	if (*end || n < lo || n > hi)
		return def;
	return (int)n;
}

/* FVSIM_LINK: "ib" or "eth" for every port, or a comma list per port ("ib,eth"); the
 * last word also covers the ports after it. Anything else leaves all ports InfiniBand. */
static void load_link(struct sim_config *cfg)
{
	const char *v = getenv("FVSIM_LINK");
	bool eth[SIM_MAX_PORTS + 1] = { false };
	int p = 1;

	memset(cfg->eth, 0, sizeof(cfg->eth));
	cfg->link[0] = 0;
	if (!v || !*v || strlen(v) >= sizeof(cfg->link))
		return;
	for (const char *w = v; *w; p++) {
		size_t n = strcspn(w, ",");

		if (p > SIM_MAX_PORTS)
			return;
		if (n == 3 && !strncmp(w, "eth", 3))
			eth[p] = true;
		else if (n != 2 || strncmp(w, "ib", 2))
			return;
		w += n + (w[n] == ',');
	}
	for (; p <= SIM_MAX_PORTS; p++)
		eth[p] = eth[p - 1];
	memcpy(cfg->eth, eth, sizeof(eth));
	strcpy(cfg->link, v);
}

void sim_config_load(struct sim_config *cfg)
{
	const char *mode = getenv("FVSIM_MODE");
	cfg->ndev = env_int("FVSIM_DEVICES", 1, 1, SIM_MAX_DEVICES);
	cfg->nports = env_int("FVSIM_PORTS", 1, 1, SIM_MAX_PORTS);
	const char *fab = getenv("FVSIM_FABRIC");

	cfg->step_mode = mode && !strcmp(mode, "step");
	cfg->poll_mode = mode && !strcmp(mode, "poll");
	cfg->no_blueflame = env_int("FVSIM_NO_BLUEFLAME", 0, 0, 1);
	cfg->direct = env_int("FVSIM_DIRECT", 1, 0, 1);
	cfg->no_dc = env_int("FVSIM_NO_DC", 0, 0, 1);
	/* A tick costs about 5 us on a 2-CPU VM (timer interrupt, signal frame, pass): every
	 * 10 us left a poller too little time between ticks under load. */
	cfg->tick_us = env_int("FVSIM_TICK_US", 20, 0, 100000);
	cfg->fabric[0] = 0;
	/* The name becomes part of a shared-memory object name: keep it to safe characters. */
	if (fab && *fab && strlen(fab) < sizeof(cfg->fabric) &&
	    strspn(fab, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") ==
		    strlen(fab))
		strcpy(cfg->fabric, fab);
	load_link(cfg);
}

/* Mellanox OUI 00:02:c9 in the top bytes, like real ConnectX node GUIDs. */
uint64_t sim_node_guid(int dev)
{
	return 0x0002c90300f50000ull | ((uint64_t)dev << 8);
}

uint64_t sim_port_guid(int dev, int port)
{
	return sim_node_guid(dev) + (uint64_t)port;
}

/* LIDs 1, 2, ... in device-then-port order; they route packets between simulated ports. */
uint16_t sim_port_lid(int dev, int port, int nports)
{
	return (uint16_t)(1 + dev * nports + (port - 1));
}

void sim_port_gid(int dev, int port, uint8_t gid[16])
{
	uint64_t guid = sim_port_guid(dev, port);

	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	for (int i = 0; i < 8; i++)
		gid[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
}
