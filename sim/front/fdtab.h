/* Which file descriptors are our fake /dev/infiniband/uverbsN files. Looked up on every
 * write(), ioctl(), mmap() and close() of the process, so it is a flat array read with
 * one atomic load. */
#ifndef FVSIM_FDTAB_H
#define FVSIM_FDTAB_H

struct sim_ctx;

#define SIM_FD_MAX 16384

struct sim_ctx *sim_fd_ctx(int fd); /* NULL if fd is not ours */
int sim_fd_set(int fd, struct sim_ctx *ctx); /* 0, or EMFILE beyond SIM_FD_MAX */
void sim_fd_clear(int fd);

#endif
