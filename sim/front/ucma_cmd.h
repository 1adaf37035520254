/* write() on /dev/infiniband/rdma_cm: the kernel's ucma_write() framing and the
 * commands it carries (rdma/rdma_user_cm.h). */
#ifndef FVSIM_UCMA_CMD_H
#define FVSIM_UCMA_CMD_H

#include <stddef.h>
#include <sys/types.h>

struct cm_chan;

/* Runs the commands in buf for channel ch (the file fd): count, or -1 with errno. */
ssize_t sim_ucma_write(struct cm_chan *ch, int fd, const void *buf, size_t count);

#endif
