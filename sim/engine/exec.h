/* The requester: one attempt at a QP's SQ head WQE. */
#ifndef FVSIM_EXEC_H
#define FVSIM_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/obj.h"
#include "work.h"

/* Executes or retries the SQ head WQE of a QP in RTS. In step mode retry timers are
 * ignored: each call is one attempt. */
enum sim_work sim_exec_head(struct sim_qp *qp, bool step, uint64_t now);

#endif
