#include "owners.h"

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
int sim_fabric_add_qp(int dev, uint32_t qpn)
{
	int p = sim_fab_my_proc();

	if (p < 0)
		return -1;
	sim_fab_lock();
	for (int i = 0; i < FAB_QPS; i++) {
		struct fab_qp *e = &sim_fab->qp[i];

		if (e->pid == 0 || !sim_fab_alive(e->pid)) {
			memset(e, 0, sizeof(*e));
			e->pid = getpid();
			e->dev = (uint16_t)dev;
			e->proc = (uint16_t)p;
			e->qpn = qpn;
			sim_fab_unlock();
			return i;
		}
	}
	sim_fab_unlock();
	sim_warn("fabric: registry full, QP 0x%x is unreachable from other processes", qpn);
	return -1;
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

static bool names(const struct fab_qp *e, int dev, uint32_t qpn, pid_t self)
{
	return e->pid && e->dev == dev && e->qpn == qpn && e->pid != self;
}

/* Every message looks its destination up: the entry found last time is tried first
 * (a requester mostly talks to the same QP), before the whole table. */
int sim_fab_find_qp(int dev, uint32_t qpn)
{
	static int hint;
	int h = __atomic_load_n(&hint, __ATOMIC_RELAXED);
	pid_t self = getpid();

	if (names(&sim_fab->qp[h], dev, qpn, self) && sim_fab_alive(sim_fab->qp[h].pid))
		return h;
	for (int i = 0; i < FAB_QPS; i++) {
		if (names(&sim_fab->qp[i], dev, qpn, self) && sim_fab_alive(sim_fab->qp[i].pid)) {
			__atomic_store_n(&hint, i, __ATOMIC_RELAXED);
			return i;
		}
	}
	return -1;
}

int sim_fabric_owner(int dev, uint32_t qpn, pid_t *pid)
{
	int owner = -1, i;

	sim_fab_lock();
	if ((i = sim_fab_find_qp(dev, qpn)) >= 0) {
		owner = sim_fab->qp[i].proc;
		*pid = sim_fab->qp[i].pid;
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
