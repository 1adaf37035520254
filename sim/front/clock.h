/* The clock-info page (mlx5-abi.h struct mlx5_ib_clock_info) that libmlx5 maps for
 * mlx5dv_get_clock_info() to turn CQE timestamps into wall-clock nanoseconds. */
#ifndef FVSIM_CLOCK_H
#define FVSIM_CLOCK_H

#include <stddef.h>
#include <sys/types.h>

/* mmap() of MLX5_IB_MMAP_CLOCK_INFO, version index `index`: a read-only page, or
 * MAP_FAILED with errno as the kernel sets it (EINVAL: not one page; EPERM: writable or
 * executable; EOPNOTSUPP: another version). */
void *sim_clock_info_map(void *addr, size_t len, int prot, int flags, unsigned index);

#endif
