# The "UCX as the peer" section of the bench report, from bench/run.sh's data lines
# (KIND BENCH OP PATH N VALUE) of bench/ucx.c (BENCH "ucx"; PATH "uct" or "typed").
# Variables: ucxver (the UCX package version).

BEGIN {
	nops = split("write_a inline16_d atomic_add", ops, " ")
	label["write_a"] = "(a) RC RDMA_WRITE 64 B, remote +64 B per WR, every 64th signaled"
	label["inline16_d"] = "(d) RDMA_WRITE inline 16 B, addressed as (a)"
	label["atomic_add"] = "64-bit atomic add, remote +64 B per WR, every 64th signaled"
	uct["write_a"] = "`uct_ep_put_zcopy`"
	uct["inline16_d"] = "`uct_ep_put_short`"
	uct["atomic_add"] = "`uct_ep_atomic64_post` (ADD)"
	typed["write_a"] = "`fv_write`"
	typed["inline16_d"] = "`fv_write_inline`"
	typed["atomic_add"] = "`fv_fadd`"
}

$2 == "ucx" { v[$1, $3, $4, $5] = $6 }

function val(k, o, p, n) { return ((k, o, p, n) in v) ? v[k, o, p, n] : "" }
function fmt(x) { return x == "" ? "–" : sprintf("%.1f", x) }
function ratio(x, r) { return (x == "" || r == "" || r + 0 == 0) ? "–" : sprintf("%.2f", x / r) }

END {
	print ""
	printf "UCX as the peer: UCT `rc_mlx5` (UCX %s, Debian's build) and the fastverbs typed path\n", ucxver
	print "in the same loops on the same device (`bench/ucx.c`). Instructions per WR (callgrind) and"
	print "ns per WR; UCT rings a doorbell per call (no batching), typed at 1 and 32 per doorbell;"
	print "\"typed/UCT\" compares both at one per doorbell."
	print ""
	print "| case | UCT call | UCT instr/WR | typed call | typed instr/WR ×1 | ×32 | typed/UCT | UCT ns/WR | typed ns/WR ×1 | ×32 |"
	print "|---|---|--:|---|--:|--:|--:|--:|--:|--:|"
	for (i = 1; i <= nops; i++) {
		o = ops[i]
		u = val("ir", o, "uct", 1); t1 = val("ir", o, "typed", 1); t32 = val("ir", o, "typed", 32)
		printf "| %s | %s | %s | %s | **%s** | %s | %s | %s | %s | %s |\n", label[o], uct[o], fmt(u), typed[o],
			fmt(t1), fmt(t32), ratio(t1, u), fmt(val("ns", o, "uct", 1)), fmt(val("ns", o, "typed", 1)),
			fmt(val("ns", o, "typed", 32))
	}
	print ""
	print "UCT signals by its own policy: `put_zcopy` and `atomic64_post` ask for a completion on every"
	print "WR (UCT must learn when the caller's buffer, or its own atomic result descriptor, is free),"
	print "`put_short` once per `UCX_RC_TX_CQ_MODERATION` (64) unsignaled WQEs; the typed loop"
	print "decides FV_SIGNALED per WR, every 64th (its CQEs are reaped outside the measured code,"
	print "as UCT's are). Debian builds UCX with assertions and parameter checks on (`ucx_info -b`:"
	print "`ENABLE_ASSERT`, `ENABLE_PARAMS_CHECK`): each UCT post also runs"
	print "`uct_ib_mlx5_txwq_validate_always` and the inlined checks (`callgrind_annotate` on"
	print "BENCH_DIR/callgrind/ucx-*-uct-1.cg shows the share per function)."
}
