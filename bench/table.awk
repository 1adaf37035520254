# Turns the measurements of bench/run.sh into the Markdown report and the plot's data files.
# Input lines: KIND BENCH OP PATH N VALUE, KIND "ir" (instructions per WR/CQE, callgrind) or
# "ns" (nanoseconds per WR/CQE, median of the repetitions), BENCH "post" or "poll" (OP "cqe",
# or "shared" for the CQ that several QPs share).
# Variables: header (Markdown lines before the tables, "\n"-separated), dat (prefix of the
# plot data files: dat.post1, dat.post32, dat.poll).
#
# Adding a row family (e.g. another library's calls): give its lines a PATH of its own, add
# that PATH to `paths` below with its name in pname[]. A path appears in a table only for
# the operations it has measurements of; its ratios to the floor and to libmlx5 come for free.

BEGIN {
	nsame = split("write write_inline16 send_inline16 read fetch_add ud_send", same, " ")
	nadv = split("adv_write adv_write_sge adv_ud_send adv_write_inline16 ring_write ring_ud_send dc_write dc_send", adv, " ")
	nplotadv = 4	# the plot shows (a) to (d)
	label["write"] = "RC RDMA_WRITE, 1 SGE"
	label["write_inline16"] = "RC RDMA_WRITE, inline 16 B"
	label["send_inline16"] = "RC SEND, inline 16 B"
	label["read"] = "RC RDMA_READ, 1 SGE"
	label["fetch_add"] = "RC FETCH_ADD"
	label["ud_send"] = "UD SEND, 1 SGE"
	label["adv_write"] = "(a) RC RDMA_WRITE, 1 SGE, remote address +64 B"
	label["adv_write_sge"] = "(b) as (a), local SGE address +64 B too"
	label["adv_ud_send"] = "(c) UD SEND, 1 SGE, one of 16 destinations"
	label["adv_write_inline16"] = "(d) RC RDMA_WRITE inline 16 B, remote address +64 B"
	label["ring_write"] = "(e) (a)'s WRs, posted and rung in one loop body"
	label["ring_ud_send"] = "(e) (c)'s WRs, posted and rung in one loop body"
	label["dc_write"] = "(f) DCI RDMA_WRITE, 1 SGE, one of 16 DCTs, remote address +64 B"
	label["dc_send"] = "(f) DCI SEND, 1 SGE, one of 16 DCTs"
	short["adv_write"] = "(a) RC WRITE\\nraddr +64"
	short["adv_write_sge"] = "(b) RC WRITE\\nraddr, SGE +64"
	short["adv_ud_send"] = "(c) UD SEND\\n16 peers"
	short["adv_write_inline16"] = "(d) RC WRITE\\ninline 16 B"
	npaths = split("ibv wr fvps typed fvwr fvwrq floor typed_clang floor_clang typed_clangf floor_clangf typed_v3 floor_v3 typed_notune fvps_notune fvwr_notune fvps_locked fvwr_locked fvwrq_locked", paths, " ")
	nplot = 4	# the plot shows the first four paths
	pname["ibv"] = "libmlx5 `ibv_post_send`"
	pname["wr"] = "libmlx5 `ibv_wr_*`"
	pname["fvps"] = "fastverbs `fv_post_send`"
	pname["typed"] = "fastverbs typed (`fv_<op>` + `fv_ring`)"
	pname["fvwr"] = "fastverbs `fv_wr_*` (typed handle)"
	pname["fvwrq"] = "fastverbs `fv_wr_*` (`struct fv_qp *`)"
	pname["floor"] = "floor (minimal builder in bench/post.c)"
	pname["typed_clang"] = "fastverbs typed, built with clang"
	pname["floor_clang"] = "floor, built with clang"
	pname["typed_clangf"] = "fastverbs typed, built with clang, SGE copied field by field"
	pname["floor_clangf"] = "floor, built with clang, SGE copied field by field"
	pname["typed_v3"] = "fastverbs typed, gcc `-march=x86-64-v3`"
	pname["floor_v3"] = "floor, gcc `-march=x86-64-v3`"
	pname["typed_notune"] = "fastverbs typed, gcc `-DFV_NO_TUNE`"
	pname["fvps_notune"] = "`fv_post_send`, gcc `-DFV_NO_TUNE`"
	pname["fvwr_notune"] = "`fv_wr_*` typed handle, gcc `-DFV_NO_TUNE`"
	pname["fvps_locked"] = "fastverbs `fv_post_send`, locked, uncontended"
	pname["fvwr_locked"] = "fastverbs `fv_wr_*` (typed handle), locked, uncontended"
	pname["fvwrq_locked"] = "fastverbs `fv_wr_*` (`struct fv_qp *`), locked, uncontended"
	npolls = split("ibv_poll_cq start_poll fv_poll_cq fv_poll fv_poll_cq_locked", polls, " ")
	qname["ibv_poll_cq"] = "libmlx5 `ibv_poll_cq`"
	qname["start_poll"] = "libmlx5 `ibv_start_poll` / `ibv_next_poll`"
	qname["fv_poll_cq"] = "fastverbs `fv_poll_cq` (`struct ibv_wc`)"
	qname["fv_poll"] = "fastverbs `fv_poll` (`struct fv_wc`)"
	qname["fv_poll_cq_locked"] = "fastverbs `fv_poll_cq`, locked, uncontended"
	nrpaths = split("ibv fvpr typed floor", rpath, " ")
	rname["rq", "ibv"] = "libmlx5 `ibv_post_recv`"
	rname["rq", "fvpr"] = "fastverbs `fv_post_recv`"
	rname["rq", "typed"] = "fastverbs `fv_recv` + `fv_recv_ring`"
	rname["rq", "floor"] = "floor (minimal RQ post in bench/recv.c)"
	rname["rq_poll", "ibv"] = "libmlx5 `ibv_poll_cq`"
	rname["rq_poll", "fvpr"] = "fastverbs `fv_poll_cq` (`struct ibv_wc`)"
	rname["rq_poll", "typed"] = "fastverbs `fv_poll` (`struct fv_wc`)"
	rname["rq_poll", "floor"] = "floor (minimal CQE poller in bench/recv.c)"
	rname["srq", "ibv"] = "libmlx5 `ibv_post_srq_recv`"
	rname["srq", "fvpr"] = "fastverbs `fv_post_srq_recv`"
	rname["srq", "typed"] = "fastverbs `fv_srq_recv` + `fv_srq_ring`"
	rname["srq", "floor"] = "floor (minimal SRQ post in bench/recv.c)"
	rname["srq_poll", "ibv"] = rname["rq_poll", "ibv"]
	rname["srq_poll", "fvpr"] = rname["rq_poll", "fvpr"]
	rname["srq_poll", "typed"] = rname["rq_poll", "typed"]
	rname["srq_poll", "floor"] = "floor (minimal CQE poller of an SRQ in bench/recv.c)"
	nrk = split("rq rq_poll srq srq_poll", rkind, " ")
	rkname["rq"] = "RQ post"
	rkname["rq_poll"] = "CQ of 4 QPs' RQs, receives"
	rkname["srq"] = "SRQ post"
	rkname["srq_poll"] = "CQ of 4 QPs on one SRQ, receives"
	nic_mps = 330	# a ConnectX-7's message rate, M messages a second (its data sheet): the yardstick
	nrate = split("ibv fvps typed floor", rpaths, " ")
}

