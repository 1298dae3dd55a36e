#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# No journal entry missed or matched twice: bursts of entries sent back to back to a journald of the
# test's own reach tprofd's journal rule exactly once each — a burst at once after tprofd starts
# following, bursts across a rotation of the journal files (a new file appears mid-stream), a burst
# sent while tprofd is down (the cursor resumes). The first run reads every entry (journal context
# on); the second reads only through its rules' sd-journal matches (journal context off), resuming
# from the first run's cursor. Meant to be run with the CPUs
# busy: nothing here waits on timing, only on the entries being written (journal-send.py returns
# once journald has written them) and on tprofd's log.
set -eu
. "$(dirname "$0")/logsrc-lib.sh"

require_perf
start_private_journald

N=${BURST_ENTRIES:-150}
cat >"$TEST_TMP/rules.yaml" <<RULES
defaults: { before: 1s, after: 1s, cooldown: 1h }
rules:
  - name: burst
    source: journal
    comm: $JSEND_COMM
    match: 'burst $TOKEN (?<b>\w+)-(?<i>\d+)\$'
RULES

run() {
        start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s --control-socket "" --log-level debug \
                --journal-namespace "$NS" "$@"
}
following() { grep -q "Following the journal namespace $NS with $1 match(es), context: $2" "$TEST_TMP/tprofd.log"; }
# The first match opens the incident (info), the others join it (debug); each names its entry.
seen() { grep -oE "rule burst matched.*burst $TOKEN [a-z0-9]+-[0-9]+\$" "$TEST_TMP/tprofd.log" | grep -oE '[a-z0-9]+-[0-9]+$' || true; }
seen_count() { seen | wc -l; }
burst() { jsend --burst "$N" "MESSAGE=burst $TOKEN $1-%d" "SYSLOG_IDENTIFIER=burst" "PRIORITY=5"; SENT=$((SENT + N)); }
all_seen() { [ "$(seen_count)" -ge "$SENT" ]; }
SENT=0

run
following 0 info || fail "not following every entry: $(cat "$TEST_TMP/tprofd.log")"
burst start                     # at once after tprofd opened the journal
burst second
journalctl --namespace "$NS" --rotate >/dev/null 2>&1 || fail "journalctl --rotate failed"
burst rotated                   # into a file that appeared after tprofd opened the journal
wait_for 60 all_seen || fail "matched $(seen_count) of $SENT before the restart"
stop_tprofd
burst down                      # written while tprofd is down: the cursor resumes before them
run --journal-context off
following 1 off || fail "not following through the rule's match: $(tail -5 "$TEST_TMP/tprofd.log")"
burst restarted
wait_for 60 all_seen || fail "matched $(seen_count) of $SENT after the restart"
sleep 1 # anything matched twice would show now

dups=$(seen | sort | uniq -d | head -5)
[ -z "$dups" ] || fail "matched more than once: $dups"
for b in start second rotated down restarted; do
        got=$(seen | grep -c "^$b-" || true)
        [ "$got" = "$N" ] || fail "burst $b: matched $got of $N"
done
[ "$(seen_count)" = "$SENT" ] || fail "matched $(seen_count), sent $SENT"
stop_tprofd
echo ok
