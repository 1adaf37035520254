#!/bin/sh
# Runs one Criterion test binary, BIN_DIR/NAME, and records its counts for test-summary.sh:
# RES_DIR/NAME.log gets its whole output, RES_DIR/NAME.res "passed failed seconds cpu-seconds"
# (cpu: user+sys of the test and every child it waited for, what make test's length depends on
# on a machine with few CPUs). Prints
# one line. Exits 0 whatever the test says, so that make goes on with the others; the
# summary fails the pass.
# Usage: run-test.sh PASS BIN_DIR NAME RES_DIR [SOLO_NAMES]
# The folder decides how it runs: tests/unit/ on plain memory, every other folder on the
# software device through $SIM_RUN (sim/fvsim-run). A file not yet in a folder runs on the
# device when its name starts with sim-. Names in SOLO_NAMES (those that pin threads to a CPU
# or load both) run one at a time across the passes that make test runs at once: each holds
# the lock build/.solo-lock (flock(1)).
set -u
pass=$1; bin=$2/$3; name=$3; res=$4; solo=${5:-}
log=$res/$name.log
mkdir -p "$(dirname "$log")"
case "$name" in
    unit/*)       runner="" ;;
    */*|sim-*)    runner=${SIM_RUN:-}
                  if [ -z "$runner" ]; then
                      echo "run-test: $name needs the software device (SIM_RUN unset)" > "$log"
                      echo "0 1 0" > "$res/$name.res"
                      printf '%-7s FAIL %-24s SIM_RUN unset\n' "$pass" "$name"
                      exit 0
                  fi ;;
    *)            runner="" ;;
esac
lock=""
case " $solo " in *" $name "*) mkdir -p build; lock="flock build/.solo-lock" ;; esac

# cpu_ticks: user+sys clock ticks of the children this shell has waited for (proc(5), fields
# cutime and cstime; the shell's own name has no space, so the fields count from 1).
cpu_ticks() { set -- $(cat /proc/$$/stat); shift 15; echo $(($1 + $2)); }
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
start=$(date +%s); t0=$(cpu_ticks)
$lock $runner "$bin" --jobs 2 > "$log" 2>&1; rc=$?
secs=$(($(date +%s) - start)); cpu=$((($(cpu_ticks) - t0 + hz / 2) / hz))

line=$(grep 'Synthesis: Tested:' "$log" | tail -n 1)
p=$(printf '%s\n' "$line" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
f=$(printf '%s\n' "$line" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
c=$(printf '%s\n' "$line" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
p=${p:-0}; failed=0
if [ $rc -ne 0 ] || [ -z "$line" ]; then
    failed=$((${f:-0} + ${c:-0}))
    [ -z "$line" ] || [ $failed -eq 0 ] && failed=$((failed + 1))
fi
echo "$p $failed $secs $cpu" > "$res/$name.res"
if [ $failed -eq 0 ]; then
    printf '%-7s ok   %-24s %4d passed  %4ds (cpu %ds)\n' "$pass" "$name" "$p" "$secs" "$cpu"
else
    printf '%-7s FAIL %-24s %4d passed, %d failed (exit %d)  %ds (cpu %ds)\n' "$pass" "$name" "$p" "$failed" $rc "$secs" "$cpu"
fi
exit 0
