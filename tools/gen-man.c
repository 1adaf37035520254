/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gen-man DIR: writes DIR/fv_<op>.3, the manual page of each operation of ops.def: its
 * generic names (fv_write, _sgl, _inline) and the per-type builders behind them (fv_rc_write,
 * ...), with exact prototypes, arguments, errors and an example. The prototypes come from
 * the same parameter lists as the builders themselves (ops-table.h). Output is deterministic.
 */
#include <stdio.h>
#include <string.h>

#include "ops-table.h"

#define MAN_DATE "2026-11-23"	/* when the pages' text last changed */

static FILE *out;

/* The allowed QP types of o as a list: "RC, UC, or XRC_SEND" (how 0), "struct fv_rc *, ..." (1),
 * "fv_rc_init, ..." (2). */
static void qpt_list(const struct op *o, int how)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < COUNT(qpts); i++)
		n += allowed(qpts[i].name, o->name);
	for (size_t i = 0; i < COUNT(qpts); i++) {
		if (!allowed(qpts[i].name, o->name))
			continue;
		fprintf(out, "%s", k == 0 ? "" : k + 1 == n ? (n > 2 ? ", or " : " or ") : ", ");
		if (how == 1)
			fprintf(out, "struct fv_%s *", qpts[i].name);
		else if (how == 2)
			fprintf(out, "fv_%s_init", qpts[i].name);
		else
			fprintf(out, "%s", qpts[i].ibv + 8);
		k++;
	}
}

static void name_section(const struct op *o)
{
	const struct form *f[3];
	int n = forms_of(o, f);
	const char *sep = "";

	fprintf(out, ".SH NAME\n");
	for (int k = 0; k < n; k++, sep = ", ")
		fprintf(out, "%sfv_%s%s", sep, o->name, f[k]->suffix);
	for (size_t i = 0; i < COUNT(qpts); i++)
		for (int k = 0; allowed(qpts[i].name, o->name) && k < n; k++)
			fprintf(out, ", fv_%s_%s%s", qpts[i].name, o->name, f[k]->suffix);
	/* the description up to its first clause */
	fprintf(out, " \\- typed builders: %.*s\n", (int)strcspn(o->desc, ";(,"), o->desc);
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
	const struct form *f[3];
	int n = forms_of(o, f);

	fprintf(out, ".SH SYNOPSIS\n.nf\n.B #include <fastverbs/fastverbs.h>\n.sp\n/* h: ");
	qpt_list(o, 1);
	fprintf(out, " */\n");
	for (int k = 0; k < n; k++)
		fprintf(out, "#define fv_%s%s(h, ...)\n", o->name, f[k]->suffix);
	for (size_t i = 0; i < COUNT(qpts); i++) {
		const struct qpt *q = &qpts[i];

		if (!allowed(q->name, o->name))
			continue;
		fprintf(out, ".sp\n");
		for (int k = 0; k < n; k++) {
			char name[64], params[512];

			snprintf(name, sizeof(name), "fv_%s_%s%s", q->name, o->name, f[k]->suffix);
			snprintf(params, sizeof(params), "struct fv_%s *h, uint64_t wr_id, unsigned flags%s%s%s%s",
				 q->name, f[k]->params, remote_params(o), imm_params(o), dest_params(q, o));
			prototype(name, params);
		}
	}
	fprintf(out, ".fi\n");
}

static void item(const char *args, const char *text)
{
	fprintf(out, ".TP\n.I %s\n%s\n", args, text);
}

/* Whether some allowed QP type of o takes destination kind dest. */
static int has_dest(const struct op *o, const char *dest)
{
	for (size_t i = 0; i < COUNT(qpts); i++)
		if (allowed(qpts[i].name, o->name) && is(qpts[i].dest, dest) && !is(o->payload, "NONE"))
			return 1;
	return 0;
}

