/* SPDX-License-Identifier: BSD-2-Clause */
/* Drop-in forms of the verbs data path: fv_post_send, fv_post_recv, fv_post_srq_recv, fv_poll_cq. */
#ifndef FASTVERBS_COMPAT_VERBS_H
#define FASTVERBS_COMPAT_VERBS_H

#include "post_send.h"
#include "post_recv.h"
#include "poll_cq.h"

#endif /* FASTVERBS_COMPAT_VERBS_H */
