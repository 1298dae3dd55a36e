#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Caches too small for the host's programs (caches.symbols at 128K, caches.unwind_tables at its
# least, 64K): each is dropped once when full, and not again within the minute however often
# samples ask for files it does not hold; meanwhile the frames of those files are counted as
# unnamed or walked without their CFI, `status` says so on its "Full caches" line, the daemon logs a
# notice for each cache, and sampling goes on. The symbol cache is filled by a JIT map of a few
# thousand entries (JIT maps are kept whatever their size), the unwind tables by libc's CFI alone.
# Errors in the section are test-tprofd-config's.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"

require_perf
[ "$(uname -m)" = x86_64 ] || skip "the JIT helper carries x86-64 machine code"
SOCK="$TEST_TMP/control.sock"

"$(burn_as burn-caches)" --jit 60 &
jit=$!
on_exit "kill $jit 2>/dev/null; rm -f /tmp/perf-$jit.map"
wait_for 10 test -s "/tmp/perf-$jit.map" || fail "the JIT helper wrote no map"
# Entries far from the helper's code: they name nothing it runs, only take room.
awk 'BEGIN { for (i = 0; i < 4000; i++) printf "%x 10 tprof_caches_pad_%d\n", 268435456 + i * 16, i }' \
        >>"/tmp/perf-$jit.map"

printf 'rules: []\n' >"$TEST_TMP/rules.yaml"
printf 'caches:\n  symbols: 128K\n  unwind_tables: 64K\n' >"$TEST_TMP/tprofd.yaml"
t0=$(date +%s)
start_tprofd --config "$TEST_TMP/tprofd.yaml" --rules "$TEST_TMP/rules.yaml" --control-socket "$SOCK"
wait_for 10 test -S "$SOCK" || fail "no control socket"

# Programs the caches have not seen, one after another, while the JIT code runs.
for c in "sha256sum /usr/bin/bash" "gzip -9c /usr/bin/bash" "md5sum /usr/bin/bash" \
        "awk 'BEGIN { for (i = 0; i < 3000000; i++) s += i }'" "sort -R /etc/services /etc/services" \
        "perl -e 'for (1..3000000) {}'" "python3 -c 'sum(range(5000000))'"; do
        command -v "${c%% *}" >/dev/null || continue
        for _ in 1 2 3; do sh -c "$c" >/dev/null 2>&1 || true; done
done
sleep 2

"$TPROF_BUNDLE" --control-socket "$SOCK" status >"$OUT" 2>"$ERR" || fail "status exited $?: $(cat "$ERR")"
elapsed=$(($(date +%s) - t0))
line=$(grep "Full caches:" "$OUT") || fail "status has no full-caches line: $(cat "$OUT")"
echo "$line (after ${elapsed} s)"
re='symbol cache dropped ([0-9]+) times \(([0-9]+) frames unnamed while their file waited\), unwind tables dropped ([0-9]+) times \(([0-9]+) frames walked without their CFI\)'
[[ $line =~ $re ]] || fail "full-caches line not understood: $line"
sym_drops=${BASH_REMATCH[1]} sym_waited=${BASH_REMATCH[2]} uw_drops=${BASH_REMATCH[3]} uw_waited=${BASH_REMATCH[4]}
# At most one drop a minute: dropping before every sample that asked for another file made
# hundreds here.
most=$((1 + elapsed / 60))
[ "$sym_drops" -ge 1 ] && [ "$sym_drops" -le "$most" ] ||
        fail "symbol cache dropped $sym_drops times in $elapsed s (expected 1 to $most)"
[ "$uw_drops" -ge 1 ] && [ "$uw_drops" -le "$most" ] ||
        fail "unwind tables dropped $uw_drops times in $elapsed s (expected 1 to $most)"
[ "$sym_waited" -gt 0 ] || fail "no frame was left unnamed while the symbol cache was full: $line"
[ "$uw_waited" -gt 0 ] || fail "no frame was walked without its CFI while the unwind tables were full: $line"
# The notices come with the daemon's status update, every 10 s.
wait_for 30 grep -q "Symbol cache full: dropped" "$TEST_TMP/tprofd.log" ||
        fail "no notice for the symbol cache: $(tail "$TEST_TMP/tprofd.log")"
wait_for 30 grep -q "Unwind tables full: dropped" "$TEST_TMP/tprofd.log" ||
        fail "no notice for the unwind tables: $(tail "$TEST_TMP/tprofd.log")"
# Sampling goes on with the caches full.
samples() { "$TPROF_BUNDLE" --control-socket "$SOCK" status | sed -n 's/^ *Samples: \([0-9]*\) kept.*/\1/p'; }
s0=$(samples)
grows() { [ "$(samples)" -gt "$s0" ]; }
wait_for 10 grows || fail "sampling stopped after the caches filled: $s0 samples"

# A changed size is read on SIGHUP and reported as needing a restart.
printf 'caches:\n  symbols: 256K\n  unwind_tables: 64K\n' >"$TEST_TMP/tprofd.yaml"
kill -HUP "$TPROFD_PID"
wait_for 10 grep -q "take effect only after a restart of tprofd: caches.symbols" "$TEST_TMP/tprofd.log" ||
        fail "a changed caches.symbols was not reported: $(tail "$TEST_TMP/tprofd.log")"

# --once reads them from the file too: with programs busy beside the JIT helper, libc's CFI
# fills the unwind tables and the next file drops them.
timeout 4 awk 'BEGIN { for (;;) s++ }' &
busy1=$!
timeout 4 perl -e '1 while 1' 2>/dev/null &
busy2=$!
on_exit "kill $busy1 $busy2 2>/dev/null"
"$TPROFD" --config "$TEST_TMP/tprofd.yaml" --rules "$TEST_TMP/rules.yaml" --once 2 >/dev/null 2>"$ERR" ||
        fail "--once failed: $(cat "$ERR")"
wait "$busy1" "$busy2" || true
grep -qE "tables dropped [1-9][0-9]* times when full" "$ERR" || fail "--once did not take caches.unwind_tables: $(cat "$ERR")"
grep -qE "symbol cache dropped [1-9][0-9]* times when full" "$ERR" || fail "--once did not take caches.symbols: $(cat "$ERR")"

stop_tprofd
echo ok
