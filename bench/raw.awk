# The raw Ethernet section of the bench report, from bench/run.sh's data lines
# (KIND BENCH OP PATH N VALUE) of bench/raw.c (BENCH "raw"; OP "send" or "tso"; PATH "lib",
# "ps" or "typed"). Variables: skipped (why the raw rows were not measured; empty if they
# were), cc (the compiler and flags).

BEGIN {
	nops = split("send tso", ops, " ")
	npaths = split("lib ps typed", paths, " ")
	label["send"] = "RAW SEND 64 B, `IP_CSUM`"
	label["tso"] = "RAW TSO, 54 B header + 1400 B"
	pname["lib"] = "libmlx5 `ibv_post_send`"
	pname["ps"] = "fastverbs `fv_post_send`"
	tname["send"] = "fastverbs typed (`fv_send` + `fv_ring`)"
	tname["tso"] = "fastverbs typed (`fv_send_tso` + `fv_ring`)"
}

$1 == "ir" && $2 == "raw" { v[$3, $4, $5] = $6 }

function fmt(o, p, n) { return ((o, p, n) in v) ? sprintf("%.1f", v[o, p, n]) : "–" }
function ratio(o, p, n) {
	if (!((o, p, n) in v) || !((o, "lib", n) in v) || v[o, "lib", n] <= 0)
		return "–"
	return sprintf("%.2f", v[o, p, n] / v[o, "lib", n])
}

END {
	print ""
	print "### Raw Ethernet"
	print ""
	if (skipped != "") {
		printf "Raw Ethernet rows skipped: %s.\n", skipped
		exit
	}
	print "RAW_PACKET QPs on the software device's Ethernet port (`bench/raw.c`, FVSIM_LINK=eth):"
	print "instructions per WR (callgrind), WR lists filled inside the measured call, 1 and 32 WRs"
	printf "per doorbell; in brackets the ratio to libmlx5. Built with %s.\n", cc
	print ""
	print "| operation | path | instr/WR ×1 | instr/WR ×32 |"
	print "|---|---|--:|--:|"
	for (i = 1; i <= nops; i++) {
		o = ops[i]
		for (j = 1; j <= npaths; j++) {
			p = paths[j]
			name = p == "typed" ? tname[o] : pname[p]
			b = p == "typed" ? "**" : ""
			printf "| %s | %s | %s%s%s (%s) | %s%s%s (%s) |\n", j == 1 ? label[o] : "", name,
			       b, fmt(o, p, 1), b, ratio(o, p, 1), b, fmt(o, p, 32), b, ratio(o, p, 32)
		}
	}
}
