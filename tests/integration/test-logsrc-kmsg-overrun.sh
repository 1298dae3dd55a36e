#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The kmsg follower falls behind the kernel ring: while it is stopped (SIGSTOP) we write several
# times the ring's size, so its next read() fails with EPIPE. It must count the overrun and the
# records lost, carry on and still deliver what comes after. Then a saved position older than the
# oldest record still buffered: the gap counts as lost. Needs root; floods the kernel log (the test
# VM's dmesg loses its older lines) and restores printk_devkmsg.
set -eu
. "$(dirname "$0")/logsrc-lib.sh"

require_kmsg_writable
command -v python3 >/dev/null || skip "needs python3 to write many records"
STATE=$TEST_TMP/state

flood() {
        # One write() per record; 2 MiB of text, well over any default ring (128 KiB - 1 MiB).
        python3 - "$TAG" <<'PY'
import os, sys
fd = os.open("/dev/kmsg", os.O_WRONLY)
pad = "x" * 180
for i in range(12000):
    os.write(fd, ("<6>%s flood %05d %s\n" % (sys.argv[1], i, pad)).encode())
os.close(fd)
PY
}

follow_bg run1 --kmsg /dev/kmsg --state-dir "$STATE" --grep "$TAG END" --count 1 --timeout 60
kill -STOP "$FOLLOW_PID"
flood
kill -CONT "$FOLLOW_PID"
kmsg_write "<6>$TAG END"
follow_wait run1
[ "$(counter run1 kmsg overruns)" -ge 1 ] || fail "no overrun counted: $(grep stats "$TEST_TMP/run1.err")"
lost=$(counter run1 kmsg lost)
[ "$lost" -gt 0 ] || fail "no records counted as lost"
delivered=$(messages run1 | grep -c '^flood ' || true)
[ "$delivered" -lt 12000 ] || fail "all flood records arrived, the ring did not overrun"
[ $((delivered + lost)) -ge 12000 ] || fail "delivered $delivered + lost $lost < 12000 written"
messages run1 | grep -qx END || fail "nothing delivered after the overrun"
# What was delivered is in order and without repeats.
tagged run1 | cut -f3 | sort -c -n -u || fail "sequence numbers not strictly increasing"

# A position of this boot older than the oldest buffered record.
printf 'boot_id=%s\nseq=0\n' "$(cat /proc/sys/kernel/random/boot_id)" >"$STATE/state/kmsg-position"
follow_bg run2 --kmsg /dev/kmsg --state-dir "$STATE" --grep "$TAG END" --count 1 --timeout 60
follow_wait run2
[ "$(counter run2 kmsg lost)" -gt 0 ] || fail "an old position counted nothing as lost"
