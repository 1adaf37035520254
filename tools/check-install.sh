#!/bin/sh
# make install into a scratch PREFIX, then compile and link a C and a C++ program that find
# fastverbs only through pkg-config: proves the installed headers are complete, fastverbs.pc
# is right (libibverbs and libmlx5 through Requires) and nothing but them and the manual
# pages is installed.
set -eu
cc=${1:-gcc}
cxx=${2:-g++}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
make --no-print-directory -s install PREFIX="$tmp/usr" >/dev/null
rm -f fastverbs.pc
extra=$(cd "$tmp/usr" && find . -type f ! -name '*.h' ! -path './lib/pkgconfig/fastverbs.pc' ! -path './share/man/*' \
        ! -path './share/doc/fastverbs/examples/*')
[ -z "$extra" ] || { echo "check-install: FAIL, installed besides headers, fastverbs.pc, pages and examples: $extra"; exit 1; }
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
# The first program builds from where it is installed, as README tells a user to build it.
$cc -std=c11 -Wall -Wextra -Werror $flags -o "$tmp/hello" "$tmp/usr/share/doc/fastverbs/examples/hello.c" $libs
echo "check-install: installed headers and fastverbs.pc ($(pkg-config --modversion fastverbs): $libs) build a C and a C++ program"

# install and uninstall with DESTDIR and PREFIX: the manual pages land under MANDIR (a link page
# per other name, which the formatter follows), and uninstall removes exactly what install
# wrote, leaving other files in the same directories alone.
root="$tmp/root" prefix=/opt/fv
mkdir -p "$root$prefix/include" "$root$prefix/lib/pkgconfig" "$root$prefix/share/man/man3"
for f in include/other.h lib/pkgconfig/other.pc share/man/man3/other.3; do echo keep > "$root$prefix/$f"; done
find "$root" -type f | sort > "$tmp/before"
make --no-print-directory -s install DESTDIR="$root" PREFIX="$prefix" >/dev/null
rm -f fastverbs.pc
man="$root$prefix/share/man"
want=$(tools/man-install.sh list | wc -l)
got=$(find "$man" -type f -name 'fv_*' -o -type f -name 'fastverbs.*' | wc -l)
[ "$got" -eq "$want" ] || { echo "check-install: $got manual pages installed, $want expected" >&2; exit 1; }
(cd "$man" && mandoc -T ascii man3/fv_rc_write_inline.3 | grep -q 'fv_rc_write_inline') ||
    { echo "check-install: man3/fv_rc_write_inline.3 does not lead to its page" >&2; exit 1; }
make --no-print-directory -s uninstall DESTDIR="$root" PREFIX="$prefix" >/dev/null
find "$root" -type f | sort > "$tmp/after"
if ! cmp -s "$tmp/before" "$tmp/after"; then
    echo "check-install: after uninstall the tree differs from before install:" >&2
    diff "$tmp/before" "$tmp/after" >&2 || true
    exit 1
fi
echo "check-install: install put $want manual pages under DESTDIR/PREFIX/share/man; uninstall removed exactly what install wrote"
