/* Socket addresses as the CM compares them: sizes, ports, wildcards, which listener
 * takes which destination, and which addresses are this machine's. Pure functions of
 * the addresses (and the machine's interfaces), below everything else in the CM. */
#include "cm_int.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <string.h>

#include <infiniband/ib.h>

int cm_addr_size(const struct sockaddr *a)
{
	switch (a->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct sockaddr_ib);
	default:
		return 0;
	}
}

bool cm_addr_any(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (a->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)a)->sin6_addr);
	return true;
}

uint16_t cm_addr_port(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)a)->sin_port);
	if (a->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return 0;
}

bool cm_addr_same_ip(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
}

/* A listener bound to listen takes a request for dst: same port, and its address is a
 * wildcard (an IPv6 one also takes IPv4 unless AFONLY, not modelled) or dst's own. */
bool cm_addr_match(const struct sockaddr *listen, const struct sockaddr *dst)
{
	if (cm_addr_port(listen) != cm_addr_port(dst))
		return false;
	if (cm_addr_any(listen))
		return listen->sa_family == dst->sa_family || listen->sa_family == AF_INET6;
	return cm_addr_same_ip(listen, dst);
}

/* Loopback, the unspecified address (the kernel resolves it to loopback) and every
 * address of the machine's interfaces. */
bool cm_addr_local(const struct sockaddr *a)
{
	struct ifaddrs *ifs, *i;
	bool found = false;

	if (cm_addr_any(a))
		return true;
	if (a->sa_family == AF_INET &&
	    (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127)
		return true;
	if (a->sa_family == AF_INET6 &&
	    IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)a)->sin6_addr))
		return true;
	if (getifaddrs(&ifs))
		return false;
	for (i = ifs; i && !found; i = i->ifa_next)
		found = i->ifa_addr && cm_addr_same_ip(i->ifa_addr, a);
	freeifaddrs(ifs);
	return found;
}
