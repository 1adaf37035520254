#include "remote.h"

#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../common/cpubusy.h"
#include "../common/log.h"
#include "../fabric/mailbox.h"
#include "../fabric/mrtab.h"
#include "../model/world.h"
#include "now.h"
#include "synd.h"
#include "sq_decode.h"

/* A message is the same on both sides but for its pointers: the payload or landing iovecs
 * travel by value, the destination device by index. These fields travel as they are. */
#define MSG_FIELDS(X)                                                                       \
	X(slid) X(op) X(se) X(sl) X(src_type) X(grh) X(src_qpn) X(src_qkey) X(dqpn) X(rkey) \
	X(qkey) X(xrc_srqn) X(raddr) X(len) X(swap_add) X(compare) X(dc_key)

static void to_wire(const struct sim_msg *m, struct sim_wire *w)
{
	memset(w, 0, offsetof(struct sim_wire, iov));
#define TO_WIRE(f) w->f = m->f;
	MSG_FIELDS(TO_WIRE)
#undef TO_WIRE
	memcpy(w->imm, m->imm, 4);
	memcpy(w->grh_bytes, m->grh_bytes, 40);
	w->result = m->result != NULL;
	w->niov = (uint32_t)(m->result ? m->nresult : m->npayload);
	memcpy(w->iov, m->result ? m->result : m->payload, w->niov * sizeof(w->iov[0]));
}

static void from_wire(const struct sim_wire *w, pid_t src, struct sim_msg *m)
{
	memset(m, 0, sizeof(*m));
#define FROM_WIRE(f) m->f = w->f;
	MSG_FIELDS(FROM_WIRE)
#undef FROM_WIRE
	memcpy(m->imm, w->imm, 4);
	memcpy(m->grh_bytes, w->grh_bytes, 40);
	m->peer = src;
	m->dst_dev = &sim_world.dev[w->dst_dev];
	if (w->result) {
		m->result = w->iov;
		m->nresult = (int)w->niov;
	} else {
		m->payload = w->iov;
		m->npayload = (int)w->niov;
	}
}

bool sim_remote_direct(const struct sim_qp *qp, const struct sim_msg *m)
{
	/* A DCI (IBV_QPT_DRIVER) writes to DCTs, which take only their own key. */
	uint32_t rx = qp->type == IBV_QPT_RC ? SIM_FAB_RX_RC :
		      qp->type == IBV_QPT_DRIVER ? SIM_FAB_RX_DCT : SIM_FAB_RX_NONE;
	uint64_t host;
	uint32_t pdn;
	pid_t pid;
	int ticket, err;

	if (m->op != OP_RDMA_WRITE || rx == SIM_FAB_RX_NONE || !sim_world.cfg.direct ||
	    !sim_fabric_rx_target(m->dst_dev->index, m->dqpn, rx, m->dc_key,
				  IBV_ACCESS_REMOTE_WRITE, &pid, &pdn))
		return false;
	if (!m->len)
		return true;
	if (!sim_fabric_mr_enter(m->dst_dev->index, pid, pdn, m->rkey, m->raddr, m->len,
				 IBV_ACCESS_REMOTE_WRITE, &host, &ticket))
		return false;
	{
		struct sim_iov dst = { host, m->len };

		err = sim_dma_to(pid, &dst, 1, m->payload, m->npayload, m->len);
	}
	sim_fabric_mr_leave(ticket);
	if (err) {
		sim_dbg("fabric: QP 0x%x: direct write to pid %d failed, by mailbox", qp->qpn,
			(int)pid);
		return false;
	}
	sim_dbg("fabric: QP 0x%x wrote %llu bytes to QP 0x%x (pid %d) directly", qp->qpn,
		(unsigned long long)m->len, m->dqpn, (int)pid);
	/* The owner may spin on that memory (ib_write_lat) while this thread goes on to spin
	 * as well: when this thread has to share its CPU, give it up now, so that the owner
	 * sees the data without waiting for the end of this thread's time slice. (A yield
	 * stays within the scheduler group: programs in separate autogroups, two terminal
	 * sessions, on one CPU do not profit.) */
	if (sim_cpu_contended(sim_now_ns(), true))
		sched_yield();
	return true;
}

int sim_remote_post(struct sim_qp *qp, const struct sim_msg *m)
{
	struct sim_wire w;

	to_wire(m, &w);
	return sim_mailbox_post(m->dst_dev->index, &w, &qp->fab_ticket, &qp->fab_peer);
}

int sim_remote_answer(struct sim_qp *qp, enum sim_resp *r, struct sim_msg *m)
{
	struct sim_wire_answer a;
	int err = sim_mailbox_answer(qp->fab_ticket, qp->fab_peer, &a);

	if (err == EAGAIN)
		return err;
	qp->fab_ticket = -1;
	if (err)
		return err;
	*r = (enum sim_resp)a.resp;
	sim_dbg("fabric: QP 0x%x got answer %d", qp->qpn, *r);
	m->nak = a.nak;
	m->rnr_timer = a.rnr_timer;
	return 0;
}

void sim_remote_cancel(struct sim_qp *qp)
{
	int ticket = qp->fab_ticket;

	qp->fab_synd = 0;
	if (ticket < 0)
		return;
	qp->fab_ticket = -1;
	sim_mailbox_cancel(ticket, qp->fab_peer);
}

static bool names_mr(const struct sim_wqe *w, uint32_t key)
{
	for (int i = 0; i < w->npieces; i++)
		if (!w->piece[i].inl && w->piece[i].lkey == key)
			return true;
	return false;
}

void sim_remote_revoke_mr(const struct sim_mr *mr)
{
	struct sim_list *pos, *tmp;

	sim_list_for_each_safe(pos, tmp, &sim_world.qps) {
		struct sim_qp *qp = sim_container_of(pos, struct sim_qp, link);

		if (qp->fab_ticket < 0 || qp->ctx->dev != mr->ctx->dev ||
		    !names_mr(qp->inflight, mr->key))
			continue;
		/* Answered already: the data moved while the key was valid. */
		if (sim_mailbox_withdraw(qp->fab_ticket, qp->fab_peer) == EALREADY)
			continue;
		sim_info("QP 0x%x: MR 0x%x deregistered under its WQE in flight", qp->qpn,
			 mr->key);
		qp->fab_ticket = -1;
		qp->fab_synd = SYND_LOC_PROT;
	}
}

int sim_remote_serve(void)
{
	int inbox = sim_mailbox_inbox(), served = 0;

	if (inbox < 0)
		return 0;
	sim_mailbox_nudge_answers(inbox);
	for (int i = 0; i < SIM_MAILBOX_SLOTS; i++) {
		struct sim_wire_answer a = { 0 };
		const struct sim_wire *w;
		struct sim_msg m;
		pid_t src;

		if (!(w = sim_mailbox_take(inbox, i, &src)))
			continue;
		if (w->dst_dev >= sim_world.ndev) {
			a.resp = SIM_R_UNREACHABLE;
			sim_mailbox_reply(inbox, i, &a);
			continue;
		}
		from_wire(w, src, &m);
		a.resp = (uint8_t)sim_respond(&m);
		sim_dbg("fabric: answered op 0x%x for QP 0x%x: %d", m.op, m.dqpn, a.resp);
		if (a.resp == SIM_R_BLOCKED) {
			/* Our CQ is full: the message waits in the inbox. */
			sim_mailbox_requeue(inbox, i);
			continue;
		}
		a.nak = m.nak;
		a.rnr_timer = m.rnr_timer;
		sim_mailbox_reply(inbox, i, &a);
		served++;
	}
	return served;
}
