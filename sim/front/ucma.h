/* /dev/infiniband/rdma_cm: the kernel's rdma_cm user ABI (rdma/rdma_user_cm.h), the
 * file librdmacm opens per event channel. Our fd is an eventfd, so poll/select/epoll
 * work on it unchanged: it is readable while the channel has events queued. */
#ifndef FVSIM_UCMA_H
#define FVSIM_UCMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct cm_chan;

bool sim_ucma_path(const char *path); /* the rdma_cm device node */
int sim_ucma_open(int flags); /* an fd, or -1 with errno */
struct cm_chan *sim_ucma_chan(int fd); /* the channel of one of our fds, else NULL */
void sim_ucma_close(int fd); /* before the fd itself is closed */
void sim_ucma_stat(struct stat *st); /* what stat/fstat report for the node */

#endif
