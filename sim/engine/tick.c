/* The poller's tick (tick.h). A POSIX timer aimed at one thread (SIGEV_THREAD_ID) raises
 * SIGNAL every period; the kernel delivers it when that thread next runs, on its own CPU,
 * so the pass costs the poller a few microseconds and nobody a wake-up. The handler runs
 * only where that is safe: the thread must have been interrupted in neither libc, the
 * dynamic loader, the vDSO nor this library (which may hold the locks a pass takes), and
 * the device lock must be free. A pass never allocates: the allocator's lock may be held
 * outside libc too (an mmap hook of UCX or Open MPI, called from malloc). After QUIET_NS
 * without work the timer stops, so a program that went idle or blocks is not interrupted;
 * the device thread starts it again with the next work it finds. */
#include "tick.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../common/log.h"
#include "../fabric/mailbox.h"
#include "../model/world.h"
#include "engine.h"
#include "now.h"

/* A real-time signal far from SIGRTMIN, which programs and libraries take first. */
#define SIGNAL SIM_TICK_SIGNAL
#define QUIET_NS 20000000ull
#define MAX_SKIP 32

static timer_t timer;
static bool made;
static pid_t owner;
static long period_ns;
static int hot;
static uint64_t last_work;
static struct { uintptr_t lo, hi; } skip[MAX_SKIP];
static int nskip;

static uintptr_t pc_of(void *uc)
{
#if defined(__x86_64__)
	return (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)((ucontext_t *)uc)->uc_mcontext.pc;
#else
	(void)uc;
	return 0;
#endif
}

static bool unsafe_pc(uintptr_t pc)
{
	if (!pc)
		return true;
	for (int i = 0; i < nskip; i++)
		if (pc >= skip[i].lo && pc < skip[i].hi)
			return true;
	return false;
}

/* One shot, re-armed at the end of each tick: a periodic timer whose period a tick (signal
 * delivery and pass) outlasts on a busy or virtual machine would leave the program no time
 * between ticks at all. */
static void arm(long ns)
{
	struct itimerspec it = { { 0, 0 }, { 0, ns } };

	timer_settime(timer, 0, &it, NULL);
}

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	uint64_t now;
	int done = 0;

	(void)sig;
	(void)si;
	if (!unsafe_pc(pc_of(uc)) && sim_trylock()) {
		if (!sim_world.cfg.step_mode)
			done = sim_engine_tick_pass(64);
		sim_unlock();
	}
	now = sim_now_ns();
	if (done) {
		last_work = now;
		sim_mailbox_wake_parked();
	} else if (now - last_work > QUIET_NS) {
		/* Stopped before hot drops, so a restart (sim_tick_wake) is not undone. */
		arm(0);
		__atomic_store_n(&hot, 0, __ATOMIC_RELEASE);
		sim_mailbox_kick_to(0);
		sim_mailbox_polling(0);
		errno = saved;
		return;
	}
	/* Other processes' news waits for our next tick instead of waking the device thread. */
	sim_mailbox_polling(now);
	arm(period_ns);
	errno = saved;
}

/* Executable segments of libc, the loader, the vDSO and this library. */
static int collect(struct dl_phdr_info *info, size_t size, void *self)
{
	const char *n = info->dlpi_name ? info->dlpi_name : "";
	bool mine = false;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (uintptr_t)self >= lo && (uintptr_t)self < lo + ph->p_memsz)
			mine = true;
	}
	/* the sanitizers' runtimes too: their interceptors hold allocator and report locks */
	if (!mine && !strstr(n, "/libc.so") && !strstr(n, "ld-linux") && !strstr(n, "linux-vdso") &&
	    !strstr(n, "/libm.so") && !strstr(n, "/libasan.so") && !strstr(n, "/libubsan.so") &&
	    !strstr(n, "/liblsan.so") && !strstr(n, "/libtsan.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nskip < MAX_SKIP; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			skip[nskip].lo = info->dlpi_addr + ph->p_vaddr;
			skip[nskip].hi = skip[nskip].lo + ph->p_memsz;
			nskip++;
		}
	}
	return 0;
}

/* A child has no timers: it gets its own with its first CQ taken over. */
static void forked(void)
{
	made = false;
	owner = 0;
	__atomic_store_n(&hot, 0, __ATOMIC_RELEASE);
}

static bool setup(void)
{
	struct sigaction sa;

	period_ns = sim_world.cfg.tick_us * 1000L;
	if (period_ns <= 0)
		return false;
	/* A program that uses the signal itself keeps it; its pollers then rely on the device
	 * thread. */
	if (sigaction(SIGNAL, NULL, &sa) || sa.sa_handler != SIG_DFL) {
		sim_warn("signal %d is taken: no poller tick", SIGNAL);
		return false;
	}
	dl_iterate_phdr(collect, (void *)(uintptr_t)sim_tick_claim);
	pthread_atfork(NULL, NULL, forked);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_tick;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGNAL, &sa, NULL) == 0;
}

void sim_tick_claim(void)
{
	static int ready = -1;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	struct sigevent ev;

	if (!sim_world.cfg.fabric[0] || sim_world.cfg.step_mode || sim_world.cfg.poll_mode)
		return;
	if (ready < 0)
		ready = setup();
	if (!ready)
		return;
	if (made && owner == tid)
		return;
	if (made) {
		arm(0);
		timer_delete(timer);
		made = false;
	}
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGNAL;
	ev._sigev_un._tid = tid;
	if (timer_create(CLOCK_MONOTONIC, &ev, &timer)) {
		sim_warn("no poller tick: timer_create: %s", strerror(errno));
		return;
	}
	made = true;
	owner = tid;
	sim_dbg("poller tick: thread %d, every %ld ns", (int)tid, period_ns);
	__atomic_store_n(&hot, 0, __ATOMIC_RELEASE);
	sim_tick_wake();
}

void sim_tick_wake(void)
{
	if (!made || __atomic_load_n(&hot, __ATOMIC_ACQUIRE))
		return;
	last_work = sim_now_ns();
	__atomic_store_n(&hot, 1, __ATOMIC_RELEASE);
	sim_mailbox_kick_to(owner);
	arm(period_ns);
}

bool sim_tick_hot(void)
{
	return __atomic_load_n(&hot, __ATOMIC_ACQUIRE);
}
