/* How CM messages travel. Within a process they go straight to cm_recv(). With a fabric
 * (FVSIM_FABRIC=name) the processes of that name also share a CM segment,
 * /dev/shm/fvsim-<uid>-<name>-cm, beside the verbs fabric and independent of it:
 *
 *   +-----------------------------------------------------+
 *   | magic, version, ready | robust mutex                 |
 *   | listener[CMF_LISTENERS]: pid, proc, ps, address      |  who listens where
 *   | proc[CMF_PROCS]: pid, bell, head, tail,              |  one inbox per process,
 *   |                  msg[CMF_SLOTS] (struct cm_msg)      |  a ring of messages
 *   +-----------------------------------------------------+
 *
 * A sender copies its message into the receiver's ring under the mutex and rings the
 * receiver's bell (a futex word); each process runs a CM thread that sleeps on its bell
 * and hands what arrives to cm_recv() under the CM lock. Lock order: CM lock, then the
 * segment mutex; the thread drops the segment mutex before taking the CM lock. A process
 * is one of ours while its pid lives: entries of dead ones are ignored and reused. */
#include "cm_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/log.h"
#include "../model/world.h"

#define CMF_MAGIC 0x66766366u /* "fvcf" */
#define CMF_VERSION 1u
#define CMF_LISTENERS 256
#define CMF_PROCS 64
#define CMF_SLOTS 32

struct cmf_listener {
	int32_t pid; /* 0: free */
	uint32_t proc;
	uint16_t ps, pad;
	struct sockaddr_in6 addr;
};

struct cmf_proc {
	int32_t pid;
	uint32_t bell;
	uint32_t head, tail; /* ring: head - tail messages wait at msg[tail % CMF_SLOTS] */
	struct cm_msg msg[CMF_SLOTS];
};

struct cmf_shared {
	uint32_t magic, version, ready, pad;
	pthread_mutex_t lock;
	struct cmf_listener listener[CMF_LISTENERS];
	struct cmf_proc proc[CMF_PROCS];
};

static struct cmf_shared *seg;
static pthread_once_t attach_once = PTHREAD_ONCE_INIT;
static int my_proc = -1; /* index in seg->proc */
static pid_t my_pid, thread_pid;

static bool alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
}

static void seg_lock(void)
{
	if (pthread_mutex_lock(&seg->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&seg->lock); /* independent entries: still consistent */
}

static void seg_unlock(void)
{
	pthread_mutex_unlock(&seg->lock);
}

static void init_shared(struct cmf_shared *s)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&s->lock, &a);
	pthread_mutexattr_destroy(&a);
	s->version = CMF_VERSION;
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
}

