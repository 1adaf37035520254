/* The device's work loop: which QP has work, and one unit of it at a time. */
#ifndef FVSIM_ENGINE_H
#define FVSIM_ENGINE_H

#include "work.h"

/* One unit of work anywhere in the fabric; the step API's primitive. Called locked. */
enum sim_work sim_engine_step(void);

/* A pass over every QP doing up to budget WQEs each; returns units done. Called locked. */
int sim_engine_pass(int budget);

#endif
