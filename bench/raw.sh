#!/bin/sh
# Instructions per raw Ethernet WR (bench/raw.c), libmlx5 against fastverbs, counted by
# valgrind's callgrind on the software device's Ethernet port; prints a Markdown table.
#   bench/raw.sh [build dir]        CC, CFLAGS override the compiler and its flags
# Needs root (RAW_PACKET QPs) and the software device built (make sim-all).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/bench}
CC=${CC:-gcc}
CFLAGS=${CFLAGS:--O2 -g}
command -v valgrind >/dev/null 2>&1 || { echo "raw.sh: valgrind is not installed" >&2; exit 1; }
mkdir -p "$out"
$CC -std=c11 -Wall -Wextra -Werror $CFLAGS -D_GNU_SOURCE -I"$top/include" -o "$out/raw" "$top/bench/raw.c" \
    -libverbs -lmlx5

# count ARGS...: instructions of the measured calls, per WR.
count() {
	res=$(FVSIM_LINK=eth "$top/sim/fvsim-run" valgrind --tool=callgrind --collect-atstart=no \
	      --callgrind-out-file=/dev/null "$out/raw" "$@" 2>&1)
	total=$(echo "$res" | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p')
	n=$(echo "$res" | sed -n 's/^wrs \([0-9]*\)$/\1/p')
	[ -n "$total" ] && [ -n "$n" ] || { echo "raw.sh: raw $* failed:" >&2; echo "$res" >&2; exit 1; }
	awk -v t="$total" -v n="$n" 'BEGIN { printf "%.1f", t / n }'
}

echo "Raw Ethernet posting, instructions per WR (callgrind; $CC $CFLAGS), 1 and 32 WRs per doorbell:"
echo
echo "| operation | path | instr/WR ×1 | instr/WR ×32 |"
echo "|---|---|--:|--:|"
for op in send tso; do
	what=$([ $op = send ] && echo "RAW SEND 64 B, IP_CSUM" || echo "RAW TSO, 54 B header + 1400 B")
	printf '| %s | libmlx5 `ibv_post_send` | %s | %s |\n' "$what" "$(count $op lib 1)" "$(count $op lib 32)"
	printf '|  | fastverbs `fv_post_send` | %s | %s |\n' "$(count $op ps 1)" "$(count $op ps 32)"
	printf '|  | fastverbs typed (`fv_%s` + `fv_ring`) | %s | %s |\n' \
	    "$([ $op = send ] && echo send || echo send_tso)" "$(count $op typed 1)" "$(count $op typed 32)"
done
