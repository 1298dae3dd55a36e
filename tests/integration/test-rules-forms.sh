#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tprofd --test-rules on the log text the real tools print: one line written to /dev/kmsg and
# read back through util-linux dmesg in each of its time formats (-T, --reltime, delta, iso, -d),
# with -x and with -S -r (facility and level), and entries sent to a private journald read back
# through journalctl in each of its short modes. A rule anchored at both ends of the message must
# match each of them, so every prefix is taken off exactly; and a line user space wrote must
# reach only a rule with 'origin: any' where the text says who wrote it (-x, -r), and a
# program that names itself "kernel" in the journal is a journal record ("kernel[pid]").
# Needs root, /dev/kmsg and a journald it can start (skips the journal part without one).
set -eu
. "$(dirname "$0")/logsrc-lib.sh"

require_root
command -v dmesg >/dev/null || skip "no dmesg"
[ -w /dev/kmsg ] || skip "cannot write /dev/kmsg"

N="tprof-forms-$$-$RANDOM"
cat >"$TEST_TMP/rules.yaml" <<YAML
rules:
  - name: any
    source: kernel
    origin: any
    match: '^$N kmsg\$'
  - name: kernel
    source: kernel
    match: '^$N kmsg\$'
  - name: journal
    source: journal
    match: '^$N journal (?:kernel|app)\$'
  - name: text
    source: kernel
    origin: any
    match: '^$N journal (?:kernel|app)\$'
YAML

# The record is user space's (facility 1), as anything written to /dev/kmsg is.
echo "<4>$N kmsg" >/dev/kmsg
wait_for 5 sh -c "dmesg | grep -qF '$N kmsg'" || fail "the record did not reach dmesg"

# try LABEL EXPECTED_RULES LINE: the rules that match LINE, in order, are EXPECTED_RULES.
try() {
        local got
        [ -n "$3" ] || fail "$1: no line"
        printf '%s\n' "$3" | "$TPROFD" --test-rules --rules "$TEST_TMP/rules.yaml" >"$OUT" 2>"$ERR" ||
                fail "$1: tprofd --test-rules failed: $(cat "$ERR")"
        got=$(cut -f2 "$OUT" | tr '\n' ' ')
        [ "$got" = "$2" ] || fail "$1: '$3' matched '$got', expected '$2'"
}

# No facility in the text: taken as the kernel's, as pasted dmesg text is.
for opts in "" "-T" "--time-format reltime" "--time-format delta" "--time-format iso" "-d" "-T -d"; do
        # shellcheck disable=SC2086 # word splitting of the options is meant
        try "dmesg $opts" "any kernel " "$(dmesg $opts --color=never | grep -F "$N kmsg" | tail -1)"
done
# With the facility: user space's line reaches only 'origin: any'.
for opts in "-x" "-x -T" "-x --time-format iso" "-S -r"; do
        # shellcheck disable=SC2086
        color=--color=never
        [ "$opts" != "-S -r" ] || color= # --raw refuses --color
        line=$(dmesg $opts $color 2>/dev/null | grep -F "$N kmsg" | tail -1 || true)
        if [ -z "$line" ] && [ "$opts" = "-S -r" ]; then
                echo "dmesg -S (syslog(2)) not available here: $(dmesg -S 2>&1 | head -1)"
                continue
        fi
        try "dmesg $opts" "any " "$line"
done
# The kernel's own lines, as syslog(2) and the console print them.
try "syslog(2) kernel record" "any kernel " "<4>[  123.456789] $N kmsg"
try "console with caller id" "any kernel " "[  123.456789][  T123] $N kmsg"

# journalctl: needs a journald of our own (what start_private_journald would skip for).
if ! [ -x /lib/systemd/systemd-journald ] || ! command -v journalctl >/dev/null || ! [ -s /etc/machine-id ] ||
        ! unshare -m true 2>/dev/null || ! command -v python3 >/dev/null; then
        echo "ok (no private journald here: journalctl's forms not tried)"
        exit 0
fi
start_private_journald
jsend "MESSAGE=$N journal kernel" "SYSLOG_IDENTIFIER=kernel" "PRIORITY=4"
jsend "MESSAGE=$N journal app" "SYSLOG_IDENTIFIER=tprof-forms" "PRIORITY=4"
for mode in short short-full short-iso short-iso-precise short-precise short-monotonic short-unix short-delta \
        with-unit cat; do
        journalctl --namespace="$NS" -o "$mode" --no-pager >"$TEST_TMP/journal.$mode"
        k=$(grep -F "$N journal kernel" "$TEST_TMP/journal.$mode" | tail -1)
        a=$(grep -F "$N journal app" "$TEST_TMP/journal.$mode" | tail -1)
        if [ "$mode" = cat ]; then
                # The message alone: plain text, the kernel's as far as the text says.
                try "journalctl -o cat" "text " "$k"
                try "journalctl -o cat" "text " "$a"
                continue
        fi
        # "kernel[pid]" is a program that named itself so: a journal record, not the kernel's.
        grep -qF "kernel[" <<<"$k" || fail "journalctl -o $mode: no pid after 'kernel': $k"
        case $mode in
        short-monotonic | short-delta)
                # After a bracket, "host app[pid]: " is read as dmesg reads the kernel's report on
                # a process whose name has a space: the kernel's text, which the anchored rules
                # do not match (and no journal rule sees).
                try "journalctl -o $mode (kernel[pid])" "" "$k"
                try "journalctl -o $mode (app)" "" "$a"
                continue
                ;;
        esac
        try "journalctl -o $mode (kernel[pid])" "journal " "$k"
        try "journalctl -o $mode (app)" "journal " "$a"
done

# journalctl's JSON keeps journald's trusted fields, so a journal rule's filters are checked on
# it: the entries were sent by root (_UID=0) over the native protocol (_TRANSPORT=journal).
cat >"$TEST_TMP/rules-json.yaml" <<YAML
rules:
  - name: journal
    source: journal
    match: '^$N journal (?:kernel|app)\$'
  - name: root
    source: journal
    uid: 0
    transport: journal
    match: '^$N journal (?:kernel|app)\$'
  - name: other-uid
    source: journal
    uid: 4242
    match: '^$N journal (?:kernel|app)\$'
  - name: kernel
    source: kernel
    origin: any
    match: '^$N journal (?:kernel|app)\$'
YAML
for mode in json json-seq json-sse; do
        journalctl --namespace="$NS" -o "$mode" --no-pager >"$TEST_TMP/journal.$mode"
        for what in kernel app; do
                line=$(grep -F "$N journal $what" "$TEST_TMP/journal.$mode" | tail -1)
                [ -n "$line" ] || fail "journalctl -o $mode: no entry for '$what'"
                printf '%s\n' "$line" | "$TPROFD" --test-rules --rules "$TEST_TMP/rules-json.yaml" >"$OUT" 2>"$ERR" ||
                        fail "journalctl -o $mode: tprofd --test-rules failed: $(cat "$ERR")"
                got=$(cut -f2 "$OUT" | tr '\n' ' ')
                # The filters decide (uid 4242 sent nothing); SYSLOG_IDENTIFIER=kernel is no kernel record.
                [ "$got" = "journal root " ] || fail "journalctl -o $mode ($what): matched '$got', expected 'journal root '"
                grep -q '1 journal JSON' "$ERR" || fail "journalctl -o $mode: not read as JSON: $(cat "$ERR")"
                ! grep -q 'not checked' "$ERR" || fail "journalctl -o $mode: the summary says filters were not checked"
        done
done
echo "ok"
