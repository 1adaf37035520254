#!/bin/sh
# Closes one pass of make test: adds up what tools/run-test.sh recorded in RES_DIR for each
# NAME, prints the Criterion details of every binary that failed, then one closing line,
# "tests (PASS): N passed, N failed", also appended to SUMMARY_FILE when set (make test's
# last line adds those up; the details also go to SUMMARY_FILE.details). Exits 1 if a binary
# failed or left no record.
# Usage: test-summary.sh PASS RES_DIR NAME...
set -u
pass=$1; res=$2; shift 2
passed=0; failed=0; bad=""
details=$(mktemp)
for t in "$@"; do
    if [ -f "$res/$t.res" ]; then
        read -r p f s c < "$res/$t.res"
    else
        p=0; f=1    # not built, or not run: a failure, never a silent gap
    fi
    passed=$((passed + p)); failed=$((failed + f))
    [ "$f" -eq 0 ] && continue
    bad="$bad $t"
    {
        echo "== $pass: $res/$t.log"
        if [ -f "$res/$t.log" ]; then
            # Criterion's lines that say what failed and where, with the end of a failed
            # program's output (tests/lib/sim-proc.h), else the end of the output.
            d=$(grep -E '^\[(----|FAIL|OUT )\] *[^ ]' "$res/$t.log" | tail -n 100)
            [ -n "$d" ] && printf '%s\n' "$d" || tail -n 40 "$res/$t.log"
        else
            echo "(no result: the binary was not built or not run)"
        fi
    } > "$details"
    cat "$details"
    # make test runs its passes at once: test-total.sh prints these again after them all.
    [ -z "${SUMMARY_FILE:-}" ] || cat "$details" >> "$SUMMARY_FILE.details"
done
rm -f "$details"
line="tests ($pass): $passed passed, $failed failed"
[ -z "${SUMMARY_FILE:-}" ] || echo "$line" >> "$SUMMARY_FILE"
echo "$line"
[ -z "$bad" ] || { echo "run-tests ($pass): failing binaries:$bad" >&2; exit 1; }
