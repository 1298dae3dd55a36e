#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The journal follower against a real journald: a private instance in a journal namespace of its own
# (systemd-journald NAMESPACE, the way systemd-journald@.service runs it), so the host's journal is
# neither read nor written. Clients reach it through a private mount namespace in which the
# namespace's socket directory is mounted over /run/systemd/journal, where logger --journald,
# systemd-cat and sd_journal_send() connect (systemd 252's systemd-cat has no --namespace).
#
# Checks: trusted fields as journald sets them; a client forging _TRANSPORT=kernel, _PID, _COMM,
# _UID and _SYSTEMD_UNIT gets none of them; the cursor resumes exactly across restarts; match
# strings filter; our own entries are skipped; a namespace without journal files is "no journal".
# Needs root; stops its journald and removes its files on exit.
set -eu
. "$(dirname "$0")/logsrc-lib.sh"

require_root
start_private_journald
STATE=$TEST_TMP/state

# No journal files for a namespace: a distinct error (the driver maps it to 77).
expect_exit 77 "$FOLLOW" --journal --namespace "tprof-none-$$" --timeout 1
grep -q "No data available" "$ERR" || fail "no-journal error: $(cat "$ERR")"

# Before the first start: not delivered (a first start begins at the tail).
jsend "MESSAGE=$TAG old entry" "SYSLOG_IDENTIFIER=tprof-test"

follow_bg run1 --journal --namespace "$NS" --state-dir "$STATE" --grep "$TAG" --count 4 --timeout 30
jsend "MESSAGE=$TAG forged" "_TRANSPORT=kernel" "_PID=1" "_COMM=kworker/0:1" "_UID=4242" \
        "_SYSTEMD_UNIT=kernel.service" "_EXE=/boot/vmlinuz" "SYSLOG_IDENTIFIER=kernel" "PRIORITY=2"
jsend "MESSAGE=$TAG native" "SYSLOG_IDENTIFIER=tprof-native" "PRIORITY=3"
echo "$TAG stdout" | ns_run systemd-cat -t tprof-cat -p warning
ns_run logger -u /run/systemd/journal/dev-log -t tprof-syslog -p user.notice "$TAG syslog"
follow_wait run1

expect_eq "run1 messages" "$(messages run1 | sort | tr '\n' ' ')" "forged native stdout syslog "
# Fields: source kernel_origin seq t_ns facility priority transport unit comm pid uid identifier message
line() { tagged run1 | awk -F'\t' -v m="$1" '$13 ~ (" " m "$")'; }
f() { echo "$1" | cut -f"$2"; }
forged=$(line forged)
expect_eq "forged source/origin" "$(f "$forged" 1,2 | tr '\t' ' ')" "journal 0"
expect_eq "forged transport" "$(f "$forged" 7)" journal
expect_eq "forged comm" "$(f "$forged" 9)" "$JSEND_COMM"
expect_eq "forged uid" "$(f "$forged" 11)" 0
[ "$(f "$forged" 10)" != 1 ] || fail "forged _PID=1 kept"
[ "$(f "$forged" 8)" != kernel.service ] || fail "forged _SYSTEMD_UNIT kept"
expect_eq "forged identifier (untrusted, shown)" "$(f "$forged" 12)" kernel
native=$(line native)
expect_eq "native transport/priority/identifier" "$(f "$native" 6,7,12 | tr '\t' ' ')" "3 journal tprof-native"
stdout=$(line stdout)
expect_eq "stdout transport/priority/identifier" "$(f "$stdout" 6,7,12 | tr '\t' ' ')" "4 stdout tprof-cat"
syslog=$(line syslog)
expect_eq "syslog transport/priority/facility" "$(f "$syslog" 5,6,7 | tr '\t' ' ')" "1 5 syslog"
tagged run1 | awk -F'\t' '$4 == 0 || $2 != 0 { exit 1 }' || fail "a record without perf time, or kernel origin"
[ -s "$STATE/state/journal-cursor" ] || fail "no cursor file"

