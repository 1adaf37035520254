/* The device nodes /dev/infiniband/uverbsN as paths: which device a path names, and the
 * char device number the kernel would give it (node.c answers stat and access for them). */
#ifndef FVSIM_NODE_H
#define FVSIM_NODE_H

#include <sys/types.h>

/* Index N of a "/dev/infiniband/uverbsN" path within the configured devices, else -1. */
int sim_node_index(const char *path);
/* The node's char device number, 231:(192+N). */
dev_t sim_node_rdev(int index);

#endif
