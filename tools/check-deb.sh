#!/bin/sh
# Builds the Debian packages (debian/) with dpkg-buildpackage in a scratch copy of the tree,
# so the checkout and its parent get nothing, and checks them: lintian finds no error, and
# each package holds what it should (dpkg-deb -c) and nothing of the other's.
# Skipped, with a note, where dpkg-buildpackage, debhelper or lintian is missing.
set -eu
cd "$(dirname "$0")/.."
for t in dpkg-buildpackage dh lintian; do
    command -v $t >/dev/null 2>&1 || { echo "check-deb: $t not installed, skipped (tools/packages.txt)"; exit 0; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
version=$(tools/version.sh)
changelog=$(dpkg-parsechangelog -S Version)
[ "$changelog" = "$version" ] ||
    { echo "check-deb: debian/changelog says $changelog, the headers $version: add a changelog entry" >&2; exit 1; }

src="$tmp/fastverbs-$version"
mkdir "$src"
tar -c --exclude=./.git --exclude='./build' --exclude='./build-*' . | tar -x -C "$src"
(cd "$src" && dpkg-buildpackage -us -uc -b) > "$tmp/build.log" 2>&1 ||
    { tail -40 "$tmp/build.log" >&2; echo "check-deb: dpkg-buildpackage failed (log above)" >&2; exit 1; }

arch=$(dpkg-architecture -qDEB_HOST_ARCH) multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
dev="$tmp/libfastverbs-dev_${version}_all.deb" sim="$tmp/fastverbs-sim_${version}_$arch.deb"
for d in "$dev" "$sim"; do [ -f "$d" ] || { echo "check-deb: ${d##*/} not built" >&2; exit 1; }; done

bad=0
has() {	# has DEB PATH...: every PATH is a file (or link) in DEB
    deb=$1; shift
    dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' > "$tmp/list"
    for p in "$@"; do
        grep -qxF "$p" "$tmp/list" || { echo "check-deb: ${deb##*/} lacks $p" >&2; bad=$((bad + 1)); }
    done
}
has "$dev" /usr/include/fastverbs/fastverbs.h /usr/include/fastverbs/compat/rdmacm.h \
    /usr/share/pkgconfig/fastverbs.pc /usr/share/cmake/fastverbs/fastverbs-config.cmake \
    /usr/share/cmake/fastverbs/fastverbs-config-version.cmake /usr/share/man/man3/fv_post_send.3.gz \
    /usr/share/man/man7/fastverbs.7.gz /usr/share/doc/libfastverbs-dev/examples/rc_pingpong.c \
    /usr/share/doc/libfastverbs-dev/copyright
grep -q "fvsim\|/usr/bin\|/usr/lib/" "$tmp/list" && { echo "check-deb: libfastverbs-dev holds device files:" >&2;
    grep "fvsim\|/usr/bin\|/usr/lib/" "$tmp/list" >&2; bad=$((bad + 1)); }
has "$sim" /usr/bin/fvsim-run "/usr/lib/$multiarch/fastverbs/libfvsim.so" "/usr/lib/$multiarch/fastverbs/fvsim-sysfs" \
    /usr/include/fvsim.h /usr/share/man/man1/fvsim-run.1.gz /usr/share/man/man7/fvsim.7.gz \
    /usr/share/doc/fastverbs-sim/copyright
grep -q "/usr/include/fastverbs\|man3" "$tmp/list" && { echo "check-deb: fastverbs-sim holds library files:" >&2;
    grep "/usr/include/fastverbs\|man3" "$tmp/list" >&2; bad=$((bad + 1)); }

# The packaged fvsim-run finds the packaged library: unpacked anywhere, it shows mlx5_0.
dpkg-deb -x "$sim" "$tmp/root"
(cd / && "$tmp/root/usr/bin/fvsim-run" ibv_devinfo -l) > "$tmp/devinfo" 2>&1 || true
grep -q mlx5_0 "$tmp/devinfo" || { echo "check-deb: the packaged fvsim-run does not show mlx5_0:" >&2;
    cat "$tmp/devinfo" >&2; bad=$((bad + 1)); }

lintian --fail-on error "$tmp"/fastverbs_"${version}"_"$arch".changes > "$tmp/lintian" 2>&1 ||
    { cat "$tmp/lintian" >&2; echo "check-deb: lintian reports errors" >&2; bad=$((bad + 1)); }
[ "$bad" -eq 0 ] || exit 1
echo "check-deb: dpkg-buildpackage built libfastverbs-dev and fastverbs-sim $version, each with its files;" \
     "lintian: $(grep -c '^E:' "$tmp/lintian" || true) errors, $(grep -c '^W:' "$tmp/lintian" || true) warnings"
