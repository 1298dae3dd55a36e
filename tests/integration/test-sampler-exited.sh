#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A process that starts after sampling began and exits before it ends is known only from perf's
# COMM/MMAP2/EXIT records: it must still be named and symbolized.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"
require_perf

b=$(burn_as burn-exited)
("$TPROFD" --once 4 >"$OUT" 2>"$ERR"; echo $? >"$TEST_TMP/rc") &
tp=$!
on_exit "kill $tp 2>/dev/null"
sleep 1
"$b" 1.2 &
bp=$!
# A crowd of processes that come and go meanwhile: tracked, then reaped.
for i in $(seq 100); do /bin/true; done
wait $bp
# It is gone now; tprofd keeps sampling for another ~1.5 s before it folds.
wait $tp
[ "$(cat "$TEST_TMP/rc")" = 0 ] || fail "tprofd exited $(cat "$TEST_TMP/rc"): $(cat "$ERR")"

total=$(comm_total burn-exited)
good=$(comm_matching burn-exited ';main;burn_outer;burn_middle;burn_leaf$')
echo "short-lived burn samples: $total, symbolized: $good"
[ "$total" -ge 15 ] || fail "the exited process has $total samples under its name: $(head -c 2000 "$OUT")"
[ $((good * 100)) -ge $((total * 80)) ] || fail "$good of $total samples symbolized: $(grep '^burn-exited;' "$OUT" | head)"
reaped=$(sed -n 's/.*tasks: [0-9]* tracked, \([0-9]*\) reaped.*/\1/p' "$ERR")
echo "tasks reaped: $reaped"
[ "${reaped:-0}" -ge 100 ] || fail "exited tasks were not reaped: $(cat "$ERR")"
echo OK
