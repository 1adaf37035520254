/*
 * fv_post_send(3)'s ERRORS section against the code. Each entry (.TP, .B EXXX, its text) that
 * names an opcode (IBV_WR_*) claims fv_post_send can answer that errno for that opcode. The
 * probe posts every opcode on RC, UC, UD and XRC QPs in plain memory, as a valid WR and with
 * each of the faults the page's entries describe, and records what comes back. A claim no
 * probe produced is stale: the page says something the code no longer does. The probe knows
 * nothing of the page; the page names no opcode the probe does not know.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <fastverbs/compat/post_send.h>
#include "memqp.h"

static const struct { const char *name; enum ibv_wr_opcode op; } opcodes[] = {
	{ "IBV_WR_SEND", IBV_WR_SEND }, { "IBV_WR_SEND_WITH_IMM", IBV_WR_SEND_WITH_IMM },
	{ "IBV_WR_SEND_WITH_INV", IBV_WR_SEND_WITH_INV }, { "IBV_WR_RDMA_WRITE", IBV_WR_RDMA_WRITE },
	{ "IBV_WR_RDMA_WRITE_WITH_IMM", IBV_WR_RDMA_WRITE_WITH_IMM }, { "IBV_WR_RDMA_READ", IBV_WR_RDMA_READ },
	{ "IBV_WR_ATOMIC_CMP_AND_SWP", IBV_WR_ATOMIC_CMP_AND_SWP },
	{ "IBV_WR_ATOMIC_FETCH_AND_ADD", IBV_WR_ATOMIC_FETCH_AND_ADD },
	{ "IBV_WR_LOCAL_INV", IBV_WR_LOCAL_INV }, { "IBV_WR_BIND_MW", IBV_WR_BIND_MW },
	{ "IBV_WR_TSO", IBV_WR_TSO }, { "IBV_WR_DRIVER1", IBV_WR_DRIVER1 },
};
#define N_OPS (sizeof(opcodes) / sizeof(opcodes[0]))

static const struct { const char *name; int err; } errnos[] = {
	{ "EINVAL", EINVAL }, { "ENOMEM", ENOMEM }, { "EOPNOTSUPP", EOPNOTSUPP },
};
#define N_ERRS (sizeof(errnos) / sizeof(errnos[0]))

/* The faults a WR can carry: each entry of the page is about one of them. */
enum fault { F_NONE, F_INLINE, F_NEG_SGE, F_MANY_SGE, F_NO_AH, F_BIG_BIND, F_NO_MW, F_NO_MR, F_COUNT };

static uint8_t buf[4096];
static struct ibv_mw the_mw = { .rkey = 0x4201, .type = IBV_MW_TYPE_2 };
static struct ibv_mr the_mr = { .lkey = 0x1234 };
static bool seen[N_OPS][N_ERRS];	/* what the probe got back */

static int post_one(enum fv_qpt qpt, enum ibv_wr_opcode op, enum fault f)
{
	struct memqp_cfg c = { .qpt = qpt, .qpn = 0x777, .sq_wqe_cnt = 64, .bf_size = 256, .max_inline = 60,
			       .max_send_sge = 4 };
	struct ibv_sge s[8];
	struct ibv_send_wr w, *bad = NULL;
	struct fv_ah ah;
	struct mlx5_wqe_av av;
	struct memqp m;

	for (int i = 0; i < 8; i++)
		s[i] = (struct ibv_sge){ .addr = (uintptr_t)(buf + 64 * i), .length = 8, .lkey = 0x1234 };
	memset(&w, 0, sizeof(w));
	w.opcode = op;
	w.sg_list = s;
	w.num_sge = f == F_NEG_SGE ? -1 : f == F_MANY_SGE ? 8 : 1;
	w.send_flags = IBV_SEND_SIGNALED | (f == F_INLINE ? IBV_SEND_INLINE : 0);
	w.wr.rdma.remote_addr = 0x10000;
	w.wr.rdma.rkey = 0x77;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w.wr.atomic.remote_addr = 0x10000;
		w.wr.atomic.rkey = 0x77;
		w.wr.atomic.compare_add = 1;
	}
	if (op == IBV_WR_BIND_MW) {
		w.num_sge = 0;
		w.bind_mw.mw = f == F_NO_MW ? NULL : &the_mw;
		w.bind_mw.rkey = 0x4202;
		w.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = f == F_NO_MR ? NULL : &the_mr,
			.addr = (uintptr_t)buf, .length = f == F_BIG_BIND ? (1ull << 31) + 1 : 4096,
			.mw_access_flags = IBV_ACCESS_REMOTE_READ };
	}
	if (op == IBV_WR_LOCAL_INV)
		w.invalidate_rkey = 0x4202;
	memqp_init(&m, &c);
	memset(&av, 0, sizeof(av));
	fv__ah_fill(&ah, &av);
	if (qpt == FV_QPT_UD)
		memset(&w.wr.ud, 0, sizeof(w.wr.ud));	/* the union's remote address is no AH */
	if (qpt == FV_QPT_UD && f != F_NO_AH) {
		/* a stand-in ibv_ah, found through the QP's AV cache (as tests/unit/send_refuse.c) */
		m.qp.ah_cache_key = (struct ibv_ah *)&ah;
		m.qp.ah_cache_av = &ah.av;
		w.wr.ud.ah = (struct ibv_ah *)&ah;
		w.wr.ud.remote_qpn = 5;
	}
	int err = fv_post_send(&m.qp, &w, &bad);

	memqp_free(&m);
	return err;
}

