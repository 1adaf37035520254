#include "mailbox.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/log.h"
#include "owners.h"

_Static_assert(SIM_MAILBOX_SLOTS == FAB_SLOTS, "one inbox slot per mailbox slot");

static struct fab_slot *slot_of(int ticket)
{
	return &sim_fab->proc[ticket / FAB_SLOTS].slot[ticket % FAB_SLOTS];
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void wake(uint32_t *word, int n)
{
	syscall(SYS_futex, word, FUTEX_WAKE, n, NULL, NULL, 0);
}

static void wake_device(struct fab_proc *p)
{
	__atomic_add_fetch(&p->dbell, 1, __ATOMIC_SEQ_CST);
	wake(&p->dbell, 1);
}

/* Whether a thread of process p polled a CQ lately (and will see news in its next pass). */
static bool polling(struct fab_proc *p)
{
	uint64_t polled = __atomic_load_n(&p->poll_ns, __ATOMIC_SEQ_CST);

	return polled && now_ns() - polled < FAB_POLLING_NS;
}

/* Until then a ring of ours counted on a poller that may stop (CLOCK_MONOTONIC ns). */
static uint64_t nudge_due;

/* A thread of the process that polls (spinning) serves the news in its next pass: waking
 * the device thread as well would only take the CPU from it. bell and parked, and bell
 * and poll_ns, are each written by one side and read by the other in opposite order
 * (sequentially consistent), so either the ringer sees the waiter or the waiter sees the
 * new bell value. false: nobody was woken, the process counted as polling. */
static bool ring(int proc, bool force)
{
	struct fab_proc *p = &sim_fab->proc[proc];

	__atomic_add_fetch(&p->bell, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&p->parked, __ATOMIC_SEQ_CST)) {
		wake(&p->bell, INT_MAX);
		return true;
	}
	if (!force && polling(p)) {
		uint32_t tid = __atomic_load_n(&p->kick, __ATOMIC_ACQUIRE);

		/* A signal reaches a running thread on its own CPU within microseconds. */
		if (tid)
			syscall(SYS_tgkill, p->pid, (pid_t)tid, SIM_TICK_SIGNAL);
		__atomic_store_n(&nudge_due, now_ns() + FAB_POLLING_NS, __ATOMIC_RELAXED);
		return false;
	}
	wake_device(p);
	return true;
}

/* The poller a ring counted on may stop polling before its next pass (a program that
 * polls until its completion and then waits on memory): once it no longer counts as
 * polling, the side waiting for it wakes its device thread, once per message. */
static void nudge(struct fab_slot *s, int proc)
{
	struct fab_proc *p = &sim_fab->proc[proc];

	if (!__atomic_load_n(&s->unrung, __ATOMIC_ACQUIRE) || polling(p) ||
	    __atomic_load_n(&p->parked, __ATOMIC_SEQ_CST))
		return;
	if (__atomic_exchange_n(&s->unrung, 0, __ATOMIC_ACQ_REL))
		wake_device(p);
}

static struct fab_proc *mine(void)
{
	int p;

	return sim_fab && (p = sim_fab_my_proc_if_claimed()) >= 0 ? &sim_fab->proc[p] : NULL;
}

bool sim_mailbox_present(void)
{
	return mine() != NULL;
}

void sim_mailbox_kick_to(pid_t tid)
{
	struct fab_proc *p = mine();

	if (p)
		__atomic_store_n(&p->kick, (uint32_t)tid, __ATOMIC_RELEASE);
}

uint32_t sim_mailbox_news(void)
{
	struct fab_proc *p = mine();

	return p ? __atomic_load_n(&p->bell, __ATOMIC_SEQ_CST) : 0;
}

void sim_mailbox_polling(uint64_t now)
{
	struct fab_proc *p = mine();

	if (p)
		__atomic_store_n(&p->poll_ns, now, __ATOMIC_SEQ_CST);
}

void sim_mailbox_park(uint32_t seen, long ns)
{
	struct fab_proc *p = mine();
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };

	if (!p)
		return;
	/* Back in time to hand on news a poller may leave behind (nudge). */
	{
		uint64_t due = __atomic_load_n(&nudge_due, __ATOMIC_RELAXED), now = now_ns();

		if (due > now && (long)(due - now) < ns) {
			ts.tv_sec = 0;
			ts.tv_nsec = (long)(due - now) + 1000;
		}
	}
	__atomic_add_fetch(&p->parked, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &p->bell, FUTEX_WAIT, seen, &ts, NULL, 0);
	__atomic_sub_fetch(&p->parked, 1, __ATOMIC_SEQ_CST);
}

