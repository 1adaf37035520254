/* What one step of device work came to; the scheduler (engine.c) and the workers
 * (exec.c, flush.c) speak in these. */
#ifndef FVSIM_WORK_H
#define FVSIM_WORK_H

enum sim_work {
	SIM_W_IDLE, /* nothing to do */
	SIM_W_WAIT, /* work exists but waits (CQ full, retry timer, peer not ready) */
	SIM_W_DONE, /* a WQE completed or state changed */
};

#endif
