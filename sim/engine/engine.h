/* The device's work loop: which QP has work, and one unit of it at a time. */
#ifndef FVSIM_ENGINE_H
#define FVSIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/obj.h"

enum sim_work {
	SIM_W_IDLE, /* nothing to do */
	SIM_W_WAIT, /* work exists but waits (CQ full, retry timer, peer not ready) */
	SIM_W_DONE, /* a WQE completed or state changed */
};

/* CLOCK_MONOTONIC in ns: timers, and the device's free-running clock that CQE timestamps
 * show, a 64-bit counter at 1 GHz (front/clock.c maps it to wall-clock time). */
uint64_t sim_now_ns(void);
#define SIM_CLOCK_KHZ 1000000

/* The SQ doorbell record is ahead of what the device consumed. */
bool sim_sq_pending(const struct sim_qp *qp);

/* Executes or retries the SQ head WQE of a QP in RTS (exec.c). In step mode retry timers
 * are ignored: each call is one attempt. */
enum sim_work sim_exec_head(struct sim_qp *qp, bool step, uint64_t now);

/* Flushes one outstanding WQE of a QP in error (flush.c). */
enum sim_work sim_flush_one(struct sim_qp *qp);

/* One unit of work anywhere in the fabric; the step API's primitive. Called locked. */
enum sim_work sim_engine_step(void);

/* A pass over every QP doing up to budget WQEs each; returns units done. Called locked. */
int sim_engine_pass(int budget);

/* Runs the work already doorbelled until nothing more progresses (a full CQ, a retry
 * timer or a peer process waits), so a command sees the effect of every doorbell rung
 * before it, as it would on an HCA that runs at line rate. Not in step mode: there only
 * fvsim_step() moves the device. Called locked. */
void sim_engine_settle(void);

#endif
