#include "thread.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/log.h"
#include "../model/world.h"
#include "../fabric/mailbox.h"
#include "engine.h"
#include "now.h"

/* Last time (sim_now_ns) an application's poll ran a pass. */
static uint64_t driven_ns;
/* Within this long of one, the application is taken to keep driving. */
#define DRIVEN_NS 2000000ull

static pid_t running_in; /* pid of the process whose thread runs, 0 if none */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

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
			continue;
		}
		idle++;
		/* Sleeps end early when another process of the fabric rings our doorbell. */
		if (step || idle > 50000)
			sim_mailbox_wait(bell, 1000000);
		else if (sim_now_ns() - __atomic_load_n(&driven_ns, __ATOMIC_RELAXED) < DRIVEN_NS)
			sim_mailbox_wait(bell, 50000);
		else if (idle > 200)
			sim_mailbox_wait(bell, 20000);
		else
			sched_yield();
	}
	return NULL;
}

void sim_thread_drive(void)
{
	if (!sim_trylock())
		return;
	if (!sim_world.cfg.step_mode) {
		sim_engine_pass(64);
		__atomic_store_n(&driven_ns, sim_now_ns(), __ATOMIC_RELAXED);
	}
	sim_unlock();
}

void sim_thread_app_blocks(void)
{
	sim_thread_drive();
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

void sim_thread_ensure(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_attr_t attr;
	pthread_t th;

	if (sim_world.cfg.step_mode || sim_world.cfg.poll_mode)
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
