#!/bin/sh
# The two install recipes of docs/install.md, tried as users follow them:
#  1. a packager's: make install DESTDIR=root PREFIX=/usr. The tree holds exactly the headers,
#     fastverbs.pc, the CMake package, the manual pages, the examples (share/doc/fastverbs) and
#     the software device; a C and a C++ program build through pkg-config
#     (PKG_CONFIG_SYSROOT_DIR=root, as /usr/include is a system directory pkg-config leaves
#     out), a CMake consumer through find_package(fastverbs CONFIG) and a Meson one through
#     pkg-config, all against root's headers; the installed fvsim-run, started from another
#     directory, shows mlx5_0 and runs the program built; uninstall leaves no file.
#  2. a user's: make install PREFIX=$HOME/.local, with ~/.local/bin in PATH: fvsim-run found
#     there runs ibv_devinfo, pkg-config and CMake find the package with no more settings.
# Then install and uninstall under a prefix that holds other packages' files, which stay.
# Usage: tools/check-install.sh [CC [CXX]]
set -eu
cd "$(dirname "$0")/.."
cc=${1:-gcc}
cxx=${2:-g++}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-install: FAIL, $*" >&2; exit 1; }
inst() { make --no-print-directory -s "$@" > "$tmp/make.log" 2>&1 || { cat "$tmp/make.log" >&2; fail "make $*"; }; }

cat > "$tmp/prog.c" <<'PROG'
#include <fastverbs/fastverbs.h>
#include <stdio.h>
#include <string.h>
/* With "mlx5" as argument: the first device must be an mlx5 one (the software device). */
int main(int argc, char **argv)
{
	struct ibv_device **l = ibv_get_device_list(NULL);	/* libibverbs, through Requires */
	int want = argc > 1 && !strcmp(argv[1], "mlx5");
	int r = FV_VERSION > 0 ? 0 : 1;

	if (want && !(l && l[0] && mlx5dv_is_supported(l[0])))	/* libmlx5 */
		r = 1;
	if (want && r == 0)
		printf("%s\n", ibv_get_device_name(l[0]));
	if (l)
		ibv_free_device_list(l);
	return r;
}
PROG
cp "$tmp/prog.c" "$tmp/prog.cpp"

# cmake_consumer PREFIX_PATH INCLUDE: a CMake project whose C and C++ programs use
# fastverbs::fastverbs and fastverbs::rdmacm; the package must point at INCLUDE, accept
# version 0.1 and refuse 99.
cmake_consumer() {
    d="$tmp/cmake"
    rm -rf "$d" && mkdir -p "$d"
    cp "$tmp/prog.c" "$tmp/prog.cpp" "$d/"
    cat > "$d/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(consumer C CXX)
find_package(fastverbs 0.1 CONFIG REQUIRED COMPONENTS rdmacm)
get_target_property(inc fastverbs::fastverbs INTERFACE_INCLUDE_DIRECTORIES)
if(NOT inc STREQUAL WANT_INCLUDE)
  message(FATAL_ERROR "fastverbs::fastverbs includes ${inc}, not ${WANT_INCLUDE}")
endif()
find_package(fastverbs 99 CONFIG QUIET)
if(fastverbs_FOUND)
  message(FATAL_ERROR "find_package(fastverbs 99) accepted version ${fastverbs_VERSION}")
endif()
set(CMAKE_C_STANDARD 11)
set(CMAKE_CXX_STANDARD 17)
add_compile_options(-Wall -Wextra -Werror)
add_executable(app prog.c)
target_link_libraries(app PRIVATE fastverbs::fastverbs)
add_executable(appxx prog.cpp)
target_link_libraries(appxx PRIVATE fastverbs::rdmacm)
CMAKE
    sed -i "s|WANT_INCLUDE|\"$2\"|" "$d/CMakeLists.txt"
    { cmake -S "$d" -B "$d/b" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" ${1:+-DCMAKE_PREFIX_PATH="$1"} &&
      cmake --build "$d/b"; } > "$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; fail "the CMake consumer does not build"; }
    "$d/b/app" && "$d/b/appxx" || fail "the CMake consumer's programs fail"
}

