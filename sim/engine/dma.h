/* Device memory access to user buffers. Every copy goes through process_vm_readv on this
 * process, so a buffer that vanished after registration becomes an error, not a crash;
 * the same call with another pid is the path to a cross-process fabric. */
#ifndef FVSIM_DMA_H
#define FVSIM_DMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/iov.h"

/* Copies len bytes gathered from src into the scatter list dst, both in this process;
 * 0 or EFAULT. */
int sim_dma_copy(const struct sim_iov *dst, int ndst, const struct sim_iov *src, int nsrc,
		 uint64_t len);
/* The same with src in process peer (dst local), or dst in process peer (src local). */
int sim_dma_from(pid_t peer, const struct sim_iov *dst, int ndst, const struct sim_iov *src,
		 int nsrc, uint64_t len);
int sim_dma_to(pid_t peer, const struct sim_iov *dst, int ndst, const struct sim_iov *src,
	       int nsrc, uint64_t len);
/* After a failed copy: whether the first len bytes of iov in process pid can all be read
 * (one byte per page is tried), which tells the faulting side from the other. */
bool sim_dma_readable(pid_t pid, const struct sim_iov *iov, int n, uint64_t len);
int sim_dma_read(void *buf, uint64_t addr, size_t len);
int sim_dma_write(uint64_t addr, const void *buf, size_t len);

#endif
