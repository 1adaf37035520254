/* Scheduling: which QP works next. A QP in RTS executes its SQ head; one in error flushes.
 * The SQ doorbell record is the only signal of new work: BlueFlame stores land in plain
 * memory nobody watches (docs/formats.md §1.6). */
#include "engine.h"

#include <infiniband/verbs.h>

#include "../model/world.h"
#include "cqe.h"
#include "exec.h"
#include "now.h"
#include "flush.h"
#include "remote.h"
#include "remote_cm.h"
#include "remote_eth.h"
#include "sq_decode.h"

static enum sim_work qp_work(struct sim_qp *qp, bool step, uint64_t now)
{
	switch (qp->state) {
	case IBV_QPS_RTS:
		return sim_sq_pending(qp) ? sim_exec_head(qp, step, now) : SIM_W_IDLE;
	case IBV_QPS_ERR:
	case IBV_QPS_SQE:
		return sim_flush_one(qp);
	default:
		return SIM_W_IDLE; /* RESET, INIT, RTR and SQD hold their send queue */
	}
}

static void poll_arms(void)
{
	struct sim_list *pos, *tmp;

	sim_list_for_each_safe(pos, tmp, &sim_world.cqs)
		sim_cq_poll_arm(sim_container_of(pos, struct sim_cq, link));
}

enum sim_work sim_engine_step(void)
{
	struct sim_list *pos, *tmp;
	uint64_t now = sim_now_ns();
	enum sim_work best = SIM_W_IDLE;

	poll_arms();
	/* Answering messages from other processes counts as one unit, and so does moving
	 * connection manager messages, and taking in the frames other processes sent. */
	if (sim_remote_serve() || sim_remote_cm_pass() || sim_remote_eth_serve())
		return SIM_W_DONE;
	sim_list_for_each_safe(pos, tmp, &sim_world.qps) {
		struct sim_qp *qp = sim_container_of(pos, struct sim_qp, link);
		enum sim_work r = qp_work(qp, true, now);

		if (r == SIM_W_DONE) {
			/* Round robin: the QP that just worked goes to the back of the line. */
			sim_list_del(&qp->link);
			sim_list_add_tail(&sim_world.qps, &qp->link);
			return SIM_W_DONE;
		}
		if (r == SIM_W_WAIT)
			best = SIM_W_WAIT;
	}
	return best;
}

static int pass(int budget, bool cm)
{
	struct sim_list *pos, *tmp;
	uint64_t now = sim_now_ns();
	int done;

	poll_arms();
	done = sim_remote_serve() + (cm ? sim_remote_cm_pass() : 0) + sim_remote_eth_serve();
	sim_list_for_each_safe(pos, tmp, &sim_world.qps) {
		struct sim_qp *qp = sim_container_of(pos, struct sim_qp, link);

		for (int i = 0; i < budget; i++) {
			if (qp_work(qp, false, now) != SIM_W_DONE)
				break;
			done++;
		}
	}
	return done;
}

int sim_engine_pass(int budget)
{
	return pass(budget, true);
}

int sim_engine_tick_pass(int budget)
{
	return pass(budget, false);
}

void sim_engine_settle(void)
{
	/* Bounded like fvsim_run_until_idle(): only a model bug could keep it busy. */
	for (int i = 0; i < 1000000 && !sim_world.cfg.step_mode; i++)
		if (!sim_engine_pass(64))
			break;
}