# 1. A packager's recipe: DESTDIR and PREFIX=/usr.
root="$tmp/root"
inst install DESTDIR="$root" PREFIX=/usr
extra=$(cd "$root/usr" && find . -type f ! -path './include/fastverbs/*.h' ! -path './include/fastverbs/compat/*.h' ! -path './include/fastverbs/gen/*.h' \
        ! -path './lib/pkgconfig/fastverbs.pc' ! -path './lib/cmake/fastverbs/fastverbs-config*.cmake' \
        ! -path './share/man/man[137]/*.[137]' ! -path ./bin/fvsim-run ! -path ./include/fvsim.h \
        ! -path ./lib/fastverbs/libfvsim.so ! -path ./lib/fastverbs/fvsim-sysfs ! -path './share/doc/fastverbs/examples/*')
[ -z "$extra" ] || fail "installed besides what the package is: $extra"
for f in bin/fvsim-run lib/fastverbs/libfvsim.so lib/fastverbs/fvsim-sysfs lib/cmake/fastverbs/fastverbs-config.cmake \
         share/man/man1/fvsim-run.1 share/man/man7/fvsim.7 include/fvsim.h; do
    [ -f "$root/usr/$f" ] || fail "make install did not install /usr/$f"
done

export PKG_CONFIG_PATH="$root/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
flags=$(pkg-config --cflags fastverbs) libs=$(pkg-config --libs fastverbs)
case " $flags " in *" -I$root/usr/include "*) ;; *) fail "pkg-config --cflags gives '$flags', not -I$root/usr/include";; esac
$cc -std=c11 -Wall -Wextra -Werror $flags -o "$tmp/prog" "$tmp/prog.c" $libs
$cxx -std=c++17 -Wall -Wextra -Werror $flags -o "$tmp/progxx" "$tmp/prog.cpp" $libs
"$tmp/prog" && "$tmp/progxx" || fail "the programs built through pkg-config fail"
# The first program builds from where it is installed, as README tells a user to build it.
$cc -std=c11 -Wall -Wextra -Werror $flags -o "$tmp/hello" "$root/usr/share/doc/fastverbs/examples/hello.c" $libs ||
    fail "the installed examples/hello.c does not build"
if command -v meson >/dev/null 2>&1 && command -v ninja >/dev/null 2>&1; then
    mkdir -p "$tmp/meson" && cp "$tmp/prog.c" "$tmp/meson/"
    cat > "$tmp/meson/meson.build" <<'MESON'
project('consumer', 'c', default_options: ['c_std=c11', 'warning_level=2', 'werror=true'])
executable('app', 'prog.c', dependencies: dependency('fastverbs', version: '>=0.1'))
MESON
    { meson setup "$tmp/meson/b" "$tmp/meson" && ninja -C "$tmp/meson/b" -v; } > "$tmp/meson.log" 2>&1 ||
        { cat "$tmp/meson.log" >&2; fail "the Meson consumer does not build"; }
    grep -q -- "-I$root/usr/include " "$tmp/meson.log" || fail "the Meson consumer did not compile with $root/usr/include"
    "$tmp/meson/b/app" || fail "the Meson consumer's program fails"
    built="C, C++, Meson"
else
    built="C, C++ (meson not installed)"
fi
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
cmake_consumer "$root/usr" "$root/usr/include"

# The installed device, from another directory, also through a link to it.
out=$(cd / && "$root/usr/bin/fvsim-run" ibv_devinfo -l 2>&1) || true
case $out in *mlx5_0*) ;; *) fail "the installed fvsim-run ibv_devinfo -l shows no mlx5_0: $out";; esac
ln -s "$root/usr/bin/fvsim-run" "$tmp/fvsim-link"
out=$(cd / && "$tmp/fvsim-link" "$tmp/prog" mlx5 2>&1) || fail "the program built fails under the installed fvsim-run: $out"
[ "$out" = mlx5_0 ] || fail "the program under the installed fvsim-run found '$out', not mlx5_0"

