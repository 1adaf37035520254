/* Which file descriptors belong to the device: the fake /dev/infiniband/uverbsN command
 * fds, and the read ends of the async-event and completion-channel pipes we hand out.
 * Looked up on every write(), read(), ioctl(), mmap() and close() of the process, so it is
 * a flat array of tagged pointers read with one atomic load. */
#ifndef FVSIM_FDTAB_H
#define FVSIM_FDTAB_H

struct sim_ctx;

#define SIM_FD_MAX 16384

enum sim_fd_kind {
	SIM_FD_CMD = 0, /* uverbs command fd */
	SIM_FD_ASYNC = 1, /* async event pipe */
	SIM_FD_COMP = 2, /* completion channel pipe */
};

struct sim_ctx *sim_fd_ctx(int fd); /* the context of a command fd, else NULL */
struct sim_ctx *sim_fd_lookup(int fd, int *kind); /* any of ours, else NULL */
int sim_fd_set(int fd, struct sim_ctx *ctx, int kind); /* 0, or EMFILE beyond SIM_FD_MAX */
void sim_fd_clear(int fd);
void sim_fd_clear_ctx(struct sim_ctx *ctx); /* drop every fd that refers to ctx */
/* Is any fd of this kind still referring to ctx? (a dup()'d command fd keeps the
 * context, as the kernel's file reference does) */
int sim_fd_any(const struct sim_ctx *ctx, int kind);

#endif
