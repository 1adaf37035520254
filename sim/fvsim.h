/* fvsim.h — control of the software mlx5 device from inside a program run by fvsim-run.
 *
 * The functions live in the preloaded libfvsim.so. They are declared weak, so a program
 * needs no extra link flags: under fvsim-run they resolve to the device, elsewhere they
 * are NULL (check with fvsim_present()).
 *
 * Step mode (FVSIM_MODE=step in the environment, or fvsim_set_step_mode(1)) stops the
 * device thread: nothing executes until the program calls fvsim_step(), which performs
 * exactly one unit of device work — one send WQE executed or one RNR/transport retry
 * attempt counted, or one flush CQE — and returns 1, or returns 0 when no unit could make
 * progress (queues empty, CQ full, waiting on an infinitely retried RNR).
 * fvsim_run_until_idle() steps until that happens and returns the number of units. */
#ifndef FVSIM_H
#define FVSIM_H

#ifdef FVSIM_IMPLEMENTATION
#define FVSIM_WEAK
#else
#define FVSIM_WEAK __attribute__((weak))
#endif

#ifdef __cplusplus
extern "C" {
#endif

FVSIM_WEAK int fvsim_step(void);
FVSIM_WEAK int fvsim_run_until_idle(void);
FVSIM_WEAK void fvsim_set_step_mode(int on);
FVSIM_WEAK int fvsim_step_mode(void);

#ifndef FVSIM_IMPLEMENTATION
/* 1 if the program runs on the software device. */
static inline int fvsim_present(void)
{
	return fvsim_step != 0;
}
#endif

#ifdef __cplusplus
}
#endif

#endif
