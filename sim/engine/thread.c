#include "thread.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/cpubusy.h"
#include "../common/log.h"
#include "../model/world.h"
#include "../fabric/mailbox.h"
#include "engine.h"
#include "now.h"
#include "tick.h"

/* Last time (sim_now_ns) an application's poll ran a pass. */
static uint64_t driven_ns;
/* Within this long of one, the application is taken to keep driving. */
#define DRIVEN_NS 2000000ull

/* A thread that has found its CQs empty for this long asks whether to park between polls
 * (common/cpubusy.h); parked, it waits at most PARK_NS each time (news rung by another
 * process, or the device thread finishing work, ends it early). */
#define SPIN_NS 10000ull
#define PARK_NS 200000L
/* While an application drives the device, its device thread sleeps this long at most:
 * news the poller does not take is handed to it by the other side (mailbox.h). */
#define DRIVEN_WAIT_NS 500000L
/* When this thread's polls began to find nothing (0: the last one found something);
 * whether it parked since it last judged the CPUs. */
static __thread uint64_t empty_since;
static __thread bool parked;
/* Whether this thread's polls have found anything yet. */
static __thread bool served;

static pid_t running_in; /* pid of the process whose thread runs, 0 if none */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

/* The kernel's sched_attr (sched_setattr(2)); glibc has no wrapper. */
struct slice_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

/* A woken task preempts the running one at once only if its time slice is shorter
 * (EEVDF, Linux 6.12 and later); otherwise it may wait until the other's slice ends, a
 * scheduler tick, while a busy-polling application spins on the CPU it needs. The device
 * thread runs in short bursts, so a short slice (the kernel's minimum) costs nothing.
 * Older kernels refuse or ignore it. */
static void short_slice(void)
{
	struct slice_attr a = { sizeof(a), 0 /* SCHED_OTHER */, 0, -10, 0, 100000, 0, 0 };

	if (syscall(SYS_sched_setattr, 0, &a, 0))
		sim_dbg("device thread keeps the default time slice");
}

/* Spin (yielding) while work keeps coming, then back off to short sleeps: a program
 * polling its CQ gets microsecond turnaround, an idle one costs little CPU. Programs that
 * busy-poll their CQs compete with us for the CPUs; a higher priority, where we may take
 * it, lets the device run as soon as a short sleep ends instead of after a poller's time
 * slice (the difference between microseconds and milliseconds per round trip). */
static void *device_main(void *arg)
{
	unsigned idle = 0;

	(void)arg;
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -10))
		sim_dbg("device thread keeps the default priority");
	short_slice();
	for (;;) {
		uint32_t bell = sim_mailbox_bell();
		int done = 0;
		bool step;

		sim_lock();
		step = sim_world.cfg.step_mode;
		if (!step)
			done = sim_engine_pass(64);
		sim_unlock();
		if (done) {
			idle = 0;
			sim_tick_wake();
			/* A parked poller may be waiting for what this pass wrote. */
			sim_mailbox_wake_parked();
			continue;
		}
		idle++;
		/* Sleeps end early when another process of the fabric rings our doorbell. */
		if (step)
			sim_mailbox_wait(bell, 1000000);
		else if (sim_tick_hot() ||
			 sim_now_ns() - __atomic_load_n(&driven_ns, __ATOMIC_RELAXED) < DRIVEN_NS)
			sim_mailbox_wait(bell, DRIVEN_WAIT_NS);
		else if (idle > 50000)
			sim_mailbox_wait(bell, 1000000);
		else if (idle > 200)
			sim_mailbox_wait(bell, 20000);
		else
			sched_yield();
	}
	return NULL;
}

bool sim_thread_drive(void)
{
	bool ran = false;

	if (!sim_trylock())
		return false;
	if (!sim_world.cfg.step_mode) {
		sim_engine_pass(64);
		__atomic_store_n(&driven_ns, sim_now_ns(), __ATOMIC_RELAXED);
		ran = true;
	}
	sim_unlock();
	return ran;
}

/* This thread found a completion. It counts as polling as long as after a poll that
 * found nothing: the program acts on the completion (posts its next work) and is back
 * within microseconds, or later if it is preempted meanwhile. Counting it as gone sooner
 * makes the other side wake our device thread, which runs at a higher priority and so
 * preempts whichever poller shares its CPU; that poller is then late in turn, its peer
 * wakes its device thread, and so on: a chain of wake-ups in which every poller waits for
 * a CPU and judges the CPUs contended (common/cpubusy.h). News a poller that stopped for
 * good leaves untaken is handed to the device thread by the other side (mailbox.h). */
