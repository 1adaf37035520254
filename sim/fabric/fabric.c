#include "fabric.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/log.h"
#include "../model/world.h"

#define FAB_MAGIC 0x66767366u /* "fvsf" */
#define FAB_VERSION 2u
#define FAB_QPS 4096
#define FAB_PROCS 64
#define FAB_SLOTS 16

enum { SLOT_FREE, SLOT_CLAIMED, SLOT_POSTED, SLOT_BUSY, SLOT_ANSWERED };

/* One message and, later, its answer. Addresses in iov belong to src_pid. */
struct fab_slot {
	uint32_t state;
	int32_t src_pid;
	uint32_t src_proc; /* requester's inbox, whose bell the answer rings */
	uint16_t dst_dev, slid;
	uint8_t op, se, sl, src_type, grh, result;
	uint8_t answer, nak, rnr_timer, pad[3];
	uint32_t src_qpn, src_qkey, dqpn, rkey, qkey, xrc_srqn, niov;
	uint64_t raddr, len, swap_add, compare;
	uint8_t imm[4];
	struct sim_iov iov[SIM_MAX_IOV];
	uint8_t grh_bytes[40];
};

struct fab_proc {
	int32_t pid;
	uint32_t bell; /* futex word: bumped when there is news for this process */
	struct fab_slot slot[FAB_SLOTS];
};

struct fab_qp {
	int32_t pid; /* 0: free entry */
	uint16_t dev, proc;
	uint32_t qpn, pad;
};

struct fab_shared {
	uint32_t magic, version, ready, pad;
	pthread_mutex_t lock; /* process-shared, robust */
	uint32_t next_qpn[SIM_MAX_DEVICES], next_mkey[SIM_MAX_DEVICES];
	struct fab_qp qp[FAB_QPS];
	struct fab_proc proc[FAB_PROCS];
};

static struct fab_shared *fab;
static int my_proc = -1;
static pid_t my_pid;

bool sim_fabric_on(void)
{
	return fab != NULL;
}

static bool alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
}

/* A process that died holding the lock leaves it "owner dead": the state it guards is a
 * set of independent entries, so it is consistent and we carry on. */
