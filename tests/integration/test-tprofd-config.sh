#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon's configuration: a file sets what it names, the command line overrides it, a bad
# file is refused with file:line:column and exit 78 (also through --check-config), and SIGHUP
# reloads rules and settings: a good rules file takes effect, a bad one is reported and the old
# rules keep matching, and a setting that needs a restart says so.
set -eu
. "$(dirname "$0")/logsrc-lib.sh"

# Errors first: they need no privileges.
printf 'freq: 49\nfrq: 3\n' >"$TEST_TMP/bad.yaml"
expect_exit 78 "$TPROFD" --config "$TEST_TMP/bad.yaml" --check-config
grep -q "bad.yaml:2:1: unknown key 'frq', did you mean 'freq'?" "$ERR" || fail "$(cat "$ERR")"
printf 'freq: 97\ndetail: tiny\n' >"$TEST_TMP/bad.yaml"
expect_exit 78 "$TPROFD" --config "$TEST_TMP/bad.yaml" --check-config
grep -q "bad.yaml:2:9: invalid detail 'tiny': expected compact or exact" "$ERR" || fail "$(cat "$ERR")"
expect_exit 64 "$TPROFD" --detail tiny --check-config
grep -q "Invalid --detail 'tiny': expected compact or exact." "$ERR" || fail "$(cat "$ERR")"
printf 'window: 1s\n' >"$TEST_TMP/bad.yaml"
expect_exit 78 "$TPROFD" --config "$TEST_TMP/bad.yaml" --check-config
grep -q "bad.yaml:1:9: 'window' must be at least 2s" "$ERR" || fail "$(cat "$ERR")"
printf 'caches:\n  symbols: 4K\n' >"$TEST_TMP/bad.yaml"
expect_exit 78 "$TPROFD" --config "$TEST_TMP/bad.yaml" --check-config
grep -q "bad.yaml:2:12: 'symbols' must be from 64K to 64G" "$ERR" || fail "$(cat "$ERR")"
printf 'caches:\n  unwind: 1M\n' >"$TEST_TMP/bad.yaml"
expect_exit 78 "$TPROFD" --config "$TEST_TMP/bad.yaml" --check-config
grep -q "bad.yaml:2:3: unknown key 'unwind' in caches (valid keys: symbols, unwind_tables)" "$ERR" || fail "$(cat "$ERR")"
printf 'incidents:\n  max_bundles: many\n' >"$TEST_TMP/bad.yaml"
expect_exit 78 "$TPROFD" --config "$TEST_TMP/bad.yaml" --check-config
grep -q "bad.yaml:2:16: invalid value 'many' for 'max_bundles'" "$ERR" || fail "$(cat "$ERR")"
expect_exit 78 "$TPROFD" --config "$TEST_TMP/none.yaml" --check-config
grep -q "Configuration file '.*none.yaml' does not exist" "$ERR" || fail "$(cat "$ERR")"
# --help works whatever the file says.
"$TPROFD" --config "$TEST_TMP/bad.yaml" --help | grep -q -- "--config FILE" || fail "--help depends on the file"
printf 'rules:\n  - name: x\n    source: kernel\n    match: "("\n' >"$TEST_TMP/badrules.yaml"
expect_exit 78 "$TPROFD" --rules "$TEST_TMP/badrules.yaml" --check-config
grep -q "badrules.yaml:4:" "$ERR" || fail "$(cat "$ERR")"

# The shipped example, every setting uncommented, is a valid configuration (its hook from the
# source tree: the installed path exists after `contrib/setup.sh run` only).
sed -e 's/^# \([a-z_]*:\)/\1/' -e 's/^#   \([a-z_]*:\)/  \1/' -e 's/ *#.*//' -e '/^#/d' \
        -e "s|^rules: .*|rules: $TPROF_SOURCE_ROOT/rules|" -e '/journal_namespace/d' \
        "$TPROF_SOURCE_ROOT/contrib/tprofd.yaml.example" >"$TEST_TMP/example.yaml"
