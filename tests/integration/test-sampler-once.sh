#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The main path: a burner with a known call path is sampled by `tprofd --once`; most of its samples
# must show main;burn_outer;burn_middle;burn_leaf under the right process name, and the summary
# must say what was sampled.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"
require_perf

"$TPROF_BURN" 8 &
pid=$!
on_exit "kill $pid 2>/dev/null"
sleep 0.3

once 3

total=$(comm_total burn)
good=$(comm_matching burn ';main;burn_outer;burn_middle;burn_leaf$')
echo "burn samples: $total, with the full path: $good"
# Other tests may burn CPUs at the same time: ask for a fraction of the 291 possible samples.
[ "$total" -ge 30 ] || fail "only $total samples of burn in 3 s at 97 Hz; stdout: $(head -c 2000 "$OUT")"
[ $((good * 100)) -ge $((total * 80)) ] || fail "$good of $total burn samples have main;burn_outer;burn_middle;burn_leaf: $(grep '^burn;' "$OUT" | head -20)"

grep -q '^tprofd --once: .*event cpu-clock\|^tprofd --once: .*event cycles' "$ERR" || fail "summary names no event: $(cat "$ERR")"
grep -q 'samples: [0-9]' "$ERR" || fail "summary has no sample count: $(cat "$ERR")"
grep -q 'lost: [0-9]' "$ERR" || fail "summary has no lost count: $(cat "$ERR")"
grep -q 'on [0-9]* CPUs' "$ERR" || fail "summary has no CPU count: $(cat "$ERR")"
# Rings sized for the default rate's stack copies: two seconds of them, 2 MiB a CPU (less only if
# the kernel refused that much), not the 8 MiB of high rates: what a 96-CPU host pins in memory.
kib=$(sed -n 's/^tprofd --once: .*, rings of \([0-9]*\) KiB per CPU$/\1/p' "$ERR")
[ -n "$kib" ] || fail "summary has no ring size: $(head -1 "$ERR")"
if grep -q '^  user stacks (auto)' "$ERR"; then
        [ "$kib" -ge 512 ] && [ "$kib" -le 2048 ] || fail "rings of $kib KiB per CPU at 97 Hz with stack copies, expected 512-2048"
fi

# Folded lines are "stack count", sorted bytewise.
awk '!/^[^ ].* [0-9]+$/ { bad = 1 } END { exit bad }' "$OUT" || fail "malformed folded line"
LC_ALL=C sort -c "$OUT" || fail "folded output is not sorted"

# --pid keeps only that process.
once 1 --pid "$pid"
others=$(awk '!/^burn;/' "$OUT" | wc -l)
[ "$others" -eq 0 ] || fail "--pid $pid let other processes through: $(head -5 "$OUT")"
[ "$(comm_total burn)" -gt 0 ] || fail "--pid $pid sampled nothing"

# Without the right to sample every CPU, the error says what gives it.
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ] && command -v setpriv >/dev/null; then
        expect_exit 1 setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all -- "$TPROFD" --once 1
        grep -q 'CAP_PERFMON.*perf_event_paranoid 0 or lower' "$ERR" ||
                fail "the refusal does not say what sampling needs: $(cat "$ERR")"
fi
echo OK
