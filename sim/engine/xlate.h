/* Key checks and address translation, as the HCA does them before any DMA. */
#ifndef FVSIM_XLATE_H
#define FVSIM_XLATE_H

#include "../model/obj.h"
#include "dma.h"

struct sim_sge {
	uint32_t lkey;
	uint32_t len;
	uint64_t addr;
};

/* Resolves bytes [off, off+len) of a local scatter/gather list into host iovecs; every
 * entry touched must name an MR of this device and PD with the access bits in need.
 * Returns SYND_OK, SYND_LOC_PROT, or SYND_LOC_LEN when the list is too short. */
int sim_xlate_local(struct sim_dev *dev, const struct sim_pd *pd, const struct sim_sge *sg,
		    int n, uint64_t off, uint64_t len, uint32_t need, struct sim_iov *out,
		    int *nout);

/* Resolves a remote [raddr, raddr+len) under rkey, an MR's or a memory window's, for the
 * responder QP qpn whose PD guards the memory; false on any key, PD, access or range
 * violation (a remote access error). A window must be bound, to qpn if it is of type 2,
 * and translates through its MR, which must still exist. */
bool sim_xlate_remote(struct sim_dev *dev, const struct sim_pd *pd, uint32_t qpn,
		      uint32_t rkey, uint64_t raddr, uint64_t len, uint32_t need,
		      struct sim_iov *out);

#endif
