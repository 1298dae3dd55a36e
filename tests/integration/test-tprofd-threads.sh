#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A rise spread over the threads of one process, end to end with the real daemon: a pool of 6
# threads named after it (POOL-0 ... POOL-5), each a quarter of a CPU at most, works from 1.5 s
# before a trigger written to /dev/kmsg until after the bundle is written, and not before. The
# manifest lists the threads with their process, and tprof-bundle show ranks them as one,
# "POOL-*", the pool's threads, among what rose around the event; --json names the pool as whose
# threads they are. (Which process comes first depends on what else the machine runs in those
# seconds; test-bundle-cgroups checks that the group is the answer where no thread alone is.)
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
require_burn

cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: pool
    source: kernel
    origin: any
    match: 'tprof-pool-$TOKEN'
    before: 20s
    after: 2s
RULES
# This run's name (11 bytes, its threads' 13): another suite may run pools of its own at once.
POOL=pl-$TOKEN
cp "$TPROF_BURN" "$TEST_TMP/$POOL"

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s
sleep 18
# Alive until the bundle is written: the daemon names a thread's process from /proc then, its
# main thread never running.
"$TEST_TMP/$POOL" --threads 6 7 &
PID=$!
on_exit "kill $PID 2>/dev/null"
sleep 1.5
echo "tprof-pool-$TOKEN now" >/dev/kmsg

bundle_wait pool 20

python3 - "$B/manifest.json" "$POOL" <<'PY' || fail "manifest threads: $(head -c 3000 "$B/manifest.json")"
import json, sys
m, pool = json.load(open(sys.argv[1])), sys.argv[2]
ours = [t for t in m["threads"] if t["comm"].startswith(pool + "-")]
assert len(ours) >= 2, m["threads"]
assert all(t["process"] == pool for t in ours), ours
PY

"$TPROF_BUNDLE" -D "$STATE" show >"$OUT" 2>"$ERR" || fail "show: $(cat "$ERR")"
sed -n '/^Around the event/,/^  Functions/p' "$OUT" >"$TEST_TMP/near"
grep -qE "^  $POOL-\* +[0-9.]+% \(rest +<?[0-9.]+%\) +burn_leaf +z=" "$TEST_TMP/near" ||
        fail "the pool's threads are not among the rises around the event as one: $(cat "$TEST_TMP/near")"
grep -A1 -E "^  $POOL-\* " "$TEST_TMP/near" | grep -qE "^ +threads of $POOL(,|\$)" ||
        fail "the pool is not named as whose threads they are: $(cat "$TEST_TMP/near")"
! grep -qE "^  $POOL-[0-9]+ " "$TEST_TMP/near" || fail "a thread of the pool ranked alone: $(cat "$TEST_TMP/near")"

"$TPROF_BUNDLE" -D "$STATE" show --json >"$OUT" 2>"$ERR" || fail "show --json: $(cat "$ERR")"
python3 - "$OUT" "$POOL" <<'PY' || fail "show --json: $(head -c 3000 "$OUT")"
import json, sys
d, pool = json.load(open(sys.argv[1])), sys.argv[2]
ours = [p for p in d["around_event"]["processes"] if p["process"] == pool + "-*"]
assert ours and ours[0]["thread_of"] == pool and ours[0]["slice_samples"] >= 20, d["around_event"]
PY
echo "ok"