static void arguments(const struct op *o)
{
	int data = is(o->payload, "DATA"), atomic = !is(o->remote, "NONE") && !is(o->remote, "RADDR");

	fprintf(out, ".TP\n.I h\nThe QP's typed handle, set up by ");
	qpt_list(o, 2);
	fprintf(out, "; see\n.BR fv_qp_init (3).\n");
	item("wr_id", "Reported as the wr_id of the WQE's completion.");
	fprintf(out, ".TP\n.I flags\n0, or an OR of\n.B FV_SIGNALED\n"
		     "(ask for a completion; without it, and on a QP created without sq_sig_all, the WQE\n"
		     "completes silently unless it fails),\n.B FV_SOLICITED\n"
		     "(the responder's completion is solicited) and\n.B FV_FENCE\n"
		     "(start only once the RDMA READs and atomics posted before it on this QP completed).\n");
	if (is(o->payload, "NONE"))
		return;
	item("sge", data ? "One scatter/gather element: the payload, in registered memory (lkey)."
		    : atomic ? "One scatter/gather element of 8 bytes that receives the remote value as it\n"
			       "was before the operation (the data segment says 8 bytes whatever its length)."
		    : "One scatter/gather element the data read lands in.");
	fprintf(out, ".TP\n.IR sgl \", \" nsge\nThe same as a list of nsge elements, gathered (or scattered) in order;\n"
		     "elements of length 0 are skipped. nsge may be up to the QP's granted max_send_sge.\n");
	if (data)
		fprintf(out, ".TP\n.IR data \", \" len\nThe payload, copied into the WQE during the call (inline): the memory\n"
			     "need not be registered and may be reused as soon as the call returns. len may be up\n"
			     "to the QP's granted max_inline_data; 0 sends no data.\n");
	if (!is(o->remote, "NONE"))
		fprintf(out, ".TP\n.IR raddr \", \" rkey\nThe remote address and the rkey of the remote memory%s.\n",
			atomic ? " (8 bytes, 8-byte aligned)" : "");
	if (is(o->remote, "CAS"))
		fprintf(out, ".TP\n.IR compare \", \" swap\nIf the 8 bytes at raddr equal compare, they become swap.\n");
	if (is(o->remote, "FADD"))
		item("add", "Added to the 8 bytes at raddr.");
	if (is(o->imm, "IMM"))
		item("imm", "Immediate data, in network byte order, delivered unchanged as the imm_data of the\n"
			    "responder's completion (which consumes a receive WQE there).");
	if (is(o->imm, "INV"))
		item("inv_rkey", "The rkey the responder invalidates when the message arrives.");
	if (has_dest(o, "AV"))
		fprintf(out, ".TP\n.IR ah \", \" remote_qpn \", \" qkey\nUD only: the destination's address handle (set up\n"
			     "by fv_ah_init(3)), QP number and Q_Key.\n");
	if (has_dest(o, "SRQN"))
		item("remote_srqn", "XRC only: the number of the XRC SRQ at the destination that receives the message.");
}

static void description(const struct op *o)
{
	fprintf(out, ".SH DESCRIPTION\nThese functions build one WQE in the send queue of a QP that fastverbs has\n"
		     "taken over: %s. They keep wr_id for its completion and do not tell the device:\n"
		     ".BR fv_ring (3)\ndoes, once for all the WQEs built since the last ring.\n.PP\n",
		o->desc);
	fprintf(out, "The generic names pick the builder of h's QP type with a C11 _Generic selection, so that\n"
		     "the QP type, the operation and the segment layout are constants the compiler folds into\n"
		     "the WQE's stores. The operation exists for ");
	qpt_list(o, 0);
	fprintf(out, " QPs; with a handle of another type the call does not compile.\n");
	if (!is(o->payload, "NONE"))
		fprintf(out, "The forms differ in the payload: one element (no suffix)%s a list (_sgl)%s.\n",
			is(o->payload, "DATA") ? "," : " or", is(o->payload, "DATA") ? " or inline bytes (_inline)" : "");
	fprintf(out, ".SS Arguments\n");
	arguments(o);
}

