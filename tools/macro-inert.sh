#!/bin/sh
# Exits 0 when defining MACRO changes the preprocessed text of none of the SRC files (so a
# build with -DMACRO would compile exactly what the build without it compiles), 1 naming the
# first file it changes, 2 when a file does not preprocess. make test's notune pass uses it.
# Usage: CC=gcc CXX=g++ FLAGS="-Iinclude ..." macro-inert.sh MACRO SRC...
set -u
macro=$1; shift
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for src in "$@"; do
    case "$src" in *.cpp) cc="${CXX:-g++} -std=c++17" ;; *) cc="${CC:-gcc} -std=c11" ;; esac
    # shellcheck disable=SC2086
    $cc ${FLAGS:-} -E -o "$tmp/without" "$src" && $cc ${FLAGS:-} -D"$macro" -E -o "$tmp/with" "$src" ||
        { echo "macro-inert: $src does not preprocess" >&2; exit 2; }
    cmp -s "$tmp/without" "$tmp/with" || { echo "macro-inert: -D$macro changes $src"; exit 1; }
done
exit 0
