# Turns the measurements of bench/run.sh into the Markdown report and the plot's data files.
# Input lines: KIND BENCH OP PATH N VALUE, KIND "ir" (instructions per WR/CQE, callgrind) or
# "ns" (nanoseconds per WR/CQE, median of the repetitions), BENCH "post" or "poll" (OP "cqe").
# Variables: header (Markdown lines before the tables, "\n"-separated), dat (prefix of the
# plot data files: dat.post1, dat.post32, dat.poll).

BEGIN {
	nops = split("write write_inline16 send_inline16 read fetch_add ud_send", ops, " ")
	label["write"] = "RC RDMA_WRITE, 1 SGE"
	label["write_inline16"] = "RC RDMA_WRITE, inline 16 B"
	label["send_inline16"] = "RC SEND, inline 16 B"
	label["read"] = "RC RDMA_READ, 1 SGE"
	label["fetch_add"] = "RC FETCH_ADD"
	label["ud_send"] = "UD SEND, 1 SGE"
	short["write"] = "RC WRITE\\n1 SGE"
	short["write_inline16"] = "RC WRITE\\ninline 16 B"
	short["send_inline16"] = "RC SEND\\ninline 16 B"
	short["read"] = "RC READ\\n1 SGE"
	short["fetch_add"] = "RC\\nFETCH_ADD"
	short["ud_send"] = "UD SEND\\n1 SGE"
	npaths = split("ibv wr fvps typed fvwr fvwrq", paths, " ")
	nplot = 4	# the plot shows the first four paths
	pname["ibv"] = "libmlx5 `ibv_post_send`"
	pname["wr"] = "libmlx5 `ibv_wr_*`"
	pname["fvps"] = "fastverbs `fv_post_send`"
	pname["typed"] = "fastverbs typed (`fv_<op>` + `fv_ring`)"
	pname["fvwr"] = "fastverbs `fv_wr_*` (typed handle)"
	pname["fvwrq"] = "fastverbs `fv_wr_*` (`struct fv_qp *`)"
	npolls = split("ibv_poll_cq start_poll fv_poll_cq fv_poll", polls, " ")
	qname["ibv_poll_cq"] = "libmlx5 `ibv_poll_cq`"
	qname["start_poll"] = "libmlx5 `ibv_start_poll` / `ibv_next_poll`"
	qname["fv_poll_cq"] = "fastverbs `fv_poll_cq` (`struct ibv_wc`)"
	qname["fv_poll"] = "fastverbs `fv_poll` (`struct fv_wc`)"
}

{ v[$1, $2, $3, $4, $5] = $6 }

function get(k, b, o, p, n) {
	if (!((k, b, o, p, n) in v)) { missing++; return "" }
	return v[k, b, o, p, n]
}

function ir(b, o, p, n,   x) { x = get("ir", b, o, p, n); return x == "" ? "–" : sprintf("%.1f", x) }

# ns with its ratio to the libmlx5 reference of the same case
function ns(b, o, p, n, ref,   x, r) {
	x = get("ns", b, o, p, n)
	r = get("ns", b, o, ref, n)
	if (x == "") return "–"
	return r > 0 ? sprintf("%.1f (%.2f)", x, x / r) : sprintf("%.1f", x)
}

function check(what, val, lim, how) {
	if (val == "" || lim == "") { printf "- %s: not measured\n", what; return }
	printf "- %s: %s %s %s → **%s**\n", what, sprintf("%.1f", val), how, lim, (val + 0 <= lim + 0) ? "met" : "missed"
}

