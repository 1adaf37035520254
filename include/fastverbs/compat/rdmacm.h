/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * librdmacm's rdma_post_* / rdma_get_*_comp (rdma_verbs.h) on fastverbs. Include this header
 * on its own (it needs librdmacm's headers; fastverbs.h does not include it).
 *
 *   struct fv_rdma r;
 *   rdma_create_ep(&id, res, NULL, &qp_attr);      // or rdma_create_id + rdma_create_qp
 *   fv_rdma_init(&r, id);                         // takes over id->qp and its CQs
 *   fv_rdma_post_recv(&r, ctx, buf, len, mr);     // ... rdma_connect / rdma_accept ...
 *   fv_rdma_post_send(&r, ctx, msg, len, NULL, IBV_SEND_INLINE);
 *   fv_rdma_get_send_comp(&r, &wc);               // blocks, as rdma_get_send_comp does
 *   fv_rdma_cleanup(&r);                          // before rdma_destroy_ep
 *
 * Each call takes its rdma_* namesake's arguments after the struct fv_rdma, builds the WR
 * that namesake builds and posts it through fv_post_send / fv_post_recv / fv_post_srq_recv
 * (compat/verbs.h): the same WQE bytes libmlx5 writes for it. Returns 0, or -1 with errno
 * the value libmlx5 would return (ENOMEM: too many SGEs, inline too long, queue full, a send
 * before the QP reached RTS; EINVAL: too many receive SGEs, a receive on a QP in RESET), plus fastverbs' deliberate refusals (README, "Differences
 * from libmlx5") and these, where librdmacm's inlines crash or assert instead:
 *   - fv_rdma_post_recv: a NULL mr, or a buffer outside it: EINVAL;
 *   - fv_rdma_post_read: a NULL mr: EINVAL;
 *   - fv_rdma_post_send / _sendv on a UD QP (no address handle): EINVAL; use _ud_send;
 *   - fv_rdma_get_*_comp on a CQ without a completion channel: EINVAL once it would block.
 * mr is optional (lkey 0) where librdmacm's is: send, write and ud_send, for inline data.
 *
 * fv_rdma_get_send_comp / _recv_comp loop as librdmacm's do: poll one completion; if none,
 * arm the CQ (cq_arm.h: fastverbs' consumer index, not libmlx5's), poll again, then block in
 * ibv_get_cq_event on the CQ's channel, count and acknowledge the event, and start over.
 * They return 1 (the completion in *wc, whatever its status) or -1 with errno. When the
 * send and receive CQ are one CQ, both poll it and return whichever completion comes first.
 * Events of the id's other CQ that arrive on the same channel are counted and acknowledged
 * (that CQ is armed again by its next wait); with one channel for both CQs, wait from one
 * thread only.
 *
 * Threads: the rules of fastverbs' queues (cq.h): post receives from the thread that waits
 * on the receive CQ; sends and send completions may be another thread's.
 */
#ifndef FASTVERBS_COMPAT_RDMACM_H
#define FASTVERBS_COMPAT_RDMACM_H

#include <errno.h>
#include <rdma/rdma_cma.h>
#include "verbs.h"
#include "../cq_arm.h"

/* One CQ of an id: polled and armed by fastverbs, waited on through its channel. */
struct fv__rdma_cq {
	struct fv_cq cq;
	struct fv_cq_arm arm;
	struct ibv_comp_channel *channel;
};

/* An rdma_cm_id's QP, SRQ and CQs, taken over by fv_rdma_init. */
struct fv_rdma {
	struct rdma_cm_id *id;
	struct fv_qp qp;
	struct fv_srq srq;		/* id->srq, if the id has one */
	int has_srq;
	struct fv__rdma_cq cq[2];	/* [0] the send CQ, [1] the receive CQ; when both are one
					 * CQ, [0] serves both and [1] stays unset (cq.ibcq NULL) */
};

/* The receive CQ of r. */
static inline struct fv__rdma_cq *fv__rdma_rcq(struct fv_rdma *r)
{
	return &r->cq[r->cq[1].cq.ibcq != NULL];
}

/* errno = err and -1, or 0: the rdma_* return convention (librdmacm's rdma_seterrno). */
static inline int fv__rdma_seterrno(int err)
{
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* Take over ibcq as c; its channel is the id's (if given) or the one it was created with. */
static inline int fv__rdma_cq_init(struct fv__rdma_cq *c, struct ibv_cq *ibcq, struct ibv_comp_channel *channel)
{
	int err = fv_cq_init(&c->cq, ibcq);

	if (!err)
		err = fv_cq_arm_init(&c->arm, ibcq);
	c->channel = channel ? channel : ibcq->channel;
	return err;
}

/*
 * Take over id->qp (RC, UC or UD), id->srq if set, and the QP's CQs: id->send_cq and
 * id->recv_cq (rdma_create_ep / rdma_create_qp create them with their channels), or the CQs
 * the QP was created with when the id has none. From then on post, poll and wait on them
 * only through r. Returns 0, or -1 with errno: EINVAL (no QP), EOPNOTSUPP (a QP type
 * fastverbs does not drive), or what fv_qp_init / fv_cq_init / fv_srq_init return.
 */
static inline int fv_rdma_init(struct fv_rdma *r, struct rdma_cm_id *id)
{
	struct ibv_cq *scq, *rcq;
	int err;

	memset(r, 0, sizeof(*r));
	if (!id || !id->qp)
		return fv__rdma_seterrno(EINVAL);
	scq = id->send_cq ? id->send_cq : id->qp->send_cq;
	rcq = id->recv_cq ? id->recv_cq : id->qp->recv_cq;
	if (!scq || !rcq)
		return fv__rdma_seterrno(EINVAL);
	err = fv_qp_init(&r->qp, id->qp);
	if (err)
		return fv__rdma_seterrno(err);
	r->id = id;
	err = fv__rdma_cq_init(&r->cq[0], scq, scq == id->send_cq ? id->send_cq_channel : NULL);
	if (!err && rcq != scq)
		err = fv__rdma_cq_init(&r->cq[1], rcq, rcq == id->recv_cq ? id->recv_cq_channel : NULL);
	if (!err && id->srq) {
		err = fv_srq_init(&r->srq, id->srq);
		r->has_srq = !err;
	}
	if (err) {
		fv_qp_cleanup(&r->qp);
		memset(r, 0, sizeof(*r));
		return fv__rdma_seterrno(err);
	}
	return 0;
}

/* Release what fv_rdma_init set up; the id and its verbs objects stay the caller's. */
static inline void fv_rdma_cleanup(struct fv_rdma *r)
{
	if (r->has_srq)
		fv_srq_cleanup(&r->srq);
	fv_cq_cleanup(&r->cq[0].cq);
	fv_cq_cleanup(&r->cq[1].cq);
	fv_qp_cleanup(&r->qp);
	memset(r, 0, sizeof(*r));
}

/*
 * Post one send WR built by the caller (fv__rdma_wr zeroes it first: no stale fields). Before
 * the QP has reached RTS (an id not yet connected) libmlx5 refuses every send WR with ENOMEM,
 * its SGE limit being -1 until then: so do these, from the state libibverbs keeps in the QP.
 */
static inline int fv__rdma_post_wr(struct fv_rdma *r, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	if (__builtin_expect(r->qp.ibqp->state < IBV_QPS_RTS, 0))
		return fv__rdma_seterrno(ENOMEM);
	return fv__rdma_seterrno(fv_post_send(&r->qp, wr, &bad));
}

/* A send WR: context as wr_id, the list sgl, opcode and flags (IBV_SEND_*). */
static inline void fv__rdma_wr(struct ibv_send_wr *wr, void *context, struct ibv_sge *sgl, int nsge,
			      enum ibv_wr_opcode opcode, int flags)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = (uintptr_t)context;
	wr->sg_list = sgl;
	wr->num_sge = nsge;
	wr->opcode = opcode;
	wr->send_flags = (unsigned)flags;
}

/*
 * rdma_post_recvv: one receive of the list sgl, on the id's SRQ if it has one, else its RQ.
 * A QP in RESET takes no receive WR (libmlx5: EINVAL; its SGE limit is -1 there).
 */
static inline int fv_rdma_post_recvv(struct fv_rdma *r, void *context, struct ibv_sge *sgl, int nsge)
{
	struct ibv_recv_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = (uintptr_t)context;
	wr.sg_list = sgl;
	wr.num_sge = nsge;
	if (r->has_srq)
		return fv__rdma_seterrno(fv_post_srq_recv(&r->srq, &wr, &bad));
	if (__builtin_expect(r->qp.ibqp->state == IBV_QPS_RESET, 0))
		return fv__rdma_seterrno(EINVAL);
	return fv__rdma_seterrno(fv_post_recv(&r->qp, &wr, &bad));
}

/* rdma_post_sendv: a SEND of the list sgl; flags are IBV_SEND_* (INLINE, SIGNALED, ...). */
static inline int fv_rdma_post_sendv(struct fv_rdma *r, void *context, struct ibv_sge *sgl, int nsge, int flags)
{
	struct ibv_send_wr wr;

	fv__rdma_wr(&wr, context, sgl, nsge, IBV_WR_SEND, flags);
	return fv__rdma_post_wr(r, &wr);
}

/* An RDMA READ or WRITE of the list sgl, rkey's memory at remote_addr on the other side. */
static inline int fv__rdma_post_rdma(struct fv_rdma *r, void *context, struct ibv_sge *sgl, int nsge, int flags,
				    enum ibv_wr_opcode opcode, uint64_t remote_addr, uint32_t rkey)
{
	struct ibv_send_wr wr;

	fv__rdma_wr(&wr, context, sgl, nsge, opcode, flags);
	wr.wr.rdma.remote_addr = remote_addr;
	wr.wr.rdma.rkey = rkey;
	return fv__rdma_post_wr(r, &wr);
}

/* rdma_post_readv: an RDMA READ of rkey's memory at remote_addr into the list sgl. */
static inline int fv_rdma_post_readv(struct fv_rdma *r, void *context, struct ibv_sge *sgl, int nsge, int flags,
				     uint64_t remote_addr, uint32_t rkey)
{
	return fv__rdma_post_rdma(r, context, sgl, nsge, flags, IBV_WR_RDMA_READ, remote_addr, rkey);
}

/* rdma_post_writev: an RDMA WRITE of the list sgl to rkey's memory at remote_addr. */
static inline int fv_rdma_post_writev(struct fv_rdma *r, void *context, struct ibv_sge *sgl, int nsge, int flags,
				      uint64_t remote_addr, uint32_t rkey)
{
	return fv__rdma_post_rdma(r, context, sgl, nsge, flags, IBV_WR_RDMA_WRITE, remote_addr, rkey);
}

/* One SGE: addr, length, and mr's lkey (0 without mr: inline data needs none). */
static inline struct ibv_sge fv__rdma_sge(void *addr, size_t length, const struct ibv_mr *mr)
{
	struct ibv_sge sge;

	sge.addr = (uint64_t)(uintptr_t)addr;
	sge.length = (uint32_t)length;
	sge.lkey = mr ? mr->lkey : 0;
	return sge;
}

/*
 * rdma_post_recv: one receive into [addr, addr + length), which must lie inside mr
 * (EINVAL otherwise, where librdmacm asserts).
 */
static inline int fv_rdma_post_recv(struct fv_rdma *r, void *context, void *addr, size_t length,
				    struct ibv_mr *mr)
{
	struct ibv_sge sge;

	if (!mr || (uint8_t *)addr < (uint8_t *)mr->addr ||
	    length > mr->length - (size_t)((uint8_t *)addr - (uint8_t *)mr->addr))
		return fv__rdma_seterrno(EINVAL);
	sge = fv__rdma_sge(addr, length, mr);
	return fv_rdma_post_recvv(r, context, &sge, 1);
}

/* rdma_post_send: a SEND of one buffer; mr may be NULL with IBV_SEND_INLINE. */
static inline int fv_rdma_post_send(struct fv_rdma *r, void *context, void *addr, size_t length,
				    struct ibv_mr *mr, int flags)
{
	struct ibv_sge sge = fv__rdma_sge(addr, length, mr);

	return fv_rdma_post_sendv(r, context, &sge, 1, flags);
}

/* rdma_post_read: an RDMA READ into one buffer of mr (EINVAL without mr). */
static inline int fv_rdma_post_read(struct fv_rdma *r, void *context, void *addr, size_t length,
				    struct ibv_mr *mr, int flags, uint64_t remote_addr, uint32_t rkey)
{
	struct ibv_sge sge;

	if (!mr)
		return fv__rdma_seterrno(EINVAL);
	sge = fv__rdma_sge(addr, length, mr);
	return fv_rdma_post_readv(r, context, &sge, 1, flags, remote_addr, rkey);
}

/* rdma_post_write: an RDMA WRITE of one buffer; mr may be NULL with IBV_SEND_INLINE. */
static inline int fv_rdma_post_write(struct fv_rdma *r, void *context, void *addr, size_t length,
				     struct ibv_mr *mr, int flags, uint64_t remote_addr, uint32_t rkey)
{
	struct ibv_sge sge = fv__rdma_sge(addr, length, mr);

	return fv_rdma_post_writev(r, context, &sge, 1, flags, remote_addr, rkey);
}

/*
 * rdma_post_ud_send: a UD SEND of one buffer to (ah, remote_qpn) with librdmacm's Q_Key
 * RDMA_UDP_QKEY; mr may be NULL with IBV_SEND_INLINE. A NULL ah: EINVAL.
 */
static inline int fv_rdma_post_ud_send(struct fv_rdma *r, void *context, void *addr, size_t length,
				       struct ibv_mr *mr, int flags, struct ibv_ah *ah, uint32_t remote_qpn)
{
	struct ibv_sge sge = fv__rdma_sge(addr, length, mr);
	struct ibv_send_wr wr;

	fv__rdma_wr(&wr, context, &sge, 1, IBV_WR_SEND, flags);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = remote_qpn;
	wr.wr.ud.remote_qkey = RDMA_UDP_QKEY;
	return fv__rdma_post_wr(r, &wr);
}

/*
 * An event read from a channel: counted for the id's CQ it names, then acknowledged (an event
 * of a CQ that is not the id's too: librdmacm asserts there is none).
 */
static inline void fv__rdma_take_event(struct fv_rdma *r, struct ibv_cq *ibcq)
{
	for (int i = 0; i < 2; i++)
		if (r->cq[i].cq.ibcq == ibcq)
			fv_cq_arm_event(&r->cq[i].arm);
	ibv_ack_cq_events(ibcq, 1);
}

/* The loop of rdma_get_send_comp / rdma_get_recv_comp on c (see the top of this file). */
static inline int fv__rdma_get_comp(struct fv_rdma *r, struct fv__rdma_cq *c, struct ibv_wc *wc)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int ret;

	for (;;) {
		ret = fv_poll_cq(&c->cq, 1, wc);
		if (ret)
			return ret;	/* 1, or -1 with errno EINVAL (a CQE fastverbs cannot decode) */
		if (!c->channel)
			return fv__rdma_seterrno(EINVAL);
		fv_cq_arm(&c->cq, &c->arm, 0);
		ret = fv_poll_cq(&c->cq, 1, wc);
		if (ret)
			return ret;
		if (ibv_get_cq_event(c->channel, &ev_cq, &ev_ctx))
			return -1;
		fv__rdma_take_event(r, ev_cq);
	}
}

/* rdma_get_send_comp: wait for and return one completion of the send CQ. 1 or -1 (errno). */
static inline int fv_rdma_get_send_comp(struct fv_rdma *r, struct ibv_wc *wc)
{
	return fv__rdma_get_comp(r, &r->cq[0], wc);
}

/* rdma_get_recv_comp: wait for and return one completion of the receive CQ. 1 or -1 (errno). */
static inline int fv_rdma_get_recv_comp(struct fv_rdma *r, struct ibv_wc *wc)
{
	return fv__rdma_get_comp(r, fv__rdma_rcq(r), wc);
}

#endif /* FASTVERBS_COMPAT_RDMACM_H */