{ v[$1, $2, $3, $4, $5] = $6; seen[$2, $3, $4] = 1 }

# The clang and x86-64-v3 builds and the locked posting rows are counted, never timed: their ns cells are
# empty by design, not missing.
function get(k, b, o, p, n) {
	if (!((k, b, o, p, n) in v)) { if (!(k == "ns" && p ~ /_(clangf?|locked|v3|notune)$/)) missing++; return "" }
	return v[k, b, o, p, n]
}

function ir(b, o, p, n,   x) { x = get("ir", b, o, p, n); return x == "" ? "–" : sprintf("%.1f", x) }

# x / y to two places, or "–"
function ratio(x, y) { return x == "" || y == "" || y + 0 <= 0 ? "–" : sprintf("%.2f", x / y) }

# ns with its ratio to the reference path of the same case
function ns(b, o, p, n, ref,   x, r) {
	x = get("ns", b, o, p, n)
	r = get("ns", b, o, ref, n)
	if (x == "") return "–"
	return r > 0 ? sprintf("%.1f (%.2f)", x, x / r) : sprintf("%.1f", x)
}

# A target's line: what, its value, the limit; tail (optional) follows the verdict.
function check(what, val, lim, how, tail) {
	if (val == "" || lim == "") { printf "- %s: not measured\n", what; return }
	printf "- %s: %s %s %s → **%s**%s\n", what, sprintf("%.1f", val), how, lim, (val + 0 <= lim + 0) ? "met" : "missed", tail
}

