/* The seeded random numbers of the fuzz tests (xorshift64*): FVSIM_FUZZ_SEED picks the seed
 * (default 1), so a failure found with one seed replays; FVSIM_FUZZ_ROUNDS how long a fuzz
 * suite runs. Header-only; one state per test program. */
#ifndef FUZZ_RNG_H
#define FUZZ_RNG_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <criterion/logging.h>

static uint64_t fuzz_rng;

/* Seeds from FVSIM_FUZZ_SEED and returns the seed (never 0: xorshift would stay at 0). */
static inline uint64_t fuzz_seed(void)
{
	const char *s = getenv("FVSIM_FUZZ_SEED");

	fuzz_rng = s ? strtoull(s, NULL, 0) : 1;
	fuzz_rng = fuzz_rng ? fuzz_rng : 1;
	return fuzz_rng;
}

static inline uint64_t fuzz_next(void)
{
	fuzz_rng ^= fuzz_rng >> 12;
	fuzz_rng ^= fuzz_rng << 25;
	fuzz_rng ^= fuzz_rng >> 27;
	return fuzz_rng * 0x2545f4914f6cdd1dull;
}

/* Uniform enough below n (n > 0). */
static inline uint32_t fuzz_below(uint32_t n)
{
	return (uint32_t)(fuzz_next() % n);
}

/* Random bytes over p[0, n). */
static inline void fuzz_fill(void *p, size_t n)
{
	uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)fuzz_next();
}

/* Rounds of a fuzz suite: FVSIM_FUZZ_ROUNDS, default 200 (fuzz_suite_init). */
static long fuzz_rounds;

/* A fuzz suite's .init: seeds, reads the rounds, and logs both so that a failure replays. */
static inline void fuzz_suite_init(void)
{
	const char *r = getenv("FVSIM_FUZZ_ROUNDS");
	uint64_t s = fuzz_seed();

	fuzz_rounds = r ? strtol(r, NULL, 0) : 200;
	cr_log_info("seed %llu, %ld rounds", (unsigned long long)s, fuzz_rounds);
}

#endif
