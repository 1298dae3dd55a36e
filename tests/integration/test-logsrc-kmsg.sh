#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The kmsg follower on the real /dev/kmsg: what user space writes arrives as not kernel-logged
# (the kernel forces a non-zero facility), a restart with the same state directory delivers the
# records written while it was down and none twice, after a stop by signal too, and a position from
# another boot starts at the end of the buffer. Needs root; restores printk_devkmsg.
set -eu
. "$(dirname "$0")/logsrc-lib.sh"

require_kmsg_writable
STATE=$TEST_TMP/state

# First start: begins at the end of the buffer, so nothing of the past shows up.
follow_bg run1 --kmsg /dev/kmsg --state-dir "$STATE" --grep "$TAG" --count 3 --timeout 30
kmsg_write "<6>$TAG a1 asks for facility 0"
kmsg_write "<30>$TAG a2 daemon facility"
kmsg_write "$TAG a3 without prefix"
follow_wait run1
expect_eq "run1 messages" "$(messages run1 | tr '\n' ' ')" "a1 asks for facility 0 a2 daemon facility a3 without prefix "
# Fields: source kernel_origin seq t_ns facility priority ...
expect_eq "a1 origin/facility/level" "$(tagged run1 | sed -n 1p | cut -f1,2,5,6 | tr '\t' ' ')" "kmsg 0 1 6"
expect_eq "a2 origin/facility/level" "$(tagged run1 | sed -n 2p | cut -f2,5,6 | tr '\t' ' ')" "0 3 6"
expect_eq "a3 origin/facility" "$(tagged run1 | sed -n 3p | cut -f2,5 | tr '\t' ' ')" "0 1"
tagged run1 | awk -F'\t' '$4 == 0 { exit 1 }' || fail "a record without a timestamp"
[ -f "$STATE/state/kmsg-position" ] || fail "no position file"
grep -q "^boot_id=$(cat /proc/sys/kernel/random/boot_id)$" "$STATE/state/kmsg-position" || fail "position boot id"
last=$(tagged run1 | tail -1 | cut -f3)
grep -q "^seq=$last$" "$STATE/state/kmsg-position" || fail "position is not the last record: $(cat "$STATE/state/kmsg-position")"

# Written while the follower is down: delivered on restart, and only those.
kmsg_write "<6>$TAG b1 while down"
kmsg_write "<6>$TAG b2 while down"
follow_bg run2 --kmsg /dev/kmsg --state-dir "$STATE" --grep "$TAG" --count 2 --timeout 30
follow_wait run2
expect_eq "run2 messages" "$(messages run2 | tr '\n' ' ')" "b1 while down b2 while down "
[ "$(counter run2 kmsg skipped_old)" -gt 0 ] || fail "run2 skipped nothing old"

# Stopped by SIGTERM after a record: the position is saved on the way out.
follow_bg run3 --kmsg /dev/kmsg --state-dir "$STATE" --timeout 30
kmsg_write "<6>$TAG c1 before sigterm"
for i in $(seq 100); do messages run3 | grep -q c1 && break; sleep 0.05; done
kill -TERM "$FOLLOW_PID"
follow_wait run3
expect_eq "run3 messages" "$(messages run3 | tr '\n' ' ')" "c1 before sigterm "

# Nothing new: a restart delivers nothing of ours (exit 124 is the driver's timeout).
follow_bg run4 --kmsg /dev/kmsg --state-dir "$STATE" --timeout 2
follow_wait run4 124
expect_eq "run4 messages" "$(messages run4)" ""

# A position from another boot: start at the end, not at its sequence number.
echo 00000000-1111-2222-3333-444444444444 >"$TEST_TMP/other-boot"
kmsg_write "<6>$TAG d1 before the new boot's start"
TPROF_BOOT_ID_PATH="$TEST_TMP/other-boot" follow_bg run5 --kmsg /dev/kmsg --state-dir "$STATE" \
        --grep "$TAG" --count 1 --timeout 30
kmsg_write "<6>$TAG d2 after"
follow_wait run5
expect_eq "run5 messages" "$(messages run5 | tr '\n' ' ')" "d2 after "

# from_start without a state directory replays the buffer, ours included.
follow_bg run6 --kmsg /dev/kmsg --from-start --grep "$TAG" --count 8 --timeout 30
follow_wait run6
expect_eq "run6 messages" "$(messages run6 | cut -c1-2 | tr '\n' ' ')" "a1 a2 a3 b1 b2 c1 d1 d2 "

# Our own user-space records ("<identifier>[<pid>]: ...") are skipped; this shell's are not ours.
follow_bg run7 --kmsg /dev/kmsg --own-identifier "tprof-test" --grep "$TAG" --count 1 --timeout 30
kmsg_write "<6>tprof-test[$FOLLOW_PID]: $TAG e1 as if from the follower"
kmsg_write "<6>$TAG e2 from someone else"
follow_wait run7
expect_eq "run7 messages" "$(messages run7 | tr '\n' ' ')" "e2 from someone else "
expect_eq "run7 skipped_own" "$(counter run7 kmsg skipped_own)" 1

# The saved position is still the other boot's (run5): with from_start_on_new_boot this boot's whole
# buffer is new, ours included; without it (run5) only what came after the start.
grep -q "^boot_id=00000000-1111-2222-3333-444444444444$" "$STATE/state/kmsg-position" || fail "run5 position"
follow_bg run8 --kmsg /dev/kmsg --state-dir "$STATE" --from-start-on-new-boot --grep "$TAG" --count 10 --timeout 30
follow_wait run8
expect_eq "run8 messages" "$(messages run8 | cut -c1-2 | tr '\n' ' ')" "a1 a2 a3 b1 b2 c1 d1 d2 e1 e2 "