# Each path's row for op in the posting table; with floor, the ratio to the floor's columns.
function post_rows(o, floor,   j, p, first, typed, ln, ref) {
	first = 1
	ref = o ~ /^dc_/ ? "wr" : "ibv"	# (f) has no ibv_post_send row
	for (j = 1; j <= npaths; j++) {
		p = paths[j]
		if (!(("post", o, p) in seen))
			continue
		typed = p == "typed" ? "**" : ""
		ln = sprintf("| %s | %s | %s%s%s | %s%s%s |", first ? label[o] : "", pname[p],
			typed, ir("post", o, p, 1), typed, typed, ir("post", o, p, 32), typed)
		if (floor)
			ln = ln sprintf(" %s | %s |", ratio(get("ir", "post", o, p, 1), get("ir", "post", o, "floor", 1)),
				ratio(get("ir", "post", o, p, 32), get("ir", "post", o, "floor", 32)))
		print ln sprintf(" %s | %s |", ns("post", o, p, 1, ref), ns("post", o, p, 32, ref))
		first = 0
	}
}

# A lock's cost: the locked row against the unlocked one, per call (b WRs or CQEs a call).
function lock_check(what, bench, o, p, b,   x, y) {
	x = get("ir", bench, o, p "_locked", b)
	y = get("ir", bench, o, p, b)
	check(sprintf("%s locked, uncontended, %s, %d per call (≤ unlocked + 8 instructions a call; unlocked %s)",
		      what, o, b, y == "" ? "–" : sprintf("%.1f", y)),
	      x == "" || y == "" ? "" : (x - y) * b, 8, "≤")
}

# A section of the report: its heading, its prose ("\n"-separated lines) and its table's head.
function section(title, prose, head, align) {
	print ""
	print "### " title
	print ""
	print prose
	print ""
	print head
	print align
}

# A row of the message-rate table for ns per message x (none when not measured).
function rate_row(what, who, x) {
	if (x == "" || x + 0 <= 0)
		return 0
	printf "| %s | %s | %.1f | %.0f | %.1f |\n", what, who, x, 1000 / x, nic_mps / (1000 / x)
	return 1
}

# A floor target: path p (typed, typed_clang, ...) within 1.15 x the floor fl built the same way
# (same compiler, same loop, same SGE hand-over), at b per doorbell; what names the build.
function floor_check(what, bench, o, p, fl, b,   x) {
	x = get("ir", bench, o, fl, b)
	check(sprintf("%s, %s, %d per %s (≤ 1.15 × its floor %s)", what, o, b, bench == "post" || o !~ /poll/ ? "doorbell" : "call",
		      x == "" ? "–" : sprintf("%.1f", x)),
	      get("ir", bench, o, p, b), x == "" ? "" : sprintf("%.1f", 1.15 * x), "≤")
}

function half(what, o, p, ref, b,   x) {
	x = get("ir", "post", o, ref, b)
	check(sprintf("%s, %s, %d per doorbell (≤ 0.5 × %.1f)", what, o, b, x), get("ir", "post", o, p, b),
	      x == "" ? "" : sprintf("%.1f", x / 2), "≤")
}

