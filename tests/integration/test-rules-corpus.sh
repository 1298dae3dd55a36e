#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shipped rules on the corpus of tests/data/rules-corpus/: for every event family, the lines
# each kernel and ENA driver version prints, written from their format strings, and the near
# misses. Every line must be matched by exactly the rule its first column names, or by none when
# it says "-"; the prefilter must not change that; and every file must hold an event line for each
# version its "#% versions:" line lists. Prints every wrong line (file:line, version, source,
# expected, got, text) and, at the end, the coverage table family x version.
#
# CORPUS and RULES may be set to run the same checks on other files (the test of this test does).
set -eu
. "$(dirname "$0")/lib.sh"

self_check=yes
[ -z "${RULES:-}" ] || self_check=no # other rules: check them only
RULES=${RULES:-$TPROF_SOURCE_ROOT/rules/default.yaml}
CORPUS=${CORPUS:-$TPROF_SOURCE_ROOT/tests/data/rules-corpus}

expect_exit 0 "$TPROFD" --check-config --rules "$RULES"

table="$TEST_TMP/coverage"
: >"$table"

# check_family FILE RULES: checks one corpus file against RULES; prints every wrong line and every
# promised version without an event line to stderr, adds the family's counts to $table, and
# returns 1 if anything was wrong.
check_family() {
        local file=$1 rules=$2 family rows bad=0
        family=$(basename "$file" .txt)
        rows="$TEST_TMP/$family.rows"
        # Corpus rows: line number in the file, expected, version, source, text.
        awk -F'\t' '!/^#/ && NF > 0 {
                if (NF != 4) { printf "%s:%d: %d columns, expected 4\n", FILENAME, NR, NF > "/dev/stderr"; bad = 1; next }
                printf "%d\t%s\t%s\t%s\t%s\n", NR, $1, $2, $3, $4
        } END { exit bad }' "$file" >"$rows" || fail "$family: malformed corpus file"
        [ -s "$rows" ] || fail "$family: no lines"
        cut -f5 "$rows" >"$TEST_TMP/$family.log"

        expect_exit 0 "$TPROFD" --test-rules --rules "$rules" "$TEST_TMP/$family.log"
        cp "$OUT" "$TEST_TMP/$family.got"
        # Its exit status counts: this function runs where set -e does not (if, ||), and a run that
        # failed printed what a family that matches nothing prints.
        TPROF_RULES_PREFILTER=0 expect_exit 0 "$TPROFD" --test-rules --rules "$rules" "$TEST_TMP/$family.log"
        cp "$OUT" "$TEST_TMP/$family.noprefilter"
        cmp -s "$TEST_TMP/$family.got" "$TEST_TMP/$family.noprefilter" ||
                fail "$family: the prefilter changed the matches: $(diff "$TEST_TMP/$family.got" "$TEST_TMP/$family.noprefilter" | head -5)"

        # Join: for each corpus row (by its position in the log), the rules that matched it. The
        # verdicts are told from the rows by file name, not by FNR == NR: a family of which no line
        # matched has an empty verdicts file, and its rows must still be read as rows.
        awk -F'\t' -v fam="$family" -v file="$file" -v table="$table" '
                FILENAME == ARGV[1] { got[$1] = (got[$1] == "" ? $2 : got[$1] "," $2); next }
                {
                        n++
                        want = $2; have = (n in got) ? got[n] : "-"
                        if (want != have) {
                                printf "%s:%d: %s (%s): expected %s, got %s: %s\n", file, $1, $3, $4, want, have, $5
                                bad++
                        }
                        if (want != "-") events[$3]++
                }
                END {
                        for (v in events) printf "%s\t%s\t%d\n", fam, v, events[v] >> table
                        exit bad > 0
                }' "$TEST_TMP/$family.got" "$rows" >&2 || bad=1

        # Every version the file promises has at least one event line.
        awk -F'\t' -v file="$file" -v promised="$(sed -n 's/^#% versions: //p' "$file")" '
                $2 != "-" { seen[$3] = 1 }
                END {
                        n = split(promised, vs, " ")
                        for (i = 1; i <= n; i++)
                                if (!(vs[i] in seen)) { printf "%s: no event line for %s\n", file, vs[i]; bad = 1 }
                        exit bad
                }' "$rows" >&2 || bad=1
        return $bad
}

