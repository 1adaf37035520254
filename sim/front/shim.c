/* The LD_PRELOAD face of the device: libc calls that touch /dev/infiniband/uverbsN are
 * answered here, everything else passes through to the next definition (libc, or the
 * sanitizer runtime's interceptors, which must come first in LD_PRELOAD).
 *   open*      /dev/infiniband/uverbsN -> a /dev/null fd we remember, with a new context
 *   stat*, access*  the device node exists (node.c)
 *   fstat*     our fds report that same char device
 *   ioctl      EPROTONOSUPPORT for every method (ioctl.c): libibverbs falls back to the
 *              write() command ABI method by method
 *   write      uverbs commands
 *   read       events read from our pipes are counted, as the kernel counts them
 *   mmap       UAR pages and the clock-info page: the command fd's memory (uar.c)
 *   close      tears the context down with its last command fd
 *   dup*, fcntl(F_DUPFD*)  a copy of a command fd is the same device
 *   socket     refuses NETLINK_RDMA so discovery falls back to sysfs
 * and the same for /dev/infiniband/rdma_cm (ucma*.c): open gives an eventfd, write runs
 * rdma_cm commands, fstat reports the char device, close destroys the channel's ids. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <rdma/mlx5-abi.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../common/log.h"
#include "../engine/thread.h"
#include "../model/model.h"
#include "../model/world.h"
#include "evcount.h"
#include "fdtab.h"
#include "handles.h"
#include "interpose.h"
#include "node.h"
#include "uar.h"
#include "ucma.h"
#include "ucma_cmd.h"
#include "uverbs.h"

static int open_device(int index, int flags)
{
	struct sim_ctx *ctx;
	int fd, err;

	if (sim_world.fabric_refused) {
		sim_err("not opening uverbs%d: fabric %s is unusable (see above)", index,
			sim_world.cfg.fabric);
		errno = EIO;
		return -1;
	}
	/* A real fd keeps the number reserved and makes poll/fcntl/dup behave; its memory is
	 * what mmap() maps (uar.c). */
	fd = sim_uar_fd_open(flags);
	if (fd < 0)
		return -1;
	sim_lock();
	ctx = sim_uctx_open(index, fd);
	err = ctx ? sim_uar_views_map(ctx) : ENOMEM;
	if (!err)
		err = sim_fd_set(fd, ctx, SIM_FD_CMD);
	if (err && ctx)
		sim_uctx_close(ctx);
	sim_unlock();
	if (err) {
		syscall(SYS_close, fd);
		errno = err;
		return -1;
	}
	sim_dbg("opened uverbs%d as fd %d", index, fd);
	return fd;
}

