#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The story tprof was made for, with the rise where it was: in the kernel, under the system calls
# of an ordinary process. A node agent (tests/helpers/stat-reader: 0.5% of a CPU) reads the
# memory.stat of a few hundred cgroups, as the kubelet did; for 5 s around a kernel line it takes
# 12% of a CPU more (the story's 6.5%, with margin for a z well above 3 on a busy machine), nearly
# all of it in open() and read() of those files. Two burners keep both CPUs busy. The bundle must
# show the agent rising in the event's own seconds, and its leaf that rose most, where one has
# samples enough, must be the kernel's (the memory controller's, kernfs', the VFS's: never the C
# library's read() or "[unknown]"); where the answer is the agent, the caller most of its rise ran
# under must be the kernel's, the system call's wrapper or the agent's function that makes the
# calls, never its loop above them. show, show
# --json and the page must give one answer. Other work on the machine may rise more: the agent must
# be among the rises, not the first.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ "$(uname -m)" = x86_64 ] || skip "the system call entry is looked for by its x86-64 name"
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
[ -n "${TPROF_STAT_READER:-}" ] && [ -x "$TPROF_STAT_READER" ] || skip "the stat-reader helper was not built"
require_burn
[ -r /proc/kallsyms ] && grep -q ' [tT] memory_stat_show$' /proc/kallsyms ||
        skip "no memory controller in this kernel, or /proc/kallsyms hides its names"

# A hierarchy with the memory controller: cgroup v1's memory mount, or v2 with memory enabled
# below its root (mm/memcontrol-v1.c and mm/memcontrol.c, Linux 6.12: memory.stat in each group).
MEM=$(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup" && $(i + 3) ~ /(^|,)memory(,|$)/) { print $5; exit } }' /proc/self/mountinfo)
V2=""
if [ -z "$MEM" ]; then
        V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
        [ -n "$V2" ] && grep -qw memory "$V2/cgroup.subtree_control" 2>/dev/null ||
                skip "no cgroup hierarchy with the memory controller"
        MEM=$V2
fi
[ -w "$MEM" ] || skip "the memory cgroups at $MEM are not writable"

AGENT=kl-$TOKEN # its comm: this run's own, 11 bytes
PARENT="$MEM/tprof-test-$TOKEN"
mkdir "$PARENT"
on_exit "rmdir '$PARENT'/c*/ '$PARENT' 2>/dev/null"
[ -z "$V2" ] || echo +memory >"$PARENT/cgroup.subtree_control"
for i in $(seq 1 300); do mkdir "$PARENT/c$i"; done
[ -r "$PARENT/c1/memory.stat" ] || skip "the test's cgroups have no memory.stat"
cp "$TPROF_STAT_READER" "$TEST_TMP/$AGENT"

ena_rule ena-story 10

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s
burn_both 40
HOT="$TEST_TMP/hot"
"$TEST_TMP/$AGENT" 40 "$HOT" "$PARENT"/c*/memory.stat &
on_exit "kill $! 2>/dev/null"
story_burst 16

bundle_shown ena-story
PYTHONPATH="$(dirname "$0")" python3 - "$TEST_TMP/show.json" "$TEST_TMP/report.html" "$AGENT" "$B" <<'PY' || fail "$(sed -n '/In short/,/^$/p;/^Around/,/^Services/p' "$TEST_TMP/show.txt")"
import json, sys
from bundle_check import (SyscallSamples, check_answers_agree, check_ranked, comm_counts, kernel_functions,
                          near_rise, page_analysis)
show, page = json.load(open(sys.argv[1])), page_analysis(sys.argv[2])
agent, bundle = sys.argv[3], sys.argv[4]
kernel = kernel_functions()
# The agent's own frames and the C library's system call wrappers: where its time is not.
user = {"main", "read_one", "read_for", "read", "__read", "__libc_read", "open", "open64", "__open",
        "__open64", "__libc_open64", "close", "__close", "__libc_close", "[unknown]"}

def is_kernel(fn):
    return fn is not None and fn not in user and fn in kernel

# A leaf of a few samples is no function that rose: a rise spread over many kernel functions
# names none, and the answer the caller most of it ran under, if one holds half of it.
def kernel_or_none(fn):
    return fn is None or is_kernel(fn)

# What the rise ran under: a kernel function, or the C library's system call wrapper the kernel
# work was entered by (read() holds its own samples too: it is named where the kernel's frames
# under it fall a sample or two short of half the rise), or read_one, the agent's function that
# makes the system calls (named where its kernel work splits over open(), read() and close() with
# none holding half, as a few dozen samples on a busy machine can), never the agent's loop above
# it (read_for, main) or nothing.
wrappers = (user - {"main", "read_for", "[unknown]"})
def under_ok(fn):
    return kernel_or_none(fn) or fn in wrappers

count_in_kernel = SyscallSamples(agent)

# The agent's rise, from the files: the event's own seconds against the rest of the bundle, and
# most of it in the kernel (a sample the timer takes in a system call names its entry path).
near = comm_counts(bundle, "event.folded", count_in_kernel)
sl, base = comm_counts(bundle, "stacks.folded"), comm_counts(bundle, "baseline.folded")
a1, n1, a2, n2, z = near_rise(near, sl, base, [agent])
# 12% of a CPU for 5 s of the 10 s, of 2 CPUs' samples: about 3% more, from 0.25%
assert z >= 3 and a1 / n1 >= 2 * a2 / n2 and 0.005 < a1 / n1 < 0.05, (a1, n1, a2, n2, z)
in_kernel = count_in_kernel.n
assert 2 * in_kernel >= a1, ("in the kernel", in_kernel, a1)
print("the agent's samples: %d of %d around the event, %d in the kernel; %d of %d in the rest; z=%.1f" %
      (a1, n1, in_kernel, a2, n2, z))
# Ranked among the rises around the event where its z puts it, by a kernel function.
check_ranked(show, page, agent, z, kernel_or_none)
# One answer: show's and the page's; where the agent is the answer, its function and the caller
# the rise ran under are the kernel's.
a = check_answers_agree(show, page)
if a and a["process"] == agent and a["kind"] == "process":
    assert kernel_or_none(a["top_function"]) and under_ok(a.get("under")), a
PY
echo "ok: $(grep 'In short' "$TEST_TMP/show.txt")"
