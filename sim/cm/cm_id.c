/* rdma_cm ids, their handles and event channels; the event queue of a channel. */
#include "cm_int.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/log.h"
#include "../common/sys.h"

static pthread_mutex_t cm_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct sim_list all_ids = { &all_ids, &all_ids };
static struct cm_id **handles; /* handle -> id; the kernel hands out the lowest free one */
static uint32_t nhandles;
static uint32_t next_comm = 1;

void cm_lock(void)
{
	pthread_mutex_lock(&cm_mutex);
}

void cm_unlock(void)
{
	pthread_mutex_unlock(&cm_mutex);
}

static void efd_add(int efd)
{
	uint64_t one = 1;

	if (sim_sys_write(efd, &one, sizeof(one)) != sizeof(one))
		sim_warn("rdma_cm: eventfd %d: %s", efd, strerror(errno));
}

/* One unit leaves the counter; never blocks, the unit is there by construction. */
static void efd_take(int efd)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	uint64_t v;

	if (poll(&p, 1, 0) == 1 && syscall(SYS_read, efd, &v, sizeof(v)) != sizeof(v))
		sim_warn("rdma_cm: eventfd %d: %s", efd, strerror(errno));
}

struct cm_chan *cm_chan_new(int efd)
{
	struct cm_chan *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	sim_list_init(&ch->events);
	ch->efd = efd;
	return ch;
}

static uint32_t handle_alloc(struct cm_id *id)
{
	uint32_t h;

	for (h = 0; h < nhandles && handles[h]; h++)
		;
	if (h == nhandles) {
		uint32_t n = nhandles ? nhandles * 2 : 64;
		struct cm_id **t = realloc(handles, n * sizeof(*t));

		if (!t)
			return UINT32_MAX;
		memset(t + nhandles, 0, (n - nhandles) * sizeof(*t));
		handles = t;
		nhandles = n;
	}
	handles[h] = id;
	return h;
}

/* ENOENT: no such id; EINVAL: it belongs to another file (kernel _ucma_find_context). */
struct cm_id *cm_id_find(struct cm_chan *ch, uint32_t handle, int *err)
{
	struct cm_id *id = handle < nhandles ? handles[handle] : NULL;

	*err = !id ? ENOENT : id->ch != ch ? EINVAL : 0;
	return *err ? NULL : id;
}

struct cm_id *cm_id_by_comm(uint32_t comm)
{
	struct sim_list *p, *t;

	sim_list_for_each_safe(p, t, &all_ids) {
		struct cm_id *id = sim_container_of(p, struct cm_id, link);

		if (id->comm == comm)
			return id;
	}
	return NULL;
}

struct cm_id *cm_id_first(void)
{
	return sim_list_empty(&all_ids) ? NULL : sim_container_of(all_ids.next, struct cm_id, link);
}

struct cm_id *cm_id_next(struct cm_id *id)
{
	return id->link.next == &all_ids ? NULL : sim_container_of(id->link.next, struct cm_id, link);
}

struct cm_id *cm_id_new(struct cm_chan *ch, uint64_t uid, uint16_t ps, uint8_t qp_type)
{
	struct cm_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->ch = ch;
	id->uid = uid;
	id->ps = ps;
	id->qp_type = qp_type;
	id->handle = UINT32_MAX;
	id->comm = next_comm++;
	sim_list_add_tail(&all_ids, &id->link);
	return id;
}

int cm_create_id(struct cm_chan *ch, uint64_t uid, uint16_t ps, uint8_t qp_type,
		 uint32_t *handle)
{
	struct cm_id *id;

	switch (ps) { /* kernel ucma_get_qp_type */
	case RDMA_PS_TCP:
		qp_type = 2; /* IB_QPT_RC */
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		qp_type = 4; /* IB_QPT_UD */
		break;
	case RDMA_PS_IB:
		break;
	default:
		return EINVAL;
	}
	id = cm_id_new(ch, uid, ps, qp_type);
	if (id && (id->handle = handle_alloc(id)) == UINT32_MAX) {
		cm_id_free(id);
		id = NULL;
	}
	if (id)
		*handle = id->handle;
	return id ? 0 : ENOMEM;
}

struct cm_id *cm_id_drop_events(struct cm_id *id)
{
	struct sim_list *p, *t;

	sim_list_for_each_safe(p, t, &id->ch->events) {
		struct cm_event *e = sim_container_of(p, struct cm_event, link);
		struct cm_id *orphan = NULL;

		if (e->id != id && e->owner != id)
			continue;
		if (e->owner == id && e->id != id)
			orphan = e->id; /* an unread CONNECT_REQUEST of a listener */
		sim_list_del(&e->link);
		efd_take(id->ch->efd);
		free(e);
		if (orphan)
			return orphan;
	}
	return NULL;
}

