/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gen-ops: writes include/fastverbs/ops.h from include/fastverbs/ops.def.
 *
 * ops.def is read as X-macros, so the table needs no parser. For each allowed
 * (QP type, operation) pair this emits the typed builders (one SGE, SGE list, inline),
 * a _Generic front per operation that admits only the handles allowed to use it, the
 * runtime table fv_post_send checks each ibv_send_wr against, and fv_post_send's dispatch
 * into the builders' fast path; for C++, the generic names as overloads instead of _Generic
 * fronts. Output is deterministic.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

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

/*
 * Payload forms: suffix of the builder, its parameters, its fv_req fields, its doc words, and
 * a declaration the fields need ("" for none).
 */
struct form { const char *suffix, *params, *fields, *doc, *decl; };
static const struct form form_sge = { "", ", const struct ibv_sge *sge",
	".payload = FV_PL_SGL, .sgl = sge, .nsge = 1", "payload from one SGE", "" };
static const struct form form_sgl = { "_sgl", ", const struct ibv_sge *sgl, int nsge",
	".payload = FV_PL_SGL, .sgl = sgl, .nsge = nsge", "payload from an SGE list", "" };
static const struct form form_inline = { "_inline", ", const void *data, uint32_t len",
	".payload = FV_PL_INLINE, .sgl = &d, .nsge = 1, .len = len", "payload copied inline",
	"\tstruct ibv_sge d = { (uintptr_t)data, len, 0 };\n" };
static const struct form form_none = { "", "", ".payload = FV_PL_NONE", "no payload", "" };

