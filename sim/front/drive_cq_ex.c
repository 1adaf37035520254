/* Extended CQs are polled through their own start_poll entry, not ibv_poll_cq: the
 * entry of each CQ created on our device (ibv_create_cq_ex through the context's ops,
 * mlx5dv_create_cq) is wrapped like poll_cq in drive.c, so that finding nothing drives
 * the device. libmlx5 picks start_poll per CQ (locking, timestamps, stalling), so the
 * original is kept per CQ, in a table read without a lock on the polling path.
 * A program that takes a CQ over (mlx5dv_init_obj) and reads its CQEs from memory, as
 * fastverbs does, never calls into the library while it polls; in FVSIM_MODE=poll,
 * where no device thread runs, such a program gets one, or it would wait forever. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "../engine/thread.h"
#include "../model/world.h"
#include "drive.h"
#include "fdtab.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*start_fn)(struct ibv_cq_ex *, struct ibv_poll_cq_attr *);

#define SLOTS 4096 /* open addressing; a CQ that finds no slot stays undriven */

static struct {
	struct ibv_cq_ex *cq;
	start_fn start;
} cq_slot[SLOTS];
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned cq_slot_hash(const void *p)
{
	return (unsigned)(((uintptr_t)p >> 6) * 2654435761u) % SLOTS;
}

static start_fn original(struct ibv_cq_ex *cq)
{
	for (unsigned i = cq_slot_hash(cq), n = 0; n < SLOTS; i = (i + 1) % SLOTS, n++) {
		struct ibv_cq_ex *c = __atomic_load_n(&cq_slot[i].cq, __ATOMIC_ACQUIRE);

		if (c == cq)
			return __atomic_load_n(&cq_slot[i].start, __ATOMIC_ACQUIRE);
		if (!c)
			break;
	}
	return NULL;
}

struct start_args {
	struct ibv_cq_ex *cq;
	struct ibv_poll_cq_attr *attr;
	start_fn start;
};

static int start_once(void *arg)
{
	struct start_args *a = arg;
	int err = a->start(a->cq, a->attr);

	/* ENOENT: empty, and libmlx5 holds no lock then. */
	return !err ? 1 : err == ENOENT ? 0 : -err;
}

static int driven_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	struct start_args a = { cq, attr, original(cq) };
	int r;

	if (!a.start)
		return EINVAL; /* cannot happen: only CQs in the table get this entry */
	r = sim_thread_poll(start_once, &a);
	return r > 0 ? 0 : r == 0 ? ENOENT : -r;
}

/* A CQ (an address may come back after a destroy: its slot is reused). */
static void wrap_cq_ex(struct ibv_cq_ex *cq)
{
	start_fn s = cq->start_poll;
	unsigned i = cq_slot_hash(cq), n = 0;

	if (!s || s == driven_start_poll)
		return;
	pthread_mutex_lock(&slot_lock);
	for (; n < SLOTS; i = (i + 1) % SLOTS, n++)
		if (!cq_slot[i].cq || cq_slot[i].cq == cq)
			break;
	if (n < SLOTS) {
		__atomic_store_n(&cq_slot[i].start, s, __ATOMIC_RELEASE);
		__atomic_store_n(&cq_slot[i].cq, cq, __ATOMIC_RELEASE);
		cq->start_poll = driven_start_poll;
	}
	pthread_mutex_unlock(&slot_lock);
}

typedef struct ibv_cq_ex *(*create_ex_fn)(struct ibv_context *, struct ibv_cq_init_attr_ex *);
static create_ex_fn provider_create_ex;

static struct ibv_cq_ex *driven_create_cq_ex(struct ibv_context *ctx,
					     struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *cq = provider_create_ex(ctx, attr);

	if (cq)
		wrap_cq_ex(cq);
	return cq;
}

void sim_drive_cq_ex_ctx(struct ibv_context *ctx)
{
	struct verbs_context *v = verbs_get_ctx(ctx);
	create_ex_fn f, none = NULL;

	if (!v || !(f = v->create_cq_ex) || f == driven_create_cq_ex)
		return;
	__atomic_compare_exchange_n(&provider_create_ex, &none, f, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&provider_create_ex, __ATOMIC_ACQUIRE) == f)
		v->create_cq_ex = driven_create_cq_ex;
}

/* libmlx5's own entries, found next in line or, for a privately loaded libmlx5, through
 * its handle. */
static void *mlx5_sym(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name), *lib;

	if (f)
		return f;
	if (!(lib = dlopen("libmlx5.so.1", RTLD_LAZY | RTLD_NOLOAD)))
		return NULL;
	f = dlsym(lib, name);
	dlclose(lib);
	return f;
}

typedef struct ibv_cq_ex *(*dv_create_fn)(struct ibv_context *, struct ibv_cq_init_attr_ex *,
					  struct mlx5dv_cq_init_attr *);

EXPORT struct ibv_cq_ex *mlx5dv_create_cq(struct ibv_context *ctx,
					  struct ibv_cq_init_attr_ex *attr,
					  struct mlx5dv_cq_init_attr *dv)
{
	dv_create_fn real = (dv_create_fn)mlx5_sym("mlx5dv_create_cq");
	struct ibv_cq_ex *cq;

	if (!real) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = real(ctx, attr, dv);
	if (cq && sim_fd_ctx(ctx->cmd_fd) && sim_drive_polls())
		wrap_cq_ex(cq);
	return cq;
}

typedef int (*init_obj_fn)(struct mlx5dv_obj *, uint64_t);

/* Exported as mlx5dv_init_obj, which it wraps; its own name keeps the two apart in the source. */
EXPORT int sim_init_obj(struct mlx5dv_obj *obj, uint64_t type) __asm__("mlx5dv_init_obj");
EXPORT int sim_init_obj(struct mlx5dv_obj *obj, uint64_t type)
{
	init_obj_fn real = (init_obj_fn)mlx5_sym("mlx5dv_init_obj");
	int err;

	if (!real)
		return EOPNOTSUPP;
	err = real(obj, type);
	if (!err && (type & MLX5DV_OBJ_CQ) && sim_fd_ctx(obj->cq.in->context->cmd_fd))
		sim_thread_for_memory_pollers();
	return err;
}
