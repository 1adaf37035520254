/* Device work in a memory poller's own thread. A program that polls CQ or data memory
 * (mlx5dv_init_obj: UCX, fastverbs fv_poll) never calls into the device, and on busy CPUs
 * a device thread waits for one. So on a fabric the thread that takes a CQ over gets a
 * timer signal every few microseconds while traffic flows; its handler runs an engine
 * pass right where the poller spins, with no other thread needing a CPU (tick.c). */
#ifndef FVSIM_TICK_H
#define FVSIM_TICK_H

#include <stdbool.h>

/* The calling thread polls memory: it gets the ticks (the last caller wins). No-op
 * outside a fabric, in step or poll mode, or with FVSIM_TICK_US=0. */
void sim_tick_claim(void);
/* Traffic after a quiet spell (the device thread found work): ticks resume. */
void sim_tick_wake(void);
/* Whether ticks run now: the device thread then stays out of the way. */
bool sim_tick_hot(void);

#endif
