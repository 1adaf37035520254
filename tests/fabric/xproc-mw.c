/* Memory windows across processes on one fabric (FVSIM_FABRIC): this process binds a type 2
 * window over part of its memory with fastverbs and hands the window's key (not the MR's) to a
 * forked peer, which writes and reads through it with plain verbs; then the window is
 * invalidated (by this process with a local invalidate, or by the peer with SEND with
 * invalidate) and the peer's next write through the key is refused (REM_ACCESS_ERR), the
 * memory untouched. Each test uses its own fabric name. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <fastverbs/compat/verbs.h>

#include "sim-xproc.h"

TestSuite(sim_xproc_mw, .init = join_fabric, .fini = leave_fabric, .timeout = 60);

#define WIN_OFF 4096	/* the window: WIN_LEN bytes at this offset of this process's buffer */
#define WIN_LEN 256

/* The peer's answer to a command: the status of its work completion (or 0xff: none). */
static uint8_t peer_do(struct side *s, const struct card *win, char cmd)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, 32, s->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	switch (cmd) {
	case 'w':	/* write through the window, then read it back into buf + 512 */
	case 'x':	/* write through the window once more (after the invalidation) */
		snprintf((char *)s->buf, 32, "%s", cmd == 'w' ? "through the window, from afar" : "too late: the key is dead");
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = win->addr;
		wr.wr.rdma.rkey = win->rkey;
		if (ibv_post_send(s->qp, &wr, &bad) || !wait_wc(s, &wc))
			return 0xff;
		if (cmd == 'x' || wc.status != IBV_WC_SUCCESS)
			return (uint8_t)wc.status;
		sge.addr = (uintptr_t)s->buf + 512;
		wr.opcode = IBV_WR_RDMA_READ;
		if (ibv_post_send(s->qp, &wr, &bad) || !wait_wc(s, &wc))
			return 0xff;
		if (wc.status == IBV_WC_SUCCESS && memcmp(s->buf, s->buf + 512, 30))
			return 0xfe;	/* read back something else */
		return (uint8_t)wc.status;
	case 'i':	/* SEND with invalidate of the window's key */
		memcpy(s->buf, "invalidate", 11);
		sge.length = 11;
		wr.opcode = IBV_WR_SEND_WITH_INV;
		wr.invalidate_rkey = win->rkey;
		if (ibv_post_send(s->qp, &wr, &bad) || !wait_wc(s, &wc))
			return 0xff;
		return (uint8_t)wc.status;
	default:
		return 0xff;
	}
}

/* The peer: plain verbs; one command byte in, one status byte out, until EOF. */
static int peer_main(int rd, int wr)
{
	struct side s;
	struct card them;
	char cmd;

	if (side_up(&s) || write(wr, &s.me, sizeof(s.me)) != sizeof(s.me) ||
	    read(rd, &them, sizeof(them)) != sizeof(them) || side_connect(&s, &them) || write(wr, "r", 1) != 1)
		return 1;
	while (read(rd, &cmd, 1) == 1) {
		uint8_t st = peer_do(&s, &them, cmd);

		if (write(wr, &st, 1) != 1)
			return 2;
	}
	return 0;
}

struct here {
	struct side s;
	struct ibv_mr *bmr;	/* the same buffer, bindable */
	struct ibv_mw *mw;
	struct fv_qp q;
	struct fv_cq c;
	uint32_t key;		/* the window's key once bound */
	int to, from;		/* pipes to and from the peer */
	pid_t peer;
};

static void expect_wc(struct here *h, uint64_t wr_id, enum ibv_wc_opcode op, struct ibv_wc *wc)
{
	int n = 0;

	for (long i = 0; i < 200000000 && !n; i++)
		n = fv_poll_cq(&h->c, 1, wc);
	cr_assert_eq(n, 1, "no completion");
	cr_assert_eq(wc->status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc->status));
	cr_assert_eq(wc->wr_id, wr_id);
	cr_assert_eq(wc->opcode, op);
}

static uint8_t ask(struct here *h, char cmd)
{
	uint8_t st = 0xff;

	cr_assert_eq(write(h->to, &cmd, 1), 1);
	cr_assert_eq(read(h->from, &st, 1), 1, "the peer is gone");
	return st;
}

/* Fork the peer, connect to it, bind the window (bind: 0 fv_wr_bind_mw, 1 fv_bind_mw) and
 * give the peer the window's key and address instead of the MR's. */
