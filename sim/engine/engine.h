/* The device's work loop: which QP has work, and one unit of it at a time. */
#ifndef FVSIM_ENGINE_H
#define FVSIM_ENGINE_H

#include "work.h"

/* One unit of work anywhere in the fabric; the step API's primitive. Called locked. */
enum sim_work sim_engine_step(void);

/* A pass over every QP doing up to budget WQEs each; returns units done. Called locked. */
int sim_engine_pass(int budget);
/* The same in a signal handler (tick.c), which must not allocate: the connection manager's
 * messages (a new id, an event, each allocated) wait for the device thread. Called locked. */
int sim_engine_tick_pass(int budget);

/* Runs the work already doorbelled until nothing more progresses (a full CQ, a retry
 * timer or a peer process waits), so a command sees the effect of every doorbell rung
 * before it, as it would on an HCA that runs at line rate. Not in step mode: there only
 * fvsim_step() moves the device. Called locked. */
void sim_engine_settle(void);

#endif
