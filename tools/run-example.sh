#!/bin/sh
# Runs an example program on a real mlx5 device if the machine has one, otherwise on the
# software device through $SIM_RUN (sim/fvsim-run).
set -eu
if ls /sys/class/infiniband/mlx5_* >/dev/null 2>&1 && ls /dev/infiniband/uverbs* >/dev/null 2>&1; then
    echo "run: real mlx5 device found: $(ls /sys/class/infiniband | tr '\n' ' ')"
    exec "$@"
fi
if [ -z "${SIM_RUN:-}" ] || [ ! -x "${SIM_RUN%% *}" ]; then
    echo "run: no mlx5 device here and the software device (sim/) is not built" >&2
    exit 1
fi
echo "run: no mlx5 device here: running on the software device ($SIM_RUN)."
echo "run: its times measure the simulator on this machine's CPUs, not an RDMA NIC: they mean nothing for hardware."
exec $SIM_RUN "$@"
