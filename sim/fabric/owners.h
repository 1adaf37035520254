/* Fabric-wide numbering and who owns what, in the shared segment (segment.h): QP
 * numbers and memory keys unique across the processes of one fabric, as on one HCA, and
 * which process owns (device, QPN). The model numbers and registers its objects here;
 * the mailbox looks owners up. Only with a fabric (sim_fabric_on()). */
#ifndef FVSIM_OWNERS_H
#define FVSIM_OWNERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "segment.h"

uint32_t sim_fabric_next_qpn(int dev);
uint32_t sim_fabric_next_mkey(int dev);

/* (dev, qpn) now belongs to this process (its registry entry, or -1 if the registry is
 * full) / no longer does. */
int sim_fabric_add_qp(int dev, uint32_t qpn);
void sim_fabric_del_qp(int dev, uint32_t qpn);

/* The inbox of the live process other than this one that owns (dev, qpn), with its pid
 * in *pid; -1 if there is none. */
int sim_fabric_owner(int dev, uint32_t qpn, pid_t *pid);

/* This process takes raw Ethernet frames from the other processes (it has steering
 * rules) / no longer does: only listeners are sent frames (mailbox.h). */
void sim_fabric_eth_listen(bool on);

/* This process's inbox, claimed on first use; -1 without a fabric. */
int sim_fabric_self(void);

/* rdma_cm listeners: this process listens on (port space ps, address a) / no longer. */
void sim_fabric_add_listener(uint16_t ps, const struct sockaddr *a, size_t len);
void sim_fabric_del_listener(uint16_t ps, const struct sockaddr *a, size_t len);
/* The inbox of a live process other than this one with a listener in port space ps
 * that takes a, by takes(listener's address, a) (the fabric does not read addresses);
 * -1 if there is none. */
int sim_fabric_listener(uint16_t ps, const struct sockaddr *a,
			bool (*takes)(const struct sockaddr *listener, const struct sockaddr *a));

#endif
