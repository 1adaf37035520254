/* The device's own I/O as raw system calls. The front interposes the libc entry points
 * (write, read, close, fstat, mmap, ...) for the whole process; the device's writes to its
 * event pipes, closes of its own descriptors, its log lines and the fabric's shared
 * segment must not come back through those interposers, so they go straight to the
 * kernel. Each returns what the system call returns, with errno set on failure. */
#ifndef FVSIM_SYS_H
#define FVSIM_SYS_H

#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static inline ssize_t sim_sys_write(int fd, const void *buf, size_t n)
{
	return (ssize_t)syscall(SYS_write, fd, buf, n);
}

static inline int sim_sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

static inline int sim_sys_open(const char *path, int flags, mode_t mode)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

static inline int sim_sys_fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}

static inline int sim_sys_ftruncate(int fd, off_t len)
{
	return (int)syscall(SYS_ftruncate, fd, len);
}

/* MAP_FAILED on failure, like mmap(3). */
static inline void *sim_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

#endif
