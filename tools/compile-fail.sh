#!/bin/sh
# Each file in $1 (*.c as C11, *.cpp as C++17) must compile with -DFV_CONTROL (the legal
# twin) and must fail to compile without it, with a diagnostic matching its "expect-error:" line. Proves that an illegal
# (QP type, operation) pair is a compile error rather than a runtime one. A "compile-std:" line
# compiles the failing form with that -std (the twin keeps C11); "expect-errors: N" wants
# exactly N error lines.
set -u
dir=$1; passed=0; failed=0
CC=${CC:-gcc}
CXX=${CXX:-g++}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for f in "$dir"/*.c "$dir"/*.cpp; do
    [ -e "$f" ] || continue
    want=$(sed -n 's|.*expect-error: *||p' "$f" | head -n 1)
    nerr=$(sed -n 's|.*expect-errors: *||p' "$f" | head -n 1)
    std=$(sed -n 's|.*compile-std: *||p' "$f" | head -n 1)
    name=$(basename "$f")
    case "$f" in	# C++ cases: the generic names are overloads there
        *.cpp) cc="$CXX -std=c++17" ;;
        *)     cc="$CC -std=c11" ;;
    esac
    if ! $cc -Wall -Wextra -Werror $CPPFLAGS -DFV_CONTROL -c "$f" -o "$tmp/ok.o" 2>"$tmp/ok.err"; then
        echo "compile-fail: $name: FAIL (legal twin does not compile)"; sed 's/^/    /' "$tmp/ok.err" | head -n 10
        failed=$((failed + 1)); continue
    fi
    bad_cc=$cc; [ -z "$std" ] || bad_cc="${cc% -std=*} -std=$std"
    if $bad_cc -Wall -Wextra -Werror $CPPFLAGS -c "$f" -o "$tmp/bad.o" 2>"$tmp/bad.err"; then
        echo "compile-fail: $name: FAIL (illegal form compiled)"; failed=$((failed + 1)); continue
    fi
    if [ -n "$want" ] && ! grep -Eq "$want" "$tmp/bad.err"; then
        echo "compile-fail: $name: FAIL (no diagnostic matching '$want')"; sed 's/^/    /' "$tmp/bad.err" | head -n 10
        failed=$((failed + 1)); continue
    fi
    if [ -n "$nerr" ] && [ "$(grep -c 'error:' "$tmp/bad.err")" -ne "$nerr" ]; then
        echo "compile-fail: $name: FAIL (not exactly $nerr error(s))"; sed 's/^/    /' "$tmp/bad.err" | head -n 10
        failed=$((failed + 1)); continue
    fi
    echo "compile-fail: $name: ok"; passed=$((passed + 1))
done
echo "compile-fail: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
