/* The device thread that runs the engine for real programs. */
#ifndef FVSIM_THREAD_H
#define FVSIM_THREAD_H

#include <stdbool.h>

/* Starts the thread in this process unless step mode is on or it already runs. Threads
 * do not survive fork(), so this is called whenever a context is opened rather than from
 * a constructor: a forked child starts its own thread with its first context, or at once
 * if it inherited open ones. */
void sim_thread_ensure(void);
/* A CQ is taken over to be polled in memory (mlx5dv_init_obj): such polls never reach
 * the library, so even in FVSIM_MODE=poll a device thread must run. */
void sim_thread_for_memory_pollers(void);

/* One engine pass in the calling thread (an application polling its CQ and finding it
 * empty), unless the device is busy in another thread or in step mode. While the
 * application drives the device this way, the device thread sleeps until another process
 * rings this one's doorbell instead of spinning for CPU time against the poller. */
bool sim_thread_drive(void); /* true: a pass ran */
/* An application's poll of a CQ: poll(arg) returns what it found (> 0), 0 for nothing,
 * < 0 for an error. Empty, it drives the device (above) and polls again; a thread that
 * keeps finding nothing while this process is on a fabric then parks briefly on the
 * process's doorbell between polls instead of spinning (thread.c says why). */
int sim_thread_poll(int (*poll)(void *), void *arg);
/* The application is about to block on a completion channel: a last pass in its thread
 * (its fresh WQEs go out now), then the device thread takes over again at once. */
void sim_thread_app_blocks(void);

#endif
