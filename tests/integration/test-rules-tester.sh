#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tprofd --test-rules and --check-config as a rule author meets them: a bad rules file exits 78
# with file:line:column and the cause; input comes from files, '-' or stdin; output lines are
# escaped; the summary counts matches and match-limit hits and says when journal filters could
# not be checked; a catastrophic pattern does not hang.
set -eu
. "$(dirname "$0")/lib.sh"

DATA="$TPROF_SOURCE_ROOT/tests/data/rules"

# Bad rules: configuration error, precise message, nothing on stdout.
bad="$DATA/bad/unknown-key.yaml"
expect_exit 78 "$TPROFD" --test-rules --rules "$bad" /dev/null
grep -qxF "$bad:5:5: unknown key 'befor', did you mean 'before'?" "$ERR" || fail "error text: $(cat "$ERR")"
[ ! -s "$OUT" ] || fail "output despite bad rules"
expect_exit 78 "$TPROFD" --check-config --rules "$DATA/bad/bad-regex.yaml"
grep -qF "bad-regex.yaml:4:20: invalid pattern in rule 'x': missing closing parenthesis (at offset 7 of the pattern)" \
        "$ERR" || fail "regex error text: $(cat "$ERR")"
expect_exit 78 "$TPROFD" --test-rules --rules "$TEST_TMP/missing.yaml"
grep -qF "missing.yaml: cannot access rules: No such file or directory" "$ERR" || fail "missing file: $(cat "$ERR")"

# Good rules.
expect_exit 0 "$TPROFD" --check-config --rules "$DATA/good/full.yaml"
grep -qxF "rules: 3 loaded from $DATA/good/full.yaml (1 disabled)" "$OUT" || fail "check-config: $(cat "$OUT")"

cat >"$TEST_TMP/rules.yaml" <<'YAML'
rules:
  - name: reset
    source: kernel
    match: 'Trigger reset is on'
  - name: demo
    source: kernel
    origin: any
    match: 'tprof-demo (?<n>\d+)'
  - name: pleg
    source: journal
    unit: kubelet.service
    match: 'PLEG is not healthy'
  - name: evil
    source: kernel
    match: '(a+)+$'
  - name: off
    source: kernel
    match: 'Trigger'
    enabled: false
YAML
R="$TEST_TMP/rules.yaml"

# stdin, '-' and files; one file gives bare line numbers, several give FILE:N.
printf 'x\nena 0000:00:05.0 eth0: Trigger reset is on\n' >"$TEST_TMP/a.log"
"$TPROFD" --test-rules --rules "$R" <"$TEST_TMP/a.log" >"$OUT" 2>"$ERR"
[ "$(cat "$OUT")" = $'2\treset\tena 0000:00:05.0 eth0: Trigger reset is on' ] || fail "stdin: $(cat "$OUT")"
"$TPROFD" --test-rules --rules "$R" - <"$TEST_TMP/a.log" | cmp -s - "$OUT" || fail "'-' differs from stdin"
printf '14,1,2,-;tprof-demo 7\n' >"$TEST_TMP/b.log"
expect_exit 0 "$TPROFD" --test-rules --rules "$R" "$TEST_TMP/a.log" "$TEST_TMP/b.log"
[ "$(cat "$OUT")" = "$TEST_TMP/a.log:2"$'\treset\tena 0000:00:05.0 eth0: Trigger reset is on\n'"$TEST_TMP/b.log:1"$'\tdemo\t14,1,2,-;tprof-demo 7' ] ||
        fail "two files: $(cat "$OUT")"

# A user-written kmsg record (facility 1) only reaches 'origin: any' rules.
printf '14,1,2,-;ena x eth0: Trigger reset is on tprof-demo 1\n' | "$TPROFD" --test-rules --rules "$R" >"$OUT" 2>"$ERR"
[ "$(cut -f2 "$OUT")" = "demo" ] || fail "user kmsg record: $(cat "$OUT")"

# Control bytes in a matched line are escaped before they reach the terminal.
printf 'Trigger reset is on \033[31mred\n' | "$TPROFD" --test-rules --rules "$R" >"$OUT" 2>"$ERR"
grep -qF 'Trigger reset is on \x1b[31mred' "$OUT" || fail "not escaped: $(cat -v "$OUT")"
! grep -q $'\033' "$OUT" || fail "raw escape byte in output"

# Journal lines: filters cannot be checked from text, and the summary says so.
printf 'Nov 21 14:30:00 host kubelet[12]: PLEG is not healthy: pleg was last seen active 3m0s ago\n' |
        "$TPROFD" --test-rules --rules "$R" >"$OUT" 2>"$ERR"
[ "$(cut -f2 "$OUT")" = "pleg" ] || fail "journal line: $(cat "$OUT")"
grep -q 'filters of journal rules were not checked' "$ERR" || fail "no trusted-field note: $(cat "$ERR")"
grep -qE '^1 lines read in [0-9.]+s .*1 journalctl/syslog' "$ERR" || fail "summary: $(cat "$ERR")"
grep -qE '^  pleg +1 +0 ' "$ERR" || fail "per-rule summary: $(cat "$ERR")"

# journalctl -o json keeps the trusted fields: the unit filter decides, and no note is needed.
printf '%s\n' '{"_TRANSPORT":"journal","_SYSTEMD_UNIT":"kubelet.service","_UID":"0","MESSAGE":"PLEG is not healthy"}' \
        '{"_TRANSPORT":"journal","_SYSTEMD_UNIT":"other.service","_UID":"0","MESSAGE":"PLEG is not healthy"}' \
        '{"_TRANSPORT":"journal","SYSLOG_IDENTIFIER":"kubelet","MESSAGE":"PLEG is not healthy"}' |
        "$TPROFD" --test-rules --rules "$R" >"$OUT" 2>"$ERR"
