#include "roce.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>

void sim_port_mac(int dev, int port, uint8_t mac[6])
{
	const uint8_t m[6] = { 0x00, 0x02, 0xc9, 0xf5, (uint8_t)dev, (uint8_t)port };

	memcpy(mac, m, 6);
}

/* The first interface that is up, not loopback and has an IPv4 address; its name, that
 * address and its first global IPv6 address (zero when it has none). */
static int machine_addrs(char name[16], uint8_t v4[4], uint8_t v6[16])
{
	struct ifaddrs *all, *a;
	int found = 0;

	if (getifaddrs(&all))
		return 0;
	memset(v6, 0, 16);
	for (a = all; a && !found; a = a->ifa_next) {
		if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET ||
		    !(a->ifa_flags & IFF_UP) || (a->ifa_flags & IFF_LOOPBACK) ||
		    strlen(a->ifa_name) >= 16)
			continue;
		strcpy(name, a->ifa_name);
		memcpy(v4, &((struct sockaddr_in *)a->ifa_addr)->sin_addr, 4);
		found = 1;
	}
	for (a = all; a && found; a = a->ifa_next) {
		const uint8_t *b;

		if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET6 || strcmp(a->ifa_name, name))
			continue;
		b = ((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr.s6_addr;
		if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
			continue; /* link-local: the port's own fe80:: row stands for it */
		memcpy(v6, b, 16);
		break;
	}
	freeifaddrs(all);
	return found;
}

static void pair(struct sim_gid_entry *e, const uint8_t gid[16], const char *ndev)
{
	for (int i = 0; i < 2; i++) {
		memcpy(e[i].gid, gid, 16);
		e[i].type = i ? SIM_GID_ROCE_V2 : SIM_GID_ROCE_V1;
		strcpy(e[i].ndev, ndev);
	}
}

static int first_eth_port(const struct sim_config *cfg)
{
	for (int p = 1; p <= cfg->nports; p++)
		if (cfg->eth[p])
			return p;
	return 0;
}

void sim_roce_gids(const struct sim_config *cfg, int dev, int port,
		   struct sim_gid_entry tbl[SIM_GID_TBL_LEN])
{
	uint8_t mac[6], gid[16] = { 0xfe, 0x80 }, v4[4], v6[16];
	char ndev[16] = "";
	bool owner = dev == 0 && port == first_eth_port(cfg);

	memset(tbl, 0, sizeof(*tbl) * SIM_GID_TBL_LEN);
	if (owner && !machine_addrs(ndev, v4, v6))
		owner = false;
	sim_port_mac(dev, port, mac);
	/* Modified EUI-64: MAC with ff:fe in the middle and the universal/local bit flipped. */
	gid[8] = mac[0] ^ 2;
	gid[9] = mac[1];
	gid[10] = mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	memcpy(gid + 13, mac + 3, 3);
	pair(&tbl[0], gid, ndev);
	if (!owner)
		return;
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, v4, 4);
	pair(&tbl[2], gid, ndev);
	if (v6[0] || v6[1])
		pair(&tbl[4], v6, ndev);
}
