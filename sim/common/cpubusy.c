#include "cpubusy.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sys.h"

/* Each thread measures itself: /proc/thread-self/schedstat gives the time it ran and the
 * time it sat runnable waiting for a CPU. A spinning thread on a machine with a CPU to
 * spare hardly waits; one that shares its CPU with other runnable tasks (builds, the
 * peer on the same CPU, a lower priority than theirs) waits for a good part of the time.
 * Only spinning windows are judged: a thread that parks waits for its wake-up as well,
 * which on a virtual machine whose idle CPU must be woken up counts as waiting too. */
/* Judged every 8 ms of spinning: long enough that one preemption (a task woken for a moment,
 * up to a slice of a few ms) stays under the share below, so a lone hiccup does not park two
 * busy pollers for a whole run; a CPU shared for good shows its share in any window. */
#define WINDOW_NS 8000000ull
#define CONFIRM_NS 500000ull /* a contended window with a crowd: the crowd counted again */
#define PARK_FOR_NS 50000000ull /* then parks this long before it tries spinning again */
#define WAIT_SHARE 3 /* contended: waited more than a third of the time it wanted to run */

struct cpu_mark {
	uint64_t at, ran, waited;
};

static __thread struct cpu_mark mark;
static __thread uint64_t park_until;
/* The last window was contended with more tasks runnable than CPUs: the count is taken
 * again CONFIRM_NS later. */
static __thread bool confirming;
static __thread uint64_t share; /* percent of the contended window spent waiting */

static bool sample(struct cpu_mark *m, uint64_t now)
{
	char buf[96], *end;
	int fd = sim_sys_open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC, 0);
	ssize_t n;

	if (fd < 0)
		return false;
	n = (ssize_t)syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	sim_sys_close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	m->ran = strtoull(buf, &end, 10);
	m->waited = strtoull(end, NULL, 10);
	m->at = now;
	return true;
}

/* Tasks runnable on the machine at this moment (/proc/loadavg: "... running/threads ...",
 * or a file of that form named by FVSIM_LOADAVG, for tests), this one included; -1 when
 * unknown. */
static long runnable_now(void)
{
	const char *path = getenv("FVSIM_LOADAVG");
	char buf[128], *p;
	int fd = sim_sys_open(path && *path ? path : "/proc/loadavg", O_RDONLY | O_CLOEXEC, 0);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = (ssize_t)syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	sim_sys_close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strchr(buf, '/');
	while (p && p > buf && p[-1] != ' ')
		p--;
	return p ? strtol(p, NULL, 10) : -1;
}

/* CPUs this thread may run on. The runnable count above is the machine's, so a thread
 * held to fewer CPUs than the machine has (taskset) compares it with its own few: it may
 * then park where it need not, never spin on a CPU it shares. */
static long cpus_mine(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return sysconf(_SC_NPROCESSORS_ONLN);
	return CPU_COUNT(&set);
}

bool sim_cpu_parking(uint64_t now)
{
	return now < park_until;
}

bool sim_cpu_contended(uint64_t now, bool spinning)
{
	struct cpu_mark m;
	uint64_t ran, waited;
	long runnable;

	if (now < park_until)
		return true;
	if (!spinning || !mark.at) {
		/* A new spinning window starts here. */
		if (!sample(&mark, now))
			park_until = UINT64_MAX; /* no schedstat: always park, as before */
		return park_until > now;
	}
	if (now - mark.at < (confirming ? CONFIRM_NS : WINDOW_NS))
		return false;
	if (!sample(&m, now))
		return false;
	ran = m.ran - mark.ran;
	waited = m.waited - mark.waited;
	mark = m;
	if (!confirming) {
		if (waited * WAIT_SHARE <= ran + waited)
			return false;
		share = waited * 100 / (ran + waited); /* waited > 0 here */
	}
	runnable = runnable_now();
	/* A CPU shared for good has more runnable tasks than CPUs whenever one looks, and
	 * again a moment later; a moment's crowd (a task woken for a while, two pollers put
	 * on one CPU until the balancer parts them) has gone by the end of the window, or by
	 * the end of a short second one (judged by the count alone: over so short a time
	 * the thread may not even have been switched, so its times may not have moved). */
	if (runnable >= 0 && runnable <= cpus_mine()) {
		sim_dbg("poller waited for a CPU %llu%% of the time, but %ld tasks are runnable now: spins on",
			(unsigned long long)share, runnable);
		confirming = false;
		return false;
	}
	if (!confirming) {
		confirming = true;
		return false;
	}
	sim_dbg("poller waited for a CPU %llu%% of the time, %ld tasks runnable: parks between polls for %llu ms",
		(unsigned long long)share, runnable, PARK_FOR_NS / 1000000);
	confirming = false;
	park_until = now + PARK_FOR_NS;
	mark.at = 0;
	return true;
}
