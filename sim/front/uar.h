/* The memory behind a context's mmap() offsets (UAR pages, the clock-info page): a memfd
 * that is also the context's command fd. */
#ifndef FVSIM_UAR_H
#define FVSIM_UAR_H

#include <stddef.h>
#include <sys/types.h>

struct sim_ctx;

/* A new command fd backed by memory for every offset libmlx5 maps; O_CLOEXEC is the only
 * flag honoured. -1 with errno on failure. */
int sim_uar_fd_open(int flags);
/* Maps the device's own views of UAR 0 (where the CQ arm register is) into ctx: 0 or an
 * errno. sim_uar_views_drop() undoes it. Called with the device lock held. */
int sim_uar_views_map(struct sim_ctx *ctx);
void sim_uar_views_drop(struct sim_ctx *ctx);
/* mmap() on a command fd of ctx, checked as the kernel checks it. */
void *sim_uar_map(struct sim_ctx *ctx, int fd, void *addr, size_t len, int prot, int flags,
		  off_t off);

/* Dynamically allocated UAR pages (UAR_OBJ_ALLOC, ioctl_uar.c): at most SIM_UAR_DYN_MAX
 * per context, at mmap command 9 (the first the kernel gives such entries), index 0 up;
 * their hardware UAR numbers start past the static pages. */
#define SIM_UAR_DYN_CMD 9
#define SIM_UAR_DYN_FIRST_PAGE 16
/* The mmap() offset of dynamic UAR index. */
off_t sim_uar_dyn_offset(unsigned index);

/* One dynamic UAR page of a context, the object behind its handle. */
struct sim_uar_dyn {
	struct sim_ctx *ctx;
	unsigned index;
};

/* Takes the lowest free index of ctx; NULL when all are given out (the kernel's
 * mmap-offset range is full) or memory is short. sim_uar_dyn_free() gives the index back;
 * from then on its page cannot be mapped. Both with the device lock held. */
struct sim_uar_dyn *sim_uar_dyn_new(struct sim_ctx *ctx);
void sim_uar_dyn_free(struct sim_uar_dyn *u);

#endif
