/* fastverbs completions on the software device, for the end-to-end tests (C and C++). */
#ifndef SIM_POLL_H
#define SIM_POLL_H

#include <fastverbs/fastverbs.h>
#include "sim-util.h"

/* fv_poll until one completion arrives, letting the device work; fails the test after
 * SIMT_WAIT_MS without one. */
static inline struct fv_wc simt_poll1(struct fv_cq *cq)
{
	struct timespec t0;
	struct fv_wc wc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (fv_poll(cq, &wc, 1) == 0) {
		cr_assert(simt_ms_since(&t0) < SIMT_WAIT_MS, "no completion");
		simt_kick();
	}
	return wc;
}

#endif
