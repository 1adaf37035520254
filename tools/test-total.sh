#!/bin/sh
# make test's last line: adds up the "N passed, N failed" lines the passes, pyverbs and the
# failed checks wrote to SUMMARY, and prints "tests (all passes): N passed, N failed".
# Usage: test-total.sh SUMMARY MAKE_STATUS. A failed step that wrote no count still counts
# as one failure, so the line never says 0 failed when make test fails.
set -u
sum=$1; rc=$2
[ -f "$sum" ] || : > "$sum"
if [ -s "$sum.details" ]; then
    echo "== make test: what failed (the Criterion details, as each pass printed them)"
    cat "$sum.details"
fi
echo "== make test: every pass"
cat "$sum"
set -- $(sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$sum" |
         awk '{ p += $1; f += $2 } END { print p + 0, f + 0 }')
passed=$1; failed=$2
[ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
echo "tests (all passes): $passed passed, $failed failed"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
