#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The mission's core path, end to end with the real daemon, real perf sampling and the real
# /dev/kmsg: a CPU burner with a known call path runs, a trigger line is written into /dev/kmsg,
# and within t + after plus a couple of seconds a bundle exists whose slice shows that call path,
# whose manifest and log are right, whose windows are hard links into the ring, and whose
# perf-script file folds to exactly its folded file; a second burner's work runs in a thread
# of its own name, and the manifest says whose thread it is. The same line does not trigger a kernel-only
# rule; a repeat inside the cooldown is counted in the same bundle; deleting the bundle releases
# its windows; SIGTERM stops the daemon promptly.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
require_burn

cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: e2e-any
    source: kernel
    origin: any
    match: 'tprof-e2e-$TOKEN (?<word>\w+)'
    before: 5s
    after: 3s
    cooldown: 60s
  - name: e2e-kernel
    source: kernel
    match: 'tprof-e2e-$TOKEN (?<word>\w+)'
    before: 5s
    after: 3s
RULES

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s
"$TPROF_BURN" 16 &
BURN_PID=$!
on_exit "kill $BURN_PID 2>/dev/null"
# Its main thread (comm "burn") waits and is never sampled: the name comes from /proc.
"$TPROF_BURN" --thread burn-wrk 16 &
THREAD_PID=$!
on_exit "kill $THREAD_PID 2>/dev/null"
sleep 6

echo "tprof-e2e-$TOKEN first" >/dev/kmsg
T_EVENT=$(date +%s.%N)
sleep 1
echo "tprof-e2e-$TOKEN second" >/dev/kmsg

bundle_ready() { compgen -G "$STATE/incidents/*-e2e-any-*/manifest.json" >/dev/null; }
wait_for 10 bundle_ready || fail "no bundle within t + after + 7 s: $(tail -20 "$TEST_TMP/tprofd.log")"
B=$(compgen -G "$STATE/incidents/*-e2e-any-*")
T_DONE=$(stat -c %.9Y "$B/manifest.json")
awk -v e="$T_EVENT" -v d="$T_DONE" 'BEGIN { printf "bundle complete %.3f s after t + after\n", d - e - 3 }'
awk -v e="$T_EVENT" -v d="$T_DONE" 'BEGIN { exit !(d - e - 3 < 2.0) }' || fail "bundle took longer than 2 s after t + after"

# The kernel-only rule saw a user-written record: no bundle, no pending one.
sleep 1
! compgen -G "$STATE/incidents/*e2e-kernel*" >/dev/null || fail "a kernel-only rule fired on a line user space wrote"
[ "$(ls -d "$STATE"/incidents/*/ | wc -l)" = 1 ] || fail "expected exactly one bundle: $(ls "$STATE/incidents")"

# Manifest: what matched, the repeat, the capture, complete coverage.
M="$B/manifest.json"
python3 - "$M" "$TOKEN" <<'PY' || fail "manifest: $(cat "$M")"
import json, sys
m = json.load(open(sys.argv[1]))
tok = sys.argv[2]
assert m["rule"]["name"] == "e2e-any", m["rule"]
assert m["status"] == "complete", m["status"]
assert m["repeats"] == 2, m["repeats"]
ev = m["event"]
assert ev["source"] == "kmsg" and ev["kernel_origin"] is False, ev
assert ev["message"] == "tprof-e2e-%s first" % tok, ev["message"]
assert ev["captures"] == {"word": "first"}, ev["captures"]
assert ev["alignment"]["method"] == "kmsg-timestamp"
assert m["slice"]["to_perf_ns"] - m["slice"]["from_perf_ns"] == 8 * 10**9
assert m["slice"]["samples"] > 0 and m["windows"], m["slice"]
PY
python3 - "$M" "$THREAD_PID" <<'PY' || fail "manifest: burn-wrk is not named a thread of burn: $(grep -A12 '"threads"' "$M")"
import json, sys
m = json.load(open(sys.argv[1]))
named = [t for t in m["threads"] if t["comm"] == "burn-wrk"]
assert named == [{"comm": "burn-wrk", "pid": int(sys.argv[2]), "process": "burn", "samples": named[0]["samples"]}], named
assert named[0]["samples"] > 0
# a thread named as its process is not listed
assert not [t for t in m["threads"] if t["comm"] == t["process"]], m["threads"]
PY

