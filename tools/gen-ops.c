/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gen-ops: writes include/fastverbs/gen/ops.h (gen-ops TABLE), include/fastverbs/gen/wr.h
 * (gen-ops TABLE wr), include/fastverbs/gen/post_send_ops.h (gen-ops TABLE post) and
 * include/fastverbs/gen/wc_op.h (gen-ops TABLE wc) from include/fastverbs/ops.def.
 *
 * gen-ops TABLE reads the table (the path is an argument, so tests can feed it bad ones) and
 * refuses what it does not understand: an unknown row or column value, a wrong column count,
 * a duplicate row or pair, a pair naming an unknown QP type or operation each stop it with
 * "TABLE:LINE: message" and exit status 1, before it writes anything. For each allowed
 * (QP type, operation) pair this emits the typed builders (one SGE, SGE list, inline),
 * a _Generic front per operation that admits only the handles allowed to use it, which
 * opcodes carry an immediate the fv_wr_* calls keep for their WQE (fv__op_has_imm), the
 * runtime table fv_post_send checks each ibv_send_wr against, and fv_post_send's dispatch
 * into the builders' fast path; for C++, the generic names as overloads instead of _Generic
 * fronts. Output is deterministic.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

struct qpt { const char *name, *fv, *ibv, *dest; };
struct op { const char *name, *wr, *ibv, *mlx5, *remote, *imm, *payload, *wc, *desc; };
struct allow { const char *qpt, *op; };

#define MAX_QPTS   16
#define MAX_OPS    64
#define MAX_ALLOWS 256
static struct qpt qpts[MAX_QPTS];
static struct op ops[MAX_OPS];
static struct allow allows[MAX_ALLOWS];
static size_t n_qpts, n_ops, n_allows;
static const struct qpt *av_qpt, *dc_qpt;	/* check_qpts: the first AV QP type, the DC one */
static const char *table_path;


/*
 * Payload forms: suffix of the builder, its parameters, its fv__req fields, its doc words, and
 * a declaration the fields need ("" for none).
 */
struct form { const char *suffix, *params, *fields, *doc, *decl; };
static const struct form form_sge = { "", ", const struct ibv_sge *sge",
	".payload = FV__PL_SGL, .sgl = sge, .nsge = 1", "payload from one SGE", "" };
static const struct form form_sgl = { "_sgl", ", const struct ibv_sge *sgl, int nsge",
	".payload = FV__PL_SGL, .sgl = sgl, .nsge = nsge", "payload from an SGE list", "" };
static const struct form form_inline = { "_inline", ", const void *data, uint32_t len",
	".payload = FV__PL_INLINE, .sgl = &d, .nsge = 1, .len = len", "payload copied inline",
	"\tstruct ibv_sge d = { (uintptr_t)data, len, 0 };\n" };
static const struct form form_none = { "", "", ".payload = FV__PL_NONE", "no payload", "" };

