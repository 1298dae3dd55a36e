#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Bundles on a file system of their own (the incidents directory a mount point, as a host that keeps
# them on a persistent volume has it): no hard link into the ring can be made, so the windows are
# copied. The bundle must still hold the burner's samples up to t + after, read back by the real CLI
# and its windows, and the ring's files stay unpinned. The real daemon, perf sampling and /dev/kmsg.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
require_burn

mkdir -p "$STATE/incidents"
mount -t tmpfs -o size=256m,mode=0750 tprof-test "$STATE/incidents" 2>"$ERR" || skip "cannot mount a tmpfs: $(cat "$ERR")"
on_exit "umount -l '$STATE/incidents' 2>/dev/null"
[ "$(stat -c %d "$STATE")" != "$(stat -c %d "$STATE/incidents")" ] || fail "the tmpfs is not a file system of its own"

cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: e2e-mount
    source: kernel
    origin: any
    match: 'tprof-mount-$TOKEN'
    before: 5s
    after: 3s
RULES

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s
"$TPROF_BURN" 20 &
on_exit "kill $! 2>/dev/null"
sleep 6
echo "tprof-mount-$TOKEN" >/dev/kmsg

bundle_ready() { compgen -G "$STATE/incidents/*-e2e-mount-*/manifest.json" >/dev/null; }
wait_for 15 bundle_ready || fail "no bundle: $(tail -20 "$TEST_TMP/tprofd.log")"
B=$(compgen -G "$STATE/incidents/*-e2e-mount-*")
! grep -q "Failed to pin" "$TEST_TMP/tprofd.log" || fail "tprofd: $(grep "Failed to pin" "$TEST_TMP/tprofd.log")"

# The slice, t - 5 s .. t + 3 s, is whole: the burner in every second of it.
python3 - "$B/manifest.json" "$B/stacks.folded" <<'PY' || fail "bundle: $(head -c 600 "$B/manifest.json")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["status"] == "complete", m["status"]
assert m["windows"], m
burn = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("burn;"))
# 8 s of one busy CPU at 97 Hz is some 780 samples; a loaded machine gives the burner less.
assert burn >= 200, burn
PY

# The windows are copies, each its own file, and the CLI reads the slice back from them: the
# samples after the event (the open window's, copied again after t + after) included.
for w in "$B"/windows/*.tpw; do
        [ "$(stat -c %h "$w")" = 1 ] || fail "$(basename "$w") has $(stat -c %h "$w") links"
done
! compgen -G "$B/windows/.*" >/dev/null || fail "a temporary copy was left: $(ls -a "$B/windows")"
T=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["event"]["t_realtime_usec"])' "$B/manifest.json")
"$TPROF_BUNDLE" export --ring "$B/windows" --from "@$(((T + 1000000) / 1000000))" --to "@$(((T + 3000000) / 1000000))" \
        >"$TEST_TMP/after.folded" 2>"$ERR" || fail "export from the bundle's windows: $(cat "$ERR")"
grep -q '^burn;' "$TEST_TMP/after.folded" || fail "no burner samples in the seconds after the event: $(head -5 "$TEST_TMP/after.folded")"
"$TPROF_BUNDLE" -D "$STATE" show "$(basename "$B")" >"$TEST_TMP/show" 2>&1 || fail "show: $(cat "$TEST_TMP/show")"

# The ring's own files carry one link: retention may take them, the bundle keeps its copy.
for f in "$STATE"/ring/*.tpw*; do
        [ "$(stat -c %h "$f")" = 1 ] || fail "$(basename "$f") in the ring has $(stat -c %h "$f") links"
done
stop_tprofd
