/* The device's own I/O as raw system calls. The front interposes the libc entry points
 * (write, read, close, fstat, mmap, ...) for the whole process; the device's writes to its
 * event pipes, closes of its own descriptors, its log lines and the fabric's shared
 * segment must not come back through those interposers, so they go straight to the
 * kernel. Each returns what the system call returns, with errno set on failure. */
#ifndef FVSIM_SYS_H
#define FVSIM_SYS_H

#include <fcntl.h>
#include <stdbool.h>
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

static inline int sim_sys_stat(const char *path, struct stat *st)
{
	return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
}

static inline int sim_sys_rename(const char *from, const char *to)
{
	return (int)syscall(SYS_renameat, AT_FDCWD, from, AT_FDCWD, to);
}

static inline int sim_sys_unlink(const char *path)
{
	return (int)syscall(SYS_unlinkat, AT_FDCWD, path, 0);
}

/* fcntl for the commands without an argument (F_GETFL, F_GETFD). */
static inline int sim_sys_fcntl(int fd, int cmd)
{
	return (int)syscall(SYS_fcntl, fd, cmd, 0);
}

/* An open-file-description lock (F_OFD_SETLK/SETLKW) on one byte: type F_RDLCK, F_WRLCK
 * or F_UNLCK. It belongs to the open file, so it lasts until the descriptor (and every
 * copy of it, forked children's included) is closed, or the process dies. */
static inline int sim_sys_lock_byte(int fd, off_t byte, short type, bool wait)
{
	struct flock l = { .l_type = type, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1 };

	return (int)syscall(SYS_fcntl, fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &l);
}

static inline ssize_t sim_sys_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return (ssize_t)syscall(SYS_pwrite64, fd, buf, n, off);
}

static inline int sim_sys_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

/* MAP_FAILED on failure, like mmap(3). */
static inline void *sim_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

#endif
