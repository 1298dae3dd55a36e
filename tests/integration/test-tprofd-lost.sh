#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Samples the kernel drops reach the ring and the bundles: with the daemon stopped (SIGSTOP) for
# longer than its rings hold at 97 Hz (two seconds of stack copies a CPU), the kernel counts what
# no longer fits in PERF_RECORD_LOST records. The daemon's status, the ring's windows and a bundle
# over those seconds must all say samples were lost, and the windows as many as the daemon saw.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"

require_perf
SOCK="$TEST_TMP/control.sock"
export TPROF_CONTROL_SOCKET="$SOCK"

# Busy CPUs, so that each sample carries a user stack copy and the rings fill.
for _ in $(seq "$(nproc)"); do
        "$TPROF_BURN" 30 &
        on_exit "kill $! 2>/dev/null"
done

# Registered first, so it runs before start_tprofd's kill and wait: a stopped daemon never exits.
on_exit 'kill -CONT "$TPROFD_PID" 2>/dev/null'
start_tprofd --rules "$TPROF_SOURCE_ROOT/rules" --control-socket "$SOCK"
grep -qE "user stacks by (auto|dwarf)" "$TEST_TMP/tprofd.log" ||
        skip "no stack copies here (frame pointers only): small records, rings that do not fill in seconds"
wait_for 10 test -S "$SOCK" || fail "no control socket"
sleep 2
kill -STOP "$TPROFD_PID"
sleep 6
kill -CONT "$TPROFD_PID"

# The kernel writes its PERF_RECORD_LOST once the ring has room again, so the count appears a
# drain or two after the daemon resumed.
status_lost() {
        "$TPROF_BUNDLE" -D "$STATE" status >"$OUT" 2>"$ERR" || return 1
        lost=$(sed -n 's/^ *Samples: [0-9]* kept, \([0-9]*\) lost.*/\1/p' "$OUT")
        [ -n "$lost" ] && [ "$lost" -gt 0 ]
}
wait_for 20 status_lost ||
        fail "the kernel dropped nothing in 6 s of a stopped daemon: $(cat "$OUT" "$ERR"; grep -i 'rings of' "$TEST_TMP/tprofd.log")"
status_lost
echo "daemon: $lost samples lost while stopped"

ID=$("$TPROF_BUNDLE" capture --before 10s --after 1s) || fail "capture failed"
python3 - "$STATE/incidents/$ID/manifest.json" <<'PY' || fail "manifest: $(cat "$STATE/incidents/$ID/manifest.json")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["slice"]["lost"] > 0, m["slice"]
print("bundle: %d samples, %d lost" % (m["slice"]["samples"], m["slice"]["lost"]))
PY
"$TPROF_BUNDLE" -D "$STATE" show "$ID" >"$OUT" 2>"$ERR" || fail "show exited $?: $(cat "$ERR")"
grep -qE "Slice: .* [0-9]+ samples, [1-9][0-9]* lost" "$OUT" || fail "show names no lost samples: $(cat "$OUT")"

stop_tprofd
"$TPROF_BUNDLE" windows --state-dir "$STATE" >"$OUT" 2>"$ERR" || fail "windows exited $?: $(cat "$ERR")"
wlost=$(sed -n 's/^[0-9]* windows\{0,1\}, [0-9]* samples\{0,1\}, \([0-9]*\) lost.*/\1/p' "$OUT")
echo "ring: ${wlost:-?} samples lost"
[ -n "$wlost" ] && [ "$wlost" -ge "$lost" ] || fail "the ring's windows count ${wlost:-no} lost samples, the daemon $lost: $(tail -3 "$OUT")"
echo ok
