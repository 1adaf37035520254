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

/* A QP in error whose SQ head WQE is in flight to another process: if the owner has
 * acknowledged it already, it completes (signaled: a CQE of success) instead of flushing,
 * as on an HCA, where the ACK arrives before the QP is moved to error (a peer that
 * disconnects once it has our last message: rdma_disconnect moves our QP). True if it did. */
bool sim_exec_acked(struct sim_qp *qp);

#endif
