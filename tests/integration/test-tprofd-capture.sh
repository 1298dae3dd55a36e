#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Manual capture and status over the control socket, with the real daemon: `tprof-bundle capture`
# waits for its bundle and prints its id; the bundle has rule "manual" and the note; `status`
# reports the running daemon, and falls back to the state directory (exit 3) once it stopped. Then
# the wall clock stepped back under a running daemon: its windows read at the times they are named.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
SOCK="$TEST_TMP/control.sock"
export TPROF_CONTROL_SOCKET="$SOCK"

start_tprofd --rules "$TPROF_SOURCE_ROOT/rules" --window 4s --control-socket "$SOCK" --max-bundles 2
wait_for 10 test -S "$SOCK" || fail "no control socket"
[ "$(stat -c %a "$SOCK")" = 660 ] || fail "control socket mode $(stat -c %a "$SOCK")"
sleep 4

"$TPROF_BUNDLE" -D "$STATE" status >"$OUT" 2>"$ERR" || fail "status exited $?: $(cat "$ERR")"
grep -q "tprofd: running, PID $TPROFD_PID" "$OUT" || fail "status: $(cat "$OUT")"
grep -qE "Sampling: (cpu-clock|cycles) at 97 Hz" "$OUT" || fail "status: $(cat "$OUT")"
# The daemon's memory and its bounded caches, so an operator can tell growth from a leak.
grep -qE "Memory: RSS [0-9.]+[KMG] \(malloc in use [0-9.]+[BKMG]?\); symbol cache [0-9.]+[BKMG]? ?\([0-9]+ files loaded\), unwind tables [0-9.]+[BKMG]?, stack cache [0-9.]+[BKMG]?; [0-9]+ tasks known" "$OUT" ||
        fail "status has no memory line: $(cat "$OUT")"
grep -qE "Full caches: symbol cache dropped 0 times \(0 frames unnamed while their file waited\), unwind tables dropped 0 times \(0 frames walked without their CFI\)" "$OUT" ||
        fail "status has no full-caches line (or this small host filled one): $(cat "$OUT")"

T0=$(date +%s.%N)
ID=$("$TPROF_BUNDLE" capture --before 3s --after 2s --note 'disk stall suspected') || fail "capture failed"
T1=$(date +%s.%N)
awk -v a="$T0" -v b="$T1" 'BEGIN { printf "capture returned after %.2f s (after = 2 s)\n", b - a; exit !(b - a < 5) }' ||
        fail "capture took too long"
B="$STATE/incidents/$ID"
[ -f "$B/manifest.json" ] || fail "capture printed '$ID' but $B has no manifest"
python3 - "$B/manifest.json" <<'PY' || fail "manifest: $(cat "$B/manifest.json")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["rule"]["name"] == "manual" and m["rule"]["source"] == "manual", m["rule"]
assert m["note"] == "disk stall suspected", m["note"]
assert m["event"]["source"] == "manual" and m["event"]["alignment"]["method"] == "capture-request", m["event"]
assert m["status"] == "complete", m["status"]
assert m["slice"]["samples"] > 0
PY
[ -s "$B/stacks.folded" ] || fail "empty stacks.folded"

# Bundles stay within --max-bundles: the oldest goes, with a log line, and releases its windows.
ID2=$("$TPROF_BUNDLE" capture --before 1s --after 1s) || fail "second capture failed"
sleep 1.1 # bundle names carry the second: keep the three apart
ID3=$("$TPROF_BUNDLE" capture --before 1s --after 1s) || fail "third capture failed"
[ ! -e "$B" ] || fail "the oldest bundle $ID survived --max-bundles 2"
[ -d "$STATE/incidents/$ID2" ] && [ -d "$STATE/incidents/$ID3" ] || fail "a newer bundle was removed"
grep -q "Removed bundle $ID to stay within 2 bundles" "$TEST_TMP/tprofd.log" || fail "no log line for the removal"

# Bad values are refused with a reason, not taken.
expect_exit 1 "$TPROF_BUNDLE" capture --before 2h
grep -q "refused the capture: BEFORE_USEC must be at most 15 min" "$ERR" || fail "$(cat "$ERR")"
expect_exit 64 "$TPROF_BUNDLE" capture --after banana

stop_tprofd
expect_exit 3 "$TPROF_BUNDLE" -D "$STATE" status
grep -q "tprofd: not running" "$OUT" || fail "status after stop: $(cat "$OUT")"
grep -q "Bundles: 2 written, 0 being written" "$OUT" || fail "status after stop: $(cat "$OUT")"
expect_exit 1 "$TPROF_BUNDLE" capture
grep -q "tprofd is not running" "$ERR" || fail "$(cat "$ERR")"

# The wall clock stepped back 3 h while the daemon runs (NTP correcting a fast RTC; only tprofd's,
# through tests/helpers/realtime-step.c): the window the step ends early is followed by one named
# by the new time, and its samples read at that time too, not at the one the mapping measured
# before the step (up to a minute earlier) gives, 3 h later.
if grep -q __asan_init "$TPROFD"; then
        echo "clock step: not run (a sanitizer build takes no LD_PRELOAD)"
else
        rm -rf "$STATE/ring"
        echo 0 >"$TEST_TMP/realtime-step"
        TPROF_REALTIME_STEP_FILE="$TEST_TMP/realtime-step" LD_PRELOAD=$TPROF_REALTIME_STEP \
                start_tprofd --rules "$TPROF_SOURCE_ROOT/rules" --window 4s --control-socket "$SOCK"
        sleep 3
        echo -10800 >"$TEST_TMP/realtime-step"
        sleep 9
        stop_tprofd
        expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" windows
        python3 - "$OUT" <<'PY' || fail "windows after the clock step: $(cat "$OUT")"
import calendar, re, sys, time
named = []
for line in open(sys.argv[1]):
    m = re.match(r"\S+-(\d{8}T\d{6})Z-(\d+)s\.tpw +(\S+) ", line)
    if not m or m.group(3) == "-":
        continue
    start = calendar.timegm(time.strptime(m.group(1), "%Y%m%dT%H%M%S"))
    first = calendar.timegm(time.strptime(m.group(3), "%Y-%m-%dT%H:%M:%SZ"))
    # samples drained just after a rotation land in the next window: a few seconds of slack
    assert abs(first - start) <= int(m.group(2)) + 10, line
    named.append(start)
assert named and max(named) - min(named) > 2 * 3600, named  # windows from both sides of the step
PY
fi
echo ok
