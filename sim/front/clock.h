/* The clock-info page (mlx5-abi.h struct mlx5_ib_clock_info) that libmlx5 maps for
 * mlx5dv_get_clock_info() to turn CQE timestamps into wall-clock nanoseconds. */
#ifndef FVSIM_CLOCK_H
#define FVSIM_CLOCK_H

#include <stddef.h>
#include <sys/types.h>

/* Writes the page (one reading of the clock) at offset off of fd, the memory that mmap()
 * of MLX5_IB_MMAP_CLOCK_INFO maps (uar.c): 0, or -1 with errno. */
int sim_clock_info_fill(int fd, off_t off);

#endif
