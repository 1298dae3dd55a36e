#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A process that starts after sampling began and exits before it ends is known only from perf's
# COMM/MMAP2/EXIT records: it must still be named and symbolized.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"
require_perf

b=$(burn_as burn-exited)
# 8 s: room for the crowd, the burner and the 2 s grace before exited tasks are reaped, even when
# a busy machine slows each of them down.
"$TPROFD" --once 8 >"$OUT" 2>"$ERR" &
tp=$!
on_exit "kill $tp 2>/dev/null"
# Wait until its perf events are open, not a fixed time: on a busy machine start-up takes longer,
# and a task that comes and goes before then is never seen.
for _ in $(seq 100); do
        ls -l "/proc/$tp/fd" 2>/dev/null | grep -q 'perf_event' && break
        sleep 0.1
done
sleep 0.3
# A crowd of processes that come and go: tracked, then reaped (their exits lie well over the grace
# before the end, behind the burner's run).
for i in $(seq 100); do /bin/true; done
"$b" 1.2 &
bp=$!
wait $bp
# It is gone now; tprofd keeps sampling for a few seconds more before it folds.
rc=0
wait $tp || rc=$?
[ "$rc" = 0 ] || fail "tprofd exited $rc: $(cat "$ERR")"

total=$(comm_total burn-exited)
good=$(comm_matching burn-exited ';main;burn_outer;burn_middle;burn_leaf$')
echo "short-lived burn samples: $total, symbolized: $good"
[ "$total" -ge 15 ] || fail "the exited process has $total samples under its name: $(head -c 2000 "$OUT")"
[ $((good * 100)) -ge $((total * 80)) ] || fail "$good of $total samples symbolized: $(grep '^burn-exited;' "$OUT" | head)"
reaped=$(sed -n 's/.*tasks: [0-9]* tracked, \([0-9]*\) reaped.*/\1/p' "$ERR")
echo "tasks reaped: $reaped"
[ "${reaped:-0}" -ge 100 ] || fail "exited tasks were not reaped: $(cat "$ERR")"
echo OK
