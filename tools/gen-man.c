/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gen-man OPS_H DIR: writes DIR/fv_<op>.3, the manual page of each operation of the typed
 * API: its generic names (fv_write, _sgl, _inline) and the per-type builders behind them
 * (fv_rc_write, ...), with exact prototypes, arguments, errors and an example.
 *
 * It reads the generated ops.h, not ops.def: the builders' prototypes and one-line comments
 * there are exactly what a reader gets, and ops.h is what `make gen` makes from ops.def first.
 * What it reads:
 *   #define fv_<name>(h, ...) _Generic((h), \          a generic front, in ops.def order,
 *           struct fv_<qpt> *: fv_<qpt>_<name>, \        with the handles it admits (and
 *           struct fv_<qpt> *: fv__no_<name>_on_<qpt>, \ those it refuses, skipped)
 *   / * fv_<qpt>_<name>: <what> on a <IBV type> QP, ... * /
 *   static FV__ALWAYS_INLINE int fv_<qpt>_<name>(struct fv_<qpt> *h, <params>)
 * An operation's kind (remote address, atomic, immediate, destination) comes from the names
 * of its parameters. Output is deterministic; no front found is an error.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAN_DATE "2026-11-23"	/* when the pages' text last changed */
#define MAX_OPS 64
#define MAX_QPTS 8

/* One operation: its forms (suffix "", "_sgl", "_inline") and, per QP type, each builder. */
struct op {
	char name[32], what[128];
	int nforms;
	const char *suffix[3];
	int nq;
	char qpt[MAX_QPTS][8], ibv[MAX_QPTS][16];
	char params[MAX_QPTS][3][512];	/* after "struct fv_<qpt> *h, " */
};

static struct op ops[MAX_OPS];
static int nops;
static FILE *out;

static int has(const char *params, const char *p)
{
	return strstr(params, p) != NULL;
}

/* The operation's kinds, from its first builder's parameters. */
static const char *first(const struct op *o)
{
	return o->params[0][0];
}

static int remote(const struct op *o) { return has(first(o), "uint64_t raddr"); }
static int atomic(const struct op *o) { return has(first(o), "uint64_t compare") || has(first(o), "uint64_t add"); }
static int bind(const struct op *o) { return has(first(o), "ibv_mw_bind_info"); }
static int is_name(const struct op *o, const char *n) { return strcmp(o->name, n) == 0; }
static int payload(const struct op *o) { return o->nforms == 3 ? 2 : has(first(o), "ibv_sge *sge") ? 1 : 0; }	/* 2 data, 1 SGEs, 0 none */

static int any_dest(const struct op *o, const char *p)
{
	for (int i = 0; i < o->nq; i++)
		if (has(o->params[i][0], p))
			return 1;
	return 0;
}

/* ---- reading ops.h ---- */

static struct op *op_of_front(const char *name, int *form)
{
	static const char *const sfx[] = { "_sgl", "_inline" };

	for (int k = 0; k < 2; k++) {
		size_t n = strlen(name), s = strlen(sfx[k]);

		if (n > s && !strcmp(name + n - s, sfx[k]))
			for (int j = 0; j < nops; j++)
				if (strlen(ops[j].name) == n - s && !strncmp(ops[j].name, name, n - s)) {
					*form = ops[j].nforms;
					ops[j].suffix[ops[j].nforms++] = sfx[k];
					return &ops[j];
				}
	}
	if (nops == MAX_OPS)
		return NULL;
	*form = 0;
	snprintf(ops[nops].name, sizeof(ops[nops].name), "%s", name);
	ops[nops].suffix[ops[nops].nforms++] = "";
	return &ops[nops++];
}