void sim_mailbox_wake_parked(void)
{
	struct fab_proc *p = mine();

	if (p && __atomic_load_n(&p->parked, __ATOMIC_SEQ_CST)) {
		__atomic_add_fetch(&p->bell, 1, __ATOMIC_SEQ_CST);
		wake(&p->bell, INT_MAX);
	}
}

uint32_t sim_mailbox_bell(void)
{
	struct fab_proc *p = mine();

	return p ? __atomic_load_n(&p->dbell, __ATOMIC_SEQ_CST) : 0;
}

void sim_mailbox_wake_self(void)
{
	struct fab_proc *p = mine();

	if (p)
		wake_device(p);
}

void sim_mailbox_wait(uint32_t seen, long ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };
	struct fab_proc *p = mine();

	if (!p) {
		nanosleep(&ts, NULL);
		return;
	}
	/* Shared (not private) futex: the waker is another process. */
	syscall(SYS_futex, &p->dbell, FUTEX_WAIT, seen, &ts, NULL, 0);
}

int sim_mailbox_post(int dev, const struct sim_wire *m, int *ticket, pid_t *peer)
{
	int owner = sim_fabric_owner(dev, m->dqpn, peer);

	if (owner < 0)
		return ENOENT;
	for (int i = 0; i < FAB_SLOTS; i++) {
		struct fab_slot *s = &sim_fab->proc[owner].slot[i];
		uint32_t st = SLOT_FREE;

		/* An answer nobody came back for (its requester died) is reclaimed too. */
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == SLOT_ANSWERED &&
		    !sim_fab_alive(s->src_pid))
			st = SLOT_ANSWERED;
		if (!__atomic_compare_exchange_n(&s->state, &st, SLOT_CLAIMED, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		s->src_pid = getpid();
		s->src_proc = (uint32_t)sim_fab_my_proc();
		/* Only the iovecs in use: the array is sized for the largest gather list. */
		memcpy(&s->msg, m, offsetof(struct sim_wire, iov) + m->niov * sizeof(m->iov[0]));
		s->msg.dst_dev = (uint16_t)dev;
		__atomic_store_n(&s->unrung, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->state, SLOT_POSTED, __ATOMIC_RELEASE);
		*ticket = owner * FAB_SLOTS + i;
		sim_dbg("fabric: QP 0x%x posted op 0x%x to QP 0x%x (pid %d)", m->src_qpn, m->op,
			m->dqpn, (int)*peer);
		if (!ring(owner, false))
			__atomic_store_n(&s->unrung, 1, __ATOMIC_RELEASE);
		return 0;
	}
	return EAGAIN;
}

int sim_mailbox_answer(int ticket, pid_t peer, struct sim_wire_answer *a)
{
	struct fab_slot *s = slot_of(ticket);
	uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);

	if (st != SLOT_ANSWERED) {
		if (sim_fab_alive(peer)) {
			if (st == SLOT_POSTED)
				nudge(s, ticket / FAB_SLOTS);
			return EAGAIN;
		}
		sim_mailbox_cancel(ticket, peer);
		return ESRCH;
	}
	*a = s->answer;
	__atomic_store_n(&s->state, SLOT_FREE, __ATOMIC_RELEASE);
	return 0;
}

