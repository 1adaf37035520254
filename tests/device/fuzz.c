/* Fuzzing the device, seeded and bounded: random bytes as send and receive WQEs with random
 * doorbell records, random command buffers to the uverbs front (write() and ioctl()), and
 * processes of a fabric killed at random moments. Nothing may crash or hang, no byte
 * outside the registered memory may change, and the device must still work afterwards.
 *
 * FVSIM_FUZZ_SEED (default 1) and FVSIM_FUZZ_ROUNDS (default 200) set the run; `make fuzz`
 * runs a long one with a fresh seed, and prints the seed so a failure can be replayed. */
#include <endian.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl.h>

#include "fuzz-rng.h"
#include "sim-xproc.h"

TestSuite(sim_fuzz, .init = fuzz_suite_init, .timeout = 600);

/* Memory: a registered middle between two guard areas that must never change. */
#define GUARD 4096
#define AREA 8192
static uint8_t *mem;

static void check_guards(long round)
{
	for (int i = 0; i < GUARD; i++) {
		cr_assert_eq(mem[i], 0xa5, "round %ld: guard byte %d before the MR changed", round, i);
		cr_assert_eq(mem[GUARD + AREA + i], 0xa5, "round %ld: guard byte %d after the MR changed",
			     round, i);
	}
}

static struct mlx5dv_qp dv(struct ibv_qp *qp)
{
	struct mlx5dv_obj obj = { 0 };
	struct mlx5dv_qp d;

	obj.qp.in = qp;
	obj.qp.out = &d;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), 0);
	return d;
}

/* A send WQE that is random bytes, or random with a plausible control segment (so the
 * decoder goes deeper): opcode from the known ones, right index and QPN, random size;
 * pointer segments aim at the MR or just beyond it. */
static void random_wqe(uint8_t *w, uint32_t idx, uint32_t qpn, uint32_t lkey)
{
	static const uint8_t ops[] = { 0x00, 0x01, 0x08, 0x09, 0x0a, 0x0b, 0x10, 0x11, 0x12, 0x25 };
	uint32_t *c = (uint32_t *)w;

	fuzz_fill(w, 64);
	if (fuzz_below(4) == 0)
		return;
	c[0] = htobe32(idx << 8 | ops[fuzz_below(sizeof(ops))]);
	c[1] = htobe32(qpn << 8 | (1 + fuzz_below(8)));
	c[2] = htobe32(fuzz_below(2) ? 0x08 : (uint32_t)fuzz_next());
	for (int s = 1; s < 4; s++) {
		uint32_t *d = (uint32_t *)(w + 16 * s);

		if (fuzz_below(2))
			continue;
		d[0] = htobe32(fuzz_below(3) ? fuzz_below(AREA + 64) : (uint32_t)fuzz_next());
		d[1] = htobe32(fuzz_below(4) ? lkey : (uint32_t)fuzz_next());
		*(uint64_t *)(d + 2) =
			htobe64((uintptr_t)mem + GUARD + (fuzz_below(4) ? fuzz_below(AREA) : fuzz_below(2 * GUARD + AREA)) -
				(fuzz_below(4) ? 0 : GUARD));
	}
}

