#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Benchmark of the rules engine: how many log lines per second `tprofd --test-rules` gets through
# with the default rules, against pcre2grep given the same patterns on the same lines.
#
#   contrib/bench-rules.sh [LINES]        (default 1000000; needs python3, pcre2grep, a built tree)
#
# Environment: TPROFD (default build/src/tprofd/tprofd), RULES (default rules/), WORKDIR (where the
# generated logs are kept between runs, default /tmp/tprof-bench-rules), RUNS (best of, default 3).
#
# Both tools run single-threaded on one core (taskset -c 0 when available) and are timed wall-clock
# from start to exit, loading rules and reading the file included. pcre2grep gets the plain
# messages (no "[ 123.456] " stamp, which would defeat the '^' anchors) and is asked only to count
# matching lines (-c); tprofd is measured on that same plain file and on the dmesg-format original,
# with its literal prefilter on and off. The matching line counts must agree.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
LINES=${1:-1000000}
TPROFD=${TPROFD:-$top/build/src/tprofd/tprofd}
RULES=${RULES:-$top/rules}
WORKDIR=${WORKDIR:-/tmp/tprof-bench-rules}
RUNS=${RUNS:-3}

command -v pcre2grep >/dev/null || { echo "pcre2grep not found (Debian: pcre2-utils)" >&2; exit 1; }
[ -x "$TPROFD" ] || { echo "$TPROFD not built (meson setup build && ninja -C build)" >&2; exit 1; }
mkdir -p "$WORKDIR"

log="$WORKDIR/kernel-$LINES.log"
plain="$WORKDIR/kernel-$LINES.plain"
patterns="$WORKDIR/patterns.txt"
if [ ! -s "$log" ]; then
        echo "generating $LINES lines into $log ..." >&2
        python3 "$top/contrib/bench-rules-gen.py" "$LINES" >"$log.tmp"
        mv "$log.tmp" "$log"
fi
[ -s "$plain" ] || sed -E 's/^\[ *[0-9]+\.[0-9]+\] //' "$log" >"$plain"

# The patterns of every rules file, as pcre2grep -f takes them (one per line). The shipped rules
# write each pattern single-quoted on one line; '' inside is a quote. tprofd compiles patterns
# with PCRE2_DUPNAMES (alternatives may name their groups alike); (?J) asks pcre2grep for the same.
find "$RULES" -name '*.yaml' -print0 2>/dev/null | sort -z | xargs -0 cat 2>/dev/null |
        sed -nE "s/^ +match: '(.*)'$/\1/p" | sed -e "s/''/'/g" -e 's/^/(?J)/' >"$patterns"
[ -s "$patterns" ] || { echo "no single-quoted patterns found in $RULES" >&2; exit 1; }

pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)

# best_of CMD...: runs CMD RUNS times with stdout to $WORKDIR/out, prints the fastest wall time in s.
best_of() {
        local best="" t0 t1 t
        for _ in $(seq "$RUNS"); do
                t0=$(date +%s%N)
                "${pin[@]}" "$@" >"$WORKDIR/out" 2>"$WORKDIR/err"
                t1=$(date +%s%N)
                t=$(( (t1 - t0) / 1000 ))
                if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
        done
        echo "$best"
}

report() { # name usec matching-lines
        awk -v n="$1" -v us="$2" -v m="$3" -v lines="$LINES" \
                'BEGIN { printf "%-44s %8.3f s %12.0f lines/s %8d matching lines\n", n, us / 1e6, lines / (us / 1e6), m }'
}

n_patterns=$(wc -l <"$patterns")
echo "$LINES lines ($(du -h "$log" | cut -f1) dmesg format), $n_patterns patterns from $RULES, best of $RUNS"

us=$(best_of "$TPROFD" --test-rules --rules "$RULES" "$log")
report "tprofd --test-rules (dmesg lines)" "$us" "$(cut -f1 "$WORKDIR/out" | uniq | wc -l)"
us=$(best_of "$TPROFD" --test-rules --rules "$RULES" "$plain")
tprofd_plain_matches=$(cut -f1 "$WORKDIR/out" | uniq | wc -l)
report "tprofd --test-rules (plain lines)" "$us" "$tprofd_plain_matches"
us=$(TPROF_RULES_PREFILTER=0 best_of "$TPROFD" --test-rules --rules "$RULES" "$plain")
report "tprofd --test-rules, prefilter off (plain)" "$us" "$(cut -f1 "$WORKDIR/out" | uniq | wc -l)"
us=$(best_of pcre2grep -c -f "$patterns" "$plain")
grep_matches=$(cat "$WORKDIR/out")
report "pcre2grep -c -f patterns.txt (plain lines)" "$us" "$grep_matches"

if [ "$grep_matches" != "$tprofd_plain_matches" ]; then
        echo "MISMATCH: pcre2grep counted $grep_matches matching lines, tprofd $tprofd_plain_matches" >&2
        exit 1
fi
