/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fastverbs: the mlx5 RDMA data path, inline. Include this one header.
 *
 *   arch.h      barriers and MMIO per architecture
 *   wqe.h       send WQE segment writers
 *   sq.h        the send ring and its doorbell
 *   qp.h        struct fv_qp, typed handles, taking a QP over
 *   build.h     one request -> one WQE, the template every builder folds into
 *   ops.h       generated from ops.def: typed builders, fv_write()-style fronts, runtime table
 *   recv.h      receive queue and SRQ posting
 *   cq.h        completion polling
 *   cq_arm.h    arming a CQ for completion events
 *   compat/verbs.h  drop-in fv_post_send / fv_post_recv / fv_poll_cq
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
#include "build.h"
#include "ops.h"
#include "recv.h"
#include "cq.h"
#include "cq_arm.h"
#include "compat/verbs.h"

#endif /* FASTVERBS_H */
