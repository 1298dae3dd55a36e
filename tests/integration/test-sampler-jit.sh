#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Code in an anonymous executable mapping is named from the process's /tmp/perf-PID.map.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"
require_perf
[ "$(uname -m)" = x86_64 ] || skip "the JIT helper carries x86-64 machine code"

"$(burn_as burn-jit)" --jit 5 &
pid=$!
on_exit "kill $pid 2>/dev/null; rm -f /tmp/perf-$pid.map"
sleep 0.3
[ -s "/tmp/perf-$pid.map" ] || fail "helper wrote no JIT map"

once 3

total=$(comm_total burn-jit)
jit=$(comm_matching burn-jit ';jit_burn_loop$')
echo "burn samples: $total, in jit_burn_loop: $jit"
[ "$total" -ge 20 ] || fail "only $total samples: $(head -c 2000 "$OUT")"
[ $((jit * 100)) -ge $((total * 80)) ] || fail "$jit of $total samples name the JIT function: $(grep '^burn-jit;' "$OUT" | head)"

# The same in a pid namespace: the process writes /tmp/perf-<its own pid>.map, which we find
# through NSpid and /proc/PID/root.
command -v unshare >/dev/null || { echo "no unshare: pid-namespace case not run"; exit 0; }
unshare --pid --fork "$(burn_as burn-jitns)" --jit 5 &
ns=$!
on_exit "kill $ns 2>/dev/null"
sleep 0.5
inner=$(pgrep -P "$ns" -x burn-jitns || true)
[ -n "$inner" ] || { echo "unshare --pid did not work here: pid-namespace case not run"; exit 0; }
nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$inner/status")
on_exit "rm -f /tmp/perf-$nspid.map"
[ "$nspid" != "$inner" ] || fail "burn-jitns is not in its own pid namespace"
[ -s "/tmp/perf-$nspid.map" ] || fail "namespaced helper wrote no /tmp/perf-$nspid.map"

once 3

total=$(comm_total burn-jitns)
jit=$(comm_matching burn-jitns ';jit_burn_loop$')
echo "namespaced burn samples: $total, in jit_burn_loop: $jit"
[ "$total" -ge 20 ] || fail "only $total samples: $(head -c 2000 "$OUT")"
[ $((jit * 100)) -ge $((total * 80)) ] || fail "$jit of $total samples name the JIT function: $(grep '^burn-jitns;' "$OUT" | head)"
echo OK
