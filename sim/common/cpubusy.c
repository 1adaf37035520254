#include "cpubusy.h"

#include <stdlib.h>

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
#define PARK_FOR_NS 50000000ull /* then parks this long before it tries spinning again */
#define WAIT_SHARE 3 /* contended: waited more than a third of the time it wanted to run */

struct cpu_mark {
	uint64_t at, ran, waited;
};

static __thread struct cpu_mark mark;
static __thread uint64_t park_until;

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

bool sim_cpu_parking(uint64_t now)
{
	return now < park_until;
}

bool sim_cpu_contended(uint64_t now, bool spinning)
{
	struct cpu_mark m;
	uint64_t ran, waited;

	if (now < park_until)
		return true;
	if (!spinning || !mark.at) {
		/* A new spinning window starts here. */
		if (!sample(&mark, now))
			park_until = UINT64_MAX; /* no schedstat: always park, as before */
		return park_until > now;
	}
	if (now - mark.at < WINDOW_NS)
		return false;
	if (!sample(&m, now))
		return false;
	ran = m.ran - mark.ran;
	waited = m.waited - mark.waited;
	mark = m;
	if (waited * WAIT_SHARE > ran + waited) {
		sim_dbg("poller waited for a CPU %llu%% of the time: parks between polls for %llu ms",
			(unsigned long long)(waited * 100 / (ran + waited)), PARK_FOR_NS / 1000000);
		park_until = now + PARK_FOR_NS;
		mark.at = 0;
		return true;
	}
	return false;
}
