#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One thread of a pool stuck, end to end with the real daemon: a pool of 4 threads named after
# it (POOL-0 ... POOL-3) works a twentieth of a CPU each, then POOL-2 spins alone (a whole CPU, when
# the machine gives it one) from 5.3 s before a trigger written to /dev/kmsg until after the
# bundle is written, while the others sleep. The manifest lists the threads with their process;
# show, show --json and the page give the pool's rise around the event as one thread's: "POOL-2
# of POOL (one of its threads POOL-*...)", "thread" POOL-2, and so do the pool's rows in the
# rankings ("threads of POOL, carried by POOL-2"). On a machine where another process rose more in
# those seconds the answer is that one: then the pool's rows are checked where it ranks, as one
# group carried by POOL-2; the test skips only where it ranks nowhere (test-bundle-cgroups and
# test-bundle-cli check it on fixed stacks, and the rise spread over the threads beside it).
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
require_burn

cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: stuck
    source: kernel
    origin: any
    match: 'tprof-stuck-$TOKEN'
    before: 12s
    after: 2s
RULES
# This run's name (11 bytes, its threads' 13): another suite may run pools of its own at once.
POOL=st-$TOKEN
cp "$TPROF_BURN" "$TEST_TMP/$POOL"

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s
# The baseline and the slice before the pool: the more samples the rest of the bundle has without
# it, the surer its rise around the event.
sleep 8
# 5 s a twentieth of a CPU each (in the slice: the manifest lists the threads it sampled), then
# POOL-2 alone for 10 s: alive until the bundle is written (the daemon names a thread's process
# from /proc then, its main thread never running).
"$TEST_TMP/$POOL" --stuck 4 15 &
PID=$!
on_exit "kill $PID 2>/dev/null"
sleep 10.3
echo "tprof-stuck-$TOKEN now" >/dev/kmsg

bundle_shown stuck

python3 - "$B/manifest.json" "$POOL" <<'PY' || fail "manifest threads: $(head -c 3000 "$B/manifest.json")"
import json, sys
m, pool = json.load(open(sys.argv[1])), sys.argv[2]
ours = sorted(t["comm"] for t in m["threads"] if t["comm"].startswith(pool + "-"))
assert len(ours) >= 2 and pool + "-2" in ours, m["threads"]
assert all(t["process"] == pool for t in m["threads"] if t["comm"] in ours), m["threads"]
PY

rc=0
PYTHONPATH="$(dirname "$0")" python3 - "$TEST_TMP" "$POOL" <<'PY' || rc=$?
import json, sys
from bundle_check import check_answers_agree, page_analysis
tmp, pool = sys.argv[1], sys.argv[2]
show, page = json.load(open(tmp + "/show.json")), page_analysis(tmp + "/report.html")
# show's answer and the page's agree, the thread too
a = check_answers_agree(show, page)
assert a, a
# The pool's rise around the event, where it ranks, ranks as one group, carried by POOL-2: in
# show's rows and the page's.
rows = show["around_event"]["processes"]
assert not [p for p in rows if p["process"].startswith(pool + "-") and p["process"] != pool + "-*"], rows
ours = [p for p in rows if p["process"] == pool + "-*"]
assert all(p["thread_of"] == pool and p["thread"] == pool + "-2" for p in ours), ours
pours = [p for p in page["near"]["processes"] if p["name"] == pool + "-*"]
assert all(p["thread"] == pool + "-2" for p in pours), pours
if a["process"] == pool + "-*":
    assert a["thread"] == pool + "-2" and a["thread_of"] == pool, a
    sys.exit(0)
# another process rose more: the answer is that one
sys.exit(0 if ours else 77)
PY
[ "$rc" = 77 ] && skip "the pool ranks nowhere around the event: $(grep 'In short' "$TEST_TMP/show.txt")"
[ "$rc" = 0 ] || fail "the answer and the rows: $(grep 'In short' "$TEST_TMP/show.txt"; grep -A1 -E "^  $POOL-\* " "$TEST_TMP/show.txt")"
grep -qE "^ +threads of $POOL, carried by $POOL-2(, in .*)?$" "$TEST_TMP/show.txt" ||
        fail "show's row does not name the thread: $(grep -A1 -E "^  $POOL-\* " "$TEST_TMP/show.txt")"
grep -q "^   In short: .*$POOL" "$TEST_TMP/show.txt" || { echo "ok: $(grep -A1 -E "^  $POOL-\* " "$TEST_TMP/show.txt")"; exit 0; }
grep -qE "^   In short: (no clear rise; the strongest: )?$POOL-2 of $POOL \(one of its threads $POOL-\*(; [^)]*)?\) rose to " \
        "$TEST_TMP/show.txt" || fail "show does not name the thread: $(grep 'In short' "$TEST_TMP/show.txt")"
echo "ok: $(grep 'In short' "$TEST_TMP/show.txt")"
