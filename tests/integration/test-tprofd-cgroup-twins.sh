#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Two services running one program, end to end with the real daemon: an agent (tests/helpers/
# stat-reader, its comm this run's own) runs in two transient service cgroups made by hand in the
# cgroup v2 hierarchy (as test-sampler-cgroup.sh makes them). In the first one works steadily at
# 12.5% of a CPU; in the second two work at 0.5% each, and at 12.5% for 5 s around an ENA reset
# line. All are one process to the rankings (one comm), which rose around the event; where it
# rose is the second service, though the first has most of its samples: show's row, show --json's
# and, where it is the answer, the one-line answer of show and the page must name the second
# unit, never the first, nor both. Other work on the machine may rise more: the agent must be
# among the rises, not the first.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"

require_perf
require_cgroup_v2
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
[ -n "${TPROF_STAT_READER:-}" ] && [ -x "$TPROF_STAT_READER" ] || skip "the stat-reader helper was not built"

AGENT=tw-$TOKEN # its comm: this run's own, 11 bytes
STEADY=tw-$TOKEN-steady.service
BUSY=tw-$TOKEN-rising.service
cp "$TPROF_STAT_READER" "$TEST_TMP/$AGENT"
PIDS=()
remove_cgroups() {
        local p
        for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
        for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
        rmdir "$V2/$STEADY" "$V2/$BUSY" 2>/dev/null || true
}
on_exit remove_cgroups
mkdir "$V2/$STEADY" "$V2/$BUSY"

# run_agent UNIT HOTFILE: the agent in the cgroup of UNIT, working harder while HOTFILE exists.
run_agent() {
        bash -c 'echo $$ >"$1/cgroup.procs" && exec "$2" 40 "$3" /proc/self/status /proc/self/stat /proc/version' \
                _ "$V2/$1" "$TEST_TMP/$AGENT" "$2" &
        PIDS+=($!)
}

ena_rule ena-twins 16

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s
touch "$TEST_TMP/always"
run_agent "$STEADY" "$TEST_TMP/always"
HOT="$TEST_TMP/hot"
run_agent "$BUSY" "$HOT"
run_agent "$BUSY" "$HOT"
story_burst 14

bundle_shown ena-twins
PYTHONPATH="$(dirname "$0")" python3 - "$TEST_TMP/show.json" "$TEST_TMP/report.html" "$AGENT" "$B" "$BUSY" "$STEADY" <<'PY' || fail "$(sed -n '/In short/,/^$/p;/^Around/,/^Services/p' "$TEST_TMP/show.txt")"
import json, sys
from bundle_check import check_answers_agree, check_ranked, comm_counts, near_rise, page_analysis
show, page = json.load(open(sys.argv[1])), page_analysis(sys.argv[2])
agent, bundle, busy, steady = sys.argv[3:7]

# Both ran in the slice, each in its own service, the steady one with more of its samples.
m = json.load(open(bundle + "/manifest.json"))
ours = {c.get("unit"): e for c in m["cgroups"] for e in c.get("comms", []) if e["comm"] == agent}
assert busy in ours and steady in ours, ours
assert ours[steady]["samples"] > ours[busy]["samples"], ours

near, sl, base = (comm_counts(bundle, f) for f in ("event.folded", "stacks.folded", "baseline.folded"))
a1, n1, a2, n2, z = near_rise(near, sl, base, [agent])
assert z >= 3, (a1, n1, a2, n2, z)
check_ranked(show, page, agent, z, lambda f: True)
# Its row, where it ranks, names the busy service.
for r in show["around_event"]["processes"]:
    if r["process"] == agent:
        assert r["cgroup"] and r["cgroup"]["unit"] == busy, r
# One answer; where it is the agent, in the busy service alone.
a = check_answers_agree(show, page)
if a and a["process"] == agent:
    assert a["cgroup"] and a["cgroup"]["unit"] == busy, a
    assert busy in page["answer"]["where"] and steady not in page["answer"]["where"], page["answer"]
PY
if grep -qE "^  $AGENT " "$TEST_TMP/show.txt"; then
        grep -A1 -E "^  $AGENT " "$TEST_TMP/show.txt" | grep -qE "^ +in unit $BUSY\$" ||
                fail "show's row: $(grep -A1 -E "^  $AGENT " "$TEST_TMP/show.txt")"
fi
# The agent is three processes of one comm: "tw-... (3 processes) (unit ...)".
if grep -q "^   In short: $AGENT" "$TEST_TMP/show.txt"; then
        grep -qE "^   In short: $AGENT \(3 processes\) \(unit ${BUSY//./\\.}\) rose" "$TEST_TMP/show.txt" ||
                fail "the answer: $(grep 'In short' "$TEST_TMP/show.txt")"
fi
echo "ok: $(grep -A1 -E "^  $AGENT " "$TEST_TMP/show.txt" || grep 'In short' "$TEST_TMP/show.txt")"
