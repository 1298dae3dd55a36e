#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hostile names, end to end with the real daemon: a rule name with a path in it is refused; a
# process renamed (prctl) to "../", ESC sequences and invalid UTF-8 runs while a bundle is
# captured; log records carrying path separators, terminal escape sequences (both as the kernel's
# \xNN escapes and as raw bytes in a recorded kmsg file), C1 controls and invalid UTF-8 trigger
# rules whose captures take that text. Nothing may be created outside the state directory, bundle
# folders have plain names, and `tprof-bundle ls/show` (text and JSON, piped and on a terminal)
# print no raw control byte, no escape sequence but colours, and only valid UTF-8.
set -eu
. "$(dirname "$0")/reliability-lib.sh"

require_perf
command -v python3 >/dev/null || skip "needs python3"
command -v script >/dev/null || skip "needs script (util-linux)"
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"

MARK="tprofpwn$TOKEN"
touch "$TEST_TMP/marker"

# A rule name that is a path is refused before anything starts.
cat >"$TEST_TMP/bad.yaml" <<RULES
rules:
  - name: '../../$MARK'
    source: kernel
    match: 'x'
RULES
expect_exit 78 "$TPROFD" --check-config --rules "$TEST_TMP/bad.yaml"

cat >"$TEST_TMP/rules.yaml" <<RULES
defaults: { before: 2s, after: 500ms, cooldown: 0s }
rules:
  - name: hostile
    source: kernel
    origin: any
    match: 'tprof-hostile-$TOKEN (?<path>\S+) (?<rest>.*)$'
RULES

# A process whose name is hostile, busy while we capture.
/usr/bin/python3 - "$MARK" <<'PY' &
import ctypes, sys, time
name = b"../\x1b[2J\xff\x9b/" + sys.argv[1][:4].encode()
ctypes.CDLL(None).prctl(15, ctypes.c_char_p(name[:15]), 0, 0, 0)
t = time.monotonic()
while time.monotonic() - t < 8:
    pass
PY
BUSY=$!
on_exit "kill $BUSY 2>/dev/null"

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 2s --control-socket "$CTL"
sleep 2
printf '<15>tprof-hostile-%s ../../../%s/../x \033]0;title\007\033[2J\377\376 /etc/passwd\n' "$TOKEN" "$MARK" >/dev/kmsg
expect_exit 0 "$TPROF_BUNDLE" --control-socket "$CTL" capture --before 2s --after 500ms --note "$(printf '../%s \033[31mred\033[0m \377' "$MARK")"
wait_for 10 compgen -G "$STATE/incidents/*-hostile-*/manifest.json" || fail "the hostile line made no bundle: $(tail "$TEST_TMP/tprofd.log")"
stop_tprofd
grep -q "$(printf '\033')\[2J" "$TEST_TMP/tprofd.log" && fail "the daemon's own log carries a raw escape sequence"

# The same text as raw bytes, from a recorded kmsg file (the parser turns \xNN back into bytes).
python3 - "$TOKEN" "$MARK" >"$TEST_TMP/hostile.kmsg" <<'PY'
import sys
tok, mark = sys.argv[1], sys.argv[2]
lines = [
    "14,100,1000,-;tprof-hostile-%s ../../%s/evil \\x1b]52;c;cHdu\\x07\\x1b[2J\\xc2\\x9b1m\\xff\\xfe" % (tok, mark),
    "14,101,2000,-;tprof-hostile-%s /%s/../../etc/shadow \\x1bP+q\\x1b\\x5c \\x08\\x7f\\x01 end" % (tok, mark),
]
sys.stdout.write("\n".join(lines) + "\n")
PY
start_tprofd --rules "$TEST_TMP/rules.yaml" --window 2s --control-socket "$CTL" --kmsg "$TEST_TMP/hostile.kmsg"
three() { [ "$(compgen -G "$STATE/incidents/*-hostile-*/manifest.json" | wc -l)" -ge 3 ]; }  # the live line and both replayed ones
wait_for 15 three || fail "the replayed hostile lines made no bundles: $(ls "$STATE/incidents"; tail "$TEST_TMP/tprofd.log")"
stop_tprofd

# Nothing outside the state directory.
found=$(find "$TEST_TMP" /tmp /var/tmp /etc -xdev -newer "$TEST_TMP/marker" -name "*$MARK*" -not -path "$STATE/*" 2>/dev/null | head)
[ -z "$found" ] || fail "a file named after the hostile text appeared outside the state directory: $found"
bad=$(find "$STATE" -mindepth 1 | sed "s|^$STATE/||" | LC_ALL=C grep -v '^[A-Za-z0-9._/-]*$' || true)
[ -z "$bad" ] || fail "state directory entries with unsafe names: $(printf '%q ' $bad)"

# What tprof-bundle prints, piped and on a terminal.
check_output() {
        python3 - "$1" "$2" <<'PY' || fail "$2: raw control bytes or invalid UTF-8 in the output"
import re, sys
data = open(sys.argv[1], "rb").read()
what = sys.argv[2]
data = data.replace(b"\r\n", b"\n")  # the terminal's line ends
if what.startswith("tty"):
    data = re.sub(rb"\x1b\[[0-9;]*m", b"", data)  # colours are ours
text = data.decode("utf-8")  # raises on invalid UTF-8
bad = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
if bad:
    print(what, "bad characters:", [hex(ord(c)) for c in bad][:10], file=sys.stderr)
    sys.exit(1)
PY
}
ids=$(tb ls --json=short | python3 -c 'import json,sys; print(" ".join(b["short_id"] for b in json.load(sys.stdin)))')
[ -n "$ids" ] || fail "no bundles listed"
n=0
for args in "ls" "ls --json=pretty" $(for i in $ids; do echo "show:$i" "show:$i:--json"; done); do
        set -- $(echo "$args" | tr ':' ' ')
        tb "$@" >"$TEST_TMP/out.$n" 2>&1 || fail "tprof-bundle $* failed: $(cat "$TEST_TMP/out.$n")"
        check_output "$TEST_TMP/out.$n" "pipe: $*"
        env -u NO_COLOR TERM=xterm script -qec "$(printf '%q ' "$TPROF_BUNDLE" -D "$STATE" "$@")" /dev/null \
                >"$TEST_TMP/tty.$n" 2>&1 </dev/null || fail "tprof-bundle $* on a terminal failed"
        check_output "$TEST_TMP/tty.$n" "tty: $*"
        n=$((n + 1))
done
grep -q '\\x1b' "$TEST_TMP"/out.* || fail "the escape sequences do not show as \\x1b anywhere"
grep -q "$MARK" "$TEST_TMP"/out.* || fail "the hostile text is not shown at all"
echo ok
