#!/bin/sh
# Runs rdma-core's own test suite (Debian python3-pyverbs ships it, gzipped, in
# /usr/share/doc/rdma-core/tests) on the software device through $SIM_RUN, twice: on an
# InfiniBand port and on an Ethernet (RoCE) one, and after the InfiniBand one its DC tests
# with DC turned off. Prints the counts of each and fails on
# any failure or error, or if a pass does not finish in time.
# Usage: run-pyverbs.sh BUILD_DIR [ib|eth]   (both when none is named; each unpacks the suite
# into its own BUILD_DIR/pyverbs-suite-ib or -eth, so that the two can run at once)
# Environment: PYVERBS_TESTS (suite directory), PYVERBS_TIMEOUT (seconds, default 900),
# SUMMARY_FILE (when set, each run appends "pyverbs (NAME): N passed, N failed" to it).
set -u
src=${PYVERBS_TESTS:-/usr/share/doc/rdma-core/tests}
build=$1; which=${2:-both}
limit=${PYVERBS_TIMEOUT:-900}

[ -n "${SIM_RUN:-}" ] || { echo "pyverbs: needs the software device (SIM_RUN unset)" >&2; exit 1; }
if [ ! -f "$src/run_tests.py" ]; then
    echo "pyverbs: $src/run_tests.py missing: install python3-pyverbs (make deps)" >&2
    exit 1
fi
# unpack WORK: a fresh copy of the suite in WORK/tests.
unpack() {
    rm -rf "$1"
    mkdir -p "$1"
    cp -r "$src" "$1/tests"
    find "$1/tests" -name '*.gz' -exec gunzip -f {} +
}

# run_pass NAME SUITE_DIR LOG [ENV...]: runs the suite once, prints its counts; fails on
# any failure or error, or if the suite does not finish in time.
run_pass() {
    name=$1; dir=$2; log=$3; shift 3
    start=$(date +%s)
    env "$@" timeout "$limit" $SIM_RUN /usr/bin/python3 "$dir/run_tests.py" -v >"$log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))

    # unittest closes with "Ran N tests in Xs" and "OK (skipped=K)" or
    # "FAILED (failures=F, errors=E, skipped=K)".
    ran=$(sed -n 's/^Ran \([0-9]*\) tests* in .*/\1/p' "$log" | tail -n 1)
    verdict=$(grep -E '^(OK|FAILED)( \(.*\))?$' "$log" | tail -n 1)
    failures=$(count failures); errors=$(count errors); skipped=$(count skipped)
    xfail=$(count 'expected failures'); xpass=$(count 'unexpected successes')
    failures=${failures:-0}; errors=${errors:-0}; skipped=${skipped:-0}
    xfail=${xfail:-0}; xpass=${xpass:-0}

    if [ -z "$ran" ] || [ -z "$verdict" ]; then
        record 0 1
        [ $rc -eq 124 ] && echo "pyverbs ($name): the suite did not finish within ${limit}s" >&2
        echo "pyverbs ($name): no unittest summary (exit $rc); the end of $log:" >&2
        tail -n 40 "$log" >&2
        return 1
    fi
    passed=$((ran - failures - errors - skipped - xfail - xpass))
    bad=$((failures + errors + xpass)); [ $rc -ne 0 ] && [ $bad -eq 0 ] && bad=1
    record $passed $bad
    echo "pyverbs ($name): $ran tests in ${secs}s: $passed passed, $skipped skipped, $failures failed, $errors errors"
    # Every skip should name a feature the device does not claim (sim/README.md lists them).
    echo "pyverbs ($name): $(grep -oE "skipped '.*'\$" "$log" | sort -u | wc -l) distinct skip reasons, listed in $log"
    if [ "$failures" -ne 0 ] || [ "$errors" -ne 0 ] || [ "$xpass" -ne 0 ] || [ $rc -ne 0 ]; then
        grep -E '^(FAIL|ERROR|unexpected success):' "$log" >&2
        awk '/^=+$/ && length($0) >= 70 { show = 1 } show' "$log" | head -n 120 >&2
        echo "pyverbs ($name): FAILED (exit $rc)" >&2
        return 1
    fi
}
count() { printf '%s\n' "$verdict" | sed -n "s/.*[(, ]$1=\([0-9]*\).*/\1/p"; }
record() { [ -z "${SUMMARY_FILE:-}" ] || echo "pyverbs ($name): $1 passed, $2 failed" >> "$SUMMARY_FILE"; }

# no_dc_pass: the DC tests once more with DC turned off (FVSIM_NO_DC=1): creation must be
# refused as a kernel without DC refuses it, so each of them skips, none fails.
no_dc_pass() {
    log=$work/run-no-dc.log
    env FVSIM_NO_DC=1 timeout "$limit" $SIM_RUN /usr/bin/python3 "$work/tests/run_tests.py" -v \
        -k test_mlx5_dc -k test_scatter_to_cqe_control_by_qp >"$log" 2>&1
    rc=$?
    ran=$(sed -n 's/^Ran \([0-9]*\) tests* in .*/\1/p' "$log" | tail -n 1)
    refused=$(grep -c "skipped 'Create DC QP is not supported'" "$log")
    echo "pyverbs (DC off): ${ran:-no} DC tests, $refused skipped as 'Create DC QP is not supported'"
    name="DC off"
    if [ $rc -ne 0 ] || [ -z "$ran" ] || [ "$refused" -lt 5 ] || ! grep -q '^OK' "$log"; then
        tail -n 40 "$log" >&2
        echo "pyverbs (DC off): FAILED (exit $rc)" >&2
        record 0 1
        return 1
    fi
    record "$refused" 0
}

ok=0
if [ "$which" != eth ]; then
    unpack "$build/pyverbs-suite-ib"
    run_pass InfiniBand "$build/pyverbs-suite-ib/tests" "$build/pyverbs-suite-ib/run.log" FVSIM_LINK=ib || ok=1
    work=$build/pyverbs-suite-ib no_dc_pass || ok=1
fi
# The Ethernet run is the same suite on a RoCE port (FVSIM_LINK=eth), where the raw-packet,
# flow-steering and RoCE tests run instead of skipping. Its copy leaves out
# test_rss_traffic.py: RSS needs work queues and indirection tables, which the device does
# not model, and that test errors instead of skipping when they are refused.
if [ "$which" != ib ]; then
    unpack "$build/pyverbs-suite-eth"
    rm -f "$build/pyverbs-suite-eth/tests/test_rss_traffic.py"
    run_pass Ethernet "$build/pyverbs-suite-eth/tests" "$build/pyverbs-suite-eth/run.log" FVSIM_LINK=eth || ok=1
fi
exit $ok
