#!/bin/sh
# Instructions per WR / per CQE on plain memory, counted by valgrind's callgrind (repeatable).
#   bench/cost.sh [build dir]        CC, CFLAGS override the compiler and its flags
# Posting: RC RDMA WRITE, one SGE, typed path (fv_write + fv_ring), 1 and 32 WRs per doorbell
# (the same SGE for every WR, as bench/post.c posts, and a different one); fv_post_send of
# ibv_send_wr lists filled as bench/post.c fills them, 1 and 32 WRs per call; fv_wr_* batches on
# the typed handle and on its struct fv_qp, the same SGE for every WR and a different one.
# Polling: RC SEND completions through fv_poll and fv_poll_cq, 1 and 16 CQEs per call (and the
# completions of two QPs taking turns).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/bench}
CC=${CC:-gcc}
CFLAGS=${CFLAGS:--O2 -g}
command -v valgrind >/dev/null 2>&1 || { echo "cost.sh: valgrind is not installed" >&2; exit 1; }
mkdir -p "$out"
for b in cost_typed cost_poll; do
	$CC -std=c11 -Wall -Wextra -Werror $CFLAGS -D_GNU_SOURCE -I"$top/include" \
	    -o "$out/$b" "$top/bench/$b.c" -libverbs -lmlx5
done

# count PROGRAM ARGS...: instructions the program collects between its own toggles (client
# requests around the measured call), divided by the count it prints as "<unit> N".
count() {
	res=$(valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=/dev/null "$@" 2>&1)
	total=$(echo "$res" | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p')
	n=$(echo "$res" | sed -n 's/^\(wrs\|cqes\) \([0-9]*\)$/\2/p')
	awk -v t="$total" -v n="$n" 'BEGIN { printf "%7.1f\n", t / n }'
}

# row LABEL PROGRAM ARGS...: one line of the table, count's figure for the program.
row() {
	label=$1 prog=$2
	shift 2
	printf '%-44s %s\n' "$label" "$(count "$out/$prog" "$@")"
}

printf '%-44s %s\n' "case ($CC $CFLAGS)" "instructions"
row "fv_write + fv_ring, 1 WR per doorbell" cost_typed 1
row "fv_write + fv_ring, 32 WRs per doorbell" cost_typed 32
row "  the same, a different SGE per WR, 1" cost_typed 1 vary
row "  the same, a different SGE per WR, 32" cost_typed 32 vary
row "fv_post_send, 1 WR per call" cost_typed 1 ps
row "fv_post_send, 32 WRs per call" cost_typed 32 ps
for h in wr wrq; do
	what=$([ $h = wr ] && echo "typed handle" || echo "struct fv_qp")
	row "fv_wr_* ($what), 1 WR per batch" cost_typed 1 $h
	row "fv_wr_* ($what), 32 WRs per batch" cost_typed 32 $h
	row "  the same, a different SGE per WR, 1" cost_typed 1 vary $h
	row "  the same, a different SGE per WR, 32" cost_typed 32 vary $h
done
row "fv_poll, 1 CQE per call" cost_poll 1
row "fv_poll, 16 CQEs per call" cost_poll 16
row "fv_poll_cq, 1 CQE per call" cost_poll 1 ibv
row "fv_poll_cq, 16 CQEs per call" cost_poll 16 ibv
row "  fv_poll, two QPs taking turns, 1" cost_poll 1 alt
row "  fv_poll, two QPs taking turns, 16" cost_poll 16 alt