[ "$(cut -f1,2 "$OUT" | tr '\t\n' ': ')" = "1:pleg " ] || fail "journal JSON: $(cat "$OUT")"
! grep -q 'not checked' "$ERR" || fail "journal JSON: trusted-field note: $(cat "$ERR")"
grep -qE '^3 lines read in [0-9.]+s .*, 3 journal JSON' "$ERR" || fail "journal JSON summary: $(cat "$ERR")"

# The text forms of dmesg, journalctl and syslog files (tests/data/rules/forms.log): each line's
# prefix is taken off before the pattern, anchored at the message's start, sees it. Only the
# 'any' rule (origin: any) matches the lines user space wrote to the kernel log (9, 11); the
# journal and syslog lines of programs (16, 17, 21, and 22: facility user, though it names itself
# "kernel") only the journal rule; 'tprof-demo' after "[drm] " is no message start.
cat >"$TEST_TMP/forms.yaml" <<'YAML'
rules:
  - name: kernel
    source: kernel
    match: '^tprof-demo (?:[1-8]|1[023458]|19|20)$'
  - name: any
    source: kernel
    origin: any
    match: '^tprof-demo \d+$'
  - name: journal
    source: journal
    match: '^tprof-demo \d+$'
YAML
expect_exit 0 "$TPROFD" --test-rules --rules "$TEST_TMP/forms.yaml" "$DATA/forms.log"
got=$(awk -F'\t' '{ printf "%s:%s ", $1, $2 }' "$OUT")
want="1:kernel 1:any 2:kernel 2:any 3:kernel 3:any 4:kernel 4:any 5:kernel 5:any 6:kernel 6:any 7:kernel 7:any \
8:kernel 8:any 9:any 10:kernel 10:any 11:any 12:kernel 12:any 13:kernel 13:any 14:kernel 14:any 15:kernel 15:any \
16:journal 17:journal 18:kernel 18:any 19:kernel 19:any 20:kernel 20:any 21:journal 22:journal "
[ "$got" = "$want" ] || fail "forms: got '$got'"
grep -qE '^23 lines read in [0-9.]+s .*: 1 plain, 12 dmesg, 0 kmsg, 10 journalctl/syslog, 0 journal JSON, 0 skipped' "$ERR" ||
        fail "forms summary: $(head -1 "$ERR")"

# A catastrophic pattern on a long line: counted as a limit hit, no match, no hang.
python3 -c 'print("a" * 8000 + "b")' >"$TEST_TMP/evil.log"
timeout 20 "$TPROFD" --test-rules --rules "$R" "$TEST_TMP/evil.log" >"$OUT" 2>"$ERR" || fail "evil line: exit $?"
[ ! -s "$OUT" ] || fail "evil line matched"
grep -q ', 1 lines hit a match limit' "$ERR" || fail "limit hit not reported: $(cat "$ERR")"
grep -qE '^  evil +0 +1 ' "$ERR" || fail "per-rule limit hit not reported: $(cat "$ERR")"

# Long lines are cut (and counted), CRLF endings and a last line without newline still work.
python3 -c 'import sys; sys.stdout.write("x" * 200000 + "\nTrigger reset is on\r\n" + "y" * 300000 + " Trigger reset is on\nTrigger reset is on")' \
        >"$TEST_TMP/long.log"
expect_exit 0 "$TPROFD" --test-rules --rules "$R" "$TEST_TMP/long.log"
[ "$(cut -f1,2 "$OUT" | tr '\n\t' ' :')" = "2:reset 4:reset " ] || fail "long lines: $(cut -c1-100 "$OUT")"
grep -q '2 lines longer than 131072 bytes were cut short' "$ERR" || fail "cut lines not reported: $(head -3 "$ERR")"

# A journal JSON entry longer than that is cut, so no JSON any more: skipped, not taken for the
# kernel's text. One of 20 KiB (a message of bytes that are not UTF-8, written as numbers) is read
# whole; an entry with no message and the blank lines of json-sse are nothing to match.
python3 - "$TEST_TMP/json.log" <<'PY'
import json, sys
msg = "Trigger reset is on"
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"_TRANSPORT": "journal", "_SYSTEMD_UNIT": "app.service",
                        "MESSAGE": msg + " " + "z" * 200000}) + "\n")
    f.write(json.dumps({"_TRANSPORT": "kernel", "MESSAGE": [ord(c) for c in msg] + [255] * 5000}) + "\n")
    f.write(json.dumps({"__CURSOR": "s=1", "_TRANSPORT": "journal", "PRIORITY": "6"}) + "\n")
    f.write("data: " + json.dumps({"_TRANSPORT": "kernel", "MESSAGE": msg}) + "\n\n")
PY
expect_exit 0 "$TPROFD" --test-rules --rules "$R" "$TEST_TMP/json.log"
[ "$(cut -f1,2 "$OUT" | tr '\n\t' ' :')" = "2:reset 4:reset " ] || fail "long JSON: $(cut -c1-100 "$OUT")"
grep -q '1 lines longer than 131072 bytes were cut short (the journal JSON entries among them skipped)' "$ERR" ||
        fail "long JSON: the cut entry not reported: $(head -3 "$ERR")"
grep -qE '^5 lines read .*0 plain.*2 journal JSON, 3 skipped' "$ERR" || fail "long JSON summary: $(head -1 "$ERR")"

# Disabled rules never match.
printf 'Trigger\n' | "$TPROFD" --test-rules --rules "$R" >"$OUT" 2>"$ERR"
[ ! -s "$OUT" ] || fail "disabled rule matched: $(cat "$OUT")"
grep -qE '^  off .*\(disabled\)$' "$ERR" || fail "disabled rule not marked: $(cat "$ERR")"
echo "ok"
