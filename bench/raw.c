/*
 * Instructions per posted raw Ethernet WR, libmlx5 against fastverbs, on the software device's
 * Ethernet port (FVSIM_LINK=eth, step mode: nothing executes while a call is measured). A
 * 64-byte frame (SEND, one SGE, IP checksum offload) or a TSO send (a 54-byte header, 1400
 * bytes of payload from one SGE, MSS 1000), ROUND WRs per measured call, 1 or 32 per
 * doorbell: ibv_post_send (lib), fv_post_send of the same ibv_send_wr lists (ps), the typed
 * builders fv_send / fv_send_tso + fv_ring (typed). The WR lists are filled inside the
 * measured call, as an application would. Run under callgrind with --collect-atstart=no
 * (bench/run.sh, `make bench`): only the measured calls count, after a warm-up call.
 *
 *   raw send|tso lib|ps|typed 1|32
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>
#include <fastverbs/fastverbs.h>
#include "../sim/fvsim.h"

#define ROUND 32	/* WRs per measured call; the last asks for a completion */
#define CALLS 100
#define HDR   54
#define TSO   1400
#define MSS   1000

struct ctx {
	struct ibv_qp *qp;
	struct fv_raw raw;
	struct ibv_sge sge;
	uint8_t *hdr;
	int tso;
};

__attribute__((noreturn, noinline, cold)) static void fail(const char *what)
{
	fprintf(stderr, "raw: %s failed\n", what);
	exit(1);
}

/* ROUND WRs as lists of batch ibv_send_wr, through ibv_post_send or fv_post_send. */
static inline __attribute__((always_inline)) void body_list(struct ctx *c, uint64_t id, int batch, int fv)
{
	struct ibv_send_wr wrs[32], *bad;

	for (int i = 0; i < ROUND; i += batch) {
		for (int j = 0; j < batch; j++) {
			struct ibv_send_wr *w = &wrs[j];

			w->wr_id = id++;
			w->next = j + 1 < batch ? &wrs[j + 1] : NULL;
			w->sg_list = &c->sge;
			w->num_sge = 1;
			w->opcode = c->tso ? IBV_WR_TSO : IBV_WR_SEND;
			w->send_flags = IBV_SEND_IP_CSUM | (i + j == ROUND - 1 ? IBV_SEND_SIGNALED : 0);
			if (c->tso) {
				w->tso.hdr = c->hdr;
				w->tso.hdr_sz = HDR;
				w->tso.mss = MSS;
			}
		}
		if (fv ? fv_post_send(&c->raw.qp, wrs, &bad) : ibv_post_send(c->qp, wrs, &bad))
			fail("posting");
	}
}

/* ROUND typed builds, a ring every batch. */
static inline __attribute__((always_inline)) void body_typed(struct ctx *c, uint64_t id, int batch)
{
	for (int i = 0; i < ROUND; i += batch) {
		for (int j = 0; j < batch; j++) {
			unsigned f = FV_IP_CSUM | (i + j == ROUND - 1 ? FV_SIGNALED : 0);

			if (c->tso ? fv_send_tso(&c->raw, id++, f, c->hdr, HDR, MSS, &c->sge) :
				     fv_send(&c->raw, id++, f, &c->sge))
				fail("fv_send");
		}
		fv_ring(&c->raw);
	}
}

#define M(name, call) \
	__attribute__((noinline)) static void name(struct ctx *c, uint64_t id) { call; }
M(m_lib_1, body_list(c, id, 1, 0))
M(m_lib_32, body_list(c, id, 32, 0))
M(m_ps_1, body_list(c, id, 1, 1))
M(m_ps_32, body_list(c, id, 32, 1))
M(m_typed_1, body_typed(c, id, 1))
M(m_typed_32, body_typed(c, id, 32))

static struct ibv_qp *raw_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 2 * ROUND, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
		.pd = pd, .max_tso_header = HDR,
	};
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);

	if (!qp || ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT))
		fail("creating a RAW_PACKET QP (root, FVSIM_LINK=eth)");
	m.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &m, IBV_QP_STATE))
		fail("RTR");
	m.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(qp, &m, IBV_QP_STATE))
		fail("RTS");
	return qp;
}

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct fv_cq fcq;
	static struct ctx c;
	static uint8_t buf[4096] __attribute__((aligned(64)));
	int batch = argc > 3 ? atoi(argv[3]) : 0, path;

	if (argc != 4 || (strcmp(argv[1], "send") && strcmp(argv[1], "tso")) || (batch != 1 && batch != 32) ||
	    ((path = !strcmp(argv[2], "lib") ? 0 : !strcmp(argv[2], "ps") ? 1 : !strcmp(argv[2], "typed") ? 2 : -1) < 0)) {
		fprintf(stderr, "usage: raw send|tso lib|ps|typed 1|32\n");
		return 2;
	}
	void (*m)(struct ctx *, uint64_t) = path == 0 ? (batch == 1 ? m_lib_1 : m_lib_32) :
					    path == 1 ? (batch == 1 ? m_ps_1 : m_ps_32) :
					    (batch == 1 ? m_typed_1 : m_typed_32);

	if (!list || !list[0] || !(ctx = ibv_open_device(list[0])) || !(pd = ibv_alloc_pd(ctx)) ||
	    !(cq = ibv_create_cq(ctx, 256, NULL, NULL, 0)) ||
	    !(mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE)))
		fail("opening the device");
	memset(buf, 0x5a, sizeof(buf));
	buf[12] = 0x08, buf[13] = 0x00, buf[14] = 0x45;	/* IPv4 */
	c.tso = !strcmp(argv[1], "tso");
	c.hdr = buf;
	c.sge = (struct ibv_sge){ (uintptr_t)(buf + (c.tso ? 1024 : 0)), c.tso ? TSO : 64, mr->lkey };
	buf[23] = 6, buf[46] = 0x50;			/* TCP, 5 words */
	c.qp = raw_qp(ctx, pd, cq);
	if (path && (fv_raw_init(&c.raw, c.qp, HDR) || fv_cq_init(&fcq, cq)))
		fail("fv_raw_init");
	fvsim_set_step_mode(1);
	for (int k = 0; k <= CALLS; k++) {
		struct ibv_wc wc;
		int n;

		if (k)	/* call 0 warms up */
			CALLGRIND_TOGGLE_COLLECT;
		m(&c, (uint64_t)k * ROUND);
		if (k)
			CALLGRIND_TOGGLE_COLLECT;
		while ((n = path ? fv_poll_cq(&fcq, 1, &wc) : ibv_poll_cq(cq, 1, &wc)) == 0)
			fvsim_step();
		if (n < 0 || wc.status != IBV_WC_SUCCESS)
			fail("a send");
	}
	printf("wrs %d\n", CALLS * ROUND);
	if (path)
		fv_qp_cleanup(&c.raw.qp);
	ibv_destroy_qp(c.qp);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