# First, that this test can fail: a rule that lost one alternative (the OOM killer's header line)
# must be reported on exactly the lines that alternative exists for.
if [ "$self_check" = yes ]; then
        sed 's/ invoked oom-killer: gfp_mask=/ invoked the oom-killer: gfp_mask=/' "$RULES" >"$TEST_TMP/broken.yaml"
        cmp -s "$RULES" "$TEST_TMP/broken.yaml" && fail "could not break the oom-kill rule for the self-check"
        if check_family "$CORPUS/oom.txt" "$TEST_TMP/broken.yaml" 2>"$TEST_TMP/broken.err"; then
                fail "a broken oom-kill rule passed the corpus"
        fi
        n_kernel_header=$(grep -E '^oom-kill' "$CORPUS/oom.txt" | grep -c 'invoked oom-killer')
        [ "$(grep -c 'expected oom-kill, got -: .*invoked oom-killer' "$TEST_TMP/broken.err")" = "$n_kernel_header" ] ||
                fail "the broken rule was not reported on its $n_kernel_header header lines: $(head -c 1000 "$TEST_TMP/broken.err")"
        [ "$(wc -l <"$TEST_TMP/broken.err")" = "$n_kernel_header" ] ||
                fail "the broken rule was reported on other lines too: $(head -c 1000 "$TEST_TMP/broken.err")"
        # And a family none of whose lines any rule matches (its one rule broken) must fail as well.
        sed 's/sched: RT throttling activated/sched: RT throttling engaged/' "$RULES" >"$TEST_TMP/broken-rt.yaml"
        cmp -s "$RULES" "$TEST_TMP/broken-rt.yaml" && fail "could not break the rt-throttling rule for the self-check"
        if check_family "$CORPUS/rt-throttling.txt" "$TEST_TMP/broken-rt.yaml" 2>"$TEST_TMP/broken-rt.err"; then
                fail "a broken rt-throttling rule, which matches none of its family's lines, passed the corpus"
        fi
        n_rt=$(grep -c '^rt-throttling' "$CORPUS/rt-throttling.txt")
        [ "$(grep -c 'expected rt-throttling, got -' "$TEST_TMP/broken-rt.err")" = "$n_rt" ] ||
                fail "the broken rt-throttling rule was not reported on its $n_rt lines: $(head -c 1000 "$TEST_TMP/broken-rt.err")"
fi
: >"$table"

errors=0
for file in "$CORPUS"/*.txt; do
        check_family "$file" "$RULES" || errors=$((errors + 1))
done

# The corpus's dmesg lines in the other text forms (lib.sh's DMESG_FORMS: kern.log, dmesg -T, -x,
# -r and iso, journalctl's short modes, syslog): the same verdict on every line in each form,
# matched or not. The pasted-*.txt files are left out: a bracket there may begin another tool's
# form (journalctl -o short-monotonic's "[  245.5] kernel: m"), which no other form wraps.
if [ "$self_check" = yes ]; then
        awk -F'\t' 'FILENAME !~ /\/pasted-[^\/]*$/ && !/^#/ && NF == 4 && $4 ~ /^\[ *[0-9]+\.[0-9]+\] / { print $1 "\t" $4 }' \
                "$CORPUS"/*.txt >"$TEST_TMP/dmesg-rows"
        [ "$(wc -l <"$TEST_TMP/dmesg-rows")" -ge 100 ] || fail "fewer dmesg lines in the corpus than expected"
        for form in "${!DMESG_FORMS[@]}"; do
                cut -f2 "$TEST_TMP/dmesg-rows" | sed "${DMESG_FORMS[$form]}" >"$TEST_TMP/form.log"
                cmp -s "$TEST_TMP/form.log" <(cut -f2 "$TEST_TMP/dmesg-rows") && fail "$form: sed changed nothing"
                "$TPROFD" --test-rules --rules "$RULES" "$TEST_TMP/form.log" >"$TEST_TMP/form.got" 2>/dev/null
                awk -F'\t' 'FILENAME == ARGV[1] { got[$1] = (got[$1] == "" ? $2 : got[$1] "," $2); next }
                        { n++; have = (n in got) ? got[n] : "-"
                          if ($1 != have) { printf "expected %s, got %s: %s\n", $1, have, $2; bad = 1 } }
                        END { exit bad }' "$TEST_TMP/form.got" "$TEST_TMP/dmesg-rows" >&2 ||
                        fail "the corpus's dmesg lines as $form: wrong verdicts (listed above)"
        done
fi

# The coverage table: event lines per family and version.
awk -F'\t' '
        { fam[$1] = 1; ver[$2] = 1; n[$1 SUBSEP $2] = $3 }
        END {
                nv = 0
                for (v in ver) vs[++nv] = v
                # versions in a stable, readable order: linux-* by number, then ena-*, then the rest
                for (i = 1; i <= nv; i++) for (j = i + 1; j <= nv; j++) if (key(vs[j]) < key(vs[i])) { t = vs[i]; vs[i] = vs[j]; vs[j] = t }
                printf "%-16s", "family"
                for (i = 1; i <= nv; i++) printf " %s", vs[i]
                printf "\n"
                for (f in fam) {
                        printf "%-16s", f
                        for (i = 1; i <= nv; i++) printf " %*s", length(vs[i]), ((f SUBSEP vs[i]) in n) ? n[f SUBSEP vs[i]] : "."
                        printf "\n"
                }
        }
        function key(v,   p, a) {
                p = v ~ /^linux-/ ? "1" : v ~ /^ena-/ ? "2" : "3"
                sub(/^[a-z]+-/, "", v)
                split(v, a, ".")
                return sprintf("%s%04d%04d%04d", p, a[1], a[2], a[3])
        }' "$table" >"$TEST_TMP/table"
head -n 1 "$TEST_TMP/table"
tail -n +2 "$TEST_TMP/table" | sort

[ "$errors" = 0 ] || fail "$errors corpus files have wrong matches or missing versions (listed above)"
echo "ok"
