#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A real OOM kill, end to end: the kernel of this machine prints the event, and the shipped default
# rules (rules/default.yaml) fire on it through the daemon's /dev/kmsg, as in production; no line
# is written from user space and no rule is the test's own.
#
# A memory hog (tests/helpers/mem-hog.c, its comm this run's own) runs in a memory cgroup of its
# own limited to 64 MiB with swap out of the way (cgroup v2: memory.max and memory.swap.max;
# cgroup v1: memory.limit_in_bytes, memory.memsw.limit_in_bytes where swap is accounted, and
# memory.swappiness 0). It faults pages in and out for a couple of seconds, then grows past the
# limit. The kernel's memory cgroup OOM (Linux 6.18, mm/memcontrol.c mem_cgroup_out_of_memory() ->
# mm/oom_kill.c out_of_memory() -> oom_kill_process()) prints dump_header()'s "%s invoked
# oom-killer: gfp_mask=%#x(%pGg), order=%d, oom_score_adj=%hd" with current->comm (the hog, the
# only task of its cgroup), the cgroup's and the tasks' state, then __oom_kill_process()'s
# "Memory cgroup out of memory: Killed process %d (%s) total-vm:..." naming the hog again.
# Checked: one oom-kill bundle; its trigger is the header, the event's first record as read back
# from /dev/kmsg (its sequence number and time), of kernel origin; its capture comm is the hog's;
# the kill line, naming the hog's pid and comm, joined that bundle as a repeat; tprof-bundle show
# names the event and, first, the task killed (the kill line's pid and comm), as do show --json and
# the report's page; the slice holds the hog's stacks through its page faults in the kernel.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -n "${TPROF_MEM_HOG:-}" ] && [ -x "$TPROF_MEM_HOG" ] || skip "the mem-hog helper was not built"
[ -r /dev/kmsg ] || skip "/dev/kmsg is not readable"
[ -r /proc/kallsyms ] && grep -q ' [tT] handle_mm_fault$' /proc/kallsyms ||
        skip "/proc/kallsyms hides the kernel's names"

LIMIT_MB=64

# The memory controller: in the v2 hierarchy where the root hands it to its children
# (cgroup.subtree_control), else the v1 memory hierarchy.
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
V1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)
if [ -n "$V2" ] && grep -qw memory "$V2/cgroup.subtree_control" 2>/dev/null; then
        MEMCG=$V2/tprof-oom-$TOKEN
        CGV=2
elif [ -n "$V1" ] && [ -e "$V1/memory.limit_in_bytes" ]; then
        MEMCG=$V1/tprof-oom-$TOKEN
        CGV=1
else
        skip "no memory cgroup: the cgroup v2 root${V2:+ ($V2)} does not enable the memory controller for its children, and no v1 memory hierarchy is mounted"
fi

# Whatever happens, the hog dies and its cgroup goes.
remove_memcg() {
        local i pids
        for i in $(seq 100); do
                pids=$(cat "$MEMCG/cgroup.procs" 2>/dev/null) || break
                [ -n "$pids" ] || break
                kill -KILL $pids 2>/dev/null || true
                sleep 0.1
        done
        [ ! -d "$MEMCG" ] || rmdir "$MEMCG" || echo "could not remove $MEMCG" >&2
}
mkdir "$MEMCG"
on_exit remove_memcg
if [ "$CGV" = 2 ]; then
        echo $((LIMIT_MB << 20)) >"$MEMCG/memory.max"
        [ ! -e "$MEMCG/memory.swap.max" ] || echo 0 >"$MEMCG/memory.swap.max"
else
        echo 0 >"$MEMCG/memory.swappiness"
        echo $((LIMIT_MB << 20)) >"$MEMCG/memory.limit_in_bytes"
        [ ! -e "$MEMCG/memory.memsw.limit_in_bytes" ] || echo $((LIMIT_MB << 20)) >"$MEMCG/memory.memsw.limit_in_bytes"
        echo 0 >"$MEMCG/memory.oom_control"
fi

# This run's name (12 bytes): another suite may run a hog of its own.
HOG=oom-$TOKEN
cp "$TPROF_MEM_HOG" "$TEST_TMP/$HOG"

start_tprofd --rules "$TPROF_SOURCE_ROOT/rules/default.yaml" --window 4s
sleep 2
# Two seconds of page faults (of CPU time, at most six by the clock), then past the limit.
bash -c 'echo $$ >"$1/cgroup.procs" && exec "$2" 2 "$3"' _ "$MEMCG" "$TEST_TMP/$HOG" "$LIMIT_MB" &
HOG_PID=$!
rc=0
wait "$HOG_PID" || rc=$?
[ "$rc" = 137 ] || fail "the hog exited $rc, not killed by SIGKILL"

