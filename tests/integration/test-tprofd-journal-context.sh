#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Journal context in a kernel rule's bundle, with the real daemon, the real /dev/kmsg and a journald
# of the test's own: tprofd follows the journal with no journal rule at all, and the bundle of a
# kmsg-triggered incident carries the journal entries of [t − before, t + after] in log.jsonl and
# log.txt, with their source, priority, unit, comm and pid, placed on the perf clock in the right
# order around the kernel line; an entry well before the slice and a debug entry (below the default
# "info") are left out; `tprof-bundle show` prints them around the trigger. After a restart, the
# entries the earlier run had read are in the next bundle's log too. With --journal-context off the
# next bundle has no journal line.
set -eu
. "$(dirname "$0")/logsrc-lib.sh"

require_perf
require_kmsg_writable
start_private_journald

cat >"$TEST_TMP/rules.yaml" <<RULES
defaults: { before: 3s, after: 4s, cooldown: 0s }
rules:
  - name: jctx
    source: kernel
    origin: any
    match: 'tprof-jctx-$TOKEN (?<n>\w+)'
RULES

run() { start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s --control-socket "" --journal-namespace "$NS" "$@"; }
bundle_of() { grep -l "tprof-jctx-$TOKEN $1" "$STATE"/incidents/*-jctx-*/manifest.json 2>/dev/null | head -1 | xargs -r dirname; }
has_bundle() { [ -n "$(bundle_of "$1")" ]; }
wait_bundle() { wait_for 30 has_bundle "$1" || fail "no bundle for $1: $(tail -20 "$TEST_TMP/tprofd.log")"; B=$(bundle_of "$1"); }

run
grep -q "Following the journal namespace $NS with 0 match(es), context: info" "$TEST_TMP/tprofd.log" ||
        fail "not following the journal for context: $(cat "$TEST_TMP/tprofd.log")"
jsend "MESSAGE=jctx $TOKEN far-before" "SYSLOG_IDENTIFIER=svc" "PRIORITY=6"
sleep 5 # more than `before` after it
jsend "MESSAGE=jctx $TOKEN near-before" "SYSLOG_IDENTIFIER=svc" "PRIORITY=4"
jsend "MESSAGE=jctx $TOKEN debug-before" "SYSLOG_IDENTIFIER=svc" "PRIORITY=7"
kmsg_write "<12>tprof-jctx-$TOKEN first"
jsend "MESSAGE=jctx $TOKEN near-after" "SYSLOG_IDENTIFIER=svc" "PRIORITY=3"
wait_bundle first

python3 - "$B" "$TOKEN" "$JSEND_COMM" <<'PY' || fail "bundle log: $(cat "$B/log.jsonl")"
import json, sys
b, token, comm = sys.argv[1:]
m = json.load(open(b + "/manifest.json"))
lo, hi = m["slice"]["from_perf_ns"], m["slice"]["to_perf_ns"]
lines = [json.loads(l) for l in open(b + "/log.jsonl")]
for l in lines:
    assert lo <= l["t_perf_ns"] <= hi, ("outside the slice", l, lo, hi)
mine = {l["message"].split()[-1]: l for l in lines if token in l["message"]}
assert set(mine) == {"near-before", "first", "near-after"}, sorted(mine)
k, nb, na = mine["first"], mine["near-before"], mine["near-after"]
assert k["source"] == "kmsg" and k["trigger"] is True, k
for l, prio in ((nb, 4), (na, 3)):
    assert l["source"] == "journal" and l["trigger"] is False, l
    assert l["priority"] == prio, l
    assert l["comm"] == comm and l["pid"] > 0, l
    assert "unit" in l, l
# Journal monotonic times mapped onto the perf clock line up with the kernel line's.
assert nb["t_perf_ns"] < k["t_perf_ns"] < na["t_perf_ns"], (nb, k, na)
PY
grep -q "journal  warning $JSEND_COMM\[[0-9]*\]: jctx $TOKEN near-before\|journal  warning .* $JSEND_COMM\[[0-9]*\]: jctx $TOKEN near-before" "$B/log.txt" ||
        fail "log.txt: $(cat "$B/log.txt")"
