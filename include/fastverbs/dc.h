/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The DCI's transport segment (docs/formats.md §3.10): UD's 48-byte address vector after the
 * control segment, its first 8 bytes the DCT's access key (big-endian, all 8: UD's Q_Key word
 * and the reserved word after it), bytes 8-11 the DCT number with the extended-AV bit, the
 * rest the address handle's own bytes. Then RC's segments, as on RC.
 */
#ifndef FASTVERBS_DC_H
#define FASTVERBS_DC_H

#include "req.h"

FV__EXTERN_C_BEGIN

/* The DCI AV's first unit: the access key, then its bytes 8-15 given as one big-endian number w. */
static inline struct fv__image fv__dc_head_image(uint64_t dc_key, uint64_t w)
{
	return FV__IMAGE(htobe64(dc_key), htobe64(w));
}

/*
 * Unit i (0-2) of a DCI request's AV: the head from the form the request carries it in (the
 * fv_wr_* word, an fv_ah's, or a verbs AH's own bytes), the other two the AV's as they are.
 * libmlx5 ors the DCT number into the AH's bytes 8-11, which its address handles keep 0.
 */
static FV__ALWAYS_INLINE struct fv__image fv__dc_av_image(const struct fv__req *r, unsigned i)
{
	uint32_t rest;	/* bytes 12..15: stat_rate_sl, fl_mlid, rlid */

	if (i)
		return fv__av_unit(r->av, i);
	if (r->av_word)
		return fv__dc_head_image(r->dc_key, r->av_w);
	if (r->av_fv)
		return fv__dc_head_image(r->dc_key, fv__ah_av_word(r->av, r->remote_qpn));
	memcpy(&rest, (const uint8_t *)r->av + 12, sizeof(rest));
	return fv__dc_head_image(r->dc_key, (uint64_t)(r->remote_qpn | MLX5_EXTENDED_UD_AV) << 32 | be32toh(rest));
}

FV__EXTERN_C_END

#endif /* FASTVERBS_DC_H */
