#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The bundle hook (incidents.on_bundle) with the real daemon: it runs after each bundle with the
# documented environment, its output and exit status are logged; a failing hook, a hook that
# sleeps past its limit and a storm of bundles with a hanging hook do not disturb the daemon
# (status answers, bundles are still written, sampling goes on), nor does one that writes without
# end cost it a CPU. The journal announcement carries the same facts.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
SOCK="$TEST_TMP/control.sock"
export TPROF_CONTROL_SOCKET="$SOCK"
HOOKDIR="$TEST_TMP/hook"
mkdir -p "$HOOKDIR"
echo ok >"$HOOKDIR/mode"

# The hook: records its environment per bundle, prints a line, then behaves as $HOOKDIR/mode says.
printf '%s\n' '#!/bin/sh' \
        'dir=$1' \
        'env | grep "^TPROF_" | sort >"$dir/env-$TPROF_BUNDLE_ID"' \
        'echo "shipping $TPROF_BUNDLE_ID with arg '"'"'$2'"'"'"' \
        'case "$(cat "$dir/mode")" in' \
        'fail) echo "upload refused" >&2; exit 7 ;;' \
        'hang) sleep 300 ;;' \
        'esac' \
        'exit 0' >"$HOOKDIR/hook.sh"
chmod +x "$HOOKDIR/hook.sh"
printf '%s\n' 'incidents:' '  max_bundles: 100' \
        "  on_bundle: [\"$HOOKDIR/hook.sh\", \"$HOOKDIR\", \"two words\"]" \
        '  on_bundle_timeout: 2s' >"$TEST_TMP/tprofd.yaml"
expect_exit 0 "$TPROFD" --config "$TEST_TMP/tprofd.yaml" --rules "$TPROF_SOURCE_ROOT/rules" --check-config
# A relative command is refused: it runs without a shell or a search path.
printf '%s\n' 'incidents:' '  on_bundle: [hook.sh]' >"$TEST_TMP/bad.yaml"
expect_exit 78 "$TPROFD" --config "$TEST_TMP/bad.yaml" --rules "$TPROF_SOURCE_ROOT/rules" --check-config
grep -q "must be an absolute path" "$ERR" || fail "relative hook: $(cat "$ERR")"

start_tprofd --config "$TEST_TMP/tprofd.yaml" --rules "$TPROF_SOURCE_ROOT/rules" --window 4s --control-socket "$SOCK"
wait_for 10 test -S "$SOCK" || fail "no control socket"
sleep 2

# --- a hook that succeeds: the documented environment, its output and status in the log
ID=$("$TPROF_BUNDLE" capture --before 1s --after 1s --note 'hook test') || fail "capture failed"
wait_for 20 grep -q "Bundle hook for $ID (PID [0-9]*) succeeded" "$TEST_TMP/tprofd.log" ||
        fail "no success line: $(grep -i hook "$TEST_TMP/tprofd.log" | tail)"
grep -q "Bundle hook for $ID (PID [0-9]*): shipping $ID with arg 'two words'" "$TEST_TMP/tprofd.log" ||
        fail "hook output not logged: $(grep -i hook "$TEST_TMP/tprofd.log" | tail)"
E="$HOOKDIR/env-$ID"
[ -f "$E" ] || fail "the hook did not run for $ID"
short=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["short_id"])' "$STATE/incidents/$ID/manifest.json")
for want in "TPROF_BUNDLE_PATH=$STATE/incidents/$ID" "TPROF_BUNDLE_ID=$ID" "TPROF_SHORT_ID=$short" \
        "TPROF_RULE=manual" "TPROF_HOST=$(hostname)" "TPROF_STATUS=complete" "TPROF_STATE_DIR=$STATE" \
        "TPROF_TRIGGER_MESSAGE=hook test"; do
        grep -qxF "$want" "$E" || fail "hook environment lacks '$want': $(cat "$E")"
done
grep -qE '^TPROF_TRIGGER_TIME=20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{6}Z$' "$E" || fail "TPROF_TRIGGER_TIME: $(cat "$E")"
grep -qE '^TPROF_TRIGGER_PERF_NS=[1-9][0-9]*$' "$E" || fail "TPROF_TRIGGER_PERF_NS: $(cat "$E")"
grep -qE '^TPROF_TRIGGER_REALTIME_USEC=[1-9][0-9]*$' "$E" || fail "TPROF_TRIGGER_REALTIME_USEC: $(cat "$E")"