# Written while the follower is down: delivered on restart, and only those.
jsend "MESSAGE=$TAG d1 while down" "SYSLOG_IDENTIFIER=tprof-test"
jsend "MESSAGE=$TAG d2 while down" "SYSLOG_IDENTIFIER=tprof-test"
follow_bg run2 --journal --namespace "$NS" --state-dir "$STATE" --grep "$TAG" --count 2 --timeout 30
follow_wait run2
expect_eq "run2 messages" "$(messages run2 | tr '\n' ' ')" "d1 while down d2 while down "
expect_eq "run2 skipped_old" "$(counter run2 journal skipped_old)" 1

# Nothing new: nothing delivered again (124: the driver's timeout).
follow_bg run3 --journal --namespace "$NS" --state-dir "$STATE" --timeout 2
follow_wait run3 124
expect_eq "run3 messages" "$(messages run3)" ""

# What lies before the saved cursor, read back for the log context only: the walk back counts the
# entries the context would keep (here: info or more urgent) and stops at its limit, so debug
# entries after them do not push them out; nothing older than the limit comes, nothing is
# delivered to the rules again. An entry whose PRIORITY is no syslog level is kept by the context
# (as one without a priority), so it counts.
jsend "MESSAGE=$TAG ctx-a0" "SYSLOG_IDENTIFIER=tprof-test" "PRIORITY=6"
jsend "MESSAGE=$TAG ctx-a1" "SYSLOG_IDENTIFIER=tprof-test" "PRIORITY=6"
jsend "MESSAGE=$TAG ctx-a2" "SYSLOG_IDENTIFIER=tprof-test" "PRIORITY=4"
jsend "MESSAGE=$TAG ctx-odd" "SYSLOG_IDENTIFIER=tprof-test" "PRIORITY=12"
for i in 1 2 3; do jsend "MESSAGE=$TAG ctx-debug$i" "SYSLOG_IDENTIFIER=tprof-test" "PRIORITY=7"; done
follow_bg run3b --journal --namespace "$NS" --state-dir "$STATE" --grep "ctx-debug3" --count 1 --timeout 30
follow_wait run3b
follow_bg run3c --journal --namespace "$NS" --state-dir "$STATE" --context-max 2 --context-priority 6 --timeout 2
follow_wait run3c 124
ctx=$(grep '^context:' "$TEST_TMP/run3c.out" | awk -F'\t' '{ print $NF }' | grep -o 'ctx-[a-z0-9]*' | tr '\n' ' ')
expect_eq "run3c context" "$ctx" "ctx-a2 ctx-odd ctx-debug1 ctx-debug2 ctx-debug3 "
expect_eq "run3c delivered" "$(grep -vc '^context:' "$TEST_TMP/run3c.out" || true)" 0

# Match strings: only entries one of them matches are read at all.
follow_bg run4 --journal --namespace "$NS" --state-dir "$TEST_TMP/state4" --match SYSLOG_IDENTIFIER=tprof-match \
        --match _COMM=systemd-cat-none --grep "$TAG" --count 1 --timeout 30
jsend "MESSAGE=$TAG m-no" "SYSLOG_IDENTIFIER=tprof-other"
jsend "MESSAGE=$TAG m-yes" "SYSLOG_IDENTIFIER=tprof-match"
follow_wait run4
expect_eq "run4 messages" "$(messages run4 | tr '\n' ' ')" "m-yes "
expect_eq "run4 records" "$(counter run4 journal records)" 1

# Our own entries (same identifier and our pid) are skipped; the same identifier from another
# process is not ours.
FOLLOW_WRAP=ns_run follow_bg run5 --journal --namespace "$NS" --own-identifier tprof-own \
        --log-self "$TAG own entry" --grep "$TAG" --count 1 --timeout 30
jsend "MESSAGE=$TAG other process" "SYSLOG_IDENTIFIER=tprof-own"
follow_wait run5
expect_eq "run5 messages" "$(messages run5 | tr '\n' ' ')" "other process "
expect_eq "run5 skipped_own" "$(counter run5 journal skipped_own)" 1
