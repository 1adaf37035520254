/* SPDX-License-Identifier: BSD-2-Clause */
/* Drop-in forms of the verbs data path: fv_post_send, fv_post_recv, fv_post_srq_recv, fv_poll_cq,
 * and the fv_wr_* calls of ibv_wr_post(3). */
#ifndef FASTVERBS_COMPAT_VERBS_H
#define FASTVERBS_COMPAT_VERBS_H

#include "post_send.h"
#include "post_recv.h"
#include "poll_cq.h"
#include "../gen/wr.h"

#endif /* FASTVERBS_COMPAT_VERBS_H */
