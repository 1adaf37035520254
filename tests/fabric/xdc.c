/* DC across processes of one fabric: one DCI in the test writes to, reads from and sends
 * to four DCTs, each in a forked peer of its own, WR after WR to a different DCT; every
 * peer sees the data and the receive completions name its DCT and the DCI. A wrong DC key
 * to a DCT in another process ends in retry-exceeded and reaches nobody. The stock perftest
 * tools run over DC (-c DC) as server and client. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sim-dc.h"
#include "sim-xproc.h"

#define NPEER 4
#define ROUNDS 3
#define KEY 0x0badc0de00000000ull

TestSuite(sim_xdc, .init = join_fabric, .fini = leave_fabric, .timeout = 120);

/* What a peer tells the test. */
struct dc_card {
	uint32_t dctn, rkey;
	uint16_t lid;
	uint64_t addr;
};

static int peer_index;

/* The receive side in a peer: device, 8 KiB MR, CQ, SRQ and a DCT with key KEY + index. */
struct dct_peer {
	struct side s; /* device, PD, MR, CQ (its RC QP unused) */
	struct ibv_srq *srq;
	struct ibv_qp *dct;
};

static int peer_up(struct dct_peer *p, int idx)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 32, .max_sge = 1 } };
	struct dc_cfg c = { .dct = true, .key = KEY + (uint64_t)idx };

	if (side_up(&p->s) || !(p->srq = ibv_create_srq(p->s.pd, &sa)))
		return -1;
	c.pd = p->s.pd;
	c.cq = p->s.cq;
	c.srq = p->srq;
	if (!(p->dct = dc_create(p->s.ctx, &c)) ||
	    dct_up(p->dct, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, p->s.me.lid))
		return -1;
	for (int r = 0; r < ROUNDS + 1; r++) {
		struct ibv_sge sge = { (uintptr_t)(p->s.buf + 2048 + r * 64), 64, p->s.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)r, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(p->srq, &wr, &bad))
			return -1;
	}
	/* What the DCI reads back. */
	for (int i = 0; i < 64; i++)
		p->s.buf[4096 + i] = (uint8_t)(0x40 + idx + i);
	return 0;
}

/* Each receive must come from the DCI, on our DCT, after the WRITE of its round landed
 * (the DCI posts the WRITE first: a DCI executes in order). Exit codes name the check. */
static int peer_main(int rd, int wr)
{
	struct dct_peer p;
	struct dc_card me;
	uint32_t dci_qpn;
	int idx = peer_index;

	if (peer_up(&p, idx))
		return 10;
	me = (struct dc_card){ p.dct->qp_num, p.s.mr->rkey, p.s.me.lid, (uintptr_t)p.s.buf };
	if (write(wr, &me, sizeof(me)) != sizeof(me) ||
	    read(rd, &dci_qpn, sizeof(dci_qpn)) != sizeof(dci_qpn))
		return 11;
	for (int r = 0; r < ROUNDS; r++) {
		struct ibv_wc wc;
		char want[32];

		if (!dc_wait(p.s.cq, &wc, 20000) || wc.status != IBV_WC_SUCCESS)
			return 12;
		if (wc.wr_id != (uint64_t)r || wc.opcode != IBV_WC_RECV || wc.byte_len != 16)
			return 13;
		if (wc.qp_num != p.dct->qp_num || wc.src_qp != dci_qpn)
			return 14;
		memset(want, 'A' + idx * ROUNDS + r, sizeof(want));
		if (memcmp(p.s.buf + r * 32, want, 32) || memcmp(p.s.buf + 2048 + r * 64, want, 16))
			return 15;
	}
	/* Tell the test we are done, then wait for it to let us go. */
	if (write(wr, "d", 1) != 1 || read(rd, &dci_qpn, 1) != 1)
		return 16;
	return 0;
}

struct peers {
	pid_t pid[NPEER];
	int to[NPEER], from[NPEER];
	struct dc_card card[NPEER];
};

