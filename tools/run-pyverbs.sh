#!/bin/sh
# Runs rdma-core's own test suite (Debian python3-pyverbs ships it, gzipped, in
# /usr/share/doc/rdma-core/tests) on the software device through $SIM_RUN, prints the
# counts and fails on any failure or error, or if the suite does not finish in time.
# Usage: run-pyverbs.sh BUILD_DIR   (the suite is unpacked into BUILD_DIR/pyverbs-suite)
# Environment: PYVERBS_TESTS (suite directory), PYVERBS_TIMEOUT (seconds, default 900).
set -u
src=${PYVERBS_TESTS:-/usr/share/doc/rdma-core/tests}
work=$1/pyverbs-suite
limit=${PYVERBS_TIMEOUT:-900}
log=$work/run.log

[ -n "${SIM_RUN:-}" ] || { echo "pyverbs: needs the software device (SIM_RUN unset)" >&2; exit 1; }
if [ ! -f "$src/run_tests.py" ]; then
    echo "pyverbs: $src/run_tests.py missing: install python3-pyverbs (make deps)" >&2
    exit 1
fi
rm -rf "$work"
mkdir -p "$work"
cp -r "$src" "$work/tests"
find "$work/tests" -name '*.gz' -exec gunzip -f {} +

start=$(date +%s)
timeout "$limit" $SIM_RUN /usr/bin/python3 "$work/tests/run_tests.py" -v >"$log" 2>&1
rc=$?
secs=$(($(date +%s) - start))

# unittest closes with "Ran N tests in Xs" and "OK (skipped=K)" or
# "FAILED (failures=F, errors=E, skipped=K)".
ran=$(sed -n 's/^Ran \([0-9]*\) tests* in .*/\1/p' "$log" | tail -n 1)
verdict=$(grep -E '^(OK|FAILED)( \(.*\))?$' "$log" | tail -n 1)
count() { printf '%s\n' "$verdict" | sed -n "s/.*[(, ]$1=\([0-9]*\).*/\1/p"; }
failures=$(count failures); errors=$(count errors); skipped=$(count skipped)
xfail=$(count 'expected failures'); xpass=$(count 'unexpected successes')
failures=${failures:-0}; errors=${errors:-0}; skipped=${skipped:-0}
xfail=${xfail:-0}; xpass=${xpass:-0}

if [ -z "$ran" ] || [ -z "$verdict" ]; then
    [ $rc -eq 124 ] && echo "pyverbs: the suite did not finish within ${limit}s" >&2
    echo "pyverbs: no unittest summary (exit $rc); the end of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
fi
passed=$((ran - failures - errors - skipped - xfail - xpass))
echo "pyverbs: $ran tests in ${secs}s: $passed passed, $skipped skipped, $failures failed, $errors errors"
# Every skip should name a feature the device does not claim (sim/README.md lists them).
echo "pyverbs: $(grep -oE "skipped '.*'\$" "$log" | sort -u | wc -l) distinct skip reasons, listed in $log"
if [ "$failures" -ne 0 ] || [ "$errors" -ne 0 ] || [ "$xpass" -ne 0 ] || [ $rc -ne 0 ]; then
    grep -E '^(FAIL|ERROR|unexpected success):' "$log" >&2
    awk '/^=+$/ && length($0) >= 70 { show = 1 } show' "$log" | head -n 120 >&2
    echo "pyverbs: FAILED (exit $rc)" >&2
    exit 1
fi
