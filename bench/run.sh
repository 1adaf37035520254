#!/bin/sh
# bench/run.sh BENCH_DIR: runs the built benchmarks (BENCH_DIR/post, BENCH_DIR/poll, BENCH_DIR/ucx,
# BENCH_DIR/raw, BENCH_DIR/recv) and writes the report. `make bench` builds them and calls this.
#
# On a real mlx5 device when the machine has one, otherwise on the software device
# ($SIM_RUN, sim/fvsim-run) in single-step mode, so nothing executes while we measure.
#   1. instructions: each program under valgrind's callgrind, counting only the measured
#      functions (m_*), one dump per case;
#   2. nanoseconds: the same loops timed with clock_gettime in one run per program;
#   3. raw Ethernet (BENCH_DIR/raw): instructions only, on the software device's Ethernet port,
#      as root (RAW_PACKET QPs need CAP_NET_RAW); otherwise the report says why it has none.
# Prints the Markdown report on stdout and writes bench/results/latest.md, latest.png (plot)
# and latest.tsv (raw numbers); the callgrind dumps stay in BENCH_DIR/callgrind/ (one file per
# case, e.g. `callgrind_annotate --inclusive=yes BENCH_DIR/callgrind/post-write-typed-32.cg` shows where the
# instructions of that case go). Progress goes to stderr.
# Environment: SIM_RUN, FVBENCH_DEVICE (e.g. mlx5_1), FVBENCH_GID_INDEX (RoCE).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$top/build/bench}
res=$top/bench/results
SIM_RUN=${SIM_RUN:-sim/fvsim-run}
case $SIM_RUN in /*) ;; *) SIM_RUN=$top/$SIM_RUN ;; esac

say() { echo "bench: $*" >&2; }

# The programs (post-dc: bench/post.c's DC loops, a build of their own); each prints lines "time BENCH OP PATH N NS" and dumps callgrind cases
# "BENCH OP PATH N UNITS" (bench/table.awk turns them into rows; bench/ucx.awk for ucx);
# raw has its own way (count_raw below, bench/raw.awk).
progs=${FVBENCH_PROGS:-post post-ring post-dc poll recv ucx raw}
for b in $progs; do
    [ -x "$bin/$b" ] || { say "$bin/$b missing: run 'make bench'"; exit 1; }
done

# Real device or the software one.
if ls /sys/class/infiniband/mlx5_* >/dev/null 2>&1 && ls /dev/infiniband/uverbs* >/dev/null 2>&1; then
    run=""
    device="mlx5 hardware ($(ls /sys/class/infiniband | tr '\n' ' ' | sed 's/ $//'))"
else
    [ -x "$SIM_RUN" ] || { say "no mlx5 device here and the software device is not built (make sim-all)"; exit 1; }
    run=$SIM_RUN
    export FVSIM_MODE=step
    device="the software mlx5 device (sim/, single-step mode)"
fi
say "running on $device"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fvbench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
: > "$tmp/data"

# count NAME: instructions per unit from the callgrind dumps of BENCH_DIR/NAME.
count() {
    say "$1: counting instructions under callgrind"
    # shellcheck disable=SC2086
    $run valgrind -q --tool=callgrind --collect-atstart=no --toggle-collect='m_*' \
        --callgrind-out-file="$tmp/$1.cg" "$bin/$1" count >/dev/null ||
        { say "$1: the callgrind run failed"; exit 1; }
    # each dump: "desc: Trigger: Client Request: BENCH OP PATH N UNITS" and "summary: IR";
    # kept as BENCH_DIR/callgrind/BENCH-OP-PATH-N.cg
    mkdir -p "$bin/callgrind"
    [ -n "${FVBENCH_SUFFIX:-}" ] || rm -f "$bin/callgrind/$1"-*.cg	# a suffixed run adds to them
    for f in "$tmp/$1".cg.*; do
        line=$(awk '/^desc: Trigger: Client Request: / { sub(/^desc: Trigger: Client Request: /, ""); d = $0 }
             /^summary: / { s = $2 }
             END { n = split(d, w, " "); name = w[1]
                   for (i = 2; i < n; i++) name = name "-" w[i]
                   printf "%s ir %s %s %s %s %.2f\n", name, w[1], w[2], w[3], w[4], s / w[5] }' "$f")
        cp "$f" "$bin/callgrind/${line%% *}.cg"
        echo "${line#* }" >> "$tmp/data"
    done
}

# timing NAME: ns per unit from BENCH_DIR/NAME time.
timing() {
    say "$1: timing (clock_gettime)"
    # shellcheck disable=SC2086
    $run "$bin/$1" time > "$tmp/$1.time" || { say "$1: the timed run failed"; exit 1; }
    awk '{ print "ns " $2, $3, $4, $5, $6 }' "$tmp/$1.time" >> "$tmp/data"
}

# count_raw: instructions per raw Ethernet WR (bench/raw.c counts WRs, callgrind the measured
# calls), as "ir raw OP PATH N IR" lines; or why not, in raw_skipped.
raw_skipped=""
count_raw() {
    if [ -z "$run" ]; then
        raw_skipped="measured on the software device only (bench/raw.c drives it in single-step mode)"
    elif [ "$(id -u)" -ne 0 ]; then
        raw_skipped="RAW_PACKET QPs need root (CAP_NET_RAW); run \`make bench\` as root for them"
    fi
    if [ -n "$raw_skipped" ]; then
        say "raw: skipped: $raw_skipped"
        return 0
    fi
    say "raw: counting instructions under callgrind (FVSIM_LINK=eth)"
    for op in send tso; do
        for path in lib ps typed; do
            for n in 1 32; do
                # shellcheck disable=SC2086
                out=$(env -u FVSIM_MODE FVSIM_LINK=eth $run valgrind --tool=callgrind \
                      --collect-atstart=no --callgrind-out-file=/dev/null "$bin/raw" $op $path $n 2>&1) ||
                    { say "raw $op $path $n failed:"; echo "$out" >&2; exit 1; }
                total=$(echo "$out" | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p')
                wrs=$(echo "$out" | sed -n 's/^wrs \([0-9]*\)$/\1/p')
                [ -n "$total" ] && [ -n "$wrs" ] || { say "raw $op $path $n: no count:"; echo "$out" >&2; exit 1; }
                awk -v t="$total" -v w="$wrs" -v c="raw $op $path $n" \
                    'BEGIN { printf "ir %s %.2f\n", c, t / w }' >> "$tmp/data"
            done
        done
    done
}

# FVBENCH_OPS (bench/post.c) narrows the posting cases while working on them.
for b in $progs; do
    if [ "$b" = raw ]; then count_raw; else count "$b"; fi
done
# the clang builds (bench/bench.mk): their typed path and floor, named typed_clang, floor_clang,
# and with the SGE copied field by field (bench/post.c counts the loops with an SGE only)
# typed_clangf, floor_clangf; for loops (a)-(d) (post-clang*) and (e) (post-ring-clang*).
# The compat paths once more with their locks on: "locked, uncontended". Every path runs, as
# above, and only the compat ones are kept: each row then starts where its unlocked one did (the
# wr_ids decide where the signals fall against the ring's room), so the two differ by the locks.
for p in post post-ring post-dc; do
    case " $progs " in
        *" $p "*) (export FVBENCH_DUMP_PATHS=fvps,fvwr,fvwrq FVBENCH_SUFFIX=_locked FVBENCH_LOCKED=1; count $p) ;;
    esac
done
for p in post post-ring; do
    if [ -x "$bin/$p-clang" ] && [ -z "${FVBENCH_PROGS:-}" ]; then
        (export FVBENCH_PATHS=typed,floor FVBENCH_SUFFIX=_clang; count $p-clang)
        if [ -x "$bin/$p-clang-fields" ]; then
            (export FVBENCH_PATHS=typed,floor FVBENCH_SUFFIX=_clangf; count $p-clang-fields)
        fi
    fi
done
# gcc for x86-64-v3 (bench/bench.mk): typed path and floor, named typed_v3, floor_v3
for p in post post-ring; do
    if [ -x "$bin/$p-v3" ] && [ -z "${FVBENCH_PROGS:-}" ]; then
        (export FVBENCH_PATHS=typed,floor FVBENCH_SUFFIX=_v3; count $p-v3)
    fi
done
# gcc with -DFV_NO_TUNE: the typed path, fv_post_send and fv_wr_*, named typed_notune, ...
if [ -x "$bin/post-notune" ] && [ -z "${FVBENCH_PROGS:-}" ]; then
    (export FVBENCH_PATHS=typed,fvps,fvwr FVBENCH_SUFFIX=_notune; count post-notune)
fi
for b in $progs; do [ "$b" = raw ] || timing "$b"; done

# The report.
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
cpus=$(nproc)
kernel=$(uname -r)
ccv=$(${CC:-gcc} --version | head -n 1)
rdma=$(dpkg-query -W -f='${Version}' libibverbs1 2>/dev/null || echo unknown)
commit=$(cd "$top" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && [ -n "$(cd "$top" && git status --porcelain -- include 2>/dev/null)" ]; then
    commit="$commit, include/ modified"
fi
header="## fastverbs bench, $(date -u '+%Y-%m-%d %H:%M UTC')

- machine: $cpu, $cpus CPUs, Linux $kernel
- build: $ccv, -O2; rdma-core $rdma; fastverbs $commit
- device: $device

Instruction counts are repeatable. Nanoseconds on the software device mean little in absolute
terms (no PCIe, no NIC, nothing running while we post); compare the ratios within one run."

mkdir -p "$res"
awk -v header="$header" -v dat="$tmp/plot" -f "$top/bench/table.awk" "$tmp/data" > "$tmp/latest.md"
awk -v ucxver="$(dpkg-query -W -f='${Version}' libucx0 2>/dev/null || echo unknown)" \
    -f "$top/bench/ucx.awk" "$tmp/data" >> "$tmp/latest.md"
case " $progs " in
    *" raw "*) awk -v skipped="$raw_skipped" -v cc="$ccv, -O2" -f "$top/bench/raw.awk" "$tmp/data" \
                   >> "$tmp/latest.md" ;;
esac
sort "$tmp/data" > "$res/latest.tsv"
cp "$tmp/latest.md" "$res/latest.md"
cat "$res/latest.md"

# The plot has a posting and a polling panel: a run of fewer programs (FVBENCH_PROGS) leaves
# the last one in place.
case " $progs " in *" post "*) ;; *) progs_partial=1 ;; esac
case " $progs " in *" poll "*) ;; *) progs_partial=1 ;; esac
if [ -n "${progs_partial:-}" ]; then
    say "no plot without both post and poll; wrote bench/results/latest.md and latest.tsv"
    exit 0
fi
sub="$cpu, $(date -u '+%Y-%m-%d'), $device"
say "plotting"
if gnuplot -e "dat='$tmp/plot'; out='$tmp/latest.png'; subtitle='$sub'" "$top/bench/plot.gp"; then
    cp "$tmp/latest.png" "$res/latest.png"
    say "wrote bench/results/latest.md, latest.png, latest.tsv"
else
    say "gnuplot failed; wrote bench/results/latest.md and latest.tsv"
    exit 1
fi