grep -q '/usr/local/share/doc/tprof/hooks/ship-s3.sh' "$TEST_TMP/example.yaml" || fail "the example names no installed hook"
sed "s|/usr/local/share/doc/tprof/hooks/|$TPROF_SOURCE_ROOT/contrib/hooks/|" "$TEST_TMP/example.yaml" >"$TEST_TMP/example-src.yaml"
"$TPROFD" --config "$TEST_TMP/example-src.yaml" --check-config >"$OUT" 2>"$ERR" || fail "the example does not load: $(cat "$ERR")"
# A hook that is not there (a path copied from the wrong place) is found by --check-config.
sed "s|/usr/local/share/doc/tprof/hooks/|$TEST_TMP/no-hooks/|" "$TEST_TMP/example.yaml" >"$TEST_TMP/example-nohook.yaml"
expect_exit 78 "$TPROFD" --config "$TEST_TMP/example-nohook.yaml" --check-config
grep -q "incidents.on_bundle: '$TEST_TMP/no-hooks/ship-s3.sh' cannot be run" "$ERR" || fail "missing hook: $(cat "$ERR")"
# One that nobody may execute fails for the daemon (root) too.
if [ "$(id -u)" = 0 ]; then
        mkdir -p "$TEST_TMP/noexec-hooks"
        printf '#!/bin/sh\nexit 0\n' >"$TEST_TMP/noexec-hooks/ship-s3.sh"
        chmod 0644 "$TEST_TMP/noexec-hooks/ship-s3.sh"
        sed "s|/usr/local/share/doc/tprof/hooks/|$TEST_TMP/noexec-hooks/|" "$TEST_TMP/example.yaml" >"$TEST_TMP/example-noexec.yaml"
        expect_exit 78 "$TPROFD" --config "$TEST_TMP/example-noexec.yaml" --check-config
fi

# A rule that asks for more time before its events than the ring keeps is named, with where the
# retention comes from; a warning, not an error.
printf 'rules:\n  - name: fits\n    source: kernel\n    match: "a"\n    before: 50s\n  - name: slow\n    source: kernel\n    match: "b"\n    before: 90s\n' >"$TEST_TMP/slow-rules.yaml"
printf 'retention:\n  max_age: 1m\n' >"$TEST_TMP/short.yaml"
"$TPROFD" --config "$TEST_TMP/short.yaml" --rules "$TEST_TMP/slow-rules.yaml" --check-config >"$OUT" 2>"$ERR" ||
        fail "a short retention is refused: $(cat "$ERR")"
grep -q "slow-rules.yaml:6: rule 'slow' asks for 1m30s before its events, but retention.max_age in $TEST_TMP/short.yaml keeps windows for 1m:" "$ERR" ||
        fail "a short retention is not named: $(cat "$ERR")"
printf 'rules:\n  - name: fits\n    source: kernel\n    match: "a"\n    before: 1m\n' >"$TEST_TMP/fits-rules.yaml"
"$TPROFD" --config "$TEST_TMP/short.yaml" --rules "$TEST_TMP/fits-rules.yaml" --check-config >"$OUT" 2>"$ERR" || fail "$(cat "$ERR")"
grep -q 'retention' "$ERR" && fail "a rule whose before equals max_age is warned of: $(cat "$ERR")"
printf 'retention:\n  max_age: 2m\n' >"$TEST_TMP/long.yaml"
"$TPROFD" --config "$TEST_TMP/long.yaml" --rules "$TEST_TMP/slow-rules.yaml" --check-config >"$OUT" 2>"$ERR" || fail "$(cat "$ERR")"
grep -q 'retention' "$ERR" && fail "a retention that fits is warned of: $(cat "$ERR")"
# A journal rule where the journal is not followed never fires: not named.
printf 'rules:\n  - name: jslow\n    source: journal\n    match: "b"\n    before: 90s\n' >"$TEST_TMP/jslow-rules.yaml"
printf 'retention:\n  max_age: 1m\nsources:\n  journal: false\n' >"$TEST_TMP/nojournal.yaml"
"$TPROFD" --config "$TEST_TMP/nojournal.yaml" --rules "$TEST_TMP/jslow-rules.yaml" --check-config >"$OUT" 2>"$ERR" || fail "$(cat "$ERR")"
grep -q 'retention' "$ERR" && fail "a journal rule without the journal is warned of: $(cat "$ERR")"
"$TPROFD" --config "$TEST_TMP/short.yaml" --rules "$TEST_TMP/jslow-rules.yaml" --check-config >"$OUT" 2>"$ERR" || fail "$(cat "$ERR")"
grep -q "rule 'jslow' asks for 1m30s" "$ERR" || fail "a journal rule is not named: $(cat "$ERR")"

require_perf
require_kmsg_writable
SOCK="$TEST_TMP/control.sock"
rules() { # rules NAME...: one origin-any rule per name matching "tprof-cfg-$TOKEN NAME"
        echo "defaults: { before: 1s, after: 1s, cooldown: 0s }"
        echo "rules:"
        for n in "$@"; do
                printf '  - name: %s\n    source: kernel\n    origin: any\n    match: "tprof-cfg-%s %s"\n' "$n" "$TOKEN" "$n"
        done
}
rules one >"$TEST_TMP/rules.yaml"
printf '  - name: long\n    source: kernel\n    match: "never"\n    before: 11m\n' >>"$TEST_TMP/rules.yaml"
cat >"$TEST_TMP/tprofd.yaml" <<CONF
state_dir: $STATE
rules: $TEST_TMP/rules.yaml
freq: 49
window: 6s
detail: exact
control_socket: $SOCK
incidents:
  max_bundles: 5