static void errors(const struct op *o)
{
	fprintf(out, ".SH RETURN VALUE\n0 when the WQE was built; otherwise an error number, and nothing was written\n"
		     "(ring, counters and bookkeeping are as they were). errno is not set.\n"
		     ".SH ERRORS\n.TP\n.B ENOMEM\nThe send queue has no room for the WQE: its blocks are not yet retired by\n"
		     "completions. Poll the CQ, then build again.\n");
	if (!is(o->payload, "NONE"))
		fprintf(out, ".TP\n.B ENOMEM\nnsge is negative or above the QP's max_send_sge%s.\n",
			is(o->payload, "DATA") ? ", or len is above its max_inline_data" : "");
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

/* A whole function, compiled by check-man: the builder's call with the one-element form, and
 * the inline form beside it where there is one, then one ring for both. */
static void example(const struct op *o)
{
	const char *remote = is(o->remote, "RADDR") ? ", raddr, rkey" : is(o->remote, "CAS") ? ", raddr, rkey, 0, 1"
			   : is(o->remote, "FADD") ? ", raddr, rkey, 1" : "";
	const char *imm = is(o->imm, "IMM") ? ", htobe32(42)" : is(o->imm, "INV") ? ", peer_rkey" : "";
	int atomic = !is(o->remote, "NONE") && !is(o->remote, "RADDR"), none = is(o->payload, "NONE");

	fprintf(out, ".SH EXAMPLES\n.nf\n#include <fastverbs/fastverbs.h>\n.sp\n"
		     "/* qp: an RC QP taken over once with fv_rc_init(qp, ibqp)%s */\n"
		     "int post_%s(struct fv_rc *qp%s%s%s)\n{\n",
		     none ? "" : "; buf: registered as mr", o->name, none ? "" : ", void *buf, struct ibv_mr *mr",
		     is(o->remote, "NONE") ? "" : ", uint64_t raddr, uint32_t rkey",
		     is(o->imm, "INV") ? ", uint32_t peer_rkey" : "");
	if (!none)
		fprintf(out, "    struct ibv_sge sge = { (uintptr_t)buf, %s, mr\\->lkey };\n.sp\n", atomic ? "8" : "64");
	fprintf(out, "    if (fv_%s(qp, 1, FV_SIGNALED%s%s%s))\n        return \\-1;    /* ENOMEM: poll the CQ, then again */\n",
		o->name, none ? "" : ", &sge", remote, imm);
	if (is(o->payload, "DATA"))
		fprintf(out, "    if (fv_%s_inline(qp, 2, 0, \"ping\", 4%s%s))\n        return \\-1;\n", o->name, remote, imm);
	fprintf(out, "    fv_ring(qp);    /* one doorbell for what was built */\n    return 0;\n}\n.fi\n");
}

static void see_also(const struct op *o)
{
	fprintf(out, ".SH SEE ALSO\n.BR fastverbs (7),\n.BR fv_ring (3),\n.BR fv_poll (3),\n.BR fv_qp_init (3),\n");
	if (has_dest(o, "AV"))
		fprintf(out, ".BR fv_ah_init (3),\n");
	fprintf(out, ".BR fv_post_send (3),\n.BR ibv_post_send (3)\n");
}

static void upper(char *dst, const char *src)
{
	for (; *src; src++)
		*dst++ = (char)(*src >= 'a' && *src <= 'z' ? *src - 32 : *src);
	*dst = 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen-man DIR\n");
		return 2;
	}
	for (size_t j = 0; j < COUNT(ops); j++) {
		const struct op *o = &ops[j];
		char path[4096], title[64];

		snprintf(path, sizeof(path), "%s/fv_%s.3", argv[1], o->name);
		out = fopen(path, "w");
		if (!out) {
			perror(path);
			return 1;
		}
		snprintf(path, sizeof(path), "fv_%s", o->name);
		upper(title, path);
		fprintf(out, ".\\\" Generated by tools/gen-man.c from include/fastverbs/ops.def (make gen). Do not edit.\n"
			     ".TH %s 3 %s fastverbs \"fastverbs manual\"\n", title, MAN_DATE);
		name_section(o);
		synopsis(o);
		description(o);
		errors(o);
		notes();
		example(o);
		see_also(o);
		if (fclose(out)) {
			perror(argv[1]);
			return 1;
		}
	}
	return 0;
}
