/* The engine's side of the fabric between processes: a message for a QP in another
 * process goes out through that process's inbox (fabric/mailbox.h), and the messages
 * posted to this process are answered here by the responder, as if they came from a
 * local requester. The fabric moves them; only the engine interprets them. */
#ifndef FVSIM_REMOTE_H
#define FVSIM_REMOTE_H

#include "../model/obj.h"
#include "msg.h"

/* Requester: carry out m, an RDMA WRITE (without immediate) on an RC QP, in the owner's
 * memory directly (fabric/mrtab.h) if the owner's QP and MR, as published, allow it
 * exactly as its responder would. true: done, the WQE succeeds; false: hand it to the
 * owner instead (anything out of order, FVSIM_DIRECT=0, or the copy failed). */
bool sim_remote_direct(const struct sim_qp *qp, const struct sim_msg *m);
/* Requester: hand m to the owner of (m->dst_dev, m->dqpn). 0 (the QP keeps the ticket),
 * ENOENT (no process owns that QP) or EAGAIN (the owner's inbox is full). */
int sim_remote_post(struct sim_qp *qp, const struct sim_msg *m);
/* Requester: the answer to qp's message. 0 with *r (and m->nak, m->rnr_timer) filled,
 * EAGAIN while pending, ESRCH if the owner died. */
int sim_remote_answer(struct sim_qp *qp, enum sim_resp *r, struct sim_msg *m);
/* Requester: forget qp's message in flight, if any. Called before the WQE is gone (QP
 * flushed, reset or destroyed): returns once the owner no longer touches its buffers. */
void sim_remote_cancel(struct sim_qp *qp);
/* Requester: mr is being deregistered (or moved). Messages in flight that name its memory
 * (payload or landing area) and were not served yet are withdrawn, and their WQEs fail
 * with a local protection error as on an HCA whose mkey vanished under an operation;
 * one being served is waited for. Once this returns nobody touches mr's memory. Called
 * locked, before the MR changes. */
void sim_remote_revoke_mr(const struct sim_mr *mr);

/* Responder: answer the messages other processes posted to this one; returns how many.
 * Called locked. */
int sim_remote_serve(void);

#endif
