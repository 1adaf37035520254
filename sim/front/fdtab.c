#include "fdtab.h"

#include <errno.h>

static struct sim_ctx *table[SIM_FD_MAX];

struct sim_ctx *sim_fd_ctx(int fd)
{
	if (fd < 0 || fd >= SIM_FD_MAX)
		return 0;
	return __atomic_load_n(&table[fd], __ATOMIC_ACQUIRE);
}

int sim_fd_set(int fd, struct sim_ctx *ctx)
{
	if (fd < 0 || fd >= SIM_FD_MAX)
		return EMFILE;
	__atomic_store_n(&table[fd], ctx, __ATOMIC_RELEASE);
	return 0;
}

void sim_fd_clear(int fd)
{
	if (fd >= 0 && fd < SIM_FD_MAX)
		__atomic_store_n(&table[fd], (struct sim_ctx *)0, __ATOMIC_RELEASE);
}
