/* Completion-channel events. libmlx5 arms a CQ in user space: it writes the arm word
 * (sn, solicited flag, consumer index) to CQ doorbell record word 1 and then rings the
 * context's CQ doorbell register (UAR page 0 + 0x20) with the same word and the CQN. The
 * record alone is ambiguous (the first arm of a fresh CQ writes 0, its initial value),
 * so both are watched. An armed CQ fires one event, then waits for the next arm. */
#include "../common/be.h"
#include "../common/log.h"
#include "../common/sys.h"
#include "../model/world.h"
#include "cqe.h"
#include "dma.h"

#define ARM_SOLICITED (1u << 24)
/* An arm word libmlx5 never writes (it sets only the sequence number, bits 28-29, the
 * solicited bit and the consumer index). */
#define ARM_NONE 0x80000000u

static void fire(struct sim_cq *cq)
{
	uint64_t desc = cq->user_handle; /* struct ib_uverbs_comp_event_desc */

	cq->armed = false;
	if (!cq->chan)
		return;
	if (sim_sys_write(cq->chan->wr, &desc, sizeof(desc)) != (ssize_t)sizeof(desc))
		sim_warn("CQ 0x%x: completion event lost", cq->cqn);
}

static void arm(struct sim_cq *cq, uint32_t word)
{
	cq->arm_seen = word;
	cq->armed = true;
	cq->arm_solicited = word & ARM_SOLICITED;
	cq->arm_ci = word & 0xffffff;
	/* CQEs already past the armed consumer index fire at once, like the HCA does. */
	if (!cq->arm_solicited && ((cq->pi - cq->arm_ci) & 0xffffff))
		fire(cq);
}

/* The CQ arm register of UAR 0 (host order), false while no view holds a value. */
static bool arm_register(const struct sim_ctx *ctx, uint64_t *reg)
{
	for (int i = 0; i < SIM_UAR_VIEWS; i++) {
		const uint64_t *p = ctx->uar_view[i] ? (const uint64_t *)((const char *)ctx->uar_view[i] + 0x20) : NULL;
		uint64_t v = p ? __atomic_load_n(p, __ATOMIC_ACQUIRE) : 0;

		if (v) {
			*reg = be64toh(v);
			return true;
		}
	}
	return false;
}

/* libmlx5 clears the record before CREATE_CQ, and a CQ's first arm writes 0 to it again
 * (sequence 0, consumer index 0), so the record could not tell that arm from nothing;
 * the register could, but one register serves every CQ of the context, and a second
 * thread arming its CQ may overwrite it before we look. A word that no arm writes,
 * stored at creation, makes every arm a change of the record. */
void sim_cq_arm_init(struct sim_cq *cq)
{
	__atomic_store_n(&cq->dbrec[1], htobe32(ARM_NONE), __ATOMIC_RELEASE);
	cq->arm_seen = ARM_NONE;
}

/*
 * An arm writes the record, then the register. The register is read first: whatever it
 * shows, the record is at least that new. A changed record is an arm; a register write of
 * that same arm seen later is not a second one (reg_owed). The register alone tells a
 * re-arm with an unchanged word, once another CQ's arm has overwritten it.
 */
void sim_cq_poll_arm(struct sim_cq *cq)
{
	uint64_t reg = 0;
	uint32_t word;
	bool ours;

	if (!cq->chan)
		return;
	/* Only the view libmlx5 writes ever becomes non-zero. */
	ours = arm_register(cq->ctx, &reg) && reg != cq->uar_seen;
	if (ours)
		cq->uar_seen = reg;
	ours = ours && (reg & 0xffffff) == cq->cqn;
	word = ld_dbrec(&cq->dbrec[1]);
	if (word != cq->arm_seen) {
		arm(cq, word);
		cq->reg_owed = !(ours && (uint32_t)(reg >> 32) == word);
		return;
	}
	if (!ours || (uint32_t)(reg >> 32) != word)
		return; /* no register write of this CQ, or an older arm's */
	if (cq->reg_owed)
		cq->reg_owed = false; /* the register half of the arm the record gave */
	else
		arm(cq, word);
}

void sim_cq_event_after_push(struct sim_cq *cq, bool solicited_or_error)
{
	if (!cq->chan)
		return;
	sim_cq_poll_arm(cq);
	if (cq->armed && (!cq->arm_solicited || solicited_or_error))
		fire(cq);
}
