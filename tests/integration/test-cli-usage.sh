#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The command lines tell the truth: --help and --version succeed, unknown options and bad values
# are usage errors (64) that name the problem; the man pages and README say what --help, the
# tests and contrib/setup.sh do.
set -eu
. "$(dirname "$0")/lib.sh"

"$TPROFD" --help | grep -q -- '--test-rules' || fail "tprofd --help does not mention --test-rules"
"$TPROFD" --version | grep -qE '^tprofd [0-9]+\.[0-9]+' || fail "tprofd --version"
"$TPROF_BUNDLE" --help | grep -qE '^  ls ' || fail "tprof-bundle --help lists no ls"
"$TPROF_BUNDLE" --version | grep -qE '^tprof-bundle [0-9]' || fail "tprof-bundle --version"

expect_exit 64 "$TPROFD" --no-such-option
grep -q "Unknown option '--no-such-option'" "$ERR" || fail "unknown option not named: $(cat "$ERR")"
expect_exit 64 "$TPROFD" --freq 0
grep -q "Invalid --freq '0'" "$ERR" || fail "bad --freq not named"
expect_exit 64 "$TPROFD" --freq
grep -q "needs an argument" "$ERR" || fail "missing argument not reported"
expect_exit 64 "$TPROFD" --window 1s
expect_exit 64 "$TPROFD" --window banana
expect_exit 64 "$TPROFD" --pid 1
expect_exit 64 "$TPROFD" --max-bundles 0
# --unwind-stack takes multiples of 8 only, and --help says so.
expect_exit 64 "$TPROFD" --unwind-stack 1028
grep -q "a multiple of 8 from 1024 to 32768" "$ERR" || fail "bad --unwind-stack not named: $(cat "$ERR")"
"$TPROFD" --help | grep -A1 -- '--unwind-stack' | tr -s ' \n' ' ' | grep -q 'a multiple of 8' ||
        fail "tprofd --help does not say that --unwind-stack takes multiples of 8"
expect_exit 64 "$TPROFD" --max-bundle-bytes lots
expect_exit 64 "$TPROFD" stray-argument
expect_exit 64 "$TPROF_BUNDLE"
expect_exit 64 "$TPROF_BUNDLE" frobnicate
expect_exit 64 "$TPROF_BUNDLE" --bogus ls
# A mistyped state directory is said to be one, not taken for an empty ring.
expect_exit 1 "$TPROF_BUNDLE" -D "$TEST_TMP/no-such-dir" ls
grep -q "No state directory at '$TEST_TMP/no-such-dir': No such file or directory" "$ERR" || fail "-D typo: $(cat "$ERR")"
expect_exit 64 "$TPROF_BUNDLE" capture --before
grep -q "needs an argument" "$ERR" || fail "capture --before: $(cat "$ERR")"
# No bundles: ls --json still prints a JSON list for a script's jq, and exits 1.
mkdir -p "$TEST_TMP/empty"
expect_exit 1 "$TPROF_BUNDLE" -D "$TEST_TMP/empty" ls --json=short
[ "$(cat "$OUT")" = "[]" ] || fail "ls --json with no bundles printed: $(cat "$OUT")"
# The bundle form of export takes -f as the range form does.
expect_exit 1 "$TPROF_BUNDLE" -D "$TEST_TMP/empty" export 0123 -f folded
grep -q "Unknown option" "$ERR" && fail "export ID -f: $(cat "$ERR")"
# A missing rules file is a configuration error (78) when running, as with --check-config.
expect_exit 78 "$TPROFD" --state-dir "$TEST_TMP/state" --control-socket "" --rules "$TEST_TMP/no-rules.yaml"
expect_exit 78 "$TPROFD" --check-config --rules "$TEST_TMP/no-rules.yaml"
# A rules.d file named .yml is not read, and is said not to be.
mkdir -p "$TEST_TMP/rules.d"
cp "$TPROF_SOURCE_ROOT/rules/default.yaml" "$TEST_TMP/rules.d/10-default.yaml"
printf 'rules:\n  - name: mine\n    match: x\n' >"$TEST_TMP/rules.d/20-mine.yml"
expect_exit 0 "$TPROFD" --check-config --rules "$TEST_TMP/rules.d"
grep -q "20-mine.yml: not read (rules files end in .yaml)" "$ERR" || fail ".yml not warned about: $(cat "$ERR")"
# --test-rules checks every file before reading any: a directory is named as one.
echo "INFO: task kworker/0:1:12 blocked for more than 120 seconds." >"$TEST_TMP/lines.txt"
expect_exit 1 "$TPROFD" --test-rules --rules "$TPROF_SOURCE_ROOT/rules/default.yaml" "$TEST_TMP/lines.txt" "$TEST_TMP"
grep -q "Is a directory" "$ERR" || fail "--test-rules on a directory: $(cat "$ERR")"
[ ! -s "$OUT" ] || fail "--test-rules printed matches before failing on its last file: $(cat "$OUT")"
# --once on a process that is not there says so.
sh -c 'exit 0' & gone=$!
wait "$gone"
expect_exit 1 "$TPROFD" --once 1 --pid "$gone"
grep -q "no such process" "$ERR" || fail "--once --pid of a gone process: $(cat "$ERR")"
# The man pages name every option --help lists, of each program and each of tprof-bundle's commands,
# and every exit status --help gives.
man_text() {
        sed 's/\\-/-/g; s/\\f[BIRP]//g' "$TPROF_SOURCE_ROOT/man/$1"
}
# check_man PAGE HELP-TEXT
check_man() {
        local text status o
        text=$(man_text "$1")
        status=$(man_text "$1" | awk '/^\.SH /{ p = $0 == ".SH EXIT STATUS" } p')
        for o in $(grep -oE -- '--[a-z][a-z-]*' <<<"$2" | sort -u); do
                grep -qF -- "$o" <<<"$text" || fail "man/$1 does not name $o, which --help lists"
        done
        for o in $(sed -n '/^Exit status:/,$p' <<<"$2" | grep -oE '(^|[ :,])[0-9]+ (on|when|from)' | grep -oE '[0-9]+'); do
                grep -qw -- "$o" <<<"$status" || fail "man/$1's EXIT STATUS does not give $o, which --help does"
        done
}
check_man tprofd.8 "$("$TPROFD" --help)"
help=$("$TPROF_BUNDLE" --help)
for c in ls show export "export 0123" report windows rm open capture status; do
        help+=$'\n'$("$TPROF_BUNDLE" $c --help)