int sim_mailbox_withdraw(int ticket, pid_t peer)
{
	struct fab_slot *s = slot_of(ticket);

	/* The owner may requeue it (its CQ was full) and take it again: retry the swap. */
	for (int i = 0; i < 100000; i++) {
		uint32_t st = SLOT_POSTED;
		struct timespec ts = { 0, 10000 };

		if (__atomic_compare_exchange_n(&s->state, &st, SLOT_FREE, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return 0;
		if (st == SLOT_ANSWERED)
			return EALREADY;
		if (st != SLOT_BUSY || !sim_fab_alive(peer))
			break;
		nanosleep(&ts, NULL);
	}
	/* The owner died (or hangs) in the middle of it. */
	__atomic_store_n(&s->state, SLOT_FREE, __ATOMIC_RELEASE);
	return 0;
}

void sim_mailbox_cancel(int ticket, pid_t peer)
{
	if (sim_mailbox_withdraw(ticket, peer) == EALREADY)
		__atomic_store_n(&slot_of(ticket)->state, SLOT_FREE, __ATOMIC_RELEASE);
}

int sim_mailbox_inbox(void)
{
	return sim_fab ? sim_fab_my_proc() : -1;
}

const struct sim_wire *sim_mailbox_take(int inbox, int i, pid_t *src)
{
	struct fab_slot *s = &sim_fab->proc[inbox].slot[i];
	uint32_t st = SLOT_POSTED;

	if (!__atomic_compare_exchange_n(&s->state, &st, SLOT_BUSY, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return NULL;
	*src = s->src_pid;
	return &s->msg;
}

void sim_mailbox_reply(int inbox, int i, const struct sim_wire_answer *a)
{
	struct fab_slot *s = &sim_fab->proc[inbox].slot[i];

	s->answer = *a;
	__atomic_store_n(&s->unrung, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->state, SLOT_ANSWERED, __ATOMIC_RELEASE);
	if (s->src_proc < FAB_PROCS && !ring((int)s->src_proc, false))
		__atomic_store_n(&s->unrung, 1, __ATOMIC_RELEASE);
}

void sim_mailbox_nudge_answers(int inbox)
{
	for (int i = 0; i < FAB_SLOTS; i++) {
		struct fab_slot *s = &sim_fab->proc[inbox].slot[i];

		if (__atomic_load_n(&s->unrung, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == SLOT_ANSWERED &&
		    s->src_proc < FAB_PROCS)
			nudge(s, (int)s->src_proc);
	}
}

void sim_mailbox_requeue(int inbox, int i)
{
	__atomic_store_n(&sim_fab->proc[inbox].slot[i].state, SLOT_POSTED, __ATOMIC_RELEASE);
}

int sim_mailbox_send_cm(int inbox, const struct sim_wire_cm *m)
{
	struct fab_proc *to = &sim_fab->proc[inbox];
	int err = 0;

	sim_fab_lock();
	if (!sim_fab_alive(to->pid))
		err = ESRCH;
	else if (to->cm_head - to->cm_tail >= FAB_CM_SLOTS)
		err = EAGAIN;
	else
		to->cm[to->cm_head++ % FAB_CM_SLOTS] = *m;
	sim_fab_unlock();
	if (!err)
		ring(inbox, true); /* no answer comes back to check on it */
	return err;
}

bool sim_mailbox_take_cm(int inbox, struct sim_wire_cm *m)
{
	struct fab_proc *me = &sim_fab->proc[inbox];
	bool got = false;

	sim_fab_lock();
	if (me->cm_head != me->cm_tail) {
		*m = me->cm[me->cm_tail++ % FAB_CM_SLOTS];
		got = true;
	}
	sim_fab_unlock();
	return got;
}

int sim_mailbox_eth_peers(int *inbox, int max)
{
	int self = sim_fab_my_proc_if_claimed(), n = 0;

	for (int i = 0; i < FAB_PROCS && n < max; i++)
		if (i != self && __atomic_load_n(&sim_fab->eth[i].listen, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&sim_fab->proc[i].pid, __ATOMIC_RELAXED) != getpid())
			inbox[n++] = i;
	return n;
}

/* A dead listener's ring fills up and stays full: only then is its pid checked. */
int sim_mailbox_send_frame(int inbox, const uint8_t *f, uint32_t len)
{
	struct fab_eth *to = &sim_fab->eth[inbox];
	int err = 0;

	if (len > FAB_FRAME_MAX)
		return EMSGSIZE;
	sim_fab_lock();
	if (to->head - to->tail >= FAB_FRAMES) {
		err = sim_fab_alive(sim_fab->proc[inbox].pid) ? EAGAIN : ESRCH;
	} else {
		struct fab_frame *slot = &to->frame[to->head % FAB_FRAMES];

		slot->len = len;
		memcpy(slot->data, f, len);
		/* Published last: the owner peeks at head without the lock. */
		__atomic_store_n(&to->head, to->head + 1, __ATOMIC_RELEASE);
	}
	sim_fab_unlock();
	if (!err)
		ring(inbox, true); /* a frame has no answer to wait for it */
	return err;
}

uint32_t sim_mailbox_take_frame(int inbox, uint8_t *buf)
{
	struct fab_eth *me = &sim_fab->eth[inbox];
	uint32_t len = 0;

	/* Unlocked peek first: a pass of the engine asks every time. */
	if (__atomic_load_n(&me->head, __ATOMIC_ACQUIRE) == me->tail)
		return 0;
	sim_fab_lock();
	if (me->head != me->tail) {
		const struct fab_frame *slot = &me->frame[me->tail++ % FAB_FRAMES];

		len = slot->len;
		memcpy(buf, slot->data, len);
	}
	sim_fab_unlock();
	return len;
}
