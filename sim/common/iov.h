/* An address range in some process's memory: the unit data moves in, from a WQE's
 * gather list to a message between processes. */
#ifndef FVSIM_IOV_H
#define FVSIM_IOV_H

#include <stdint.h>

struct sim_iov {
	uint64_t addr;
	uint64_t len;
};

#define SIM_MAX_IOV 64

#endif