# The log has both lines, marked as triggers.
[ "$(grep -c "^> .*tprof-e2e-$TOKEN" "$B/log.txt")" = 2 ] || fail "log.txt: $(cat "$B/log.txt")"

# The slice shows the burner's call path, in most of its samples.
python3 - "$B/stacks.folded" <<'PY' || fail "stacks.folded does not show the burner: $(grep '^burn' "$B/stacks.folded" | head)"
import sys
total = path = 0
for line in open(sys.argv[1]):
    stack, count = line.rsplit(" ", 1)
    if not stack.startswith("burn;"):
        continue
    total += int(count)
    if stack.endswith(";main;burn_outer;burn_middle;burn_leaf"):
        path += int(count)
assert total >= 100, total
assert path >= 0.8 * total, (path, total)
PY

# The slice, [t - 5 s, t + 3 s], lies within the event's own seconds (t +- 5 s): event.folded
# holds all of it, and show has its section.
cmp "$B/event.folded" "$B/stacks.folded" || fail "event.folded differs from stacks.folded: $(diff "$B/event.folded" "$B/stacks.folded" | head)"
"$TPROF_BUNDLE" -D "$STATE" show >"$TEST_TMP/show" 2>&1 || fail "show: $(cat "$TEST_TMP/show")"
grep -q '^Around the event (5s before .. 3s after)' "$TEST_TMP/show" || fail "show: no section for the event's seconds"

# perf-script folds to exactly the folded file, as stackcollapse-perf.pl would.
python3 "$(dirname "$0")/stackcollapse.py" <"$B/stacks.perf-script" >"$TEST_TMP/refolded"
cmp "$TEST_TMP/refolded" "$B/stacks.folded" || fail "stacks.perf-script does not fold to stacks.folded"

# Windows are pinned by hard link: same inode as the ring's file (open or finished: ring_inode),
# more than one link.
for w in "$B"/windows/*.tpw; do
        name=$(basename "$w")
        [ "$(stat -c %i "$w")" = "$(ring_inode "$name")" ] || fail "$name is not a hard link into the ring"
        [ "$(stat -c %h "$w")" -ge 2 ] || fail "$name has one link"
done
# 0750, with the setgid bit the state directories pass down where the host has group tprof
case $(stat -c %a "$B") in 750 | 2750) ;; *) fail "bundle directory mode $(stat -c %a "$B")" ;; esac
[ "$(stat -c %a "$M")" = 640 ] || fail "manifest mode $(stat -c %a "$M")"

# Deleting the bundle releases its windows: the ring's files drop back to one link.
PINNED=$(ls "$B/windows")
rm -rf "$B"
for name in $PINNED; do
        ring="$STATE/ring/$name"
        [ -e "$ring" ] || continue
        [ "$(stat -c %h "$ring")" = 1 ] || fail "$name still pinned after the bundle was deleted"
done

# A second daemon on the same state directory refuses to start, and leaves the first one's ring be.
expect_exit 1 "$TPROFD" --state-dir "$STATE" --control-socket "" --rules "$TEST_TMP/rules.yaml" --kmsg "$TEST_TMP/rules.yaml"
grep -q "is in use by another tprofd" "$ERR" || fail "second tprofd: $(cat "$ERR")"
kill -0 "$TPROFD_PID" || fail "the first tprofd died"

stop_tprofd
! compgen -G "$STATE/ring/*.partial" >/dev/null || fail "SIGTERM left an open window"
echo "ok"
