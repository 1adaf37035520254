/* An Ethernet (RoCE) port (FVSIM_LINK=eth): what the port and its GID table report, RC
 * and UD routed by GID (a GRH is required), the destination MAC CREATE_AH resolves, and
 * the refusals. Each test regenerates the sysfs tree for one Ethernet port. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

#define BUF 8192
#define QKEY 0x11111111u

static struct simt_dev d;
static struct ibv_cq *cqa, *cqb;
static struct ibv_mr *mr;
static uint8_t *buf;

static void setup(void)
{
	simt_sysfs(1, 1, "eth");
	simt_open(&d, 0);
	buf = simt_mem(&d, BUF, SIMT_ACCESS_ALL, &mr);
	cqa = simt_cq(&d, 64);
	cqb = simt_cq(&d, 64);
}

static void teardown(void)
{
	ibv_destroy_cq(cqa);
	ibv_destroy_cq(cqb);
	ibv_dereg_mr(mr);
	free(buf);
	simt_close(&d);
}

TestSuite(sim_roce, .init = setup, .fini = teardown, .timeout = 60);

/* The port's link-local GID: fe80:: + the modified EUI-64 of MAC 00:02:c9:f5:00:01. */
static const uint8_t gid0[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				  0x02, 0x02, 0xc9, 0xff, 0xfe, 0xf5, 0x00, 0x01 };

/* The interface whose IPv4 address the port's rows 2 and 3 carry (as the device picks
 * it: the first one up, not loopback, with IPv4); 0 if the machine has none. */
static unsigned machine_if(uint8_t v4[4])
{
	struct ifaddrs *all, *a;
	unsigned idx = 0;

	cr_assert_eq(getifaddrs(&all), 0);
	for (a = all; a && !idx; a = a->ifa_next) {
		if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET ||
		    !(a->ifa_flags & IFF_UP) || (a->ifa_flags & IFF_LOOPBACK))
			continue;
		memcpy(v4, &((struct sockaddr_in *)a->ifa_addr)->sin_addr, 4);
		idx = if_nametoindex(a->ifa_name);
	}
	freeifaddrs(all);
	return idx;
}

Test(sim_roce, port_reports_ethernet)
{
	struct ibv_port_attr pa;

	cr_assert_eq(ibv_query_port(d.ctx, 1, &pa), 0);
	cr_expect_eq(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	cr_expect_eq(pa.lid, 0);
	cr_expect_eq(pa.sm_lid, 0);
	cr_expect_eq(pa.state, IBV_PORT_ACTIVE);
	cr_expect_eq(pa.active_mtu, IBV_MTU_1024);
	cr_expect_eq(pa.gid_tbl_len, 8);
	cr_expect_eq(pa.port_cap_flags & (IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS),
		     IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS);
}

Test(sim_roce, gid_table_has_v1_v2_pairs)
{
	struct ibv_gid_entry e[8];
	union ibv_gid g;
	uint8_t v4[4] = { 0 }, mapped[16] = { [10] = 0xff, [11] = 0xff };
	unsigned ifidx = machine_if(v4);
	ssize_t n;

	cr_assert_eq(ibv_query_gid(d.ctx, 1, 0, &g), 0);
	cr_expect_arr_eq(g.raw, gid0, 16);
	cr_assert_eq(ibv_query_gid_ex(d.ctx, 1, 0, &e[0], 0), 0);
	cr_expect_eq(e[0].gid_type, IBV_GID_TYPE_ROCE_V1);
	cr_assert_eq(ibv_query_gid_ex(d.ctx, 1, 1, &e[1], 0), 0);
	cr_expect_eq(e[1].gid_type, IBV_GID_TYPE_ROCE_V2);
	cr_expect_arr_eq(e[1].gid.raw, gid0, 16);
	cr_expect_eq(ibv_query_gid_ex(d.ctx, 1, 7, &e[7], 0), ENODATA, "unused row");

	n = ibv_query_gid_table(d.ctx, e, 8, 0);
	cr_assert_eq(n, ifidx ? 4 + (n > 4 ? 2 : 0) : 2, "%zd entries", n);
	for (int i = 0; i < n; i++) {
		cr_expect_eq(e[i].gid_index, (uint32_t)i);
		cr_expect_eq(e[i].port_num, 1);
		cr_expect_eq(e[i].gid_type, i % 2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1);
		cr_expect_eq(e[i].ndev_ifindex, ifidx, "row %d", i);
		cr_expect_arr_eq(e[i].gid.raw, e[i & ~1].gid.raw, 16);
	}
	if (ifidx) {
		memcpy(mapped + 12, v4, 4);
		cr_expect_arr_eq(e[2].gid.raw, mapped, 16, "IPv4-mapped machine address");
	}
}

static struct ibv_qp *rc_qp(struct ibv_cq *cq)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cq, .rcq = cq, .max_send_wr = 16,
				   .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 };

	return simt_qp(&d, &cfg);
}

