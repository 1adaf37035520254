#include "mapped.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int sim_range_mapped(uint64_t addr, uint64_t len)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start, end, chunk = 1ull << 30;
	unsigned char *vec;

	if (!len)
		return 0;
	if (addr + len < addr)
		return EFAULT;
	start = addr & ~(page - 1);
	end = (addr + len + page - 1) & ~(page - 1);
	/* mincore() fails with ENOMEM on any unmapped page; walk in 1 GiB steps so the
	 * residency vector stays small for huge regions. */
	vec = malloc((size_t)(chunk / page));
	if (!vec)
		return ENOMEM;
	for (uint64_t a = start; a < end; a += chunk) {
		uint64_t n = end - a < chunk ? end - a : chunk;

		if (mincore((void *)(uintptr_t)a, (size_t)n, vec)) {
			free(vec);
			return errno == ENOMEM ? EFAULT : errno;
		}
	}
	free(vec);
	return 0;
}
