/* The application's polling drives the device (drive.c: ibv_poll_cq; drive_cq_ex.c: the
 * extended CQs' start_poll, and CQs taken over through mlx5dv). */
#ifndef FVSIM_DRIVE_H
#define FVSIM_DRIVE_H

#include <infiniband/verbs.h>

/* On a context of our device: makes ibv_create_cq_ex's CQs driven by their start_poll. */
void sim_drive_cq_ex_ctx(struct ibv_context *ctx);

#endif
