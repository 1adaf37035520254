/* Big-endian loads and stores on unaligned bytes: WQEs, CQEs and doorbell records are
 * big-endian and the device reads them from arbitrary ring offsets. */
#ifndef FVSIM_BE_H
#define FVSIM_BE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t ld_be16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

static inline uint32_t ld_be32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static inline uint64_t ld_be64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static inline void st_be16(void *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void st_be32(void *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void st_be64(void *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

/* A doorbell record word written by another thread: one aligned 32-bit acquire load, so
 * the WQE stores published before it are visible once we see it. */
static inline uint32_t ld_dbrec(const volatile uint32_t *p)
{
	return be32toh(__atomic_load_n(p, __ATOMIC_ACQUIRE));
}

#endif
