/* The fabric between processes (FVSIM_FABRIC=name): processes that give the same name
 * share one POSIX shared-memory segment holding
 *   - QPN counters, so QP numbers are unique fabric-wide,
 *   - a registry (device, QPN) -> owning process,
 *   - one inbox per process: message slots a requester fills and the owner's device
 *     answers.
 * A requester posts its message (struct sim_msg) to the owner of the destination QP and
 * keeps the WQE in flight; the owner runs the responder half in its own process, copying
 * payloads with process_vm_readv/writev straight from/to the requester's memory, and
 * writes the answer back into the slot. Without FVSIM_FABRIC nothing here is used and the
 * device stays private to the process. */
#ifndef FVSIM_FABRIC_H
#define FVSIM_FABRIC_H

#include <stdbool.h>
#include <stdint.h>

#include "../engine/msg.h"
#include "../model/obj.h"

bool sim_fabric_on(void);
void sim_fabric_attach(const char *name); /* at world setup; logs and stays off on failure */

uint32_t sim_fabric_next_qpn(int dev);
uint32_t sim_fabric_next_mkey(int dev); /* keys unique fabric-wide, as on one HCA */
void sim_fabric_add_qp(const struct sim_qp *qp);
void sim_fabric_del_qp(const struct sim_qp *qp);

/* Requester: post m to the process owning (dev, m->dqpn). Returns 0 (posted; slot kept in
 * qp), ENOENT (no such QP anywhere) or EAGAIN (the owner's inbox is full). */
int sim_fabric_post(struct sim_qp *qp, int dev, const struct sim_msg *m);
/* Requester: the answer to qp's message. 0 with *r (and m->nak, m->rnr_timer) filled,
 * EAGAIN while pending, ESRCH if the owner died. */
int sim_fabric_answer(struct sim_qp *qp, enum sim_resp *r, struct sim_msg *m);
/* Requester: forget qp's message in flight (QP flushed, reset or destroyed). */
void sim_fabric_cancel(struct sim_qp *qp);

/* Responder: answer messages posted to this process; returns how many. Called locked. */
int sim_fabric_serve(void);

/* The device thread sleeps on its process's doorbell word, which requesters ring after
 * posting and responders after answering: sample it before a pass, then wait (at most ns)
 * unless it moved. Without a fabric this is a plain sleep. */
uint32_t sim_fabric_bell(void);
void sim_fabric_wait(uint32_t seen, long ns);

#endif
