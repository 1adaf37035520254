/*
 * Raw Ethernet WQEs byte for byte against libmlx5: replay tests/vectors/libmlx5-44/raw.txt
 * (SEND and TSO on RAW_PACKET QPs: the Ethernet segment, its inline header taken whole or in
 * part from the first SGEs, checksum offload, inline payloads, the refusals, the wr_* API,
 * and on a 16-block ring WQEs across the ring end) on rings of the producer's geometry,
 * through fv_post_send, the typed builders and the fv_wr_* calls, comparing every WQEBB, the
 * doorbell record and the BlueFlame register. The payload bytes the header is copied from
 * sit where the producer had them (its buffer at 0x10000000, byte i = i mod 256).
 */
#include <stdio.h>
#include <sys/mman.h>
#include <criterion/criterion.h>
#include <fastverbs/gen/wr.h>
#include "memqp.h"
#include "vecfile.h"

#define VECTORS FV_TOP "/tests/vectors/libmlx5-44/raw.txt"
#define BUF     0x10000000ull	/* the producer's data buffer */
#define BUF_LEN (1u << 20)

static uint8_t *buf;
static uint32_t lkey, max_tso, csum;
static struct memqp_cfg geo[2];	/* RAW, RAWS */

static void setup(void)
{
	FILE *f = fopen(VECTORS, "r");
	char line[256];
	unsigned qpn, cnt, bf, inl, sge;
	char name[8];

	buf = mmap((void *)(uintptr_t)BUF, BUF_LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	cr_assert(buf == (void *)(uintptr_t)BUF, "cannot map the producer's buffer address");
	for (unsigned i = 0; i < BUF_LEN; i++)
		buf[i] = (uint8_t)i;
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		int k;

		sscanf(line, "#! lkey %x max_tso %u csum %u", &lkey, &max_tso, &csum);
		if (sscanf(line, "#! %7s qpn %x sq.wqe_cnt %u bf.size %u max_inline %u max_send_sge %u", name, &qpn,
			   &cnt, &bf, &inl, &sge) != 6)
			continue;
		k = !strcmp(name, "RAWS");
		geo[k] = (struct memqp_cfg){ .qpt = FV_QPT_RAW, .qpn = qpn, .sq_wqe_cnt = cnt, .bf_size = bf,
			.max_inline = inl, .max_send_sge = sge, .eth_inline = 18, .max_tso_header = 128,
			.max_tso = max_tso, .raw_csum = csum };
	}
	fclose(f);
	cr_assert(lkey && geo[0].qpn && geo[1].qpn, "no geometry lines in %s", VECTORS);
}

static void teardown(void)
{
	munmap(buf, BUF_LEN);
}

TestSuite(vectors_raw, .init = setup, .fini = teardown);

/* The producer's TCP header of hdr_sz bytes (its tcp_header()). */
static void tcp_header(uint8_t *p, unsigned hdr_sz)
{
	static const uint8_t eth[14] = { 2, 0, 0, 0, 0, 0xbb, 2, 0, 0, 0, 0, 1, 0x08, 0x00 };
	unsigned tcp = hdr_sz - 34;

	memset(p, 0, hdr_sz);
	memcpy(p, eth, 14);
	p[14] = 0x45;
	p[22] = 64, p[23] = 6;
	p[26] = 10, p[29] = 1, p[30] = 10, p[33] = 2;
	p[34] = 0x30, p[35] = 0x39, p[36] = 0x00, p[37] = 0x50;
	p[46] = (uint8_t)((tcp / 4) << 4);
	p[47] = 0x18;
	p[48] = 0xff, p[49] = 0xff;
	for (unsigned i = 54; i < hdr_sz; i++)
		p[i] = 1;
}

/* What a title says: "RAW[S] [wr] [err] send|tso hdr H mss M [inline] sge O+L... [IP_CSUM] SIGNALED". */
struct rawcase {
	bool wr, tso, inl, csum, sig;
	unsigned hdr, mss;
	int n;
	struct ibv_sge sgl[4];
};

static void parse(const char *t, struct rawcase *c)
{
	const char *p;

	memset(c, 0, sizeof(*c));
	c->wr = strstr(t, " wr ") != NULL;
	c->tso = strstr(t, " tso ") != NULL;
	c->inl = strstr(t, " inline ") != NULL;
	c->csum = strstr(t, "IP_CSUM") != NULL;
	c->sig = strstr(t, "SIGNALED") != NULL;
	if ((p = strstr(t, "hdr ")))
		sscanf(p, "hdr %u mss %u", &c->hdr, &c->mss);
	if ((p = strstr(t, " sge "))) {
		unsigned off, len;
		int used;

		for (p += 4; c->n < 4 && sscanf(p, " %x+%x%n", &off, &len, &used) == 2; p += used)
			c->sgl[c->n++] = (struct ibv_sge){ BUF + off, len, lkey };
	}
	if (strstr(t, "nosge"))
		c->n = 0;
	if (c->tso)
		tcp_header(buf + 0x8000, c->hdr);
}

