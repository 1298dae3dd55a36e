#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What the ring keeps of a sample, read back through the CLI. On the default compact detail every
# frame is a function (offset 0; in a stripped file the start its unwind table gives, which is the
# function's address in the unstripped file) and times are whole milliseconds at 97 Hz; with
# --detail exact the instruction offsets and microseconds are there.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"
: "${TPROF_BURN_STRIPPED:?run through meson test}"
require_perf
command -v nm >/dev/null || skip "needs nm (binutils)"

: >"$TEST_TMP/empty.yaml"
: >"$TEST_TMP/kmsg"
cp "$TPROF_BURN" "$TEST_TMP/burn-dtl"
cp "$TPROF_BURN_STRIPPED" "$TEST_TMP/burn-dtl-s"

# record DETAIL: six seconds of both burners into a ring of its own, exported as perf script.
record() {
        local p1 p2
        STATE="$TEST_TMP/$1"
        start_tprofd --config "$TEST_TMP/empty.yaml" --rules "$TEST_TMP/empty.yaml" --kmsg "$TEST_TMP/kmsg" \
                --control-socket "" --window 4 --detail "$1"
        "$TEST_TMP/burn-dtl" 6 & p1=$!
        "$TEST_TMP/burn-dtl-s" 6 & p2=$!
        wait "$p1" "$p2"
        stop_tprofd
        expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from -5m --to now --format perf-script \
                -o "$TEST_TMP/$1.script"
}

# samples COMM FILE: that comm's event lines.
samples() { grep -E "^$1 [0-9]+/[0-9]+ " "$2" || true; }
# leaves COMM FILE: the first frame line of each of that comm's samples.
leaves() { awk -v c="$1" '$1 == c && /cpu-clock:$/ { getline; print }' "$2"; }

record compact
grep -q "compact detail (functions, 1000 us)" "$TEST_TMP/tprofd.log" || fail "$(tail -3 "$TEST_TMP/tprofd.log")"
n=$(samples burn-dtl "$TEST_TMP/compact.script" | wc -l)
[ "$n" -ge 50 ] || fail "only $n samples of burn-dtl in 6 s"
# Times: whole milliseconds (the last line of the file may be moved by 1 us for Flamescope).
odd=$(grep -E 'cpu-clock:$' "$TEST_TMP/compact.script" | head -n -1 | grep -cvE '\.[0-9]{3}000: ' || true)
[ "$odd" = 0 ] || fail "$odd sample times are not whole milliseconds: $(grep -E 'cpu-clock:$' "$TEST_TMP/compact.script" | grep -vE '\.[0-9]{3}000: ' | head -3)"
# Frames: functions.
grep -qE '^	[0-9a-f]+ burn_leaf\+0x0 \(' "$TEST_TMP/compact.script" || fail "no burn_leaf+0x0 frame"
off=$(grep -cE '\+0x[0-9a-f]*[1-9a-f][0-9a-f]* \(' "$TEST_TMP/compact.script" || true)
[ "$off" = 0 ] || fail "$off frames keep an offset: $(grep -E '\+0x[0-9a-f]*[1-9a-f][0-9a-f]* \(' "$TEST_TMP/compact.script" | head -3)"
# The stripped burner: its frames are [unknown], at the start of the function they ran in, which
# the unstripped copy's symbol table names (the executable's code is mapped at its file offset).
ns=$(samples burn-dtl-s "$TEST_TMP/compact.script" | wc -l)
[ "$ns" -ge 50 ] || fail "only $ns samples of burn-dtl-s in 6 s"
nm "$TPROF_BURN" | awk '$2 ~ /^[tT]$/ { sub(/^0+/, "", $1); print $1 }' | sort -u >"$TEST_TMP/starts"
leaves burn-dtl-s "$TEST_TMP/compact.script" | awk '$2 == "[unknown]" && $3 ~ /burn-dtl-s/ { print $1 }' |
        sort -u >"$TEST_TMP/leaves"
[ -s "$TEST_TMP/leaves" ] || fail "no [unknown] leaf in the stripped burner: $(leaves burn-dtl-s "$TEST_TMP/compact.script" | sort | uniq -c | head)"
stray=$(comm -23 "$TEST_TMP/leaves" "$TEST_TMP/starts")
[ -z "$stray" ] || fail "leaves that are no function start: $stray (starts: $(tr '\n' ' ' <"$TEST_TMP/starts"))"
grep -qx "$(nm "$TPROF_BURN" | awk '$3 == "burn_leaf" { sub(/^0+/, "", $1); print $1 }')" "$TEST_TMP/leaves" ||
        fail "burn_leaf's start is not among the stripped burner's leaves: $(tr '\n' ' ' <"$TEST_TMP/leaves")"

record exact
grep -q "exact detail" "$TEST_TMP/tprofd.log" || fail "$(tail -3 "$TEST_TMP/tprofd.log")"
micro=$(grep -E 'cpu-clock:$' "$TEST_TMP/exact.script" | grep -cvE '\.[0-9]{3}000: ' || true)
[ "$micro" -gt 0 ] || fail "exact detail kept no microseconds"
grep -qE '^	[0-9a-f]+ burn_leaf\+0x[0-9a-f]*[1-9a-f][0-9a-f]* \(' "$TEST_TMP/exact.script" ||
        fail "exact detail kept no offset in burn_leaf: $(grep burn_leaf "$TEST_TMP/exact.script" | head -3)"
echo ok
