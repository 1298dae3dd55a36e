#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kernel frames are named: a process living in getppid() shows the syscall entry path, and the
# kernel part of the stack sits above its user part (folded stacks are root first).
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"
require_perf

"$(burn_as burn-sys)" --syscall 5 &
pid=$!
on_exit "kill $pid 2>/dev/null"
sleep 0.3

once 3

total=$(comm_total burn-sys)
kernel=$(comm_matching burn-sys '(do_syscall_64|entry_SYSCALL_64|__x64_sys_getppid|__do_sys_getppid|sys_getppid)')
echo "burn-sys samples: $total, with syscall frames: $kernel"
[ "$total" -ge 20 ] || fail "only $total samples of burn-sys: $(head -c 2000 "$OUT")"
# How much of a getppid() loop a timer sample finds in the kernel depends on the machine: on a
# paravirtualised guest the timer interrupt waits for the kernel to enable interrupts again, and
# perf record itself puts only 45-50% of such a loop's samples in the kernel there. A sampler that
# dropped or failed to name kernel chains would show none, so a fifth is the bound.
[ $((kernel * 100)) -ge $((total * 20)) ] || fail "$kernel of $total samples name the syscall path: $(grep '^burn-sys;' "$OUT" | head)"
# The user side is still there under the kernel part. (libc's syscall() keeps no frame pointer, so
# the frame-pointer walk skips its caller burn_syscall and goes on at main, as perf's does.)
[ "$(comm_matching burn-sys ';main;(burn_syscall;)?syscall;(entry_SYSCALL_64|entry_SYSCALL_64_after_hwframe);do_syscall_64')" -gt 0 ] ||
        fail "no stack goes from main through syscall() into the kernel: $(grep '^burn-sys;' "$OUT" | head)"
echo OK
