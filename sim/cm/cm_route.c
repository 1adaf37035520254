/* The CM's side of the fabric. Messages for another process wait in the outbox, which
 * the engine empties into that process's inbox (engine/remote_cm.c; cm_recv.c delivers
 * this process's own and what arrives). Listeners are published in the fabric's listener
 * table, so a request finds the process listening on its address and a bind sees ports
 * taken elsewhere. */
#include "cm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "../fabric/owners.h"

struct queued {
	struct sim_list link;
	uint32_t to; /* inbox + 1 */
	struct sim_wire_cm m;
};

static struct sim_list outbox = { &outbox, &outbox };

uint32_t cm_self(void)
{
	return (uint32_t)(sim_fabric_self() + 1);
}

void cm_send_out(uint32_t to, const struct sim_wire_cm *m)
{
	struct queued *o = malloc(sizeof(*o));

	if (!o) {
		sim_warn("rdma_cm: message %u to process %u lost: out of memory", m->kind, to);
		return;
	}
	o->to = to;
	o->m = *m;
	sim_list_add_tail(&outbox, &o->link);
}

/* -1 when no process of the fabric (or no fabric) listens on a. */
int cm_listener_inbox(uint16_t ps, const struct sockaddr *a)
{
	return cm_self() ? sim_fabric_listener(ps, a, cm_addr_match) : -1;
}

/* Two bound addresses that cannot share a port. */
static bool overlaps(const struct sockaddr *a, const struct sockaddr *b)
{
	return cm_addr_port(a) == cm_addr_port(b) &&
	       (cm_addr_any(a) || cm_addr_any(b) || cm_addr_match(a, b));
}

bool cm_listener_elsewhere(uint16_t ps, const struct sockaddr *a)
{
	return cm_self() && sim_fabric_listener(ps, a, overlaps) >= 0;
}

void cm_listener_publish(const struct cm_id *listener, bool on)
{
	const struct sockaddr *a = (const struct sockaddr *)&listener->src;

	if (!cm_self())
		return;
	if (on)
		sim_fabric_add_listener(listener->ps, a, (size_t)cm_addr_size(a));
	else
		sim_fabric_del_listener(listener->ps, a, (size_t)cm_addr_size(a));
}

int cm_flush(int (*send)(int inbox, const struct sim_wire_cm *m))
{
	struct sim_list *p, *t;
	int n = 0;

	cm_lock();
	sim_list_for_each_safe(p, t, &outbox) {
		struct queued *o = sim_container_of(p, struct queued, link);
		int err = send((int)o->to - 1, &o->m);

		if (err == EAGAIN)
			break; /* that inbox is full: keep the order, try again later */
		if (err)
			sim_dbg("rdma_cm: message %u to process %u dropped: %s", o->m.kind, o->to,
				strerror(err));
		sim_list_del(&o->link);
		free(o);
		n++;
	}
	cm_unlock();
	return n;
}