static int is(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/*
 * The fields of an fv_req, given as designators (".a = x, .b = y"), set on the zeroed local
 * r: one statement that both C and C++ (no designated initializers before C++20) accept.
 */
static void emit_req(const char *indent, const char *designators)
{
	printf("%sstruct fv_req r = FV_ZERO_INIT;\n\n%s", indent, indent);
	for (const char *c = designators; *c; c++)
		if (*c == '.' && (c == designators || c[-1] == ' ' || c[-1] == '\t'))
			printf("r.");
		else
			putchar(*c);
	printf(";\n");
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

static const char *remote_fields(const struct op *o)
{
	if (is(o->remote, "RADDR")) return ", .segs = FV_SEG_RADDR, .raddr = raddr, .rkey = rkey";
	if (is(o->remote, "CAS"))   return ", .segs = FV_SEG_RADDR | FV_SEG_ATOMIC, .raddr = raddr, .rkey = rkey,"
					   " .swap_add = swap, .compare = compare";
	if (is(o->remote, "FADD"))  return ", .segs = FV_SEG_RADDR | FV_SEG_ATOMIC, .raddr = raddr, .rkey = rkey,"
					   " .swap_add = add";
	return "";
}

static const char *imm_params(const struct op *o)
{
	return is(o->imm, "IMM") ? ", __be32 imm" : is(o->imm, "INV") ? ", uint32_t inv_rkey" : "";
}

static const char *imm_fields(const struct op *o)
{
	return is(o->imm, "IMM") ? ", .imm = imm" : is(o->imm, "INV") ? ", .imm = htobe32(inv_rkey)" : "";
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

static const char *dest_fields(const struct qpt *q, const struct op *o)
{
	if (is(o->payload, "NONE"))
		return "";
	if (is(q->dest, "AV"))   return ", .av = &ah->av, .remote_qpn = remote_qpn, .qkey = qkey";
	if (is(q->dest, "SRQN")) return ", .srqn = remote_srqn";
	return "";
}

/* Always inlined: the QP type, opcode and payload form must fold into the WQE's stores. */
static void emit_builder(const struct qpt *q, const struct op *o, const struct form *f)
{
	printf("/* fv_%s_%s%s: %s on a %s QP, %s. 0 or ENOMEM; no doorbell. */\n",
	       q->name, o->name, f->suffix, o->desc, q->ibv + 8, f->doc);
	printf("static FV_ALWAYS_INLINE int fv_%s_%s%s(struct fv_%s *h, uint64_t wr_id, unsigned flags%s%s%s%s)\n{\n",
	       q->name, o->name, f->suffix, q->name, f->params, remote_params(o), imm_params(o),
	       dest_params(q, o));
	char fields[1024];

	snprintf(fields, sizeof(fields), ".wr_id = wr_id, .flags = flags,\n\t\t.opcode = %s, %s%s%s%s",
		 o->mlx5, f->fields, remote_fields(o), imm_fields(o), dest_fields(q, o));
	printf("%s", f->decl);
	emit_req("\t", fields);
	printf("\treturn fv_build(&h->qp, %s, &r);\n}\n\n", q->fv);
}

static void emit_front(const struct op *o, const struct form *f)
{
	printf("#define fv_%s%s(h, ...) _Generic((h)", o->name, f->suffix);
	for (size_t i = 0; i < COUNT(qpts); i++)
		if (allowed(qpts[i].name, o->name))
			printf(", \\\n\tstruct fv_%s *: fv_%s_%s%s", qpts[i].name, qpts[i].name, o->name, f->suffix);
	printf(")((h), __VA_ARGS__)\n");
}

/* The same request's fields for fv_post_send: from the ibv_send_wr wr (one SGE, not inline). */
static const char *wr_remote_fields(const struct op *o)
{
	if (is(o->remote, "RADDR")) return ", .segs = FV_SEG_RADDR, .raddr = wr->wr.rdma.remote_addr,"
					   " .rkey = wr->wr.rdma.rkey";
	if (is(o->remote, "CAS"))   return ", .segs = FV_SEG_RADDR | FV_SEG_ATOMIC,"
					   " .raddr = wr->wr.atomic.remote_addr, .rkey = wr->wr.atomic.rkey,"
					   " .swap_add = wr->wr.atomic.swap, .compare = wr->wr.atomic.compare_add";
	if (is(o->remote, "FADD"))  return ", .segs = FV_SEG_RADDR | FV_SEG_ATOMIC,"
					   " .raddr = wr->wr.atomic.remote_addr, .rkey = wr->wr.atomic.rkey,"
					   " .swap_add = wr->wr.atomic.compare_add";
	return "";
}

static const char *wr_imm_fields(const struct op *o)
{
	return is(o->imm, "IMM") ? ", .imm = wr->imm_data" :
	       is(o->imm, "INV") ? ", .imm = htobe32(wr->invalidate_rkey)" : "";
}

static const char *wr_dest_fields(const struct qpt *q)
{
	if (is(q->dest, "AV"))   return ", .av = av, .remote_qpn = wr->wr.ud.remote_qpn, .qkey = wr->wr.ud.remote_qkey";
	if (is(q->dest, "SRQN")) return ", .srqn = wr->qp_type.xrc.remote_srqn";
	return "";
}

/*
 * fv_post_send's fast dispatch: a one-SGE, not inline WR goes, by its QP type (a constant
 * where it is called) and opcode, to the builders' fast path with everything but the WR's
 * values constant, as a typed builder.
 */
static void emit_post_fast(void)
{
	printf("/*\n"
	       " * fv_post_send's fast dispatch (compat/post_send.h): wr, one SGE, on a QP of type qpt (a\n"
	       " * constant where it is inlined), built as by the typed builder of its opcode, with\n"
	       " * fm_ce_se flags, inline if inl (fv_build_wr1). Returns 0, or -1 (nothing written) for a\n"
	       " * WR it does not build: an operation the QP type does not allow, inline data on one\n"
	       " * that takes none, a UD WR without a known address handle, or one the fast path leaves\n"
	       " * to the general one.\n"
	       " */\n");
	printf("static FV_ALWAYS_INLINE int fv_post_send_fast(struct fv_qp *qp, const enum fv_qpt qpt,\n"
	       "\t\t\t\t\t      const struct ibv_send_wr *wr, unsigned flags, bool inl)\n{\n");
	printf("\tswitch (qpt) {\n");
	for (size_t i = 0; i < COUNT(qpts); i++) {
		const struct qpt *q = &qpts[i];

		printf("\tcase %s:%s\n", q->fv, is(q->dest, "AV") ? " {" : "");
		if (is(q->dest, "AV"))
			printf("\t\tconst struct mlx5_wqe_av *av;\n\n");
		printf("\t\tswitch (wr->opcode) {\n");
		for (size_t j = 0; j < COUNT(ops); j++) {
			const struct op *o = &ops[j];

			if (is(o->ibv, "FV_WR_NONE") || !allowed(q->name, o->name))
				continue;
			printf("\t\tcase %s:\n", o->ibv);
			if (is(q->dest, "AV"))	/* only now: for other opcodes the union holds no AH */
				printf("\t\t\tif (!wr->wr.ud.ah || !(av = fv_qp_av(qp, wr->wr.ud.ah)))\n"
				       "\t\t\t\treturn -1;\n");
			if (!is(o->payload, "DATA"))
				printf("\t\t\tif (inl)\n\t\t\t\treturn -1;\n");
			char fields[1024];

			snprintf(fields, sizeof(fields), ".wr_id = wr->wr_id, .flags = flags,\n"
				 "\t\t\t\t\t.opcode = %s, .payload = FV_PL_SGL, .sgl = wr->sg_list, .nsge = 1,\n"
				 "\t\t\t\t\t.from_wr = true%s%s%s", o->mlx5, wr_remote_fields(o), wr_imm_fields(o),
				 wr_dest_fields(q));
			printf("\t\t\t{\n");
			emit_req("\t\t\t\t", fields);
			printf("\t\t\t\treturn fv_build_wr1(qp, %s, &r, %s);\n\t\t\t}\n",
			       q->fv, is(o->payload, "DATA") ? "inl" : "false");
		}
		printf("\t\tdefault:\n\t\t\treturn -1;\n\t\t}\n");
		if (is(q->dest, "AV"))
			printf("\t}\n");
	}
	printf("\tdefault:\n\t\treturn -1;\n\t}\n}\n\n");
}

/* The names of a parameter list ", type a, type *b" as arguments: ", a, b". */
static void print_args(const char *params)
{
	for (const char *p = params, *end; *p; p = end) {
		const char *n;

		end = strchr(p + 1, ',');
		if (!end)
			end = p + strlen(p);
		for (n = end; n > p && (isalnum((unsigned char)n[-1]) || n[-1] == '_'); n--)
			;
		printf(", %.*s", (int)(end - n), n);
	}
}

/*
 * C++ has no _Generic: each generic name is an overload set instead, one per allowed
 * (QP type, operation, form), forwarding to the typed builder. A handle whose QP type does
 * not allow the operation matches no overload, so it does not compile either.
 */
static void emit_cxx_overloads(void)
{
	const struct form *forms[3];

	printf("#ifdef __cplusplus\n/* ---- generic names as C++ overloads (outside extern \"C\") ---- */\n\n");
	for (size_t j = 0; j < COUNT(ops); j++) {
		const struct op *o = &ops[j];
		int n = forms_of(o, forms);

		for (int k = 0; k < n; k++)
			for (size_t i = 0; i < COUNT(qpts); i++) {
				const struct qpt *q = &qpts[i];
				const struct form *f = forms[k];

				if (!allowed(q->name, o->name))
					continue;
				printf("static FV_ALWAYS_INLINE int fv_%s%s(struct fv_%s *h, uint64_t wr_id, unsigned flags%s%s%s%s)\n"
				       "{\n\treturn fv_%s_%s%s(h, wr_id, flags", o->name, f->suffix, q->name, f->params,
				       remote_params(o), imm_params(o), dest_params(q, o), q->name, o->name, f->suffix);
				print_args(f->params);
				print_args(remote_params(o));
				print_args(imm_params(o));
				print_args(dest_params(q, o));
				printf(");\n}\n\n");
			}
	}
	printf("#endif /* __cplusplus */\n\n");
}

/* The ibv_wr_opcode values of ops.def's rows (-1: none), to lay the table out by position. */
#define WR_SLOTS 16	/* FV_WR_OPCODE_SLOTS: ibv_wr_opcode values the table has a slot for */
#define FV_WR_NONE (-1)
static const int op_wr[] = {
#define FV_OP(n, ibv, mlx5, remote, imm, payload, desc) ibv,
#include "fastverbs/ops.def"
#undef FV_OP
};

/*
 * Rows by QP type, slots by ibv_wr_opcode, both by position (C++ has no array designators);
 * the asserts pin the positions to the enums' values.
 */
static void emit_table(void)
{
	for (size_t j = 0; j < COUNT(ops); j++)
		if (op_wr[j] >= WR_SLOTS) {
			fprintf(stderr, "gen-ops: %s is %d, past the table's %d slots\n", ops[j].ibv, op_wr[j], WR_SLOTS);
			exit(1);
		}
	printf("/* What fv_post_send allows per (QP type, ibv_wr_opcode); zero rows are refused. */\n");
	printf("static const struct fv_op_info fv_op_table[FV_QPT_COUNT][FV_WR_OPCODE_SLOTS] = {\n");
	for (size_t i = 0; i < COUNT(qpts); i++) {
		printf("\t{\t/* %s */\n", qpts[i].fv);
		for (int slot = 0; slot < WR_SLOTS; slot++) {
			const struct op *o = NULL;

			for (size_t j = 0; j < COUNT(ops); j++)
				if (op_wr[j] == slot && allowed(qpts[i].name, ops[j].name))
					o = &ops[j];
			if (!o) {
				printf("\t\t{ 0, 0, 0, 0, 0 },\n");
				continue;
			}
			printf("\t\t{ 1, %s, %s, FV_IMM_KIND_%s, FV_PAYLOAD_%s },\t/* %s */\n", o->mlx5,
			       is(o->remote, "RADDR") ? "FV_SEG_RADDR" :
			       is(o->remote, "NONE") ? "0" : "FV_SEG_RADDR | FV_SEG_ATOMIC",
			       o->imm, o->payload, o->ibv);
		}
		printf("\t},\n");
	}
	printf("};\n");
	for (size_t i = 0; i < COUNT(qpts); i++)
		printf("static_assert(%s == %zu, \"fv_op_table row\");\n", qpts[i].fv, i);
	for (size_t j = 0; j < COUNT(ops); j++)
		if (op_wr[j] >= 0)
			printf("static_assert(%s == %d, \"fv_op_table slot\");\n", ops[j].ibv, op_wr[j]);
	printf("\n");
}

int main(void)
{
	const struct form *forms[3];

	printf("/* SPDX-License-Identifier: BSD-2-Clause */\n"
	       "/* Generated by tools/gen-ops.c from ops.def by `make gen`. Do not edit. */\n"
	       "#ifndef FASTVERBS_OPS_H\n#define FASTVERBS_OPS_H\n\n#include \"build.h\"\n#include \"ah.h\"\n\n"
	       "FV_EXTERN_C_BEGIN\n\n");
	printf("/* Kinds of immediate and payload an operation takes (ops.def columns). */\n"
	       "enum { FV_IMM_KIND_NONE, FV_IMM_KIND_IMM, FV_IMM_KIND_INV };\n"
	       "enum { FV_PAYLOAD_NONE, FV_PAYLOAD_SGL, FV_PAYLOAD_DATA };\n\n"
	       "#define FV_WR_OPCODE_SLOTS %d\n\n"
	       "struct fv_op_info {\n\tuint8_t allowed, opcode, segs, imm_kind, payload;\n};\n\n", WR_SLOTS);

	for (size_t i = 0; i < COUNT(qpts); i++) {
		const struct qpt *q = &qpts[i];

		printf("/* ---- %s ---- */\n\n", q->ibv + 8);
		printf("/* fv_%s_init: take over a %s ibv_qp (fv_qp_init) as a typed handle; EINVAL for"
		       " another type. */\n", q->name, q->ibv + 8);
		printf("static inline int fv_%s_init(struct fv_%s *h, struct ibv_qp *ibqp)\n{\n"
		       "\treturn ibqp->qp_type == %s ? fv_qp_init(&h->qp, ibqp) : EINVAL;\n}\n\n",
		       q->name, q->name, q->ibv);
		for (size_t j = 0; j < COUNT(ops); j++) {
			if (!allowed(q->name, ops[j].name))
				continue;
			int n = forms_of(&ops[j], forms);
			for (int k = 0; k < n; k++)
				emit_builder(q, &ops[j], forms[k]);
		}
	}

	printf("/* ---- generic fronts: fv_write(&rc, ...) picks fv_rc_write; a handle whose QP type\n"
	       " * does not allow the operation does not compile (C++: the overloads at the end). ---- */\n\n"
	       "#ifndef __cplusplus\n");
	for (size_t j = 0; j < COUNT(ops); j++) {
		int n = forms_of(&ops[j], forms);
		for (int k = 0; k < n; k++)
			emit_front(&ops[j], forms[k]);
	}
	printf("#endif\n\n");
	emit_table();
	emit_post_fast();
	printf("FV_EXTERN_C_END\n\n");
	emit_cxx_overloads();
	printf("#endif /* FASTVERBS_OPS_H */\n");
	return 0;
}
