#!/bin/sh
# The installed headers build warning-free for every kind of user: C11 without _GNU_SOURCE
# (strict ISO, also -pedantic), C++17 (also -pedantic) and C++20, with gcc/g++ and
# clang/clang++. The probe calls the fast path, the compat calls (fv_wr_* too) and polling,
# so their bodies are compiled, not just parsed. Each compiler also builds it with -DFV_NO_TUNE
# and at -O0 (the plain code of tune.h), and no header but tune.h may test the compiler.
#   tools/check-headers.sh      CC, CXX, CLANG, CLANGXX name the compilers
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/probe.c" <<'PROBE'
#include <fastverbs/fastverbs.h>
int probe(struct fv_rc *rc, struct fv_ud *ud, struct fv_ah *ah, struct fv_cq *cq, struct fv_qp *qp,
	  struct ibv_send_wr *wr, struct ibv_recv_wr *rwr, struct ibv_wc *wc, struct fv_wc *fwc);
int probe(struct fv_rc *rc, struct fv_ud *ud, struct fv_ah *ah, struct fv_cq *cq, struct fv_qp *qp,
	  struct ibv_send_wr *wr, struct ibv_recv_wr *rwr, struct ibv_wc *wc, struct fv_wc *fwc)
{
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_sge s = { 0, 8, 0 };
	int r = fv_write(rc, 1, FV_SIGNALED, &s, 0x1000, 7) + fv_send_inline(ud, 2, 0, "x", 1, ah, 5, 0x11);

	fv_ring(rc);
	fv_ring(ud);
	fv_wr_start(rc);	/* the fv_wr_* fronts, on a typed handle and on a struct fv_qp * */
	fv_wr_rdma_write(rc, 7, 0x1000);
	fv_wr_set_sge(rc, 0, 0, 8);
	fv_wr_send_imm(ud, 0);
	fv_wr_set_ud_addr(ud, ah, 5, 0x11);
	fv_wr_set_inline_data(ud, &s, 1);
	fv_wr_atomic_fetch_add(qp, 7, 0x1000, 1);
	fv_wr_set_sge_list(qp, 1, &s);
	r += fv_wr_complete(rc) + fv_wr_complete(qp);
	fv_wr_abort(ud);
	r += fv_post_send(qp, wr, &bad) + fv_post_recv(qp, rwr, &rbad) + fv_recv(qp, 3, &s, 1);
	return r + fv_poll(cq, fwc, 4) + fv_poll_cq(cq, 4, wc);
}
PROBE
cp "$tmp/probe.c" "$tmp/probe.cpp"
passed=0; failed=0
check() {	# name compiler flags...
    name=$1; cc=$2; shift 2
    command -v "$cc" >/dev/null 2>&1 || { echo "check-headers: $cc not installed, $name skipped"; return; }
    if "$cc" -O2 "$@" -Wall -Wextra -Werror -I"$top/include" -c -o "$tmp/probe.o" 2>"$tmp/err"; then
        passed=$((passed + 1))
    else
        echo "check-headers: $name: FAIL"; sed 's/^/    /' "$tmp/err" | head -n 10; failed=$((failed + 1))
    fi
}
for cc in "${CC:-gcc}" "${CLANG:-clang}"; do
    check "$cc -std=c11" "$cc" -std=c11 "$tmp/probe.c"
    check "$cc -std=c11 -pedantic" "$cc" -std=c11 -pedantic "$tmp/probe.c"
    check "$cc -std=gnu11 -D_GNU_SOURCE" "$cc" -std=gnu11 -D_GNU_SOURCE "$tmp/probe.c"
    check "$cc -std=c11 -DFV_NO_TUNE" "$cc" -std=c11 -DFV_NO_TUNE "$tmp/probe.c"
    check "$cc -std=c11 -O0" "$cc" -O0 -std=c11 "$tmp/probe.c"
done
for cxx in "${CXX:-g++}" "${CLANGXX:-clang++}"; do
    check "$cxx -std=c++17" "$cxx" -std=c++17 "$tmp/probe.cpp"
    check "$cxx -std=c++17 -pedantic" "$cxx" -std=c++17 -pedantic "$tmp/probe.cpp"
    check "$cxx -std=c++20" "$cxx" -std=c++20 "$tmp/probe.cpp"
    check "$cxx -std=c++17 -DFV_NO_TUNE" "$cxx" -std=c++17 -DFV_NO_TUNE "$tmp/probe.cpp"
done
# Compiler tests belong to tune.h alone (its table says what each switch is for).
tests=$(grep -rnE '__(clang|GNUC)__' "$top/include/fastverbs" | grep -v '/tune\.h:')
if [ -n "$tests" ]; then
    echo "check-headers: a compiler test outside tune.h: FAIL"; echo "$tests" | sed 's/^/    /'; failed=$((failed + 1))
fi
echo "check-headers: $passed language/compiler combinations build the headers warning-free, $failed do not"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
