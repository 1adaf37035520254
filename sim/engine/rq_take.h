/* Taking receive WQEs from a QP's receive queue or from an SRQ (docs/formats.md §4.1, §4.2). */
#ifndef FVSIM_RQ_TAKE_H
#define FVSIM_RQ_TAKE_H

#include "../model/obj.h"
#include "xlate.h"

struct sim_rwqe {
	uint16_t wqe_counter; /* what the CQE reports: RQ counter or SRQ WQE index */
	uint16_t next; /* SRQ: index of the next WQE in the list */
	int nsge;
	struct sim_sge sge[64];
};

bool sim_rq_peek(struct sim_qp *qp, struct sim_rwqe *w);
void sim_rq_pop(struct sim_qp *qp);
bool sim_srq_peek(struct sim_srq *srq, struct sim_rwqe *w);
void sim_srq_pop(struct sim_srq *srq, const struct sim_rwqe *w);

/* Posted but not yet consumed RQ WQEs (flushing a QP in error). */
bool sim_rq_pending(const struct sim_qp *qp);

#endif