# --- a failing hook: logged with its exit status and output, the daemon goes on
echo fail >"$HOOKDIR/mode"
ID=$("$TPROF_BUNDLE" capture --before 1s --after 1s) || fail "capture with a failing hook failed"
wait_for 20 grep -q "Bundle hook for $ID (PID [0-9]*) failed with exit status 7" "$TEST_TMP/tprofd.log" ||
        fail "no failure line: $(grep -i hook "$TEST_TMP/tprofd.log" | tail)"
grep -q "Bundle hook for $ID (PID [0-9]*): upload refused" "$TEST_TMP/tprofd.log" || fail "stderr not logged"

# --- a hook that hangs: terminated at its limit; meanwhile the daemon answers and writes bundles
echo hang >"$HOOKDIR/mode"
ID=$("$TPROF_BUNDLE" capture --before 1s --after 1s) || fail "capture with a hanging hook failed"
"$TPROF_BUNDLE" status >"$OUT" 2>"$ERR" || fail "status while a hook hangs: $(cat "$ERR")"
grep -q "Bundle hooks: .* 1 running" "$OUT" || fail "status: $(cat "$OUT")"
wait_for 20 grep -q "Bundle hook for $ID (PID [0-9]*) ran longer than 2s and was terminated" "$TEST_TMP/tprofd.log" ||
        fail "the hanging hook was not stopped: $(grep -i hook "$TEST_TMP/tprofd.log" | tail)"

# --- a storm of bundles with hanging hooks: at most 2 run, 16 wait, the rest are dropped and
# counted; every bundle is written, status answers and sampling goes on.
# A reload takes a longer limit, so the hooks of the storm hang for its whole length.
sed -i 's/on_bundle_timeout: 2s/on_bundle_timeout: 120s/' "$TEST_TMP/tprofd.yaml"
kill -HUP "$TPROFD_PID"
wait_for 10 grep -q "Reloaded the configuration" "$TEST_TMP/tprofd.log" || fail "no reload"
samples() { "$TPROF_BUNDLE" status 2>/dev/null | sed -n 's/.*Samples: *\([0-9]*\) kept, \([0-9]*\) lost.*/\1 \2/p'; }
read -r s0 l0 <<<"$(samples)"
[ -n "${s0:-}" ] || fail "no sample counts in status: $("$TPROF_BUNDLE" status 2>&1)"
ids=()
for round in 1 2 3; do
        pids=()
        for i in 1 2 3 4 5 6 7; do
                "$TPROF_BUNDLE" capture --before 1s --after 1s >"$TEST_TMP/cap-$round-$i" 2>&1 &
                pids+=($!)
        done
        for p in "${pids[@]}"; do wait "$p" || fail "a capture of the storm failed"; done
        for i in 1 2 3 4 5 6 7; do ids+=("$(cat "$TEST_TMP/cap-$round-$i")"); done
        "$TPROF_BUNDLE" status >"$OUT" 2>"$ERR" || fail "status during the storm: $(cat "$ERR")"
done
for id in "${ids[@]}"; do
        [ -f "$STATE/incidents/$id/manifest.json" ] || fail "bundle $id of the storm is missing"
done
"$TPROF_BUNDLE" status >"$OUT" || fail "status after the storm"
running=$(sed -n 's/.*Bundle hooks: .* \([0-9]*\) running.*/\1/p' "$OUT")
[ "$running" -le 2 ] || fail "$running hooks running at once: $(cat "$OUT")"
dropped=$(sed -n 's/.*Bundle hooks: .* \([0-9]*\) dropped.*/\1/p' "$OUT")
[ "$dropped" -ge 1 ] || fail "21 bundles with hanging hooks dropped none: $(cat "$OUT")"
grep -q "Bundle hook busy (2 running, 16 queued)" "$TEST_TMP/tprofd.log" || fail "no log line for a dropped hook"
read -r s1 l1 <<<"$(samples)"
[ "$s1" -gt "$s0" ] || fail "sampling stopped during the storm ($s0 -> $s1)"
# Samples the kernel dropped while the storm ran: under 1% of those kept (the loop was not held up).
[ $(((l1 - l0) * 100)) -le $((s1 - s0)) ] || fail "lost $((l1 - l0)) samples of $((s1 - s0)) during the storm"
echo "storm: ${#ids[@]} bundles written, $dropped hooks dropped; $((s1 - s0)) samples kept, $((l1 - l0)) lost"