done
check_man tprof-bundle.1 "$help"
# README and tprof-bundle(1) say which commands take -D after them: those whose --help lists it. A
# bundle's export (export ID) does not, a range's does.
said=$(tr '\n' ' ' <"$TPROF_SOURCE_ROOT/README.md" | grep -oE '`--state-dir` \(also taken after [^)]*\)' || true)
said_man=$(man_text tprof-bundle.1 | tr '\n' ' ' | grep -oE 'Given before the command \([^)]*also take it after[^)]*\)' || true)
[ -n "$said" ] && [ -n "$said_man" ] || fail "README or tprof-bundle(1) no longer says which commands take -D after them"
for c in export report windows; do
        grep -qF -- "\`$c\`" <<<"$said" || fail "README does not say that $c takes -D after it, as its --help does"
        grep -qw -- "$c" <<<"$said_man" || fail "tprof-bundle(1) does not say that $c takes -D after it, as its --help does"
        "$TPROF_BUNDLE" $c --help | grep -q -- '--state-dir' || fail "tprof-bundle $c --help lists no --state-dir"
done
if ! "$TPROF_BUNDLE" export 0123 --help | grep -q -- '--state-dir'; then
        grep -qF "a range's \`export\`" <<<"$said" || fail "README says that a bundle's export takes -D after it: $said"
        grep -qF "a range's export" <<<"$said_man" || fail "tprof-bundle(1) says that a bundle's export takes -D after it: $said_man"
fi
# Each short option --help pairs with a long one, its man page pairs with the same long one; README
# names every long option either program's --help lists.
check_man_short() {
        local s l
        while read -r s l; do
                grep -qF -- "$s \", \" $l" <<<"$(man_text "$1")" || fail "man/$1 does not give $s as $l, as --help does"
        done < <(sed -nE 's/^ +(-[a-zA-Z0-9]) (--[a-z][a-z-]*).*/\1 \2/p' <<<"$2")
}
check_man_short tprofd.8 "$("$TPROFD" --help)"
check_man_short tprof-bundle.1 "$help"
for o in $(grep -oE -- '--[a-z][a-z-]*' <<<"$("$TPROFD" --help)"$'\n'"$help" | sort -u); do
        grep -qE -- "$o([^a-z-]|\$)" "$TPROF_SOURCE_ROOT/README.md" || fail "README does not name $o, which --help lists"
done
# A stripped file's frames are named after the file (test-sampler-hostile's [burn-stripped]), and
# the man page's --detail says so.
man_text tprofd.8 | sed -n '/^\.BI --detail/,/^\.TP/p' | tr '\n' ' ' | grep -qE 'stripped files[^;]*named after the file' ||
        fail "man/tprofd.8's --detail does not say that a stripped file's frames are named after the file"
# README names each capability the service unit says tprofd needs to sample, read the kernel log
# and read other processes' binaries, as tprofd(8) does.
needs=$(tr '\n' ' ' <"$TPROF_SOURCE_ROOT/README.md" | grep -oE 'Needs root, or [^(]*(\([^)]*\)[^(]*)*\(see `contrib/tprofd.service.in`\)')
[ -n "$needs" ] || fail "README's tprofd section says not what tprofd needs"
for cap in $(sed -n '/^# Sampling needs/,/^CapabilityBoundingSet/p' "$TPROF_SOURCE_ROOT/contrib/tprofd.service.in" |
             tr '\n' ' ' | sed 's/; setting the bundle group.*//' | grep -oE 'CAP_[A-Z_]+' | sort -u); do
        grep -qw -- "$cap" <<<"$needs" || fail "README's tprofd section does not name $cap"
        man_text tprofd.8 | grep -qw -- "$cap" || fail "man/tprofd.8 does not name $cap"
