#!/bin/sh
# The manual pages (man/man*/*.N) against the public API:
#  - the public functions are the fv_* names README's "API at a glance" section mentions (struct
#    tags aside) and every builder, generic front and typed init ops.h defines on a handle;
#    each must be defined in include/ and named in the NAME section of a page;
#  - every other public name include/ defines (a function or macro fv_*, a macro or enum
#    constant FV_*; internal ones are fv__* / FV__*) is named somewhere on a page;
#  - every page renders without a warning (mandoc -T lint; groff -ww with tbl at a line length of
#    78n, no wider than man(1) shows a page on an 80-column terminal: a table wider warns), is
#    titled after its file, has the sections a reader looks for, and refers (SEE ALSO, .BR)
#    only to fastverbs pages that exist;
#  - every EXAMPLES section is a C file that compiles warning-free against include/ ($CC -O0,
#    where the builders are called, not inlined: the cheapest compile;
#    CHECK_MAN_EXAMPLES=PAGE.N compiles only that page's, for the self-test).
# CHECK_MAN_PAGES=PAGE.N renders and checks that one page alone (the self-test's faults are all
# in one page); the name checks always read every page. Names are looked up in lists made once,
# not with a grep of the tree per name: the self-test runs this eleven times.
# A new family needs a line in README's API section (the project's rule anyway) and one page.
set -eu
for t in mandoc groff; do
    command -v $t >/dev/null || { echo "check-man: $t is not installed (tools/deps.sh)" >&2; exit 1; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bad=0
fail() { echo "check-man: $*" >&2; bad=$((bad + 1)); }

pages=$(ls man/man[1-9]/*.[1-9])

# The public names.
awk '/^## API at a glance/ { on = 1; next } /^## / { on = 0 } on' README.md |
    sed 's/struct fv_[a-z0-9_]*//g' | grep -oE '\bfv_[a-z0-9_]*[a-z0-9]\b' > "$tmp/api" || true
sed -nE 's/^static (FV__ALWAYS_INLINE|inline) int (fv_[a-z0-9_]+)\(struct fv_[a-z]+ \*h,.*/\2/p
        s/^#define (fv_[a-z0-9_]+)\(h, .*/\1/p' include/fastverbs/gen/ops.h >> "$tmp/api"
sort -u "$tmp/api" -o "$tmp/api"

# The names each page's NAME section gives, one "name page" per line (one awk for all pages:
# the self-test runs this eleven times).
awk 'FNR == 1 { on = 0 } /^\.SH / { on = ($2 == "NAME"); next }
     on { line = $0; sub(/ \\-.*/, "", line); n = split(line, part, ",")
          for (i = 1; i <= n; i++) { s = part[i]; sub(/^ */, "", s); sub(/ *$/, "", s); if (s != "") print s " " FILENAME } }' \
    $pages > "$tmp/named"

# Defined: a name followed by "(" after a space or "*", before any "=" or ";", on a line that
# starts with static or #define.
grep -rhE '^(static|#define)' include/ | sed 's/[=;].*//' | grep -oE '[ *]fv_[a-z0-9_]+\(' |
    sed 's/^[ *]//; s/($//' | sort -u > "$tmp/defined"
cut -d' ' -f1 "$tmp/named" | sort -u > "$tmp/namednames"
for f in $(comm -23 "$tmp/api" "$tmp/defined"); do
    fail "$f: in README's API section but not defined in include/"
done
for f in $(comm -23 "$tmp/api" "$tmp/namednames"); do
    fail "$f: no manual page names it (man/man3/*.3, NAME section)"
done

# Every public name of include/, anywhere on a page: functions and function-like macros fv_*,
# struct, union and enum tags fv_*, tables fv_*, macros and enum constants FV_* (include
# guards are FASTVERBS_*).
{ grep -rhoE '^(static|extern|#define)[^=;]*[ *(]fv_[a-z0-9_]+\(' include/fastverbs |
      grep -oE 'fv_[a-z0-9_]+\($' | tr -d '('
  grep -rhoE '\b(struct|union|enum) fv_[a-z0-9_]+' include/fastverbs | grep -oE 'fv_[a-z0-9_]+$'
  grep -rhoE '^(static |extern )?const [^(=;]*\bfv_[a-z0-9_]+ *(\[|=)' include/fastverbs |
      grep -oE 'fv_[a-z0-9_]+ *(\[|=)$' | grep -oE 'fv_[a-z0-9_]+'
  grep -rhoE '\bFV_[A-Z0-9_]+' include/fastverbs; } | grep -vE '^(fv|FV)__' | sort -u > "$tmp/names"
# The pages' words, as grep -w sees them (letters, digits and _).
cat $pages | grep -oE '[A-Za-z0-9_]+' | sort -u > "$tmp/words"
for n in $(comm -23 "$tmp/names" "$tmp/words"); do
    fail "$n: public (no fv__ / FV__ prefix) but on no manual page"
done

for p in $pages; do
    base=${p##*/} sect=${p##*.}
    [ "${CHECK_MAN_PAGES:-$base}" = "$base" ] || continue
    out=$(mandoc -T lint -W warning "$p" 2>&1; groff -t -man -ww -z -Tutf8 -rLL=78n "$p" 2>&1) || true
    [ -z "$out" ] || { fail "$p does not render cleanly:"; echo "$out" >&2; }
    title=$(sed -n 's/^\.TH \([^ ]*\) \([0-9]\).*/\1 \2/p' "$p")
    [ "$title" = "$(echo "${base%.*}" | tr a-z A-Z) $sect" ] || fail "$p: .TH says '$title'"
    need="NAME SYNOPSIS DESCRIPTION"
    [ "$sect" = 3 ] && need="$need RETURN_VALUE EXAMPLES"
    for s in $need SEE_ALSO; do
        grep -q "^\.SH $(echo "$s" | tr _ ' ')\$" "$p" || fail "$p: no $(echo "$s" | tr _ ' ') section"
    done
    if grep -q '^\.SH EXAMPLES$' "$p" && [ "${CHECK_MAN_EXAMPLES:-$base}" = "$base" ]; then
        awk '/^\.SH /{ on = ($0 == ".SH EXAMPLES"); next } on' "$p" | sed '/^\.[nf][fi]$/d; s/^\.sp$//' |
            sed 's/\\-/-/g; s/\\e/\\/g; s/\\&//g' > "$tmp/example.c"
        if grep -q '^[.'"'"']' "$tmp/example.c"; then
            fail "$p: its EXAMPLES section holds requests other than .nf, .fi and .sp"
        elif ! out=$(${CC:-cc} -std=c11 -O0 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -c -o "$tmp/example.o" \
                     -x c "$tmp/example.c" 2>&1); then
            fail "$p: its example does not compile:"; echo "$out" >&2
        fi
    fi
    for ref in $(sed -nE 's/^\.BR (fv_[a-z0-9_]+|fastverbs) \(([0-9])\).*/\1.\2/p' "$p"); do
        [ -e "man/man${ref##*.}/$ref" ] || grep -q "^${ref%.*} man/man${ref##*.}/" "$tmp/named" ||
            fail "$p refers to ${ref%.*}(${ref##*.}), which no page documents"
    done
done

[ "$bad" -eq 0 ] || { echo "check-man: $bad problem(s)" >&2; exit 1; }
echo "check-man: $(wc -l < "$tmp/api") public functions, each named by one of $(echo "$pages" | wc -w) pages that render cleanly, and $(wc -l < "$tmp/names") public names on them; their examples compile"
