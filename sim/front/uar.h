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
/* mmap() on a command fd, checked as the kernel checks it. */
void *sim_uar_map(int fd, void *addr, size_t len, int prot, int flags, off_t off);

#endif
