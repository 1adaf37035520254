#!/bin/sh
# check-man must catch each kind of fault: run it on copies of README.md, include/ and man/,
# first unchanged (it must pass), then with one fault each (it must fail). Every fault is in
# fv_ring.3, README.md or include/: only fv_ring.3 is rendered (CHECK_MAN_PAGES).
set -eu
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
top=$(pwd) missed=0 n=0

no_page()        { sed -i 's/^fv_ring \\- /fv_ringx \\- /' man/man3/fv_ring.3; }
not_defined()    { sed -i 's/^Receive: /Receive: `fv_nosuch(\&qp)`, /' README.md; }
no_render()      { printf '.XX\n' >> man/man3/fv_ring.3; }
bad_example()    { sed -i 's/fv_ring(rc);/fv_ring(rc, 1);/' man/man3/fv_ring.3; }
bad_reference()  { sed -i 's/^\.BR fv_poll (3)$/.BR fv_nosuch (3)/' man/man3/fv_ring.3; }
no_section()     { sed -i 's/^\.SH RETURN VALUE$/.SH RETURNS/' man/man3/fv_ring.3; }
wrong_title()    { sed -i 's/^\.TH FV_RING 3/.TH FV_RINGS 3/' man/man3/fv_ring.3; }
public_tag()     { sed -i 's/^struct fv__req {/struct fv_req {/' include/fastverbs/req.h; }
public_table()   { sed -i 's/fv__op_table\[/fv_op_table[/' include/fastverbs/gen/post_send_ops.h; }
wide_table()     { sed -i '1i '"'"'\\" t' man/man3/fv_ring.3
                   sed -i 's/^\.SH RETURN VALUE$/.TS\nl l.\nfv_ring, fv_write, fv_send, fv_read, fv_cas, fv_fadd\tRC, UC, UD, XRC, RAW_PACKET, and more\n.TE\n&/' \
                       man/man3/fv_ring.3; }

check() {	# check FAULT: whether check-man passes on a copy with FAULT (none: unchanged)
    rm -rf "$tmp/t" && mkdir "$tmp/t" && cp -r README.md include man "$tmp/t/"
    (cd "$tmp/t" && if [ "$1" != none ]; then "$1"; fi && CC="${CC:-cc}" CHECK_MAN_EXAMPLES=fv_ring.3 CHECK_MAN_PAGES=fv_ring.3 "$top/tools/check-man.sh") >/dev/null 2>&1
}

check none || { echo "check-man: self-test: check-man fails on an unchanged copy" >&2; exit 1; }
for f in no_page not_defined no_render bad_example bad_reference no_section wrong_title public_tag public_table wide_table; do
    n=$((n + 1))
    if check $f; then
        echo "check-man: self-test: fault '$f' was not caught" >&2
        missed=$((missed + 1))
    fi
done
[ "$missed" -eq 0 ] || exit 1
echo "check-man: self-test: all $n kinds of fault are caught"