retention:
  max_age: 10m
CONF
"$TPROFD" --config "$TEST_TMP/tprofd.yaml" --check-config >"$OUT" || fail "check-config on a good file"
grep -q "^configuration: $TEST_TMP/tprofd.yaml" "$OUT" || fail "$(cat "$OUT")"

# The file's settings apply; --window on the command line overrides the file's.
"$TPROFD" --config "$TEST_TMP/tprofd.yaml" --window 4s >>"$TEST_TMP/tprofd.log" 2>&1 &
TPROFD_PID=$!
on_exit "kill $TPROFD_PID 2>/dev/null; wait $TPROFD_PID 2>/dev/null"
wait_for 30 grep -q "running: state in $STATE, windows of 4s, exact detail" "$TEST_TMP/tprofd.log" || fail "$(cat "$TEST_TMP/tprofd.log")"
# At start too, a rule that asks for more than the ring keeps is named.
grep -q "rule 'long' asks for 11m before its events, but retention.max_age in $TEST_TMP/tprofd.yaml keeps windows for 10m:" \
        "$TEST_TMP/tprofd.log" || fail "no retention warning at start: $(cat "$TEST_TMP/tprofd.log")"
"$TPROF_BUNDLE" --control-socket "$SOCK" status >"$OUT" || fail "status"
grep -q "at 49 Hz" "$OUT" || fail "freq from the file not applied: $(cat "$OUT")"
wait_for 10 compgen -G "$STATE/ring/*-4s.tpw*" || fail "window length: $(ls "$STATE/ring")"

matched() { grep -c "rule $1 matched kmsg: tprof-cfg-$TOKEN $1\$" "$TEST_TMP/tprofd.log" || true; }
matched_once() { [ "$(matched "$1")" = 1 ]; }

# Reload with a good rules file: the new rule matches.
rules one two >"$TEST_TMP/rules.yaml"
kill -HUP "$TPROFD_PID"
reloaded() { [ "$(grep -c "Reloaded the configuration" "$TEST_TMP/tprofd.log")" -ge "$1" ]; }
wait_for 10 reloaded 1 || fail "no reload: $(tail "$TEST_TMP/tprofd.log")"
# (one and long at start, one and two now)
[ "$(grep -c "Loaded 2 rules" "$TEST_TMP/tprofd.log")" = 2 ] || fail "reloaded, not with 2 rules: $(tail "$TEST_TMP/tprofd.log")"
kmsg_write "tprof-cfg-$TOKEN two"
wait_for 10 matched_once two || fail "the reloaded rule did not match"

# A reloaded rule that asks for more than the ring keeps is named in the log.
rules one two >"$TEST_TMP/rules.yaml"
printf '  - name: longer\n    source: kernel\n    match: "never"\n    before: 12m\n' >>"$TEST_TMP/rules.yaml"
kill -HUP "$TPROFD_PID"
wait_for 10 grep -q "rule 'longer' asks for 12m before its events, but retention.max_age in $TEST_TMP/tprofd.yaml keeps windows for 10m:" \
        "$TEST_TMP/tprofd.log" || fail "no retention warning on reload: $(tail "$TEST_TMP/tprofd.log")"

# Reload with a bad rules file: reported, the old rules keep running.
printf 'rules:\n  - name: one\n    source: kernel\n    match: "(unclosed"\n' >"$TEST_TMP/rules.yaml"
kill -HUP "$TPROFD_PID"
wait_for 10 grep -q "Keeping the settings and rules that were running" "$TEST_TMP/tprofd.log" || fail "bad rules not reported"
grep -q "rules.yaml:4:.*" "$TEST_TMP/tprofd.log" || fail "the error does not name file:line"
kmsg_write "tprof-cfg-$TOKEN one"
wait_for 10 matched_once one || fail "the old rules stopped matching after a bad reload"

# A setting that needs a restart says so.
rules one two >"$TEST_TMP/rules.yaml"
sed -i 's/^freq: 49/freq: 97/' "$TEST_TMP/tprofd.yaml"
kill -HUP "$TPROFD_PID"
wait_for 10 grep -q "take effect only after a restart of tprofd: freq" "$TEST_TMP/tprofd.log" || fail "$(tail "$TEST_TMP/tprofd.log")"
kill -0 "$TPROFD_PID" || fail "tprofd died on reload"
stop_tprofd
echo ok
