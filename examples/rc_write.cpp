// rc_write: RDMA WRITE bursts on the fastverbs typed path, from C++.
//
// Two connected RC QPs on the first mlx5 device. A batch of RDMA WRITEs (one SGE each, the
// last one signaled) goes out under one doorbell; the program waits for the completion,
// checks the bytes arrived and prints the cost per WR. fv_write() is an overload set in
// C++: the call below resolves to fv_rc_write at compile time, as _Generic does in C.
//
//   rc_write [-n batches] [-b WRs per batch] [-d device]
//
// Runs on real hardware as is, and on the software device: sim/fvsim-run rc_write.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <getopt.h>

#include <fastverbs/fastverbs.h>
#include "common.h"

namespace {

constexpr uint32_t kMsg = 64;	// bytes per WR

// One end: its verbs objects (common.c) and the fastverbs handles taking them over; both
// released, fastverbs' first, when it goes out of scope.
struct end {
	ex_qp q{};
	fv_rc rc{};
	fv_cq cq{};

	void take_over()
	{
		int err = fv_rc_init(&rc, q.qp);

		if (err || (err = fv_cq_init(&cq, q.cq)))
			ex_die("fastverbs init", err);
	}
	~end()
	{
		fv_cq_cleanup(&cq);
		fv_qp_cleanup(&rc.qp);
		ex_qp_destroy(&q);
	}
};

// Poll until the completion of wr_id arrives; any error ends the program.
void wait_for(fv_cq &cq, uint64_t wr_id)
{
	fv_wc wc;

	for (;;) {
		int n = fv_poll(&cq, &wc, 1);

		if (n < 0)
			ex_die("fv_poll", -n);
		if (n == 0)
			continue;
		if (wc.status != IBV_WC_SUCCESS)
			ex_fail("completion error: %s", ibv_wc_status_str(static_cast<ibv_wc_status>(wc.status)));
		if (wc.wr_id == wr_id)
			return;
	}
}

} // namespace

int main(int argc, char **argv)
{
	const char *dev = nullptr;
	unsigned batches = 1000, burst = 16;
	int c;

	while ((c = getopt(argc, argv, "n:b:d:h")) != -1) {
		switch (c) {
		case 'n': batches = static_cast<unsigned>(std::strtoul(optarg, nullptr, 0)); break;
		case 'b': burst = static_cast<unsigned>(std::strtoul(optarg, nullptr, 0)); break;
		case 'd': dev = optarg; break;
		default:
			std::fprintf(stderr, "usage: %s [-n batches] [-b WRs per batch] [-d device]\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (!batches || !burst || burst * kMsg > EX_BUF_SIZE || burst > 512)
		ex_fail("need -n > 0 and 0 < -b <= 512");

	setup_dev *d = ex_open(dev);
	uint64_t total = 0;
	{
		end a, b;

		ex_qp_create(d, &a.q, IBV_QPT_RC, 1024);
		ex_qp_create(d, &b.q, IBV_QPT_RC, 1024);
		ex_rc_connect(d, &a.q, &b.q);
		ex_rc_connect(d, &b.q, &a.q);
		a.take_over();
		b.take_over();

		const auto t0 = std::chrono::steady_clock::now();
		for (unsigned n = 0; n < batches; n++) {
			for (unsigned i = 0; i < burst; i++) {
				std::memset(a.q.buf + i * kMsg, static_cast<int>((n + i) & 0xff), kMsg);
				ibv_sge s{ reinterpret_cast<uintptr_t>(a.q.buf) + i * kMsg, kMsg, a.q.mr->lkey };
				const uint64_t wr_id = static_cast<uint64_t>(n) * burst + i;
				int err = fv_write(&a.rc, wr_id, i + 1 == burst ? unsigned{ FV_SIGNALED } : 0u, &s,
						   reinterpret_cast<uintptr_t>(b.q.buf) + i * kMsg, b.q.mr->rkey);

				if (err)
					ex_die("fv_write", err);
			}
			fv_ring(&a.rc);
			wait_for(a.cq, static_cast<uint64_t>(n) * burst + burst - 1);
			// RC completes in order: every WR of the batch has landed.
			if (std::memcmp(a.q.buf, b.q.buf, burst * kMsg))
				ex_fail("batch %u: the remote bytes differ", n);
			total += burst;
		}
		const std::chrono::duration<double, std::nano> dt = std::chrono::steady_clock::now() - t0;
		std::printf("rc_write: %llu RDMA WRITEs of %u bytes in %u batches, %.1f ns per WR%s\n",
			    static_cast<unsigned long long>(total), kMsg, batches, dt.count() / total,
			    ex_time_note());
	}
	ex_close(d);
	return 0;
}
