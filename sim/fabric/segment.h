/* The fabric between processes (FVSIM_FABRIC=name): processes that give the same name
 * share one POSIX shared-memory segment. It holds
 *   - the numbering and the QP owners (owners.h), which the model uses,
 *   - one inbox per process (mailbox.h), which the engine uses to hand messages to the
 *     owner of a destination QP and to take the messages posted to this process,
 *   - one frame ring per process (mailbox.h): the raw Ethernet frames other processes put
 *     on the wire, for a process that listens (has steering rules).
 * The fabric is a store and a transport only: it never runs device code. Without
 * FVSIM_FABRIC nothing here is used and the device stays private to the process.
 *
 * Segment layout (struct fab_shared):
 *   +--------------------------------------------+
 *   | magic, version, ready | robust mutex        |
 *   | next_qpn[dev], next_mkey[dev]               |  numbering  (owners.c)
 *   | qp[FAB_QPS]: pid, dev, inbox, qpn,         |  owners     (owners.c)
 *   |   receive state, access, PD                 |
 *   | mr[FAB_MRS]: gate, owner, key, PD, range    |  published MRs (mrtab.c)
 *   | listener[FAB_LISTENERS]: pid, inbox, ps,    |  rdma_cm listeners
 *   |                          address            |             (owners.c)
 *   | proc[FAB_PROCS]: pid, bells, slot[FAB_SLOTS]|  inboxes    (mailbox.c)
 *   |   cm_head, cm_tail, cm[FAB_CM_SLOTS]        |  CM message ring
 *   | eth[FAB_PROCS]: listen, head, tail,         |  Ethernet frame rings
 *   |                 frame[FAB_FRAMES]           |             (mailbox.c)
 *   +--------------------------------------------+
 * Set-up, checks and replacement of the file happen under a lock on it (segment.c). */
#ifndef FVSIM_SEGMENT_H
#define FVSIM_SEGMENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/config.h"
#include "wire.h"

bool sim_fabric_on(void);
/* At world setup. false (logged) if the segment cannot be used: the process must not run
 * on a private device then, apart from the others of the fabric. */
bool sim_fabric_attach(const char *name);

/* Below: the layout and helpers shared by owners.c and mailbox.c only. */

#define FAB_MAGIC 0x66767366u /* "fvsf" */
#define FAB_VERSION 8u
#define FAB_QPS 4096
#define FAB_MRS 4096
#define FAB_PROCS 64
#define FAB_SLOTS 16
#define FAB_LISTENERS 256
#define FAB_CM_SLOTS 32
#define FAB_POLLING_NS 20000u
#define FAB_FRAMES 64
/* The largest frame the wire carries between processes: a full MTU with a VLAN-tagged L2
 * header, rounded up. */
#define FAB_FRAME_MAX 2048
_Static_assert(FAB_FRAME_MAX >= SIM_ETH_MTU + 18, "a frame slot holds an MTU-sized frame");

enum { SLOT_FREE, SLOT_CLAIMED, SLOT_POSTED, SLOT_BUSY, SLOT_ANSWERED };

/* One message and, later, its answer. */
struct fab_slot {
	uint32_t state;
	int32_t src_pid; /* whose memory the message's addresses name */
	uint32_t src_proc; /* requester's inbox, whose bell the answer rings */
	/* 1: the news of this message (POSTED) or of its answer (ANSWERED) woke nobody, as
	 * the receiving process was polling; the other side wakes its device thread if it
	 * stops polling before taking it (sim_mailbox_nudge*). */
	uint32_t unrung;
	struct sim_wire_answer answer;
	struct sim_wire msg;
};

struct fab_proc {
	int32_t pid;
	/* News for this process bumps bell, which its application threads parked in a poll
	 * wait on (parked of them), and, unless one of its threads polled a CQ within
	 * FAB_POLLING_NS (poll_ns, 0: none polls) and will see the news itself, dbell, which
	 * its device thread waits on. */
	uint32_t bell, dbell, parked;
	/* The thread of this process that takes SIM_TICK_SIGNAL (mailbox.h) while it polls
	 * memory, 0 if none: news for the process is handed to it by that signal. */
	uint32_t kick;
	uint64_t poll_ns; /* CLOCK_MONOTONIC */
	struct fab_slot slot[FAB_SLOTS];
	/* CM messages for this process: cm_head - cm_tail of them wait at
	 * cm[cm_tail % FAB_CM_SLOTS]; both move under the segment lock. */
	uint32_t cm_head, cm_tail;
	struct sim_wire_cm cm[FAB_CM_SLOTS];
};

/* The Ethernet frames for one process: head - tail of them wait at
 * frame[tail % FAB_FRAMES]; both move under the segment lock. Only a process that listens
 * (listen != 0: it has steering rules) is sent frames. Reset with its inbox. */
struct fab_frame {
	uint32_t len;
	uint8_t data[FAB_FRAME_MAX];
};

struct fab_eth {
	uint32_t listen, head, tail, pad;
	struct fab_frame frame[FAB_FRAMES];
};

struct fab_listener {
	int32_t pid; /* 0: free entry */
	uint16_t proc, ps; /* the listener's inbox; its rdma_cm port space */
	struct sockaddr_in6 addr; /* (or a sockaddr_in) bound address and port */
};

struct fab_qp {
	int32_t pid; /* 0: free entry */
	uint16_t dev, proc;
	uint32_t qpn;
	/* What a requester needs to place an RDMA WRITE itself (mrtab.h): an RC QP or DCT
	 * able to receive (rx, SIM_FAB_RX_*), its remote access flags, PD number and the
	 * DCT's key. */
	uint32_t rx, access, pdn;
	uint64_t dc_key;
};

/* An MR of a process, published so that requesters in other processes can place RDMA
 * WRITEs into it themselves. gate: FAB_MR_OPEN while the entry may be used, plus the
 * number of requesters copying under it right now; the other fields change only while
 * it is closed and nobody copies. */
#define FAB_MR_OPEN 0x80000000u
struct fab_mr {
	uint32_t gate;
	int32_t pid;
	uint16_t dev, proc;
	uint32_t key, pdn, access, pad;
	uint64_t iova, len, host;
};

struct fab_shared {
	uint32_t magic, version, ready, pad;
	pthread_mutex_t lock; /* process-shared, robust */
	uint32_t next_qpn[SIM_MAX_DEVICES], next_mkey[SIM_MAX_DEVICES];
	struct fab_qp qp[FAB_QPS];
	struct fab_mr mr[FAB_MRS];
	struct fab_listener listener[FAB_LISTENERS];
	struct fab_proc proc[FAB_PROCS];
	struct fab_eth eth[FAB_PROCS];
};

extern struct fab_shared *sim_fab; /* NULL: no fabric */

void sim_fab_lock(void);
void sim_fab_unlock(void);
bool sim_fab_alive(pid_t pid);
/* This process's inbox, claimed on first use (and again in a forked child); -1 if the
 * fabric is full. */
int sim_fab_my_proc(void);
/* The inbox of the current process if it is claimed already, else -1 (never claims). */
int sim_fab_my_proc_if_claimed(void);
/* The registry entry of (dev, qpn) if a live process other than this one owns it, else
 * -1. Called locked. */
int sim_fab_find_qp(int dev, uint32_t qpn);

#endif