END {
	n = split(header, hl, "\n")
	for (i = 1; i <= n; i++) print hl[i]
	print ""
	print "Posting: instructions per WR (callgrind) and ns per WR (in brackets: ratio to `ibv_post_send`"
	print "of the same case in the same run), at 1 and 32 WRs per doorbell. The WR lists and"
	print "`ibv_wr_*` calls are filled inside the measured function, as an application would."
	print ""
	print "| operation | path | instr/WR ×1 | instr/WR ×32 | ns/WR ×1 | ns/WR ×32 |"
	print "|---|---|--:|--:|--:|--:|"
	for (i = 1; i <= nops; i++) {
		o = ops[i]
		for (j = 1; j <= npaths; j++) {
			p = paths[j]
			typed = p == "typed" ? "**" : ""
			printf "| %s | %s | %s%s%s | %s%s%s | %s | %s |\n", j == 1 ? label[o] : "", pname[p],
				typed, ir("post", o, p, 1), typed, typed, ir("post", o, p, 32), typed,
				ns("post", o, p, 1, "ibv"), ns("post", o, p, 32, "ibv")
		}
	}
	print ""
	print "Polling: instructions and ns per completion (in brackets: ratio to `ibv_poll_cq`),"
	print "RC RDMA_WRITE completions already on the CQ, 1 and 16 asked for per call."
	print ""
	print "| path | instr/CQE ×1 | instr/CQE ×16 | ns/CQE ×1 | ns/CQE ×16 |"
	print "|---|--:|--:|--:|--:|"
	for (j = 1; j <= npolls; j++) {
		p = polls[j]
		printf "| %s | %s | %s | %s | %s |\n", qname[p], ir("poll", "cqe", p, 1), ir("poll", "cqe", p, 16),
			ns("poll", "cqe", p, 1, "ibv_poll_cq"), ns("poll", "cqe", p, 16, "ibv_poll_cq")
	}
	print ""
	print "Targets (docs/design.md §8, instructions):"
	print ""
	check("typed RC RDMA_WRITE, 1 WR per doorbell (BlueFlame copy included)", get("ir", "post", "write", "typed", 1), 45, "≤")
	check("typed RC RDMA_WRITE, 32 WRs per doorbell", get("ir", "post", "write", "typed", 32), 25, "≤")
	for (b = 1; b <= 32; b += 31) {
		x = get("ir", "post", "write", "ibv", b)
		check(sprintf("`fv_post_send` RC RDMA_WRITE, %d per doorbell (≤ half of `ibv_post_send`'s %.1f)", b, x),
		      get("ir", "post", "write", "fvps", b), x == "" ? "" : sprintf("%.1f", x / 2), "≤")
	}
	for (k = 0; k < 2; k++)
		for (b = 1; b <= 32; b += 31) {
			x = get("ir", "post", "write", "wr", b)
			check(sprintf("`fv_wr_*` (%s) RC RDMA_WRITE, %d per batch (≤ half of `ibv_wr_*`'s %.1f)",
				      k ? "`struct fv_qp *`" : "typed handle", b, x),
			      get("ir", "post", "write", k ? "fvwrq" : "fvwr", b), x == "" ? "" : sprintf("%.1f", x / 2), "≤")
		}
	for (b = 1; b <= 16; b += 15) {
		x = get("ir", "poll", "cqe", "ibv_poll_cq", b)
		check(sprintf("`fv_poll`, %d per call (≤ a third of `ibv_poll_cq`'s %.1f)", b, x),
		      get("ir", "poll", "cqe", "fv_poll", b), x == "" ? "" : sprintf("%.1f", x / 3), "≤")
	}

	# plot data: one row per case, one column per path (instructions)
	for (b = 1; b <= 32; b += 31) {
		f = dat ".post" b
		print "case \"libmlx5 ibv_post_send\" \"libmlx5 ibv_wr_*\" \"fastverbs fv_post_send\" \"fastverbs typed\"" > f
		for (i = 1; i <= nops; i++) {
			o = ops[i]
			printf "\"%s\"", short[o] > f
			for (j = 1; j <= nplot; j++) {
				x = get("ir", "post", o, paths[j], b)
				printf " %s", x == "" ? "NaN" : x > f
			}
			printf "\n" > f
		}
		close(f)
	}
	f = dat ".poll"
	print "case \"libmlx5 ibv_poll_cq\" \"libmlx5 ibv_start_poll/next_poll\" \"fastverbs fv_poll_cq\" \"fastverbs fv_poll\"" > f
	for (b = 1; b <= 16; b += 15) {
		printf "\"%d per call\"", b > f
		for (j = 1; j <= npolls; j++) {
			x = get("ir", "poll", "cqe", polls[j], b)
			printf " %s", x == "" ? "NaN" : x > f
		}
		printf "\n" > f
	}
	close(f)
	if (missing)
		print "bench: " missing " measurements missing" > "/dev/stderr"
}
