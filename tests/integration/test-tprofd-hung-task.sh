#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A real hung task, end to end: the kernel of this machine reports it, and the shipped default
# rules (rules/default.yaml) fire on it through the daemon's /dev/kmsg, as in production; no line
# is written from user space and no rule is the test's own.
#
# A small ext4 filesystem on a loop device is frozen (fsfreeze), and a writer (dd, its comm this
# run's own) opens a file there to write: it sleeps in the kernel, uninterruptibly, until the
# filesystem thaws (Linux 6.18: sb_start_write() -> percpu_down_read(), TASK_UNINTERRUPTIBLE).
# With kernel.hung_task_timeout_secs lowered to 3 for the test, khungtaskd (kernel/hung_task.c,
# check_hung_uninterruptible_tasks() -> hung_task_info(), Linux 6.18) reports it within two to
# three timeouts: "INFO: task %s:%d blocked for more than %ld seconds.", then the task dump.
# Checked: one hung-task bundle; its trigger is that line, as read back from /dev/kmsg (sequence
# number and time), of kernel origin; its captures name the writer (comm, pid) and the timeout;
# tprof-bundle show names the event. The timeout and kernel.hung_task_warnings (which each report
# counts down) are restored, and the filesystem thawed, unmounted and its loop device detached,
# as soon as the report is in and at exit whatever happens.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -r /dev/kmsg ] || skip "/dev/kmsg is not readable"
SYS=/proc/sys/kernel
[ -w $SYS/hung_task_timeout_secs ] && [ -w $SYS/hung_task_warnings ] ||
        skip "this kernel has no hung task detector (CONFIG_DETECT_HUNG_TASK)"
[ "$(cat $SYS/hung_task_panic 2>/dev/null || echo 0)" = 0 ] ||
        skip "kernel.hung_task_panic is set: a hung task would panic this machine"
for tool in losetup mkfs.ext4 fsfreeze mount mountpoint umount dd; do
        command -v "$tool" >/dev/null || skip "$tool is not installed"
done
grep -qw ext4 /proc/filesystems || skip "this kernel has no ext4"

TIMEOUT=3
OLD_TIMEOUT=$(cat $SYS/hung_task_timeout_secs)
OLD_WARNINGS=$(cat $SYS/hung_task_warnings)
MNT=$TEST_TMP/mnt
LOOP=
WRITER_PID=

restore_sysctls() {
        echo "$OLD_TIMEOUT" >$SYS/hung_task_timeout_secs
        echo "$OLD_WARNINGS" >$SYS/hung_task_warnings
}
# Thaw first: the writer then finishes, and nothing holds the mount.
release_fs() {
        if mountpoint -q "$MNT"; then
                fsfreeze -u "$MNT" 2>/dev/null || true
                [ -z "$WRITER_PID" ] || wait "$WRITER_PID" 2>/dev/null || true
                umount "$MNT" || umount -l "$MNT"
        fi
        [ -z "$LOOP" ] || losetup -d "$LOOP"
        LOOP=
}
on_exit restore_sysctls
on_exit release_fs

# Inode tables and journal written now: no kernel thread of the filesystem's (ext4lazyinit) has
# work left to block on the freeze and be reported before the writer.
truncate -s 32M "$TEST_TMP/fs.img"
mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$TEST_TMP/fs.img" >"$OUT" 2>&1 || fail "mkfs.ext4: $(cat "$OUT")"
LOOP=$(losetup -f --show "$TEST_TMP/fs.img" 2>"$ERR") || skip "no loop device: $(cat "$ERR")"
mkdir "$MNT"
mount -t ext4 "$LOOP" "$MNT" 2>"$ERR" || fail "mount: $(cat "$ERR")"

# This run's name (13 bytes): another suite may run a writer of its own.
WRITER=hung-$TOKEN
cp "$(command -v dd)" "$TEST_TMP/$WRITER"

start_tprofd --rules "$TPROF_SOURCE_ROOT/rules/default.yaml" --window 4s
sleep 1

fsfreeze -f "$MNT"
# A report needs warnings left; -1 is no limit.
[ "$OLD_WARNINGS" -lt 0 ] || [ "$OLD_WARNINGS" -ge 10 ] || echo 10 >$SYS/hung_task_warnings
echo "$TIMEOUT" >$SYS/hung_task_timeout_secs
"$TEST_TMP/$WRITER" if=/dev/zero of="$MNT/file" bs=4k count=1 2>/dev/null &
WRITER_PID=$!
writer_blocked() { [ "$(awk '{ print $3 }' "/proc/$WRITER_PID/stat")" = D ]; }
wait_for 5 writer_blocked || fail "the writer did not block on the frozen filesystem"

# The records are kept as they were when the report came: on a busy host the kernel's buffer may
# wrap over it before the bundle is done.
reported() {
        kmsg_records >"$TEST_TMP/kmsg.txt" &&
                grep -q "^[0-7],[0-9]*,[0-9]*;INFO: task $WRITER:$WRITER_PID blocked" "$TEST_TMP/kmsg.txt"
}
wait_for 20 reported || fail "no hung task report within 20 s: $(kmsg_records | grep 'INFO: task' | tail -3)"
restore_sysctls
release_fs

bundle_shown hung-task
[ "$(compgen -G "$STATE/incidents/*-hung-task-*" | wc -l)" = 1 ] || fail "more than one hung-task bundle: $(ls "$STATE/incidents")"

rc=0
python3 - "$B" "$TEST_TMP/kmsg.txt" "$WRITER" "$WRITER_PID" "$TIMEOUT" <<'PY' || rc=$?
import json, re, sys
bundle, kmsg, writer, pid, timeout = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
m = json.load(open(bundle + "/manifest.json"))
ev = m["event"]

line = None
for l in open(kmsg):
    head, _, msg = l.rstrip("\n").partition(";")
    pri, seq, usec = (int(x) for x in head.split(","))
    if pri >> 3 == 0 and msg.startswith("INFO: task %s:%d blocked" % (writer, pid)):
        line = (seq, usec, msg)
        break
assert line, "the kernel's report is not among the records read when it came"
# Another task blocked as long in these seconds, reported first: this bundle is its.
if ev.get("captures", {}).get("pid") != str(pid) and ev["seq"] < line[0]:
    print("another task's report came first: %s" % ev["message"])
    sys.exit(77)

assert m["rule"]["name"] == "hung-task", m["rule"]
assert ev["source"] == "kmsg" and ev["kernel_origin"] is True and ev["facility"] == 0, ev
assert ev["seq"] == line[0] and ev["message"] == line[2], (ev, line)
assert ev["t_perf_ns"] // 1000 == line[1], (ev["t_perf_ns"], line)
assert re.fullmatch(r"INFO: task %s:%d blocked for more than %d seconds\." % (writer, pid, timeout), line[2]), line
assert ev["captures"] == {"comm": writer, "pid": str(pid), "secs": str(timeout)}, ev["captures"]
print("trigger seq %d: %s" % (line[0], line[2]))
PY
[ "$rc" != 77 ] || skip "another task blocked in these seconds was reported before the writer"
[ "$rc" = 0 ] || fail "manifest: $(cat "$B/manifest.json")"

grep -q "hung-task" "$TEST_TMP/show.txt" && grep -qF "INFO: task $WRITER:$WRITER_PID blocked" "$TEST_TMP/show.txt" ||
        fail "show does not name the event: $(head -20 "$TEST_TMP/show.txt")"
echo "ok"
