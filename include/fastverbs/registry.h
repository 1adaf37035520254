/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The process-wide tables: QPN -> struct fv_qp, so a CQ shared by several QPs can find the
 * QP a CQE belongs to (the CQE names it by number; two levels, 4096 QPs a page, like
 * libmlx5's own table), and the fv_srqs set up (recv.h). Writers (QP and SRQ init/cleanup)
 * take the mutex; CQ polling reads without it, every pointer with an atomic load.
 *
 * One set of tables per process, however fastverbs got into it: every object (program or
 * shared library) that includes fastverbs finds it through its own anchor, a hidden pointer,
 * and carries an ELF note that says where that anchor is. The first time an object needs the
 * tables it walks the loaded objects' notes (dl_iterate_phdr) and takes the tables another
 * object already has, or makes them (on the heap: they outlive any object). No symbol is
 * looked up, so neither -fvisibility=hidden, nor a version script, nor dlopen(RTLD_LOCAL)
 * splits them. glibc holds its loader lock, recursively, for the whole walk, and this one
 * happens inside another walk's callback: two objects looking at once are serialized.
 *
 *   note (PT_NOTE):  namesz 10 | descsz 8 | type FV__NOTE_TYPE | "fastverbs\0" + pad |
 *                    int64: the anchor's address minus this field's
 */
#ifndef FASTVERBS_REGISTRY_H
#define FASTVERBS_REGISTRY_H

#include "portable.h"
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

FV__EXTERN_C_BEGIN

struct fv_qp;
struct fv_srq;

#define FV__QPN_PAGE_SHIFT 12
#define FV__QPN_PAGES (1u << (24 - FV__QPN_PAGE_SHIFT))
#define FV__SRQ_MAX 256
#define FV__BF_MAX 1024

/*
 * A BlueFlame register as every fv_qp of the process on it sees it: libmlx5 may give one
 * register to several QPs, and the half a doorbell writes alternates per register, not per
 * QP. The lock serialises the doorbells of QPs on it that different threads post (sq.h).
 */
struct fv__bf {
	uintptr_t cur;		/* the half the next doorbell writes; 0 while a doorbell holds the
				 * register (its lock, sq.h fv__bf_take) */
	uint32_t users;		/* fv_qps on it (registry mutex) */
	uintptr_t reg;		/* the register: its first half */
};

struct fv_registry {
	pthread_mutex_t lock;	/* writers of all of it */
	uint32_t gen;		/* changes with every fv_registry_set: a QP pointer a CQ keeps
				 * (cq.h) is good while gen is what it was */
	struct fv_qp **page[FV__QPN_PAGES];
	struct fv_srq *srq[FV__SRQ_MAX];	/* the fv_srqs set up, searched on slow paths only */
	struct fv__bf *bf[FV__BF_MAX];	/* the BlueFlame registers in use, by QP init and cleanup */
};

/* This object's anchor: the process's tables once it has looked for them. */
__attribute__((weak, visibility("hidden"), used)) struct fv_registry *fv_registry_anchor;

/* The tables of last resort: this object's own, if the heap cannot hold shared ones. */
__attribute__((weak, visibility("hidden"))) struct fv_registry fv_registry_own =
	{ PTHREAD_MUTEX_INITIALIZER, 0, FV__ZERO_INIT, FV__ZERO_INIT, FV__ZERO_INIT };

#if defined(__ELF__) && defined(__LP64__)
#include <elf.h>

/*
 * The note's type carries the tables' layout version (low 16 bits): objects built from headers
 * whose struct fv_registry or struct fv__bf differ (2: the register's half is its lock word)
 * never take each other's tables, so none reads the other's fields at the wrong offsets.
 */
#define FV__NOTE_TYPE 0x66760002
#define FV__STR(x) #x
#define FV__XSTR(x) FV__STR(x)

/* One note per object: the group makes the linker keep one of the copies every unit emits. */
__asm__(".pushsection .note.fastverbs,\"aG\",@note,.note.fastverbs,comdat\n"
	"\t.balign 4\n\t.long 10\n\t.long 8\n\t.long " FV__XSTR(FV__NOTE_TYPE) "\n\t.asciz \"fastverbs\"\n"
	"\t.balign 4\n\t.quad fv_registry_anchor - .\n\t.popsection\n");

/* The leading members of glibc's struct dl_phdr_info, which <link.h> shows only to _GNU_SOURCE. */
struct fv__dl_info {
	uintptr_t addr;
	const char *name;
	const Elf64_Phdr *phdr;
	uint16_t phnum;
};

extern int fv__dl_iterate_phdr(int (*cb)(struct fv__dl_info *, size_t, void *), void *data)
	__asm__("dl_iterate_phdr");

/* dl_iterate_phdr callback: the tables the anchor of an object's note holds, into *data. */
static inline int fv__registry_scan(struct fv__dl_info *info, size_t size, void *data)
{
	struct fv_registry **found = (struct fv_registry **)data;

	(void)size;
	for (unsigned i = 0; i < info->phnum && !*found; i++) {
		const Elf64_Phdr *ph = &info->phdr[i];
		uintptr_t p = info->addr + ph->p_vaddr, end = p + ph->p_memsz;
		uintptr_t align = ph->p_align == 8 ? 8 : 4;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(Elf64_Nhdr) <= end) {
			const Elf64_Nhdr *n = (const Elf64_Nhdr *)p;
			uintptr_t name = p + sizeof(*n);
			uintptr_t desc = name + ((n->n_namesz + align - 1) & ~(align - 1));

			p = desc + ((n->n_descsz + align - 1) & ~(align - 1));
			if (p > end)
				break;
			if (n->n_type == (uint32_t)FV__NOTE_TYPE && n->n_namesz == 10 && n->n_descsz == 8 &&
			    !memcmp((const void *)name, "fastverbs", 10)) {
				int64_t off;

				memcpy(&off, (const void *)desc, sizeof(off));
				*found = __atomic_load_n((struct fv_registry **)(desc + (uintptr_t)off),
							 __ATOMIC_ACQUIRE);
				break;
			}
		}
	}
	return 0;
}

