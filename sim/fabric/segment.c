#include "segment.h"

#include <errno.h>
#include <signal.h>
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
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
}

/* The segment is /dev/shm/<path>, opened as shm_open(3) would, with raw system calls. */
void sim_fabric_attach(const char *name)
{
	char path[128];
	struct fab_shared *s;
	struct stat st;
	uint32_t zero = 0;
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/fvsim-%u-%s", (unsigned)getuid(), name);
	fd = sim_sys_open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || sim_sys_fstat(fd, &st) ||
	    ((size_t)st.st_size < sizeof(*s) && sim_sys_ftruncate(fd, sizeof(*s)))) {
		sim_err("fabric %s: %s; running without it", name, strerror(errno));
		if (fd >= 0)
			sim_sys_close(fd);
		return;
	}
	s = sim_sys_mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	sim_sys_close(fd);
	if (s == MAP_FAILED) {
		sim_err("fabric %s: mmap: %s", name, strerror(errno));
		return;
	}
	/* The first process to claim the magic word initialises; the others wait for it. */
	if (__atomic_compare_exchange_n(&s->magic, &zero, FAB_MAGIC, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		init_shared(s);
	for (int i = 0; i < 5000 && !__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE); i++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	if (s->magic != FAB_MAGIC || s->version != FAB_VERSION || !s->ready) {
		sim_err("fabric %s: incompatible or broken segment %s", name, path);
		munmap(s, sizeof(*s));
		return;
	}
	sim_fab = s;
	sim_info("joined fabric %s", name);
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