static void lock(void)
{
	if (pthread_mutex_lock(&fab->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&fab->lock);
}

static void unlock(void)
{
	pthread_mutex_unlock(&fab->lock);
}

static void ring(int proc)
{
	uint32_t *bell = &fab->proc[proc].bell;

	__atomic_add_fetch(bell, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, bell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

uint32_t sim_fabric_bell(void)
{
	if (!fab || my_proc < 0 || my_pid != getpid())
		return 0;
	return __atomic_load_n(&fab->proc[my_proc].bell, __ATOMIC_ACQUIRE);
}

void sim_fabric_wait(uint32_t seen, long ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };

	if (!fab || my_proc < 0 || my_pid != getpid()) {
		nanosleep(&ts, NULL);
		return;
	}
	/* Shared (not private) futex: the waker is another process. */
	syscall(SYS_futex, &fab->proc[my_proc].bell, FUTEX_WAIT, seen, &ts, NULL, 0);
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

void sim_fabric_attach(const char *name)
{
	char path[128];
	struct fab_shared *s;
	struct stat st;
	uint32_t zero = 0;
	int fd;

	snprintf(path, sizeof(path), "/fvsim-%u-%s", (unsigned)getuid(), name);
	fd = shm_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) ||
	    ((size_t)st.st_size < sizeof(*s) && ftruncate(fd, sizeof(*s)))) {
		sim_err("fabric %s: %s; running without it", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
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
	fab = s;
	sim_info("joined fabric %s", name);
}

/* This process's inbox, claimed on first use (and again in a forked child). */
static int proc_index(void)
{
	pid_t pid = getpid();

	if (my_proc >= 0 && my_pid == pid)
		return my_proc;
	my_proc = -1;
	lock();
	for (int i = 0; i < FAB_PROCS && my_proc < 0; i++)
		if (fab->proc[i].pid == pid)
			my_proc = i;
	for (int i = 0; i < FAB_PROCS && my_proc < 0; i++) {
		if (fab->proc[i].pid == 0 || !alive(fab->proc[i].pid)) {
			memset(&fab->proc[i], 0, sizeof(fab->proc[i]));
			fab->proc[i].pid = pid;
			my_proc = i;
		}
	}
	unlock();
	my_pid = pid;
	if (my_proc < 0)
		sim_err("fabric: more than %d processes", FAB_PROCS);
	return my_proc;
}

uint32_t sim_fabric_next_qpn(int dev)
{
	uint32_t n;

	lock();
	n = fab->next_qpn[dev]++;
	unlock();
	return n;
}

uint32_t sim_fabric_next_mkey(int dev)
{
	uint32_t n;

	lock();
	n = fab->next_mkey[dev]++;
	unlock();
	return n;
}

void sim_fabric_add_qp(const struct sim_qp *qp)
{
	int p = proc_index();

	if (p < 0)
		return;
	lock();
	for (int i = 0; i < FAB_QPS; i++) {
		struct fab_qp *e = &fab->qp[i];

		if (e->pid == 0 || !alive(e->pid)) {
			e->pid = getpid();
			e->dev = (uint16_t)qp->ctx->dev->index;
			e->proc = (uint16_t)p;
			e->qpn = qp->qpn;
			unlock();
			return;
		}
	}
	unlock();
	sim_warn("fabric: registry full, QP 0x%x is unreachable from other processes", qp->qpn);
}

void sim_fabric_del_qp(const struct sim_qp *qp)
{
	lock();
	for (int i = 0; i < FAB_QPS; i++) {
		struct fab_qp *e = &fab->qp[i];

		if (e->pid == getpid() && e->dev == qp->ctx->dev->index && e->qpn == qp->qpn)
			e->pid = 0;
	}
	unlock();
}

static void fill_slot(struct fab_slot *s, int dev, const struct sim_msg *m)
{
	s->src_pid = getpid();
	s->src_proc = (uint32_t)proc_index();
	s->dst_dev = (uint16_t)dev;
	s->slid = m->slid;
	s->op = m->op;
	s->se = m->se;
	s->sl = m->sl;
	s->src_type = m->src_type;
	s->grh = m->grh;
	s->src_qpn = m->src_qpn;
	s->src_qkey = m->src_qkey;
	s->dqpn = m->dqpn;
	s->rkey = m->rkey;
	s->qkey = m->qkey;
	s->xrc_srqn = m->xrc_srqn;
	s->raddr = m->raddr;
	s->len = m->len;
	s->swap_add = m->swap_add;
	s->compare = m->compare;
	memcpy(s->imm, m->imm, 4);
	memcpy(s->grh_bytes, m->grh_bytes, 40);
	s->result = m->result != NULL;
	s->niov = (uint32_t)(m->result ? m->nresult : m->npayload);
	memcpy(s->iov, m->result ? m->result : m->payload, s->niov * sizeof(s->iov[0]));
}

int sim_fabric_post(struct sim_qp *qp, int dev, const struct sim_msg *m)
{
	int owner = -1;

	lock();
	for (int i = 0; i < FAB_QPS; i++) {
		struct fab_qp *e = &fab->qp[i];

		if (e->pid && e->dev == dev && e->qpn == m->dqpn && e->pid != getpid() &&
		    alive(e->pid)) {
			owner = e->proc;
			qp->fab_peer = e->pid;
			break;
		}
	}
	unlock();
	if (owner < 0)
		return ENOENT;
	for (int i = 0; i < FAB_SLOTS; i++) {
		struct fab_slot *s = &fab->proc[owner].slot[i];
		uint32_t st = SLOT_FREE;

		/* An answer nobody came back for (its requester died) is reclaimed too. */
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == SLOT_ANSWERED &&
		    !alive(s->src_pid))
			st = SLOT_ANSWERED;
		if (!__atomic_compare_exchange_n(&s->state, &st, SLOT_CLAIMED, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		fill_slot(s, dev, m);
		__atomic_store_n(&s->state, SLOT_POSTED, __ATOMIC_RELEASE);
		qp->fab_proc = owner;
		qp->fab_slot = i;
		sim_dbg("fabric: QP 0x%x posted op 0x%x to QP 0x%x (pid %d)", qp->qpn, m->op, m->dqpn, (int)qp->fab_peer);
		ring(owner);
		return 0;
	}
	return EAGAIN;
}

int sim_fabric_answer(struct sim_qp *qp, enum sim_resp *r, struct sim_msg *m)
{
	struct fab_slot *s = &fab->proc[qp->fab_proc].slot[qp->fab_slot];
	uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);

	if (st != SLOT_ANSWERED) {
		if (alive(qp->fab_peer))
			return EAGAIN;
		sim_fabric_cancel(qp);
		return ESRCH;
	}
	*r = (enum sim_resp)s->answer;
	sim_dbg("fabric: QP 0x%x got answer %d", qp->qpn, *r);
	m->nak = s->nak;
	m->rnr_timer = s->rnr_timer;
	__atomic_store_n(&s->state, SLOT_FREE, __ATOMIC_RELEASE);
	qp->fab_slot = -1;
	return 0;
}

void sim_fabric_cancel(struct sim_qp *qp)
{
	struct fab_slot *s;
	uint32_t st = SLOT_POSTED;

	if (qp->fab_slot < 0)
		return;
	s = &fab->proc[qp->fab_proc].slot[qp->fab_slot];
	qp->fab_slot = -1;
	if (__atomic_compare_exchange_n(&s->state, &st, SLOT_FREE, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return;
	/* The owner is answering right now (it may be copying our memory): wait for it, so
	 * nothing touches the buffers once the WQE is gone. */
	for (int i = 0; i < 100000 && st == SLOT_BUSY && alive(qp->fab_peer); i++) {
		struct timespec ts = { 0, 10000 };

		nanosleep(&ts, NULL);
		st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	}
	__atomic_store_n(&s->state, SLOT_FREE, __ATOMIC_RELEASE);
}

int sim_fabric_serve(void)
{
	int p, served = 0;

	if (!fab || (p = proc_index()) < 0)
		return 0;
	for (int i = 0; i < FAB_SLOTS; i++) {
		struct fab_slot *s = &fab->proc[p].slot[i];
		uint32_t st = SLOT_POSTED;
		struct sim_msg m;
		enum sim_resp r;

		if (!__atomic_compare_exchange_n(&s->state, &st, SLOT_BUSY, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		if (s->dst_dev >= sim_world.ndev) {
			s->answer = SIM_R_UNREACHABLE;
			__atomic_store_n(&s->state, SLOT_ANSWERED, __ATOMIC_RELEASE);
			if (s->src_proc < FAB_PROCS)
				ring((int)s->src_proc);
			continue;
		}
		memset(&m, 0, sizeof(m));
		m.peer = s->src_pid;
		m.src_type = s->src_type;
		m.src_qpn = s->src_qpn;
		m.src_qkey = s->src_qkey;
		m.slid = s->slid;
		m.sl = s->sl;
		m.dst_dev = &sim_world.dev[s->dst_dev];
		m.dqpn = s->dqpn;
		m.op = s->op;
		m.se = s->se;
		memcpy(m.imm, s->imm, 4);
		m.raddr = s->raddr;
		m.rkey = s->rkey;
		m.len = s->len;
		if (s->result) {
			m.result = s->iov;
			m.nresult = (int)s->niov;
		} else {
			m.payload = s->iov;
			m.npayload = (int)s->niov;
		}
		m.swap_add = s->swap_add;
		m.compare = s->compare;
		m.qkey = s->qkey;
		m.xrc_srqn = s->xrc_srqn;
		m.grh = s->grh;
		memcpy(m.grh_bytes, s->grh_bytes, 40);
		r = sim_respond(&m);
		sim_dbg("fabric: answered op 0x%x for QP 0x%x: %d", m.op, m.dqpn, r);
		if (r == SIM_R_BLOCKED) {
			/* Our CQ is full: the message waits in the inbox. */
			__atomic_store_n(&s->state, SLOT_POSTED, __ATOMIC_RELEASE);
			continue;
		}
		s->answer = (uint8_t)r;
		s->nak = m.nak;
		s->rnr_timer = m.rnr_timer;
		__atomic_store_n(&s->state, SLOT_ANSWERED, __ATOMIC_RELEASE);
		if (s->src_proc < FAB_PROCS)
			ring((int)s->src_proc);
		served++;
	}
	return served;
}
