#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tprof-bundle windows and export against rings written by the store (store-tool stands in for
# the daemon): the listing and its coverage, range cuts by UTC, local and relative times, the
# perf-script export folding (by stackcollapse-perf.pl's rules) to exactly the folded export,
# Flamescope's constraints, damaged windows named with their offset, and honest exit codes.
set -eu
. "$(dirname "$0")/lib.sh"
: "${STORE_TOOL:?run through meson test}"
command -v python3 >/dev/null || skip "needs python3"
FOLD="$(dirname "$0")/stackcollapse.py"
DATA="$TPROF_SOURCE_ROOT/tests/data/store"

STATE="$TEST_TMP/state"
expect_exit 1 "$TPROF_BUNDLE" -D "$STATE" windows
grep -q "No ring at" "$ERR" || fail "missing ring not explained: $(cat "$ERR")"

# Six minutes of two CPUs at 97 Hz ending now, in 60-second windows.
"$STORE_TOOL" synth "$STATE/ring" 0.1 2 97 60 >/dev/null

expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" windows
head -1 "$OUT" | grep -q '^WINDOW .*SAMPLES' || fail "no table header: $(head -3 "$OUT")"
n=$(grep -c '^synth-.*\.tpw ' "$OUT" || true)
[ "$n" -ge 6 ] || fail "expected >= 6 windows, got $n: $(cat "$OUT")"
grep -qE '^Coverage: .* to .*, (5m|6m)' "$OUT" || fail "coverage line: $(tail -2 "$OUT")"
grep -q '0 gaps' "$OUT" || fail "unexpected gaps: $(tail -2 "$OUT")"

# A range across a window boundary, relative to now ("now" moves between runs, so the
# comparison below uses the same range in epoch seconds).
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from -200s --to -50s --format folded -o "$TEST_TMP/rel.folded"
[ -s "$TEST_TMP/rel.folded" ] || fail "empty folded export of a relative range"
now=$(date +%s)
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from "@$((now - 200))" --to "@$((now - 50))" --format folded -o "$TEST_TMP/a.folded"
[ -s "$TEST_TMP/a.folded" ] || fail "empty folded export"
grep -qvE '^[^ ].* [0-9]+$' "$TEST_TMP/a.folded" && fail "malformed folded line: $(grep -vE '^[^ ].* [0-9]+$' "$TEST_TMP/a.folded" | head -1)"
total=$(awk '{ s += $NF } END { print s }' "$TEST_TMP/a.folded")
# 150 s of 2 CPUs at 97 Hz, give or take the edges
[ "$total" -ge 28000 ] && [ "$total" -le 30000 ] || fail "folded export counts $total samples"

expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from "@$((now - 200))" --to "@$((now - 50))" --format perf-script -o "$TEST_TMP/a.script"
python3 "$FOLD" <"$TEST_TMP/a.script" >"$TEST_TMP/a.refold"
cmp -s "$TEST_TMP/a.refold" "$TEST_TMP/a.folded" || fail "perf-script export does not fold to the folded export: $(diff "$TEST_TMP/a.refold" "$TEST_TMP/a.folded" | head -5)"

# Flamescope: first non-comment line is an event, blank line after the last sample, last
# timestamp not a whole number, one event name.
first=$(grep -v '^#' "$TEST_TMP/a.script" | head -1)
echo "$first" | grep -qE '^[^ 	].* [0-9]+/[0-9]+ \[[0-9]{3}\] [0-9]+\.[0-9]{6}: [0-9]+ cpu-clock:$' || fail "first event line: $first"
[ -z "$(tail -1 "$TEST_TMP/a.script")" ] || fail "no blank line after the last sample"
last_ts=$(grep -E '^[^ 	#].* cpu-clock:$' "$TEST_TMP/a.script" | tail -1 | sed -E 's/.* ([0-9]+\.[0-9]{6}):.*/\1/')
case "$last_ts" in *.000000) fail "last timestamp is whole: $last_ts" ;; esac
[ "$(grep -E '^[^ 	#]' "$TEST_TMP/a.script" | sed -E 's/.* ([^ ]+):$/\1/' | sort -u)" = "cpu-clock" ] || fail "more than one event"
grep -E '^[^ 	#]' "$TEST_TMP/a.script" | sed -E 's/.* ([0-9]+\.[0-9]{6}):.*/\1/' | sort -c -g || fail "samples not in time order"

