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

/* Last time (sim_now_ns) an application's poll ran a pass. */
static uint64_t driven_ns;
/* Within this long of one, the application is taken to keep driving. */
#define DRIVEN_NS 2000000ull

/* A thread that has found its CQs empty for this long parks between polls, at most
 * PARK_NS each time (news rung by another process, or the device thread finishing work,
 * ends it early), unless it gets a CPU whenever it wants one (common/cpubusy.h). */
#define SPIN_NS 10000ull
#define PARK_NS 200000L
/* While an application drives the device, its device thread sleeps this long at most:
 * news the poller does not take is handed to it by the other side (mailbox.h). */
#define DRIVEN_WAIT_NS 500000L
/* When this thread's polls began to find nothing (0: the last one found something);
 * whether it parked since it last judged the CPUs. */
static __thread uint64_t empty_since;
static __thread bool parked;

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
			/* A parked poller may be waiting for what this pass wrote. */
			sim_mailbox_wake_parked();
			continue;
		}
		idle++;
		/* Sleeps end early when another process of the fabric rings our doorbell. */
		if (step)
			sim_mailbox_wait(bell, 1000000);
		else if (sim_now_ns() - __atomic_load_n(&driven_ns, __ATOMIC_RELAXED) < DRIVEN_NS)
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

/* This thread found a completion. A busy poller is back within microseconds, so the
 * process keeps counting as polling a little longer; news it does not take in time is
 * handed to the device thread by the other side (mailbox.h), so nothing is lost if it
 * does not come back. */
static void found_one(void)
{
	empty_since = 0;
	sim_mailbox_poll_found();
}

/* Busy pollers on a fabric serve the news themselves. Two processes that both spin, plus
 * their device threads and whatever else runs, share few CPUs: a device thread woken for
 * each message takes the CPU from a poller that would have served it anyway. So a thread
 * marks the process as polling (other processes' news then skips our device thread).
 * While it gets a CPU whenever it wants one, the poller spins on: the answer comes within
 * microseconds. When it has to wait for the CPU (common/cpubusy.h), a poller that spins
 * for long holds a CPU its peer needs and, once it has used its share, waits a whole time
 * slice behind the other tasks when its completion arrives; so then it spins briefly and
 * parks: a parked thread costs nothing and is woken by the news with the priority the
 * scheduler gives to sleepers. The counter is sampled before our own pass: anything rung
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
	if (now - empty_since < SPIN_NS || !sim_cpu_contended(now, !parked)) {
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
	if (empty_since)
		found_one();
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
