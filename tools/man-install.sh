#!/bin/sh
# Install or remove the manual pages: man/manN/PAGE.N goes to MANDIR/manN/, and every other name
# a page's NAME section gives (fv_rc_write on fv_write.3, ...) gets a one-line page that points
# at it (.so), so that `man fv_rc_write` finds it. uninstall removes exactly what install wrote;
# directories stay (they may hold other packages' pages).
# Usage: tools/man-install.sh install|uninstall|list MANDIR
set -eu
cd "$(dirname "$0")/.."
what=$1 mandir=${2:-}

# "FILE TARGET" per installed file: TARGET is the page to copy, or "=manN/PAGE.N" for a link.
files() {
    for p in man/man[1-9]/*.[1-9]; do
        sect=${p##*.} page=${p##*/}
        echo "man$sect/$page $p"
        awk '/^\.SH /{ on = ($2 == "NAME"); next } on' "$p" | sed 's/ \\-.*//' | tr ',' '\n' |
            sed 's/^ *//; s/ *$//; /^$/d' | while read -r n; do
                [ "$n.$sect" = "$page" ] || echo "man$sect/$n.$sect =man$sect/$page"
            done
    done
}

case $what in
list)
    files | cut -d' ' -f1 ;;
install)
    files | while read -r f src; do
        install -d "$mandir/${f%/*}"
        case $src in
        =*) printf '.so %s\n' "${src#=}" > "$mandir/$f"; chmod 0644 "$mandir/$f" ;;
        *) install -m 0644 "$src" "$mandir/$f" ;;
        esac
    done ;;
uninstall)
    files | while read -r f src; do rm -f "$mandir/$f"; done ;;
*)
    echo "usage: $0 install|uninstall|list MANDIR" >&2; exit 2 ;;
esac