static void peers_start(struct peers *ps, int n)
{
	for (int i = 0; i < n; i++) {
		peer_index = i;
		ps->pid[i] = xproc_fork(peer_main, &ps->to[i], &ps->from[i]);
	}
	for (int i = 0; i < n; i++)
		cr_assert_eq(read(ps->from[i], &ps->card[i], sizeof(ps->card[i])),
			     (ssize_t)sizeof(ps->card[i]), "peer %d did not come up", i);
}

static void peers_finish(struct peers *ps, int n)
{
	for (int i = 0; i < n; i++) {
		int status;

		/* A byte, not EOF: later peers hold copies of earlier peers' pipes. */
		cr_expect_eq(write(ps->to[i], "q", 1), 1);
		close(ps->to[i]);
		cr_assert_eq(waitpid(ps->pid[i], &status, 0), ps->pid[i]);
		cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "peer %d: exit %d", i,
			  WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		close(ps->from[i]);
	}
}

/* Our DCI and an AH per peer (all peers are on device 0, port 1: one LID). */
struct dci_side {
	struct side s;
	struct ibv_qp *qp;
	struct dc_dest dest[NPEER];
};

static void dci_side_up(struct dci_side *d, const struct peers *ps, int n)
{
	struct dc_cfg c = { 0 };

	cr_assert_eq(side_up(&d->s), 0);
	c.pd = d->s.pd;
	c.cq = d->s.cq;
	c.max_send_wr = 64;
	d->qp = dc_create(d->s.ctx, &c);
	cr_assert(d->qp, "DCI: %s", strerror(errno));
	cr_assert_eq(dci_up(d->qp, 7), 0);
	for (int i = 0; i < n; i++) {
		struct ibv_ah_attr a = { .dlid = ps->card[i].lid, .port_num = 1 };

		d->dest[i].ah = ibv_create_ah(d->s.pd, &a);
		cr_assert(d->dest[i].ah);
		d->dest[i].dctn = ps->card[i].dctn;
		d->dest[i].key = KEY + (uint64_t)i;
		cr_assert_eq(write(ps->to[i], &d->qp->qp_num, 4), 4);
	}
}

static void expect_wc(struct dci_side *d, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	cr_assert_eq(dc_wait(d->s.cq, &wc, 20000), 1, "no completion for WR %llu",
		     (unsigned long long)wr_id);
	cr_expect_eq(wc.wr_id, wr_id);
	cr_expect_eq(wc.status, st, "WR %llu: %s", (unsigned long long)wr_id,
		     ibv_wc_status_str(wc.status));
}

Test(sim_xdc, one_dci_to_four_dcts_in_other_processes)
{
	struct peers ps;
	struct dci_side d;
	uint64_t id = 0;

	peers_start(&ps, NPEER);
	dci_side_up(&d, &ps, NPEER);
	for (int i = 0; i < NPEER; i++) {
		cr_expect_neq(ps.card[i].dctn, d.qp->qp_num);
		for (int j = 0; j < i; j++)
			cr_expect_neq(ps.card[i].dctn, ps.card[j].dctn, "DCT numbers are fabric-wide");
	}
	/* READs from every peer's memory first, while the peers poll for their receives
	 * (with FVSIM_MODE=poll their polls are what serves us). */
	for (int i = 0; i < NPEER; i++) {
		uint8_t want[64];

		cr_assert_eq(dc_post(d.qp, &d.dest[i], IBV_WR_RDMA_READ, 100 + i, d.s.mr->lkey,
				     d.s.buf + 4096 + i * 64, 64, ps.card[i].addr + 4096,
				     ps.card[i].rkey),
			     0);
		expect_wc(&d, 100 + i, IBV_WC_SUCCESS);
		for (int k = 0; k < 64; k++)
			want[k] = (uint8_t)(0x40 + i + k);
		cr_expect_arr_eq(d.s.buf + 4096 + i * 64, want, 64, "READ from peer %d", i);
	}
	/* Round-robin over the DCTs: WRITE, then the SEND that the peer checks it by. */
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < NPEER; i++) {
			uint8_t *src = d.s.buf + (r * NPEER + i) * 32;

			memset(src, 'A' + i * ROUNDS + r, 32);
			cr_assert_eq(dc_post(d.qp, &d.dest[i], IBV_WR_RDMA_WRITE, id++, d.s.mr->lkey,
					     src, 32, ps.card[i].addr + (uint64_t)r * 32,
					     ps.card[i].rkey),
				     0);
			cr_assert_eq(dc_post(d.qp, &d.dest[i], IBV_WR_SEND, id++, d.s.mr->lkey, src,
					     16, 0, 0),
				     0);
		}
	}
	for (uint64_t k = 0; k < id; k++)
		expect_wc(&d, k, IBV_WC_SUCCESS);
	for (int i = 0; i < NPEER; i++) {
		char done;

		cr_expect_eq(read(ps.from[i], &done, 1), 1, "peer %d did not finish", i);
	}
	peers_finish(&ps, NPEER);
	cr_expect_eq(ibv_destroy_qp(d.qp), 0);
}