static struct ibv_ah_attr roce_path(const uint8_t *dgid, uint8_t sgid_index)
{
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1 };

	memcpy(ah.grh.dgid.raw, dgid, 16);
	ah.grh.sgid_index = sgid_index;
	ah.grh.hop_limit = 64;
	return ah;
}

Test(sim_roce, rc_send_routes_by_gid)
{
	struct ibv_qp *qa = rc_qp(cqa), *qb = rc_qp(cqb);
	struct ibv_ah_attr path = roce_path(gid0, 0);
	struct ibv_wc wc;

	simt_connect_ah(qa, &path, qb->qp_num, SIMT_ACCESS_ALL, 7, 7);
	simt_connect_ah(qb, &path, qa->qp_num, SIMT_ACCESS_ALL, 7, 7);
	for (int i = 0; i < 64; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	simt_post_recv(qb, 9, buf + 4096, 256, mr->lkey);
	simt_post_send(qa, 1, IBV_WR_SEND, buf, 64, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 9);
	cr_expect_eq(wc.byte_len, 64);
	cr_expect_arr_eq(buf + 4096, buf, 64);
	/* An RDMA write along the same path. */
	simt_post_send(qa, 2, IBV_WR_RDMA_WRITE, buf, 32, mr->lkey, (uintptr_t)(buf + 6000),
		       mr->rkey, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_arr_eq(buf + 6000, buf, 32);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
}

Test(sim_roce, rc_path_needs_grh)
{
	struct ibv_qp *qa = rc_qp(cqa);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	cr_assert_eq(ibv_modify_qp(qa, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						   IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qa->qp_num;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 1;
	cr_expect_eq(ibv_modify_qp(qa, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
						   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
		     EINVAL);
	ibv_destroy_qp(qa);
}

Test(sim_roce, rc_unknown_gid_times_out)
{
	static const uint8_t nowhere[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x99 };
	struct ibv_qp *qa = rc_qp(cqa);
	struct ibv_ah_attr path = roce_path(nowhere, 0);
	struct ibv_wc wc;

	simt_connect_ah(qa, &path, qa->qp_num, SIMT_ACCESS_ALL, 7, 1);
	simt_post_send(qa, 3, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
	ibv_destroy_qp(qa);
}

/* One datagram of len bytes from buf, qa to qb through ah, received at buf + 4096 after
 * its 40-byte L3 area; both completions succeed; returns the receive's. */
static struct ibv_wc ud_roundtrip(struct ibv_qp *qa, struct ibv_qp *qb, struct ibv_ah *ah,
				  uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 4, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	simt_post_recv(qb, 5, buf + 4096, 40 + 256, mr->lkey);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qb->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	cr_assert_eq(ibv_post_send(qa, &wr, &bad), 0);
	cr_assert_eq(simt_poll(cqa, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(simt_poll(cqb, &wc, 1), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	return wc;
}

Test(sim_roce, ud_needs_grh_and_receives_one)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_UD, .scq = cqa, .rcq = cqb, .max_send_wr = 16,
				   .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 };
	static const uint8_t nowhere[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x99 };
	struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1 };
	struct ibv_qp *qa = simt_qp(&d, &cfg), *qb = simt_qp(&d, &cfg);
	struct ibv_ah *ah;
	struct ibv_wc wc;

	simt_ud_ready(qa, QKEY);
	simt_ud_ready(qb, QKEY);
	errno = 0;
	cr_expect_null(ibv_create_ah(d.pd, &aa), "RoCE AH without GRH");
	cr_expect_eq(errno, EINVAL);
	aa = roce_path(nowhere, 1);
	cr_expect_null(ibv_create_ah(d.pd, &aa), "no MAC for an unknown global GID");
	aa = roce_path(gid0, 1);
	ah = ibv_create_ah(d.pd, &aa);
	cr_assert(ah, "ibv_create_ah: %s", strerror(errno));

	for (int i = 0; i < 100; i++)
		buf[i] = (uint8_t)(0xa0 ^ i);
	wc = ud_roundtrip(qa, qb, ah, 100);
	cr_expect_eq(wc.byte_len, 40 + 100);
	cr_expect(wc.wc_flags & IBV_WC_GRH, "RoCE datagrams always carry their L3 header");
	cr_expect_eq(wc.src_qp, qa->qp_num);
	cr_expect_eq(buf[4096] >> 4, 6, "RoCE v2 over IPv6");
	cr_expect_eq(buf[4096 + 6], 17, "next header UDP: RoCE v2");
	cr_expect_arr_eq(buf + 4096 + 8, gid0, 16, "source GID (row 1)");
	cr_expect_arr_eq(buf + 4096 + 24, gid0, 16, "destination GID");
	cr_expect_arr_eq(buf + 4096 + 40, buf, 100);
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
}

/* RoCE v2 between IPv4-mapped GIDs (rows 3): the IPv4 header sits in bytes 20..39 of the
 * receive's L3 area, and ibv_init_ah_from_wc builds the reply path from it. */
Test(sim_roce, ud_roce_v2_ipv4_header)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_UD, .scq = cqa, .rcq = cqb, .max_send_wr = 4,
				   .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_qp *qa, *qb;
	uint8_t v4[4] = { 0 }, *ip = buf + 4096 + 20;
	union ibv_gid g3;
	struct ibv_ah_attr aa, back;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	uint32_t sum = 0;

	if (!machine_if(v4))
		cr_skip_test("the machine has no IPv4 interface: no IPv4-mapped GIDs");
	qa = simt_qp(&d, &cfg);
	qb = simt_qp(&d, &cfg);
	simt_ud_ready(qa, QKEY);
	simt_ud_ready(qb, QKEY);
	cr_assert_eq(ibv_query_gid(d.ctx, 1, 3, &g3), 0);
	aa = roce_path(g3.raw, 3);
	aa.grh.traffic_class = 0x48;
	ah = ibv_create_ah(d.pd, &aa);
	cr_assert(ah, "ibv_create_ah: %s", strerror(errno));
	wc = ud_roundtrip(qa, qb, ah, 30);
	cr_expect(wc.wc_flags & IBV_WC_GRH);
	cr_expect_eq(ip[0], 0x45, "IPv4, 20-byte header");
	cr_expect_eq(ip[1], 0x48, "TOS from the traffic class");
	cr_expect_eq(ip[2] << 8 | ip[3], 20 + 8 + 12 + 8 + 30 + 4, "IP, UDP, BTH, DETH, data, ICRC");
	cr_expect_eq(ip[8], 64, "TTL from the hop limit");
	cr_expect_eq(ip[9], 17, "UDP");
	cr_expect_arr_eq(ip + 12, v4, 4, "source address");
	cr_expect_arr_eq(ip + 16, v4, 4, "destination address");
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	cr_expect_eq((sum & 0xffff) + (sum >> 16), 0xffff, "header checksum");
	cr_assert_eq(ibv_init_ah_from_wc(d.ctx, 1, &wc, (struct ibv_grh *)(buf + 4096), &back), 0);
	cr_expect(back.is_global);
	cr_expect_arr_eq(back.grh.dgid.raw, g3.raw, 16, "reply to the IPv4-mapped source");
	cr_expect_eq(back.grh.sgid_index, 3, "the RoCE v2 row of our address");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
}
