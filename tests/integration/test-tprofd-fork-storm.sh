#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A rise made of many short-lived processes, end to end with the real daemon: three shell loops
# (a copy of bash, its comm this run's own) run a copy of true (its comm this run's own too)
# again and again for 5 s around an ENA reset line, and not before: thousands of processes of a
# few milliseconds each, none of which lives long enough for top to show it. Each child runs under
# its parent's name from its fork until its exec renames it (begin_new_exec(), fs/exec.c, Linux
# 6.18), under its own from there to its exit: the dynamic loader's start-up, the exec and the
# exit. The bundle must rank the children's name among the rises around the event, by a function
# of their own stacks, with the z of their samples in the files: a child sampled under both names
# is no rename of the shell, whose samples stay its own (and the shell's rows, where it ranks,
# are its samples alone). Each child is a process of its own pid (copy_process() -> alloc_pid(),
# kernel/fork.c, Linux 6.18): where the children rank, they rank as that many processes, as many
# as the pids stacks.perf-script gives their samples, and the manifest counts as many. show, show
# --json and the page must give one answer. Other work on the machine may rise more: the children
# must be among the rises, not the first.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
require_burn
BASH_BIN=$(type -P bash) || skip "no bash"
TRUE_BIN=$(type -P true) || skip "no true"

SHELL_COMM=fs-$TOKEN # the loops' comm: this run's own, 11 bytes
CHILD=ft-$TOKEN      # the children's
cp "$BASH_BIN" "$TEST_TMP/$SHELL_COMM"
cp "$TRUE_BIN" "$TEST_TMP/$CHILD"

ena_rule ena-forks 10

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s
burn_both 40
HOT="$TEST_TMP/hot"
for i in 1 2 3; do
        "$TEST_TMP/$SHELL_COMM" -c 'while sleep 0.2; do while [ -e "$1" ]; do "$2"; done; done' _ \
                "$HOT" "$TEST_TMP/$CHILD" &
        on_exit "kill $! 2>/dev/null"
done
story_burst 16

bundle_shown ena-forks
PYTHONPATH="$(dirname "$0")" python3 - "$TEST_TMP/show.json" "$TEST_TMP/report.html" "$SHELL_COMM" "$CHILD" "$B" <<'PY' || fail "$(sed -n '/In short/,/^$/p;/^Around/,/^Services/p' "$TEST_TMP/show.txt")"
import json, sys
from bundle_check import check_answers_agree, check_ranked, comm_counts, near_rise, page_analysis
show, page = json.load(open(sys.argv[1])), page_analysis(sys.argv[2])
shell, child, bundle = sys.argv[3], sys.argv[4], sys.argv[5]

# The frames of each name's stacks around the event, and their leaves.
frames = {shell: set(), child: set()}
leaves = {shell: set(), child: set()}
def note_frames(comm, stack, n):
    if comm in frames:
        fs = stack.split(";")[1:]
        frames[comm].update(fs)
        if fs:
            leaves[comm].add(fs[-1])

near = comm_counts(bundle, "event.folded", note_frames)
sl, base = comm_counts(bundle, "stacks.folded"), comm_counts(bundle, "baseline.folded")
a1, n1, a2, n2, z = near_rise(near, sl, base, [child])
assert z >= 3 and a1 / n1 >= 2 * a2 / n2, (a1, n1, a2, n2, z)
print("the children's samples: %d of %d around the event; %d of %d in the rest; z=%.1f" % (a1, n1, a2, n2, z))
print("the shells': %d around the event, %d in the rest" % near_rise(near, sl, base, [shell])[0:3:2])

# A function the children ran themselves (the loader's, the kernel's exec, fault and exit paths),
# or none: never one only the shell ran.
def childs(fn):
    return fn is None or fn in leaves[child]

# Ranked among the rises around the event where their z puts them, with their own samples only.
check_ranked(show, page, child, z, childs)
# Where they rank, as the processes they were: the pids of their samples in the slice.
pids = set()
for line in open(bundle + "/stacks.perf-script"):
    f = line.split()
    if len(f) > 2 and not line[0].isspace() and f[0] == child:
        pids.add(f[1].split("/")[0])
listed = [p for p in json.load(open(bundle + "/manifest.json"))["processes"] if p["comm"] == child]
assert len(pids) >= 2 and [p["processes"] for p in listed] == [len(pids)], (len(pids), listed)
print("the children: %d processes" % len(pids))
for name, rows in (("page", page["near"]["processes"]), ("show", show["around_event"]["processes"])):
    for r in rows:
        if r.get("name", r.get("process")) == child:
            assert r["processes"] == len(pids), (name, len(pids), r)
# The shell, where it ranks, with its own samples only: none of the children's moved under it.
zs = near_rise(near, sl, base, [shell])[4]
for name, rows in (("page", page["near"]["processes"]), ("show", show["around_event"]["processes"])):
    for r in rows:
        if r.get("name", r.get("process")) == shell:
            assert abs(r["z"] - zs) < 0.1 * max(zs, 1), (name, zs, r)
# One answer: show's and the page's; where the children are the answer, their function and the
# caller their rise ran under are of their own stacks.
a = check_answers_agree(show, page)
if a and a["process"] == child and a["kind"] == "process":
    assert childs(a["top_function"]) and (a.get("under") is None or a["under"] in frames[child]), a
PY
echo "ok: $(sed -n '/^Around/,/^Services/p' "$TEST_TMP/show.txt" | grep -E "^  $CHILD " || grep 'In short' "$TEST_TMP/show.txt")"