Test(sim_fuzz, random_wqes_and_doorbells)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	struct simt_dev d;
	struct ibv_mr *mr;
	struct ibv_cq *cqa, *cqb;

	cr_assert(fvsim_present(), "run through sim/fvsim-run");
	fvsim_set_step_mode(1);
	simt_open(&d, 0);
	mem = mmap(NULL, 2 * GUARD + AREA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(mem != MAP_FAILED);
	memset(mem, 0xa5, 2 * GUARD + AREA);
	mr = simt_mr(&d, mem + GUARD, AREA, SIMT_ACCESS_ALL);
	cqa = simt_cq(&d, 64);
	cqb = simt_cq(&d, 64);
	for (long r = 0; r < fuzz_rounds; r++) {
		struct setup_qp_cfg cfg = { .type = types[fuzz_below(3)], .max_send_wr = 1u << fuzz_below(7),
					   .max_recv_wr = 16 };
		struct ibv_qp *qa, *qb;
		struct mlx5dv_qp sa, sb;
		struct ibv_wc wc[16];
		uint32_t n;
		int units;

		if (cfg.type == IBV_QPT_UD) {
			cfg.scq = cqa;
			qa = simt_qp(&d, &cfg);
			cfg.scq = cqb;
			qb = simt_qp(&d, &cfg);
			simt_ud_ready(qa, 0x11);
			simt_ud_ready(qb, 0x11);
		} else {
			simt_qp_pair(&d, cfg, cqa, cqb, SIMT_ACCESS_ALL, (uint8_t)fuzz_below(8), 1, &qa, &qb);
		}
		for (int i = 0; i < 4; i++)
			simt_post_recv(qb, 100 + i, mem + GUARD + 1024 * i, 1024, mr->lkey);
		sa = dv(qa);
		sb = dv(qb);
		n = fuzz_below(3) ? 1 + fuzz_below(8) : fuzz_below(65536);
		for (uint32_t i = 0; i < sa.sq.wqe_cnt; i++)
			random_wqe((uint8_t *)sa.sq.buf + i * sa.sq.stride, i, qa->qp_num, mr->lkey);
		if (fuzz_below(4) == 0) {
			/* Garbage receive WQEs and a random receive doorbell on the responder. */
			fuzz_fill(sb.rq.buf, (size_t)sb.rq.wqe_cnt * sb.rq.stride);
			sb.dbrec[MLX5_RCV_DBR] = htobe32(fuzz_below(65536));
		}
		__atomic_thread_fence(__ATOMIC_RELEASE);
		sa.dbrec[MLX5_SND_DBR] = htobe32(n);
		/* The work is bounded by what the queues and CQs hold; drain and go on, a few
		 * times, then it must be idle: no livelock. */
		units = 0;
		for (int k = 0; k < 8; k++) {
			units += fvsim_run_until_idle();
			while (ibv_poll_cq(cqa, 16, wc) > 0 || ibv_poll_cq(cqb, 16, wc) > 0)
				;
		}
		cr_assert_lt(units, 8 * 70000, "round %ld: %d units of work", r, units);
		check_guards(r);
		cr_assert_eq(ibv_destroy_qp(qa), 0);
		cr_assert_eq(ibv_destroy_qp(qb), 0);
		while (ibv_poll_cq(cqa, 16, wc) > 0 || ibv_poll_cq(cqb, 16, wc) > 0)
			;
	}
	/* Still a working device: a loopback send arrives intact. */
	{
		struct setup_qp_cfg cfg = { .type = IBV_QPT_RC };
		struct ibv_qp *qa, *qb;
		struct ibv_wc wc;

		simt_qp_pair(&d, cfg, cqa, cqb, SIMT_ACCESS_ALL, 7, 1, &qa, &qb);
		memcpy(mem + GUARD, "still fine", 11);
		simt_post_recv(qb, 1, mem + GUARD + 4096, 64, mr->lkey);
		simt_post_send(qa, 2, IBV_WR_SEND, mem + GUARD, 11, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
		cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS);
		cr_expect_str_eq((char *)mem + GUARD + 4096, "still fine");
		ibv_destroy_qp(qa);
		ibv_destroy_qp(qb);
	}
	check_guards(fuzz_rounds);
	ibv_destroy_cq(cqa);
	ibv_destroy_cq(cqb);
	ibv_dereg_mr(mr);
	simt_close(&d);
}

/* Random write() commands and ioctl() buffers on a context of its own: each is refused
 * with an errno or carried out; afterwards the context still works and closes cleanly. */
