#include "mapped.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

/* Pages mincore() checks a call: its residency vector lives on the stack. A heap vector
 * (256 KiB for 1 GiB steps) cost an mmap, an munmap and a TLB shootdown per check under ASan. */
#define MAPPED_STEP_PAGES 4096u

int sim_range_mapped(uint64_t addr, uint64_t len)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start, end, step = MAPPED_STEP_PAGES * page;
	unsigned char vec[MAPPED_STEP_PAGES];

	if (!len)
		return 0;
	if (addr + len < addr)
		return EFAULT;
	start = addr & ~(page - 1);
	end = (addr + len + page - 1) & ~(page - 1);
	/* mincore() fails with ENOMEM on any unmapped page. */
	for (uint64_t a = start; a < end; a += step) {
		uint64_t n = end - a < step ? end - a : step;

		if (mincore((void *)(uintptr_t)a, (size_t)n, vec))
			return errno == ENOMEM ? EFAULT : errno;
	}
	return 0;
}