/* A wrong key to a DCT in another process: retry-exceeded at the DCI, nothing at the DCT
 * (the peer's first receive is the later, well-keyed message). */
Test(sim_xdc, wrong_key_across_processes)
{
	struct peers ps;
	struct dci_side d;
	struct dc_dest bad;
	uint64_t id = 0;

	peers_start(&ps, 1);
	dci_side_up(&d, &ps, 1);
	bad = d.dest[0];
	bad.key ^= 0x5a;
	memset(d.s.buf, 'Z', 32); /* the peer would see this as its first receive */
	cr_assert_eq(dc_post(d.qp, &bad, IBV_WR_SEND, 50, d.s.mr->lkey, d.s.buf, 16, 0, 0), 0);
	expect_wc(&d, 50, IBV_WC_RETRY_EXC_ERR);
	/* Reset and reconnect (as UCX recovers a DCI), then the right key. */
	cr_assert_eq(ibv_modify_qp(d.qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
				   IBV_QP_STATE),
		     0);
	cr_assert_eq(dci_up(d.qp, 7), 0);
	for (int r = 0; r < ROUNDS; r++) {
		uint8_t *src = d.s.buf + 256 + r * 32;

		memset(src, 'A' + r, 32);
		cr_assert_eq(dc_post(d.qp, &d.dest[0], IBV_WR_RDMA_WRITE, id++, d.s.mr->lkey, src,
				     32, ps.card[0].addr + (uint64_t)r * 32, ps.card[0].rkey),
			     0);
		cr_assert_eq(dc_post(d.qp, &d.dest[0], IBV_WR_SEND, id++, d.s.mr->lkey, src, 16, 0,
				     0),
			     0);
	}
	for (uint64_t k = 0; k < id; k++)
		expect_wc(&d, k, IBV_WC_SUCCESS);
	{
		char done;

		cr_expect_eq(read(ps.from[0], &done, 1), 1, "the peer did not finish");
	}
	peers_finish(&ps, 1);
	cr_expect_eq(ibv_destroy_qp(d.qp), 0);
}

/*
 * The stock perftest tools over DC (-c DC): each side a DCI and a DCT on an SRQ, posted with
 * ibv_wr_* and mlx5dv_wr_set_dc_addr, across two processes. want: the client's result line
 * (size, then iterations); qps: NULL, or -q's count (DCIs, each to a DCT of its own). -F: a
 * failed clock calibration on a loaded machine does not fail a bandwidth tool (rdmacm/tools.c).
 */
static void perftest_dc(char *tool, char *iters, char *qps, const char *want)
{
	port_pair((char *const[]){ tool, "-F", "-c", "DC", "-n", iters, qps ? "-q" : NULL, qps, NULL }, want);
}

Test(sim_xdc, perftest_ib_write_bw)
{
	perftest_dc("ib_write_bw", "200", NULL, " 65536      200 ");
}

Test(sim_xdc, perftest_ib_write_bw_four_dcis)
{
	perftest_dc("ib_write_bw", "200", "4", " 65536      800 ");
}

Test(sim_xdc, perftest_ib_send_bw)
{
	perftest_dc("ib_send_bw", "200", NULL, " 65536      200 ");
}

Test(sim_xdc, perftest_ib_read_lat)
{
	perftest_dc("ib_read_lat", "300", NULL, " 2       300 ");
}

Test(sim_xdc, perftest_ib_atomic_lat)
{
	perftest_dc("ib_atomic_lat", "300", NULL, " 8       300 ");
}
