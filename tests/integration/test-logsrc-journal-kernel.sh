#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kernel entries in the journal are never delivered by the journal source (tprofd takes them from
# kmsg). A namespace journald does not read /dev/kmsg, so this test runs a main-instance journald,
# which does, inside a private mount namespace with fresh tmpfs over /run and /var/log/journal: it
# imports the kernel buffer as _TRANSPORT=kernel entries into files only this test sees. Then the
# journal source, reading those files, must deliver none of them, neither through its own match nor
# when an owner's match asks for _TRANSPORT=kernel. Needs root; restores printk_devkmsg.
set -eu

if [ -z "${TPROF_IN_PRIVATE_NS:-}" ]; then
        [ "$(id -u)" = 0 ] || { echo "SKIP: needs root" >&2; exit 77; }
        unshare -m true 2>/dev/null || { echo "SKIP: cannot create a mount namespace" >&2; exit 77; }
        exec unshare -m env TPROF_IN_PRIVATE_NS=1 "$0" "$@"
fi

. "$(dirname "$0")/logsrc-lib.sh"

JOURNALD=/lib/systemd/systemd-journald
[ -x "$JOURNALD" ] || skip "no $JOURNALD"
[ -s /etc/machine-id ] || skip "no /etc/machine-id, journald would not start"
require_kmsg_writable

# TEST_TMP is under /tmp, untouched by these mounts.
mount -t tmpfs tmpfs /run || fail "cannot mount a private /run"
if [ -d /var/log/journal ]; then
        mount -t tmpfs tmpfs /var/log/journal || fail "cannot mount a private /var/log/journal"
fi

kmsg_write "<6>$TAG user line into kmsg"

"$JOURNALD" >"$TEST_TMP/journald.log" 2>&1 &
JOURNALD_PID=$!
on_exit "kill $JOURNALD_PID 2>/dev/null; wait $JOURNALD_PID 2>/dev/null"

# journald imports the kernel buffer at start; wait until our line is in its files.
for i in $(seq 200); do
        journalctl --no-pager -q -k -g "$TAG" >/dev/null 2>&1 && break
        kill -0 "$JOURNALD_PID" 2>/dev/null || fail "journald died: $(cat "$TEST_TMP/journald.log")"
        sleep 0.05
done
journalctl --no-pager -q -k -g "$TAG" >/dev/null 2>&1 || skip "journald did not import /dev/kmsg here"
# One JSON object a line: an entry whose message holds a newline (amd_pstate prints one) is one entry.
nkernel=$(journalctl --no-pager -q -k -o json | wc -l)
[ "$nkernel" -gt 0 ] || fail "no kernel entries in the private journal"
printf 'MESSAGE=%s\nSYSLOG_IDENTIFIER=tprof-test\n' "$TAG from a client" | logger --journald

# The source's own filter: kernel entries are not even read.
expect_exit 0 "$FOLLOW" --journal --from-start --grep "$TAG" --count 1 --timeout 30
cp "$OUT" "$TEST_TMP/run1.out"
cp "$ERR" "$TEST_TMP/run1.err"
expect_eq "run1 messages" "$(messages run1 | tr '\n' ' ')" "from a client "
awk -F'\t' '$7 == "kernel" || $2 != 0 { exit 1 }' "$TEST_TMP/run1.out" || fail "a kernel entry was delivered"

# An owner match on _TRANSPORT=kernel reads them, the check after reading still drops every one.
expect_exit 124 "$FOLLOW" --journal --from-start --match _TRANSPORT=kernel --timeout 2
cp "$OUT" "$TEST_TMP/run2.out"
cp "$ERR" "$TEST_TMP/run2.err"
awk -F'\t' '$7 == "kernel" || $2 != 0 { exit 1 }' "$TEST_TMP/run2.out" || fail "a kernel entry was delivered"
[ "$(counter run2 journal skipped_kernel)" -ge "$nkernel" ] ||
        fail "skipped_kernel $(counter run2 journal skipped_kernel) < $nkernel kernel entries"
echo "kernel entries: $nkernel; $(grep stats "$TEST_TMP/run2.err")"
