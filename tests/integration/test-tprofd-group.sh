#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Rules that share a cooldown group make one bundle of one event: a line of the first rule opens
# the incident, a line of the second rule inside the cooldown joins it as a repeat (the manifest
# names it under joined_rules and show says so), and a rule outside the group still opens a bundle
# of its own. The real daemon and the real /dev/kmsg, as the stack's NETDEV WATCHDOG and the
# driver's reset arrive on a real host.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
command -v python3 >/dev/null || skip "needs python3"

cat >"$TEST_TMP/rules.yaml" <<RULES
defaults: { before: 2s, after: 1s, cooldown: 60s }
rules:
  - name: grp-watchdog
    source: kernel
    origin: any
    group: grp-nic
    match: 'tprof-grp-$TOKEN watchdog (?<dev>\w+)'
  - name: grp-reset
    source: kernel
    origin: any
    group: grp-nic
    match: 'tprof-grp-$TOKEN reset (?<dev>\w+)'
  - name: grp-other
    source: kernel
    origin: any
    match: 'tprof-grp-$TOKEN other'
RULES

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 2s
sleep 1
echo "tprof-grp-$TOKEN watchdog eth0" >/dev/kmsg
sleep 0.3
echo "tprof-grp-$TOKEN reset eth0" >/dev/kmsg
echo "tprof-grp-$TOKEN reset eth0" >/dev/kmsg
echo "tprof-grp-$TOKEN other" >/dev/kmsg
wait_for 20 compgen -G "$STATE/incidents/*-grp-other-*/manifest.json" ||
        fail "no bundle of the rule outside the group: $(tail "$TEST_TMP/tprofd.log")"
wait_for 20 compgen -G "$STATE/incidents/*-grp-watchdog-*/manifest.json" ||
        fail "no bundle of the group's first rule: $(tail "$TEST_TMP/tprofd.log")"
sleep 1.5 # a repeat after publishing reaches the manifest within a second
stop_tprofd

n=$(find "$STATE/incidents" -mindepth 1 -maxdepth 1 -type d -name '*-grp-*' | wc -l)
[ "$n" = 2 ] || fail "$n bundles, expected 2 (the group's and the other rule's): $(ls "$STATE/incidents")"
! compgen -G "$STATE/incidents/*-grp-reset-*" >/dev/null || fail "the group's second rule opened a bundle of its own"
B=$(compgen -G "$STATE/incidents/*-grp-watchdog-*")
python3 - "$B/manifest.json" <<'PY' || fail "the group's manifest is wrong: $(cat "$B/manifest.json")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["rule"]["group"] == "grp-nic", m["rule"]
assert m["repeats"] == 3, m["repeats"]
assert m["joined_rules"] == {"grp-reset": 2}, m["joined_rules"]
PY
python3 - "$(compgen -G "$STATE/incidents/*-grp-other-*")/manifest.json" <<'PY' || fail "the other rule's manifest is wrong"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["rule"]["group"] is None and m["repeats"] == 1 and m["joined_rules"] == {}, m
PY
show=$("$TPROF_BUNDLE" -D "$STATE" show "$(basename "$B")")
grep -q "Rule: grp-watchdog (cooldown group grp-nic)" <<<"$show" || fail "show does not name the group: $show"
grep -q "Repeats: 3 times within the group's cooldown (the first included); of them rule grp-reset 2x" <<<"$show" ||
        fail "show does not say which rule joined: $show"
echo ok
