/*
 * rdma_cm_pingpong: a latency ping-pong between two processes, connected with librdmacm
 * (like its rdma_server / rdma_client examples), the data path on fastverbs' fv_rdma_*.
 *
 *   rdma_cm_pingpong -s [-p port] [-n iterations] [-b bytes]            server
 *   rdma_cm_pingpong -c host [-p port] [-n iterations] [-b bytes]       client
 *
 * rdma_create_ep makes the id, its QP and its CQs; fv_rdma_init takes them over. Each side
 * keeps one receive posted; the client sends a message (inline), the server answers it,
 * both wait with fv_rdma_get_recv_comp / fv_rdma_get_send_comp (blocking on the CQ's
 * completion channel, as librdmacm's rdma_get_*_comp do). The client prints the mean
 * round-trip time. On the software device: run both under sim/fvsim-run with the same
 * FVSIM_FABRIC.
 */
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <fastverbs/compat/rdmacm.h>
#include "common.h"

#define MAX_MSG 64

static unsigned iters = 10000, msg_size = 8;
static const char *port = "7471", *host;
static int server;

/* The connected id: a passive one's first request accepted, or an active one connected. */
static struct rdma_cm_id *connect_id(struct rdma_cm_id **listen_out)
{
	struct rdma_addrinfo hints, *res;
	struct ibv_qp_init_attr attr;
	struct rdma_cm_id *listen_id = NULL, *id;
	int err;

	ex_need_device();	/* librdmacm would only say "Bad value for ai_flags" */
	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	if (server)
		hints.ai_flags = RAI_PASSIVE;
	err = rdma_getaddrinfo(server ? NULL : host, port, &hints, &res);
	if (err)
		ex_fail("rdma_getaddrinfo: %s", gai_strerror(err));
	memset(&attr, 0, sizeof(attr));
	attr.cap.max_send_wr = attr.cap.max_recv_wr = 4;
	attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = MAX_MSG;
	attr.sq_sig_all = 1;
	/* Passive: the requests rdma_get_request returns get their QP made with attr. */
	if (rdma_create_ep(server ? &listen_id : &id, res, NULL, &attr))
		ex_die("rdma_create_ep", errno);
	rdma_freeaddrinfo(res);
	if (!server)
		return id;
	if (rdma_listen(listen_id, 0))
		ex_die("rdma_listen", errno);
	if (rdma_get_request(listen_id, &id))
		ex_die("rdma_get_request", errno);
	*listen_out = listen_id;	/* one client; destroyed at the end */
	return id;
}

static void wait_recv(struct fv_rdma *r, uint32_t want)
{
	struct ibv_wc wc;

	if (fv_rdma_get_recv_comp(r, &wc) != 1)
		ex_die("fv_rdma_get_recv_comp", errno);
	if (wc.status != IBV_WC_SUCCESS)
		ex_fail("receive %u: %s", want, ibv_wc_status_str(wc.status));
}

static void send_msg(struct fv_rdma *r, uint8_t *msg, uint32_t seq)
{
	struct ibv_wc wc;

	memcpy(msg, &seq, sizeof(seq));
	if (fv_rdma_post_send(r, NULL, msg, msg_size, NULL, IBV_SEND_INLINE))
		ex_die("fv_rdma_post_send", errno);
	if (fv_rdma_get_send_comp(r, &wc) != 1)
		ex_die("fv_rdma_get_send_comp", errno);
	if (wc.status != IBV_WC_SUCCESS)
		ex_fail("send %u: %s", seq, ibv_wc_status_str(wc.status));
}

int main(int argc, char **argv)
{
	static uint8_t rbuf[MAX_MSG], sbuf[MAX_MSG];
	struct rdma_cm_id *id, *listen_id = NULL;
	struct ibv_mr *mr;
	struct fv_rdma r;
	uint64_t t0;
	int c;

	while ((c = getopt(argc, argv, "sc:p:n:b:")) != -1) {
		switch (c) {
		case 's': server = 1; break;
		case 'c': host = optarg; break;
		case 'p': port = optarg; break;
		case 'n': iters = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'b': msg_size = (unsigned)strtoul(optarg, NULL, 0); break;
		default: ex_fail("usage: %s -s | -c host [-p port] [-n iterations] [-b bytes]", argv[0]);
		}
	}
	if (server == !!host || msg_size < 4 || msg_size > MAX_MSG)
		ex_fail("usage: %s -s | -c host [-p port] [-n iterations] [-b 4..%d]", argv[0], MAX_MSG);
	id = connect_id(&listen_id);
	if (fv_rdma_init(&r, id))
		ex_die("fv_rdma_init", errno);
	mr = rdma_reg_msgs(id, rbuf, sizeof(rbuf));
	if (!mr)
		ex_die("rdma_reg_msgs", errno);
	if (fv_rdma_post_recv(&r, NULL, rbuf, sizeof(rbuf), mr))
		ex_die("fv_rdma_post_recv", errno);
	if (server ? rdma_accept(id, NULL) : rdma_connect(id, NULL))
		ex_die(server ? "rdma_accept" : "rdma_connect", errno);
	t0 = ex_now_ns();
	for (uint32_t i = 0; i < iters; i++) {
		if (!server)
			send_msg(&r, sbuf, i);
		wait_recv(&r, i);
		if (fv_rdma_post_recv(&r, NULL, rbuf, sizeof(rbuf), mr))
			ex_die("fv_rdma_post_recv", errno);
		if (server)
			send_msg(&r, sbuf, i);
	}
	if (!server)
		printf("%u round trips of %u bytes: %.2f us each%s\n", iters, msg_size,
		       (double)(ex_now_ns() - t0) / iters / 1000.0, ex_time_note());
	rdma_disconnect(id);
	fv_rdma_cleanup(&r);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	if (listen_id)
		rdma_destroy_ep(listen_id);
	return 0;
}
