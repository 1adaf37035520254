#include "eth_rx.h"

#include <infiniband/verbs.h>

#include "../common/be.h"
#include "../common/frame.h"
#include "../common/log.h"
#include "../model/model.h"
#include "../model/obj.h"
#include "cqe.h"
#include "csum.h"
#include "dma.h"
#include "rq_take.h"
#include "synd.h"
#include "xlate.h"

/* CQE byte 28 (hds_ip_ext): checksum-OK bits; byte 29 (l4_hdr_type_etc): L3 type in bits
 * 3:2, L4 type in bits 6:4. */
#define CQE_L2_OK 0x01
#define CQE_L3_OK 0x02
#define CQE_L4_OK 0x04
#define CQE_L3_IPV6 (1u << 2)
#define CQE_L3_IPV4 (2u << 2)
enum { L4_TCP_NO_ACK = 1, L4_UDP = 2, L4_TCP_ACK_NO_DATA = 3, L4_TCP_ACK_DATA = 4 };

static void classify(const uint8_t *f, const struct sim_frame_info *fi, struct sim_cqe *e)
{
	uint8_t l4 = 0;

	e->hds_ip_ext = CQE_L2_OK;
	if (!fi->ip)
		return;
	e->l4_hdr_type = fi->ip == 4 ? CQE_L3_IPV4 : CQE_L3_IPV6;
	/* IPv6 has no header checksum: its header counts as good. */
	if (fi->ip == 6 || sim_csum_l3_ok(f, fi))
		e->hds_ip_ext |= CQE_L3_OK;
	if (!fi->l4)
		return;
	if (sim_csum_l4_ok(f, fi))
		e->hds_ip_ext |= CQE_L4_OK;
	if (fi->proto == SIM_PROTO_UDP) {
		l4 = L4_UDP;
	} else {
		uint32_t data = fi->l4 + (f[fi->l4 + 12] >> 4) * 4u;

		l4 = !(f[fi->l4 + 13] & 0x10) ? L4_TCP_NO_ACK :
		     data < fi->len ? L4_TCP_ACK_DATA : L4_TCP_ACK_NO_DATA;
	}
	e->l4_hdr_type |= (uint8_t)(l4 << 4);
}

static void deliver(struct sim_qp *qp, const uint8_t *f, uint32_t len,
		    const struct sim_frame_info *fi)
{
	struct sim_iov dst[SIM_MAX_IOV], src = { (uint64_t)(uintptr_t)f, len };
	struct sim_cqe e = { 0 };
	struct sim_rwqe w;
	int nd = 0, synd;

	if (!(qp->srq ? sim_srq_peek(qp->srq, &w) : sim_rq_peek(qp, &w)) ||
	    !sim_cq_room(qp->rcq, 1)) {
		sim_dbg("QP 0x%x: no receive WQE or CQ full, frame dropped", qp->qpn);
		return;
	}
	synd = sim_xlate_local(qp->ctx->dev, qp->pd, w.sge, w.nsge, 0, len,
			       IBV_ACCESS_LOCAL_WRITE, dst, &nd);
	if (!synd && sim_dma_copy(dst, nd, &src, 1, len))
		synd = SYND_LOC_PROT;
	e.qpn = qp->qpn;
	e.wqe_counter = w.wqe_counter;
	if (qp->ctx->cqe_version)
		e.srqn_uidx = qp->uidx;
	else
		e.srqn_uidx = qp->srq ? qp->srq->srqn : 0;
	if (synd) {
		/* A buffer that cannot take the frame: error CQE, the QP stops receiving. */
		e.op = CQE_RESP_ERR;
		e.syndrome = (uint8_t)synd;
		qp->state = IBV_QPS_ERR;
	} else {
		e.op = CQE_RESP_SEND;
		e.byte_cnt = len;
		classify(f, fi, &e);
	}
	sim_cq_push(qp->rcq, &e);
	if (qp->srq)
		sim_srq_pop(qp->srq, &w);
	else
		sim_rq_pop(qp);
}

#define MAX_RECEIVERS 64

void sim_eth_rx(const uint8_t *frame, uint32_t len)
{
	struct sim_qp *to[MAX_RECEIVERS];
	struct sim_frame_info fi;
	int n = sim_flow_steer(frame, len, to, MAX_RECEIVERS);

	sim_frame_parse(frame, len, &fi);
	if (!n)
		sim_dbg("frame of %u bytes: no steering rule, dropped", len);
	for (int i = 0; i < n; i++)
		deliver(to[i], frame, len, &fi);
}