Test(sim_fuzz, random_commands)
{
	struct simt_dev d;
	uint8_t buf[512];
	static uint8_t resp[4096];

	cr_assert(fvsim_present(), "run through sim/fvsim-run");
	simt_open(&d, 0);
	for (long r = 0; r < fuzz_rounds * 20; r++) {
		struct ib_uverbs_cmd_hdr *h = (struct ib_uverbs_cmd_hdr *)buf;
		size_t len = fuzz_below(4) ? sizeof(*h) + 4 * fuzz_below((sizeof(buf) - sizeof(*h)) / 4) :
					fuzz_below(sizeof(buf));
		uint32_t *word = (uint32_t *)(buf + sizeof(*h));
		ssize_t got;

		fuzz_fill(buf, sizeof(buf));
		if (fuzz_below(4)) {
			/* A plausible legacy header (sometimes extended): a command number in
			 * range, matching length, room for an answer; small numbers where
			 * handles and counts go, and a real response buffer. */
			h->command = fuzz_below(48) | (fuzz_below(4) ? 0 : IB_USER_VERBS_CMD_FLAG_EXTENDED);
			h->in_words = (uint16_t)(fuzz_below(8) ? len / 4 : fuzz_below(256));
			h->out_words = (uint16_t)(fuzz_below(4) ? 64 : fuzz_below(64));
			for (size_t i = 0; i + 1 < (sizeof(buf) - sizeof(*h)) / 4; i++)
				if (fuzz_below(2))
					word[i] = fuzz_below(8);
			if (fuzz_below(4))
				*(uint64_t *)word = (uintptr_t)resp;
		}
		got = write(d.ctx->cmd_fd, buf, len);
		cr_assert(got == (ssize_t)len || (got == -1 && errno > 0 && errno < 200),
			  "round %ld: write returned %zd errno %d", r, got, errno);
		if (fuzz_below(8) == 0) {
			struct ib_uverbs_ioctl_hdr *ih = (struct ib_uverbs_ioctl_hdr *)buf;

			fuzz_fill(buf, sizeof(buf));
			ih->length = (uint16_t)(fuzz_below(2) ? sizeof(*ih) + 16 * fuzz_below(8) : fuzz_below(600));
			ih->num_attrs = (uint16_t)fuzz_below(8);
			errno = 0;
			cr_assert(ioctl(d.ctx->cmd_fd, RDMA_VERBS_IOCTL, buf) == -1 && errno > 0,
				  "round %ld: ioctl", r);
		}
	}
	/* The context still serves commands. */
	{
		struct ibv_cq *cq = ibv_create_cq(d.ctx, 8, NULL, NULL, 0);

		cr_assert(cq, "create_cq after the fuzz: %s", strerror(errno));
		cr_expect_eq(ibv_destroy_cq(cq), 0);
	}
	/* The PD may have been destroyed by a random DESTROY; the context closes either way. */
	ibv_dealloc_pd(d.pd);
	cr_expect_eq(ibv_close_device(d.ctx), 0);
}

/* Segments a killed set-up was building under a private name (path.new-PID). */
static void remove_matching(const char *path)
{
	char pat[256];
	glob_t g;

	snprintf(pat, sizeof(pat), "%s.new-*", path);
	if (glob(pat, 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
	globfree(&g);
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* Pairs of the stock ibv_rc_pingpong on one fabric, killed (SIGKILL) at random moments:
 * during set-up, while connecting, in the middle of their traffic, one side or both; and
 * ibv_devinfo killed while it sets up a fresh fabric segment. Afterwards a new pair on the
 * same fabric still completes its round trips, and the fresh segments still open. */
Test(sim_fuzz, processes_killed_at_random, .init = join_fabric, .fini = leave_fabric)
{
	long n = fuzz_rounds / 40 > 0 ? fuzz_rounds / 40 : 1;
	char port[16], fresh[128], path[192];

	fuzz_suite_init();
	for (long r = 0; r < n; r++) {
		char *srv_args[] = { "ibv_rc_pingpong", "-p", port, "-n", "100000", NULL };
		char *cli_args[] = { "ibv_rc_pingpong", "-p", port, "-n", "100000", "localhost", NULL };
		char *info_args[] = { "ibv_devinfo", NULL };
		pid_t srv, cli, info;
		uint32_t which = fuzz_below(3);

		snprintf(port, sizeof(port), "%d", 20000 + (int)((getpid() * 13 + r) % 20000));
		srv = simt_spawn(srv_args, "/dev/null");
		sleep_us(fuzz_below(100000));
		cli = simt_spawn(cli_args, "/dev/null");
		sleep_us(fuzz_below(300000));
		if (which != 1)
			kill(srv, SIGKILL);
		if (which != 0)
			kill(cli, SIGKILL);
		sleep_us(fuzz_below(50000));
		kill(srv, SIGKILL);
		kill(cli, SIGKILL);
		simt_finish(srv);
		simt_finish(cli);

		/* A set-up killed part way through leaves a broken segment behind. */
		snprintf(fresh, sizeof(fresh), "%s-f%ld", fabric, r);
		setenv("FVSIM_FABRIC", fresh, 1);
		info = simt_spawn(info_args, "/dev/null");
		sleep_us(fuzz_below(20000));
		kill(info, SIGKILL);
		simt_finish(info);
		cr_expect_eq(simt_finish(simt_spawn(info_args, "/dev/null")), 0, "round %ld: the fresh fabric opens", r);
		snprintf(path, sizeof(path), "/dev/shm/fvsim-%u-%s", (unsigned)getuid(), fresh);
		unlink(path);
		remove_matching(path);
		setenv("FVSIM_FABRIC", fabric, 1);
	}
	pingpong(NULL);
}
