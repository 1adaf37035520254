/*
 * Shared by the differential tests (tests/diff/): twin queues on the software device,
 * one driven by libmlx5 (ibv_*), the other by fastverbs (fv_*), compared byte for byte.
 * Here: the seeded generator, trace output, hex dumps and the completion comparison.
 */
#ifndef DIFF_UTIL_H
#define DIFF_UTIL_H

#include <stdio.h>
#include <string.h>
#include <fastverbs/fastverbs.h>
#include "sim-util.h"

enum { LIB, FV };	/* the twin libmlx5 drives, the twin fastverbs drives */

/* A 64-bit LCG: the same seed gives the same lists on every run and machine. */
static inline uint64_t diff_rnd(uint64_t *seed, uint64_t n)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return (*seed >> 33) % n;
}

/* DIFF_TRACE=1 in the environment: print every round. */
static inline int diff_trace(void)
{
	static int on = -1;

	if (on < 0)
		on = getenv("DIFF_TRACE") != NULL;
	return on;
}

/* n <= 64 bytes as hex, 16 per group; two results may be used in one message. */
static inline const char *diff_hex(const uint8_t *p, unsigned n)
{
	static char out[2][200];
	static int k;
	char *o = out[k ^= 1];

	o[0] = 0;
	for (unsigned i = 0; i < n && i < 64; i++)
		sprintf(o + 3 * i, "%02x%c", p[i], i % 16 == 15 ? '|' : ' ');
	return o;
}

/* ---- completions ----
 *
 * Both twins poll into arrays filled with the same poison first, so a field libmlx5 does not
 * set for a completion is seen as untouched. libmlx5 44 (cq.c: mlx5_parse_cqe,
 * handle_good_req, handle_responder) sets wc_flags and qp_num always, and
 *   requester success: wr_id, status, opcode; byte_len only for READ and atomics;
 *   responder success: wr_id, status, opcode, byte_len, src_qp, slid, sl, dlid_path_bits,
 *                      pkey_index; imm_data only with an immediate or invalidated rkey;
 *   error:             wr_id, status, vendor_err.
 * fastverbs' fv_poll_cq defines every field (README, "Differences from libmlx5"): the failed
 * WQE's kind as the opcode of an error, 0 elsewhere (imm_data of a receive without
 * immediate: the CQE's immediate word, which then holds the P_Key index, 0 here).
 */
#define DIFF_POISON 0xa5

/* Completions of the two twins to compare, polled into poisoned arrays. */
struct diff_wcs {
	struct ibv_wc wc[2][256];
	int n[2];
};

static inline void diff_wcs_reset(struct diff_wcs *w)
{
	memset(w->wc, DIFF_POISON, sizeof(w->wc));
	w->n[LIB] = w->n[FV] = 0;
}

/* QP numbers of the twins that mean the same thing: (libmlx5's, fastverbs'). */
struct diff_qpns {
	uint32_t pair[8][2];
	int n;
};

static inline int diff_qpn_match(const struct diff_qpns *m, uint32_t a, uint32_t b)
{
	for (int i = 0; i < m->n; i++)
		if (m->pair[i][LIB] == a && m->pair[i][FV] == b)
			return 1;
	return 0;
}

/*
 * The offset of the first byte where x and y differ, n if none. memcmp first, the byte loop
 * only to name the place: under ASan a byte loop checks every byte through a call.
 */
static inline size_t diff_first_diff(const uint8_t *x, const uint8_t *y, size_t n)
{
	size_t first = 0;

	if (!memcmp(x, y, n))
		return n;
	while (first < n && x[first] == y[first])
		first++;
	return first;
}

static inline int diff_untouched(const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (((const uint8_t *)p)[i] != DIFF_POISON)
			return 0;
	return 1;
}

static inline int diff_zero(const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (((const uint8_t *)p)[i])
			return 0;
	return 1;
}

