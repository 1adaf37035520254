/*
 * wr_api: the EXAMPLE of ibv_wr_post(3), written with fastverbs' fv_wr_* calls.
 *
 * The man page posts two WRs in one batch: an RDMA WRITE that asks for a completion, then an
 * RDMA WRITE WITH IMMEDIATE (0x1234). Here two RC QPs on one device are connected to each
 * other; A runs that batch against B's buffer, then B checks that both writes landed and
 * that the immediate arrived with B's receive completion. The same calls take a typed
 * handle (struct fv_rc *) as well; this example uses the struct fv_qp *, as a port of
 * ibv_wr_* code would.
 *
 *   wr_api [-d device]
 *
 * Runs on real hardware as is, and on the software device: sim/fvsim-run wr_api.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <fastverbs/fastverbs.h>
#include "common.h"

#define LEN1 64
#define LEN2 100

int main(int argc, char **argv)
{
	const char *dev = NULL;
	struct ex_qp a, b;
	struct fv_qp qp, peer;
	struct fv_cq cq_a, cq_b;
	int opt, ret;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: wr_api [-d device]\n");
			return 2;
		}
		dev = optarg;
	}
	struct setup_dev *d = ex_open(dev);

	ex_qp_create(d, &a, IBV_QPT_RC, 64);
	ex_qp_create(d, &b, IBV_QPT_RC, 64);
	ex_rc_connect(d, &a, &b);
	ex_rc_connect(d, &b, &a);
	if ((ret = fv_qp_init(&qp, a.qp)) || (ret = fv_qp_init(&peer, b.qp)) ||
	    (ret = fv_cq_init(&cq_a, a.cq)) || (ret = fv_cq_init(&cq_b, b.cq)))
		ex_die("fastverbs init", ret);

	/* B takes the write with immediate in a receive (no data: the write carries it). */
	if (fv_recv(&peer, 7, NULL, 0))
		ex_die("fv_recv", ENOMEM);
	fv_recv_ring(&peer);
	for (int i = 0; i < LEN1 + LEN2; i++)
		a.buf[i] = (uint8_t)(i * 3 + 1);
	memset(b.buf, 0, 4096);

	uint32_t lkey = a.mr->lkey, rkey = b.mr->rkey;
	uint64_t local_addr_1 = (uintptr_t)a.buf, local_addr_2 = local_addr_1 + LEN1;
	uint64_t remote_addr_1 = (uintptr_t)b.buf, remote_addr_2 = remote_addr_1 + 1024;

	/* The man page's example, ibv_ -> fv_ (qpx -> &qp). */
	fv_wr_start(&qp);

	qp.wr_id = 1;
	qp.wr_flags = IBV_SEND_SIGNALED;
	fv_wr_rdma_write(&qp, rkey, remote_addr_1);
	fv_wr_set_sge(&qp, lkey, local_addr_1, LEN1);

	qp.wr_id = 2;
	qp.wr_flags = 0;
	fv_wr_rdma_write_imm(&qp, rkey, remote_addr_2, htonl(0x1234));
	fv_wr_set_sge(&qp, lkey, local_addr_2, LEN2);

	ret = fv_wr_complete(&qp);
	if (ret)
		ex_die("fv_wr_complete", ret);

	struct ibv_wc wa = ex_wait_one(&cq_a), wb = ex_wait_one(&cq_b);

	if (wa.wr_id != 1 || wa.opcode != IBV_WC_RDMA_WRITE)
		ex_fail("A: completion %llu, opcode %d", (unsigned long long)wa.wr_id, wa.opcode);
	if (wb.wr_id != 7 || wb.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wb.wc_flags & IBV_WC_WITH_IMM) ||
	    ntohl(wb.imm_data) != 0x1234 || wb.byte_len != LEN2)
		ex_fail("B: completion %llu, opcode %d, imm %#x, %u bytes", (unsigned long long)wb.wr_id,
			wb.opcode, ntohl(wb.imm_data), wb.byte_len);
	/* the device wrote B's buffer: read it after the poll (a compiler barrier) */
	if (memcmp(b.buf, a.buf, LEN1) || memcmp(b.buf + 1024, a.buf + LEN1, LEN2))
		ex_fail("B's buffer does not hold what A wrote");
	printf("wr_api: one fv_wr_* batch, two RDMA WRITEs (%d + %d bytes) and immediate 0x%x arrived\n",
	       LEN1, LEN2, ntohl(wb.imm_data));

	fv_cq_cleanup(&cq_a);
	fv_cq_cleanup(&cq_b);
	fv_qp_cleanup(&qp);
	fv_qp_cleanup(&peer);
	ex_qp_destroy(&a);
	ex_qp_destroy(&b);
	ex_close(d);
	return 0;
}
