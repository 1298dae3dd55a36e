#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The kernels tprofd runs on: under TPROF_KERNEL (tests/helpers/old-kernel.c, which refuses
# what that version's perf_event_open() refuses, as kernel/events/core.c and
# include/uapi/linux/perf_event.h at that version do), `tprofd --once` must sample a burner with
# its whole stack, and say, one "kernel:" line each, what that version lacks: nothing from 5.7 on,
# PERF_SAMPLE_CGROUP before (cgroups then come from /proc), and in 3.10 also sample_max_stack
# (past its 96-byte struct perf_event_attr: E2BIG), comm_exec, PERF_FLAG_FD_CLOEXEC and mmap2
# (EINVAL). The daemon must start on 3.10, log the same, capture a bundle with whole stacks, and
# once killed, finish the window it left open when it starts again.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"
: "${TPROF_OLD_KERNEL:?run through meson test}"
require_perf
grep -q __asan_init "$TPROFD" && skip "a sanitizer build takes no LD_PRELOAD"

burn=$(burn_as burn-kernels)
"$burn" 60 &
pid=$!
on_exit "kill $pid 2>/dev/null"
sleep 0.3

LACK_CGROUP='no PERF_SAMPLE_CGROUP (Linux 5.7)'
LACK_3_10=("$LACK_CGROUP" 'no sample_max_stack (Linux 4.8)' 'no comm_exec (Linux 3.16)'
           'no PERF_FLAG_FD_CLOEXEC (Linux 3.14)' 'no PERF_RECORD_MMAP2 (Linux 3.12)')

# check_once VERSION CGROUP_SOURCE UNWIND LACKS...: `tprofd --once --unwind UNWIND` as on that kernel.
check_once() {
        local v=$1 source=$2 unwind=$3 total good lacks
        shift 3
        TPROF_KERNEL=$v LD_PRELOAD=$TPROF_OLD_KERNEL once 2 --unwind "$unwind" ||
                fail "$v: tprofd --once failed: $(cat "$ERR")"
        total=$(comm_total burn-kernels)
        good=$(comm_matching burn-kernels ';main;burn_outer;burn_middle;burn_leaf$')
        echo "$v: $total burn samples, $good with the whole path"
        [ "$total" -ge 20 ] || fail "$v: only $total samples of the burner in 2 s at 97 Hz: $(cat "$ERR")"
        [ $((good * 100)) -ge $((total * 80)) ] ||
                fail "$v: $good of $total burner samples have main;burn_outer;burn_middle;burn_leaf: $(grep '^burn-kernels;' "$OUT" | head)"
        grep -q "^  cgroups: from $source," "$ERR" || fail "$v: cgroups not from $source: $(cat "$ERR")"
        lacks=$(grep -c '^  kernel: ' "$ERR") || true
        [ "$lacks" -eq $# ] || fail "$v: $lacks lines of what the kernel lacks, expected $#: $(cat "$ERR")"
        for l in "$@"; do
                grep -qF "  kernel: $l" "$ERR" || fail "$v: does not say '$l': $(cat "$ERR")"
        done
}

check_once 5.14 perf auto
check_once 5.10 perf auto
check_once 5.4 proc auto "$LACK_CGROUP"
check_once 4.19 proc auto "$LACK_CGROUP"
check_once 4.18 proc auto "$LACK_CGROUP"
check_once 4.14 proc auto "$LACK_CGROUP"
check_once 4.4 proc auto "$LACK_CGROUP"
check_once 3.10 proc auto "${LACK_3_10[@]}"
# Frame pointers: the kernel walks the user stack (no register and stack copies).
check_once 3.10 proc fp "${LACK_3_10[@]}"

# The daemon on 3.10: it says what is lost and its bundles hold whole stacks.
export TPROF_KERNEL=3.10
LD_PRELOAD=$TPROF_OLD_KERNEL start_tprofd --rules "$TPROF_SOURCE_ROOT/rules" --window 4s
unset TPROF_KERNEL
for l in "${LACK_3_10[@]}"; do
        grep -qF "Perf events: $l" "$TEST_TMP/tprofd.log" || fail "the daemon does not say '$l': $(cat "$TEST_TMP/tprofd.log")"
done
# A burner started now is known from the kernel's records alone: MMAP (not MMAP2), and a COMM
# that does not say it execs.
late=$(burn_as burn-late)
"$late" 30 &
on_exit "kill $! 2>/dev/null"
sleep 2
ID=$("$TPROF_BUNDLE" capture --before 2s --after 1s) || fail "capture failed: $(tail -20 "$TEST_TMP/tprofd.log")"
F="$STATE/incidents/$ID/stacks.folded"
[ -f "$F" ] || fail "bundle $ID has no stacks.folded: $(ls "$STATE/incidents/$ID")"
OUT=$F
for comm in burn-kernels burn-late; do
        total=$(comm_total $comm)
        good=$(comm_matching $comm ';main;burn_outer;burn_middle;burn_leaf$')
        echo "daemon on 3.10: $total samples of $comm in the bundle, $good with the whole path"
        [ "$total" -ge 20 ] || fail "daemon on 3.10: only $total samples of $comm in 3 s: $(head -20 "$F")"
        [ $((good * 100)) -ge $((total * 80)) ] || fail "daemon on 3.10: $good of $total samples of $comm whole: $(grep "^$comm;" "$F" | head)"
done

# Killed, it leaves its open window behind; the next run on 3.10 (no renameat2(): 3.15) finishes it.
kill -KILL "$TPROFD_PID"
wait "$TPROFD_PID" 2>/dev/null || true
compgen -G "$STATE/ring/*.tpw.partial" >/dev/null || fail "no open window left: $(ls "$STATE/ring")"
export TPROF_KERNEL=3.10
LD_PRELOAD=$TPROF_OLD_KERNEL start_tprofd --rules "$TPROF_SOURCE_ROOT/rules" --window 4s
unset TPROF_KERNEL
grep -q "Finalized window .* left open by an earlier run" "$TEST_TMP/tprofd.log" ||
        fail "the open window was not finished: $(tail -20 "$TEST_TMP/tprofd.log")"
stop_tprofd
echo OK
