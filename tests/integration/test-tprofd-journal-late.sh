#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# journald starting after tprofd: tprofd finds no journal, follows the kernel log and tries again
# every 30 s. When it finds the journal, every entry written since journald started is new to it,
# not only those after the retry: entries sent between journald's start and the retry are matched,
# once each.
set -eu
. "$(dirname "$0")/logsrc-lib.sh"

require_perf
NS=$JOURNAL_NS
cat >"$TEST_TMP/rules.yaml" <<RULES
defaults: { before: 1s, after: 1s, cooldown: 1h }
rules:
  - name: late
    source: journal
    match: 'late $TOKEN (?<i>\w+)\$'
RULES

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s --control-socket "" --log-level debug --journal-namespace "$NS"
grep -q "The journal is not available" "$TEST_TMP/tprofd.log" || fail "journal found before journald ran: $(cat "$TEST_TMP/tprofd.log")"
start_private_journald
[ "$NS" = "$JOURNAL_NS" ] || fail "the journald's namespace is not the one tprofd follows"
jsend --burst 20 "MESSAGE=late $TOKEN early%d" # before tprofd's retry finds the journal
wait_for 45 grep -q "Following the journal namespace $NS" "$TEST_TMP/tprofd.log" || fail "journal never followed: $(tail "$TEST_TMP/tprofd.log")"
jsend "MESSAGE=late $TOKEN after"
seen() { grep -oE "rule late matched.*late $TOKEN [a-z0-9]+\$" "$TEST_TMP/tprofd.log" | awk '{ print $NF }' || true; }
all_seen() { [ "$(seen | wc -l)" -ge 21 ]; }
wait_for 20 all_seen || fail "matched $(seen | wc -l) of 21: $(seen | tr '\n' ' ')"
sleep 1
[ "$(seen | sort -u | wc -l)" = 21 ] && [ "$(seen | wc -l)" = 21 ] || fail "matched twice or missed: $(seen | sort | uniq -c | tr '\n' ' ')"
stop_tprofd
echo ok
