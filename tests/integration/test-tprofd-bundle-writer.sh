#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A bundle is written off the event loop: while the writer thread holds one (the test keeps it
# there with TPROF_TEST_BUNDLE_GATE until a file exists), the daemon keeps sampling and answers
# status, a repeat of the rule joins the incident being written, and a capture whose deadline
# passes meanwhile waits its turn. When the gate opens, both bundles appear and the manifest
# counts the repeat; the held bundle's samples end at its deadline's flush, not at whatever the
# windows grew to while it was held (a later read over the manifest's bounds, as export
# --baseline does, must find the same samples). The real daemon, the real /dev/kmsg and the real CLI.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
command -v python3 >/dev/null || skip "needs python3"

cat >"$TEST_TMP/rules.yaml" <<RULES
defaults: { before: 2s, after: 1s, cooldown: 120s }
rules:
  - name: writer-event
    source: kernel
    origin: any
    match: 'tprof-writer-$TOKEN event'
RULES

GATE="$TEST_TMP/gate"
status() { "$TPROF_BUNDLE" -D "$STATE" status 2>&1 || true; }
samples() { status | sed -n 's/^ *Samples: \([0-9]*\) kept.*/\1/p'; }
writing() { status | grep -q "; 1 on the bundle writer, $1 waiting for it"; }

# Windows of 10 s start on wall-clock multiples of 10 s: the event at a second into one leaves its
# window open for seconds after the slice's end (t + 1 s), growing while the writer is held.
TPROF_TEST_BUNDLE_GATE="$GATE" start_tprofd --rules "$TEST_TMP/rules.yaml" --window 10s
sleep 1
wait_for 15 eval '[ $(( $(date +%s) % 10 )) = 1 ]' || fail "the clock did not reach a second past a multiple of 10"
echo "tprof-writer-$TOKEN event" >/dev/kmsg
wait_for 30 writing 0 || fail "no bundle on the writer: $(status)"

# The event loop is free: status answers, and samples keep arriving.
s1=$(samples)
[ -n "$s1" ] || fail "status gave no sample count: $(status)"
wait_for 30 eval '[ "$(samples)" -gt "$s1" ]' || fail "no samples while the bundle is written: $(status)"

# A repeat inside the cooldown joins the incident being written.
echo "tprof-writer-$TOKEN event" >/dev/kmsg
# A capture whose deadline passes while the writer is busy waits for it.
"$TPROF_BUNDLE" -D "$STATE" capture --before 1s --after 0s >"$TEST_TMP/capture.out" 2>&1 &
CAPTURE=$!
wait_for 30 writing 1 || fail "the capture is not waiting for the writer: $(status)"
! compgen -G "$STATE/incidents/*-writer-event-*/manifest.json" >/dev/null ||
        fail "the bundle was published while the writer was held"

sleep 6 # the windows grow past the flush while the writer is held (a chunk every 5 s)
touch "$GATE"
wait "$CAPTURE" || fail "capture exited $?: $(cat "$TEST_TMP/capture.out")"
wait_for 30 compgen -G "$STATE/incidents/*-writer-event-*/manifest.json" ||
        fail "no bundle of the rule: $(tail "$TEST_TMP/tprofd.log")"
B=$(compgen -G "$STATE/incidents/*-writer-event-*")
# The repeat reaches the manifest within a second of publishing.
repeats() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["repeats"])' "$B/manifest.json"; }
wait_for 10 eval '[ "$(repeats)" = 2 ]' || fail "manifest repeats $(repeats), expected 2: $(cat "$B/manifest.json")"
compgen -G "$STATE/incidents/*-manual-*/manifest.json" >/dev/null || fail "no bundle of the capture"
# The bundle's last sample (the baseline's, after the slice) is its deadline's slack (0.1 s) past
# the slice's end, give or take the event loop's delay: the writer was held for seconds after that
# flush, while the window took another chunk.
past=$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
print((max(m["baseline"]["to_perf_ns"], m["slice"]["to_perf_ns"]) - m["slice"]["to_perf_ns"]) / 1e9)' "$B/manifest.json")
python3 -c 'import sys; sys.exit(float(sys.argv[1]) > 1.0)' "$past" ||
        fail "the bundle's samples run ${past}s past its slice: read while held, not up to its flush: $(ls -l --full-time "$B/windows")"
wait_for 10 eval 'status | grep -q "; 0 on the bundle writer, 0 waiting for it"' || fail "writer still busy: $(status)"
stop_tprofd
n=$(find "$STATE/incidents" -mindepth 1 -maxdepth 1 -type d -name '*-writer-event-*' | wc -l)
[ "$n" = 1 ] || fail "$n bundles of the rule, expected 1"
echo ok
