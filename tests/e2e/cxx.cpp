// fastverbs from C++17: the generic names (fv_write(h, ...), fv_wr_*) are overloads there. On
// plain memory they build the bytes the per-type builders build; on the software device a pair
// of RC QPs moves data through them and fv_poll reports it.
#include <cstring>
#include <vector>

#include <criterion/criterion.h>
#include <fastverbs/fastverbs.h>

extern "C" {
#include "memqp.h"
#include "sim-util.h"
}
#include "sim-poll.h"

namespace {

constexpr uint64_t kRaddr = 0x1122334455667788ull;
constexpr uint32_t kRkey = 0xabcd;

memqp_cfg rc_cfg(uint32_t qpn)
{
	memqp_cfg c{};

	c.qpt = FV_QPT_RC, c.qpn = qpn, c.sq_wqe_cnt = 64, c.max_send_sge = 4, c.max_inline = 64;
	return c;
}

// One WQEBB of the send ring of m at counter idx, as bytes.
std::vector<uint8_t> block(const memqp &m, uint32_t idx)
{
	const uint8_t *b = memqp_block(&m, idx);

	return std::vector<uint8_t>(b, b + FV__WQEBB);
}

} // namespace

// The overload fv_write(fv_rc *, ...) writes what fv_rc_write writes: an RDMA WRITE, ds 3.
Test(cxx, generic_write_is_the_rc_builder)
{
	memqp a, b;
	const memqp_cfg ca = rc_cfg(0x42), cb = rc_cfg(0x42);
	ibv_sge s{ 0x1000, 32, 0x77 };

	memqp_init(&a, &ca);
	memqp_init(&b, &cb);
	auto *ha = reinterpret_cast<fv_rc *>(&a.qp), *hb = reinterpret_cast<fv_rc *>(&b.qp);
	cr_assert_eq(fv_write(ha, 9, FV_SIGNALED, &s, kRaddr, kRkey), 0);
	cr_assert_eq(fv_rc_write(hb, 9, FV_SIGNALED, &s, kRaddr, kRkey), 0);
	const std::vector<uint8_t> got = block(a, 0);
	cr_assert(got == block(b, 0), "the overload and fv_rc_write differ");
	cr_assert_eq(got[3], MLX5_OPCODE_RDMA_WRITE);
	cr_assert_eq(got[7], 3, "ds %u", got[7]);
	uint64_t raddr;
	std::memcpy(&raddr, &got[16], 8);
	cr_assert_eq(be64toh(raddr), kRaddr);
	memqp_free(&a);
	memqp_free(&b);
}

// Each payload form and operation reaches its own builder: inline data lands in the WQE,
// an SGE list gives one data segment per SGE, a NOP is the control segment alone.
Test(cxx, generic_forms_and_operations)
{
	memqp m;
	const memqp_cfg c = rc_cfg(0x43);
	const char msg[] = "fastverbs from C++";
	ibv_sge sgl[2] = { { 0x2000, 8, 1 }, { 0x3000, 16, 2 } };

	memqp_init(&m, &c);
	auto *h = reinterpret_cast<fv_rc *>(&m.qp);
	cr_assert_eq(fv_send_inline(h, 1, 0, msg, sizeof(msg)), 0);
	cr_assert_eq(fv_write_sgl(h, 2, 0, sgl, 2, kRaddr, kRkey), 0);
	cr_assert_eq(fv_fadd(h, 3, FV_SIGNALED, &sgl[0], kRaddr, kRkey, 5), 0);
	cr_assert_eq(fv_nop(h, 4, FV_SIGNALED), 0);

	std::vector<uint8_t> w = block(m, 0);	// ctrl, inline header, the data
	cr_assert_eq(w[3], MLX5_OPCODE_SEND);
	uint32_t inl;
	std::memcpy(&inl, &w[16], 4);
	cr_assert_eq(be32toh(inl), MLX5_INLINE_SEG | sizeof(msg));
	cr_assert_arr_eq(&w[20], msg, sizeof(msg));
	w = block(m, 1);	// ctrl, raddr, two data segments
	cr_assert_eq(w[3], MLX5_OPCODE_RDMA_WRITE);
	cr_assert_eq(w[7], 4);
	uint32_t len2;
	std::memcpy(&len2, &w[48], 4);
	cr_assert_eq(be32toh(len2), 16u);
	w = block(m, 2);	// ctrl, raddr, atomic, data
	cr_assert_eq(w[3], MLX5_OPCODE_ATOMIC_FA);
	uint64_t add;
	std::memcpy(&add, &w[32], 8);
	cr_assert_eq(be64toh(add), 5u);
	w = block(m, 3);
	cr_assert_eq(w[3], MLX5_OPCODE_NOP);
	cr_assert_eq(w[7], 1);
	memqp_free(&m);
}

