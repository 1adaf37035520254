/* The device's free-running clock is the engine's sim_now_ns() (CLOCK_MONOTONIC, one
 * cycle per nanosecond, 64 bits), which every CQE carries as its timestamp. The page pairs
 * one reading of it with the wall clock at the same moment:
 *   ns = nsec + ((ts - cycles) & mask) * mult + frac >> shift
 *      = nsec + (ts - cycles)                       (mult 1, shift 0, frac 0)
 * With a 64-bit counter nothing wraps, so the page never needs the kernel's periodic
 * rewrite (sign stays 0: never "updating"); overflow_period, which libmlx5 reports as
 * max_clock_info_update_nsec, still names a finite period, an hour. The wall clock may
 * be stepped or slewed after the mapping; the conversion then drifts by as much, as with
 * a kernel that has not refreshed its page yet. */
#include "clock.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/mlx5-abi.h>

#include "../common/sys.h"
#include "../engine/now.h"

int sim_clock_info_fill(int fd, off_t off)
{
	struct mlx5_ib_clock_info ci;
	struct timespec wall;

	memset(&ci, 0, sizeof(ci));
	clock_gettime(CLOCK_REALTIME, &wall);
	ci.cycles = sim_now_ns();
	ci.nsec = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
	ci.mult = 1;
	ci.shift = 0;
	ci.mask = ~0ull;
	ci.overflow_period = 3600ull * 1000000000ull;
	return sim_sys_pwrite(fd, &ci, sizeof(ci), off) == (ssize_t)sizeof(ci) ? 0 : -1;
}
