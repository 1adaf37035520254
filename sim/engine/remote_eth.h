/* The Ethernet wire between the processes of a fabric: a frame one process sends goes to
 * every other process that has steering rules (fabric/mailbox.h frame rings), and each
 * applies its own rules to it (eth_rx.h). Like a switch's flooding: one copy per
 * listening process; whoever has no matching rule drops it. */
#ifndef FVSIM_REMOTE_ETH_H
#define FVSIM_REMOTE_ETH_H

#include <stdint.h>

/* Sender: frame f to the other listening processes; nothing without a fabric. A full
 * ring is waited for (a while, serving our own ring meanwhile, so two processes sending
 * to each other cannot stall), then the frame is dropped for that process; so is a frame
 * over the fabric's largest (FAB_FRAME_MAX). Called locked. */
void sim_remote_eth_send(const uint8_t *f, uint32_t len);

/* Receiver: the frames other processes sent this one, through this process's steering;
 * returns how many. Called locked. */
int sim_remote_eth_serve(void);

#endif