bundle_shown oom-kill
[ "$(compgen -G "$STATE/incidents/*-oom-kill-*" | wc -l)" = 1 ] || fail "more than one oom-kill bundle: $(ls "$STATE/incidents")"

# The event's records, as the kernel logged them.
kmsg_records >"$TEST_TMP/kmsg.txt" || fail "reading /dev/kmsg"

python3 - "$B" "$TEST_TMP/kmsg.txt" "$HOG" "$HOG_PID" <<'PY' || fail "manifest: $(cat "$B/manifest.json")"
import glob, json, os, re, sys
bundle, kmsg, hog, hog_pid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
m = json.load(open(bundle + "/manifest.json"))
log = [json.loads(l) for l in open(bundle + "/log.jsonl")]

# The kernel's records of this hog's OOM.
header = kill = None
for line in open(kmsg):
    head, _, msg = line.rstrip("\n").partition(";")
    pri, seq, usec = (int(x) for x in head.split(",")[:3])
    if pri >> 3 != 0:
        continue
    if header is None and msg.startswith(hog + " invoked oom-killer: gfp_mask="):
        header = (seq, usec, msg)
    if kill is None and re.match(r"Memory cgroup out of memory: Killed process %d \(%s\) total-vm:" % (hog_pid, re.escape(hog)), msg):
        kill = (seq, usec, msg)
assert header and kill, ("the kernel did not log this hog's OOM as expected", header, kill)
assert header[0] < kill[0], (header, kill)

assert m["rule"]["name"] == "oom-kill", m["rule"]
ev = m["event"]
# The trigger: the event's first line, the kernel's, at its own time.
assert ev["source"] == "kmsg" and ev["kernel_origin"] is True and ev["facility"] == 0, ev
assert ev["seq"] == header[0] and ev["message"] == header[2], (ev, header)
assert ev["t_perf_ns"] // 1000 == header[1], (ev["t_perf_ns"], header)
assert ev["alignment"]["method"] == "kmsg-timestamp", ev["alignment"]
# The header names the task that ran out of memory: the hog, the one task of its cgroup.
assert ev["captures"] == {"comm": hog}, ev["captures"]
# The kill line joined the bundle as a repeat, and is a trigger line of its log.
assert m["repeats"] >= 2, m["repeats"]
assert m["last_repeat_perf_ns"] >= kill[1] * 1000, (m["last_repeat_perf_ns"], kill)
triggers = {l["seq"]: l for l in log if l["trigger"]}
assert header[0] in triggers and kill[0] in triggers, (header, kill, sorted(triggers))
assert min(triggers) == header[0], (sorted(triggers), header)
assert triggers[kill[0]]["message"] == kill[2], triggers[kill[0]]
# Of the event's records, the rule matched those two alone (not the task dump naming the hog), and
# no other bundle began at any of them.
assert [s for s in triggers if header[0] <= s <= kill[0]] == [header[0], kill[0]], sorted(triggers)
for other in glob.glob(os.path.join(os.path.dirname(bundle), "*", "manifest.json")):
    if os.path.dirname(other) != bundle:
        assert not header[0] <= json.load(open(other))["event"]["seq"] <= kill[0], other

# The hog's stacks: its writes to fresh pages, and the kernel's page faults under them.
faults = handled = total = 0
for line in open(bundle + "/stacks.folded"):
    stack, n = line.rstrip("\n").rsplit(" ", 1)
    frames = stack.split(";")
    if frames[0] != hog:
        continue
    total += int(n)
    # A sample the timer takes as exc_page_fault() enables interrupts again ends there.
    under = frames[frames.index("hog_touch"):] if "hog_touch" in frames else []
    if "exc_page_fault" in under:
        faults += int(n)
        if "handle_mm_fault" in under:
            handled += int(n)
assert total >= 30, ("the hog's samples", total)
assert faults >= total // 2 and handled >= faults // 4, ("in the page-fault path", faults, handled, total)
print("trigger seq %d, kill line seq %d, %d repeats; the hog's samples: %d, %d in its page faults, %d through handle_mm_fault" %
      (header[0], kill[0], m["repeats"], total, faults, handled))
PY

grep -q "oom-kill" "$TEST_TMP/show.txt" && grep -qF "$HOG invoked oom-killer" "$TEST_TMP/show.txt" ||
        fail "show does not name the event: $(head -20 "$TEST_TMP/show.txt")"
# Who was killed, first in what happened: the kill line's pid and comm, read from the bundle's log
# (the header names the task that asked for memory, here the hog too, but never its pid).
sed -n '/^What happened/{n;p;}' "$TEST_TMP/show.txt" | grep -qxF "     Killed: $HOG (pid $HOG_PID), by the OOM killer" ||
        fail "show does not name the victim first: $(sed -n '/^What happened/,/^$/p' "$TEST_TMP/show.txt")"
python3 - "$TEST_TMP/show.json" "$TEST_TMP/report.html" "$HOG" "$HOG_PID" <<'PY' || fail "show --json or the page miss the victim"
import json, sys
show, html, hog, pid = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3], int(sys.argv[4])
v = show["oom_victim"]
assert v["pid"] == pid and v["comm"] == hog, v
key = '"oom_victim":'
page = json.JSONDecoder().raw_decode(html[html.index(key) + len(key):])[0]
assert page == {"pid": pid, "comm": hog}, page
PY
echo "ok"
