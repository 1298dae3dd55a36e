#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hostile content in a bundle never reaches the terminal raw: escape sequences (ESC, C1 CSI),
# other control bytes and invalid UTF-8 in the message, the log, the rule description, the host,
# the note, process and function names and even the bundle's directory name come out as \xNN,
# in ls and show, text and JSON, in the C and a UTF-8 locale; overlong lines are cut to the
# width; the SVG stays well-formed XML.
set -eu
. "$(dirname "$0")/lib.sh"

FIXTURE="$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py"
STATE="$TEST_TMP/state"
export TZ=UTC
unset NO_COLOR TPROF_VIEWER || true
tb() { "$TPROF_BUNDLE" -D "$STATE" "$@"; }
command -v python3 >/dev/null || skip "needs python3"

python3 "$FIXTURE" "$STATE" hostile
# A directory name no writer would produce: ESC and invalid UTF-8 in the rule part, no manifest.
mkdir "$STATE/incidents/20261121T100000Z-$(printf '\033[2J\377')-deadbeef"

# clean FILE WHAT: no ESC, no C1 control (as UTF-8 or raw), no other control byte but newline
# and tab, and valid UTF-8.
clean() {
        ! grep -qP '\x1b' "$1" || fail "$2: raw ESC"
        ! LC_ALL=C grep -qP '\xc2[\x80-\x9f]' "$1" || fail "$2: raw C1 control"
        ! LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "$1" || fail "$2: raw control byte"
        python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$1" || fail "$2: invalid UTF-8"
}

# max_width FILE N: no line is wider than N characters.
max_width() {
        python3 -c 'import sys; sys.exit(any(len(l.rstrip("\n")) > int(sys.argv[2]) for l in open(sys.argv[1], encoding="utf-8")))' "$1" "$2"
}

for loc in C C.UTF-8; do
        export LANG=$loc LC_ALL=$loc
        for cmd in "ls" "ls --json" "show" "show --json" "show 3fa9" "show dead" "show --json dead"; do
                want=0
                case $cmd in *dead) want=1 ;; esac # no manifest: what it has is shown, and exit 1
                COLUMNS=100 expect_exit $want tb $cmd
                clean "$OUT" "$loc $cmd stdout"
                clean "$ERR" "$loc $cmd stderr"
        done
        COLUMNS=100 expect_exit 0 tb ls
        # The message is cut to the width, with its escapes visible.
        max_width "$OUT" 100 || fail "$loc: ls line longer than COLUMNS"
        grep -q '\\x1b\[31mena' "$OUT" || fail "$loc: escaped message not shown"
        grep -q '\\x1b\[2J\\xff' "$ERR" || fail "$loc: hostile directory name not escaped in the warning"
        COLUMNS=100 expect_exit 0 tb show 3fa9
        max_width "$OUT" 400 || fail "$loc: overlong log line not cut"
        grep -q '^       Note: line1\\x0aline2\\x0d\\x1b\[A$' "$OUT" || fail "$loc: note not escaped on one line"
        grep -q 'evil\\x1b\[2Jcomm' "$OUT" || fail "$loc: hostile comm not shown escaped"
        # Piped without COLUMNS: whole, still escaped.
        env -u COLUMNS "$TPROF_BUNDLE" -D "$STATE" ls >"$OUT" 2>"$ERR"
        clean "$OUT" "$loc ls without COLUMNS"
        grep -q 'tail tail tail$' "$OUT" || fail "$loc: piped ls without COLUMNS cut the message"
        for cmd in "ls --json=short" "show --json 3fa9"; do
                expect_exit 0 tb $cmd
                python3 -m json.tool "$OUT" >/dev/null || fail "$loc $cmd: not JSON"
        done
done
# JSON keeps the text as data: the message decodes to the original escape sequences.
expect_exit 0 tb show --json 3fa9
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["manifest"]["event"]["message"].startswith("\x1b[31mena")' "$OUT" ||
        fail "JSON does not carry the message as data"

