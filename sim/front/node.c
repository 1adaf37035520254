/* Path-based questions about /dev/infiniband/uverbsN: the node exists, is a char device
 * 231:(192+N) and may be opened for reading and writing. libibverbs stats the node, UCX
 * also stats it and asks access(R_OK | W_OK) before it offers the device. Other paths go
 * to the next definition. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../model/world.h"
#include "interpose.h"
#include "node.h"

#define UVERBS_MAJOR 231
#define UVERBS_MINOR_BASE 192
#define DEV_PREFIX "/dev/infiniband/uverbs"

int sim_node_index(const char *path)
{
	const char *p;
	long n = 0;

	if (!path || strncmp(path, DEV_PREFIX, sizeof(DEV_PREFIX) - 1))
		return -1;
	p = path + sizeof(DEV_PREFIX) - 1;
	if (!*p)
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || n > 1000)
			return -1;
		n = n * 10 + (*p - '0');
	}
	sim_world_init();
	return n < sim_world.ndev ? (int)n : -1;
}

dev_t sim_node_rdev(int index)
{
	return makedev(UVERBS_MAJOR, UVERBS_MINOR_BASE + index);
}

static void fake_node(struct stat *st, int dev)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = sim_node_rdev(dev);
	st->st_dev = makedev(0, 5);
	st->st_ino = 0x5100 + (ino_t)dev;
	st->st_nlink = 1;
	st->st_blksize = 4096;
}

EXPORT int stat(const char *path, struct stat *st)
{
	REAL(int, stat, const char *, struct stat *);
	int dev = sim_node_index(path);

	if (dev < 0)
		return real_stat(path, st);
	fake_node(st, dev);
	return 0;
}

EXPORT int stat64(const char *path, struct stat64 *st)
{
	REAL(int, stat64, const char *, struct stat64 *);
	int dev = sim_node_index(path);

	if (dev < 0)
		return real_stat64(path, st);
	fake_node((struct stat *)st, dev);
	return 0;
}

EXPORT int lstat(const char *path, struct stat *st)
{
	REAL(int, lstat, const char *, struct stat *);
	int dev = sim_node_index(path);

	if (dev < 0)
		return real_lstat(path, st);
	fake_node(st, dev);
	return 0;
}

EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	REAL(int, fstatat, int, const char *, struct stat *, int);
	int dev = sim_node_index(path);

	if (dev < 0)
		return real_fstatat(dirfd, path, st, flags);
	fake_node(st, dev);
	return 0;
}

/* The node is mode 0666 (fake_node): every access mode but X_OK is granted, as the
 * kernel's permission check would for a char device without execute bits. */
static int node_access(int mode)
{
	if (mode & ~(R_OK | W_OK | X_OK)) {
		errno = EINVAL;
		return -1;
	}
	if (mode & X_OK) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

EXPORT int access(const char *path, int mode)
{
	REAL(int, access, const char *, int);

	return sim_node_index(path) < 0 ? real_access(path, mode) : node_access(mode);
}

EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
	REAL(int, faccessat, int, const char *, int, int);

	if (sim_node_index(path) < 0)
		return real_faccessat(dirfd, path, mode, flags);
	if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
		errno = EINVAL;
		return -1;
	}
	return node_access(mode);
}

EXPORT int euidaccess(const char *path, int mode)
{
	REAL(int, euidaccess, const char *, int);

	return sim_node_index(path) < 0 ? real_euidaccess(path, mode) : node_access(mode);
}

EXPORT int eaccess(const char *path, int mode)
{
	REAL(int, eaccess, const char *, int);

	return sim_node_index(path) < 0 ? real_eaccess(path, mode) : node_access(mode);
}
