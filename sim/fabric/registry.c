#include "registry.h"

#include <string.h>
#include <unistd.h>

#include "../common/log.h"

static uint32_t take(uint32_t *counter)
{
	uint32_t n;

	sim_fab_lock();
	n = (*counter)++;
	sim_fab_unlock();
	return n;
}

uint32_t sim_fabric_next_qpn(int dev)
{
	return take(&sim_fab->next_qpn[dev]);
}

uint32_t sim_fabric_next_mkey(int dev)
{
	return take(&sim_fab->next_mkey[dev]);
}

/* Entries of processes that died are free for the taking. */
void sim_fabric_add_qp(int dev, uint32_t qpn)
{
	int p = sim_fab_my_proc();

	if (p < 0)
		return;
	sim_fab_lock();
	for (int i = 0; i < FAB_QPS; i++) {
		struct fab_qp *e = &sim_fab->qp[i];

		if (e->pid == 0 || !sim_fab_alive(e->pid)) {
			e->pid = getpid();
			e->dev = (uint16_t)dev;
			e->proc = (uint16_t)p;
			e->qpn = qpn;
			sim_fab_unlock();
			return;
		}
	}
	sim_fab_unlock();
	sim_warn("fabric: registry full, QP 0x%x is unreachable from other processes", qpn);
}

void sim_fabric_eth_listen(bool on)
{
	int p = sim_fab_my_proc();

	if (p >= 0)
		__atomic_store_n(&sim_fab->eth[p].listen, on, __ATOMIC_RELEASE);
}

void sim_fabric_del_qp(int dev, uint32_t qpn)
{
	sim_fab_lock();
	for (int i = 0; i < FAB_QPS; i++) {
		struct fab_qp *e = &sim_fab->qp[i];

		if (e->pid == getpid() && e->dev == dev && e->qpn == qpn)
			e->pid = 0;
	}
	sim_fab_unlock();
}

int sim_fabric_owner(int dev, uint32_t qpn, pid_t *pid)
{
	int owner = -1;

	sim_fab_lock();
	for (int i = 0; i < FAB_QPS; i++) {
		struct fab_qp *e = &sim_fab->qp[i];

		if (e->pid && e->dev == dev && e->qpn == qpn && e->pid != getpid() &&
		    sim_fab_alive(e->pid)) {
			owner = e->proc;
			*pid = e->pid;
			break;
		}
	}
	sim_fab_unlock();
	return owner;
}

int sim_fabric_self(void)
{
	return sim_fab ? sim_fab_my_proc() : -1;
}

void sim_fabric_add_listener(uint16_t ps, const struct sockaddr *a, size_t len)
{
	int p = sim_fab_my_proc();

	if (p < 0 || len > sizeof(struct sockaddr_in6))
		return;
	sim_fab_lock();
	for (int i = 0; i < FAB_LISTENERS; i++) {
		struct fab_listener *l = &sim_fab->listener[i];

		if (l->pid == 0 || !sim_fab_alive(l->pid)) {
			memset(l, 0, sizeof(*l));
			l->pid = getpid();
			l->proc = (uint16_t)p;
			l->ps = ps;
			memcpy(&l->addr, a, len);
			sim_fab_unlock();
			return;
		}
	}
	sim_fab_unlock();
	sim_warn("fabric: listener table full, a listener is reachable in its process only");
}

void sim_fabric_del_listener(uint16_t ps, const struct sockaddr *a, size_t len)
{
	sim_fab_lock();
	for (int i = 0; i < FAB_LISTENERS; i++) {
		struct fab_listener *l = &sim_fab->listener[i];

		if (l->pid == getpid() && l->ps == ps && len <= sizeof(l->addr) &&
		    !memcmp(&l->addr, a, len)) {
			l->pid = 0;
			break;
		}
	}
	sim_fab_unlock();
}

int sim_fabric_listener(uint16_t ps, const struct sockaddr *a,
			bool (*takes)(const struct sockaddr *listener, const struct sockaddr *a))
{
	int inbox = -1;

	sim_fab_lock();
	for (int i = 0; i < FAB_LISTENERS && inbox < 0; i++) {
		struct fab_listener *l = &sim_fab->listener[i];

		if (l->pid && l->pid != getpid() && l->ps == ps && sim_fab_alive(l->pid) &&
		    takes((const struct sockaddr *)&l->addr, a))
			inbox = l->proc;
	}
	sim_fab_unlock();
	return inbox;
}