static void found_one(uint64_t now)
{
	empty_since = 0;
	sim_mailbox_polling(now);
	/* A spinning poller that keeps losing its CPU while it waits may find each completion
	 * as soon as it runs again, never polling in vain long enough to judge the CPUs: judge
	 * them here too. A park period begun here starts with its next empty poll. */
	if (!parked)
		sim_cpu_contended(now, true);
}

/* Busy pollers on a fabric serve the news themselves. Two processes that both spin, plus
 * their device threads and whatever else runs, share few CPUs: a device thread woken for
 * each message takes the CPU from a poller that would have served it anyway. So a thread
 * marks the process as polling (other processes' news then skips our device thread).
 * While it gets a CPU whenever it wants one, the poller spins on: the answer comes within
 * microseconds. When it has to wait for the CPU (common/cpubusy.h), a poller that spins
 * for long holds a CPU its peer needs and, once it has used its share, waits a whole time
 * slice behind the other tasks when its completion arrives; so then it parks whenever it
 * finds nothing: a parked thread costs nothing and is woken by the news with the priority
 * the scheduler gives to sleepers. The counter is sampled before our own pass: anything rung
 * before that pass was seen by it, anything later ends the park. */
int sim_thread_poll(int (*poll)(void *), void *arg)
{
	int got = poll(arg);
	uint32_t news;
	uint64_t now;

	if (got)
		goto found;
	news = sim_mailbox_news();
	if (!sim_thread_drive()) {
		/* The device thread is at work. */
		if ((got = poll(arg)))
			goto found;
		return 0;
	}
	if ((got = poll(arg)))
		goto found;
	if (!sim_mailbox_present())
		return 0;
	now = sim_now_ns();
	sim_mailbox_polling(now);
	if (!empty_since) {
		empty_since = now;
		return 0;
	}
	/* Within a park period a thread parks at once, without the short spin: what it waits
	 * for comes from a peer that needs a CPU, quite likely this one (a woken thread is
	 * put where its waker runs), and spinning on only delays it.
	 * Until its polls have found something, a thread does not judge the CPUs: before the
	 * traffic starts (its peer still setting up, exchanging addresses) the time it waits
	 * for a CPU says nothing about the round trips to come, and one such window would
	 * park it for a whole period. */
	if (!sim_cpu_parking(now) &&
	    (now - empty_since < SPIN_NS || !served || !sim_cpu_contended(now, !parked))) {
		parked = false;
		return 0;
	}
	parked = true;
	sim_mailbox_park(news, PARK_NS);
	sim_thread_drive();
	sim_mailbox_polling(sim_now_ns());
	if (!(got = poll(arg)))
		return 0;
found:
	served = true;
	if (empty_since)
		found_one(sim_now_ns());
	return got;
}

void sim_thread_app_blocks(void)
{
	sim_thread_drive();
	empty_since = 0;
	sim_mailbox_polling(0);
	__atomic_store_n(&driven_ns, 0, __ATOMIC_RELAXED);
	sim_mailbox_wake_self();
}

static void atfork_child(void);

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}

/* A child forked from a process with open devices keeps (copies of) them but not the
 * thread: start one for it right away. */
static void atfork_child(void)
{
	pthread_mutex_init(&start_lock, NULL);
	if (!sim_list_empty(&sim_world.ctxs))
		sim_thread_ensure();
}

static bool memory_pollers;

void sim_thread_for_memory_pollers(void)
{
	__atomic_store_n(&memory_pollers, true, __ATOMIC_RELEASE);
	sim_thread_ensure();
	sim_tick_claim();
}

void sim_thread_ensure(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_attr_t attr;
	pthread_t th;

	if (sim_world.cfg.step_mode ||
	    (sim_world.cfg.poll_mode && !__atomic_load_n(&memory_pollers, __ATOMIC_ACQUIRE)))
		return;
	pthread_once(&once, register_atfork);
	pthread_mutex_lock(&start_lock);
	if (running_in != getpid()) {
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&th, &attr, device_main, NULL) == 0)
			running_in = getpid();
		else
			sim_err("cannot start the device thread");
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_unlock(&start_lock);
}