static void probe(void)
{
	static const enum fv_qpt qpts[] = { FV_QPT_RC, FV_QPT_UC, FV_QPT_UD, FV_QPT_XRC };

	for (size_t o = 0; o < N_OPS; o++)
		for (size_t q = 0; q < sizeof(qpts) / sizeof(qpts[0]); q++)
			for (int f = 0; f < F_COUNT; f++) {
				int err = post_one(qpts[q], opcodes[o].op, (enum fault)f);

				for (size_t e = 0; e < N_ERRS; e++)
					seen[o][e] |= errnos[e].err == err;
			}
}

/* The stale claims of a page's text (its ERRORS section), each printed into why; -1 for a
 * name the probe does not know. */
static int stale_claims(const char *page, char *why, size_t n)
{
	const char *sec = strstr(page, "\n.SH ERRORS\n"), *end;
	int stale = 0;

	why[0] = 0;
	cr_assert(sec, "no ERRORS section");
	end = strstr(sec + 1, "\n.SH ");
	end = end ? end : sec + strlen(sec);
	for (const char *p = strstr(sec, "\n.B E"); p && p < end; p = strstr(p + 1, "\n.B E")) {
		const char *next = strstr(p + 1, "\n.TP");
		size_t e = 0, len = strcspn(p + 4, "\n");

		next = next && next < end ? next : end;
		while (e < N_ERRS && (strlen(errnos[e].name) != len || strncmp(p + 4, errnos[e].name, len)))
			e++;
		if (e == N_ERRS)
			return snprintf(why, n, "errno %.*s unknown to the probe", (int)len, p + 4), -1;
		for (const char *w = strstr(p, "IBV_WR_"); w && w < next; w = strstr(w + 1, "IBV_WR_")) {
			size_t wl = strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789"), o = 0;

			while (o < N_OPS && (strlen(opcodes[o].name) != wl || strncmp(w, opcodes[o].name, wl)))
				o++;
			if (o == N_OPS)
				return snprintf(why, n, "opcode %.*s unknown to the probe", (int)wl, w), -1;
			if (!seen[o][e]) {
				size_t u = strlen(why);

				snprintf(why + u, n - u, "%s for %s; ", errnos[e].name, opcodes[o].name);
				stale++;
			}
		}
	}
	return stale;
}

static char *read_page(const char *rel)
{
	static char text[65536];
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", FV_TOP, rel);
	f = fopen(path, "r");
	cr_assert(f, "%s: cannot open", path);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	return text;
}

Test(man_errnos, fv_post_send_page_matches_the_code)
{
	char why[1024];

	probe();
	cr_assert(seen[9][2], "the probe never got EOPNOTSUPP for IBV_WR_BIND_MW: its faults are wrong");
	int stale = stale_claims(read_page("man/man3/fv_post_send.3"), why, sizeof(why));

	cr_assert_eq(stale, 0, "man/man3/fv_post_send.3 ERRORS claims what fv_post_send never returns: %s", why);
}

/* The check itself: the page as it read before memory windows were built must be caught. */
Test(man_errnos, a_stale_page_is_caught)
{
	static const char old[] = "\n.SH ERRORS\n.TP\n.B EINVAL\nAn unknown opcode; IBV_WR_DRIVER1.\n.TP\n"
				  ".B EOPNOTSUPP\nIBV_WR_LOCAL_INV or IBV_WR_BIND_MW (not built by fastverbs yet).\n"
				  ".SH NOTES\n";
	char why[1024];

	probe();
	cr_assert_eq(stale_claims(old, why, sizeof(why)), 1, "%s", why);
	cr_assert(strstr(why, "EOPNOTSUPP for IBV_WR_LOCAL_INV"), "%s", why);
}