static void attach(void)
{
	char path[128];
	struct cmf_shared *s;
	struct stat st;
	uint32_t zero = 0;
	int fd;

	sim_world_init();
	if (!sim_world.cfg.fabric[0])
		return;
	snprintf(path, sizeof(path), "/fvsim-%u-%s-cm", (unsigned)getuid(), sim_world.cfg.fabric);
	fd = shm_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) ||
	    ((size_t)st.st_size < sizeof(*s) && ftruncate(fd, sizeof(*s)))) {
		sim_err("rdma_cm fabric %s: %s; connections stay in this process", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (s == MAP_FAILED)
		return;
	if (__atomic_compare_exchange_n(&s->magic, &zero, CMF_MAGIC, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		init_shared(s);
	for (int i = 0; i < 5000 && !__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE); i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	if (s->magic != CMF_MAGIC || s->version != CMF_VERSION || !s->ready) {
		sim_err("rdma_cm fabric %s: incompatible segment", path);
		munmap(s, sizeof(*s));
		return;
	}
	seg = s;
}

/* This process's inbox, claimed on first use and again in a forked child. */
static int proc_index(void)
{
	pid_t pid = getpid();

	if (my_proc >= 0 && my_pid == pid)
		return my_proc;
	my_proc = -1;
	seg_lock();
	for (int i = 0; i < CMF_PROCS && my_proc < 0; i++)
		if (seg->proc[i].pid == pid)
			my_proc = i;
	for (int i = 0; i < CMF_PROCS && my_proc < 0; i++) {
		if (!alive(seg->proc[i].pid)) {
			memset(&seg->proc[i], 0, sizeof(seg->proc[i]));
			seg->proc[i].pid = pid;
			my_proc = i;
		}
	}
	seg_unlock();
	my_pid = pid;
	if (my_proc < 0)
		sim_err("rdma_cm fabric: more than %d processes", CMF_PROCS);
	return my_proc;
}

bool cm_peer_alive(const struct cm_peer *peer)
{
	return peer->pid == getpid() || alive(peer->pid);
}

/* Connections whose peer process ended: told as its kernel would have. CM lock held. */
static void reap(void)
{
	for (struct cm_id *id = cm_id_first(); id; id = cm_id_next(id)) {
		struct cm_peer p = id->peer;

		if (p.pid && !cm_peer_alive(&p))
			cm_peer_gone(&p); /* ids of that peer leave the states it matters in */
	}
}

/* The CM thread: takes what other processes posted to this one, and watches peers. */
static void *cm_thread(void *arg)
{
	struct cmf_proc *me = arg;
	struct cm_msg batch[CMF_SLOTS];

	for (;;) {
		uint32_t seen = __atomic_load_n(&me->bell, __ATOMIC_ACQUIRE);
		int n = 0;

		seg_lock();
		while (me->head != me->tail && n < CMF_SLOTS)
			batch[n++] = me->msg[me->tail++ % CMF_SLOTS];
		seg_unlock();
		if (n) {
			cm_lock();
			for (int i = 0; i < n; i++)
				cm_recv(&batch[i]);
			cm_unlock();
			continue;
		}
		if (syscall(SYS_futex, &me->bell, FUTEX_WAIT, seen,
			    &(struct timespec){ 0, 100000000 }, NULL, 0) && errno == ETIMEDOUT) {
			cm_lock();
			reap();
			cm_unlock();
		}
	}
	return NULL;
}

/* Attaches and starts this process's CM thread (again after a fork); false without a
 * fabric. Called with the CM lock held. */
static bool on(void)
{
	pthread_t t;
	int p;

	pthread_once(&attach_once, attach);
	if (!seg || (p = proc_index()) < 0)
		return false;
	if (thread_pid != getpid()) {
		pthread_attr_t a;

		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &a, cm_thread, &seg->proc[p]) == 0)
			thread_pid = getpid();
		else
			sim_err("rdma_cm fabric: no CM thread: %s", strerror(errno));
		pthread_attr_destroy(&a);
	}
	return true;
}

uint32_t cm_self(void)
{
	return on() ? (uint32_t)my_proc + 1 : 0;
}

static void post(uint32_t proc, const struct cm_msg *m)
{
	struct cmf_proc *to;
	bool sent = false;

	if (!proc || proc > CMF_PROCS)
		return;
	to = &seg->proc[proc - 1];
	seg_lock();
	if (alive(to->pid) && to->head - to->tail < CMF_SLOTS) {
		to->msg[to->head++ % CMF_SLOTS] = *m;
		sent = true;
	}
	seg_unlock();
	if (!sent) {
		sim_warn("rdma_cm fabric: message %u to process %u dropped", m->kind, proc);
		return;
	}
	__atomic_add_fetch(&to->bell, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &to->bell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void cm_send(const struct cm_peer *to, struct cm_msg *m)
{
	m->dst_comm = to->comm;
	if (to->proc == cm_self())
		cm_recv(m);
	else
		post(to->proc, m);
}

static bool overlaps(const struct sockaddr *a, const struct sockaddr *b)
{
	return cm_addr_port(a) == cm_addr_port(b) &&
	       (cm_addr_any(a) || cm_addr_any(b) || cm_addr_match(a, b));
}

/* A listener of another live process: its inbox + 1, else 0. Segment locked. */
static uint32_t remote_listener(uint16_t ps, const struct sockaddr *a, bool any_overlap)
{
	for (int i = 0; i < CMF_LISTENERS; i++) {
		struct cmf_listener *l = &seg->listener[i];
		const struct sockaddr *la = (const struct sockaddr *)&l->addr;

		if (!l->pid || l->pid == getpid() || l->ps != ps || !alive(l->pid))
			continue;
		if (any_overlap ? overlaps(la, a) : cm_addr_match(la, a))
			return l->proc;
	}
	return 0;
}

void cm_send_req(struct cm_msg *m)
{
	uint32_t proc = 0;

	if (!cm_listens(m->ps, (struct sockaddr *)&m->dst_addr) && cm_self()) {
		seg_lock();
		proc = remote_listener(m->ps, (struct sockaddr *)&m->dst_addr, false);
		seg_unlock();
	}
	if (proc)
		post(proc, m);
	else
		cm_recv(m); /* ours, or nobody's: cm_recv refuses it */
}

bool cm_listener_elsewhere(uint16_t ps, const struct sockaddr *a)
{
	uint32_t proc;

	if (!cm_self())
		return false;
	seg_lock();
	proc = remote_listener(ps, a, true);
	seg_unlock();
	return proc != 0;
}

void cm_listener_publish(const struct cm_id *listener, bool on_)
{
	uint32_t self = cm_self();
	pid_t pid = getpid();

	if (!self)
		return;
	seg_lock();
	for (int i = 0; i < CMF_LISTENERS; i++) {
		struct cmf_listener *l = &seg->listener[i];

		if (on_ && !alive(l->pid)) {
			l->pid = pid;
			l->proc = self;
			l->ps = listener->ps;
			memcpy(&l->addr, &listener->src, sizeof(l->addr));
			on_ = false; /* done */
			break;
		}
		if (!on_ && l->pid == pid && l->ps == listener->ps &&
		    !memcmp(&l->addr, &listener->src, sizeof(l->addr))) {
			l->pid = 0;
			break;
		}
	}
	seg_unlock();
	if (on_)
		sim_warn("rdma_cm fabric: more than %d listeners; this one is local only",
			 CMF_LISTENERS);
}
