#ifndef FVSIM_MAPPED_H
#define FVSIM_MAPPED_H

#include <stdint.h>

/* 0 if [addr, addr+len) is mapped memory of this process, else EFAULT: the check the
 * kernel makes when it pins user memory for a queue or a memory region. */
int sim_range_mapped(uint64_t addr, uint64_t len);

#endif
