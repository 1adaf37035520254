#ifndef FVSIM_FLUSH_H
#define FVSIM_FLUSH_H

#include "../model/obj.h"
#include "work.h"

/* Flushes one outstanding WQE of a QP in error. */
enum sim_work sim_flush_one(struct sim_qp *qp);

#endif
