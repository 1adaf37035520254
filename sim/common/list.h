/* Intrusive circular doubly-linked list: objects sit on several lists (per context, per
 * device, engine scan) without extra allocation. */
#ifndef FVSIM_LIST_H
#define FVSIM_LIST_H

#include <stddef.h>

struct sim_list {
	struct sim_list *next, *prev;
};

static inline void sim_list_init(struct sim_list *h)
{
	h->next = h->prev = h;
}

static inline int sim_list_empty(const struct sim_list *h)
{
	return h->next == h;
}

static inline void sim_list_add_tail(struct sim_list *h, struct sim_list *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void sim_list_del(struct sim_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

#define sim_container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

#define sim_list_for_each_safe(pos, tmp, head) \
	for (pos = (head)->next, tmp = pos->next; pos != (head); pos = tmp, tmp = pos->next)

#endif
