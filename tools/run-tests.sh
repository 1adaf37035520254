#!/bin/sh
# Runs each Criterion test binary named on the command line from directory $1 and prints
# one closing line over all of them, preceded by the Criterion details of any binary that
# failed. Binaries named sim-* run on the software device through $SIM_RUN (sim/fvsim-run).
set -u
dir=$1; shift
passed=0; failed=0; bad=""; details=""
for t in "$@"; do
    case "$t" in
        sim-*) [ -n "${SIM_RUN:-}" ] || { echo "run-tests: $t needs the software device (SIM_RUN unset)" >&2; failed=$((failed + 1)); bad="$bad $t"; continue; }
               runner=$SIM_RUN ;;
        *)     runner="" ;;
    esac
    echo "== $dir/$t"
    out=$($runner "$dir/$t" --jobs 2 2>&1); rc=$?
    # Criterion's detail lines ([----]) only when the binary failed: they say what and where.
    if [ $rc -eq 0 ]; then
        printf '%s\n' "$out" | grep -v '^\[----\]' | tail -n 30
    else
        printf '%s\n' "$out" | grep -v '^\[----\] *$' | tail -n 80
        # Again at the end, where a log cut to its tail still shows it.
        details="$details
== $t
$(printf '%s\n' "$out" | grep -E '^\[(----|FAIL)\] *[^ ]' | tail -n 20)"
    fi
    line=$(printf '%s\n' "$out" | grep 'Synthesis: Tested:' | tail -n 1)
    p=$(printf '%s\n' "$line" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
    f=$(printf '%s\n' "$line" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
    c=$(printf '%s\n' "$line" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
    passed=$((passed + ${p:-0}))
    if [ $rc -ne 0 ] || [ -z "$line" ]; then
        failed=$((failed + ${f:-0} + ${c:-0})); [ -z "$line" ] && failed=$((failed + 1))
        bad="$bad $t"
    fi
done
[ -z "$details" ] || printf 'failures in %s:%s\n' "$dir" "$details"
echo "tests ($dir): $passed passed, $failed failed"
[ -z "$bad" ] || { echo "run-tests: failing binaries:$bad" >&2; exit 1; }
