/* The transport between processes of one fabric: an inbox per process in the shared
 * segment (segment.h). A requester posts a message (struct sim_wire) to the inbox of the
 * process owning the destination QP and later collects the answer; the owner takes the
 * messages posted to it, and replies. What a message means is the engine's business:
 * the mailbox only moves it and rings the doorbell word of whoever has news.
 *
 * A slot's life (state word, changed by compare-and-swap):
 *   FREE --post--> CLAIMED --filled--> POSTED --take--> BUSY --reply--> ANSWERED
 *                                        ^     <-requeue-  |                |
 *   FREE <---------------- answer collected, or cancel ----+----------------+ */
#ifndef FVSIM_MAILBOX_H
#define FVSIM_MAILBOX_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire.h"

/* Requester. Posts m to the live process (other than this one) that owns (dev,
 * m->dqpn): 0 with *ticket (the slot) and *peer (the owner's pid) set, ENOENT if no
 * process owns it, EAGAIN if the owner's inbox is full. */
int sim_mailbox_post(int dev, const struct sim_wire *m, int *ticket, pid_t *peer);
/* The answer to a posted message: 0 with *a filled (the slot is free again), EAGAIN
 * while pending, ESRCH if the owner died (the slot is given up). Pending, untaken, and
 * the owner stopped polling since it was posted: its device thread is woken. */
int sim_mailbox_answer(int ticket, pid_t peer, struct sim_wire_answer *a);
/* Takes a posted message back before the owner serves it: 0 if it is withdrawn (the slot
 * is free again and the owner never touched the buffers), EALREADY if the owner answered
 * it (collect the answer with sim_mailbox_answer). If the owner is working on it right
 * now (it may be copying the requester's memory), waits until it is done first, so
 * either way nothing touches the buffers once this returns. */
int sim_mailbox_withdraw(int ticket, pid_t peer);
/* Gives a posted message up, answered or not; the same waiting as withdraw. */
void sim_mailbox_cancel(int ticket, pid_t peer);

/* Owner. This process's inbox (claimed on first use), or -1 without one. */
int sim_mailbox_inbox(void);
#define SIM_MAILBOX_SLOTS 16
/* The message waiting in slot i of the inbox, now being worked on, with the sender's pid
 * in *src; NULL if none waits there. Each taken message is then replied or requeued. */
const struct sim_wire *sim_mailbox_take(int inbox, int i, pid_t *src);
void sim_mailbox_reply(int inbox, int i, const struct sim_wire_answer *a);
void sim_mailbox_requeue(int inbox, int i); /* not now: it waits in the inbox */
/* Answers whose requester was polling when they came but has stopped polling without
 * collecting them: its device thread is woken (once per answer). Called every pass. */
void sim_mailbox_nudge_answers(int inbox);

/* Connection manager messages: one way, a ring per inbox. Send: 0, ESRCH (that process
 * is gone) or EAGAIN (its ring is full). Take: the oldest message for this process. */
int sim_mailbox_send_cm(int inbox, const struct sim_wire_cm *m);
bool sim_mailbox_take_cm(int inbox, struct sim_wire_cm *m);

/* Raw Ethernet frames: one way, a ring per process, filled only for processes that
 * listen (owners.h). peers: the inboxes (at most max) of the processes other than this
 * one that listen now. send: a copy of frame f in inbox's ring, and a ring of its bell;
 * 0, EAGAIN (the ring is full), ESRCH (that process is gone) or EMSGSIZE (f is over
 * FAB_FRAME_MAX). take: the oldest frame for inbox into buf (FAB_FRAME_MAX bytes), its
 * length; 0 if none waits. */
int sim_mailbox_eth_peers(int *inbox, int max);
int sim_mailbox_send_frame(int inbox, const uint8_t *f, uint32_t len);
uint32_t sim_mailbox_take_frame(int inbox, uint8_t *buf);

/* News for a process (a message posted to it, an answer to one of its messages) rings
 * it: application threads parked in a poll wake, and so does its device thread unless a
 * thread of the process polls (spinning) and will find the news itself.
 *
 * The device thread: samples its word (bell) before a pass, then waits (at most ns)
 * unless it moved. Without a fabric this is a plain sleep. wake_self wakes it. */
uint32_t sim_mailbox_bell(void);
void sim_mailbox_wait(uint32_t seen, long ns);
void sim_mailbox_wake_self(void);
/* Application threads polling a CQ. news: the counter every ring bumps, sampled before a
 * pass; polling(now) marks this process as polling (now = CLOCK_MONOTONIC ns; 0: not
 * any more); park waits at most ns unless the counter moved from seen; wake_parked wakes
 * the parked threads (the device thread wrote what they may be waiting for). */
bool sim_mailbox_present(void); /* this process has an inbox on a fabric */
/* A thread that polls memory and runs device passes on SIM_TICK_SIGNAL (engine/tick.h):
 * while kick names it (0: none), news rung for this process while it counts as polling
 * sends it that signal, so the pass runs at once instead of at its next tick. */
#define SIM_TICK_SIGNAL (SIGRTMAX - 3)
void sim_mailbox_kick_to(pid_t tid);
uint32_t sim_mailbox_news(void);
void sim_mailbox_polling(uint64_t now);
void sim_mailbox_park(uint32_t seen, long ns);
void sim_mailbox_wake_parked(void);

#endif
