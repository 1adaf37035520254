#!/bin/sh
# Install or remove the software device: BINDIR/fvsim-run, SIMDIR/libfvsim.so and
# SIMDIR/fvsim-sysfs (from build/sim, `make sim-all`), and INCLUDEDIR/fvsim.h. The installed
# fvsim-run holds the path from BINDIR to SIMDIR, relative, so it finds its library from
# any directory, and a DESTDIR copy (or a prefix moved whole) runs as it is. uninstall
# removes exactly those files, and SIMDIR when that leaves it empty.
# Usage: tools/sim-install.sh install|uninstall|list DESTDIR BINDIR SIMDIR INCLUDEDIR
set -eu
cd "$(dirname "$0")/.."
[ $# -eq 5 ] || { echo "usage: $0 install|uninstall|list DESTDIR BINDIR SIMDIR INCLUDEDIR" >&2; exit 2; }
what=$1 dest=$2 bindir=$3 simdir=$4 incdir=$5
for d in "$bindir" "$simdir" "$incdir"; do
    case $d in /*) ;; *) echo "sim-install: $d is not an absolute path" >&2; exit 2 ;; esac
done

case $what in
list)
    printf '%s\n' "$bindir/fvsim-run" "$simdir/libfvsim.so" "$simdir/fvsim-sysfs" "$incdir/fvsim.h" ;;
install)
    rel=$(realpath -m --relative-to="$bindir" "$simdir")
    line='out=${FVSIM_BUILD:-$here/../build/sim}'
    grep -qxF "$line" sim/fvsim-run || { echo "sim-install: sim/fvsim-run has no line '$line'" >&2; exit 1; }
    install -d "$dest$bindir" "$dest$simdir" "$dest$incdir"
    tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
    awk -v line="$line" -v new="out=\${FVSIM_BUILD:-\$here/$rel}" '$0 == line { $0 = new } 1' \
        sim/fvsim-run > "$tmp"
    install -m 0755 "$tmp" "$dest$bindir/fvsim-run"
    install -m 0644 build/sim/libfvsim.so "$dest$simdir/libfvsim.so"
    install -m 0755 build/sim/fvsim-sysfs "$dest$simdir/fvsim-sysfs"
    install -m 0644 sim/fvsim.h "$dest$incdir/fvsim.h" ;;
uninstall)
    rm -f "$dest$bindir/fvsim-run" "$dest$simdir/libfvsim.so" "$dest$simdir/fvsim-sysfs" "$dest$incdir/fvsim.h"
    rmdir "$dest$simdir" 2>/dev/null || true ;;
*)
    echo "usage: $0 install|uninstall|list DESTDIR BINDIR SIMDIR INCLUDEDIR" >&2; exit 2 ;;
esac
