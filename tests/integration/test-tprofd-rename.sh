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
require_burn

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
# Under AddressSanitizer a burner that exits checks for leaks from a task it clones for that, a
# second process of its name in the slice: not here, where its leaks are not what is tested.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$TEST_TMP/$OLD" --rename "$NEW" 4 &
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

PYTHONPATH="$(dirname "$0")" python3 - "$TEST_TMP/show.json" "$TEST_TMP/report.html" "$B" "$OLD" "$NEW" <<'PY' || fail "$(cat "$TEST_TMP/near")"
import json, sys
from bundle_check import check_ranked, comm_counts, near_rise, page_analysis
show, page = json.load(open(sys.argv[1])), page_analysis(sys.argv[2])
bundle, old, new = sys.argv[3], sys.argv[4], sys.argv[5]

# Its rise under both names, from the files: the event's own seconds against the rest.
near, sl, base = (comm_counts(bundle, f) for f in ("event.folded", "stacks.folded", "baseline.folded"))
assert near.get(old, 0) >= 5 and near.get(new, 0) >= 5, (near.get(old), near.get(new))
a1, n1, a2, n2, z = near_rise(near, sl, base, [old, new])
assert z >= 3, (a1, n1, a2, n2, z)
# One process under its name now, ranked where its z puts it; its former name nowhere.
check_ranked(show, page, new, z, lambda f: f == "burn_leaf", absent=(old,))
PY
echo "ok: $(grep -E "^  $NEW " "$TEST_TMP/near")"
