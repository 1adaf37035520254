/* The application's polling drives the device (drive.c: ibv_poll_cq; drive_cq_ex.c: the
 * extended CQs' start_poll, and CQs taken over through mlx5dv). */
#ifndef FVSIM_DRIVE_H
#define FVSIM_DRIVE_H

#include <stdbool.h>

#include <infiniband/verbs.h>

#include "../model/world.h"

/* Whether the polls of a context or CQ made now drive the device: not in step mode. One
 * that leaves it later (fvsim_set_step_mode(0)) gets the device thread instead; a poll-mode
 * program has no thread to fall back on, so its polls drive even while it steps. */
static inline bool sim_drive_polls(void)
{
	return !sim_world.cfg.step_mode || sim_world.cfg.poll_mode;
}

/* On a context of our device: makes ibv_create_cq_ex's CQs driven by their start_poll. */
void sim_drive_cq_ex_ctx(struct ibv_context *ctx);

#endif
