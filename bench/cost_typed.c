/*
 * Instructions per posted WR on the typed path, on plain memory: RC RDMA WRITE with one SGE,
 * fv_write() per WR and one fv_ring() per batch. Run under callgrind with --collect-atstart=no
 * (bench/cost.sh): only the measured call of one() is counted (with everything it runs, out
 * of line parts included), after a warm-up pass.
 *
 *   cost_typed BATCH     WRs per doorbell (1: every WR rung alone, BlueFlame copy included)
 */
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/callgrind.h>
#include <fastverbs/compat/post_send.h>

#define WRS 32000

static uint8_t sq[64 * 1024] __attribute__((aligned(4096)));
static __be32 db[16] __attribute__((aligned(64)));
static uint8_t bf[512] __attribute__((aligned(64)));
static uint8_t data[64];

/* The measured loop: build, ring once per batch, then pretend the device completed it all. */
__attribute__((noinline)) static void one(struct fv_rc *rc, const struct ibv_sge *s, int n, int batch)
{
	for (int i = 0; i < n; i += batch) {
		for (int j = 0; j < batch; j++)
			fv_write(rc, (uint64_t)(i + j), 0, s, 0x1000, 7);
		fv_ring(rc);
		rc->qp.sq.ci = rc->qp.sq.pi;	/* pretend completions */
	}
}

int main(int argc, char **argv)
{
	int batch = argc > 1 ? atoi(argv[1]) : 1;
	struct fv_rc rc;
	struct ibv_sge s = { .addr = (uintptr_t)data, .length = sizeof(data), .lkey = 0x1234 };

	if (batch < 1 || batch > 512 || WRS % batch) {
		fprintf(stderr, "usage: %s BATCH (1..512, dividing %d)\n", argv[0], WRS);
		return 2;
	}
	if (fv_qp_init_geom(&rc.qp, &(struct fv_qp_geom){ .qpt = FV_QPT_RC, .qpn = 0x100,
			    .sq_buf = sq, .sq_wqe_cnt = 1024, .dbrec = db, .bf_reg = bf, .bf_size = 256,
			    .max_inline = 60, .max_send_sge = 1 }))
		return 1;
	one(&rc, &s, 4 * batch, batch);	/* warm up: page faults, lazy binding */
	CALLGRIND_TOGGLE_COLLECT;
	one(&rc, &s, WRS, batch);
	CALLGRIND_TOGGLE_COLLECT;
	printf("wrs %d\n", WRS);
	fv_qp_cleanup(&rc.qp);
	return 0;
}
