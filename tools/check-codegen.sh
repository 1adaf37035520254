#!/bin/sh
# tools/check-codegen.sh: the send doorbell's barrier keeps the payload before it (x86-64).
#
# fv__dma_wmb_sq() tells the compiler that the device reads memory (an asm with a memory
# input) rather than clobbering all of it, so that the compiler keeps what it read in
# registers across a doorbell. This checks, in the code two compilers produce, that a store
# to the memory a request points at still comes before the barrier: each probe_* function of
# tests/codegen/payload-order.c stores 0x5a5a5a5a and then posts; in its assembly the store
# must come before the "# fv__dma_wmb_sq" marker and none may follow it.
#   tools/check-codegen.sh [CC...]      default: gcc and clang, at -O2 and -O3
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/tests/codegen/payload-order.c
[ "$(uname -m)" = x86_64 ] || { echo "check-codegen: not x86-64, skipped (other architectures keep a full barrier)"; exit 0; }
compilers=${*:-gcc clang}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
for cc in $compilers; do
    command -v "$cc" >/dev/null 2>&1 || { echo "check-codegen: $cc not installed, skipped"; continue; }
    for opt in -O2 -O3; do
        asm=$tmp/out.s
        if ! $cc -std=c11 -Wall -Wextra -Werror $opt -D_GNU_SOURCE -I"$top/include" -S -o "$asm" "$src" 2>"$tmp/err"; then
            echo "check-codegen: $cc $opt: FAIL (does not compile)"; sed 's/^/    /' "$tmp/err" | head -n 10
            failed=$((failed + 1)); continue
        fi
        # per probe: line of the first payload store, of the first marker, of the last payload store
        awk '/^probe_[a-z_]*:/ { f = $1; sub(/:$/, "", f); n = 0; first = 0; mark = 0; last = 0; names[++k] = f }
             f != "" && /\$1515870810/ { if (!first) first = NR; last = NR }
             f != "" && /fv__dma_wmb_sq/ { if (!mark) mark = NR }
             f != "" && /\.cfi_endproc/ { r[f] = first " " mark " " last; f = "" }
             END { for (i = 1; i <= k; i++) if (names[i] in r) print names[i], r[names[i]] }' "$asm" > "$tmp/lines"
        [ -s "$tmp/lines" ] || { echo "check-codegen: $cc $opt: FAIL (no probe functions found)"; failed=$((failed + 1)); continue; }
        while read -r name first mark last; do
            if [ "$mark" = 0 ]; then
                echo "check-codegen: $cc $opt $name: FAIL (no doorbell barrier in the code)"; failed=$((failed + 1))
            elif [ "$first" = 0 ]; then
                echo "check-codegen: $cc $opt $name: FAIL (the payload store is gone)"; failed=$((failed + 1))
            elif [ "$first" -gt "$mark" ] || [ "$last" -gt "$mark" ]; then
                echo "check-codegen: $cc $opt $name: FAIL (payload stored at line $last, after the barrier at line $mark)"
                failed=$((failed + 1))
            else
                passed=$((passed + 1))
            fi
        done < "$tmp/lines"
    done
done
echo "check-codegen: $passed probes keep the payload before the doorbell barrier, $failed do not"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