# Every FVSIM_* setting of sim/README.md's options table is in fvsim-run(1).
for v in $(awk '/^## Options/ { on = 1; next } /^## / { on = 0 } on' sim/README.md | grep -o '^| `FVSIM_[A-Z_]*' | tr -d '|` '); do
    grep -q "^\.BR $v " "$root/usr/share/man/man1/fvsim-run.1" || fail "fvsim-run(1) does not document $v (sim/README.md)"
done

inst uninstall DESTDIR="$root" PREFIX=/usr
left=$(find "$root" -type f -o -type l)
[ -z "$left" ] || fail "files left after uninstall: $left"
for d in include/fastverbs lib/fastverbs lib/cmake/fastverbs; do
    [ ! -e "$root/usr/$d" ] || fail "uninstall left /usr/$d"
done
echo "check-install: DESTDIR + PREFIX=/usr: $built programs build through pkg-config (PKG_CONFIG_SYSROOT_DIR)" \
     "and CMake's fastverbs::fastverbs against the DESTDIR; its fvsim-run runs them on mlx5_0; uninstall leaves no file"

# 2. A user's recipe: PREFIX=$HOME/.local, ~/.local/bin in PATH.
home="$tmp/home"
mkdir -p "$home"
inst install PREFIX="$home/.local"
out=$(cd / && HOME="$home" PATH="$home/.local/bin:$PATH" fvsim-run ibv_devinfo -l 2>&1) || true
case $out in *mlx5_0*) ;; *) fail "fvsim-run in ~/.local/bin shows no mlx5_0: $out";; esac
export PKG_CONFIG_PATH="$home/.local/lib/pkgconfig"
$cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags fastverbs) -o "$tmp/prog" "$tmp/prog.c" $(pkg-config --libs fastverbs)
unset PKG_CONFIG_PATH
path=$PATH
export PATH="$home/.local/bin:$PATH"
cmake_consumer "" "$home/.local/include"
PATH=$path
inst uninstall PREFIX="$home/.local"
left=$(find "$home" -type f -o -type l)
[ -z "$left" ] || fail "files left in ~/.local after uninstall: $left"
echo "check-install: PREFIX=\$HOME/.local: fvsim-run from PATH shows mlx5_0, pkg-config and CMake (through PATH) find the package"

# 3. Under a prefix with other packages' files: the manual pages land under MANDIR (a link
# page per other name, which the formatter follows), and uninstall removes exactly what
# install wrote, leaving the others alone.
root="$tmp/other" prefix=/opt/fv
mkdir -p "$root$prefix/include" "$root$prefix/lib/pkgconfig" "$root$prefix/share/man/man3" "$root$prefix/bin"
for f in include/other.h lib/pkgconfig/other.pc share/man/man3/other.3 bin/other; do echo keep > "$root$prefix/$f"; done
find "$root" -type f | sort > "$tmp/before"
inst install DESTDIR="$root" PREFIX="$prefix"
man="$root$prefix/share/man"
want=$(tools/man-install.sh list | wc -l)
got=$(find "$man" -type f ! -name other.3 | wc -l)
[ "$got" -eq "$want" ] || fail "$got manual pages installed, $want expected"
(cd "$man" && mandoc -T ascii man3/fv_rc_write_inline.3 | grep -q 'fv_rc_write_inline') ||
    fail "man3/fv_rc_write_inline.3 does not lead to its page"
inst uninstall DESTDIR="$root" PREFIX="$prefix"
find "$root" -type f | sort > "$tmp/after"
if ! cmp -s "$tmp/before" "$tmp/after"; then
    diff "$tmp/before" "$tmp/after" >&2 || true
    fail "after uninstall the tree differs from before install (above)"
fi
echo "check-install: $want manual pages under MANDIR; uninstall removed exactly what install wrote, other packages' files stay"
