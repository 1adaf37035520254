#!/bin/sh
# Prints the library version from the umbrella header's FV_VERSION_* macros.
h=$(dirname "$0")/../include/fastverbs/fastverbs.h
v() { sed -n "s/^#define FV_VERSION_$1 *\([0-9]*\).*/\1/p" "$h"; }
echo "$(v MAJOR).$(v MINOR).$(v PATCH)"