# Absolute times: the same range in UTC and in local time gives the same folded output.
from_epoch=$(( $(date +%s) - 200 )); to_epoch=$(( $(date +%s) - 60 ))
from_utc=$(date -u -d "@$from_epoch" +%Y-%m-%dT%H:%M:%SZ); to_utc=$(date -u -d "@$to_epoch" +%Y-%m-%dT%H:%M:%SZ)
from_local=$(date -d "@$from_epoch" '+%Y-%m-%d %H:%M:%S'); to_local=$(date -d "@$to_epoch" '+%Y-%m-%d %H:%M:%S')
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from "$from_utc" --to "$to_utc" -o "$TEST_TMP/utc.folded"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from "$from_local" --to "$to_local" -o "$TEST_TMP/local.folded"
cmp -s "$TEST_TMP/utc.folded" "$TEST_TMP/local.folded" || fail "UTC and local ranges differ"

# Nothing in range, bad arguments.
expect_exit 1 "$TPROF_BUNDLE" -D "$STATE" export --from 2001-01-01T00:00:00Z --to 2001-01-01T00:01:00Z
grep -q "No window" "$ERR" || fail "empty range not explained: $(cat "$ERR")"
expect_exit 64 "$TPROF_BUNDLE" -D "$STATE" export --from yesterday-ish --to now
grep -q "Invalid --from 'yesterday-ish'" "$ERR" || fail "bad time not named"
expect_exit 64 "$TPROF_BUNDLE" -D "$STATE" export --from -1m --to now --format svg
expect_exit 64 "$TPROF_BUNDLE" -D "$STATE" export --from now --to -1m
expect_exit 64 "$TPROF_BUNDLE" -D "$STATE" export --to now

# Odd names: imported perf script text, exported both ways, folds must agree.
"$STORE_TOOL" import "$TEST_TMP/odd" 120 <"$DATA/odd-names.perf-script" >/dev/null
expect_exit 0 "$TPROF_BUNDLE" export --ring "$TEST_TMP/odd" --from -2h --to now -o "$TEST_TMP/odd.folded"
expect_exit 0 "$TPROF_BUNDLE" export --ring "$TEST_TMP/odd" --from -2h --to now --format perf-script -o "$TEST_TMP/odd.script"
python3 "$FOLD" <"$TEST_TMP/odd.script" >"$TEST_TMP/odd.refold"
cmp -s "$TEST_TMP/odd.refold" "$TEST_TMP/odd.folded" || fail "odd names do not fold alike: $(diff "$TEST_TMP/odd.refold" "$TEST_TMP/odd.folded")"
grep -q '^my_prog;__libc_start_main;main 2$' "$TEST_TMP/odd.folded" || fail "comm with a blank: $(cat "$TEST_TMP/odd.folded")"
[ "$(wc -l <"$TEST_TMP/odd.folded")" -eq 6 ] || fail "expected 6 stacks: $(cat "$TEST_TMP/odd.folded")"

# A damaged chunk: listed with its offset, skipped by export with a warning naming the file.
victim=$(ls "$STATE"/ring/*.tpw | head -3 | tail -1)
size=$(stat -c %s "$victim")
printf '\x55\x55\x55\x55' | dd of="$victim" bs=1 seek=$(( size / 2 )) conv=notrunc status=none
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" windows --verify
grep -q "corrupt: 1 chunk, first at byte" "$OUT" || fail "damage not listed: $(cat "$OUT")"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from -1h --to now -o "$TEST_TMP/all.folded"
grep -q "damaged chunk.*$(basename "$victim")' at byte offset [0-9]" "$ERR" || fail "damage not reported: $(cat "$ERR")"

# -o onto something that is not a regular file (here a FIFO; /dev/null alike) writes into it: an
# atomic rename would have replaced it with a regular file.
mkfifo "$TEST_TMP/fifo"
cat "$TEST_TMP/fifo" >"$TEST_TMP/from-fifo" &
reader=$!
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from -1h --to now -o "$TEST_TMP/fifo"
[ -p "$TEST_TMP/fifo" ] || { kill "$reader" 2>/dev/null; fail "export -o replaced the FIFO"; }
wait "$reader"
cmp -s "$TEST_TMP/from-fifo" "$TEST_TMP/all.folded" || fail "the FIFO got other bytes than the file"
echo "ok"
