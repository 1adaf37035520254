/*
 * The send cases of a libmlx5 vector file (tests/vectors/libmlx5-44/: all.txt, mw.txt): per
 * case its title, QP name, the WQEBBs written (index and bytes), the doorbell record and the
 * BlueFlame register bytes.
 */
#ifndef VECFILE_H
#define VECFILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include "memqp.h"

struct vcase {
	char title[200];
	char qp[8];
	int nblk;
	uint32_t idx[8];
	uint8_t blk[8][64];
	uint32_t dbr;
	uint8_t bf[512];
	int rc;			/* what the post returned */
};

static inline int parse_hex(const char *s, uint8_t *out, int max)
{
	int n = 0;
	unsigned v;
	int used;

	while (n < max && sscanf(s, " %2x%n", &v, &used) == 1) {
		out[n++] = (uint8_t)v;
		s += used;
	}
	return n;
}

/* Read all send cases of the file at path (receive cases are tested in tests/unit/recv.c). */
static inline int vec_load(const char *path, struct vcase *cases, int max)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int n = -1, bf_off = -1;

	cr_assert(f, "cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		struct vcase *c = n >= 0 ? &cases[n] : NULL;
		char *colon = strchr(line, ':');
		unsigned a, b;

		if (!strncmp(line, "### ", 4)) {
			cr_assert(++n < max);
			c = &cases[n];
			memset(c, 0, sizeof(*c));
			char *end = strstr(line, "  qp=");
			snprintf(c->title, sizeof(c->title), "%.*s", (int)(end - line - 4), line + 4);
			sscanf(end, "  qp=%7s", c->qp);
			if (strstr(end, "post rc="))
				c->rc = atoi(strstr(end, "post rc=") + 8);
			bf_off = -1;
		} else if (c && sscanf(line, "SQ idx %u (slot %u)", &a, &b) == 2) {
			c->idx[c->nblk++] = a;
		} else if (c && sscanf(line, "  sq[%u]+0x%x:", &a, &b) == 2) {
			parse_hex(colon + 1, c->blk[c->nblk - 1] + b, 16);
		} else if (c && sscanf(line, "DBR send (dbrec[1]) = 0x%x", &a) == 1) {
			c->dbr = a;
		} else if (c && sscanf(line, "BF/UAR write at bf.reg+0x%x:", &a) == 1) {
			bf_off = (int)a;
		} else if (c && bf_off >= 0 && strstr(line, "  BF[") == line) {
			sscanf(strstr(line, "]+") + 1, "+0x%x:", &b);
			parse_hex(colon + 1, c->bf + bf_off + b, 16);
		}
	}
	fclose(f);
	return n + 1;
}

/* m's ring, doorbell record and BlueFlame register hold what case c recorded. */
static inline void vec_expect(const struct memqp *m, const struct vcase *c)
{
	for (int b = 0; b < c->nblk; b++)
		cr_assert_arr_eq(memqp_block(m, c->idx[b]), c->blk[b], 64,
				 "%s: WQEBB %u differs:\n%s", c->title, c->idx[b],
				 hexstr(memqp_block(m, c->idx[b]), 64));
	cr_assert_eq(memqp_sq_dbr(m), c->dbr, "%s: doorbell record %#x, want %#x",
		     c->title, memqp_sq_dbr(m), c->dbr);
	cr_assert_arr_eq(m->bf, c->bf, 512, "%s: BlueFlame register differs:\n%s",
			 c->title, hexstr(m->bf, 512));
}

#endif