/* The builder fv_<qpt>_<name> of form k of o, found in the lines of ops.h. */
static int read_builder(char **lines, int n, struct op *o, int qi, int k)
{
	char fn[96], comment[112], proto[160];

	snprintf(fn, sizeof(fn), "fv_%.7s_%.31s%s", o->qpt[qi], o->name, o->suffix[k]);
	snprintf(comment, sizeof(comment), "/* %s: ", fn);
	snprintf(proto, sizeof(proto), "static FV__ALWAYS_INLINE int %s(struct fv_%s *h, ", fn, o->qpt[qi]);
	for (int i = 0; i + 1 < n; i++) {
		const char *c = lines[i], *p = lines[i + 1], *on, *end;

		if (strncmp(c, comment, strlen(comment)) || strncmp(p, proto, strlen(proto)) ||
		    !(on = strstr(c, " on a ")) || !(end = strchr(p, ')')))
			continue;
		if (!o->what[0])
			snprintf(o->what, sizeof(o->what), "%.*s", (int)(on - c - strlen(comment)), c + strlen(comment));
		sscanf(on + 6, "%15s", o->ibv[qi]);
		snprintf(o->params[qi][k], sizeof(o->params[qi][k]), "%.*s",
			 (int)(end - p - strlen(proto)), p + strlen(proto));
		return 0;
	}
	fprintf(stderr, "gen-man: no builder %s (comment and prototype) in ops.h\n", fn);
	return -1;
}

static int read_ops_h(const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[1024], **lines = NULL;
	int n = 0;

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		lines = realloc(lines, (size_t)(n + 1) * sizeof(*lines));
		lines[n] = malloc(strlen(buf) + 1);
		strcpy(lines[n++], buf);
	}
	fclose(f);
	for (int i = 0; i < n; i++) {
		char name[32], q[8];
		int form;
		struct op *o;

		if (sscanf(lines[i], "#define fv_%31[a-z0-9_](h, ...) _Generic((h),", name) != 1 ||
		    !(o = op_of_front(name, &form)))
			continue;
		for (int j = i + 1; j < n && sscanf(lines[j], "\tstruct fv_%7[a-z] *:", q) == 1; j++) {
			int qi = 0;

			if (strstr(lines[j], ": fv__no_"))	/* a handle without it: a compile error */
				continue;

			while (qi < o->nq && strcmp(o->qpt[qi], q))
				qi++;
			if (qi == o->nq && o->nq < MAX_QPTS)
				snprintf(o->qpt[o->nq++], sizeof(o->qpt[0]), "%s", q);
			if (qi < MAX_QPTS && read_builder(lines, n, o, qi, form))
				return -1;
		}
	}
	if (!nops)
		fprintf(stderr, "gen-man: no generic front (#define fv_<op>(h, ...) _Generic) in %s\n", path);
	return nops ? 0 : -1;
}

/* ---- writing the page ---- */

/* The QP types of o as a list: "RC, UC, or XRC_SEND" (how 0), "struct fv_rc *, ..." (1),
 * "fv_rc_init, ..." (2). */
static void qpt_list(const struct op *o, int how)
{
	for (int i = 0; i < o->nq; i++) {
		fprintf(out, "%s", i == 0 ? "" : i + 1 == o->nq ? (o->nq > 2 ? ", or " : " or ") : ", ");
		if (how == 1)
			fprintf(out, "struct fv_%s *", o->qpt[i]);
		else if (how == 2)
			fprintf(out, "fv_%s_init", o->qpt[i]);
		else
			fprintf(out, "%s", o->ibv[i]);
	}
}

static void name_section(const struct op *o)
{
	fprintf(out, ".SH NAME\n");
	for (int k = 0; k < o->nforms; k++)
		fprintf(out, "%sfv_%s%s", k ? ", " : "", o->name, o->suffix[k]);
	for (int i = 0; i < o->nq; i++)
		for (int k = 0; k < o->nforms; k++)
			fprintf(out, ", fv_%s_%s%s", o->qpt[i], o->name, o->suffix[k]);
	/* what it does, up to its first clause */
	fprintf(out, " \\- typed builders: %.*s\n", (int)strcspn(o->what, ";(,"), o->what);
}

