/* Whether the calling thread has to fight for a CPU: a busy poller that waits for
 * another process spins on while it does not (the answer then comes within
 * microseconds) and parks when other tasks keep it waiting (engine/thread.c). */
#ifndef FVSIM_CPUBUSY_H
#define FVSIM_CPUBUSY_H

#include <stdbool.h>
#include <stdint.h>

/* Called by a polling thread, now = CLOCK_MONOTONIC ns; spinning: it has been spinning
 * (not parking) since its last call. true: park between polls. */
bool sim_cpu_contended(uint64_t now, bool spinning);
/* Whether the calling thread is within a park period begun by sim_cpu_contended. */
bool sim_cpu_parking(uint64_t now);

#endif
