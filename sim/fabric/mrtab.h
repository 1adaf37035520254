/* Direct placement: an RDMA WRITE to a QP of another process can be carried out by the
 * requester itself, copying into the owner's memory with process_vm_writev, without
 * waking the owner (whose application may spin on that memory rather than its CQ). For
 * that the owner publishes its MRs (key, PD, range, access) and its QPs' receive state
 * in the segment; a requester checks them as the responder would, and anything it does
 * not find in order (a window's key, a QP in error, a bad key or range, a copy that
 * fails) goes by mailbox to the owner, whose responder gives the exact answer.
 * Deregistration closes the entry and waits for the requesters copying under it, so no
 * write lands after ibv_dereg_mr returns. */
#ifndef FVSIM_MRTAB_H
#define FVSIM_MRTAB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Owner. Publish / withdraw an MR of this process (withdraw returns once nobody copies
 * into it any more). An MR whose entry is taken by another live one stays unpublished:
 * writes to it go by mailbox. */
void sim_fabric_mr_publish(int dev, uint32_t key, uint32_t pdn, uint32_t access,
			   uint64_t iova, uint64_t len, uint64_t host);
void sim_fabric_mr_withdraw(int dev, uint32_t key);
/* What a QP able to take direct writes is: none, an RC QP, or a DCT (whose requesters
 * must present its DC key). */
enum { SIM_FAB_RX_NONE, SIM_FAB_RX_RC, SIM_FAB_RX_DCT };

/* Owner: QP (dev, qpn) of this process, registry entry reg (sim_fabric_add_qp), can
 * receive as rx (SIM_FAB_RX_*) with these remote access flags, PD number and DC key. */
void sim_fabric_qp_state(int reg, uint32_t rx, uint32_t access, uint32_t pdn, uint64_t dc_key);

/* Requester. The owner of (dev, qpn) if it is another live process whose QP receives as
 * rx, with the DC key dc_key for a DCT, with all of the access bits need: its pid and the
 * QP's PD number; false otherwise. */
bool sim_fabric_rx_target(int dev, uint32_t qpn, uint32_t rx, uint64_t dc_key, uint32_t need,
			  pid_t *pid, uint32_t *pdn);
/* Enters the entry of rkey if it is pid's, on dev, in PD pdn, grants need and covers
 * [raddr, raddr + len): true with *host (the address in pid's memory) and *ticket; the
 * caller copies and then leaves. false: not published there, use the mailbox. */
bool sim_fabric_mr_enter(int dev, pid_t pid, uint32_t pdn, uint32_t rkey, uint64_t raddr,
			 uint64_t len, uint32_t need, uint64_t *host, int *ticket);
void sim_fabric_mr_leave(int ticket);

#endif