/* One prototype, wrapped after a comma before column 80, continuation under the '('. */
static void prototype(const char *name, const char *params)
{
	char buf[512];
	int indent = snprintf(buf, sizeof(buf), "int %s(", name), col = indent;
	const char *p = params;

	fputs(buf, out);
	for (int first = 1; *p; first = 0) {
		const char *e = strchr(p + 1, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *arg = p + (first ? 0 : 2);	/* skip ", " */
		size_t alen = len - (size_t)(arg - p);

		if (!first && col + 2 + (int)alen + 2 > 80) {
			fprintf(out, ",\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			fputs(", ", out);
			col += 2;
		}
		fwrite(arg, 1, alen, out);
		col += (int)alen;
		p += len;
	}
	fputs(");\n", out);
}

static void synopsis(const struct op *o)
{
	fprintf(out, ".SH SYNOPSIS\n.nf\n.B #include <fastverbs/fastverbs.h>\n.sp\n/* h: ");
	qpt_list(o, 1);
	fprintf(out, " */\n");
	for (int k = 0; k < o->nforms; k++)
		fprintf(out, "#define fv_%s%s(h, ...)\n", o->name, o->suffix[k]);
	for (int i = 0; i < o->nq; i++) {
		fprintf(out, ".sp\n");
		for (int k = 0; k < o->nforms; k++) {
			char name[96], params[640];

			snprintf(name, sizeof(name), "fv_%.7s_%.31s%s", o->qpt[i], o->name, o->suffix[k]);
			snprintf(params, sizeof(params), "struct fv_%s *h, %s", o->qpt[i], o->params[i][k]);
			prototype(name, params);
		}
	}
	fprintf(out, ".fi\n");
}

static void item(const char *args, const char *text)
{
	fprintf(out, ".TP\n.I %s\n%s\n", args, text);
}

static void arguments(const struct op *o)
{
	int data = payload(o) == 2;

	fprintf(out, ".TP\n.I h\nThe QP's typed handle, set up by ");
	qpt_list(o, 2);
	fprintf(out, "; see\n.BR fv_qp_init (3).\n");
	item("wr_id", "Reported as the wr_id of the WQE's completion.");
	fprintf(out, ".TP\n.I flags\n0, or an OR of\n.B FV_SIGNALED\n"
		     "(ask for a completion; without it, and on a QP created without sq_sig_all, the WQE\n"
		     "completes silently unless it fails),\n.B FV_SOLICITED\n"
		     "(the responder's completion is solicited) and\n.B FV_FENCE\n"
		     "(start only once the RDMA READs and atomics posted before it on this QP completed).\n");
	if (!payload(o))
		return;
	item("sge", data ? "One scatter/gather element: the payload, in registered memory (lkey)."
		    : atomic(o) ? "One scatter/gather element of 8 bytes that receives the remote value as it\n"
				  "was before the operation (the data segment says 8 bytes whatever its length)."
		    : "One scatter/gather element the data read lands in.");
	fprintf(out, ".TP\n.IR sgl \", \" nsge\nThe same as a list of nsge elements, gathered (or scattered) in order;\n"
		     "elements of length 0 are skipped. nsge may be up to the QP's granted max_send_sge.\n");
	if (data)
		fprintf(out, ".TP\n.IR data \", \" len\nThe payload, copied into the WQE during the call (inline): the memory\n"
			     "need not be registered and may be reused as soon as the call returns. len may be up\n"
			     "to the QP's granted max_inline_data; 0 sends no data.\n");
	if (remote(o))
		fprintf(out, ".TP\n.IR raddr \", \" rkey\nThe remote address and the rkey of the remote memory%s.\n",
			atomic(o) ? " (8 bytes, 8-byte aligned)" : "");
	if (has(first(o), "uint64_t compare"))
		fprintf(out, ".TP\n.IR compare \", \" swap\nIf the 8 bytes at raddr equal compare, they become swap.\n");
	if (has(first(o), "uint64_t add"))
		item("add", "Added to the 8 bytes at raddr.");
	if (has(first(o), "__be32 imm"))
		item("imm", "Immediate data, in network byte order, delivered unchanged as the imm_data of the\n"
			    "responder's completion (which consumes a receive WQE there).");
	if (has(first(o), "inv_rkey"))
		item("inv_rkey", "The rkey the responder invalidates when the message arrives.");
	if (any_dest(o, "struct fv_ah *ah"))
		fprintf(out, ".TP\n.IR ah \", \" remote_qpn \", \" qkey\nUD only: the destination's address handle (set up\n"
			     "by fv_ah_init(3)), QP number and Q_Key.\n");
	if (any_dest(o, "remote_srqn"))
		item("remote_srqn", "XRC only: the number of the XRC SRQ at the destination that receives the message.");
}

static void description(const struct op *o)
{
	fprintf(out, ".SH DESCRIPTION\nThese functions build one WQE in the send queue of a QP that fastverbs has\n"
		     "taken over: %s. They keep wr_id for its completion and do not tell the device:\n"
		     ".BR fv_ring (3)\ndoes, once for all the WQEs built since the last ring.\n.PP\n",
		o->what);
	fprintf(out, "The generic names pick the builder of h's QP type with a C11 _Generic selection, so that\n"
		     "the QP type, the operation and the segment layout are constants the compiler folds into\n"
		     "the WQE's stores. The operation exists for ");
	qpt_list(o, 0);
	fprintf(out, " QPs; with a handle of another type the call does not compile.\n");
	if (payload(o))
		fprintf(out, "The forms differ in the payload: one element (no suffix)%s a list (_sgl)%s.\n",
			payload(o) == 2 ? "," : " or", payload(o) == 2 ? " or inline bytes (_inline)" : "");
	fprintf(out, ".SS Arguments\n");
	arguments(o);
}

static void errors(const struct op *o)
{
	fprintf(out, ".SH RETURN VALUE\n0 when the WQE was built; otherwise an error number, and nothing was written\n"
		     "(ring, counters and bookkeeping are as they were). errno is not set.\n"
		     ".SH ERRORS\n.TP\n.B ENOMEM\nThe send queue has no room for the WQE: its blocks are not yet retired by\n"
		     "completions. Poll the CQ, then build again.\n");
	if (payload(o))
		fprintf(out, ".TP\n.B ENOMEM\nnsge is negative or above the QP's max_send_sge%s.\n",
			payload(o) == 2 ? ", or len is above its max_inline_data" : "");
	if (bind(o))
		fprintf(out, ".TP\n.B EOPNOTSUPP\nbind->length is above 2 GiB (2^31 bytes): one UMR translation entry\n"
			     "covers no more (libmlx5 refuses such a bind with the same errno).\n");
	if (bind(o) || is_name(o, "local_inv"))
		fprintf(out, ".PP\nNo other errno: what only the device can check is its completion's status\n"
			     "(signaled, or on error). A %s the device refuses completes with\n"
			     ".B IBV_WC_MW_BIND_ERR\n(CQE syndrome 0x06) and moves the QP to the error state: %s.\n"
			     "Its successful completion's opcode is\n.BR %s .\n",
			bind(o) ? "bind" : "local invalidation",
			bind(o) ? "the window is not of the QP's PD, the MR is not registered with\n"
				  "IBV_ACCESS_MW_BIND or does not cover the range, the rights ask for writes or atomics\n"
				  "the MR lacks local write for, a type 2 window is still bound (invalidate it first),\n"
				  "a type 1 window is bound with a type 2 bind or the other way round" :
				  "the key is not the window's current one, the window is of type 1, or it is\n"
				  "bound to another QP",
			bind(o) ? "IBV_WC_BIND_MW" : "IBV_WC_LOCAL_INV");
}

static void notes(void)
{
	fprintf(out, ".SH NOTES\n"
		     "WQEs reach the device in the order they were built. Every store the program made before\n"
		     ".BR fv_ring (3),\nthe payload included, is visible to the device before the doorbell; but posting is\n"
		     "not a compiler barrier for reads: read memory the device writes (READ and atomic results,\n"
		     "receive buffers) after\n.BR fv_poll (3)\nor\n.BR fv_poll_cq (3)\nreported its completion.\n"
		     "The memory an element names must stay valid until the WQE completes.\n.PP\n"
		     "There are no locks: build and ring on one QP from one thread at a time.\n"
		     "A completion retires its WQE and every unsignaled one before it. When an unsignaled run\n"
		     "would pass half the ring, fastverbs signals a WQE itself and hides that completion from\n"
		     "the poller, so the ring always drains.\n");
}

/* A whole function on the first QP type's handle, compiled by check-man: the builder's call
 * with the one-element form, and the inline form beside it where there is one, then one ring
 * for both. The arguments are the builder's own parameter names. */
static void example(const struct op *o)
{
	const char *q = o->qpt[0];
	char args[512] = "", decl[512] = "";
	const char *p = o->params[0][0];

	/* each parameter after flags: the payload's becomes &sge, the rest are the function's */
	while ((p = strchr(p, ','))) {
		const char *e = strchr(p + 1, ','), *name;
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char one[128];

		snprintf(one, sizeof(one), "%.*s", (int)len - 2, p + 2);
		name = strrchr(one, ' ') + 1;
		name += *name == '*';
		if (!strcmp(name, "sge")) {
			strcat(args, ", &sge");
			strcat(decl, ", void *buf, struct ibv_mr *mr");
		} else if (!strcmp(name, "imm")) {
			strcat(args, ", htobe32(42)");
		} else if (strcmp(name, "wr_id") && strcmp(name, "flags")) {
			strcat(args, ", ");
			strcat(args, name);
			strcat(decl, ", ");
			strcat(decl, one);
		}
		p += len;
	}
	fprintf(out, ".SH EXAMPLES\n.nf\n#include <fastverbs/fastverbs.h>\n.sp\n"
		     "/* qp: taken over once with fv_%s_init(qp, ibqp)%s */\n"
		     "int post_%s(struct fv_%s *qp%s)\n{\n",
		q, payload(o) ? "; buf: registered as mr" : "", o->name, q, decl);
	if (payload(o))
		fprintf(out, "    struct ibv_sge sge = { (uintptr_t)buf, %s, mr\\->lkey };\n.sp\n", atomic(o) ? "8" : "64");
	fprintf(out, "    if (fv_%s(qp, 1, FV_SIGNALED%s))\n        return \\-1;    /* ENOMEM: poll the CQ, then again */\n",
		o->name, args);
	if (payload(o) == 2) {
		char *at = strstr(args, "&sge");	/* arguments before the payload (TSO: the header) stay */

		fprintf(out, "    if (fv_%s_inline(qp, 2, 0%.*s\"ping\", 4%s))\n        return \\-1;\n", o->name,
			(int)(at - args), args, at + 4);
	}
	fprintf(out, "    fv_ring(qp);    /* one doorbell for what was built */\n    return 0;\n}\n.fi\n");
}

static void see_also(const struct op *o)
{
	fprintf(out, ".SH SEE ALSO\n.BR fastverbs (7),\n.BR fv_ring (3),\n.BR fv_poll (3),\n.BR fv_qp_init (3),\n");
	if (any_dest(o, "struct fv_ah *ah"))
		fprintf(out, ".BR fv_ah_init (3),\n");
	fprintf(out, ".BR fv_post_send (3),\n.BR ibv_post_send (3)\n");
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: gen-man OPS_H DIR\n");
		return 2;
	}
	if (read_ops_h(argv[1]))
		return 1;
	for (int j = 0; j < nops; j++) {
		const struct op *o = &ops[j];
		char path[4096], title[64];

		snprintf(path, sizeof(path), "%.4000s/fv_%.31s.3", argv[2], o->name);
		out = fopen(path, "w");
		if (!out) {
			perror(path);
			return 1;
		}
		snprintf(title, sizeof(title), "FV_%.31s", o->name);
		for (char *t = title; *t; t++)
			*t = (char)toupper((unsigned char)*t);
		fprintf(out, ".\\\" Generated by tools/gen-man.c from include/fastverbs/gen/ops.h (make gen). Do not edit.\n"
			     ".TH %s 3 %s fastverbs \"fastverbs manual\"\n", title, MAN_DATE);
		name_section(o);
		synopsis(o);
		description(o);
		errors(o);
		notes();
		example(o);
		see_also(o);
		if (fclose(out)) {
			perror(argv[2]);
			return 1;
		}
	}
	return 0;
}