// The fv_wr_* overloads: on a typed handle and on its struct fv_qp * they build what the
// typed builder builds (an RDMA WRITE, then a fetch-and-add), ring once; a call the QP type
// does not have, made on a struct fv_qp *, fails the batch with EINVAL and posts nothing.
Test(cxx, wr_overloads_build_the_typed_bytes)
{
	memqp a, b, c;
	const memqp_cfg ca = rc_cfg(0x44), cb = rc_cfg(0x44);
	memqp_cfg cc = rc_cfg(0x45);
	ibv_sge s{ 0x5000, 24, 0x99 }, s8{ 0x6000, 8, 0x99 };	// an atomic's SGE: 8 bytes

	cc.qpt = FV_QPT_UC;
	memqp_init(&a, &ca);
	memqp_init(&b, &cb);
	memqp_init(&c, &cc);
	auto *ha = reinterpret_cast<fv_rc *>(&a.qp), *hb = reinterpret_cast<fv_rc *>(&b.qp);
	fv_wr_start(ha);
	a.qp.wr_id = 9, a.qp.wr_flags = IBV_SEND_SIGNALED;
	fv_wr_rdma_write(ha, kRkey, kRaddr);
	fv_wr_set_sge(ha, s.lkey, s.addr, s.length);
	a.qp.wr_id = 10, a.qp.wr_flags = 0;
	fv_wr_atomic_fetch_add(&a.qp, kRkey, kRaddr, 5);
	fv_wr_set_sge_list(&a.qp, 1, &s8);
	cr_assert_eq(fv_wr_complete(&a.qp), 0);
	cr_assert_eq(fv_rc_write(hb, 9, FV_SIGNALED, &s, kRaddr, kRkey), 0);
	cr_assert_eq(fv_rc_fadd(hb, 10, 0, &s8, kRaddr, kRkey, 5), 0);
	fv_ring(hb);
	for (uint32_t i = 0; i < 2; i++)
		cr_assert(block(a, i) == block(b, i), "WQE %u: fv_wr_* and the typed builder differ", i);
	cr_assert_eq(block(a, 0)[3], MLX5_OPCODE_RDMA_WRITE);
	cr_assert_eq(block(a, 1)[3], MLX5_OPCODE_ATOMIC_FA);
	cr_assert_eq(memqp_sq_dbr(&a), memqp_sq_dbr(&b));

	const uint32_t dbr = memqp_sq_dbr(&c), pi = c.qp.sq.pi;
	fv_wr_start(&c.qp);
	fv_wr_rdma_read(&c.qp, kRkey, kRaddr);	// UC has no RDMA READ
	fv_wr_set_sge(&c.qp, s.lkey, s.addr, s.length);
	cr_assert_eq(fv_wr_complete(&c.qp), EINVAL);
	cr_assert_eq(memqp_sq_dbr(&c), dbr);
	cr_assert_eq(c.qp.sq.pi, pi);
	memqp_free(&a);
	memqp_free(&b);
	memqp_free(&c);
}

