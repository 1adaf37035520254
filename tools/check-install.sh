#!/bin/sh
# make install into a scratch PREFIX, then compile and link a C and a C++ program that find
# fastverbs only through pkg-config: proves the installed headers are complete, fastverbs.pc
# is right (libibverbs and libmlx5 through Requires) and nothing else is installed.
set -eu
cc=${1:-gcc}
cxx=${2:-g++}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
make --no-print-directory -s install PREFIX="$tmp/usr" >/dev/null
rm -f fastverbs.pc
extra=$(cd "$tmp/usr" && find . -type f ! -name '*.h' ! -path './lib/pkgconfig/fastverbs.pc')
[ -z "$extra" ] || { echo "check-install: FAIL, installed besides the headers and fastverbs.pc: $extra"; exit 1; }
cat > "$tmp/prog.c" <<'PROG'
#include <fastverbs/fastverbs.h>
int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);	/* libibverbs, through Requires */
	int r = FV_VERSION > 0 ? 0 : 1;

	if (l && l[0] && !mlx5dv_is_supported(l[0]))		/* libmlx5 */
		r = 0;
	if (l)
		ibv_free_device_list(l);
	return r;
}
PROG
cp "$tmp/prog.c" "$tmp/prog.cpp"
export PKG_CONFIG_PATH="$tmp/usr/lib/pkgconfig"
flags=$(pkg-config --cflags fastverbs) libs=$(pkg-config --libs fastverbs)
$cc -std=c11 -Wall -Wextra -Werror $flags -o "$tmp/prog" "$tmp/prog.c" $libs
"$tmp/prog"
$cxx -std=c++17 -Wall -Wextra -Werror $flags -o "$tmp/progxx" "$tmp/prog.cpp" $libs
"$tmp/progxx"
echo "check-install: installed headers and fastverbs.pc ($(pkg-config --modversion fastverbs): $libs) build a C and a C++ program"
