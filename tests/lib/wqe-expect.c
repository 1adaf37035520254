#include "wqe-expect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

void xr_init(struct xring *x, const void *init, size_t size)
{
	x->size = size;
	x->b = malloc(size);
	if (!x->b || !size || size % 64)
		abort();
	memcpy(x->b, init, size);
}

void xr_free(struct xring *x)
{
	free(x->b);
	x->b = NULL;
}

void xr_sync(struct xring *x, const void *ring)
{
	memcpy(x->b, ring, x->size);
}

void x_put8(struct xring *x, size_t off, uint8_t v)
{
	x->b[off % x->size] = v;
}

void x_put_be16(struct xring *x, size_t off, uint16_t v)
{
	x_put8(x, off, (uint8_t)(v >> 8));
	x_put8(x, off + 1, (uint8_t)v);
}

void x_put_be32(struct xring *x, size_t off, uint32_t v)
{
	x_put_be16(x, off, (uint16_t)(v >> 16));
	x_put_be16(x, off + 2, (uint16_t)v);
}

void x_put_be64(struct xring *x, size_t off, uint64_t v)
{
	x_put_be32(x, off, (uint32_t)(v >> 32));
	x_put_be32(x, off + 4, (uint32_t)v);
}

void x_copy(struct xring *x, size_t off, const void *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x_put8(x, off + i, ((const uint8_t *)src)[i]);
}

/* Offset of the next segment. */
static size_t here(const struct xwqe *w)
{
	return w->start + w->len;
}

void xw_ctrl(struct xwqe *w, struct xring *x, uint32_t pi, uint8_t opcode, uint32_t qpn,
	     uint8_t fm_ce_se, const void *imm)
{
	static const uint8_t zero[4];

	w->x = x;
	w->start = (size_t)pi * 64 % x->size;
	w->len = 0;
	w->qpn = qpn;
	x_put8(x, here(w) + 0, 0);			/* opmod */
	x_put_be16(x, here(w) + 1, (uint16_t)pi);	/* WQE index: low 16 bits */
	x_put8(x, here(w) + 3, opcode);
	x_put_be32(x, here(w) + 4, qpn << 8);		/* ds: xw_end */
	x_put8(x, here(w) + 8, 0);			/* signature */
	x_put_be16(x, here(w) + 9, 0);			/* stream id */
	x_put8(x, here(w) + 11, fm_ce_se);
	x_copy(x, here(w) + 12, imm ? imm : zero, 4);
	w->len += 16;
}

void xw_xrc(struct xwqe *w, uint32_t srqn)
{
	x_put_be32(w->x, here(w), srqn);
	x_put_be32(w->x, here(w) + 4, 0);
	x_put_be64(w->x, here(w) + 8, 0);
	w->len += 16;
}

void xw_av(struct xwqe *w, const uint8_t av[48], uint32_t remote_qpn, uint32_t qkey)
{
	size_t at = here(w);

	x_copy(w->x, at, av, 48);
	x_put_be32(w->x, at + 0, qkey);
	x_put_be32(w->x, at + 4, 0);
	x_put_be32(w->x, at + 8, remote_qpn | X_EXT_AV_BIT);
	w->len += 48;
}

void xw_raddr(struct xwqe *w, uint64_t raddr, uint32_t rkey)
{
	x_put_be64(w->x, here(w), raddr);
	x_put_be32(w->x, here(w) + 8, rkey);
	x_put_be32(w->x, here(w) + 12, 0);
	w->len += 16;
}

void xw_atomic(struct xwqe *w, uint64_t swap_add, uint64_t compare)
{
	x_put_be64(w->x, here(w), swap_add);
	x_put_be64(w->x, here(w) + 8, compare);
	w->len += 16;
}

void xw_data(struct xwqe *w, uint32_t len, uint32_t lkey, uint64_t addr)
{
	x_put_be32(w->x, here(w), len);
	x_put_be32(w->x, here(w) + 4, lkey);
	x_put_be64(w->x, here(w) + 8, addr);
	w->len += 16;
}

void xw_data_past_ds(struct xwqe *w, uint32_t len, uint32_t lkey, uint64_t addr)
{
	xw_data(w, len, lkey, addr);
	w->len -= 16;
}

void xw_inline(struct xwqe *w, const void *payload, uint32_t len)
{
	if (!len)
		return;
	x_put_be32(w->x, here(w), len | X_INLINE_BIT);
	x_copy(w->x, here(w) + 4, payload, len);
	w->len += (4 + len + 15) / 16 * 16;
}

unsigned xw_end(struct xwqe *w)
{
	unsigned ds = (unsigned)(w->len / 16);

	x_put_be32(w->x, w->start + 4, w->qpn << 8 | ds);
	return (ds + 3) / 4;
}

const char *x_diff(const void *got, const void *want, size_t n)
{
	static char s[2048];
	const uint8_t *g = got, *e = want;
	size_t i = 0, row, o;

	while (i < n && g[i] == e[i])
		i++;
	if (i == n)
		return NULL;
	row = i & ~(size_t)15;
	o = (size_t)snprintf(s, sizeof(s), "first difference at byte %zu (0x%zx): got %02x, want %02x\n",
			     i, i, g[i], e[i]);
	for (size_t r = row; r < n && r < row + 32 && o < sizeof(s) - 200; r += 16) {
		o += (size_t)snprintf(s + o, sizeof(s) - o, "  got  +%04zx:", r);
		for (size_t k = r; k < r + 16 && k < n; k++)
			o += (size_t)snprintf(s + o, sizeof(s) - o, " %02x", g[k]);
		o += (size_t)snprintf(s + o, sizeof(s) - o, "\n  want +%04zx:", r);
		for (size_t k = r; k < r + 16 && k < n; k++)
			o += (size_t)snprintf(s + o, sizeof(s) - o, " %02x", e[k]);
		o += (size_t)snprintf(s + o, sizeof(s) - o, "\n");
	}
	return s;
}

/* Largest WQE: ctrl, transport, raddr, atomic, then the larger of max_send_sge data segments
 * and a max_inline inline segment; capped at 63 units. */
uint32_t model_unsig_max(const struct memqp_cfg *c)
{
	uint32_t units = 1 + 2 + (c->qpt == FV_QPT_UD || c->qpt == FV_QPT_DCI ? 3u : c->qpt == FV_QPT_XRC ? 1u : 0u);
	uint32_t inline_units = (c->max_inline + 4 + 15) / 16;

	units += c->max_send_sge > inline_units ? c->max_send_sge : inline_units;
	if (units > 63)
		units = 63;
	uint32_t largest = (units * 16 + 63) / 64, left = c->sq_wqe_cnt > largest ? c->sq_wqe_cnt - largest : 0;

	return c->sq_wqe_cnt / 2 < left ? c->sq_wqe_cnt / 2 : left;
}
