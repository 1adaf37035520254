/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Process-wide QPN -> struct fv_qp table, so a CQ shared by several QPs can find the
 * QP a CQE belongs to (the CQE names it by number). Two levels, 4096 QPs a page, like
 * libmlx5's own table. It is one weak symbol, shared by every object file that includes
 * fastverbs. Writers (QP init/cleanup) take a mutex; CQ polling reads without one.
 */
#ifndef FASTVERBS_REGISTRY_H
#define FASTVERBS_REGISTRY_H

#include "portable.h"
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

FV_EXTERN_C_BEGIN

struct fv_qp;

#define FV_QPN_PAGE_SHIFT 12
#define FV_QPN_PAGES (1u << (24 - FV_QPN_PAGE_SHIFT))

struct fv_registry {
	pthread_mutex_t lock;
	uint32_t gen;		/* changes with every fv_registry_set: a QP pointer a CQ keeps
				 * (cq.h) is good while gen is what it was */
	struct fv_qp **page[FV_QPN_PAGES];
};

__attribute__((weak)) struct fv_registry fv_registry = { PTHREAD_MUTEX_INITIALIZER, 0, FV_ZERO_INIT };

/* The fv_qp registered for qpn, or NULL. */
static inline struct fv_qp *fv_registry_qp(uint32_t qpn)
{
	struct fv_qp **page = fv_registry.page[(qpn & 0xffffff) >> FV_QPN_PAGE_SHIFT];

	return page ? page[qpn & ((1u << FV_QPN_PAGE_SHIFT) - 1)] : NULL;
}

/* Make qp findable by qpn. Returns 0 or ENOMEM. */
static inline int fv_registry_set(uint32_t qpn, struct fv_qp *qp)
{
	struct fv_qp ***slot = &fv_registry.page[(qpn & 0xffffff) >> FV_QPN_PAGE_SHIFT];
	int err = 0;

	pthread_mutex_lock(&fv_registry.lock);
	if (!*slot)
		*slot = (struct fv_qp **)calloc(1u << FV_QPN_PAGE_SHIFT, sizeof(struct fv_qp *));
	if (*slot) {
		(*slot)[qpn & ((1u << FV_QPN_PAGE_SHIFT) - 1)] = qp;
		__atomic_store_n(&fv_registry.gen, fv_registry.gen + 2, __ATOMIC_RELEASE);
	} else {
		err = ENOMEM;
	}
	pthread_mutex_unlock(&fv_registry.lock);
	return err;
}

FV_EXTERN_C_END

#endif /* FASTVERBS_REGISTRY_H */