/* A field libmlx5 leaves as the caller had it and fastverbs sets to 0. */
#define DIFF_UNSET(a, b, f, what, round, i)                                                          \
	do {                                                                                       \
		cr_assert(diff_untouched(&(a)->f, sizeof((a)->f)), "%s round %d, completion %d: "  \
			  "libmlx5 set " #f " (it leaves it untouched)", what, round, i);           \
		cr_assert(diff_zero(&(b)->f, sizeof((b)->f)), "%s round %d, completion %d: "       \
			  "fastverbs left " #f " nonzero", what, round, i);                         \
	} while (0)

#define DIFF_SAME(a, b, f, what, round, i)                                                           \
	cr_assert_eq((a)->f, (b)->f, "%s round %d, completion %d: " #f " %llu (libmlx5) vs %llu",   \
		     what, round, i, (unsigned long long)(a)->f, (unsigned long long)(b)->f)

/* The fields only a successful receive completion sets: libmlx5 leaves them untouched, fastverbs
 * zeroes them. */
static inline void diff_no_recv_fields(const struct ibv_wc *a, const struct ibv_wc *b, const char *what,
				       int round, int i)
{
	DIFF_UNSET(a, b, imm_data, what, round, i);
	DIFF_UNSET(a, b, src_qp, what, round, i);
	DIFF_UNSET(a, b, pkey_index, what, round, i);
	DIFF_UNSET(a, b, slid, what, round, i);
	DIFF_UNSET(a, b, sl, what, round, i);
	DIFF_UNSET(a, b, dlid_path_bits, what, round, i);
}

/*
 * libmlx5's completion a against fastverbs' b: qp_num must be a twin pair of qps, src_qp one of
 * srcs (the twin senders; receive completions only).
 */
static inline void diff_wc_check(const struct ibv_wc *a, const struct ibv_wc *b, const struct diff_qpns *qps,
				 const struct diff_qpns *srcs, const char *what, int round, int i)
{
	DIFF_SAME(a, b, wr_id, what, round, i);
	cr_assert_eq(a->status, b->status, "%s round %d, completion %d (wr_id %#llx): status %s vs %s", what,
		     round, i, (unsigned long long)a->wr_id, ibv_wc_status_str(a->status),
		     ibv_wc_status_str(b->status));
	cr_assert(diff_qpn_match(qps, a->qp_num, b->qp_num), "%s round %d, completion %d: qp_num %#x vs %#x",
		  what, round, i, a->qp_num, b->qp_num);
	DIFF_SAME(a, b, wc_flags, what, round, i);
	if (a->status != IBV_WC_SUCCESS) {
		DIFF_SAME(a, b, vendor_err, what, round, i);
		cr_assert(diff_untouched(&a->opcode, sizeof(a->opcode)), "%s round %d: libmlx5 set an error's opcode",
			  what, round);
		cr_assert(!diff_untouched(&b->opcode, sizeof(b->opcode)), "%s round %d: fastverbs left an error's "
			  "opcode undefined", what, round);
		DIFF_UNSET(a, b, byte_len, what, round, i);
		diff_no_recv_fields(a, b, what, round, i);
		return;
	}
	DIFF_SAME(a, b, opcode, what, round, i);
	DIFF_UNSET(a, b, vendor_err, what, round, i);
	if (!(a->opcode & IBV_WC_RECV)) {	/* requester */
		if (a->opcode == IBV_WC_RDMA_READ || a->opcode == IBV_WC_COMP_SWAP || a->opcode == IBV_WC_FETCH_ADD)
			DIFF_SAME(a, b, byte_len, what, round, i);
		else
			DIFF_UNSET(a, b, byte_len, what, round, i);
		diff_no_recv_fields(a, b, what, round, i);
		return;
	}
	DIFF_SAME(a, b, byte_len, what, round, i);
	if (a->wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV))
		DIFF_SAME(a, b, imm_data, what, round, i);
	else
		DIFF_UNSET(a, b, imm_data, what, round, i);
	cr_assert(diff_qpn_match(srcs, a->src_qp, b->src_qp), "%s round %d, completion %d: src_qp %#x vs %#x",
		  what, round, i, a->src_qp, b->src_qp);
	DIFF_SAME(a, b, pkey_index, what, round, i);
	DIFF_SAME(a, b, slid, what, round, i);
	DIFF_SAME(a, b, sl, what, round, i);
	DIFF_SAME(a, b, dlid_path_bits, what, round, i);
}

/*
 * Let the device run everything and poll both CQs until neither gives more: libmlx5's with
 * ibv_poll_cq, fastverbs' with fv_poll_cq. Then the two lists must match completion by
 * completion. Returns the number of error completions.
 */
static inline int diff_poll_compare(struct ibv_cq *lib, struct fv_cq *fv, struct diff_wcs *w,
				    const struct diff_qpns *qps, const struct diff_qpns *srcs,
				    const char *what, int round)
{
	struct timespec t0;
	int errors = 0;

	diff_wcs_reset(w);
	fvsim_run_until_idle();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int ra = ibv_poll_cq(lib, 256 - w->n[LIB], w->wc[LIB] + w->n[LIB]);
		int rb = fv_poll_cq(fv, 256 - w->n[FV], w->wc[FV] + w->n[FV]);

		cr_assert(ra >= 0 && rb >= 0, "%s round %d: poll failed (%d, %d)", what, round, ra, rb);
		w->n[LIB] += ra;
		w->n[FV] += rb;
		if (ra == 0 && rb == 0 && !fvsim_run_until_idle())
			break;
		cr_assert(w->n[LIB] < 256 && w->n[FV] < 256, "%s round %d: too many completions", what, round);
		cr_assert(simt_ms_since(&t0) < SIMT_WAIT_MS, "%s round %d: completions never settle", what, round);
	}
	cr_assert_eq(w->n[LIB], w->n[FV], "%s round %d: libmlx5 gave %d completions, fastverbs %d", what, round,
		     w->n[LIB], w->n[FV]);
	for (int i = 0; i < w->n[LIB]; i++) {
		diff_wc_check(&w->wc[LIB][i], &w->wc[FV][i], qps, srcs, what, round, i);
		errors += w->wc[LIB][i].status != IBV_WC_SUCCESS;
	}
	return errors;
}

#endif
