#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Nothing lost on a crash between a match and its bundle: a rule with `after: 6s` matches a line
# written to /dev/kmsg, and tprofd is killed (SIGKILL, as the OOM killer or a crash would end it) 2 s
# later, while the bundle is staged (incidents/.tmp-<id>/ with its pending manifest) and the kmsg
# position already saved past the line and a repeat of it, so the next run never reads them again. Started again 2 s
# later, tprofd takes the staged incident up and publishes it at t + after: the bundle holds the
# trigger line and the kernel's lines around it (read again from the kernel's buffer), the repeat
# counted, the samples of the slice from before the kill, and says it was interrupted, in the
# manifest and in `tprof-bundle show`; the hole the restart left in the slice makes it partial.
# A staged folder whose pending manifest is damaged is removed at that start, as before.
set -eu
. "$(dirname "$0")/reliability-lib.sh"

require_perf
require_kmsg_writable
command -v python3 >/dev/null || skip "needs python3"

RULE=resume-any
cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: $RULE
    source: kernel
    origin: any
    match: 'tprof-resume-$TOKEN (?<what>\w+)'
    before: 3s
    after: 6s
    cooldown: 60s
RULES
ARGS=(--rules "$TEST_TMP/rules.yaml" --window 60s --control-socket "$CTL")
LOG="$TEST_TMP/tprofd.log"

start_tprofd "${ARGS[@]}"
sleep 2.5 # samples for the slice's 3 s before the line
kmsg_write "tprof-context-$TOKEN before"
sleep 1
kmsg_write "tprof-resume-$TOKEN oops"
wait_for 10 grep -q "rule $RULE matched kmsg: tprof-resume-$TOKEN oops" "$LOG" || fail "the line was not matched"
sleep 0.5
kmsg_write "tprof-resume-$TOKEN again" # a repeat: counted in the staged folder within a second
sleep 0.5
kmsg_write "tprof-context-$TOKEN after"
sleep 1.5
compgen -G "$STATE/incidents/.tmp-*-$RULE-*/pending" >/dev/null || fail "nothing staged at the kill: $(ls -la "$STATE/incidents")"
kill -KILL "$TPROFD_PID"
wait "$TPROFD_PID" 2>/dev/null || true
! compgen -G "$STATE/incidents/[!.]*-$RULE-*" >/dev/null || fail "the bundle was published before the kill"
STAGED=$(basename "$(compgen -G "$STATE/incidents/.tmp-*-$RULE-*")")

# A staged folder of an earlier crash whose pending manifest is damaged: removed, with the notice.
mkdir -p "$STATE/incidents/.tmp-20261121T143000Z-$RULE-0badf00d/windows"
echo '{"format": 1, "id": "20261121T143000Z-' >"$STATE/incidents/.tmp-20261121T143000Z-$RULE-0badf00d/pending"

sleep 2
start_tprofd "${ARGS[@]}"
bundle_wait "$RULE" 20
[ "$(basename "$B")" = "${STAGED#.tmp-}" ] || fail "the bundle is not the staged incident's: $B, staged $STAGED"
[ ! -e "$STATE/incidents/.tmp-20261121T143000Z-$RULE-0badf00d" ] || fail "the damaged staged folder was kept"
grep -q "Removed unfinished bundle '.tmp-20261121T143000Z-$RULE-0badf00d'" "$LOG" ||
        fail "no notice for the damaged staged folder: $(tail "$LOG")"
grep -q "Resuming incident .* (rule $RULE)" "$LOG" || fail "no notice of the resumed incident: $(tail "$LOG")"
check_incidents "after the restart"

grep -q "^> .*tprof-resume-$TOKEN oops\$" "$B/log.txt" || fail "log.txt lacks the trigger line: $(cat "$B/log.txt")"
grep -q "\"trigger\":true" "$B/log.jsonl" || fail "log.jsonl marks no trigger line"
# The lines around it that the killed run had read: the kernel's buffer still holds them, and the
# new run reads them again for the log, not for the rules.
grep -q "tprof-context-$TOKEN before\$" "$B/log.txt" || fail "log.txt lacks the line before the trigger: $(cat "$B/log.txt")"
grep -q "tprof-context-$TOKEN after\$" "$B/log.txt" || fail "log.txt lacks the line after the trigger: $(cat "$B/log.txt")"
[ "$(grep -c "tprof-resume-$TOKEN oops" "$B/log.txt")" = 1 ] || fail "the trigger line is not there once: $(cat "$B/log.txt")"

# Samples of the slice from before the kill (the match was 3 s into it, the kill 2 s later), and
# the interrupted mark; the 2 s the daemon was down leave a hole: partial.
python3 - "$B/manifest.json" "$B/activity.tsv" <<'PY' || fail "manifest: $(cat "$B/manifest.json")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["interrupted"] and m["interrupted"]["resumed_utc"].endswith("Z"), m.get("interrupted")
assert m["status"] == "partial", m["status"]
assert m["event"]["captures"] == {"what": "oops"}, m["event"]["captures"]
assert m["repeats"] == 2, ("the repeat before the kill is not counted", m["repeats"])
assert m["rule"]["after_usec"] == 6000000, m["rule"]
s = m["slice"]
assert s["samples"] > 0, s
before = [int(l.split()[0]) for l in open(sys.argv[2]) if not l.startswith("#") and int(l.split()[2]) > 0]
assert any(o <= 4 for o in before), ("no samples before the kill", sorted(set(before)))
assert s["covered_from_perf_ns"] < m["event"]["t_perf_ns"], s
PY
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" show "${B##*-}"
grep -q "Interrupted: tprofd stopped while recording" "$OUT" || fail "show does not say it was interrupted: $(head -30 "$OUT")"
grep -q "Status: .*partial" "$OUT" || fail "show does not say partial: $(head -30 "$OUT")"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" show "${B##*-}" --json
grep -q '"interrupted"' "$OUT" || fail "show --json lacks the mark"
# and the page, whose header shows it as show does
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" report "${B##*-}" -o "$TEST_TMP/report.html"
grep -q '"interrupted":{"resumed_utc":"[0-9T:.-]*Z"}' "$TEST_TMP/report.html" ||
        fail "the page's data lacks the mark: $(grep -o '"repeats".\{0,200\}' "$TEST_TMP/report.html" | head -1)"

# One bundle of the line, not one of each run.
stop_tprofd
[ "$(compgen -G "$STATE/incidents/*-$RULE-*" | wc -l)" = 1 ] || fail "more than one bundle: $(ls "$STATE/incidents")"
check_incidents "after the clean stop"
echo ok
