/* Memory window work the HCA does: UMR WQEs (bind, unbind, local invalidate) and the
 * responder's invalidation for SEND_WITH_INV. */
#ifndef FVSIM_UMR_H
#define FVSIM_UMR_H

#include "../model/obj.h"
#include "sq_decode.h"

/* Executes the UMR WQE w on the requester qp: SYND_OK, or SYND_MW_BIND when the window,
 * its MR or the rights do not allow it (the window is then left as it was). */
int sim_umr_exec(struct sim_qp *qp, const struct sim_wqe *w);

/* SEND_WITH_INV arriving at responder QP qpn (PD pd) names key: true if that is a bound
 * type 2 window of this QP and PD, which invalidate=true then frees. */
bool sim_mw_remote_inv(struct sim_dev *dev, const struct sim_pd *pd, uint32_t qpn,
		       uint32_t key, bool invalidate);

#endif
