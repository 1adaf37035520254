#!/bin/sh
# make install into a scratch PREFIX, then compile and link a program that finds fastverbs
# only through pkg-config: proves the installed headers are complete and fastverbs.pc is right.
set -eu
cc=${1:-gcc}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
make --no-print-directory -s install PREFIX="$tmp/usr" >/dev/null
rm -f fastverbs.pc
cat > "$tmp/prog.c" <<'PROG'
#include <fastverbs/fastverbs.h>
int main(void) { return FV_VERSION > 0 ? 0 : 1; }
PROG
flags=$(PKG_CONFIG_PATH="$tmp/usr/lib/pkgconfig" pkg-config --cflags --libs fastverbs)
$cc -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE $flags -o "$tmp/prog" "$tmp/prog.c" $flags
"$tmp/prog"
echo "check-install: installed headers and fastverbs.pc build a program ($(PKG_CONFIG_PATH="$tmp/usr/lib/pkgconfig" pkg-config --modversion fastverbs))"
