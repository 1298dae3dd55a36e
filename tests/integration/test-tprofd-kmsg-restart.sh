#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Exactly once across restarts, with the real daemon and the real /dev/kmsg: a line matched before
# tprofd is killed (SIGKILL, no chance to clean up) is not matched again after the restart, and a
# line written while tprofd was down is matched when it comes back. A kernel-only rule with the
# same pattern never fires on these user-written lines.
set -eu
. "$(dirname "$0")/logsrc-lib.sh"

require_perf
require_kmsg_writable

cat >"$TEST_TMP/rules.yaml" <<RULES
defaults: { before: 1s, after: 1s, cooldown: 0s }
rules:
  - name: restart-any
    source: kernel
    origin: any
    match: 'tprof-restart-$TOKEN (?<n>\w+)'
  - name: restart-kernel
    source: kernel
    match: 'tprof-restart-$TOKEN (?<n>\w+)'
RULES

matched() { grep -c "rule restart-any matched kmsg: tprof-restart-$TOKEN $1\$" "$TEST_TMP/tprofd.log" || true; }

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s --control-socket ""
kmsg_write "tprof-restart-$TOKEN before"
wait_for 10 grep -q "tprof-restart-$TOKEN before" "$TEST_TMP/tprofd.log" || fail "first line not matched"
sleep 0.5 # the position is saved right after the batch that held the line

kill -KILL "$TPROFD_PID"
wait "$TPROFD_PID" 2>/dev/null || true
kmsg_write "tprof-restart-$TOKEN while-down"

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s --control-socket ""
wait_for 10 grep -q "tprof-restart-$TOKEN while-down" "$TEST_TMP/tprofd.log" ||
        fail "a line written while tprofd was down was missed: $(tail "$TEST_TMP/tprofd.log")"
kmsg_write "tprof-restart-$TOKEN after"
wait_for 10 grep -q "tprof-restart-$TOKEN after" "$TEST_TMP/tprofd.log" || fail "line after restart not matched"
sleep 1

[ "$(matched before)" = 1 ] || fail "'before' matched $(matched before) times"
[ "$(matched while-down)" = 1 ] || fail "'while-down' matched $(matched while-down) times"
[ "$(matched after)" = 1 ] || fail "'after' matched $(matched after) times"
! grep -q "rule restart-kernel matched" "$TEST_TMP/tprofd.log" || fail "a kernel-only rule fired on user-written lines"
grep -q "^boot_id=" "$STATE/state/kmsg-position" || fail "no kmsg position saved"
stop_tprofd
echo ok
