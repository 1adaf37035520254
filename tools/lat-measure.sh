#!/bin/sh
# lat-measure.sh [-r ROUNDS] [-n ITERS] [-t "TOOLS"] [-q | -Q] [DIR...]
# Round-trip latency of the stock busy-polling tools between two processes on the
# software device (FVSIM_FABRIC): ib_send_lat, ib_write_lat (perftest, median
# t_typical, reported one way: printed here as the round trip, 2 x t_typical),
# ibv_rc_pingpong (mean usec/iter, a round trip), and programs that poll memory:
# ucx_put_lat and ucx_am_lat (ucx_perftest -t put_lat / am_lat over rc_mlx5, typical,
# one way: printed as 2 x typical) and pingpong_poll (examples/, fv_poll; its median); with -t,
# also mpi_pingpong (Open MPI over UCX, two ranks of build/tests/mpi/mpi-check under mpirun, the
# 1-byte ping-pong's median; make build/tests/mpi/mpi-check first). Each DIR is a directory holding a
# libfvsim.so and fvsim-sysfs (default: build/sim); with several, each round runs them
# back to back (before/after comparisons). -q runs every pair in a session of its own
# whose autogroup has nice -20 (root only), the nearest to an idle machine a shared one
# allows, though each program then is in a scheduler group of its own; -Q runs the whole
# measurement in one such session instead, so the two programs share one group as they
# do on an idle machine. Prints each round and, per tool and DIR, the median of the rounds.
# Environment: TASKSET="taskset -c 0" (a prefix for both programs), FVSIM_* as usual.
set -eu
# -Q: start over inside a session of our own, whose autogroup has nice -20.
case " $* " in
*" -Q "*)
    if [ -z "${LATM_SESSION:-}" ]; then
        export LATM_SESSION=1
        exec setsid -w sh -c 'echo -20 > /proc/self/autogroup && exec "$0" "$@"' "$0" "$@"
    fi ;;
esac
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=5 iters=1000 quiet=0
tools="ib_send_lat ib_write_lat ibv_rc_pingpong ucx_put_lat ucx_am_lat pingpong_poll"
while getopts r:n:t:qQ o; do
    case $o in
        r) rounds=$OPTARG ;;
        n) iters=$OPTARG ;;
        t) tools=$OPTARG ;;
        q) quiet=1 ;;
        Q) quiet=session ;;
        *) sed -n '2,16p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- "$here/build/sim"
for d in "$@"; do
    [ -e "$d/libfvsim.so" ] || { echo "lat-measure: $d/libfvsim.so missing (make sim-all)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((20000 + $$ % 20000))
fab=latm$$

# mpi DIR: the Open MPI ping-pong's median round trip (the command tests/fabric/mpi.c runs).
mpi() {
    env FVSIM_BUILD="$1" FVSIM_FABRIC=$fab-$port UCX_TLS=rc_mlx5,ud_mlx5,self \
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 150 \
        mpirun -np 2 --allow-run-as-root --oversubscribe --timeout 120 --mca pml ucx \
        --mca btl self -x UCX_TLS -x FVSIM_FABRIC -x FVSIM_BUILD ${TASKSET:-} \
        "$here/sim/fvsim-run" "$here/build/tests/mpi/mpi-check" "$iters" > "$tmp/cli" 2>&1 || :
    rm -f "/dev/shm/fvsim-$(id -u)-$fab-$port"
    awk '/1-byte ping-pong/ { print $(NF-1); ok = 1; exit } END { if (!ok) print "fail" }' "$tmp/cli"
}

# one TOOL DIR: prints the round trip in microseconds (or "fail").
one() {
    tool=$1 dir=$2
    port=$((port + 1))
    if [ "$tool" = mpi_pingpong ]; then mpi "$dir"; return; fi
    sargs="-p $port -n $iters" cargs=localhost prog=$tool
    case $tool in
        ucx_*) prog=ucx_perftest sargs="-p $port"
               cargs="-d mlx5_0:1 -x rc_mlx5 -t ${tool#ucx_} -n $iters localhost" ;;
        pingpong_poll) prog=$here/build/examples/pingpong_poll ;;
    esac
    run="env FVSIM_BUILD=$dir FVSIM_FABRIC=$fab-$port ${TASKSET:-} $here/sim/fvsim-run $prog $sargs"
    wrap=""
    [ "$quiet" = 1 ] && wrap="setsid sh -c 'echo -20 > /proc/self/autogroup; exec \"\$0\" \"\$@\"'"
    eval "$wrap timeout 150 $run" > "$tmp/srv" 2>&1 &
    srv=$!
    ok=0
    for _ in $(seq 50); do
        sleep 0.1
        if eval "$wrap timeout 120 $run $cargs" > "$tmp/cli" 2>&1; then ok=1; break; fi
    done
    wait $srv || ok=0
    rm -f "/dev/shm/fvsim-$(id -u)-$fab-$port"
    [ $ok = 1 ] || { echo fail; return; }
    case $tool in
        ibv_rc_pingpong) awk '/usec\/iter/ { print $(NF-1); exit }' "$tmp/cli" ;;
        ucx_*) awk '/^Final:/ { printf "%.2f\n", 2 * $3; exit }' "$tmp/cli" ;;
        pingpong_poll) awk '/^round trip/ { print $7; exit }' "$tmp/cli" ;;
        *) awk -v n="$iters" '$2 == n && NF >= 6 { printf "%.2f\n", 2 * $5; exit }' "$tmp/cli" ;;
    esac
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg) rounds=$rounds iters=$iters quiet=$quiet ${TASKSET:+taskset: $TASKSET}"
for r in $(seq "$rounds"); do
    for tool in $tools; do
        line="round $r $tool:"
        i=0
        for d in "$@"; do
            i=$((i + 1))
            v=$(one "$tool" "$d")
            echo "$v" >> "$tmp/res-$tool-$i"
            line="$line [$i] $v"
        done
        echo "$line us"
    done
done
echo "# median of $rounds rounds, round trip in us (perftest: 2 x t_typical; ibv_rc_pingpong: usec/iter; ucx: 2 x typical; pingpong_poll, mpi_pingpong: median); load now: $(cut -d' ' -f1-3 /proc/loadavg)"
for tool in $tools; do
    line="$tool:"
    i=0
    for d in "$@"; do
        i=$((i + 1))
        line="$line [$i] $(grep -v fail "$tmp/res-$tool-$i" | median)"
    done
    echo "$line"
done
i=0
for d in "$@"; do i=$((i + 1)); echo "# [$i] = $d"; done
