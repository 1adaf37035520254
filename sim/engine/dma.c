#include "dma.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/uio.h>
#include <unistd.h>

/* Trims an iov list to its first len bytes, as struct iovec. */
static int to_iovec(struct iovec *out, const struct sim_iov *in, int n, uint64_t len)
{
	int k = 0;

	for (int i = 0; i < n && len; i++) {
		uint64_t l = in[i].len < len ? in[i].len : len;

		if (!l)
			continue;
		out[k].iov_base = (void *)(uintptr_t)in[i].addr;
		out[k].iov_len = (size_t)l;
		len -= l;
		k++;
	}
	return len ? -1 : k;
}

/* to_peer: dst lives in peer, src here (process_vm_writev); else src lives in peer and
 * dst here (process_vm_readv). */
static int copy(pid_t peer, bool to_peer, const struct sim_iov *dst, int ndst,
		const struct sim_iov *src, int nsrc, uint64_t len)
{
	struct iovec d[SIM_MAX_IOV], s[SIM_MAX_IOV];
	int nd, ns;
	ssize_t got;

	if (!len)
		return 0;
	if (ndst > SIM_MAX_IOV || nsrc > SIM_MAX_IOV)
		return EINVAL;
	nd = to_iovec(d, dst, ndst, len);
	ns = to_iovec(s, src, nsrc, len);
	if (nd < 0 || ns < 0)
		return EINVAL;
	/* The kernel copies page by page and stops at the first unmapped byte on either
	 * side; anything short of len is a fault. */
	if (to_peer)
		got = process_vm_writev(peer, s, (unsigned long)ns, d, (unsigned long)nd, 0);
	else
		got = process_vm_readv(peer, d, (unsigned long)nd, s, (unsigned long)ns, 0);
	return got == (ssize_t)len ? 0 : EFAULT;
}

int sim_dma_copy(const struct sim_iov *dst, int ndst, const struct sim_iov *src, int nsrc,
		 uint64_t len)
{
	return copy(getpid(), false, dst, ndst, src, nsrc, len);
}

int sim_dma_from(pid_t peer, const struct sim_iov *dst, int ndst, const struct sim_iov *src,
		 int nsrc, uint64_t len)
{
	return copy(peer, false, dst, ndst, src, nsrc, len);
}

int sim_dma_to(pid_t peer, const struct sim_iov *dst, int ndst, const struct sim_iov *src,
	       int nsrc, uint64_t len)
{
	return copy(peer, true, dst, ndst, src, nsrc, len);
}

bool sim_dma_readable(pid_t pid, const struct sim_iov *iov, int n, uint64_t len)
{
	for (int i = 0; i < n && len; i++) {
		uint64_t l = iov[i].len < len ? iov[i].len : len, a = iov[i].addr;

		len -= l;
		while (l) {
			/* Bytes left in this page. */
			uint64_t step = 4096 - (a & 4095);
			uint8_t byte;
			struct iovec d = { &byte, 1 }, s = { (void *)(uintptr_t)a, 1 };

			if (process_vm_readv(pid, &d, 1, &s, 1, 0) != 1)
				return false;
			if (step > l)
				step = l;
			a += step;
			l -= step;
		}
	}
	return true;
}

int sim_dma_read(void *buf, uint64_t addr, size_t len)
{
	struct sim_iov d = { (uint64_t)(uintptr_t)buf, len }, s = { addr, len };

	return sim_dma_copy(&d, 1, &s, 1, len);
}

int sim_dma_write(uint64_t addr, const void *buf, size_t len)
{
	struct sim_iov d = { addr, len }, s = { (uint64_t)(uintptr_t)buf, len };

	return sim_dma_copy(&d, 1, &s, 1, len);
}