# The SVG of hostile names is still XML, with no control characters.
mkdir "$TEST_TMP/viewed"
TPROF_VIEWER="cp -t $TEST_TMP/viewed" TMPDIR="$TEST_TMP" expect_exit 0 tb open 3fa9
svg=$(ls "$TEST_TMP"/viewed/*.svg)
clean "$svg" "svg"
if command -v xmllint >/dev/null; then
        xmllint --noout "$svg" || fail "svg of hostile names is not XML"
fi

# Colour only on a terminal: piped output has no escape codes even with TERM set.
TERM=xterm-256color expect_exit 0 tb show 3fa9
clean "$OUT" "piped show with TERM set"

# The commands show offers run as printed when pasted into a POSIX shell, whatever the state
# directory is called: a space, a quote and a '$' in its name are quoted for the shell (control
# bytes stay \xNN, as above). Stand-ins for the viewers check that they got an existing file.
QSTATE="$TEST_TMP/my state's \$HOME"
python3 "$FIXTURE" "$QSTATE" anomaly >/dev/null
QB=$(ls -d "$QSTATE"/incidents/*3fa9*)
mkdir -p "$TEST_TMP/bin" "$TEST_TMP/run/flamescope/examples"
for v in xdg-open flamegraph.pl speedscope firefox; do
        printf '#!/bin/sh\n[ $# = 1 ] && [ -s "$1" ] || { echo "%s: not one file: $*" >&2; exit 1; }\n' "$v" >"$TEST_TMP/bin/$v"
done
printf '#!/bin/sh\nexec "%s" "$@"\n' "$TPROF_BUNDLE" >"$TEST_TMP/bin/tprof-bundle"
chmod +x "$TEST_TMP"/bin/*
offered() {
        sed -n '/^Open with/,$p' "$OUT" | sed -n -e 's/ \{6\}(.*)$//' -e 's/^  \(Flamescope: \)\{0,1\}//p'
}
for variant in perf-script report folded-only; do
        case $variant in
        report) echo '<html></html>' >"$QB/report.html" ;;
        folded-only) rm -f "$QB/report.html" "$QB/stacks.perf-script" ;;
        esac
        expect_exit 0 "$TPROF_BUNDLE" -D "$QSTATE" show 3fa9
        clean "$OUT" "show -D with quotes ($variant)"
        offered >"$TEST_TMP/offered"
        [ "$(wc -l <"$TEST_TMP/offered")" -ge 6 ] || fail "show offers too few commands: $(sed -n '/^Open with/,$p' "$OUT")"
        want="tprof-bundle -D '$TEST_TMP/my state'\\''s \$HOME' export 3fa9c2d1 --format svg > flame.svg"
        grep -qxF "$want" "$TEST_TMP/offered" ||
                fail "the state directory is not quoted for the shell: $(cat "$TEST_TMP/offered")"
        while IFS= read -r c; do
                (cd "$TEST_TMP/run" && PATH="$TEST_TMP/bin:$PATH" TMPDIR="$TEST_TMP" sh -c "$c") >/dev/null 2>"$ERR" && continue
                # The fixture's windows/ hold no real windows: a perf script cut from them fails
                # there, in this bundle, past the command line.
                case $c in *"--format perf-script"*) grep -qF "window '$QB/windows/" "$ERR" && continue ;; esac
                fail "show's '$c' ($variant) does not run: $(cat "$ERR")"
        done <"$TEST_TMP/offered"
done
# An ordinary path prints as it did, unquoted.
expect_exit 0 tb show 3fa9
grep -q "^  tprof-bundle -D $STATE export 3fa9c2d1 --format svg > flame.svg\$" "$OUT" ||
        fail "an ordinary state directory got quoted: $(sed -n '/^Open with/,$p' "$OUT")"
# The command in the warning of a short export, too.
expect_exit 1 "$TPROF_BUNDLE" -D "$QSTATE" export 3fa9 --format folded --by unit
c=$(sed -n 's/.*missing or damaged (\(tprof-bundle windows --ring .* --verify\))\.$/\1/p' "$ERR")
[ -n "$c" ] || fail "no windows command in the warning: $(cat "$ERR")"
(PATH="$TEST_TMP/bin:$PATH" sh -c "$c") >"$OUT" 2>"$ERR" || true
grep -q "unreadable: Bad message" "$OUT" || fail "the warning's '$c' does not name the bundle's windows: $(cat "$OUT" "$ERR")"

# status names the control socket, from --control-socket or $TPROF_CONTROL_SOCKET, escaped as every
# other path: where nothing listens, and where the path cannot be used (longer than sun_path).
SOCK="$TEST_TMP/$(printf '\033[2J\033]0;x\007')sock"
LONG="$SOCK/$(printf 'a%.0s' $(seq 120))"
for how in option env; do
        for sock in "$SOCK" "$LONG"; do
                if [ $how = option ]; then
                        expect_exit 3 tb --control-socket "$sock" status
                else
                        TPROF_CONTROL_SOCKET="$sock" expect_exit 3 tb status
                fi
                clean "$OUT" "status with the socket from the $how"
                grep -q '^ *tprofd: .*\\x1b\[2J\\x1b\]0;x\\x07sock' "$OUT" ||
                        fail "status with the socket from the $how does not show it escaped: $(cat "$OUT")"
        done
done
# The same socket in capture's errors; a hostile ring, state directory or bundle id in every
# command's errors.
expect_exit 1 tb --control-socket "$SOCK" capture
clean "$ERR" "capture with a hostile socket"
grep -q 'nothing listens on .*\\x1b\[2J' "$ERR" || fail "capture does not show the socket escaped: $(cat "$ERR")"
for cmd in "windows --ring $SOCK" "export --from -1h --to now --format folded --ring $SOCK" "-D $SOCK ls" \
        "export dead --format svg" "export dead --format pprof" "export dead --format folded --by unit"; do
        expect_exit 1 tb $cmd
        clean "$ERR" "$cmd stderr"
        grep -q '\\x1b\[2J' "$ERR" || fail "$cmd does not show the hostile name escaped: $(cat "$ERR")"
done
# A bundle this user may not read is named, path and all, escaped.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && getent passwd nobody >/dev/null; then
        chmod 0755 "$TEST_TMP"
        chmod -R a+rX "$STATE"
        D=$(ls -d "$STATE"/incidents/*dead*)
        chmod 0000 "$D"
        expect_exit 0 setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$TPROF_BUNDLE" -D "$STATE" ls
        clean "$ERR" "ls of an unreadable hostile bundle, stderr"
        grep -q 'cannot be read, listing it as corrupt: .*\\x1b\[2J\\xff-deadbeef: Permission denied' "$ERR" ||
                fail "ls does not name an unreadable hostile bundle escaped: $(cat "$ERR")"
        chmod 0755 "$D"
fi
echo ok
