#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A planted anomaly that only the event's own seconds show, end to end with the real daemon: two
# burners run for 3 s around a trigger written to /dev/kmsg and not before; the slice is 25 s,
# which dilutes them. The bundle's event.folded (t +- 5 s) holds the whole burst, its samples are
# part of stacks.folded, and tprof-bundle show lists the burner among what rose around the event.
# (Which process comes first there, and in the summary, depends on what else the machine runs in
# those seconds; test-bundle-cli checks the ranking and the summary on fixed bundles.)
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
require_burn

cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: burst
    source: kernel
    origin: any
    match: 'tprof-burst-$TOKEN'
    before: 20s
    after: 5s
RULES
# Its own name, so that its samples are its own process's, and this run's: another suite on the
# machine runs burners of its own at the same time (comm "burst-" and the token, 14 bytes).
BURNER=burst-$TOKEN
cp "$TPROF_BURN" "$TEST_TMP/$BURNER"

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s
sleep 18
# Under AddressSanitizer a burner that exits checks for leaks from a task it clones for that (a
# process of its own, of the burner's name), a third process of that name in the slice: not here,
# where the burners' leaks are not what is tested.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$TEST_TMP/$BURNER" 3 &
BURST1=$!
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$TEST_TMP/$BURNER" 3 &
BURST2=$!
on_exit "kill $BURST1 $BURST2 2>/dev/null"
sleep 1.5
echo "tprof-burst-$TOKEN now" >/dev/kmsg
wait "$BURST1" "$BURST2" || true

bundle_wait burst 20

# event.folded: part of the slice, and where the burst is.
python3 - "$B/event.folded" "$B/stacks.folded" "$BURNER" <<'PY' || fail "event.folded: $(head "$B/event.folded")"
import sys
def load(p):
    d = {}
    for line in open(p):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        d[stack] = int(n)
    return d
near, whole = load(sys.argv[1]), load(sys.argv[2])
for stack, n in near.items():
    assert whole.get(stack, 0) >= n, (stack, n, whole.get(stack))
burner = sys.argv[3] + ";"
burst_near = sum(n for s, n in near.items() if s.startswith(burner))
burst_whole = sum(n for s, n in whole.items() if s.startswith(burner))
assert burst_near >= 100, burst_near  # 2 x 3 s at 97 Hz, on a busy machine less
assert burst_near == burst_whole, (burst_near, burst_whole)
PY

# The two burners are two processes of one name: show says so after it.
"$TPROF_BUNDLE" -D "$STATE" show >"$OUT" 2>"$ERR" || fail "show: $(cat "$ERR")"
sed -n '/^Around the event (5s before .. 5s after)/,/^  Functions/p' "$OUT" |
        grep -qE "^  $BURNER"' \(2 processes\) +[0-9.]+% \(rest +<?[0-9.]+%\) +burn_leaf +z=' ||
        fail "the burst is not among the rises around the event: $(sed -n '/^Around/,/^Services/p' "$OUT")"
echo "ok"
