#include "mrtab.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "../common/log.h"
#include "segment.h"

/* An MR's entry: one place per key index (keys are numbered fabric-wide per device). */
static struct fab_mr *entry_of(int dev, uint32_t key)
{
	return &sim_fab->mr[((key >> 8) + (uint32_t)dev * 0x9e37u) % FAB_MRS];
}

void sim_fabric_mr_publish(int dev, uint32_t key, uint32_t pdn, uint32_t access,
			   uint64_t iova, uint64_t len, uint64_t host)
{
	struct fab_mr *e;
	uint32_t g;

	if (!sim_fab || sim_fab_my_proc() < 0)
		return;
	e = entry_of(dev, key);
	sim_fab_lock();
	g = __atomic_load_n(&e->gate, __ATOMIC_ACQUIRE);
	/* Taken by a live MR, or a requester still copies under a dead one's entry. */
	if (((g & FAB_MR_OPEN) && sim_fab_alive(e->pid)) ||
	    (g & ~FAB_MR_OPEN) ||
	    !__atomic_compare_exchange_n(&e->gate, &g, 0, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		sim_fab_unlock();
		sim_dbg("fabric: MR 0x%x not published (its entry is taken)", key);
		return;
	}
	e->pid = getpid();
	e->proc = (uint16_t)sim_fab_my_proc();
	e->dev = (uint16_t)dev;
	e->key = key;
	e->pdn = pdn;
	e->access = access;
	e->iova = iova;
	e->len = len;
	e->host = host;
	__atomic_store_n(&e->gate, FAB_MR_OPEN, __ATOMIC_RELEASE);
	sim_fab_unlock();
}

/* A requester that died while copying never leaves: give up on it after a second. */
#define WITHDRAW_WAIT_NS 1000000000ull

void sim_fabric_mr_withdraw(int dev, uint32_t key)
{
	struct fab_mr *e;
	struct timespec t0, t;
	uint32_t g;

	if (!sim_fab)
		return;
	e = entry_of(dev, key);
	sim_fab_lock();
	if (e->pid != getpid() || e->key != key || e->dev != dev ||
	    !(__atomic_load_n(&e->gate, __ATOMIC_ACQUIRE) & FAB_MR_OPEN)) {
		sim_fab_unlock();
		return;
	}
	g = __atomic_and_fetch(&e->gate, ~FAB_MR_OPEN, __ATOMIC_ACQ_REL);
	sim_fab_unlock();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (g) {
		sched_yield();
		g = __atomic_load_n(&e->gate, __ATOMIC_ACQUIRE);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t.tv_nsec -
			    (uint64_t)t0.tv_nsec > WITHDRAW_WAIT_NS) {
			sim_warn("fabric: MR 0x%x: a requester never finished its copy", key);
			break;
		}
	}
}

void sim_fabric_qp_state(int reg, uint32_t rx, uint32_t access, uint32_t pdn, uint64_t dc_key)
{
	struct fab_qp *e;

	if (!sim_fab || reg < 0 || reg >= FAB_QPS)
		return;
	e = &sim_fab->qp[reg];
	sim_fab_lock();
	if (e->pid == getpid()) {
		e->access = access;
		e->pdn = pdn;
		e->dc_key = dc_key;
		e->rx = rx;
	}
	sim_fab_unlock();
}

bool sim_fabric_rx_target(int dev, uint32_t qpn, uint32_t rx, uint64_t dc_key, uint32_t need,
			  pid_t *pid, uint32_t *pdn)
{
	bool ok = false;
	int i;

	sim_fab_lock();
	if ((i = sim_fab_find_qp(dev, qpn)) >= 0) {
		const struct fab_qp *e = &sim_fab->qp[i];

		ok = e->rx == rx && (rx != SIM_FAB_RX_DCT || e->dc_key == dc_key) &&
		     (e->access & need) == need &&
		     sim_fab->proc[e->proc].pid == e->pid;
		*pid = e->pid;
		*pdn = e->pdn;
	}
	sim_fab_unlock();
	return ok;
}

bool sim_fabric_mr_enter(int dev, pid_t pid, uint32_t pdn, uint32_t rkey, uint64_t raddr,
			 uint64_t len, uint32_t need, uint64_t *host, int *ticket)
{
	struct fab_mr *e = entry_of(dev, rkey);
	uint32_t g = __atomic_load_n(&e->gate, __ATOMIC_ACQUIRE);

	do {
		if (!(g & FAB_MR_OPEN))
			return false;
	} while (!__atomic_compare_exchange_n(&e->gate, &g, g + 1, true, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	/* Open and entered: the fields hold still until we leave. */
	if (e->key != rkey || e->dev != dev || e->pid != pid || e->pdn != pdn ||
	    (e->access & need) != need || raddr < e->iova || raddr + len < raddr ||
	    raddr + len > e->iova + e->len) {
		__atomic_sub_fetch(&e->gate, 1, __ATOMIC_RELEASE);
		return false;
	}
	*host = e->host + (raddr - e->iova);
	*ticket = (int)(e - sim_fab->mr);
	return true;
}

void sim_fabric_mr_leave(int ticket)
{
	__atomic_sub_fetch(&sim_fab->mr[ticket].gate, 1, __ATOMIC_RELEASE);
}
