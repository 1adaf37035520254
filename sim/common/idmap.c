#include "idmap.h"

#include <errno.h>
#include <stdlib.h>

/* Key 0 marks an empty slot and key ~0 a deleted one, so neither can be stored. */
#define EMPTY 0u
#define TOMB 0xffffffffu

static size_t slot_of(uint32_t key, size_t cap)
{
	return (size_t)((key * 2654435761u) & (cap - 1));
}

static int grow(struct sim_idmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	uint32_t *nk;
	void **nv;

	while (m->live * 2 >= ncap)
		ncap *= 2;
	nk = calloc(ncap, sizeof(*nk));
	nv = calloc(ncap, sizeof(*nv));
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == EMPTY || m->keys[i] == TOMB)
			continue;
		size_t s = slot_of(m->keys[i], ncap);
		while (nk[s] != EMPTY)
			s = (s + 1) & (ncap - 1);
		nk[s] = m->keys[i];
		nv[s] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	m->used = m->live;
	return 0;
}

int sim_idmap_put(struct sim_idmap *m, uint32_t key, void *val)
{
	size_t s;

	if (key == EMPTY || key == TOMB)
		return EINVAL;
	if ((m->used + 1) * 4 >= m->cap * 3 && grow(m))
		return ENOMEM;
	s = slot_of(key, m->cap);
	while (m->keys[s] != EMPTY && m->keys[s] != TOMB && m->keys[s] != key)
		s = (s + 1) & (m->cap - 1);
	if (m->keys[s] == EMPTY)
		m->used++;
	if (m->keys[s] != key)
		m->live++;
	m->keys[s] = key;
	m->vals[s] = val;
	return 0;
}

void *sim_idmap_get(const struct sim_idmap *m, uint32_t key)
{
	size_t s;

	if (!m->cap || key == EMPTY || key == TOMB)
		return NULL;
	s = slot_of(key, m->cap);
	while (m->keys[s] != EMPTY) {
		if (m->keys[s] == key)
			return m->vals[s];
		s = (s + 1) & (m->cap - 1);
	}
	return NULL;
}

void sim_idmap_del(struct sim_idmap *m, uint32_t key)
{
	size_t s;

	if (!m->cap || key == EMPTY || key == TOMB)
		return;
	s = slot_of(key, m->cap);
	while (m->keys[s] != EMPTY) {
		if (m->keys[s] == key) {
			m->keys[s] = TOMB;
			m->vals[s] = NULL;
			m->live--;
			return;
		}
		s = (s + 1) & (m->cap - 1);
	}
}

void sim_idmap_free(struct sim_idmap *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->used = m->live = 0;
}