void cm_id_free(struct cm_id *id)
{
	struct cm_id *orphan;

	while ((orphan = cm_id_drop_events(id)))
		cm_id_free(orphan);
	if (id->handle < nhandles && handles[id->handle] == id)
		handles[id->handle] = NULL;
	sim_list_del(&id->link);
	free(id);
}

void cm_migrate_id(struct cm_chan *to, struct cm_id *id, uint32_t *events_reported)
{
	struct sim_list *p, *t;

	sim_list_for_each_safe(p, t, &id->ch->events) {
		struct cm_event *e = sim_container_of(p, struct cm_event, link);

		if (e->owner != id || to == id->ch)
			continue;
		sim_list_del(&e->link);
		efd_take(id->ch->efd);
		sim_list_add_tail(&to->events, &e->link);
		efd_add(to->efd);
		e->id->ch = to; /* an unread request's new id goes along */
	}
	id->ch = to;
	*events_reported = id->events_reported;
}

static void queue(struct cm_id *id, struct cm_id *owner, uint32_t event, int32_t status,
		  const struct rdma_ucm_event_resp *param)
{
	struct cm_event *e = calloc(1, sizeof(*e));

	if (!e) {
		sim_warn("rdma_cm: event %u lost: out of memory", event);
		return;
	}
	if (param)
		e->resp = *param;
	e->id = id;
	e->owner = owner;
	e->resp.uid = owner->uid;
	e->resp.id = owner->handle;
	e->resp.event = event;
	e->resp.status = (uint32_t)status;
	sim_list_add_tail(&owner->ch->events, &e->link);
	efd_add(owner->ch->efd);
	sim_dbg("rdma_cm: id %u event %u status %d", owner->handle, event, status);
}

void cm_event_post(struct cm_id *id, uint32_t event, int32_t status,
		   const struct rdma_ucm_event_resp *param)
{
	/* The kernel drops events of a requested id until the user accepted it (uid set). */
	if (id->handle == UINT32_MAX || !id->uid)
		return;
	queue(id, id, event, status, param);
}

void cm_event_post_req(struct cm_id *listener, struct cm_id *id,
		       const struct rdma_ucm_event_resp *param)
{
	queue(id, listener, RDMA_CM_EVENT_CONNECT_REQUEST, 0, param);
}

int cm_get_event(struct cm_chan *ch, struct rdma_ucm_event_resp *r)
{
	struct cm_event *e;

	if (sim_list_empty(&ch->events))
		return EAGAIN;
	e = sim_container_of(ch->events.next, struct cm_event, link);
	if (e->resp.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* The new id gets its handle now, in the reader's file (ucma_get_event). */
		e->id->handle = handle_alloc(e->id);
		if (e->id->handle == UINT32_MAX)
			return ENOMEM;
		e->id->ch = ch;
		e->id->listener = NULL;
		e->owner->backlog++;
		e->resp.id = e->id->handle;
	}
	*r = e->resp;
	e->owner->events_reported++;
	sim_list_del(&e->link);
	efd_take(ch->efd);
	free(e);
	return 0;
}

int cm_set_option(struct cm_id *id, uint32_t level, uint32_t name,
		  const void *optval, size_t optlen)
{
	int err = ENOSYS;

	if (level == RDMA_OPTION_ID) {
		switch (name) {
		case RDMA_OPTION_ID_TOS:
			err = optlen == 1 ? 0 : EINVAL;
			if (!err)
				id->tos = *(const uint8_t *)optval;
			break;
		case RDMA_OPTION_ID_REUSEADDR:
		case RDMA_OPTION_ID_AFONLY:
			err = optlen == sizeof(int) ? 0 : EINVAL;
			/* Both may only change before the id is bound (rdma_set_reuseaddr). */
			if (!err && id->state != CM_IDLE && !(name == RDMA_OPTION_ID_REUSEADDR &&
							      id->state == CM_BOUND))
				err = EINVAL;
			if (!err && name == RDMA_OPTION_ID_REUSEADDR)
				id->reuseaddr = *(const int *)optval != 0;
			else if (!err)
				id->afonly = *(const int *)optval != 0;
			break;
		case RDMA_OPTION_ID_ACK_TIMEOUT:
			err = optlen == 1 ? 0 : EINVAL;
			break;
		}
	} else if (level == RDMA_OPTION_IB && name == RDMA_OPTION_IB_PATH) {
		/* A path record from user space (ibacm): ours are fixed, the route is known. */
		err = optlen && optlen % sizeof(struct ib_path_rec_data) == 0 ? 0 : EINVAL;
		if (!err && id->state != CM_ADDR && id->state != CM_ROUTE)
			err = EINVAL;
		if (!err) {
			id->state = CM_ROUTE;
			cm_event_post(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL);
		}
	}
	return err;
}
