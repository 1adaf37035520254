/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fastverbs: the mlx5 RDMA data path, inline. Include this one header.
 *
 *   arch.h      barriers and MMIO per architecture
 *   wqe.h       send WQE segment writers
 *   sq.h        the send ring and its doorbell
 *   registry.h  the process-wide tables: QPN -> fv_qp, the SRQs set up
 *   qp.h        struct fv_qp, typed handles, taking a QP over (qp_reset.h: again after a reset)
 *   ah.h        struct fv_ah: UD address handles
 *   build.h     one request -> one WQE, the template every builder folds into (dc.h: a DCI's AV)
 *   ops.h       generated from ops.def: typed builders and their fv_write()-style fronts
 *   recv.h      receive queue and SRQ posting (dct.h: a DCT's receives, on its SRQ)
 *   cq.h        completion polling (cq_init.h, cq_decode.h, cq_run.h: its parts)
 *   cq_arm.h    arming a CQ for completion events
 *   compat/verbs.h  drop-in fv_post_send (its table: gen/post_send_ops.h, generated),
 *                   fv_post_recv, fv_poll_cq and the fv_wr_* calls
 */
#ifndef FASTVERBS_H
#define FASTVERBS_H

#define FV_VERSION_MAJOR 0
#define FV_VERSION_MINOR 1
#define FV_VERSION_PATCH 0
#define FV_VERSION ((FV_VERSION_MAJOR << 16) | (FV_VERSION_MINOR << 8) | FV_VERSION_PATCH)

#include "arch.h"
#include "wqe.h"
#include "sq.h"
#include "qp.h"
#include "qp_reset.h"
#include "build.h"
#include "gen/ops.h"
#include "recv.h"
#include "dct.h"
#include "cq.h"
#include "cq_arm.h"
#include "compat/verbs.h"

#endif /* FASTVERBS_H */
