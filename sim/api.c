/* The deterministic single-step API of fvsim.h, exported from the preload library. */
#define FVSIM_IMPLEMENTATION
#include "fvsim.h"

#include "engine/engine.h"
#include "engine/thread.h"
#include "model/world.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int fvsim_step(void)
{
	enum sim_work r;

	sim_world_init();
	sim_lock();
	r = sim_engine_step();
	sim_unlock();
	return r == SIM_W_DONE;
}

EXPORT int fvsim_run_until_idle(void)
{
	int n = 0;

	/* Bounded: an infinite RNR retry or a full CQ is not progress, so this returns; the
	 * cap only guards against a model bug turning into a hang. */
	while (n < 100000000 && fvsim_step())
		n++;
	return n;
}

EXPORT void fvsim_set_step_mode(int on)
{
	sim_world_init();
	sim_lock();
	sim_world.cfg.step_mode = on != 0;
	sim_unlock();
	/* Leaving step mode in a process that already has a device open needs the thread. */
	if (!on && !sim_list_empty(&sim_world.ctxs))
		sim_thread_ensure();
}

EXPORT int fvsim_step_mode(void)
{
	int on;

	sim_world_init();
	sim_lock();
	on = sim_world.cfg.step_mode;
	sim_unlock();
	return on;
}