static mode_t open_mode(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

/* The mode argument of a variadic open* whose flags are its last named parameter. */
#define OPEN_MODE(flags, mode)                                                         \
	do {                                                                           \
		va_list ap_;                                                           \
		va_start(ap_, flags);                                                  \
		(mode) = open_mode(flags, ap_);                                        \
		va_end(ap_);                                                           \
	} while (0)

#define NOT_OURS (-2)

/* open of one of our device nodes: the fd, or -1 with errno; NOT_OURS for any other
 * path, which the caller opens for real. */
static int open_ours(const char *path, int flags)
{
	int dev;

	if (sim_ucma_path(path))
		return sim_ucma_open(flags);
	dev = sim_node_index(path);
	return dev >= 0 ? open_device(dev, flags) : NOT_OURS;
}

EXPORT int open(const char *path, int flags, ...)
{
	REAL(int, open, const char *, int, ...);
	int fd = open_ours(path, flags);
	mode_t mode;

	OPEN_MODE(flags, mode);
	return fd != NOT_OURS ? fd : real_open(path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
{
	REAL(int, open64, const char *, int, ...);
	int fd = open_ours(path, flags);
	mode_t mode;

	OPEN_MODE(flags, mode);
	return fd != NOT_OURS ? fd : real_open64(path, flags, mode);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	REAL(int, openat, int, const char *, int, ...);
	int fd = open_ours(path, flags);
	mode_t mode;

	OPEN_MODE(flags, mode);
	return fd != NOT_OURS ? fd : real_openat(dirfd, path, flags, mode);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	REAL(int, openat64, int, const char *, int, ...);
	int fd = open_ours(path, flags);
	mode_t mode;

	OPEN_MODE(flags, mode);
	return fd != NOT_OURS ? fd : real_openat64(dirfd, path, flags, mode);
}

/* _FORTIFY_SOURCE entry points. */
EXPORT int __open_2(const char *path, int flags)
{
	REAL(int, __open_2, const char *, int);
	int fd = open_ours(path, flags);

	return fd != NOT_OURS ? fd : real___open_2(path, flags);
}

EXPORT int __open64_2(const char *path, int flags)
{
	REAL(int, __open64_2, const char *, int);
	int fd = open_ours(path, flags);

	return fd != NOT_OURS ? fd : real___open64_2(path, flags);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	REAL(int, __openat_2, int, const char *, int);
	int fd = open_ours(path, flags);

	return fd != NOT_OURS ? fd : real___openat_2(dirfd, path, flags);
}

/* Our command fds are memfds underneath; report the uverbs char device instead, whose
 * number libibverbs compares with the one in sysfs. */
static void patch_fstat(int fd, struct stat *st)
{
	struct sim_ctx *ctx = sim_fd_ctx(fd);

	if (ctx) {
		st->st_mode = S_IFCHR | 0666;
		st->st_rdev = sim_node_rdev(ctx->dev->index);
		st->st_size = 0;
		st->st_blocks = 0;
	}
	else if (sim_ucma_chan(fd))
		sim_ucma_stat(st);
}

EXPORT int fstat(int fd, struct stat *st)
{
	REAL(int, fstat, int, struct stat *);
	int r = real_fstat(fd, st);

	if (!r)
		patch_fstat(fd, st);
	return r;
}

EXPORT int fstat64(int fd, struct stat64 *st)
{
	REAL(int, fstat64, int, struct stat64 *);
	int r = real_fstat64(fd, st);

	if (!r)
		patch_fstat(fd, (struct stat *)st);
	return r;
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	REAL(int, ioctl, int, unsigned long, ...);
	va_list ap;
	void *arg;
	struct sim_ctx *ctx = sim_fd_ctx(fd);
	int err;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!ctx)
		return real_ioctl(fd, req, arg);
	/* The kernel's ioctl handlers take the request as unsigned int. */
	err = sim_uverbs_ioctl(ctx, (unsigned int)req, (uint64_t)(uintptr_t)arg);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

EXPORT ssize_t read(int fd, void *buf, size_t count)
{
	REAL(ssize_t, read, int, void *, size_t);
	int kind;
	struct sim_ctx *ctx;
	ssize_t n;

	/* Waiting for a completion event: the device must not wait for this thread's polls. */
	if (sim_fd_lookup(fd, &kind) && kind == SIM_FD_COMP)
		sim_thread_app_blocks();
	n = real_read(fd, buf, count);

	if (n > 0 && (ctx = sim_fd_lookup(fd, &kind)) && kind != SIM_FD_CMD) {
		sim_lock();
		/* The context may have been closed meanwhile; then the fd was dropped. */
		if (sim_fd_lookup(fd, &kind) == ctx)
			sim_events_read(ctx, kind == SIM_FD_COMP, buf, (size_t)n);
		sim_unlock();
	}
	return n;
}

EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
	REAL(ssize_t, write, int, const void *, size_t);
	struct sim_ctx *ctx = sim_fd_ctx(fd);
	struct cm_chan *ch;

	if (ctx)
		return sim_uverbs_write(ctx, buf, count);
	if ((ch = sim_ucma_chan(fd)))
		return sim_ucma_write(ch, fd, buf, count);
	return real_write(fd, buf, count);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	REAL(void *, mmap, void *, size_t, int, int, int, off_t);
	struct sim_ctx *ctx = sim_fd_ctx(fd);

	return ctx ? sim_uar_map(ctx, fd, addr, len, prot, flags, off) : real_mmap(addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	REAL(void *, mmap64, void *, size_t, int, int, int, off_t);
	struct sim_ctx *ctx = sim_fd_ctx(fd);

	return ctx ? sim_uar_map(ctx, fd, addr, len, prot, flags, off) : real_mmap64(addr, len, prot, flags, fd, off);
}

/* The fd no longer refers to the device; the last command fd of a context takes the
 * context (and the event fds it handed out) with it, an rdma_cm fd its ids. */
static void forget_fd(int fd)
{
	int kind;
	struct sim_ctx *ctx = sim_fd_lookup(fd, &kind);

	sim_ucma_close(fd);
	if (!ctx)
		return;
	sim_lock();
	sim_fd_clear(fd);
	if (kind == SIM_FD_ASYNC)
		sim_async_fd_closed(ctx, fd);
	if (kind == SIM_FD_CMD && !sim_fd_any(ctx, SIM_FD_CMD)) {
		sim_fd_clear_ctx(ctx);
		sim_uctx_close(ctx);
		sim_dbg("closed uverbs fd %d", fd);
	}
	sim_unlock();
}

EXPORT int close(int fd)
{
	REAL(int, close, int);

	forget_fd(fd);
	return real_close(fd);
}

/* dup()'d command fds are the same open device (ibv_import_device takes one); async and
 * completion-channel pipes are plain pipes and need nothing. */
static int dup_done(int oldfd, int newfd)
{
	struct sim_ctx *ctx;
	int err;

	if (newfd < 0 || !(ctx = sim_fd_ctx(oldfd)))
		return newfd;
	sim_lock();
	err = sim_fd_ctx(oldfd) == ctx ? sim_fd_set(newfd, ctx, SIM_FD_CMD) : 0;
	sim_unlock();
	if (err) {
		REAL(int, close, int);
		real_close(newfd);
		errno = err;
		return -1;
	}
	return newfd;
}

EXPORT int dup(int fd)
{
	REAL(int, dup, int);

	return dup_done(fd, real_dup(fd));
}

EXPORT int dup2(int fd, int newfd)
{
	REAL(int, dup2, int, int);

	if (fd != newfd && sim_fd_ctx(fd))
		forget_fd(newfd); /* dup2 closes what newfd was */
	return fd == newfd ? real_dup2(fd, newfd) : dup_done(fd, real_dup2(fd, newfd));
}

EXPORT int dup3(int fd, int newfd, int flags)
{
	REAL(int, dup3, int, int, int);

	if (fd != newfd && sim_fd_ctx(fd))
		forget_fd(newfd);
	return dup_done(fd, real_dup3(fd, newfd, flags));
}

/* fcntl's third argument is an int or a pointer; passing it on as a pointer-sized
 * value is what libc's own wrapper does. */
static int fcntl_via(int (*real)(int, int, ...), int fd, int cmd, va_list ap)
{
	void *arg = va_arg(ap, void *);
	int r = real(fd, cmd, arg);

	return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC ? dup_done(fd, r) : r;
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	REAL(int, fcntl, int, int, ...);
	va_list ap;
	int r;

	va_start(ap, cmd);
	r = fcntl_via(real_fcntl, fd, cmd, ap);
	va_end(ap);
	return r;
}

/* glibc's name for fcntl under _FILE_OFFSET_BITS=64. */
EXPORT int fcntl64(int fd, int cmd, ...)
{
	REAL(int, fcntl64, int, int, ...);
	va_list ap;
	int r;

	va_start(ap, cmd);
	r = fcntl_via(real_fcntl64, fd, cmd, ap);
	va_end(ap);
	return r;
}

EXPORT int socket(int domain, int type, int protocol)
{
	REAL(int, socket, int, int, int);

	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return real_socket(domain, type, protocol);
}
