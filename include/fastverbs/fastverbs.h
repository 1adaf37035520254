/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fastverbs: the mlx5 RDMA data path, inline. Include this one header (and compat/rdmacm.h
 * for the librdmacm calls). docs/design.md §2 maps every header, in include order.
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
