/* wakeup: what it costs on this machine to make another thread, or this one, run some
 * code now. These costs bound the software device's round trips between processes for
 * programs that poll memory (sim/README.md, "Programs that poll memory"): each hop of
 * a message there is a timer signal, a signal or futex wake-up from the other process,
 * or (not used) a write fault. Prints microseconds per event:
 *   syscall        getppid()
 *   self signal    tgkill() to this thread, handler, return
 *   write fault    a store to a read-only page, SIGSEGV handler skips it, return
 *   memory hop     two threads on two CPUs pass a counter through memory (half a round trip)
 *   futex hop      the same, each sleeping in FUTEX_WAIT until the other wakes it
 *   signal hop     two spinning threads on two CPUs: each handler signals the other
 *   timer late     how much later than asked a 20 us one-shot timer signal arrives
 *   watchpoint     whether a hardware write watchpoint (perf_event_open) fires here
 * Every part is bounded in time (at most 20000 events or 2 s). x86-64 and Linux only. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define N 20000
#define LIMIT_NS 2000000000ull
#define SIG (SIGRTMIN + 2)

static volatile unsigned word[2];
static volatile int tids[2], hops, stop;
static int mode, pid;
static __thread int me;
static timer_t timer;

static unsigned long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void on_sig(int s)
{
	(void)s;
	hops++;
	if (mode == 2 && !stop)
		syscall(SYS_tgkill, pid, tids[!me], SIG);
}

/* The store below is `movl %eax, (%rdx)`: two bytes to skip. */
static void on_segv(int s, siginfo_t *si, void *uc)
{
	(void)s;
	(void)si;
	((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP] += 2;
}

static void pin(int cpu)
{
	cpu_set_t cs;

	CPU_ZERO(&cs);
	CPU_SET(cpu, &cs);
	pthread_setaffinity_np(pthread_self(), sizeof(cs), &cs);
}

static void futex(volatile unsigned *w, int op, unsigned v)
{
	struct timespec ts = { 0, 10000000 };

	syscall(SYS_futex, w, op, v, op == FUTEX_WAIT_PRIVATE ? &ts : NULL, NULL, 0);
}

/* mode 0: memory, 1: futex; thread 0 passes i to thread 1 and waits for it back. */
static void *hop_main(void *arg)
{
	unsigned long long end = now() + LIMIT_NS;

	me = (int)(long)arg;
	pin(me);
	tids[me] = (int)syscall(SYS_gettid);
	if (mode == 2) {
		while (!stop)
			;
		return NULL;
	}
	for (unsigned i = 1; i <= N / 2 && now() < end; i++) {
		volatile unsigned *out = &word[!me], *in = &word[me];

		if (me == 0) {
			*out = i;
			if (mode)
				futex(out, FUTEX_WAKE_PRIVATE, 1);
		}
		while (*in != i && now() < end)
			if (mode)
				futex(in, FUTEX_WAIT_PRIVATE, i - 1);
		if (me == 1) {
			*out = i;
			if (mode)
				futex(out, FUTEX_WAKE_PRIVATE, 1);
		}
		if (me == 0)
			hops += 2;
	}
	return NULL;
}

static void two_threads(const char *what, int m)
{
	pthread_t th[2];
	unsigned long long t0;

	mode = m;
	hops = 0;
	stop = 0;
	word[0] = word[1] = 0;
	tids[0] = tids[1] = 0;
	for (long i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, hop_main, (void *)i);
	while (!tids[0] || !tids[1])
		;
	t0 = now();
	if (m == 2) {
		syscall(SYS_tgkill, pid, tids[0], SIG);
		while (hops < N && now() - t0 < LIMIT_NS)
			usleep(1000);
		stop = 1;
	}
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	printf("%-13s %8.2f us  (%d hops)\n", what, hops ? (double)(now() - t0) / hops / 1000 : -1.0,
	       hops);
}

static void on_timer(int s)
{
	(void)s;
	hops++;
}

static void timer_late(void)
{
	struct sigevent ev;
	struct sigaction sa;
	unsigned long long sum = 0;
	int n = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_timer;
	sigaction(SIGRTMIN + 3, &sa, NULL);
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGRTMIN + 3;
	ev._sigev_un._tid = (int)syscall(SYS_gettid);
	timer_create(CLOCK_MONOTONIC, &ev, &timer);
	for (; n < 2000; n++) {
		struct itimerspec it = { { 0, 0 }, { 0, 20000 } };
		unsigned long long t0 = now();
		int seen = hops;

		timer_settime(timer, 0, &it, NULL);
		while (hops == seen && now() - t0 < 10000000)
			; /* spins, as a poller does */
		sum += now() - t0 - 20000;
	}
	timer_delete(timer);
	printf("%-13s %8.2f us  (%d timers of 20 us)\n", "timer late", (double)sum / n / 1000, n);
}

static void watchpoint(void)
{
	static volatile unsigned target[2];
	struct perf_event_attr a;
	unsigned long long count = 0;
	int fd;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (unsigned long)&target[1];
	a.bp_len = HW_BREAKPOINT_LEN_4;
	a.sample_period = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		printf("%-13s unavailable (perf_event_open: %s)\n", "watchpoint", strerror(errno));
		return;
	}
	for (int i = 0; i < 100; i++)
		target[1] = (unsigned)i;
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		count = 0;
	close(fd);
	printf("%-13s %s (%llu of 100 stores seen)\n", "watchpoint", count ? "fires" : "never fires",
	       count);
}

int main(void)
{
	struct sigaction sa;
	unsigned long long t0;
	volatile unsigned *ro;

	pid = getpid();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigaction(SIG, &sa, NULL);
	t0 = now();
	for (int i = 0; i < N; i++)
		syscall(SYS_getppid);
	printf("%-13s %8.2f us\n", "syscall", (double)(now() - t0) / N / 1000);
	t0 = now();
	for (int i = 0; i < N; i++)
		syscall(SYS_tgkill, pid, (int)syscall(SYS_gettid), SIG);
	printf("%-13s %8.2f us  (with a gettid)\n", "self signal", (double)(now() - t0) / N / 1000);
	sa.sa_handler = NULL;
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro != MAP_FAILED) {
		t0 = now();
		for (int i = 0; i < N; i++)
			__asm__ volatile("movl %%eax, (%%rdx)" : : "a"(i), "d"(ro) : "memory");
		printf("%-13s %8.2f us\n", "write fault", (double)(now() - t0) / N / 1000);
	}
	signal(SIGSEGV, SIG_DFL);
	two_threads("memory hop", 0);
	two_threads("futex hop", 1);
	two_threads("signal hop", 2);
	timer_late();
	watchpoint();
	return 0;
}
