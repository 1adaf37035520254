/* The connection manager's traffic between processes of a fabric: the messages cm/
 * queued for other processes go to their inboxes, the ones posted to this process go to
 * cm/, and connections whose peer process ended are told so (every 100 ms). Returns how
 * many messages moved. Called by the device thread's pass and by the front after each
 * rdma_cm command, with or without the world lock. */
#ifndef FVSIM_REMOTE_CM_H
#define FVSIM_REMOTE_CM_H

int sim_remote_cm_pass(void);

#endif
