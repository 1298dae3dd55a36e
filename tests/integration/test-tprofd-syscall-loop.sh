#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A rise in the kernel caused by a process's loop of system calls, end to end with the real daemon:
# a sender (tests/helpers/burn --sendto, its comm this run's own) sends datagrams to a UDP socket
# of its own on the loopback for 4 s from 2 s before a trigger written to /dev/kmsg. Nearly all
# its time is the kernel's (udp_sendmsg, the route lookup, the loopback device, its own softirq at
# local_bh_enable), spread over many functions; the C library's sendto() and the kernel's
# do_syscall_64() gather the samples the timer takes on the system call's way out and in, with
# interrupts disabled (syscall_exit_to_user_mode(), syscall_enter_from_user_mode(),
# include/linux/entry-common.h, Linux 6.18). show, show --json and the page must rank the sender
# among the rises around the event by a kernel function that did its work (or none), never by
# either; where it is the answer, its rise ran under the kernel's sending, not its loop. Other
# work on the machine may rise more: the sender must be among the rises, not the first.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ "$(uname -m)" = x86_64 ] || skip "the system call entry is looked for by its x86-64 name"
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
require_burn
[ -r /proc/kallsyms ] && grep -q ' [tT] udp_sendmsg$' /proc/kallsyms ||
        skip "no UDP in this kernel, or /proc/kallsyms hides its names"

cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: sendloop
    source: kernel
    origin: any
    match: 'tprof-sendloop-$TOKEN'
    before: 16s
    after: 4s
RULES
# This run's name (11 bytes): another suite may run senders of its own at once.
SENDER=su-$TOKEN
cp "$TPROF_BURN" "$TEST_TMP/$SENDER"

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s
sleep 14
"$TEST_TMP/$SENDER" --sendto 4 &
on_exit "kill $! 2>/dev/null"
sleep 2
echo "tprof-sendloop-$TOKEN now" >/dev/kmsg

bundle_shown sendloop
PYTHONPATH="$(dirname "$0")" python3 - "$TEST_TMP/show.json" "$TEST_TMP/report.html" "$SENDER" "$B" <<'PY' || fail "$(sed -n '/In short/,/^$/p;/^Around/,/^Services/p' "$TEST_TMP/show.txt")"
import json, sys
from bundle_check import (SyscallSamples, check_answers_agree, check_ranked, comm_counts, kernel_functions,
                          near_rise, page_analysis)
show, page = json.load(open(sys.argv[1])), page_analysis(sys.argv[2])
sender, bundle = sys.argv[3], sys.argv[4]
kernel = kernel_functions()
# The sender's own frames, the C library's wrapper of sendto() and the system call's way in: where
# its time is not.
user = {"main", "burn_sendto", "sendto", "__sendto", "__libc_sendto", "__send", "[unknown]"}
way_in = {"entry_SYSCALL_64", "entry_SYSCALL_64_after_hwframe", "do_syscall_64"}

def kernel_or_none(fn):
    return fn is None or (fn not in user and fn not in way_in and fn in kernel)

count_in_kernel = SyscallSamples(sender)

# Its rise, from the files: the event's own seconds against the rest of the bundle, most of it in
# the kernel (a sample the timer takes in a system call names its entry path).
near = comm_counts(bundle, "event.folded", count_in_kernel)
sl, base = comm_counts(bundle, "stacks.folded"), comm_counts(bundle, "baseline.folded")
a1, n1, a2, n2, z = near_rise(near, sl, base, [sender])
assert z >= 3 and a1 / n1 >= 2 * a2 / n2, (a1, n1, a2, n2, z)
in_kernel = count_in_kernel.n
assert 2 * in_kernel >= a1, ("in the kernel", in_kernel, a1)
print("the sender's samples: %d of %d around the event, %d in the kernel; %d of %d in the rest; z=%.1f" %
      (a1, n1, in_kernel, a2, n2, z))
# Ranked among the rises around the event where its z puts it, by a kernel function.
check_ranked(show, page, sender, z, kernel_or_none)
# One answer: show's and the page's; where the sender is the answer, its function is the kernel's
# and its rise ran under the kernel's sending (or the wrapper it was entered by), not its loop.
a = check_answers_agree(show, page)
if a and a["process"] == sender and a["kind"] == "process":
    assert kernel_or_none(a["top_function"]), a
    assert a.get("under") not in ("main", "burn_sendto", "[unknown]"), a
PY
echo "ok: $(grep -E "^  $SENDER " "$TEST_TMP/show.txt" || grep 'In short' "$TEST_TMP/show.txt")"