# The journal announcement carries what a log pipeline needs (only where a journal runs).
if [ -S /run/systemd/journal/socket ] && command -v journalctl >/dev/null; then
        if journalctl -o export MESSAGE_ID=6b0f5e1a8c7d4e2f9a3b1c0d2e4f6a8b TPROF_BUNDLE_ID="${ids[0]}" >"$OUT" 2>/dev/null &&
                [ -s "$OUT" ]; then
                for f in TPROF_BUNDLE_PATH TPROF_HOST TPROF_RULE TPROF_STATUS TPROF_TRIGGER_TIME TPROF_TRIGGER_MESSAGE; do
                        grep -q "^$f=" "$OUT" || fail "announcement lacks $f: $(cat "$OUT")"
                done
                echo "journal announcement checked"
        fi
fi

stop_tprofd
! grep -q "has no IP sockets" "$TEST_TMP/tprofd.log" || fail "the network notice where IP sockets work"

# Without IP sockets (the shipped unit's RestrictAddressFamilies=AF_UNIX, which hooks inherit): the
# daemon says at start that an uploading hook will fail, and where the README tells what to do.
if [ -n "${TPROF_NO_INET:-}" ] && [ -x "$TPROF_NO_INET" ]; then
        "$TPROF_NO_INET" "$TPROFD" --state-dir "$STATE" --control-socket "$TEST_TMP/noinet.sock" \
                --config "$TEST_TMP/tprofd.yaml" --rules "$TPROF_SOURCE_ROOT/rules" >"$TEST_TMP/noinet.log" 2>&1 &
        NOINET_PID=$!
        on_exit "kill $NOINET_PID 2>/dev/null"
        wait_for 30 grep -q "has no IP sockets" "$TEST_TMP/noinet.log" ||
                fail "no notice of the missing network: $(tail -5 "$TEST_TMP/noinet.log")"
        grep -q 'See "The bundle hook" in the README' "$TEST_TMP/noinet.log" || fail "the notice names no remedy"
        kill "$NOINET_PID"
        wait "$NOINET_PID" || true
fi

# --- a hook that writes without end (yes): past the 8 KiB it logs, its output is thrown away
# without costing the daemon a CPU until the timeout; it is still stopped at its limit.
printf '%s\n' 'incidents:' '  on_bundle: [/usr/bin/yes, "a chatty hook"]' '  on_bundle_timeout: 4s' \
        >"$TEST_TMP/chatty.yaml"
start_tprofd --config "$TEST_TMP/chatty.yaml" --rules "$TPROF_SOURCE_ROOT/rules" --window 4s --control-socket "$SOCK"
ID=$("$TPROF_BUNDLE" capture --before 1s --after 1s) || fail "capture with a chatty hook failed"
wait_for 10 grep -q "Bundle hook for $ID (PID [0-9]*): a chatty hook" "$TEST_TMP/tprofd.log" || fail "the chatty hook's output not logged"
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$TPROFD_PID/stat"; }
t0=$(cpu_ticks)
sleep 2
t1=$(cpu_ticks)
hz=$(getconf CLK_TCK)
echo "chatty hook: the daemon used $((t1 - t0)) of $((2 * hz)) ticks in 2 s"
[ $(((t1 - t0) * 10)) -le $((2 * hz)) ] || fail "the daemon used $((t1 - t0)) ticks of CPU in 2 s reading a hook's output"
wait_for 20 grep -q "Bundle hook for $ID (PID [0-9]*) ran longer than 4s and was terminated" "$TEST_TMP/tprofd.log" ||
        fail "the chatty hook was not stopped: $(grep -v 'a chatty hook$' "$TEST_TMP/tprofd.log" | tail -5)"
grep -q "Bundle hook for $ID (PID [0-9]*): [0-9]* more bytes of output not logged" "$TEST_TMP/tprofd.log" ||
        fail "no count of the output not logged"
[ "$(grep -c "Bundle hook for $ID (PID [0-9]*): a chatty hook$" "$TEST_TMP/tprofd.log")" -le 1000 ] || fail "more than 8 KiB of output logged"
stop_tprofd
echo ok
