#include "fdtab.h"

#include <errno.h>
#include <stdint.h>

/* Context pointers are at least 8-byte aligned: the low bits carry the kind. */
static uintptr_t table[SIM_FD_MAX];

struct sim_ctx *sim_fd_lookup(int fd, int *kind)
{
	uintptr_t v;

	*kind = SIM_FD_CMD;
	if (fd < 0 || fd >= SIM_FD_MAX)
		return 0;
	v = __atomic_load_n(&table[fd], __ATOMIC_ACQUIRE);
	*kind = (int)(v & 3);
	return (struct sim_ctx *)(v & ~(uintptr_t)3);
}

struct sim_ctx *sim_fd_ctx(int fd)
{
	int kind;
	struct sim_ctx *ctx = sim_fd_lookup(fd, &kind);

	return kind == SIM_FD_CMD ? ctx : 0;
}

int sim_fd_set(int fd, struct sim_ctx *ctx, int kind)
{
	if (fd < 0 || fd >= SIM_FD_MAX)
		return EMFILE;
	__atomic_store_n(&table[fd], (uintptr_t)ctx | (uintptr_t)kind, __ATOMIC_RELEASE);
	return 0;
}

void sim_fd_clear(int fd)
{
	if (fd >= 0 && fd < SIM_FD_MAX)
		__atomic_store_n(&table[fd], (uintptr_t)0, __ATOMIC_RELEASE);
}

void sim_fd_clear_ctx(struct sim_ctx *ctx)
{
	for (int fd = 0; fd < SIM_FD_MAX; fd++)
		if ((__atomic_load_n(&table[fd], __ATOMIC_RELAXED) & ~(uintptr_t)3) == (uintptr_t)ctx)
			sim_fd_clear(fd);
}

int sim_fd_any(const struct sim_ctx *ctx, int kind)
{
	uintptr_t want = (uintptr_t)ctx | (uintptr_t)kind;

	for (int fd = 0; fd < SIM_FD_MAX; fd++)
		if (__atomic_load_n(&table[fd], __ATOMIC_RELAXED) == want)
			return 1;
	return 0;
}
