#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A state directory, ring, window or bundle this user may not read (a user outside group tprof,
# as contrib/tprofd.service makes them 0750) is said as such, with its path and why, and the exit
# status says it failed: never an empty ring ("Ring: no windows") or "No bundles found.".
# Run as user nobody, since root reads everything.
set -eu
. "$(dirname "$0")/lib.sh"
: "${STORE_TOOL:?run through meson test}"

require_root
command -v setpriv >/dev/null || skip "needs setpriv"
command -v python3 >/dev/null || skip "needs python3"
getent passwd nobody >/dev/null || skip "needs user nobody"
FIXTURE="$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py"
STATE="$TEST_TMP/state"
NOSOCK="$TEST_TMP/none.sock" # no daemon: status reads the state directory
export LC_ALL=C
# The test's temporary folder is 0700: open it, so only the modes set below keep nobody out.
chmod 0755 "$TEST_TMP"
nobody() {
        setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$TPROF_BUNDLE" -D "$STATE" \
                --control-socket "$NOSOCK" "$@"
}

"$STORE_TOOL" synth "$STATE/ring" 0.1 2 97 60 >/dev/null
python3 "$FIXTURE" "$STATE" anomaly >/dev/null
chmod -R a+rX "$STATE"
B=$(ls -d "$STATE"/incidents/*)
W=$(ls "$STATE"/ring/*.tpw | head -n 1)
[ -n "$W" ] || fail "no window in the synthetic ring"

# Readable: the baseline every case below departs from.
expect_exit 3 nobody status
grep -q "Ring: [0-9]* windows" "$OUT" || fail "status of a readable ring: $(cat "$OUT")"
grep -q "Bundles: 1 written" "$OUT" || fail "status of a readable incidents folder: $(cat "$OUT")"

# The state directory itself.
chmod 0000 "$STATE"
expect_exit 1 nobody status
grep -q "State directory: cannot be read: $STATE: Permission denied" "$OUT" ||
        fail "status on an unreadable state directory: $(cat "$OUT")"
! grep -q "no windows" "$OUT" || fail "status shows an unreadable state directory as an empty ring: $(cat "$OUT")"
for cmd in "ls" "show" "windows" "export --from -1h --to now --format folded"; do
        expect_exit 1 nobody $cmd
        grep -q "'$STATE/[a-z]*': Permission denied" "$ERR" || fail "$cmd on an unreadable state directory: $(cat "$ERR")"
done
chmod 0755 "$STATE"

# The ring.
chmod 0000 "$STATE/ring"
expect_exit 1 nobody status
grep -q "Ring: cannot be read: $STATE/ring: Permission denied" "$OUT" || fail "status on an unreadable ring: $(cat "$OUT")"
grep -q "Bundles: 1 written" "$OUT" || fail "status stopped at the unreadable ring: $(cat "$OUT")"
chmod 0755 "$STATE/ring"

# One window of the ring: counted as unreadable, and the coverage is that of the others; the exit
# status is the daemon's (3: not running), as the rest of the ring was read.
chmod 0000 "$W"
expect_exit 3 nobody status
grep -q "Unreadable: 1 of the windows in $STATE/ring cannot be read (the first: Permission denied)" "$OUT" ||
        fail "status on an unreadable window: $(cat "$OUT")"
! grep -q "Coverage: 1970" "$OUT" || fail "an unreadable window made the coverage start in 1970: $(cat "$OUT")"
grep -q "Coverage: 20" "$OUT" || fail "no coverage from the readable windows: $(cat "$OUT")"
# windows lists it, and fails: its totals and coverage are short of it.
expect_exit 1 nobody windows
grep -q "^$(basename "$W") .* unreadable: Permission denied$" "$OUT" || fail "windows on an unreadable window: $(cat "$OUT")"
grep -q "1 window in $STATE/ring cannot be read" "$ERR" || fail "windows did not say it left a window out: $(cat "$ERR")"
! grep -q "damaged or unreadable" "$ERR" || fail "windows calls an unreadable window damaged: $(cat "$ERR")"
chmod 0644 "$W"
expect_exit 0 nobody windows

# The incidents folder.
chmod 0000 "$STATE/incidents"
expect_exit 1 nobody status
grep -q "Bundles: cannot be read: $STATE/incidents: Permission denied" "$OUT" ||
        fail "status on an unreadable incidents folder: $(cat "$OUT")"
chmod 0755 "$STATE/incidents"

# One bundle: listed, as unreadable, not left out.
chmod 0000 "$B"
expect_exit 0 nobody ls
grep -q "corrupt" "$OUT" || fail "ls left out an unreadable bundle: $(cat "$OUT")"
grep -q "cannot be read, listing it as corrupt: $B: Permission denied" "$ERR" ||
        fail "ls did not say why the bundle cannot be read: $(cat "$ERR")"
expect_exit 1 nobody show
grep -q "Permission denied" "$OUT" || fail "show on an unreadable bundle: $(cat "$OUT")"
chmod 0755 "$B"

# Files of a bundle whose directory it may read: each said where its section would be, as one that
# cannot be read (not as missing), with its path and why; the rest is shown, and the exit status
# says a part was not.
chmod 0000 "$B/log.jsonl" "$B/activity.tsv" "$B/stacks.folded" "$B/cpu3.folded" "$B/windows"
expect_exit 1 nobody show
for f in log.jsonl activity.tsv stacks.folded cpu3.folded; do
        grep -q "^  (cannot be read: $B/$f: Permission denied)$" "$OUT" || fail "show on an unreadable $f: $(cat "$OUT")"
done
grep -q "^  (needs stacks.folded and baseline.folded; cannot be read: $B/stacks.folded: Permission denied)$" "$OUT" ||
        fail "show's ranking on an unreadable stacks.folded: $(cat "$OUT")"
grep -q "^    windows/ (cannot be read: Permission denied)$" "$OUT" || fail "show on an unreadable windows/: $(cat "$OUT")"
! grep -q "(no " "$OUT" || fail "show calls an unreadable file missing: $(cat "$OUT")"
grep -q "Rule: ena-reset" "$OUT" || fail "show stopped at an unreadable file: $(cat "$OUT")"
expect_exit 1 nobody show --json
grep -q "Cannot read '$B/log.jsonl': Permission denied" "$ERR" || fail "show --json on an unreadable log.jsonl: $(cat "$ERR")"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
u = {x["path"]: x["error"] for x in d["unreadable"]}
want = {sys.argv[2] + "/" + f: "Permission denied" for f in ("log.jsonl", "activity.tsv", "stacks.folded", "cpu3.folded", "windows")}
assert u == want, u' "$OUT" "$B" || fail "show --json lists the unreadable files wrong: $(cat "$OUT")"
# report writes the page with what it can read, names what it left out, and fails.
mkdir -m 0777 "$TEST_TMP/out"
chmod 0644 "$B/stacks.folded"
expect_exit 1 nobody report -o "$TEST_TMP/out/report.html"
for f in log.jsonl windows; do
        grep -q "Cannot read '$B/$f': Permission denied; the report leaves it out" "$ERR" ||
                fail "report on an unreadable $f: $(cat "$ERR")"
done
grep -q "tprof ena-reset" "$TEST_TMP/out/report.html" || fail "report wrote no page of what it could read"
chmod 0755 "$B/windows"
chmod 0000 "$B/windows/"*
expect_exit 1 nobody report -o "$TEST_TMP/out/report.html"
grep -q "Cannot read '$B/windows/.*\.tpw': Permission denied; the report leaves it out" "$ERR" ||
        fail "report on an unreadable window: $(cat "$ERR")"
chmod 0644 "$B/windows/"*
chmod 0644 "$B/log.jsonl" "$B/activity.tsv" "$B/stacks.folded" "$B/cpu3.folded"
chmod 0755 "$B/windows"
expect_exit 0 nobody show
expect_exit 0 nobody report -o "$TEST_TMP/out/report.html"
# open hands a viewer that returns at once no file it cannot read, and says so.
printf '#!/bin/sh\nexit 0\n' >"$TEST_TMP/out/speedscope"
chmod 0755 "$TEST_TMP/out/speedscope"
chmod 0000 "$B/stacks.perf-script"
TMPDIR="$TEST_TMP/out" TPROF_VIEWER="$TEST_TMP/out/speedscope" expect_exit 1 nobody open
grep -q "Cannot read '$B/stacks.perf-script': Permission denied" "$ERR" || fail "open on an unreadable perf script: $(cat "$ERR")"
chmod 0644 "$B/stacks.perf-script"
TMPDIR="$TEST_TMP/out" TPROF_VIEWER="$TEST_TMP/out/speedscope" expect_exit 0 nobody open
echo ok