! grep -q "far-before\|debug-before" "$B/log.txt" || fail "log.txt has lines it should not: $(cat "$B/log.txt")"

expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" show "$(basename "$B")"
grep -q "journal  warning .*$JSEND_COMM\[[0-9]*\]: jctx $TOKEN near-before" "$OUT" || fail "show: $(cat "$OUT")"
grep -q "journal  err .*$JSEND_COMM\[[0-9]*\]: jctx $TOKEN near-after" "$OUT" || fail "show: $(cat "$OUT")"
awk -v t="$TOKEN" 'index($0, t " near-before") { a = NR } index($0, "tprof-jctx-" t " first") { k = NR }
        index($0, t " near-after") { z = NR } END { exit !(a && k && z && a < k && k < z) }' "$OUT" ||
        fail "show: not in time order around the trigger: $(cat "$OUT")"

# A restart: what the earlier run read lies before its saved cursor, and the new run reads it again
# for the log only (a rule with a long `before`, so that a slow restart still leaves the entry
# inside the slice).
sed 's/before: 3s/before: 60s/' "$TEST_TMP/rules.yaml" >"$TEST_TMP/rules-long.yaml"
stop_tprofd
start_tprofd --rules "$TEST_TMP/rules-long.yaml" --window 4s --control-socket "" --journal-namespace "$NS"
CURSOR="$STATE/state/journal-cursor"
C0=$(cat "$CURSOR" 2>/dev/null || true)
jsend "MESSAGE=jctx $TOKEN restart-before" "SYSLOG_IDENTIFIER=svc" "PRIORITY=4"
jsend "MESSAGE=jctx $TOKEN restart-debug" "SYSLOG_IDENTIFIER=svc" "PRIORITY=7"
cursor_moved() { [ "$(cat "$CURSOR" 2>/dev/null || true)" != "$C0" ]; }
wait_for 20 cursor_moved || fail "the run did not read the entries: $(tail -5 "$TEST_TMP/tprofd.log")"
stop_tprofd
start_tprofd --rules "$TEST_TMP/rules-long.yaml" --window 4s --control-socket "" --journal-namespace "$NS"
kmsg_write "<12>tprof-jctx-$TOKEN restarted"
wait_bundle restarted
grep -q "journal  warning .*jctx $TOKEN restart-before\$" "$B/log.txt" ||
        fail "the entry the earlier run read is not in the log: $(cat "$B/log.txt")"
[ "$(grep -c "jctx $TOKEN restart-before" "$B/log.txt")" = 1 ] || fail "the entry is there twice: $(cat "$B/log.txt")"
! grep -q "restart-debug" "$B/log.txt" || fail "a debug entry is in the log: $(cat "$B/log.txt")"

# Off: the journal is not read for context (no journal rule), the bundle has kernel lines only.
stop_tprofd
run --journal-context off
grep -q "No journal rules and journal context off: not following the journal" "$TEST_TMP/tprofd.log" ||
        fail "journal followed with context off: $(tail -5 "$TEST_TMP/tprofd.log")"
jsend "MESSAGE=jctx $TOKEN off-before" "SYSLOG_IDENTIFIER=svc" "PRIORITY=2"
kmsg_write "<12>tprof-jctx-$TOKEN second"
jsend "MESSAGE=jctx $TOKEN off-after" "SYSLOG_IDENTIFIER=svc" "PRIORITY=2"
wait_bundle second
grep -q "tprof-jctx-$TOKEN second" "$B/log.txt" || fail "no trigger line: $(cat "$B/log.txt")"
! grep -q '"source":"journal"' "$B/log.jsonl" || fail "journal lines with context off: $(cat "$B/log.jsonl")"
stop_tprofd
echo ok
