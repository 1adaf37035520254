#!/bin/sh
# Installs the Debian packages listed in tools/packages.txt that are missing (root only);
# otherwise names them and fails, so a plain user knows exactly what to install.
set -eu
dir=$(dirname "$0")
pkgs=$(sed -e 's/#.*//' "$dir/packages.txt" | tr -s ' \t' '\n' | grep -v '^$')
missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && { echo "deps: all packages present"; exit 0; }
if [ "$(id -u)" -ne 0 ]; then
    echo "deps: missing Debian packages:$missing" >&2
    echo "deps: run as root, or: sudo apt-get install$missing" >&2
    exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
