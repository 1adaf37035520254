#ifndef FVSIM_EVCOUNT_H
#define FVSIM_EVCOUNT_H

#include <stdbool.h>
#include <stddef.h>

struct sim_ctx;

/* The user read n bytes of events from one of the context's pipes (comp: a completion
 * channel, else the async fd): count them on their objects. Locked. */
void sim_events_read(struct sim_ctx *ctx, bool comp, const void *buf, size_t n);

#endif