/*
 * dl_iterate_phdr callback, for the first object only: under the loader's lock, the tables
 * some object has, or new ones; this object's anchor then holds them.
 */
static inline int fv__registry_attach_locked(struct fv__dl_info *info, size_t size, void *data)
{
	struct fv_registry *r = __atomic_load_n(&fv_registry_anchor, __ATOMIC_ACQUIRE);

	(void)info, (void)size;
	if (!r)		/* not attached by another thread of this object meanwhile */
		fv__dl_iterate_phdr(fv__registry_scan, &r);
	if (!r && (r = (struct fv_registry *)calloc(1, sizeof(*r))) != NULL &&
	    pthread_mutex_init(&r->lock, NULL)) {
		free(r);
		r = NULL;
	}
	if (r)
		__atomic_store_n(&fv_registry_anchor, r, __ATOMIC_RELEASE);
	*(struct fv_registry **)data = r;
	return 1;
}

static FV__COLD struct fv_registry *fv__registry_attach(void)
{
	struct fv_registry *r = NULL;

	fv__dl_iterate_phdr(fv__registry_attach_locked, &r);
	if (!r) {	/* out of memory: this object's own tables, shared with no other */
		r = &fv_registry_own;
		__atomic_store_n(&fv_registry_anchor, r, __ATOMIC_RELEASE);
	}
	return r;
}
#else
/* Not ELF: this object's own tables (one per process when fastverbs is in one object). */
static inline struct fv_registry *fv__registry_attach(void)
{
	__atomic_store_n(&fv_registry_anchor, &fv_registry_own, __ATOMIC_RELEASE);
	return &fv_registry_own;
}
#endif

/* The process's tables (found on first use, from then on one load). */
static FV__ALWAYS_INLINE struct fv_registry *fv_registry_get(void)
{
	struct fv_registry *r = __atomic_load_n(&fv_registry_anchor, __ATOMIC_ACQUIRE);

	return __builtin_expect(r != NULL, 1) ? r : fv__registry_attach();
}

/* The fv_qp registered in r for qpn, or NULL. */
static inline struct fv_qp *fv_registry_qp_in(struct fv_registry *r, uint32_t qpn)
{
	struct fv_qp **page = __atomic_load_n(&r->page[(qpn & 0xffffff) >> FV__QPN_PAGE_SHIFT],
					      __ATOMIC_ACQUIRE);

	return page ? __atomic_load_n(&page[qpn & ((1u << FV__QPN_PAGE_SHIFT) - 1)], __ATOMIC_ACQUIRE)
		    : NULL;
}

