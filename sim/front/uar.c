/* mlx5 mmap offsets: page index = command << 8 | UAR index (mlx5-abi.h). The command fd is
 * a memfd whose pages are the device's register pages, so whatever path a program's mmap()
 * takes to the kernel, it gets the same memory the device sees: UCX, for one, patches the
 * first mmap() it finds (ours, as we are preloaded) to jump straight to the system call.
 * BlueFlame and doorbell stores land in these pages and are never read back, except the
 * CQ arm register of UAR 0, which the device reads through views of its own (one per way
 * libmlx5 may map UAR 0: regular, write-combining, non-cached). The clock-info page is
 * written once at open (clock.c). */
#include "uar.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rdma/mlx5-abi.h>

#include "../common/sys.h"
#include "../model/obj.h"
#include "../model/world.h"
#include "clock.h"
#include "ioctl.h"

/* Commands 0..9 (9: dynamic UARs), UAR indexes 0..255: 2560 pages, sparse until
 * written. */
#define UAR_CMDS (SIM_UAR_DYN_CMD + 1)
#define UAR_INDEXES 256

static const unsigned view_cmd[SIM_UAR_VIEWS] = { MLX5_IB_MMAP_REGULAR_PAGE,
						  MLX5_IB_MMAP_WC_PAGE,
						  MLX5_IB_MMAP_NC_PAGE };

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

int sim_uar_fd_open(int flags)
{
	size_t page = page_size();
	int fd = (int)syscall(SYS_memfd_create, "fvsim-uverbs",
			      (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
	int err;

	if (fd < 0)
		return -1;
	if (sim_sys_ftruncate(fd, (off_t)(UAR_CMDS * UAR_INDEXES * page)) ||
	    sim_clock_info_fill(fd, (off_t)((MLX5_IB_MMAP_CLOCK_INFO << 8 | MLX5_IB_CLOCK_INFO_V1) * page))) {
		err = errno;
		sim_sys_close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

int sim_uar_views_map(struct sim_ctx *ctx)
{
	size_t page = page_size();

	for (int i = 0; i < SIM_UAR_VIEWS; i++) {
		void *p = sim_sys_mmap(NULL, page, PROT_READ, MAP_SHARED, ctx->cmd_fd,
				       (off_t)((size_t)view_cmd[i] << 8) * (off_t)page);

		if (p == MAP_FAILED) {
			int err = errno;

			sim_uar_views_drop(ctx);
			return err;
		}
		ctx->uar_view[i] = p;
	}
	return 0;
}

void sim_uar_views_drop(struct sim_ctx *ctx)
{
	for (int i = 0; i < SIM_UAR_VIEWS; i++) {
		if (ctx->uar_view[i])
			sim_sys_munmap(ctx->uar_view[i], page_size());
		ctx->uar_view[i] = NULL;
	}
}

off_t sim_uar_dyn_offset(unsigned index)
{
	return (off_t)(SIM_UAR_DYN_CMD << 8 | index) * (off_t)page_size();
}

static bool dyn_bit(const struct sim_ctx *ctx, unsigned index)
{
	return ctx->uar_dyn[index / 64] >> (index % 64) & 1;
}

struct sim_uar_dyn *sim_uar_dyn_new(struct sim_ctx *ctx)
{
	struct sim_uar_dyn *u;
	unsigned index = 0;

	while (index < SIM_UAR_DYN_MAX && dyn_bit(ctx, index))
		index++;
	if (index == SIM_UAR_DYN_MAX || !(u = calloc(1, sizeof(*u))))
		return NULL;
	u->ctx = ctx;
	u->index = index;
	ctx->uar_dyn[index / 64] |= 1ull << (index % 64);
	return u;
}

void sim_uar_dyn_free(struct sim_uar_dyn *u)
{
	u->ctx->uar_dyn[u->index / 64] &= ~(1ull << (u->index % 64));
	free(u);
}

static bool dyn_allocated(struct sim_ctx *ctx, unsigned index)
{
	bool yes;

	sim_lock();
	yes = index < SIM_UAR_DYN_MAX && dyn_bit(ctx, index);
	sim_unlock();
	return yes;
}

void *sim_uar_map(struct sim_ctx *ctx, int fd, void *addr, size_t len, int prot, int flags,
		  off_t off)
{
	size_t page = page_size();
	unsigned long pgoff = (unsigned long)off / page;
	unsigned cmd = (pgoff >> 8) & 0xff, index = (pgoff & 0xff) | ((pgoff >> 16) << 8);

	if ((size_t)off % page || !len) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (cmd == MLX5_IB_MMAP_CLOCK_INFO) {
		if (len != page) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		if (prot & (PROT_WRITE | PROT_EXEC)) {
			errno = EPERM;
			return MAP_FAILED;
		}
		if (index != MLX5_IB_CLOCK_INFO_V1) {
			errno = EOPNOTSUPP;
			return MAP_FAILED;
		}
	} else if (cmd == SIM_UAR_DYN_CMD) {
		/* An entry UAR_OBJ_ALLOC gave out and nobody destroyed yet. */
		if (len != page || index >= UAR_INDEXES || !dyn_allocated(ctx, index)) {
			errno = EINVAL;
			return MAP_FAILED;
		}
	} else if ((cmd != MLX5_IB_MMAP_REGULAR_PAGE && cmd != MLX5_IB_MMAP_WC_PAGE &&
		    cmd != MLX5_IB_MMAP_NC_PAGE && cmd != MLX5_IB_MMAP_ALLOC_WC) ||
		   index >= UAR_INDEXES || len != page) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	/* Register pages are shared with the device whatever the caller asked. Not mmap():
	 * that would be our own interposer. */
	return sim_sys_mmap(addr, len, prot, (flags & ~MAP_PRIVATE) | MAP_SHARED, fd, off);
}
