#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Journal rules with the real daemon against a real journald of the test's own (a journal
# namespace): an entry matching a rule's pattern and trusted-field filter opens an incident whose
# manifest names the journal as its source; a client forging _SYSTEMD_UNIT gets nothing matched
# by a unit rule; across a restart the cursor resumes, so nothing is matched twice and nothing
# written while tprofd was down is missed.
set -eu
. "$(dirname "$0")/logsrc-lib.sh"

require_perf
start_private_journald

cat >"$TEST_TMP/rules.yaml" <<RULES
defaults: { before: 1s, after: 1s, cooldown: 0s }
rules:
  - name: pleg
    source: journal
    comm: journal-send.py
    match: 'PLEG is not healthy $TOKEN (?<n>\w+)'
  - name: pleg-unit
    source: journal
    unit: kubelet.service
    match: 'PLEG is not healthy $TOKEN'
RULES

matched() { grep -c "rule pleg matched journal.*PLEG is not healthy $TOKEN $1\$" "$TEST_TMP/tprofd.log" || true; }
run() { start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s --control-socket "" --journal-namespace "$NS"; }

run
grep -q "Following the journal namespace $NS" "$TEST_TMP/tprofd.log" || fail "not following: $(cat "$TEST_TMP/tprofd.log")"
jsend "MESSAGE=PLEG is not healthy $TOKEN first" "SYSLOG_IDENTIFIER=kubelet" "PRIORITY=4"
jsend "MESSAGE=PLEG is not healthy $TOKEN forged" "SYSLOG_IDENTIFIER=kubelet" "_SYSTEMD_UNIT=kubelet.service" \
        "_TRANSPORT=kernel"
wait_for 10 grep -q "PLEG is not healthy $TOKEN forged" "$TEST_TMP/tprofd.log" || fail "journal entry not matched: $(tail "$TEST_TMP/tprofd.log")"

bundle_ready() { [ "$(compgen -G "$STATE/incidents/*-pleg-*/manifest.json" | wc -l)" -ge 2 ]; }
wait_for 10 bundle_ready || fail "no bundles for the journal rule: $(ls -a "$STATE/incidents"; tail -20 "$TEST_TMP/tprofd.log")"
M=$(grep -l "$TOKEN first" "$STATE"/incidents/*-pleg-*/manifest.json)
python3 - "$M" <<'PY' || fail "manifest: $(cat "$M")"
import json, sys
ev = json.load(open(sys.argv[1]))["event"]
assert ev["source"] == "journal" and ev["kernel_origin"] is False, ev
assert ev["comm"] == "journal-send.py", ev
assert ev["alignment"]["method"] == "journal-monotonic", ev["alignment"]
assert ev["captures"] == {"n": "first"}, ev["captures"]
PY
! grep -q "rule pleg-unit matched" "$TEST_TMP/tprofd.log" || fail "a forged _SYSTEMD_UNIT matched a unit rule"

stop_tprofd
jsend "MESSAGE=PLEG is not healthy $TOKEN while-down" "SYSLOG_IDENTIFIER=kubelet"
run
wait_for 10 grep -q "PLEG is not healthy $TOKEN while-down" "$TEST_TMP/tprofd.log" || fail "entry written while down was missed: $(tail -20 "$TEST_TMP/tprofd.log")"
sleep 1
[ "$(matched first)" = 1 ] || fail "'first' matched $(matched first) times"
[ "$(matched while-down)" = 1 ] || fail "'while-down' matched $(matched while-down) times"
[ -s "$STATE/state/journal-cursor" ] || fail "no journal cursor saved"
stop_tprofd
echo ok
