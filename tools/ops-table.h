/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ops.def read as X-macros, and what a generator needs to know about each row: which payload
 * forms an operation has and the parameters each part of a builder takes. Shared by
 * tools/gen-ops.c (the builders) and tools/gen-man.c (their manual pages).
 */
#ifndef TOOLS_OPS_TABLE_H
#define TOOLS_OPS_TABLE_H

#include <string.h>

struct qpt { const char *name, *fv, *ibv, *dest; };
struct op { const char *name, *ibv, *mlx5, *remote, *imm, *payload, *desc; };
struct allow { const char *qpt, *op; };

static const struct qpt qpts[] = {
#define FV_QPT(n, fv, ibv, dest) { #n, #fv, #ibv, #dest },
#include "fastverbs/ops.def"
#undef FV_QPT
};
static const struct op ops[] = {
#define FV_OP(n, ibv, mlx5, remote, imm, payload, desc) { #n, #ibv, #mlx5, #remote, #imm, #payload, desc },
#include "fastverbs/ops.def"
#undef FV_OP
};
static const struct allow allows[] = {
#define FV_ALLOW(q, o) { #q, #o },
#include "fastverbs/ops.def"
#undef FV_ALLOW
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Payload forms: suffix of the builder, its parameters, its fv_req fields, its doc words. */
struct form { const char *suffix, *params, *fields, *doc; };
static const struct form form_sge = { "", ", const struct ibv_sge *sge",
	".payload = FV_PL_SGL, .sgl = sge, .nsge = 1", "payload from one SGE" };
static const struct form form_sgl = { "_sgl", ", const struct ibv_sge *sgl, int nsge",
	".payload = FV_PL_SGL, .sgl = sgl, .nsge = nsge", "payload from an SGE list" };
static const struct form form_inline = { "_inline", ", const void *data, uint32_t len",
	".payload = FV_PL_INLINE, .sgl = &(struct ibv_sge){ .addr = (uintptr_t)data, .length = len },"
	" .nsge = 1, .len = len", "payload copied inline" };
static const struct form form_none = { "", "", ".payload = FV_PL_NONE", "no payload" };

static int is(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static int allowed(const char *q, const char *o)
{
	for (size_t i = 0; i < COUNT(allows); i++)
		if (is(allows[i].qpt, q) && is(allows[i].op, o))
			return 1;
	return 0;
}

static int forms_of(const struct op *o, const struct form *out[3])
{
	if (is(o->payload, "DATA")) {
		out[0] = &form_sge; out[1] = &form_sgl; out[2] = &form_inline;
		return 3;
	}
	if (is(o->payload, "SGL")) {
		out[0] = &form_sge; out[1] = &form_sgl;
		return 2;
	}
	out[0] = &form_none;
	return 1;
}

static const char *remote_params(const struct op *o)
{
	if (is(o->remote, "RADDR")) return ", uint64_t raddr, uint32_t rkey";
	if (is(o->remote, "CAS"))   return ", uint64_t raddr, uint32_t rkey, uint64_t compare, uint64_t swap";
	if (is(o->remote, "FADD"))  return ", uint64_t raddr, uint32_t rkey, uint64_t add";
	return "";
}

static const char *imm_params(const struct op *o)
{
	return is(o->imm, "IMM") ? ", __be32 imm" : is(o->imm, "INV") ? ", uint32_t inv_rkey" : "";
}

/* A NOP carries no transport segment, so it takes no destination. */
static const char *dest_params(const struct qpt *q, const struct op *o)
{
	if (is(o->payload, "NONE"))
		return "";
	if (is(q->dest, "AV"))   return ", const struct fv_ah *ah, uint32_t remote_qpn, uint32_t qkey";
	if (is(q->dest, "SRQN")) return ", uint32_t remote_srqn";
	return "";
}

#endif /* TOOLS_OPS_TABLE_H */