namespace {

constexpr size_t kBuf = 1 << 16;

// One side of a connected RC pair on the software device, taken over by fastverbs.
struct side {
	uint8_t *buf;
	ibv_mr *mr;
	ibv_cq *ibcq;
	ibv_qp *ibqp;
	fv_rc rc;
	fv_cq cq;
};

void side_open(simt_dev *d, side *e)
{
	setup_qp_cfg cfg{};

	e->buf = static_cast<uint8_t *>(aligned_alloc(4096, kBuf));
	cr_assert(e->buf);
	std::memset(e->buf, 0, kBuf);
	e->mr = simt_mr(d, e->buf, kBuf, SIMT_ACCESS_ALL);
	e->ibcq = simt_cq(d, 64);
	cfg.type = IBV_QPT_RC, cfg.scq = e->ibcq, cfg.max_send_wr = 32, cfg.max_recv_wr = 32;
	cfg.max_send_sge = 2, cfg.max_recv_sge = 2, cfg.max_inline = 64;
	e->ibqp = simt_qp(d, &cfg);
}

void side_close(side *e)
{
	fv_cq_cleanup(&e->cq);
	fv_qp_cleanup(&e->rc.qp);
	cr_assert_eq(ibv_destroy_qp(e->ibqp), 0);
	cr_assert_eq(ibv_destroy_cq(e->ibcq), 0);
	cr_assert_eq(ibv_dereg_mr(e->mr), 0);
	free(e->buf);
}

} // namespace

// RDMA WRITE, WRITE with immediate and READ through the overloads between two RC QPs.
Test(cxx, sim_rc_write_imm_read)
{
	simt_dev d;
	side a, b;

	fvsim_set_step_mode(1);
	simt_open(&d, 0);
	side_open(&d, &a);
	side_open(&d, &b);
	simt_connect(a.ibqp, d.lid, b.ibqp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	simt_connect(b.ibqp, d.lid, a.ibqp->qp_num, SIMT_ACCESS_ALL, 7, 7);
	cr_assert_eq(fv_rc_init(&a.rc, a.ibqp), 0);
	cr_assert_eq(fv_rc_init(&b.rc, b.ibqp), 0);
	cr_assert_eq(fv_cq_init(&a.cq, a.ibcq), 0);
	cr_assert_eq(fv_cq_init(&b.cq, b.ibcq), 0);
	for (int i = 0; i < 256; i++)
		a.buf[i] = static_cast<uint8_t>(i * 5 + 3);

	ibv_sge s{ reinterpret_cast<uintptr_t>(a.buf), 256, a.mr->lkey };
	cr_assert_eq(fv_write(&a.rc, 1, FV_SIGNALED, &s, reinterpret_cast<uintptr_t>(b.buf) + 1024,
			      b.mr->rkey), 0);
	fv_ring(&a.rc);
	fv_wc wc = simt_poll1(&a.cq);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 1u);
	cr_assert_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	cr_assert_arr_eq(b.buf + 1024, a.buf, 256);

	cr_assert_eq(fv_recv(&b.rc.qp, 70, nullptr, 0), 0);
	fv_recv_ring(&b.rc.qp);
	cr_assert_eq(fv_write_imm_inline(&a.rc, 2, FV_SIGNALED, a.buf, 16,
					 reinterpret_cast<uintptr_t>(b.buf) + 4096, b.mr->rkey, htobe32(0xbeef)), 0);
	fv_ring(&a.rc);
	wc = simt_poll1(&a.cq);
	cr_assert_eq(wc.wr_id, 2u);
	wc = simt_poll1(&b.cq);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 70u);
	cr_assert_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(be32toh(wc.imm_data), 0xbeefu);
	cr_assert_eq(wc.byte_len, 16u);
	cr_assert_arr_eq(b.buf + 4096, a.buf, 16);

	for (int i = 0; i < 64; i++)
		b.buf[8192 + i] = static_cast<uint8_t>(0xa0 ^ i);
	ibv_sge into{ reinterpret_cast<uintptr_t>(a.buf) + 8192, 64, a.mr->lkey };
	cr_assert_eq(fv_read(&a.rc, 3, FV_SIGNALED, &into, reinterpret_cast<uintptr_t>(b.buf) + 8192,
			     b.mr->rkey), 0);
	fv_ring(&a.rc);
	wc = simt_poll1(&a.cq);
	cr_assert_eq(wc.wr_id, 3u);
	cr_assert_eq(wc.opcode, IBV_WC_RDMA_READ);
	cr_assert_eq(wc.byte_len, 64u);
	cr_assert_arr_eq(a.buf + 8192, b.buf + 8192, 64);

	side_close(&a);
	side_close(&b);
	simt_close(&d);
}