static void open_here(struct here *h, int typed)
{
	struct ibv_wc wc;
	struct card them, me;
	char ready;

	memset(h, 0, sizeof(*h));
	h->peer = xproc_fork(peer_main, &h->to, &h->from);
	cr_assert_eq(side_up(&h->s), 0);
	h->bmr = ibv_reg_mr(h->s.pd, h->s.buf, 8192, SIMT_ACCESS_ALL | IBV_ACCESS_MW_BIND);
	h->mw = ibv_alloc_mw(h->s.pd, IBV_MW_TYPE_2);
	cr_assert(h->bmr && h->mw, "%s", strerror(errno));
	cr_assert_eq(fv_qp_init(&h->q, h->s.qp), 0);
	cr_assert_eq(fv_cq_init(&h->c, h->s.cq), 0);
	cr_assert_eq(read(h->from, &them, sizeof(them)), (ssize_t)sizeof(them));
	cr_assert_eq(side_connect(&h->s, &them), 0);

	struct ibv_mw_bind_info bi = { .mr = h->bmr, .addr = (uintptr_t)h->s.buf + WIN_OFF, .length = WIN_LEN,
				       .mw_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE };

	h->key = ibv_inc_rkey(h->mw->rkey);
	if (typed) {
		cr_assert_eq(fv_bind_mw((struct fv_rc *)&h->q, 1, FV_SIGNALED, h->mw, h->key, &bi), 0);
		fv_ring((struct fv_rc *)&h->q);
	} else {
		fv_wr_start(&h->q);
		h->q.wr_id = 1;
		h->q.wr_flags = IBV_SEND_SIGNALED;
		fv_wr_bind_mw(&h->q, h->mw, h->key, &bi);
		cr_assert_eq(fv_wr_complete(&h->q), 0);
	}
	expect_wc(h, 1, IBV_WC_BIND_MW, &wc);
	me = h->s.me;
	me.rkey = h->key;
	me.addr = (uintptr_t)h->s.buf + WIN_OFF;
	cr_assert_eq(write(h->to, &me, sizeof(me)), (ssize_t)sizeof(me));
	cr_assert_eq(read(h->from, &ready, 1), 1, "the peer did not come up");
	cr_assert_neq(h->key, h->bmr->rkey);
}

/* The peer writes and reads through the window. */
static void through_window(struct here *h)
{
	cr_assert_eq(ask(h, 'w'), IBV_WC_SUCCESS, "write and read back through the window");
	cr_assert_str_eq((char *)h->s.buf + WIN_OFF, "through the window, from afar");
}

/* The window is dead: the peer's write is refused and leaves the memory as it was. */
static void refused(struct here *h)
{
	int status;

	cr_assert_eq(ask(h, 'x'), IBV_WC_REM_ACCESS_ERR, "a write through an invalidated window");
	cr_assert_str_eq((char *)h->s.buf + WIN_OFF, "through the window, from afar");
	close(h->to);
	cr_assert_eq(waitpid(h->peer, &status, 0), h->peer);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "peer status %d", status);
	close(h->from);
	fv_cq_cleanup(&h->c);
	fv_qp_cleanup(&h->q);
	cr_expect_eq(ibv_dealloc_mw(h->mw), 0);
	cr_expect_eq(ibv_dereg_mr(h->bmr), 0);
	side_down(&h->s);
}

/* Bound by fv_wr_bind_mw, invalidated here by fv_wr_local_inv. */
Test(sim_xproc_mw, wr_bind_then_local_inv)
{
	struct here h;
	struct ibv_wc wc;

	open_here(&h, 0);
	through_window(&h);
	fv_wr_start(&h.q);
	h.q.wr_id = 2;
	h.q.wr_flags = IBV_SEND_SIGNALED;
	fv_wr_local_inv(&h.q, h.key);
	cr_assert_eq(fv_wr_complete(&h.q), 0);
	expect_wc(&h, 2, IBV_WC_LOCAL_INV, &wc);
	refused(&h);
}

/* Bound by the typed fv_bind_mw, invalidated by the peer's SEND with invalidate: this
 * process's receive completion says so and names the key. */
Test(sim_xproc_mw, typed_bind_then_remote_invalidate)
{
	struct here h;
	struct ibv_wc wc;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1 }, *bad;

	open_here(&h, 1);
	through_window(&h);
	sge = (struct ibv_sge){ (uintptr_t)h.s.buf + 6000, 64, h.s.mr->lkey };
	cr_assert_eq(fv_post_recv(&h.q, &rwr, &bad), 0);
	cr_assert_eq(ask(&h, 'i'), IBV_WC_SUCCESS, "SEND with invalidate");
	expect_wc(&h, 3, IBV_WC_RECV, &wc);
	cr_assert(wc.wc_flags & IBV_WC_WITH_INV, "wc_flags %#x", wc.wc_flags);
	cr_assert_eq(wc.invalidated_rkey, h.key);
	cr_assert_eq(wc.byte_len, 11);
	cr_assert_str_eq((char *)h.s.buf + 6000, "invalidate");
	refused(&h);
}