done
# Every environment variable the programs read is in a man page, but systemd's JOURNAL_STREAM and
# the knobs of the tests and benchmarks.
for v in $(grep -rhoE '(secure_)?getenv\("[A-Za-z_]+"\)' "$TPROF_SOURCE_ROOT/src" | sed -E 's/.*\("(.*)"\)/\1/' | sort -u); do
        case $v in JOURNAL_STREAM | TPROF_TEST_* | TPROF_BOOT_ID_PATH | TPROF_RULES_PREFILTER) continue ;; esac
        cat "$TPROF_SOURCE_ROOT"/man/*.[18] | grep -qw -- "$v" || fail "no man page names \$$v, which the programs read"
done
# What --help says of an option's machines, README's table of options says too.
if "$TPROFD" --help | grep -q 'auto and dwarf on x86-64 only'; then
        grep -E '^\| `--unwind MODE`' "$TPROF_SOURCE_ROOT/README.md" | grep -q 'x86-64 only' ||
                fail "README's row of --unwind does not say that auto and dwarf are x86-64's only, as --help does"
fi
# docs/testing.md's arm64 paragraph and contrib/cross-check.sh name every unit test that skips off x86-64.
arm64=$(sed -n '/^arm64, optional/,/^$/p' "$TPROF_SOURCE_ROOT/docs/testing.md")
for f in "$TPROF_SOURCE_ROOT"/tests/test-*.c; do
        awk '/^#if !defined\(__x86_64__\)/ { p = 1 } p && /EXIT_TEST_SKIP/ { found = 1 } /^#endif/ { p = 0 }
             END { exit !found }' "$f" || continue
        t=$(basename "$f" .c)
        grep -qF "\`$t\`" <<<"$arm64" || fail "docs/testing.md's arm64 paragraph does not name $t, which skips there"
        grep -qE "(^|[ (])$t([ ,)]|$)" "$TPROF_SOURCE_ROOT/contrib/cross-check.sh" ||
                fail "contrib/cross-check.sh does not name $t, which skips on arm64"
done
# README's quick start says what contrib/setup.sh test installs beside Debian's packages.
want=$(sed -n 's/^SPEEDSCOPE_VERSION=\([0-9.]*\)$/\1/p' "$TPROF_SOURCE_ROOT/contrib/setup.sh")
sed -n '/^## Quick start/,/^## How it works/p' "$TPROF_SOURCE_ROOT/README.md" | tr '\n' ' ' |
        grep -qF "speedscope $want" || fail "README's quick start does not say that setup.sh test installs speedscope $want"
# README and docs/design.md give the daemon's bounds of the recent log lines it keeps per source.
lines=$(sed -n 's/^#define LOG_CONTEXT_LINES_MAX \([0-9]*\)U$/\1/p' "$TPROF_SOURCE_ROOT/src/tprofd/manager.c")
mib=$(sed -n 's/^#define LOG_CONTEXT_BYTES_MAX (UINT64_C(\([0-9]*\)) << 20)$/\1/p' "$TPROF_SOURCE_ROOT/src/tprofd/manager.c")
[ -n "$lines" ] && [ -n "$mib" ] || fail "manager.c defines no LOG_CONTEXT_LINES_MAX or LOG_CONTEXT_BYTES_MAX"
lines=$(sed -E ':a; s/([0-9])([0-9]{3})($|[^0-9])/\1,\2\3/; ta' <<<"$lines")
for f in README.md docs/design.md; do
        tr '\n' ' ' <"$TPROF_SOURCE_ROOT/$f" | grep -qE "per source \($lines lines, $mib MiB,? (and )?15 minutes each\)" ||
                fail "$f does not give the log context's bounds, $lines lines and $mib MiB per source"
done
# README counts the defects the fuzzers found as there are regression inputs kept.
words=(zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen)
found=$(sed -n 's/.*the fuzzers \(have \)\?found \([a-z]*\) defects.*/\2/p' "$TPROF_SOURCE_ROOT/README.md")
kept=$(find "$TPROF_SOURCE_ROOT/tests/fuzz/regressions" -type f | wc -l)
[ "$found" = "${words[$kept]:-$kept}" ] || fail "README: the fuzzers found $found defects; $kept regression inputs are kept"
# The list of commands says what export writes.
"$TPROF_BUNDLE" --help | grep -E '^  export ' | grep -q 'pprof' || fail "tprof-bundle --help: export names no pprof"
echo "ok"
