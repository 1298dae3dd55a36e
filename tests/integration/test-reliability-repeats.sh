#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A storm on one rule with a long cooldown: after its bundle is published, every further match is a
# repeat that joins it. The repeats must reach the manifest (its count ends up exact) without a
# file rewrite per line: tprofd may rename a manifest into place about once a second, not once per
# matching line, or a storm slows it down until the kernel log overruns.
# RELIABILITY_REPEAT_LINES (default 6000) lines are written at 3000 lines/s.
set -eu
. "$(dirname "$0")/reliability-lib.sh"

require_perf
require_kmsg_writable
command -v strace >/dev/null || skip "needs strace"
command -v python3 >/dev/null || skip "needs python3"
LINES=${RELIABILITY_REPEAT_LINES:-6000}
RATE=3000

cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: repeat-long
    source: kernel
    origin: any
    match: 'tprof-repeat-$TOKEN (?<n>\d+)'
    before: 1s
    after: 500ms
    cooldown: 10m
RULES
start_tprofd --rules "$TEST_TMP/rules.yaml" --window 2s --control-socket "$CTL"
printf '<15>tprof-repeat-%s 0\n' "$TOKEN" >/dev/kmsg
wait_for 10 compgen -G "$STATE/incidents/*-repeat-long-*/manifest.json" || fail "no bundle: $(tail "$TEST_TMP/tprofd.log")"
B=$(compgen -G "$STATE/incidents/*-repeat-long-*")

strace -f -qq -e trace=rename,renameat,renameat2 -o "$TEST_TMP/strace" -p "$TPROFD_PID" &
STRACE=$!
on_exit "kill $STRACE 2>/dev/null"
sleep 0.5
python3 - "$TOKEN" "$LINES" "$RATE" <<'PY'
import os, sys, time
token, n, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open("/dev/kmsg", os.O_WRONLY)
t0 = time.monotonic()
for i in range(1, n + 1):
    os.write(fd, b"<15>tprof-repeat-%s %d\n" % (token.encode(), i))
    if i % 100 == 0:
        ahead = i / rate - (time.monotonic() - t0)
        if ahead > 0:
            time.sleep(ahead)
PY
sleep 2.5 # the last repeats reach the manifest within a second
kill -INT "$STRACE"
wait "$STRACE" 2>/dev/null || true
renames=$(grep -c 'manifest\.json' "$TEST_TMP/strace" || true)

stop_tprofd
python3 - "$B/manifest.json" "$((LINES + 1))" <<'PY' || fail "the manifest does not count every repeat"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["repeats"] == int(sys.argv[2]), (m["repeats"], sys.argv[2])
PY
figure repeat_lines "$LINES"
figure repeat_manifest_renames_during_flood "$renames"
# The repeats reach the manifest while strace watches (within a second; the flood lasts two):
# seeing no rename of it is strace seeing nothing, or the manifest written some other way, which
# the count below would not see either.
[ "$renames" -ge 1 ] || fail "strace saw no rename of the manifest while $LINES repeats joined it: $(head -c 1000 "$TEST_TMP/strace")"
# One rewrite a second at most, while the flood lasts and until its last repeats are written.
allowed=$((LINES / RATE + 5))
[ "$renames" -le "$allowed" ] || fail "$renames manifest renames while $LINES repeats joined one bundle: a rewrite per line"
echo ok