static unsigned fv_flags(const struct rawcase *c)
{
	return (c->sig ? FV_SIGNALED : 0) | (c->csum ? FV_IP_CSUM : 0);
}

/* The case through fv_post_send, with the producer's WR. */
static int post_compat(struct memqp *m, const struct rawcase *c)
{
	struct ibv_sge sgl[4];
	struct ibv_send_wr w, *bad = NULL;
	int rc;

	memcpy(sgl, c->sgl, sizeof(sgl));
	memset(&w, 0, sizeof(w));
	w.wr_id = 0x900;
	w.opcode = c->tso ? IBV_WR_TSO : IBV_WR_SEND;
	w.send_flags = (c->sig ? IBV_SEND_SIGNALED : 0) | (c->csum ? IBV_SEND_IP_CSUM : 0) |
		       (c->inl ? IBV_SEND_INLINE : 0);
	w.sg_list = sgl;
	w.num_sge = c->n;
	w.tso.hdr = buf + 0x8000;
	w.tso.hdr_sz = (uint16_t)c->hdr;
	w.tso.mss = (uint16_t)c->mss;
	rc = fv_post_send(&m->qp, &w, &bad);
	cr_assert(rc ? bad == &w : bad == NULL);
	return rc;
}

/* The case through the typed builders (a list of inline pieces has no typed form). */
static int post_typed(struct memqp *m, const struct rawcase *c)
{
	struct fv_raw *h = (struct fv_raw *)&m->qp;
	const void *d = c->n ? (const void *)(uintptr_t)c->sgl[0].addr : NULL;
	uint32_t len = c->n ? c->sgl[0].length : 0;
	uint16_t hs = (uint16_t)c->hdr, mss = (uint16_t)c->mss;
	const void *hdr = buf + 0x8000;
	int rc;

	if (c->inl && c->n > 1)
		return post_compat(m, c);
	if (c->tso)
		rc = c->inl ? fv_send_tso_inline(h, 0x901, fv_flags(c), hdr, hs, mss, d, len) :
		     c->n == 1 ? fv_send_tso(h, 0x901, fv_flags(c), hdr, hs, mss, &c->sgl[0]) :
		     fv_send_tso_sgl(h, 0x901, fv_flags(c), hdr, hs, mss, c->sgl, c->n);
	else
		rc = c->inl ? fv_send_inline(h, 0x901, fv_flags(c), d, len) :
		     c->n == 1 ? fv_send(h, 0x901, fv_flags(c), &c->sgl[0]) :
		     fv_send_sgl(h, 0x901, fv_flags(c), c->sgl, c->n);
	fv_ring(h);
	return rc;
}

/* The case through fv_wr_* on the typed handle (as the producer's wr_* cases). */
static int post_wr(struct memqp *m, const struct rawcase *c)
{
	struct fv_raw *h = (struct fv_raw *)&m->qp;

	fv_wr_start(h);
	h->qp.wr_id = 0x910;
	h->qp.wr_flags = (c->sig ? IBV_SEND_SIGNALED : 0) | (c->csum ? IBV_SEND_IP_CSUM : 0);
	if (c->tso)
		fv_wr_send_tso(h, buf + 0x8000, (uint16_t)c->hdr, (uint16_t)c->mss);
	else
		fv_wr_send(h);
	if (c->inl)
		fv_wr_set_inline_data(h, (void *)(uintptr_t)c->sgl[0].addr, c->sgl[0].length);
	else if (c->n == 1)
		fv_wr_set_sge(h, c->sgl[0].lkey, c->sgl[0].addr, c->sgl[0].length);
	else
		fv_wr_set_sge_list(h, (size_t)c->n, c->sgl);
	return fv_wr_complete(h);
}

/* how: 0 fv_post_send, 1 typed builders; the wr_* cases always through fv_wr_*. */
static void replay(int how)
{
	static struct vcase cases[64];
	struct memqp q[2];
	int n = vec_load(VECTORS, cases, 64);

	cr_assert_geq(n, 50, "parsed %d cases", n);
	for (int k = 0; k < 2; k++)
		memqp_init(&q[k], &geo[k]);
	for (int i = 0; i < n; i++) {
		struct vcase *v = &cases[i];
		struct memqp *m = &q[!strcmp(v->qp, "RAWS")];
		struct rawcase c;
		int rc;

		parse(v->title, &c);
		memset(m->bf, 0, 512);
		m->qp.sq.ci = m->qp.sq.pi;	/* the device completed the earlier WQEs */
		rc = c.wr ? post_wr(m, &c) : how ? post_typed(m, &c) : post_compat(m, &c);
		cr_assert_eq(rc, v->rc, "%s: returned %d, libmlx5 %d", v->title, rc, v->rc);
		vec_expect(m, v);
	}
	for (int k = 0; k < 2; k++)
		memqp_free(&q[k]);
}

Test(vectors_raw, compat_path_matches_libmlx5)
{
	replay(0);
}

Test(vectors_raw, typed_path_matches_libmlx5)
{
	replay(1);
}