END {
	n = split(header, hl, "\n")
	for (i = 1; i <= n; i++) print hl[i]
	section("Posting, application-shaped loops",
		"Each WR differs from the one before, as in an application: the remote address advances 64 B\n" \
		"per WR, every 64th WR is signaled (decided per WR), UD SENDs go to one of 16 destinations.\n" \
		"(a) to (d) build each batch in a nested loop of constant length and ring after it; (e) posts\n" \
		"in one loop whose body rings at a batch's last WR (`if ((i & 31) == 31) fv_ring(...)`).\n" \
		"(f) posts (a)'s and (c)'s WRs on a DCI, each to one of 16 DCTs (address handle, DCT number\n" \
		"and access key picked per WR); no list rows: `ibv_post_send` cannot name a DCT (its ns\n" \
		"ratios are to libmlx5's `ibv_wr_*`).\n" \
		"Instructions per WR (callgrind), their ratio to the floor (a minimal builder written in the\n" \
		"bench: the units, the 16-bit WQE index, the doorbell record, one BlueFlame copy or 8-byte\n" \
		"doorbell, nothing else), and ns per WR (in brackets: ratio to `ibv_post_send`), at 1 and 32\n" \
		"WRs per doorbell.",
		"| loop | path | instr/WR ×1 | instr/WR ×32 | ÷ floor ×1 | ÷ floor ×32 | ns/WR ×1 | ns/WR ×32 |",
		"|---|---|--:|--:|--:|--:|--:|--:|")
	for (i = 1; i <= nadv; i++)
		post_rows(adv[i], 1)
	section("Posting, the same WR again and again",
		"Every WR alike (constant addresses, unsignaled): what does not change is computed once,\n" \
		"before the loop. Instructions and ns per WR (in brackets: ratio to `ibv_post_send`). The\n" \
		"WR lists and `ibv_wr_*` calls are filled inside the measured function.",
		"| operation | path | instr/WR ×1 | instr/WR ×32 | ns/WR ×1 | ns/WR ×32 |",
		"|---|---|--:|--:|--:|--:|")
	for (i = 1; i <= nsame; i++)
		post_rows(same[i], 0)
	section("Polling",
		"Instructions and ns per completion (in brackets: ratio to `ibv_poll_cq`), RC RDMA_WRITE\n" \
		"completions already on the CQ, 1 and 16 asked for per call: of one QP, and of four QPs\n" \
		"whose completions interleave on one shared CQ.",
		"| CQ | path | instr/CQE ×1 | instr/CQE ×16 | ns/CQE ×1 | ns/CQE ×16 |",
		"|---|---|--:|--:|--:|--:|")
	for (k = 1; k <= 2; k++) {
		o = k == 1 ? "cqe" : "shared"
		for (j = 1; j <= npolls; j++) {
			p = polls[j]
			if (!(("poll", o, p) in seen))
				continue
			printf "| %s | %s | %s | %s | %s | %s |\n", j == 1 ? (k == 1 ? "one QP" : "shared by 4 QPs") : "",
				qname[p], ir("poll", o, p, 1), ir("poll", o, p, 16),
				ns("poll", o, p, 1, "ibv_poll_cq"), ns("poll", o, p, 16, "ibv_poll_cq")
		}
	}
	section("Receiving",
		"Receive WQEs posted to an RQ or an SRQ, their buffer address advancing 64 B per WR, 1 and\n" \
		"32 per doorbell record; and their completions polled, 1 and 16 asked for per call, from a\n" \
		"CQ that four QPs share (on their own RQs, or on one SRQ), their completions interleaved\n" \
		"(64-byte SENDs). The floors are written in bench/recv.c: a WQE's data segment (on an SRQ\n" \
		"at its free list's head, which moves to the next) and the doorbell record; a CQE's owner\n" \
		"bit and opcode, the wr_id (RQ: of the QP found from the QPN's low bits, at its consumer\n" \
		"index; SRQ: at the CQE's WQE index, the WQE linked after the free list's tail), the CQ's\n" \
		"consumer index once a call. Instructions per WR or CQE, their ratio to the floor, ns (in\n" \
		"brackets: ratio to libmlx5).",
		"| operation | path | instr ×1 | instr ×32 (×16 polled) | ÷ floor ×1 | ÷ floor ×32 (×16) | ns ×1 | ns ×32 (×16) |",
		"|---|---|--:|--:|--:|--:|--:|--:|")
	for (k = 1; k <= nrk; k++) {
		o = rkind[k]
		nb = o ~ /poll/ ? 16 : 32
		for (j = 1; j <= nrpaths; j++) {
			p = rpath[j]
			if (!(("recv", o, p) in seen))
				continue
			printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
				j == 1 ? rkname[o] : "", rname[o, p],
				ir("recv", o, p, 1), ir("recv", o, p, nb),
				ratio(get("ir", "recv", o, p, 1), get("ir", "recv", o, "floor", 1)),
				ratio(get("ir", "recv", o, p, nb), get("ir", "recv", o, "floor", nb)),
				ns("recv", o, p, 1, "ibv"), ns("recv", o, p, nb, "ibv")
		}
	}
	section("Message rate one core could feed",
		"ns per WR batched (32 per doorbell; completions: 16 per call) in this run, the messages a\n" \
		"second one core could post (or poll) at that pace, and how many such cores a ConnectX-7\n" \
		sprintf("(~%d M messages a second) would take to keep busy.", nic_mps),
		"| loop | path | ns/message | M messages/s a core | cores for ~" nic_mps " M/s |",
		"|---|---|--:|--:|--:|")
	for (i = 1; i <= nadv; i++) {
		first = 1
		for (j = 1; j <= nrate; j++)
			if ((("post", adv[i], rpaths[j]) in seen) &&
			    rate_row(first ? label[adv[i]] : "", pname[rpaths[j]], get("ns", "post", adv[i], rpaths[j], 32)))
				first = 0
	}
	first = 1
	for (j = 1; j <= npolls; j++)
		if (polls[j] != "start_poll" &&
		    rate_row(first ? "completions, CQ shared by 4 QPs" : "", qname[polls[j]], get("ns", "poll", "shared", polls[j], 16)))
			first = 0
	print ""
	print "### Targets (instructions per WR / CQE)"
	print ""
	check("typed RC RDMA_WRITE, same WR, 1 per doorbell (docs/design.md §8)", get("ir", "post", "write", "typed", 1), 45, "≤")
	check("typed RC RDMA_WRITE, same WR, 32 per doorbell (docs/design.md §8)", get("ir", "post", "write", "typed", 32), 25, "≤")
	for (i = 1; i <= nsame; i++)	# the same-WR loops against the floor in the same loop
		for (b = 1; b <= 32; b += 31)
			floor_check("typed, the same WR", "post", same[i], "typed", "floor", b)
	for (i = 1; i <= nadv; i++)
		for (b = 1; b <= 32; b += 31)
			floor_check("typed", "post", adv[i], "typed", "floor", b)
	for (i = 1; i <= nadv; i++)
		for (b = 1; b <= 32; b += 31) {
			if (adv[i] !~ /^dc_/)	# no list paths on a DCI
				half("`fv_post_send`", adv[i], "fvps", "ibv", b)
			half("`fv_wr_*` (typed handle)", adv[i], "fvwr", "wr", b)
			half("`fv_wr_*` (`struct fv_qp *`)", adv[i], "fvwrq", "wr", b)
		}
	for (i = 1; i <= nadv; i++)
		for (b = 1; b <= 32; b += 31) {
			if (adv[i] !~ /^dc_/)
				lock_check("`fv_post_send`", "post", adv[i], "fvps", b)
			lock_check("`fv_wr_*` (typed handle)", "post", adv[i], "fvwr", b)
			lock_check("`fv_wr_*` (`struct fv_qp *`)", "post", adv[i], "fvwrq", b)
		}
	for (k = 1; k <= 2; k++)
		for (b = 1; b <= 16; b += 15)
			lock_check("`fv_poll_cq`", "poll", k == 1 ? "cqe" : "shared", "fv_poll_cq", b)
	# clang: against clang's own floor in the same loop, with the SGE handed over the same way
	# (a whole-struct copy; field by field in the second build, which has no inline loops)
	for (i = 1; i <= nadv + 1; i++)
		for (b = 1; b <= 32 && (i > nadv || adv[i] !~ /^dc_/); b += 31) {	# (f): gcc only
			o = i <= nadv ? adv[i] : "write"	# and the same-WR RDMA_WRITE
			floor_check("typed built for x86-64-v3", "post", o, "typed_v3", "floor_v3", b)
			floor_check("typed built with clang", "post", o, "typed_clang", "floor_clang", b)
			if (o !~ /inline/)
				floor_check("typed built with clang, SGE copied field by field", "post", o,
					    "typed_clangf", "floor_clangf", b)
		}
	rtyped["rq"] = "`fv_recv` + `fv_recv_ring`"; rcompat["rq"] = "`fv_post_recv`"
	rtyped["srq"] = "`fv_srq_recv` + `fv_srq_ring`"; rcompat["srq"] = "`fv_post_srq_recv`"
	rtyped["rq_poll"] = rtyped["srq_poll"] = "`fv_poll`"; rcompat["rq_poll"] = rcompat["srq_poll"] = "`fv_poll_cq`"
	for (k = 1; k <= nrk; k++)	# the receive side: posting 1 and 32 a doorbell, polling 1 and 16 a call
		for (b = 1; b <= 32; b = b == 1 ? (rkind[k] ~ /poll/ ? 16 : 32) : 99) {
			o = rkind[k]
			floor_check(rtyped[o], "recv", o, "typed", "floor", b)
			x = get("ir", "recv", o, "ibv", b)
			check(sprintf("%s, %s, %d per %s (≤ 0.5 × libmlx5's %s)", rcompat[o], o, b,
				      o ~ /poll/ ? "call" : "doorbell", x == "" ? "–" : sprintf("%.1f", x)),
			      get("ir", "recv", o, "fvpr", b), x == "" ? "" : sprintf("%.1f", x / 2), "≤")
		}
	for (k = 1; k <= 2; k++)
		for (b = 1; b <= 16; b += 15) {
			o = k == 1 ? "cqe" : "shared"
			x = get("ir", "poll", o, "ibv_poll_cq", b)
			for (j = 4; j >= 3; j--)	# fv_poll, then fv_poll_cq
				check(sprintf("`%s`, %s CQ, %d per call (≤ ⅓ × `ibv_poll_cq` %.1f)", polls[j],
					      k == 1 ? "one QP's" : "shared", b, x),
				      get("ir", "poll", o, polls[j], b), x == "" ? "" : sprintf("%.1f", x / 3), "≤")
		}

	# plot data: one row per application-shaped loop, one column per path (instructions)
	for (b = 1; b <= 32; b += 31) {
		f = dat ".post" b
		print "case \"libmlx5 ibv_post_send\" \"libmlx5 ibv_wr_*\" \"fastverbs fv_post_send\" \"fastverbs typed\" \"floor\"" > f
		for (i = 1; i <= nplotadv; i++) {
			o = adv[i]
			printf "\"%s\"", short[o] > f
			for (j = 1; j <= nplot; j++) {
				x = get("ir", "post", o, paths[j], b)
				printf " %s", x == "" ? "NaN" : x > f
			}
			x = get("ir", "post", o, "floor", b)
			printf " %s\n", x == "" ? "NaN" : x > f
		}
		close(f)
	}
	f = dat ".poll"
	print "case \"libmlx5 ibv_poll_cq\" \"libmlx5 ibv_start_poll/next_poll\" \"fastverbs fv_poll_cq\" \"fastverbs fv_poll\"" > f
	for (k = 1; k <= 2; k++)
		for (b = 1; b <= 16; b += 15) {
			o = k == 1 ? "cqe" : "shared"
			printf "\"%s%d per call\"", k == 1 ? "" : "shared CQ\\n", b > f
			for (j = 1; j <= 4; j++) {	# the plot's four columns, the locked row aside
				x = get("ir", "poll", o, polls[j], b)
				printf " %s", x == "" ? "NaN" : x > f
			}
			printf "\n" > f
		}
	close(f)
	if (missing)
		print "bench: " missing " measurements missing" > "/dev/stderr"
}
