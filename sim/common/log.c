#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sys.h"

int sim_log_level = SIM_LOG_WARN;

void sim_log_init(void)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	const char *v = getenv("FVSIM_LOG");

	if (!v || !*v)
		return;
	for (int i = 0; i < 4; i++) {
		if (!strcmp(v, names[i]) || (v[0] == '0' + i && !v[1])) {
			sim_log_level = i;
			return;
		}
	}
}

void sim_log(int level, const char *fmt, ...)
{
	static const char *const tag[] = { "error", "warn", "info", "debug" };
	char buf[512];
	int n;
	va_list ap;

	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	n = snprintf(buf, sizeof(buf), "fvsim[%d] %ld.%06ld %s: ", (int)getpid(),
		     (long)ts.tv_sec % 1000, ts.tv_nsec / 1000, tag[level & 3]);
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	/* One write() per line so lines of concurrent processes do not interleave; a raw
	 * one, so logging never passes through the front's interposers. */
	if (sim_sys_write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}