/* The fv_qp registered for qpn, or NULL. */
static inline struct fv_qp *fv_registry_qp(uint32_t qpn)
{
	return fv_registry_qp_in(fv_registry_get(), qpn);
}

/* Make qp findable by qpn (NULL: no longer). Returns 0 or ENOMEM. */
static inline int fv_registry_set(uint32_t qpn, struct fv_qp *qp)
{
	struct fv_registry *r = fv_registry_get();
	struct fv_qp ***slot = &r->page[(qpn & 0xffffff) >> FV__QPN_PAGE_SHIFT];
	struct fv_qp **page;
	int err = 0;

	pthread_mutex_lock(&r->lock);
	page = *slot;
	if (!page && (page = (struct fv_qp **)calloc(1u << FV__QPN_PAGE_SHIFT, sizeof(*page))) != NULL)
		__atomic_store_n(slot, page, __ATOMIC_RELEASE);	/* zeroed before it is seen */
	if (page) {
		__atomic_store_n(&page[qpn & ((1u << FV__QPN_PAGE_SHIFT) - 1)], qp, __ATOMIC_RELEASE);
		__atomic_store_n(&r->gen, r->gen + 2, __ATOMIC_RELEASE);
	} else {
		err = ENOMEM;
	}
	pthread_mutex_unlock(&r->lock);
	return err;
}

/*
 * What a CQ's run cache keeps of a QP (cq_init.h) may be stale: change gen, as a QP set up or
 * cleaned up does, so that every CQ empties it on its next poll.
 */
static inline void fv__registry_touch(void)
{
	struct fv_registry *r = fv_registry_get();

	pthread_mutex_lock(&r->lock);
	__atomic_store_n(&r->gen, r->gen + 2, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&r->lock);
}

/*
 * In the process's SRQ table, replace the entry old by new_ (NULL: a free entry). Returns 0
 * or ENOMEM (no such entry: with old NULL, the table is full).
 */
static inline int fv__registry_srq_swap(struct fv_srq *old, struct fv_srq *new_)
{
	struct fv_registry *r = fv_registry_get();
	int err = ENOMEM;

	pthread_mutex_lock(&r->lock);
	for (int i = 0; i < FV__SRQ_MAX; i++)
		if (r->srq[i] == old) {
			__atomic_store_n(&r->srq[i], new_, __ATOMIC_RELEASE);
			err = 0;
			break;
		}
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* Entry i (< FV__SRQ_MAX) of r's SRQ table, or NULL: read without the lock (recv.h searches it). */
static inline struct fv_srq *fv__registry_srq_at(struct fv_registry *r, unsigned i)
{
	return __atomic_load_n(&r->srq[i], __ATOMIC_ACQUIRE);
}

/*
 * The process's record of the BlueFlame register at reg, one more QP on it: the one another
 * QP took, or a new one starting at the register's first half. NULL: no memory, or FV__BF_MAX
 * registers in use.
 */
static inline struct fv__bf *fv__registry_bf_get(uintptr_t reg)
{
	struct fv_registry *r = fv_registry_get();
	struct fv__bf *b = NULL, **free_slot = NULL;

	pthread_mutex_lock(&r->lock);
	for (int i = 0; i < FV__BF_MAX && !b; i++) {
		if (r->bf[i] && r->bf[i]->reg == reg)
			b = r->bf[i];
		else if (!r->bf[i] && !free_slot)
			free_slot = &r->bf[i];
	}
	if (!b && free_slot && (b = (struct fv__bf *)aligned_alloc(64, 64)) != NULL) {
		memset(b, 0, 64);	/* a cache line of its own: threads of other QPs write it */
		b->cur = b->reg = reg;
		*free_slot = b;
	}
	if (b)
		b->users++;
	pthread_mutex_unlock(&r->lock);
	return b;
}

/* One QP less on the register of b; the last one frees the record. */
static inline void fv__registry_bf_put(struct fv__bf *b)
{
	struct fv_registry *r = fv_registry_get();

	pthread_mutex_lock(&r->lock);
	if (!--b->users) {
		for (int i = 0; i < FV__BF_MAX; i++)
			if (r->bf[i] == b)
				r->bf[i] = NULL;
		free(b);
	}
	pthread_mutex_unlock(&r->lock);
}

FV__EXTERN_C_END

#endif /* FASTVERBS_REGISTRY_H */
