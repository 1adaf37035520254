/* The device's clock, apart from the requester so that every engine file (CQE
 * timestamps, timers, the device thread) can read it without depending on exec.c. */
#ifndef FVSIM_NOW_H
#define FVSIM_NOW_H

#include <stdint.h>

/* CLOCK_MONOTONIC in ns: timers, and the device's free-running clock that CQE timestamps
 * show, a 64-bit counter at 1 GHz (front/clock.c maps it to wall-clock time). */
uint64_t sim_now_ns(void);
#define SIM_CLOCK_KHZ 1000000

#endif
