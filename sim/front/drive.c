/* The application's polling drives the device. libibverbs' ibv_poll_cq() is an inline
 * call through the context's ops table; on contexts of our device that entry is wrapped,
 * so that a poll finding nothing first gives the engine a pass in the polling thread.
 * A program that busy-polls then needs no scheduler slot for the device thread: its own
 * spinning moves its sends out and answers what other processes of the fabric post to it
 * (with two processes busy-polling on two cores, the device threads would otherwise wait
 * for a scheduler tick, milliseconds, at every hop). Extended CQs: drive_cq_ex.c.
 * Programs that poll CQE memory themselves (fastverbs, mlx5dv) never come here and keep
 * the device thread. In step mode only fvsim_step() moves the device, so the entries stay
 * the provider's own: a measured poll (bench/poll.c) then runs libmlx5 alone. */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>

#include <infiniband/verbs.h>

#include "../engine/thread.h"
#include "drive.h"
#include "fdtab.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*poll_fn)(struct ibv_cq *, int, struct ibv_wc *);

/* The provider's poll_cq: the same function for every context of our device (libmlx5
 * picks it by CQE version, which the device fixes). */
static poll_fn provider_poll;

struct poll_args {
	struct ibv_cq *cq;
	int n;
	struct ibv_wc *wc;
};

static int poll_once(void *arg)
{
	struct poll_args *a = arg;

	return provider_poll(a->cq, a->n, a->wc);
}

static int driven_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct poll_args a = { cq, n, wc };

	return sim_thread_poll(poll_once, &a);
}

typedef struct ibv_context *(*open_fn)(struct ibv_device *);
typedef struct ibv_context *(*import_fn)(int);

/* libibverbs' own entry name@version. A program linked with it finds it next in line; one
 * that loaded libibverbs privately (Python's pyverbs extension: RTLD_LOCAL) only through
 * that library's handle. */
static void *libibverbs_sym(const char *name, const char *version)
{
	void *f = dlsym(RTLD_NEXT, name);
	void *lib;

	if (f)
		return f;
	lib = dlopen("libibverbs.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!lib)
		return NULL;
	f = dlvsym(lib, name, version);
	dlclose(lib);
	return f;
}

/* A context just opened or imported: if it is our device's, its polls drive the device. */
static struct ibv_context *drive_ctx(struct ibv_context *ctx)
{
	poll_fn p;

	if (!ctx || !sim_fd_ctx(ctx->cmd_fd) || !sim_drive_polls())
		return ctx;
	sim_drive_cq_ex_ctx(ctx);
	p = ctx->ops.poll_cq;
	if (p != driven_poll) {
		poll_fn none = NULL;

		__atomic_compare_exchange_n(&provider_poll, &none, p, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&provider_poll, __ATOMIC_ACQUIRE) == p)
			ctx->ops.poll_cq = driven_poll;
	}
	return ctx;
}

EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	static open_fn real;

	if (!__atomic_load_n(&real, __ATOMIC_ACQUIRE))
		__atomic_store_n(&real, (open_fn)libibverbs_sym("ibv_open_device", "IBVERBS_1.1"),
				 __ATOMIC_RELEASE);
	if (!real) {
		errno = ENOSYS;
		return NULL;
	}
	return drive_ctx(real(device));
}

/* A context imported from a dup()'d command fd (ibv_import_device) is driven the same. */
EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	static import_fn real;

	if (!__atomic_load_n(&real, __ATOMIC_ACQUIRE))
		__atomic_store_n(&real,
				 (import_fn)libibverbs_sym("ibv_import_device", "IBVERBS_1.10"),
				 __ATOMIC_RELEASE);
	if (!real) {
		errno = ENOSYS;
		return NULL;
	}
	return drive_ctx(real(cmd_fd));
}