static int is(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static int umr(const struct op *o)
{
	return is(o->remote, "BIND") || is(o->remote, "LINV");
}

/*
 * The fields of an fv__req, given as designators (".a = x, .b = y"), set on the zeroed local
 * r: one statement that both C and C++ (no designated initializers before C++20) accept.
 */
static void emit_req(const char *indent, const char *designators)
{
	printf("%sstruct fv__req r = FV__ZERO_INIT;\n\n%s", indent, indent);
	for (const char *c = designators; *c; c++)
		if (*c == '.' && (c == designators || c[-1] == ' ' || c[-1] == '\t'))
			printf("r.");
		else
			putchar(*c);
	printf(";\n");
}

static int allowed(const char *q, const char *o)
{
	for (size_t i = 0; i < n_allows; i++)
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

/* TSO: the packet header, before the payload (fv_send_tso(h, wr_id, flags, hdr, hdr_sz, mss, sge)). */
static int tso(const struct op *o)
{
	return is(o->remote, "TSO");
}

static const char *lead_params(const struct op *o)
{
	return tso(o) ? ", const void *hdr, uint16_t hdr_sz, uint16_t mss" : "";
}

/*
 * What one column of an operation adds to a builder: its parameters and the fv__req fields they
 * fill (designators), side by side so that neither is written without the other.
 */
struct part { const char *params, *fields; };
static const struct part no_part = { "", "" };

static struct part remote_part(const struct op *o)
{
	if (is(o->remote, "RADDR"))
		return (struct part){ ", uint64_t raddr, uint32_t rkey",
				      ", .segs = FV__SEG_RADDR, .raddr = raddr, .rkey = rkey" };
	if (is(o->remote, "CAS"))
		return (struct part){ ", uint64_t raddr, uint32_t rkey, uint64_t compare, uint64_t swap",
				      ", .segs = FV__SEG_RADDR | FV__SEG_ATOMIC, .raddr = raddr, .rkey = rkey,"
				      " .swap_add = swap, .compare = compare" };
	if (is(o->remote, "FADD"))
		return (struct part){ ", uint64_t raddr, uint32_t rkey, uint64_t add",
				      ", .segs = FV__SEG_RADDR | FV__SEG_ATOMIC, .raddr = raddr, .rkey = rkey,"
				      " .swap_add = add" };
	if (is(o->remote, "BIND"))
		return (struct part){ ", const struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *bind",
				      ", .segs = FV__SEG_UMR, .imm = htobe32(mw->rkey), .mw_type = (uint8_t)mw->type,"
				      " .new_rkey = rkey, .bind = bind" };
	if (is(o->remote, "LINV"))
		return (struct part){ "", ", .segs = FV__SEG_UMR, .mw_type = IBV_MW_TYPE_2" };
	if (tso(o))	/* its parameters lead the payload's: lead_params */
		return (struct part){ "", ", .segs = FV__SEG_TSO, .hdr = hdr, .hdr_sz = hdr_sz, .mss = mss" };
	return no_part;
}

static struct part imm_part(const struct op *o)
{
	if (is(o->imm, "IMM"))
		return (struct part){ ", __be32 imm", ", .imm = imm" };
	if (is(o->imm, "INV"))
		return (struct part){ ", uint32_t inv_rkey", ", .imm = htobe32(inv_rkey)" };
	return no_part;
}

/* A NOP carries no transport segment, so it takes no destination. */
static struct part dest_part(const struct qpt *q, const struct op *o)
{
	if (is(o->payload, "NONE"))
		return no_part;
	if (is(q->dest, "AV"))
		return (struct part){ ", const struct fv_ah *ah, uint32_t remote_qpn, uint32_t qkey",
				      ", .av = &ah->av, .remote_qpn = remote_qpn, .qkey = qkey" };
	if (is(q->dest, "SRQN"))
		return (struct part){ ", uint32_t remote_srqn", ", .srqn = remote_srqn" };
	if (is(q->dest, "DC"))
		return (struct part){ ", const struct fv_ah *ah, uint32_t dctn, uint64_t dc_key",
				      ", .av = &ah->av, .remote_qpn = dctn, .dc_key = dc_key" };
	return no_part;
}

/* DC: an ibv_send_wr has no field for a DCT, so fv_post_send takes no WR on such a QP type. */
static int dc(const struct qpt *q)
{
	return is(q->dest, "DC");
}

/* Always inlined: the QP type, opcode and payload form must fold into the WQE's stores. */
static void emit_builder(const struct qpt *q, const struct op *o, const struct form *f)
{
	printf("/* fv_%s_%s%s: %s on a %s QP, %s. 0 or ENOMEM%s; no doorbell. */\n",
	       q->name, o->name, f->suffix, o->desc, q->ibv + 8, f->doc,
	       is(o->remote, "BIND") ? " (EOPNOTSUPP: longer than 2 GiB)" : "");
	printf("static FV__ALWAYS_INLINE int fv_%s_%s%s(struct fv_%s *h, uint64_t wr_id, unsigned flags%s%s%s%s%s)\n{\n",
	       q->name, o->name, f->suffix, q->name, lead_params(o), f->params, remote_part(o).params, imm_part(o).params,
	       dest_part(q, o).params);
	char fields[1024];

	/* an fv_ah's AV carries the typed builders' form of its first unit (ah.h) */
	const char *av_fv = (is(q->dest, "AV") || dc(q)) && *dest_part(q, o).fields ? ", .av_fv = true" : "";

	snprintf(fields, sizeof(fields), ".wr_id = wr_id, .flags = flags, .opcode = %s, %s%s%s%s%s",
		 o->mlx5, f->fields, remote_part(o).fields, imm_part(o).fields, dest_part(q, o).fields, av_fv);
	printf("%s", f->decl);
	emit_req("\t", fields);
	printf("\treturn fv__build(&h->qp, %s, &r);\n}\n\n", q->fv);
}

/* The handles that have operation o, as "struct fv_rc *, struct fv_xrc *". */
static const char *handles_of(const struct op *o)
{
	static char buf[256];
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n_qpts; i++)
		if (allowed(qpts[i].name, o->name))
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%sstruct fv_%s *", n ? ", " : "", qpts[i].name);
	return buf;
}

/*
 * What a C front picks for a handle without the operation: a function that is never defined,
 * whose call is a compile error naming the operation and the handle (FV__COMPILE_ERROR).
 * One per (operation, handle type) and one for anything else.
 */
static void emit_refusals(const struct op *o)
{
	for (size_t i = 0; i < n_qpts; i++)
		if (!allowed(qpts[i].name, o->name))
			printf("int fv__no_%s_on_%s(const void *h, ...) FV__COMPILE_ERROR(\"fv_%s is not an operation of "
			       "struct fv_%s * (a %s QP); it takes %s\");\n", o->name, qpts[i].name, o->name,
			       qpts[i].name, qpts[i].ibv + 8, handles_of(o));
	printf("int fv__no_%s(const void *h, ...) FV__COMPILE_ERROR(\"fv_%s: the first argument is not a "
	       "fastverbs handle; it takes %s\");\n", o->name, o->name, handles_of(o));
}

static void emit_front(const struct op *o, const struct form *f)
{
	printf("#define fv_%s%s(h, ...) _Generic((h)", o->name, f->suffix);
	for (size_t i = 0; i < n_qpts; i++)
		if (allowed(qpts[i].name, o->name))
			printf(", \\\n\tstruct fv_%s *: fv_%s_%s%s", qpts[i].name, qpts[i].name, o->name, f->suffix);
		else
			printf(", \\\n\tstruct fv_%s *: fv__no_%s_on_%s", qpts[i].name, o->name, qpts[i].name);
	printf(", \\\n\tdefault: fv__no_%s)((h), __VA_ARGS__)\n", o->name);
}

/*
 * fv_post_send's request from an ibv_send_wr: the typed builder's fields (remote_part,
 * imm_part, dest_part) with each builder parameter replaced by where the WR keeps it, so
 * that both conversions come from one description. NULL: a name this does not know.
 */
static const char *wr_source(const struct op *o, const char *name)
{
	bool atomic = is(o->remote, "CAS") || is(o->remote, "FADD");

	if (is(name, "raddr"))      return atomic ? "wr->wr.atomic.remote_addr" : "wr->wr.rdma.remote_addr";
	if (is(name, "rkey"))       return is(o->remote, "BIND") ? "wr->bind_mw.rkey" :
					   atomic ? "wr->wr.atomic.rkey" : "wr->wr.rdma.rkey";
	if (is(name, "compare"))    return "wr->wr.atomic.compare_add";
	if (is(name, "swap"))       return "wr->wr.atomic.swap";
	if (is(name, "add"))        return "wr->wr.atomic.compare_add";
	if (is(name, "mw"))         return "wr->bind_mw.mw";
	if (is(name, "bind"))       return "&wr->bind_mw.bind_info";
	if (is(name, "imm"))        return "wr->imm_data";
	if (is(name, "inv_rkey"))   return "wr->invalidate_rkey";
	if (is(name, "remote_qpn")) return "wr->wr.ud.remote_qpn";
	if (is(name, "qkey"))       return "wr->wr.ud.remote_qkey";
	if (is(name, "remote_srqn")) return "wr->qp_type.xrc.remote_srqn";
	if (is(name, "hdr"))        return "wr->tso.hdr";
	if (is(name, "hdr_sz"))     return "wr->tso.hdr_sz";
	if (is(name, "mss"))        return "wr->tso.mss";
	return NULL;
}

/*
 * Designators ", .a = x, .b = y" as the statements "r->a = x';" (indent before each), each
 * builder parameter in x replaced by its wr_source; skip names one designator to leave out.
 * Refuses (exits) a name that is neither a parameter it knows, nor a member, call, type or
 * constant.
 */
static void emit_wr_fields(const char *indent, const struct op *o, const char *designators, const char *skip)
{
	const char *p = designators;

	while ((p = strstr(p, ".")) != NULL) {
		const char *name = p + 1, *eq = strstr(name, " = "), *end;

		if (!eq) {
			fprintf(stderr, "gen-ops: cannot read the fields '%s'\n", designators);
			exit(1);
		}
		end = strstr(eq, ", .");
		if (!end)
			end = eq + strlen(eq);
		if (skip && (size_t)(eq - name) == strlen(skip) && !strncmp(name, skip, strlen(skip))) {
			p = end;
			continue;
		}
		printf("%sr->%.*s = ", indent, (int)(eq - name), name);
		for (const char *c = eq + 3; c < end;) {
			if (isalpha((unsigned char)*c) || *c == '_') {
				const char *t = c, *src;

				while (c < end && (isalnum((unsigned char)*c) || *c == '_'))
					c++;
				char id[64];

				snprintf(id, sizeof(id), "%.*s", (int)(c - t), t);
				if ((t > eq + 3 && (t[-1] == '.' || t[-1] == '>')) || *c == '(' || isupper((unsigned char)*t) ||
				    is(id, "uint8_t")) {
					printf("%s", id);
				} else if ((src = wr_source(o, id)) != NULL) {
					printf("%s", src);
				} else {
					fprintf(stderr, "gen-ops: no ibv_send_wr field for '%s' of %s\n", id, o->name);
					exit(1);
				}
			} else {
				putchar(*c++);
			}
		}
		printf(";\n");
		p = end;
	}
}

/* A UD WR without an address handle fastverbs knows (fv__qp_av); else its AV is in av. */
#define WR_NO_AV "!wr->wr.ud.ah || !(av = fv__qp_av(qp, wr->wr.ud.ah))"
/* The same in the fast dispatch, by the offset its ring state keeps (fv__ps_av). */
#define WR_NO_AV_FAST "!(av = fv__ps_av(ps, wr->wr.ud.ah))"

/*
 * The conversions, one per operation (its fields) and one per destination, that both the fast
 * dispatch and fv__post_send_one (compat/post_send.h) use.
 */
static void emit_post_req(void)
{
	for (size_t j = 0; j < n_ops; j++) {
		const struct op *o = &ops[j];

		if (is(o->ibv, "FV__WR_NONE"))
			continue;
		printf("/*\n * fv__send_wr_%s: the request of an %s WR but its destination, as\n"
		       " * fv_<qpt>_%s builds it: fm_ce_se flags, its first nsge SGEs.\n */\n",
		       o->name, o->ibv + 7, o->name);
		printf("static FV__ALWAYS_INLINE void fv__send_wr_%s(struct fv__req *r, const struct ibv_send_wr *wr,"
		       " unsigned flags, int nsge)\n{\n", o->name);
		printf("\tr->wr_id = wr->wr_id, r->flags = flags, r->opcode = %s;\n"
		       "\tr->payload = FV__PL_SGL, r->sgl = wr->sg_list, r->nsge = nsge, r->from_wr = true;\n", o->mlx5);
		emit_wr_fields("\t", o, remote_part(o).fields, NULL);
		emit_wr_fields("\t", o, imm_part(o).fields, NULL);
		printf("}\n\n");
	}
	printf("/* The destination of a WR on a QP of type qpt; av: its ibv_ah's (fv__qp_av), where qpt has one. */\n"
	       "static FV__ALWAYS_INLINE void fv__send_wr_dest(const enum fv_qpt qpt, const struct ibv_send_wr *wr,\n"
	       "\t\t\t\t\t    const struct mlx5_wqe_av *av, struct fv__req *r)\n{\n"
	       "\t(void)wr, (void)av, (void)r;\n\tswitch (qpt) {\n");
	for (size_t i = 0; i < n_qpts; i++) {
		const struct qpt *q = &qpts[i];
		const struct op *send = NULL;

		for (size_t j = 0; j < n_ops && !send; j++)
			if (!is(ops[j].payload, "NONE"))
				send = &ops[j];
		if (is(q->dest, "NONE") || dc(q))
			continue;
		printf("\tcase %s:\n", q->fv);
		if (is(q->dest, "AV"))
			printf("\t\tr->av = av;\n");
		emit_wr_fields("\t\t", send, dest_part(q, send).fields, "av");
		printf("\t\tbreak;\n");
	}
	printf("\tdefault:\n\t\tbreak;\n\t}\n}\n\n");
	printf("/*\n * fv__post_send_one's conversion (compat/post_send.h): wr into r (fv__send_wr_<op>, flags,\n"
	       " * nsge SGEs) with its destination. 0, or EINVAL for a WR with nothing to convert: an\n"
	       " * opcode ops.def does not have, a window bind without a window or with a length and no MR\n"
	       " * (libmlx5 dereferences both), a UD WR without a known address handle.\n */\n"
	       "static FV__ALWAYS_INLINE int fv__send_wr_req(struct fv_qp *qp, const struct ibv_send_wr *wr, unsigned flags,\n"
	       "\t\t\t\t\t  int nsge, struct fv__req *r)\n{\n"
	       "\tconst struct mlx5_wqe_av *av;\n\n\tswitch (wr->opcode) {\n");
	for (size_t j = 0; j < n_ops; j++) {
		const struct op *o = &ops[j];

		if (is(o->ibv, "FV__WR_NONE"))
			continue;
		printf("\tcase %s:\n", o->ibv);
		if (is(o->remote, "BIND"))
			printf("\t\tif (!wr->bind_mw.mw || (wr->bind_mw.bind_info.length && !wr->bind_mw.bind_info.mr))\n"
			       "\t\t\treturn EINVAL;\n");
		printf("\t\tfv__send_wr_%s(r, wr, flags, nsge);\n\t\tbreak;\n", o->name);
	}
	printf("\tdefault:\n\t\treturn EINVAL;\n\t}\n\tav = NULL;\n");
	for (size_t i = 0; i < n_qpts; i++)
		if (is(qpts[i].dest, "AV"))
			printf("\tif (qp->qpt == %s && (%s))\n\t\treturn EINVAL;\n", qpts[i].fv, WR_NO_AV);
	printf("\tfv__send_wr_dest(qp->qpt, wr, av, r);\n\treturn 0;\n}\n\n");
}

/* The FV__SEG_* of an operation (struct fv__req's segs, as its typed builder sets them). */
static const char *segs_of(const struct op *o)
{
	return is(o->remote, "RADDR") ? "FV__SEG_RADDR" : is(o->remote, "NONE") ? "0" :
	       umr(o) ? "FV__SEG_UMR" : tso(o) ? "FV__SEG_TSO" : "FV__SEG_RADDR | FV__SEG_ATOMIC";
}

/*
 * fv_post_send's fast dispatch (compat/post_send.h), as a template over the QP type: a switch
 * on the WR's opcode, one arm per operation (the checks, the conversion, the build), whose arms
 * the table (fv__op_table, a constant row where qpt is one) keeps or folds away.
 */
static void emit_post_fast(void)
{
	const char *sep = "";

	printf("/*\n"
	       " * A UD WR's address vector (only for the opcodes that carry one: for others the union\n"
	       " * holds no AH); true for the QP types without one.\n"
	       " */\n"
	       "static FV__ALWAYS_INLINE bool fv__ps_dest_av(struct fv__ps *ps, const enum fv_qpt qpt,\n"
	       "\t\t\t\t\t   const struct ibv_send_wr *wr, const struct mlx5_wqe_av **av)\n{\n"
	       "\t(void)ps, (void)wr, (void)av;\n\treturn ");
	for (size_t i = 0; i < n_qpts; i++) {
		if (!is(qpts[i].dest, "AV"))
			continue;
		printf("%s(qpt != %s || (*av = fv__ps_av(ps, wr->wr.ud.ah)))", sep, qpts[i].fv);
		sep = " &&\n\t       ";
	}
	printf("%s;\n}\n\n", *sep ? "" : "true");
	printf("/*\n"
	       " * fv_post_send's fast dispatch (compat/post_send.h): wr, one SGE, on a QP of type qpt (a\n"
	       " * constant where it is inlined), built on the ring state ps with the typed builder's\n"
	       " * request, fm_ce_se flags, inline if inl (fv__ps_build, compat/post_send_ring.h).\n"
	       " * Returns 0, or -1 (nothing written) for a WR it does not build: an operation the QP type\n"
	       " * does not allow (fv__op_table), inline data on one that takes none, a UD WR without a\n"
	       " * known address handle, or one the fast path leaves to the general one.\n"
	       " */\n");
	printf("static FV__ALWAYS_INLINE int\nfv__ps_fast_of(struct fv__ps *ps, struct fv_qp *qp, const enum fv_qpt qpt,\n"
	       "\t       const struct ibv_send_wr *wr, unsigned flags, bool inl)\n{\n"
	       "\tconst struct mlx5_wqe_av *av = NULL;\n\n"
	       "\tswitch (wr->opcode) {\n");
	for (size_t j = 0; j < n_ops; j++) {
		const struct op *o = &ops[j];
		bool data = is(o->payload, "DATA");

		if (is(o->ibv, "FV__WR_NONE") || umr(o) || tso(o))	/* typed only; fv__post_send_one */
			continue;
		printf("\tcase %s: {\n\t\tstruct fv__req r = FV__ZERO_INIT;\n\n", o->ibv);
		printf("\t\tif (!fv__op_table[qpt][%s].allowed)\n\t\t\treturn -1;\n"
		       "\t\tif (!fv__ps_dest_av(ps, qpt, wr, &av))\n\t\t\treturn -1;\n", o->ibv);
		if (!data)
			printf("\t\tif (inl)\t/* SGEs only */\n\t\t\treturn -1;\n");
		printf("\t\tif (!fv__ps_fits(ps, qp, qpt, %s, wr->sg_list, %s))\n\t\t\treturn -1;\n", segs_of(o),
		       data ? "inl" : "false");
		printf("\t\tfv__send_wr_%s(&r, wr, flags, 1);\n", o->name);
		printf("\t\tfv__send_wr_dest(qpt, wr, av, &r);\n");
		printf("\t\treturn fv__ps_build(ps, qp, qpt, &r, wr, %s);\n\t}\n", data ? "inl" : "false");
	}
	printf("\tdefault:\n\t\treturn -1;\n\t}\n}\n\n");
	printf("/*\n"
	       " * fv__ps_fast_of with a constant QP type in each arm, whether the compiler inlines it or not\n"
	       " * (where qpt is a constant already, the switch folds away).\n"
	       " */\n"
	       "static FV__ALWAYS_INLINE int\nfv__post_send_fast(struct fv__ps *ps, struct fv_qp *qp, const enum fv_qpt qpt,\n"
	       "\t\t   const struct ibv_send_wr *wr, unsigned flags, bool inl)\n{\n\tswitch (qpt) {\n");
	for (size_t i = 0; i < n_qpts; i++) {
		if (is(qpts[i].dest, "ETH") || dc(&qpts[i]))
			continue;
		printf("\tcase %s:\n\t\treturn fv__ps_fast_of(ps, qp, %s, wr, flags, inl);\n", qpts[i].fv, qpts[i].fv);
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

	printf("#ifdef __cplusplus\n/* ---- generic names as C++ overloads (outside extern \"C\") ---- */\n\n"
	       "/* A handle without the operation takes the template that says so (static_assert). */\n"
	       "template <class...> struct fv__false { static const bool value = false; };\n\n");
	for (size_t j = 0; j < n_ops; j++) {
		const struct op *o = &ops[j];
		int n = forms_of(o, forms);

		for (int k = 0; k < n; k++)
			for (size_t i = 0; i < n_qpts; i++) {
				const struct qpt *q = &qpts[i];
				const struct form *f = forms[k];

				if (!allowed(q->name, o->name)) {
					printf("template <class... A> int fv_%s%s(struct fv_%s *, A...)\n{\n\tstatic_assert(fv__false<A...>::value, "
					       "\"fv_%s%s is not an operation of struct fv_%s * (a %s QP); it takes %s\");\n"
					       "\treturn 0;\n}\n\n", o->name, f->suffix, q->name, o->name, f->suffix, q->name,
					       q->ibv + 8, handles_of(o));
					continue;
				}
				printf("static FV__ALWAYS_INLINE int fv_%s%s(struct fv_%s *h, uint64_t wr_id, unsigned flags%s%s%s%s%s)\n"
				       "{\n\treturn fv_%s_%s%s(h, wr_id, flags", o->name, f->suffix, q->name, lead_params(o),
				       f->params, remote_part(o).params, imm_part(o).params, dest_part(q, o).params, q->name, o->name,
				       f->suffix);
				print_args(lead_params(o));
				print_args(f->params);
				print_args(remote_part(o).params);
				print_args(imm_part(o).params);
				print_args(dest_part(q, o).params);
				printf(");\n}\n\n");
			}
	}
	printf("#endif /* __cplusplus */\n\n");
}

/*
 * The ibv_wr_opcode values the table may name (verbs.h's), to lay fv__op_table out by
 * position; add_op refuses any other verbs opcode.
 */
#define WR_SLOTS 16	/* FV__WR_OPCODE_SLOTS: ibv_wr_opcode values the table has a slot for */
#define FV__WR_NONE (-1)
static const struct { const char *name; int value; } wr_opcodes[] = {
#define WR_OPCODE(v) { #v, v }
	WR_OPCODE(IBV_WR_RDMA_WRITE), WR_OPCODE(IBV_WR_RDMA_WRITE_WITH_IMM), WR_OPCODE(IBV_WR_SEND),
	WR_OPCODE(IBV_WR_SEND_WITH_IMM), WR_OPCODE(IBV_WR_RDMA_READ), WR_OPCODE(IBV_WR_ATOMIC_CMP_AND_SWP),
	WR_OPCODE(IBV_WR_ATOMIC_FETCH_AND_ADD), WR_OPCODE(IBV_WR_LOCAL_INV), WR_OPCODE(IBV_WR_BIND_MW),
	WR_OPCODE(IBV_WR_SEND_WITH_INV), WR_OPCODE(IBV_WR_TSO), WR_OPCODE(IBV_WR_DRIVER1),
#undef WR_OPCODE
};

/* The ibv_wr_opcode value of a verbs opcode name (FV__WR_NONE for none), -2 if unknown. */
static int wr_opcode_value(const char *name)
{
	if (is(name, "FV__WR_NONE"))
		return FV__WR_NONE;
	for (size_t i = 0; i < sizeof(wr_opcodes) / sizeof(wr_opcodes[0]); i++)
		if (is(wr_opcodes[i].name, name))
			return wr_opcodes[i].value;
	return -2;
}

static int op_wr[MAX_OPS];

/* The mlx5 opcodes the table may name, with their values (mlx5dv.h); -1 if unknown. */
static const struct { const char *name; int value; } mlx5_opcodes[] = {
#define MLX5_OP(x) { #x, x }
	MLX5_OP(MLX5_OPCODE_NOP), MLX5_OP(MLX5_OPCODE_SEND_INVAL), MLX5_OP(MLX5_OPCODE_RDMA_WRITE),
	MLX5_OP(MLX5_OPCODE_RDMA_WRITE_IMM), MLX5_OP(MLX5_OPCODE_SEND), MLX5_OP(MLX5_OPCODE_SEND_IMM),
	MLX5_OP(MLX5_OPCODE_TSO), MLX5_OP(MLX5_OPCODE_RDMA_READ), MLX5_OP(MLX5_OPCODE_ATOMIC_CS),
	MLX5_OP(MLX5_OPCODE_ATOMIC_FA), MLX5_OP(MLX5_OPCODE_UMR),
#undef MLX5_OP
};

static int mlx5_opcode_value(const char *name)
{
	for (size_t i = 0; i < sizeof(mlx5_opcodes) / sizeof(mlx5_opcodes[0]); i++)
		if (is(mlx5_opcodes[i].name, name))
			return mlx5_opcodes[i].value;
	return -1;
}

/* The row whose mlx5 opcode has this value, NULL if none (rows that share one agree). */
static const struct op *op_of_mlx5(int value)
{
	for (size_t j = 0; j < n_ops; j++)
		if (mlx5_opcode_value(ops[j].mlx5) == value)
			return &ops[j];
	return NULL;
}

/*
 * gen/wc_op.h: ops.def's completion column as fv__sq_wc_op, the requester completion per
 * mlx5 opcode, by position (C++ has no array designators), up to the highest opcode a row
 * names; the asserts pin the positions to mlx5dv.h's values.
 */
static void emit_wc(void)
{
	int top = 0;

	printf("/* SPDX-License-Identifier: BSD-2-Clause */\n"
	       "/* Generated by tools/gen-ops.c from ops.def by `make gen`. Do not edit. */\n"
	       "#ifndef FASTVERBS_GEN_WC_OP_H\n#define FASTVERBS_GEN_WC_OP_H\n\n"
	       "#include <assert.h>\n#include <stdint.h>\n#include <infiniband/verbs.h>\n"
	       "#include <infiniband/mlx5dv.h>\n\n");
	printf("/*\n"
	       " * A requester completion's entry: ibv_wc opcode (bits 7:0), wc_flags (15:8), whether\n"
	       " * byte_len is the CQE's byte_cnt or the WQE tells the opcode (one test for both), a\n"
	       " * fixed byte_len (31:24).\n"
	       " */\n"
	       "#define FV__WC_IMM ((unsigned)IBV_WC_WITH_IMM << 8)\n"
	       "#define FV__WC_CNT 0x10000u\t/* byte_len = CQE byte_cnt */\n"
	       "#define FV__WC_UMR 0x20000u\t/* bind or invalidate: told by the WQE */\n"
	       "#define FV__WC_8   (8u << 24)\t/* byte_len = 8 */\n\n");
	for (size_t j = 0; j < n_ops; j++)
		if (mlx5_opcode_value(ops[j].mlx5) > top)
			top = mlx5_opcode_value(ops[j].mlx5);
	printf("/* Indexed by the CQE's send opcode; an opcode no row names: 0 (IBV_WC_SEND). */\n"
	       "static const uint32_t fv__sq_wc_op[256] = {\n");
	for (int v = 0; v <= top; v++) {
		const struct op *o = op_of_mlx5(v);
		int w = v;

		if (!o) {	/* a run of opcodes no row names, on one line */
			while (w < top && !op_of_mlx5(w + 1))
				w++;
			printf("\t");
			for (int k = v; k <= w; k++)
				printf("0,%s", k < w ? " " : "");
			printf("\t/* 0x%02x..0x%02x */\n", v, w);
			v = w;
			continue;
		}
		if (is(o->wc, "BY_WQE"))
			printf("\tFV__WC_UMR,");
		else
			printf("\tIBV_WC_%s%s%s%s,", o->wc, is(o->imm, "IMM") ? " | FV__WC_IMM" : "",
			       is(o->wc, "RDMA_READ") ? " | FV__WC_CNT" : "",
			       is(o->wc, "COMP_SWAP") || is(o->wc, "FETCH_ADD") ? " | FV__WC_8" : "");
		printf("\t/* 0x%02x %s */\n", v, o->mlx5);
	}
	printf("};\n");
	for (int v = 0; v <= top; v++)
		if (op_of_mlx5(v))
			printf("static_assert(%s == 0x%02x, \"fv__sq_wc_op position\");\n", op_of_mlx5(v)->mlx5, v);
	printf("static_assert(IBV_WC_SEND == 0, \"fv__sq_wc_op's empty entries\");\n\n"
	       "#endif /* FASTVERBS_GEN_WC_OP_H */\n");
}

/*
 * Rows by QP type, slots by ibv_wr_opcode, both by position (C++ has no array designators);
 * the asserts pin the positions to the enums' values.
 */
static void emit_table(void)
{
	printf("/* What fv_post_send allows per (QP type, ibv_wr_opcode); zero rows are refused. */\n");
	printf("static const struct fv__op_info fv__op_table[FV__QPT_COUNT][FV__WR_OPCODE_SLOTS] = {\n");
	for (size_t i = 0; i < n_qpts; i++) {
		printf("\t{\t/* %s */\n", qpts[i].fv);
		for (int slot = 0; slot < WR_SLOTS; slot++) {
			const struct op *o = NULL;

			for (size_t j = 0; j < n_ops; j++)
				if (op_wr[j] == slot && allowed(qpts[i].name, ops[j].name) && !dc(&qpts[i]))
					o = &ops[j];
			if (!o) {
				printf("\t\t{ 0, 0 },\n");
				continue;
			}
			printf("\t\t{ 1, FV__PL_%s },\t/* %s */\n", o->payload, o->ibv);
		}
		printf("\t},\n");
	}
	printf("};\n");
	for (size_t i = 0; i < n_qpts; i++)
		printf("static_assert(%s == %zu, \"fv__op_table row\");\n", qpts[i].fv, i);
	for (size_t j = 0; j < n_ops; j++)
		if (op_wr[j] >= 0)
			printf("static_assert(%s == %d, \"fv__op_table slot\");\n", ops[j].ibv, op_wr[j]);
	printf("\n");
}

/* gen/post_send_ops.h: what fv_post_send (compat/post_send.h) reads from the table. */
static void emit_post(void)
{
	printf("/* SPDX-License-Identifier: BSD-2-Clause */\n"
	       "/* Generated by tools/gen-ops.c from ops.def by `make gen`. Do not edit. */\n"
	       "/* fv_post_send's view of ops.def: the table it checks each ibv_send_wr against and its\n"
	       " * dispatch into the builders' fast path (compat/post_send.h uses both). */\n"
	       "#ifndef FASTVERBS_COMPAT_POST_SEND_OPS_H\n#define FASTVERBS_COMPAT_POST_SEND_OPS_H\n\n"
	       "#include \"../compat/post_send_ring.h\"\n\n"
	       "FV__EXTERN_C_BEGIN\n\n");
	printf("#define FV__WR_OPCODE_SLOTS %d\n\n"
	       "/*\n * What fv__post_send_one checks a WR against (payload: ops.def's column as an enum\n"
	       " * fv__payload; SGL ones refuse IBV_SEND_INLINE); the conversions below build the rest.\n */\n"
	       "struct fv__op_info {\n\tuint8_t allowed, payload;\n};\n\n", WR_SLOTS);
	emit_table();
	emit_post_req();
	emit_post_fast();
	printf("FV__EXTERN_C_END\n\n#endif /* FASTVERBS_COMPAT_POST_SEND_OPS_H */\n");
}

/* ---- gen/wr.h: the fv_wr_* calls of ibv_wr_post(3) ---- */

/* An operation's parameters and fields as ibv_wr_*'s namesakes name them (remote_part, imm_part). */
static struct part wr_part(const struct op *o)
{
	struct part r = no_part, i = no_part;
	static char params[256], fields[512];

	if (is(o->remote, "RADDR"))
		r = (struct part){ ", uint32_t rkey, uint64_t remote_addr",
				   ", .segs = FV__SEG_RADDR, .raddr = remote_addr, .rkey = rkey" };
	else if (is(o->remote, "CAS"))
		r = (struct part){ ", uint32_t rkey, uint64_t remote_addr, uint64_t compare, uint64_t swap",
				   ", .segs = FV__SEG_RADDR | FV__SEG_ATOMIC, .raddr = remote_addr, .rkey = rkey,"
				   " .swap_add = swap, .compare = compare" };
	else if (is(o->remote, "FADD"))
		r = (struct part){ ", uint32_t rkey, uint64_t remote_addr, uint64_t add",
				   ", .segs = FV__SEG_RADDR | FV__SEG_ATOMIC, .raddr = remote_addr, .rkey = rkey,"
				   " .swap_add = add" };
	else if (is(o->remote, "BIND"))	/* libmlx5's ibv_wr_bind_mw: a type 2 bind whatever mw->type says */
		r = (struct part){ ", struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *bind_info",
				   ", .segs = FV__SEG_UMR, .imm = htobe32(mw->rkey), .mw_type = IBV_MW_TYPE_2,"
				   " .new_rkey = rkey, .bind = bind_info" };
	else if (is(o->remote, "LINV"))
		r = (struct part){ "", ", .segs = FV__SEG_UMR, .mw_type = IBV_MW_TYPE_2" };
	else if (tso(o))
		r = (struct part){ ", void *hdr, uint16_t hdr_sz, uint16_t mss",
				   ", .segs = FV__SEG_TSO, .hdr = hdr, .hdr_sz = hdr_sz, .mss = mss" };
	if (is(o->imm, "IMM"))
		i = (struct part){ ", __be32 imm_data", ", .imm = imm_data" };
	else if (is(o->imm, "INV"))
		i = (struct part){ ", uint32_t invalidate_rkey", ", .imm = htobe32(invalidate_rkey)" };
	snprintf(params, sizeof(params), "%s%s", r.params, i.params);
	snprintf(fields, sizeof(fields), "%s%s", r.fields, i.fields);
	return (struct part){ params, fields };
}

/* The payload setters: name, parameters, arguments, the core they call (wr_batch.h). */
static const struct { const char *name, *params, *args, *core, *doc; } wr_payloads[] = {
	{ "set_sge", "uint32_t lkey, uint64_t addr, uint32_t length", "lkey, addr, length", "fv__wr_sge_at",
	  "one data segment (none if length is 0; an atomic's keeps length as given, as libmlx5's)" },
	{ "set_sge_list", "size_t num_sge, const struct ibv_sge *sg_list", "num_sge, sg_list", "fv__wr_sge_list_at",
	  "data segments, empty SGEs skipped; ENOMEM if num_sge > the QP's max_send_sge" },
	{ "set_inline_data", "void *addr, size_t length", "addr, length", "fv__wr_inline_at",
	  "the bytes copied into the WQE now; ENOMEM if length > the QP's max_inline_data" },
	{ "set_inline_data_list", "size_t num_buf, const struct ibv_data_buf *buf_list", "num_buf, buf_list",
	  "fv__wr_inline_list_at", "the buffers copied back to back; ENOMEM if they total more than max_inline_data" },
};
#define N_WR_PAYLOADS (sizeof(wr_payloads) / sizeof(wr_payloads[0]))

static unsigned allowed_mask_expr(const struct op *o, char *out, size_t n)
{
	unsigned k = 0;

	out[0] = 0;
	for (size_t i = 0; i < n_qpts; i++)
		if (allowed(qpts[i].name, o->name)) {
			size_t len = strlen(out);

			snprintf(out + len, n - len, "%s(1u << %s)", k++ ? " | " : "", qpts[i].fv);
		}
	return k;
}

/* The request a builder opens, as a zeroed local r (C and C++ alike, emit_req). */
static void emit_wr_req(const struct op *o)
{
	char d[640];

	snprintf(d, sizeof(d), ".opcode = %s%s", o->mlx5, wr_part(o).fields);
	emit_req("\t", d);
}

/*
 * One C++ overload of a generic fv_wr_* name: for a handle type, forwarding its parameters
 * (", type a, ...") to the target the _Generic front picks in C.
 */
static void emit_wr_overload(const char *ret, const char *fn, const char *handle, const char *target,
			     const char *params)
{
	printf("static FV__ALWAYS_INLINE %s %s%s(struct %s *h%s)\n{\n\t%s%s(h", ret,
	       is(fn, "qp") ? "fv__wr_" : "fv_wr_", fn, handle, params,
	       is(ret, "void") ? "" : "return ", target);
	print_args(params);
	printf(");\n}\n\n");
}

/*
 * C++ has no _Generic: each generic fv_wr_* name is an overload set instead, one per handle
 * the front admits, so a call a typed handle's QP type does not have does not compile either.
 */
static void emit_wr_cxx(void)
{
	char target[128], params[256];

	printf("#ifdef __cplusplus\n/* ---- the calls as C++ overloads (outside extern \"C\") ---- */\n\n");
	emit_wr_overload("struct fv_qp *", "qp", "fv_qp", "fv__qp_wr_qp", "");
	for (size_t i = 0; i < n_qpts; i++) {
		char handle[64];

		snprintf(handle, sizeof(handle), "fv_%s", qpts[i].name);
		snprintf(target, sizeof(target), "fv__%s_wr_qp", qpts[i].name);
		emit_wr_overload("struct fv_qp *", "qp", handle, target, "");
	}
	for (size_t j = 0; j < n_ops; j++) {
		const struct op *o = &ops[j];

		if (is(o->wr, "NONE"))
			continue;
		snprintf(target, sizeof(target), "fv__qp_wr_%s", o->wr);
		emit_wr_overload("void", o->wr, "fv_qp", target, wr_part(o).params);
		for (size_t i = 0; i < n_qpts; i++) {
			char handle[64];

			if (!allowed(qpts[i].name, o->name))
				continue;
			snprintf(handle, sizeof(handle), "fv_%s", qpts[i].name);
			snprintf(target, sizeof(target), "fv__%s_wr_%s", qpts[i].name, o->wr);
			emit_wr_overload("void", o->wr, handle, target, wr_part(o).params);
		}
	}
	for (size_t k = 0; k < N_WR_PAYLOADS + 1; k++) {
		const char *fn = k < N_WR_PAYLOADS ? wr_payloads[k].name : "set_xrc_srqn";

		snprintf(params, sizeof(params), ", %s", k < N_WR_PAYLOADS ? wr_payloads[k].params : "uint32_t remote_srqn");
		snprintf(target, sizeof(target), "fv__qp_wr_%s", fn);
		emit_wr_overload("void", fn, "fv_qp", target, params);
		for (size_t i = 0; i < n_qpts; i++) {
			char handle[64];

			if (k == N_WR_PAYLOADS && !is(qpts[i].dest, "SRQN"))
				continue;
			snprintf(handle, sizeof(handle), "fv_%s", qpts[i].name);
			snprintf(target, sizeof(target), "fv__%s_wr_%s", qpts[i].name, fn);
			emit_wr_overload("void", fn, handle, target, params);
		}
	}
	/* set_ud_addr: the address handle either way, the other passed as NULL (FV__WR_FV_AH). */
	for (size_t i = 0; i <= n_qpts; i++) {
		const char *name = i < n_qpts ? qpts[i].name : "qp";

		if (i < n_qpts && !is(qpts[i].dest, "AV"))
			continue;
		printf("static FV__ALWAYS_INLINE void fv_wr_set_ud_addr(struct fv_%s *h, const struct fv_ah *ah,\n"
		       "\t\t\t\t\t      uint32_t remote_qpn, uint32_t remote_qkey)\n{\n"
		       "\tfv__%s_wr_set_ud_addr(h, ah, NULL, remote_qpn, remote_qkey);\n}\n\n", name, name);
		printf("static FV__ALWAYS_INLINE void fv_wr_set_ud_addr(struct fv_%s *h, struct ibv_ah *ah,\n"
		       "\t\t\t\t\t      uint32_t remote_qpn, uint32_t remote_qkey)\n{\n"
		       "\tfv__%s_wr_set_ud_addr(h, NULL, ah, remote_qpn, remote_qkey);\n}\n\n", name, name);
	}
	/* set_dc_addr(_stream): the same two forms of address handle (FV__WR_FV_AH). */
	for (size_t i = 0; i <= n_qpts; i++) {
		const char *name = i < n_qpts ? qpts[i].name : "qp";

		if (i < n_qpts && !dc(&qpts[i]))
			continue;
		for (int k = 0; k < 2; k++) {
			const char *ah = k ? "struct ibv_ah *ah" : "const struct fv_ah *ah";
			const char *args = k ? "NULL, ah" : "ah, NULL";

			printf("static FV__ALWAYS_INLINE void fv_wr_set_dc_addr(struct fv_%s *h, %s,\n"
			       "\t\t\t\t\t      uint32_t remote_dctn, uint64_t remote_dc_key)\n{\n"
			       "\tfv__%s_wr_set_dc_addr(h, %s, remote_dctn, remote_dc_key);\n}\n\n", name, ah, name, args);
			printf("static FV__ALWAYS_INLINE void fv_wr_set_dc_addr_stream(struct fv_%s *h, %s,\n"
			       "\t\t\t\t\t\t     uint32_t remote_dctn, uint64_t remote_dc_key, uint16_t stream_id)\n{\n"
			       "\tfv__%s_wr_set_dc_addr_stream(h, %s, remote_dctn, remote_dc_key, stream_id);\n}\n\n",
			       name, ah, name, args);
		}
	}
	printf("#endif /* __cplusplus */\n\n");
}

/*
 * The body of a destination setter on a struct fv_qp: the QP types whose destination kind is
 * dest build it with call (its %s: the QP type), any other refuses it (fv__wr_dest_refused).
 * The refusal is tested first and returns: the built way then falls through, and gcc keeps
 * fewer values across a caller's loop for it (loop (f) at 32 a doorbell, docs/performance.md §2).
 */
static void emit_dest_front(const char *dest, const char *call)
{
	const char *sep = "";
	size_t last = n_qpts;

	printf("\tif (");
	for (size_t i = 0; i < n_qpts; i++)
		if (is(qpts[i].dest, dest)) {
			printf("%sqp->qpt != %s", sep, qpts[i].fv), sep = " && ";
			last = i;
		}
	printf(") {\n\t\tfv__wr_dest_refused(qp);\n\t\treturn;\n\t}\n");
	for (size_t i = 0; i < n_qpts; i++) {
		if (!is(qpts[i].dest, dest))
			continue;
		if (i != last)
			printf("\tif (qp->qpt == %s) {\n\t\t", qpts[i].fv);
		else
			printf("\t");
		printf(call, qpts[i].fv);
		printf(i != last ? ";\n\t\treturn;\n\t}\n" : ";\n");
	}
	printf("}\n\n");
}

static void emit_wr_front(const char *fn, const char *doc, const char *only_dest)
{
	printf("/* %s */\n#define fv_wr_%s(...) _Generic(FV__WR_H(__VA_ARGS__), \\\n\tstruct fv_qp *: fv__qp_wr_%s",
	       doc, fn, fn);
	for (size_t i = 0; i < n_qpts; i++)
		if (!only_dest || is(qpts[i].dest, only_dest))
			printf(", \\\n\tstruct fv_%s *: fv__%s_wr_%s", qpts[i].name, qpts[i].name, fn);
	printf(")(__VA_ARGS__)\n\n");
}

static void emit_wr(void)
{
	printf("/* SPDX-License-Identifier: BSD-2-Clause */\n"
	       "/* Generated by tools/gen-ops.c from ops.def by `make gen`. Do not edit. */\n"
	       "/*\n * fv_wr_*: ibv_wr_post(3) inline, with libmlx5 44's bytes (the machinery: wr_batch.h).\n"
	       " * Every call takes a struct fv_qp * or a typed handle; on a typed handle a builder or setter\n"
	       " * its QP type does not have does not compile, on a struct fv_qp * it makes fv_wr_complete\n"
	       " * fail with EINVAL. Set qp->wr_id and qp->wr_flags before each builder, as in ibv_qp_ex.\n */\n"
	       "#ifndef FASTVERBS_COMPAT_WR_H\n#define FASTVERBS_COMPAT_WR_H\n\n#include \"../compat/wr_batch.h\"\n\nFV__EXTERN_C_BEGIN\n\n");
	for (size_t i = 0; i < n_qpts; i++) {
		const struct qpt *q = &qpts[i];

		printf("/* ---- %s: the fronts' targets for a struct fv_%s * (fv__%s_wr_<call> is fv_wr_<call>) ---- */\n\n",
		       q->ibv + 8, q->name, q->name);
		printf("/* The struct fv_qp of a typed %s handle. */\n", q->ibv + 8);
		printf("static inline struct fv_qp *fv__%s_wr_qp(struct fv_%s *h)\n{\n\treturn &h->qp;\n}\n\n",
		       q->name, q->name);
		for (size_t j = 0; j < n_ops; j++) {
			const struct op *o = &ops[j];

			if (is(o->wr, "NONE") || !allowed(q->name, o->name))
				continue;
			printf("/* fv_wr_%s for %s handles: %s, %s. */\n", o->wr, q->ibv + 8,
			       umr(o) ? "build a whole WQE" : "open a WQE", o->desc);
			printf("static FV__ALWAYS_INLINE void fv__%s_wr_%s(struct fv_%s *h%s)\n{\n",
			       q->name, o->wr, q->name, wr_part(o).params);
			emit_wr_req(o);
			printf("\t%s(&h->qp, %s, &r);\n}\n\n", umr(o) ? "fv__wr_umr" : "fv__wr_open", q->fv);
		}
		for (size_t k = 0; k < N_WR_PAYLOADS; k++)
			printf("/* fv_wr_%s for %s handles. */\n"
			       "static FV__ALWAYS_INLINE void fv__%s_wr_%s(struct fv_%s *h, %s)\n{\n"
			       "\t%s(&h->qp, %s FV__WR_TYPED(true), %s);\n}\n\n", wr_payloads[k].name, q->ibv + 8, q->name, wr_payloads[k].name, q->name,
			       wr_payloads[k].params, wr_payloads[k].core, q->fv, wr_payloads[k].args);
		if (is(q->dest, "AV"))
			printf("/* fv_wr_set_ud_addr on a UD handle: fah or ibah (the other NULL), as the front passes them. */\n"
			       "static FV__ALWAYS_INLINE void fv__%s_wr_set_ud_addr(struct fv_%s *h, const struct fv_ah *fah,\n"
			       "\t\t\t\t\t\t struct ibv_ah *ibah, uint32_t remote_qpn, uint32_t remote_qkey)\n{\n"
			       "\tfv__wr_ud_addr_at(&h->qp, fah, ibah, remote_qpn, remote_qkey);\n}\n\n", q->name, q->name);
		if (dc(q))
			printf("/* fv_wr_set_dc_addr(_stream) on a DCI handle: fah or ibah (the other NULL), as the front passes them. */\n"
			       "static FV__ALWAYS_INLINE void fv__%s_wr_set_dc_addr(struct fv_%s *h, const struct fv_ah *fah,\n"
			       "\t\t\t\t\t\t struct ibv_ah *ibah, uint32_t remote_dctn, uint64_t remote_dc_key)\n{\n"
			       "\tfv__wr_dc_addr_at(&h->qp, fah, ibah, remote_dctn, remote_dc_key, 0);\n}\n\n"
			       "static FV__ALWAYS_INLINE void fv__%s_wr_set_dc_addr_stream(struct fv_%s *h, const struct fv_ah *fah,\n"
			       "\t\t\t\t\t\t\tstruct ibv_ah *ibah, uint32_t remote_dctn, uint64_t remote_dc_key,\n"
			       "\t\t\t\t\t\t\tuint16_t stream_id)\n{\n"
			       "\tfv__wr_dc_addr_at(&h->qp, fah, ibah, remote_dctn, remote_dc_key, stream_id);\n}\n\n",
			       q->name, q->name, q->name, q->name);
		if (is(q->dest, "SRQN"))
			printf("/* fv_wr_set_xrc_srqn on an XRC handle. */\n"
			       "static FV__ALWAYS_INLINE void fv__%s_wr_set_xrc_srqn(struct fv_%s *h, uint32_t remote_srqn)\n{\n"
			       "\tfv__wr_dest(&h->qp, %s, NULL, 0, 0, remote_srqn, 0, 0);\n}\n\n", q->name, q->name, q->fv);
	}

	printf("/* ---- the fronts' targets for a struct fv_qp *: the QP type checked at run time, EINVAL at\n"
	       " * fv_wr_complete for a call it does not have ---- */\n\n");
	for (size_t j = 0; j < n_ops; j++) {
		const struct op *o = &ops[j];
		char mask[512];

		if (is(o->wr, "NONE") || !allowed_mask_expr(o, mask, sizeof(mask)))
			continue;
		printf("/* fv_wr_%s on a struct fv_qp: %s, %s. */\n", o->wr,
		       umr(o) ? "build a whole WQE" : "open a WQE", o->desc);
		printf("static FV__ALWAYS_INLINE void fv__qp_wr_%s(struct fv_qp *qp%s)\n{\n", o->wr, wr_part(o).params);
		emit_wr_req(o);
		printf("\t%s(qp, %s, &r);\n}\n\n", umr(o) ? "fv__wr_umr_any" : "fv__wr_open_any", mask);
	}
	/*
	 * The payload setters branch on the QP type, one arm per destination kind: QP types with
	 * the same kind lay their WQEs out alike (ops.def), so the first of them builds for all.
	 * Fewer arms: less code in a caller's loop. The first kind's arm is an if before the
	 * switch of the others, and the switch has no default (fv_qp_init takes no other QP type):
	 * gcc then reloads no spilled value on the first arm's way for an arm it does not take.
	 * A DCI's WQE is a UD one with RC's segments after the AV: it shares the AV arm, which
	 * builds for both as the DC QP type, a constant (check_qpts: one DC type, whose arm is
	 * AV's; an AV type's operations have no remote segments, so its WQEs are a DCI's without
	 * them; a UD QP's Q_Key reads as a DCI's key, qp.h). With the QP type as read there
	 * instead (one arm, two layouts), the build's tests of it stayed in a caller's loop: UD
	 * SEND on a struct fv_qp * cost 127 instructions a WR at 32 per doorbell, 90 with the
	 * constant. A fifth arm (UD and DCI apart) measured no better. clang 14 does better with
	 * the QP type as read (FV__WR_AV_AS_READ, tune.h).
	 */
	if (dc_qpt)	/* check_qpts: an AV type before it */
		printf("/* The QP type the AV arm below builds for: the DC one's, or (FV__WR_AV_AS_READ,\n"
		       " * tune.h) a UD QP's own. */\n"
		       "#define FV__WR_AV_QPT(qp) (FV__WR_AV_AS_READ && (qp)->qpt == %s ? %s : %s)\n\n",
		       av_qpt->fv, av_qpt->fv, dc_qpt->fv);
	for (size_t k = 0; k < N_WR_PAYLOADS; k++) {
		printf("/* fv_wr_%s on a struct fv_qp (one arm per WQE layout: destination kind). */\n",
		       wr_payloads[k].name);
		printf("static FV__ALWAYS_INLINE void fv__qp_wr_%s(struct fv_qp *qp, %s)\n{\n"
		       "\tfv__wr_touch(qp);\n", wr_payloads[k].name, wr_payloads[k].params);
		for (size_t i = 0, arm = 0; i < n_qpts; i++) {
			size_t first = 0;
			const char *sep = "";
			char qpt[128];

			while (!is(qpts[first].dest, qpts[i].dest))
				first++;
			if (first != i || dc(&qpts[i]))
				continue;	/* its arm is the first's, or the AV arm (DC) */
			snprintf(qpt, sizeof(qpt), "%s", qpts[i].fv);
			printf(arm++ ? "" : "\tif (");
			for (size_t j = i; j < n_qpts; j++) {
				if (!is(qpts[j].dest, qpts[i].dest) && !(is(qpts[i].dest, "AV") && dc(&qpts[j])))
					continue;
				if (dc(&qpts[j]))
					snprintf(qpt, sizeof(qpt), "FV__WR_AV_QPT(qp)");
				if (arm == 1)
					printf("%sqp->qpt == %s", sep, qpts[j].fv), sep = " || ";
				else
					printf("\tcase %s:\n", qpts[j].fv);
			}
			printf(arm == 1 ? ") {\n\t\t%s(qp, %s FV__WR_TYPED(false), %s);\n\t\treturn;\n\t}\n\tswitch (qp->qpt) {\n" :
					  "\t\t%s(qp, %s FV__WR_TYPED(false), %s);\n\t\treturn;\n",
			       wr_payloads[k].core, qpt, wr_payloads[k].args);
		}
		printf("\tdefault:\n\t\t__builtin_unreachable();\n\t}\n}\n\n");
	}
	printf("/* fv_wr_set_ud_addr on a struct fv_qp (UD only). */\n"
	       "static FV__ALWAYS_INLINE void fv__qp_wr_set_ud_addr(struct fv_qp *qp, const struct fv_ah *fah,\n"
	       "\t\t\t\t\t\tstruct ibv_ah *ibah, uint32_t remote_qpn, uint32_t remote_qkey)\n{\n");
	emit_dest_front("AV", "fv__wr_ud_addr_at(qp, fah, ibah, remote_qpn, remote_qkey)");
	printf("/* fv_wr_set_dc_addr(_stream) on a struct fv_qp (DCI only). */\n"
	       "static FV__ALWAYS_INLINE void fv__qp_wr_set_dc_addr_stream(struct fv_qp *qp, const struct fv_ah *fah,\n"
	       "\t\t\t\t\t\t       struct ibv_ah *ibah, uint32_t remote_dctn, uint64_t remote_dc_key,\n"
	       "\t\t\t\t\t\t       uint16_t stream_id)\n{\n");
	emit_dest_front("DC", "fv__wr_dc_addr_at(qp, fah, ibah, remote_dctn, remote_dc_key, stream_id)");
	printf("static FV__ALWAYS_INLINE void fv__qp_wr_set_dc_addr(struct fv_qp *qp, const struct fv_ah *fah,\n"
	       "\t\t\t\t\t\tstruct ibv_ah *ibah, uint32_t remote_dctn, uint64_t remote_dc_key)\n{\n"
	       "\tfv__qp_wr_set_dc_addr_stream(qp, fah, ibah, remote_dctn, remote_dc_key, 0);\n}\n\n");
	printf("/* fv_wr_set_xrc_srqn on a struct fv_qp (XRC only). */\n"
	       "static FV__ALWAYS_INLINE void fv__qp_wr_set_xrc_srqn(struct fv_qp *qp, uint32_t remote_srqn)\n{\n");
	emit_dest_front("SRQN", "fv__wr_dest(qp, %s, NULL, 0, 0, remote_srqn, 0, 0)");

	printf("FV__EXTERN_C_END\n\n");
	printf("/* ---- the calls: ibv_wr_post(3) with fv_ for ibv_, on a struct fv_qp * or a typed handle\n"
	       " * (C++: the overloads at the end) ---- */\n\n");
	printf("#ifndef __cplusplus\n/* The struct fv_qp of a struct fv_qp * or a typed handle. */\n#define fv__wr_qp(h) _Generic((h), "
	       "struct fv_qp *: fv__qp_wr_qp");
	for (size_t i = 0; i < n_qpts; i++)
		printf(", \\\n\tstruct fv_%s *: fv__%s_wr_qp", qpts[i].name, qpts[i].name);
	printf(")(h)\n#endif\n\n");
	printf("/* Begin a batch (ibv_wr_start): nothing is posted before fv_wr_complete. */\n"
	       "#define fv_wr_start(h) fv__wr_start_qp(fv__wr_qp(h) FV__WR_HANDLE(h))\n\n"
	       "/*\n * Post the batch with one doorbell (BlueFlame for a lone WQE that fits) and return 0; or,\n"
	       " * if any call of the batch failed or a WQE lacks a setter, post nothing (ring, doorbell\n"
	       " * record and BlueFlame register as at fv_wr_start) and return the first error: ENOMEM (ring\n"
	       " * full, too many SGEs, inline too long) or EINVAL (a call the QP type does not have, a\n"
	       " * missing or repeated setter, an address handle that is not mlx5's). (ibv_wr_complete)\n */\n"
	       "#define fv_wr_complete(h) fv__wr_complete_qp(fv__wr_qp(h) FV__WR_HANDLE(h))\n\n"
	       "/* Drop the batch: nothing of it is posted (ibv_wr_abort). */\n"
	       "#define fv_wr_abort(h) fv__wr_abort_qp(fv__wr_qp(h))\n\n#ifndef __cplusplus\n");
	for (size_t j = 0; j < n_ops; j++) {
		const struct op *o = &ops[j];
		char doc[512];

		if (is(o->wr, "NONE"))
			continue;
		snprintf(doc, sizeof(doc), "fv_wr_%s(h%s): %s: %s (ibv_wr_%s).%s", o->wr, wr_part(o).params,
			 umr(o) ? "build a WQE" : "open a WQE", o->desc, o->wr,
			 umr(o) ? " No setters: the WQE is whole." : " Then its setters.");
		printf("/* %s */\n#define fv_wr_%s(...) _Generic(FV__WR_H(__VA_ARGS__), \\\n\tstruct fv_qp *: fv__qp_wr_%s",
		       doc, o->wr, o->wr);
		for (size_t i = 0; i < n_qpts; i++)
			if (allowed(qpts[i].name, o->name))
				printf(", \\\n\tstruct fv_%s *: fv__%s_wr_%s", qpts[i].name, qpts[i].name, o->wr);
		printf(")(__VA_ARGS__)\n\n");
	}
	for (size_t k = 0; k < N_WR_PAYLOADS; k++) {
		char doc[512];

		snprintf(doc, sizeof(doc), "fv_wr_%s(h, %s): the open WQE's payload: %s (ibv_wr_%s).",
			 wr_payloads[k].name, wr_payloads[k].params, wr_payloads[k].doc, wr_payloads[k].name);
		emit_wr_front(wr_payloads[k].name, doc, NULL);
	}
	printf("/*\n * fv_wr_set_ud_addr(h, ah, remote_qpn, remote_qkey): the open UD WQE's destination\n"
	       " * (ibv_wr_set_ud_addr); ah is a struct fv_ah * (fv_ah_init) or the struct ibv_ah * itself\n"
	       " * (looked up as fv_post_send does: EINVAL if it is not an mlx5 AH).\n */\n"
	       "#define fv_wr_set_ud_addr(h, ah, remote_qpn, remote_qkey) _Generic((h), \\\n"
	       "\tstruct fv_qp *: fv__qp_wr_set_ud_addr");
	for (size_t i = 0; i < n_qpts; i++)
		if (is(qpts[i].dest, "AV"))
			printf(", \\\n\tstruct fv_%s *: fv__%s_wr_set_ud_addr", qpts[i].name, qpts[i].name);
	printf(")((h), FV__WR_FV_AH(ah), FV__WR_IBV_AH(ah), (remote_qpn), (remote_qkey))\n\n");
	emit_wr_front("set_xrc_srqn", "fv_wr_set_xrc_srqn(h, remote_srqn): the open XRC WQE's destination SRQ "
		      "(ibv_wr_set_xrc_srqn).", "SRQN");
	printf("/*\n * fv_wr_set_dc_addr(h, ah, remote_dctn, remote_dc_key): the open DCI WQE's destination\n"
	       " * (mlx5dv_wr_set_dc_addr): the DCT number and access key, reached through ah (a struct\n"
	       " * fv_ah * or the struct ibv_ah * itself, as fv_wr_set_ud_addr). _stream: also its DCI\n"
	       " * stream (mlx5dv_wr_set_dc_addr_stream).\n */\n"
	       "#define fv_wr_set_dc_addr(h, ah, remote_dctn, remote_dc_key) _Generic((h), \\\n"
	       "\tstruct fv_qp *: fv__qp_wr_set_dc_addr");
	for (size_t i = 0; i < n_qpts; i++)
		if (dc(&qpts[i]))
			printf(", \\\n\tstruct fv_%s *: fv__%s_wr_set_dc_addr", qpts[i].name, qpts[i].name);
	printf(")((h), FV__WR_FV_AH(ah), FV__WR_IBV_AH(ah), (remote_dctn), (remote_dc_key))\n\n");
	printf("#define fv_wr_set_dc_addr_stream(h, ah, remote_dctn, remote_dc_key, stream_id) _Generic((h), \\\n"
	       "\tstruct fv_qp *: fv__qp_wr_set_dc_addr_stream");
	for (size_t i = 0; i < n_qpts; i++)
		if (dc(&qpts[i]))
			printf(", \\\n\tstruct fv_%s *: fv__%s_wr_set_dc_addr_stream", qpts[i].name, qpts[i].name);
	printf(")((h), FV__WR_FV_AH(ah), FV__WR_IBV_AH(ah), (remote_dctn), (remote_dc_key), (stream_id))\n\n");
	printf("#endif /* !__cplusplus */\n\n");
	emit_wr_cxx();
	printf("#endif /* FASTVERBS_COMPAT_WR_H */\n");
}

/* ---- reading ops.def: every row checked, the first mistake named by its line ---- */

static void fail(int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: ", table_path, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* The values an enumerated column may take; NULL-terminated. */
static const char *const dest_kinds[] = { "NONE", "AV", "SRQN", "ETH", "DC", NULL };
static const char *const remote_kinds[] = { "NONE", "RADDR", "CAS", "FADD", "BIND", "LINV", "TSO", NULL };
static const char *const imm_kinds[] = { "NONE", "IMM", "INV", NULL };
static const char *const payload_kinds[] = { "DATA", "SGL", "NONE", NULL };
static const char *const wc_kinds[] = { "SEND", "RDMA_WRITE", "RDMA_READ", "COMP_SWAP", "FETCH_ADD", "TSO",
					 "BY_WQE", NULL };

static void check_kind(int line, const char *column, const char *v, const char *const *kinds)
{
	for (const char *const *k = kinds; *k; k++)
		if (is(v, *k))
			return;
	fail(line, "unknown %s '%s'", column, v);
}

static int is_ident(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return 0;
	while (*++s)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

/* An identifier column, with the prefix its values must start with ("" for none). */
static void check_ident(int line, const char *column, const char *v, const char *prefix)
{
	if (!is_ident(v) || strncmp(v, prefix, strlen(prefix)) != 0)
		fail(line, "bad %s '%s'%s%s", column, v, *prefix ? ": want " : "", prefix);
}

static const struct qpt *find_qpt(const char *name)
{
	for (size_t i = 0; i < n_qpts; i++)
		if (is(qpts[i].name, name))
			return &qpts[i];
	return NULL;
}

static const struct op *find_op(const char *name)
{
	for (size_t i = 0; i < n_ops; i++)
		if (is(ops[i].name, name))
			return &ops[i];
	return NULL;
}

static int qpt_line[MAX_QPTS];

static void add_qpt(int line, char **a)
{
	check_ident(line, "QP type name", a[0], "");
	check_ident(line, "fastverbs QP type", a[1], "FV_QPT_");
	check_ident(line, "verbs QP type", a[2], "IBV_QPT_");
	check_kind(line, "destination", a[3], dest_kinds);
	if (find_qpt(a[0]))
		fail(line, "duplicate QP type '%s'", a[0]);
	for (size_t i = 0; i < n_qpts; i++)
		if (is(qpts[i].fv, a[1]) || is(qpts[i].ibv, a[2]))
			fail(line, "QP type '%s' repeats '%s' or '%s'", a[0], a[1], a[2]);
	if (n_qpts == MAX_QPTS)
		fail(line, "more than %d QP types", MAX_QPTS);
	qpt_line[n_qpts] = line;
	qpts[n_qpts++] = (struct qpt){ a[0], a[1], a[2], a[3] };
}

/*
 * The fv_wr_* payload setters of a struct fv_qp build an AV QP type's WQEs as the DC type's
 * (emit_wr): there must be one DC type at most, and an AV type before it to share its arm.
 */
static void check_qpts(void)
{
	for (size_t i = 0; i < n_qpts; i++) {
		if (is(qpts[i].dest, "AV") && !av_qpt)
			av_qpt = &qpts[i];
		if (!dc(&qpts[i]))
			continue;
		if (dc_qpt)
			fail(qpt_line[i], "QP type '%s': a second DC QP type ('%s' is one)", qpts[i].name, dc_qpt->name);
		if (!av_qpt)
			fail(qpt_line[i], "QP type '%s': a DC QP type needs an AV one before it (their fv_wr_* "
			     "payload setters share one arm)", qpts[i].name);
		dc_qpt = &qpts[i];
	}
}

static void add_op(int line, char **a)
{
	check_ident(line, "operation name", a[0], "");
	if (!is(a[2], "FV__WR_NONE"))
		check_ident(line, "verbs opcode", a[2], "IBV_WR_");
	check_ident(line, "mlx5 opcode", a[3], "MLX5_OPCODE_");
	check_kind(line, "remote", a[4], remote_kinds);
	check_kind(line, "immediate", a[5], imm_kinds);
	check_kind(line, "payload", a[6], payload_kinds);
	check_kind(line, "completion", a[7], wc_kinds);
	if (mlx5_opcode_value(a[3]) < 0)
		fail(line, "mlx5 opcode '%s' is not one the generator knows", a[3]);
	if (is(a[7], "BY_WQE") != (is(a[4], "BIND") || is(a[4], "LINV")))
		fail(line, "operation '%s': completion BY_WQE is for the memory-window rows, and only them", a[0]);
	/* A memory-window builder completes its WQE itself; any other needs a payload setter. */
	if (!is(a[1], "NONE") && is(a[6], "NONE") && !is(a[4], "BIND") && !is(a[4], "LINV"))
		fail(line, "operation '%s': an fv_wr_* builder needs a payload", a[0]);
	if ((is(a[4], "BIND") || is(a[4], "LINV")) && !is(a[6], "NONE"))
		fail(line, "operation '%s': a memory-window operation takes no payload", a[0]);
	if (is(a[4], "BIND") && !is(a[5], "NONE"))
		fail(line, "operation '%s': BIND takes no immediate", a[0]);
	if (is(a[4], "LINV") && !is(a[5], "INV"))
		fail(line, "operation '%s': LINV needs the immediate INV (the key to invalidate)", a[0]);
	if (find_op(a[0]))
		fail(line, "duplicate operation '%s'", a[0]);
	for (size_t i = 0; i < n_ops; i++) {
		if (!is(a[2], "FV__WR_NONE") && is(ops[i].ibv, a[2]))
			fail(line, "operation '%s' repeats verbs opcode '%s'", a[0], a[2]);
		if (!is(a[1], "NONE") && is(ops[i].wr, a[1]))
			fail(line, "operation '%s' repeats fv_wr_%s", a[0], a[1]);
		if (is(ops[i].mlx5, a[3]) && (!is(ops[i].wc, a[7]) || is(ops[i].imm, "IMM") != is(a[5], "IMM")))
			fail(line, "operation '%s' shares %s with '%s' but not its completion", a[0], a[3], ops[i].name);
	}
	if (n_ops == MAX_OPS)
		fail(line, "more than %d operations", MAX_OPS);
	op_wr[n_ops] = wr_opcode_value(a[2]);
	if (op_wr[n_ops] == -2 || op_wr[n_ops] >= WR_SLOTS)
		fail(line, "verbs opcode '%s' has no slot in fv__op_table", a[2]);
	ops[n_ops++] = (struct op){ a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8] };
}

/* Pairs are checked once the whole table is read: FV__ALLOW may come before the rows it names. */
static int allow_line[MAX_ALLOWS];

static void add_allow(int line, char **a)
{
	for (size_t i = 0; i < n_allows; i++)
		if (is(allows[i].qpt, a[0]) && is(allows[i].op, a[1]))
			fail(line, "duplicate pair (%s, %s)", a[0], a[1]);
	if (n_allows == MAX_ALLOWS)
		fail(line, "more than %d pairs", MAX_ALLOWS);
	allow_line[n_allows] = line;
	allows[n_allows++] = (struct allow){ a[0], a[1] };
}

static void check_allows(void)
{
	for (size_t i = 0; i < n_allows; i++) {
		if (!find_qpt(allows[i].qpt))
			fail(allow_line[i], "pair names unknown QP type '%s'", allows[i].qpt);
		if (!find_op(allows[i].op))
			fail(allow_line[i], "pair names unknown operation '%s'", allows[i].op);
		/* raw Ethernet (eth.h) builds plain and TSO sends with a payload, nothing else */
		const struct op *o = find_op(allows[i].op);
		bool eth = is(find_qpt(allows[i].qpt)->dest, "ETH");

		if (eth && (!(is(o->remote, "NONE") || tso(o)) || !is(o->imm, "NONE") || !is(o->payload, "DATA")))
			fail(allow_line[i], "pair (%s, %s): an Ethernet QP type takes only SEND and TSO with DATA",
			     allows[i].qpt, allows[i].op);
		if (!eth && tso(o))
			fail(allow_line[i], "pair (%s, %s): TSO needs an Ethernet QP type", allows[i].qpt, allows[i].op);
		/* build.h lays an AV WQE out as ctrl, AV, payload; gen/wr.h builds it as a DC one */
		if (is(find_qpt(allows[i].qpt)->dest, "AV") && !is(o->remote, "NONE"))
			fail(allow_line[i], "pair (%s, %s): an AV QP type takes no remote segment",
			     allows[i].qpt, allows[i].op);
	}
}

static const struct { const char *name; int nargs; void (*add)(int, char **); } row_kinds[] = {
	{ "FV__QPT", 4, add_qpt }, { "FV__OP", 9, add_op }, { "FV__ALLOW", 2, add_allow },
};

/* The whole file, comments blanked (newlines kept, so lines still count). */
static char *read_table(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;
	int line = 1, open_line = 0;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "gen-ops: cannot read %s\n", path);
		exit(1);
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "gen-ops: cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	buf[n] = 0;
	for (char *p = buf; *p; p++) {
		if (*p == '\n')
			line++;
		if (open_line) {
			if (p[0] == '*' && p[1] == '/') {
				p[0] = p[1] = ' ';
				p++;
				open_line = 0;
			} else if (*p != '\n') {
				*p = ' ';
			}
		} else if (p[0] == '/' && p[1] == '*') {
			p[0] = p[1] = ' ';
			p++;
			open_line = line;
		} else if (p[0] == '"') {	/* a string: skip it whole (it may hold a slash) */
			char *q = strchr(p + 1, '"');

			if (!q || memchr(p, '\n', (size_t)(q - p)))
				fail(line, "unterminated string");
			p = q;
		}
	}
	if (open_line)
		fail(open_line, "unterminated comment");
	return buf;
}

static char *trim(char *s, char *e)
{
	while (s < e && isspace((unsigned char)*s))
		s++;
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	*e = 0;
	return s;
}

/*
 * The rows: NAME(arg, ...) anywhere but on preprocessor lines (#ifdef ...). Each argument is
 * an identifier, except the last of FV__OP, a string (stored without its quotes).
 */
static void parse_table(char *buf)
{
	int line = 1;
	char *p = buf;

	while (*p) {
		if (*p == '\n') {
			line++;
			p++;
			continue;
		}
		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		if (*p == '#') {	/* preprocessor line */
			while (*p && *p != '\n')
				p++;
			continue;
		}
		if (!isalpha((unsigned char)*p) && *p != '_')
			fail(line, "unexpected '%c'", *p);

		char *name = p, *args[8];
		int nargs = 0, row_line = line;
		size_t k;

		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		char *name_end = p;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '(')
			fail(line, "expected '(' after '%.*s'", (int)(name_end - name), name);
		*name_end = 0;
		for (k = 0; k < sizeof(row_kinds) / sizeof(row_kinds[0]); k++)
			if (is(name, row_kinds[k].name))
				break;
		if (k == sizeof(row_kinds) / sizeof(row_kinds[0]))
			fail(line, "unknown row '%s'", name);
		p++;
		for (;;) {	/* one argument per pass, up to its ',' or the closing ')' */
			char *s = p;

			while (*p && *p != ',' && *p != ')') {
				if (*p == '\n')
					fail(row_line, "%s row does not end on its line", name);
				if (*p == '"')
					p = strchr(p + 1, '"');
				p++;
			}
			if (!*p)
				fail(row_line, "%s row does not end", name);
			if (nargs == 9)
				fail(row_line, "%s row: too many columns", name);
			char end = *p;
			char *a = trim(s, p);
			bool last_str = is(name, "FV__OP") && nargs == 8;

			if (last_str) {
				size_t len = strlen(a);

				if (len < 2 || a[0] != '"' || a[len - 1] != '"')
					fail(row_line, "description must be a string");
				a[len - 1] = 0;
				a++;
			} else if (!*a) {
				fail(row_line, "%s row: empty column %d", name, nargs + 1);
			} else if (!is_ident(a)) {
				fail(row_line, "%s row: column %d '%s' is not a name", name, nargs + 1, a);
			}
			args[nargs++] = a;
			p++;
			if (end == ')')
				break;
		}
		if (nargs != row_kinds[k].nargs)
			fail(row_line, "%s row has %d columns, wants %d", name, nargs, row_kinds[k].nargs);
		row_kinds[k].add(row_line, args);
	}
	check_qpts();
	check_allows();
	if (!n_qpts || !n_ops)
		fail(line, "no FV__QPT or no FV__OP rows");
}

/* Whether an operation's WQE keeps its immediate for the setters after its builder (below). */
static int keeps_imm(const struct op *o)
{
	return !is(o->imm, "NONE") && !is(o->payload, "NONE");
}

/*
 * ops.h's fv__op_has_imm: the mlx5 opcodes of ops.def's rows that have an immediate (IMM or
 * INV) and a payload, each once. A memory window's rows (no payload) build their whole WQE
 * in the builder, so no setter has to keep their immediate for later.
 */
static void emit_has_imm(void)
{
	const char *sep = "";

	printf("/*\n"
	       " * Whether a WQE of this mlx5 opcode, opened before its payload is set (the fv_wr_* calls),\n"
	       " * carries the request's imm (immediate data or the rkey to invalidate) in its ctrl:\n"
	       " * ops.def's operations with an immediate and a payload.\n"
	       " */\n"
	       "static FV__ALWAYS_INLINE bool fv__op_has_imm(uint8_t opcode)\n{\n\treturn ");
	for (size_t j = 0; j < n_ops; j++) {
		const struct op *o = &ops[j];
		size_t k;

		if (!keeps_imm(o))
			continue;
		for (k = 0; k < j; k++)	/* an opcode two such rows share: once */
			if (keeps_imm(&ops[k]) && is(ops[k].mlx5, o->mlx5))
				break;
		if (k < j)
			continue;
		printf("%sopcode == %s", sep, o->mlx5);
		sep = " ||\n\t       ";
	}
	printf("%s;\n}\n\n", *sep ? "" : "false");
}

int main(int argc, char **argv)
{
	const struct form *forms[3];

	if (argc < 2 || argc > 3 || (argc == 3 && !is(argv[2], "wr") && !is(argv[2], "post") && !is(argv[2], "wc"))) {
		fprintf(stderr, "usage: gen-ops TABLE > ops.h; gen-ops TABLE wr > gen/wr.h;"
			" gen-ops TABLE post > gen/post_send_ops.h; gen-ops TABLE wc > gen/wc_op.h\n");
		return 2;
	}
	table_path = argv[1];
	parse_table(read_table(table_path));
	if (argc == 3 && is(argv[2], "wr")) {
		emit_wr();
		return 0;
	}

	if (argc == 3 && is(argv[2], "wc")) {
		emit_wc();
		return 0;
	}
	if (argc == 3 && is(argv[2], "post")) {
		emit_post();
		return 0;
	}

	printf("/* SPDX-License-Identifier: BSD-2-Clause */\n"
	       "/* Generated by tools/gen-ops.c from ops.def by `make gen`. Do not edit. */\n"
	       "#ifndef FASTVERBS_OPS_H\n#define FASTVERBS_OPS_H\n\n#include \"../build.h\"\n#include \"../ah.h\"\n\n"
	       "FV__EXTERN_C_BEGIN\n\n");

	for (size_t i = 0; i < n_qpts; i++) {
		const struct qpt *q = &qpts[i];

		printf("/* ---- %s ---- */\n\n", q->ibv + 8);
		if (!is(q->dest, "ETH")) {	/* fv_raw_init (qp.h) also takes max_tso_header */
			printf("/* fv_%s_init: take over a %s ibv_qp (fv_qp_init) as a typed handle; EINVAL for"
			       " another type. */\n", q->name, q->ibv + 8);
			printf("static inline int fv_%s_init(struct fv_%s *h, struct ibv_qp *ibqp)\n{\n"
			       "\treturn ibqp->qp_type == %s ? fv_qp_init(&h->qp, ibqp) : EINVAL;\n}\n\n",
			       q->name, q->name, q->ibv);
		}
		for (size_t j = 0; j < n_ops; j++) {
			if (!allowed(q->name, ops[j].name))
				continue;
			int n = forms_of(&ops[j], forms);
			for (int k = 0; k < n; k++)
				emit_builder(q, &ops[j], forms[k]);
		}
	}

	emit_has_imm();
	printf("/* ---- generic fronts: fv_write(&rc, ...) picks fv_rc_write; a handle whose QP type\n"
	       " * does not allow the operation does not compile (C++: the overloads at the end). ---- */\n\n"
	       "#ifndef __cplusplus\n");
	for (size_t j = 0; j < n_ops; j++)
		emit_refusals(&ops[j]);
	printf("\n");
	for (size_t j = 0; j < n_ops; j++) {
		int n = forms_of(&ops[j], forms);
		for (int k = 0; k < n; k++)
			emit_front(&ops[j], forms[k]);
	}
	printf("#endif\n\n");
	printf("FV__EXTERN_C_END\n\n");
	emit_cxx_overloads();
	printf("#endif /* FASTVERBS_OPS_H */\n");
	return 0;
}
