#include "segment.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../common/log.h"
#include "../common/sys.h"

struct fab_shared *sim_fab;
static int my_proc = -1;
static pid_t my_pid;

bool sim_fabric_on(void)
{
	return sim_fab != NULL;
}

bool sim_fab_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
}

/* A process that died holding the lock leaves it "owner dead": the state it guards is a
 * set of independent entries, so it is consistent and we carry on. */
void sim_fab_lock(void)
{
	if (pthread_mutex_lock(&sim_fab->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&sim_fab->lock);
}

void sim_fab_unlock(void)
{
	pthread_mutex_unlock(&sim_fab->lock);
}

static void init_shared(struct fab_shared *s)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&s->lock, &a);
	pthread_mutexattr_destroy(&a);
	for (int d = 0; d < SIM_MAX_DEVICES; d++) {
		s->next_qpn[d] = 0x100 + 0x10000 * (uint32_t)d;
		s->next_mkey[d] = 0x100 + 0x10000 * (uint32_t)d;
	}
	s->version = FAB_VERSION;
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE); /* last: the segment is valid */
}

/* Who may set the segment up, and who uses it: two one-byte locks of the segment file.
 *   byte 0  SETUP  exclusive while one process creates, checks or replaces the segment;
 *                  a process killed during set-up drops it, and the next one finds the
 *                  segment half-made (no ready word) and replaces it;
 *   byte 1  USERS  shared, held by every attached process for its lifetime: a broken
 *                  segment nobody holds is replaced, one still in use is refused.
 * A segment is valid when it has the full size, the magic and version, and the ready word,
 * which set-up writes last. */
#define LOCK_SETUP 0
#define LOCK_USERS 1

/* A new, initialised segment file at path (replacing what is there): built under a
 * private name and renamed over path, so nobody ever opens it half-made. */
static int create_segment(const char *path, struct fab_shared **out)
{
	char tmp[160];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.new-%d", path, (int)getpid());
	fd = sim_sys_open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (sim_sys_ftruncate(fd, sizeof(**out)) ||
	    (*out = sim_sys_mmap(NULL, sizeof(**out), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				 0)) == MAP_FAILED) {
		sim_sys_unlink(tmp);
		sim_sys_close(fd);
		return -1;
	}
	(*out)->magic = FAB_MAGIC;
	init_shared(*out);
	if (sim_sys_rename(tmp, path)) {
		sim_sys_unlink(tmp);
		munmap(*out, sizeof(**out));
		sim_sys_close(fd);
		return -1;
	}
	return fd;
}

/* What is wrong with the segment open at fd (NULL: nothing), mapping it in *out if not. */
static const char *check_segment(int fd, const struct stat *st, struct fab_shared **out)
{
	struct fab_shared *s;

	if ((size_t)st->st_size != sizeof(*s))
		return st->st_size < (off_t)sizeof(*s) ? "truncated" : "of another size";
	s = sim_sys_mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED)
		return "not mappable";
	if (s->magic != FAB_MAGIC || s->version != FAB_VERSION)
		return munmap(s, sizeof(*s)), "of another version";
	if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
		return munmap(s, sizeof(*s)), "half-initialised";
	*out = s;
	return NULL;
}

/* Opens the segment at path and holds its set-up lock: the file that is at path now (it
 * may be replaced while we wait for the lock). -1 with errno on failure. */
static int open_locked(const char *path, struct stat *st)
{
	for (int tries = 0; tries < 16; tries++) {
		struct stat now;
		int fd = sim_sys_open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0)
			return -1;
		if (sim_sys_lock_byte(fd, LOCK_SETUP, F_WRLCK, true) || sim_sys_fstat(fd, st)) {
			sim_sys_close(fd);
			return -1;
		}
		if (!sim_sys_stat(path, &now) && now.st_ino == st->st_ino && now.st_dev == st->st_dev)
			return fd;
		sim_sys_close(fd); /* replaced meanwhile: take the new one */
	}
	errno = EAGAIN;
	return -1;
}

/* The segment is /dev/shm/<path>, opened as shm_open(3) would, with raw system calls. */
bool sim_fabric_attach(const char *name)
{
	char path[128];
	struct fab_shared *s = NULL;
	struct stat st;
	const char *broken;
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/fvsim-%u-%s", (unsigned)getuid(), name);
	fd = open_locked(path, &st);
	if (fd < 0) {
		sim_err("fabric %s: %s: %s", name, path, strerror(errno));
		return false;
	}
	if (st.st_size == 0) {
		/* We created it (or its creator died before sizing it): set it up in place. */
		if (sim_sys_ftruncate(fd, sizeof(*s)) ||
		    (s = sim_sys_mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				      0)) == MAP_FAILED) {
			sim_err("fabric %s: %s: %s", name, path, strerror(errno));
			sim_sys_close(fd);
			return false;
		}
		s->magic = FAB_MAGIC;
		init_shared(s);
	} else if ((broken = check_segment(fd, &st, &s))) {
		int fresh;

		/* Nobody may still use it: they would run apart from us. */
		if (sim_sys_lock_byte(fd, LOCK_USERS, F_WRLCK, false)) {
			sim_err("fabric %s: segment %s is %s and still in use by running "
				"processes; refusing to run apart from them (remove it once "
				"they end)", name, path, broken);
			sim_sys_close(fd);
			return false;
		}
		fresh = create_segment(path, &s);
		sim_sys_close(fd);
		if (fresh < 0) {
			sim_err("fabric %s: segment %s is %s and cannot be replaced: %s", name,
				path, broken, strerror(errno));
			return false;
		}
		sim_warn("fabric %s: segment %s was %s; replaced it", name, path, broken);
		fd = fresh;
	}
	/* Attached for as long as the process lives: the descriptor stays open. */
	sim_sys_lock_byte(fd, LOCK_USERS, F_RDLCK, false);
	sim_sys_lock_byte(fd, LOCK_SETUP, F_UNLCK, false);
	sim_fab = s;
	sim_info("joined fabric %s", name);
	return true;
}

int sim_fab_my_proc_if_claimed(void)
{
	return my_proc >= 0 && my_pid == getpid() ? my_proc : -1;
}

int sim_fab_my_proc(void)
{
	pid_t pid = getpid();

	if (my_proc >= 0 && my_pid == pid)
		return my_proc;
	my_proc = -1;
	sim_fab_lock();
	for (int i = 0; i < FAB_PROCS && my_proc < 0; i++)
		if (sim_fab->proc[i].pid == pid)
			my_proc = i;
	for (int i = 0; i < FAB_PROCS && my_proc < 0; i++) {
		if (sim_fab->proc[i].pid == 0 || !sim_fab_alive(sim_fab->proc[i].pid)) {
			memset(&sim_fab->proc[i], 0, sizeof(sim_fab->proc[i]));
			/* Frames a dead process left are nobody's: only the ring's words. */
			memset(&sim_fab->eth[i], 0, offsetof(struct fab_eth, frame));
			sim_fab->proc[i].pid = pid;
			my_proc = i;
		}
	}
	sim_fab_unlock();
	my_pid = pid;
	if (my_proc < 0)
		sim_err("fabric: more than %d processes", FAB_PROCS);
	return my_proc;
}
