/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Address handles for UD: the 48-byte extended address vector that libmlx5 prebuilt for an
 * ibv_ah (mlx5dv_init_obj), copied once so that posting never calls into libmlx5.
 */
#ifndef FASTVERBS_AH_H
#define FASTVERBS_AH_H

#include "qp.h"

FV__EXTERN_C_BEGIN

/*
 * Address handle: the 48-byte extended address vector libmlx5 prebuilt for an ibv_ah, its
 * first 8 bytes (Q_Key and reserved, which every WQE overwrites) in the typed builders' form
 * (fv__ah_fill). Filled by fv_ah_init.
 */
struct fv_ah {
	struct mlx5_wqe_av av;
};

/*
 * fah from a 48-byte AV: a copy, then, over its first 8 bytes, the datagram segment's bytes
 * 8-15 with the remote QPN zero (the extended-AV bit and the AV's bytes 12-15) read as one
 * big-endian number: per WR the typed builders then or the QPN in and swap the word once
 * (wqe.h, fv__ah_av_image). The rest stays the AV's own, as the other paths read it.
 */
static inline void fv__ah_fill(struct fv_ah *fah, const struct mlx5_wqe_av *av)
{
	uint32_t rest;
	uint64_t w;

	memcpy(&fah->av, av, sizeof(fah->av));
	memcpy(&rest, (const uint8_t *)av + 12, sizeof(rest));
	w = (uint64_t)MLX5_EXTENDED_UD_AV << 32 | be32toh(rest);
	fah->av.key.dc_key = w;	/* read back typed (wqe.h, fv__ah_av_word) */
}

/* The address vector libmlx5 keeps for ah, or NULL if ah is not an mlx5 address handle. */
static inline const struct mlx5_wqe_av *fv__ah_av_of(struct ibv_ah *ah)
{
	struct mlx5dv_ah dv;
	struct mlx5dv_obj obj;

	memset(&dv, 0, sizeof(dv));
	memset(&obj, 0, sizeof(obj));
	obj.ah.in = ah;
	obj.ah.out = &dv;
	return mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH) ? NULL : dv.av;
}

/* Fill fv_ah from a verbs address handle. Returns 0 or EINVAL. */
static inline int fv_ah_init(struct fv_ah *fah, struct ibv_ah *ah)
{
	const struct mlx5_wqe_av *av = ah ? fv__ah_av_of(ah) : NULL;

	if (!av)
		return EINVAL;
	fv__ah_fill(fah, av);
	return 0;
}

/*
 * fv__ah_av_of out of line for the posting paths, declared pure: it writes nothing its callers
 * can see (only its own locals), so a cache miss does not make the compiler forget what it
 * keeps in registers across it (an fv_wr_* WQE's fields between its builder and its setter).
 */
static FV__NOINLINE __attribute__((pure)) const struct mlx5_wqe_av *fv__ah_av_lookup(struct ibv_ah *ah)
{
	return fv__ah_av_of(ah);
}

/*
 * Where libmlx5 keeps an address handle's AV, as an offset from the handle: the same for every
 * handle (they are all one struct type), learned from the first answer of mlx5dv_init_obj in
 * this program (0 until then). A UD QP's WRs name handles of its own device, as ibv_post_send
 * assumes too.
 */
static inline intptr_t *fv__ah_av_offset(void)
{
	static intptr_t off;

	return &off;
}

/*
 * The AV for a UD WR's ibv_ah (fv_post_send, fv_wr_set_ud_addr): the QP's one-entry cache,
 * else the learned offset (an application sending to many peers then costs an add a WR, not
 * a call into libmlx5), else a lookup that learns it. NULL: not an mlx5 address handle.
 */
static inline const struct mlx5_wqe_av *fv__qp_av(struct fv_qp *qp, struct ibv_ah *ah)
{
	if (ah != qp->ah_cache_key) {
		intptr_t off = __atomic_load_n(fv__ah_av_offset(), __ATOMIC_RELAXED);
		const struct mlx5_wqe_av *av;

		if (__builtin_expect(off != 0, 1))
			return (const struct mlx5_wqe_av *)(const void *)((const char *)ah + off);
		av = fv__ah_av_lookup(ah);
		if (!av)
			return NULL;
		__atomic_store_n(fv__ah_av_offset(), (intptr_t)((const char *)av - (const char *)ah), __ATOMIC_RELAXED);
		qp->ah_cache_key = ah;
		qp->ah_cache_av = av;
	}
	return qp->ah_cache_av;
}

FV__EXTERN_C_END

#endif /* FASTVERBS_AH_H */
