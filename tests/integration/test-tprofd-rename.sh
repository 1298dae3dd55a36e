#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A process that renames itself in the middle of its rise, end to end with the real daemon: a
# burner (its comm this run's own) works for 4 s from 2 s before a trigger written to /dev/kmsg
# and calls prctl(PR_SET_NAME) at the trigger (the kernel's __set_task_comm(), fs/exec.c, Linux
# 6.12, tells perf with a COMM record, and later samples carry the new comm). Its samples are
# under two names; the manifest's "renames" lists the former with the process's name now, and
# show, show --json and the page rank the two as one process under its name now, with burn_leaf,
# and the former name nowhere. (Which process comes first depends on what else the machine runs in
# those seconds.)
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
[ -n "${TPROF_BURN:-}" ] && [ -x "$TPROF_BURN" ] || skip "the burn helper was not built"

TOKEN=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: rename
    source: kernel
    origin: any
    match: 'tprof-rename-$TOKEN'
    before: 20s
    after: 5s
RULES
# This run's names (11 bytes): another suite may run burners of its own at once.
OLD=ro-$TOKEN
NEW=rn-$TOKEN
cp "$TPROF_BURN" "$TEST_TMP/$OLD"

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s
sleep 18
"$TEST_TMP/$OLD" --rename "$NEW" 4 &
on_exit "kill $! 2>/dev/null"
sleep 2
echo "tprof-rename-$TOKEN now" >/dev/kmsg

bundle_shown rename
python3 - "$B/manifest.json" "$OLD" "$NEW" <<'PY' || fail "manifest renames: $(head -c 3000 "$B/manifest.json")"
import json, sys
m, old, new = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
ours = [r for r in m["renames"] if r["comm"] == old]
assert len(ours) == 1 and ours[0]["process"] == new and ours[0]["samples"] >= 5, m["renames"]
assert not [t for t in m["threads"] if t["comm"] in (old, new)], m["threads"]
PY

sed -n '/^Around the event/,/^Services/p' "$TEST_TMP/show.txt" >"$TEST_TMP/near"
! grep -q "$OLD" "$TEST_TMP/near" || fail "its former name ranked apart: $(cat "$TEST_TMP/near")"
! grep -qE "^  $NEW " "$TEST_TMP/near" || grep -qE "^  $NEW +[0-9.]+% \(rest +<?[0-9.]+%\) +burn_leaf +z=" "$TEST_TMP/near" ||
        fail "the process's line: $(cat "$TEST_TMP/near")"

python3 - "$TEST_TMP/show.json" "$TEST_TMP/report.html" "$B" "$OLD" "$NEW" <<'PY' || fail "$(cat "$TEST_TMP/near")"
import json, math, sys
show, html, bundle, old, new = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3], sys.argv[4], sys.argv[5]
key = '"analysis":'
page = json.JSONDecoder().raw_decode(html[html.index(key) + len(key):])[0]

def comms(name):
    c = {}
    for line in open("%s/%s" % (bundle, name)):
        stack, n = line.rsplit(" ", 1)
        c[stack.split(";", 1)[0]] = c.get(stack.split(";", 1)[0], 0) + int(n)
    return c

# Its rise under both names, from the files: the event's own seconds against the rest.
near, sl, base = comms("event.folded"), comms("stacks.folded"), comms("baseline.folded")
assert near.get(old, 0) >= 5 and near.get(new, 0) >= 5, (near.get(old), near.get(new))
n1, n2 = sum(near.values()), sum(sl.values()) + sum(base.values()) - sum(near.values())
a1 = near[old] + near[new]
a2 = sl.get(old, 0) + sl.get(new, 0) + base.get(old, 0) + base.get(new, 0) - a1
p = (a1 + a2) / (n1 + n2)
z = (a1 / n1 - a2 / n2) / math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
assert z >= 3, (a1, n1, a2, n2, z)
# One process under its name now, ranked where its z puts it (the page's ranking holds 10, show's
# 5, and other work on the machine may come first); its former name nowhere.
for name, rows, full in (("page", page["near"]["processes"], 10), ("show", show["around_event"]["processes"], 5)):
    rows = [dict(r, name=r.get("name", r.get("process"))) for r in rows]
    ours = [r for r in rows if r["name"] == new]
    assert not [r for r in rows if r["name"] == old], (name, rows)
    # (an interrupt that landed on it counts as [irq]'s: its z is the files' within a tenth)
    assert ours or (len(rows) == full and rows[-1]["z"] >= 0.9 * z), (name, z, [(r["name"], r["z"]) for r in rows])
    assert not ours or (ours[0]["top_function"] == "burn_leaf" and abs(ours[0]["z"] - z) < 0.1 * z), (name, z, ours)
PY
echo "ok: $(grep -E "^  $NEW " "$TEST_TMP/near")"
