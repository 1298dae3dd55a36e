#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tprofd as a systemd service: it speaks the notify protocol (READY=1, STATUS=, WATCHDOG=1,
# RELOADING=1, STOPPING=1) on a socket the test listens on; SIGTERM during an open incident writes
# it and exits within seconds, leaving no staging directory and no open window; the control socket
# refuses a user outside group tprof and admits one inside it (the test creates both); and the
# unit file passes systemd-analyze verify.
set -eu
. "$(dirname "$0")/logsrc-lib.sh"

# The unit, with ExecStart pointed at this build.
if command -v systemd-analyze >/dev/null; then
        UNIT="$TPROF_BUILD_ROOT/contrib/tprofd.service"
        [ -f "$UNIT" ] || fail "no $UNIT"
        mkdir "$TEST_TMP/unit"
        sed "s|^ExecStart=.*|ExecStart=$TPROFD|" "$UNIT" >"$TEST_TMP/unit/tprofd.service"
        systemd-analyze verify --man=no "$TEST_TMP/unit/tprofd.service" >"$OUT" 2>&1 || fail "systemd-analyze verify: $(cat "$OUT")"
        grep -q "^Type=notify" "$UNIT" && grep -q "^WatchdogSec=" "$UNIT" || fail "unit lacks Type=notify/WatchdogSec"
fi

require_perf
require_kmsg_writable
command -v useradd >/dev/null || skip "no useradd"
SOCK="$TEST_TMP/control.sock"
cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: svc-slow
    source: kernel
    origin: any
    match: 'tprof-svc-$TOKEN'
    before: 2s
    after: 60s
RULES

# A datagram socket for the notify protocol, and a listener writing each message on one line.
python3 - "$TEST_TMP/notify.sock" "$TEST_TMP/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        log.write(s.recv(4096).decode(errors="replace").replace("\n", "|") + "\n")
PY
on_exit "kill $! 2>/dev/null"
wait_for 10 test -S "$TEST_TMP/notify.sock" || fail "no notify socket"

# WATCHDOG_PID must name tprofd itself: let the shell that becomes tprofd set it.
NOTIFY_SOCKET="$TEST_TMP/notify.sock" WATCHDOG_USEC=2000000 bash -c 'export WATCHDOG_PID=$$; exec "$@"' _ \
        "$TPROFD" --state-dir "$STATE" --rules "$TEST_TMP/rules.yaml" --window 4s --control-socket "$SOCK" \
        >>"$TEST_TMP/tprofd.log" 2>&1 &
TPROFD_PID=$!
on_exit "kill $TPROFD_PID 2>/dev/null; wait $TPROFD_PID 2>/dev/null"
wait_for 30 grep -q "READY=1" "$TEST_TMP/notify.log" || fail "no READY=1: $(cat "$TEST_TMP/notify.log"; tail "$TEST_TMP/tprofd.log")"
grep -q "STATUS=Sampling" "$TEST_TMP/notify.log" || fail "no STATUS=: $(cat "$TEST_TMP/notify.log")"
wait_for 5 grep -q "WATCHDOG=1" "$TEST_TMP/notify.log" || fail "no WATCHDOG=1 with WatchdogSec=2s"
kill -HUP "$TPROFD_PID"
wait_for 10 grep -q "RELOADING=1" "$TEST_TMP/notify.log" || fail "no RELOADING=1 on SIGHUP"

# Socket access: outside group tprof refused, inside admitted.
if ! getent group tprof >/dev/null; then
        groupadd -r tprof || skip "cannot create group tprof"
        on_exit "groupdel tprof 2>/dev/null"
fi
OUTSIDER=tprof-out-$$
INSIDER=tprof-in-$$
useradd -r -M -N -s /usr/sbin/nologin "$OUTSIDER" || skip "cannot create users"
on_exit "userdel $OUTSIDER 2>/dev/null"
useradd -r -M -N -G tprof -s /usr/sbin/nologin "$INSIDER"
on_exit "userdel $INSIDER 2>/dev/null"
# The group was made after tprofd started (here, or by another run of this test on the machine):
# restart it so the socket gets the group.
if [ "$(stat -c %G "$SOCK")" != tprof ]; then
        kill -TERM "$TPROFD_PID"; wait "$TPROFD_PID" || true
        : >"$TEST_TMP/notify.log"
        NOTIFY_SOCKET="$TEST_TMP/notify.sock" "$TPROFD" --state-dir "$STATE" --rules "$TEST_TMP/rules.yaml" \
                --window 4s --control-socket "$SOCK" >>"$TEST_TMP/tprofd.log" 2>&1 &
        TPROFD_PID=$!
        on_exit "kill $TPROFD_PID 2>/dev/null; wait $TPROFD_PID 2>/dev/null"
        wait_for 30 grep -q "READY=1" "$TEST_TMP/notify.log" || fail "restart failed"
fi
chmod 755 "$TEST_TMP"
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups "$@"; }
expect_exit 1 as "$OUTSIDER" "$TPROF_BUNDLE" --control-socket "$SOCK" capture
grep -q "Permission denied" "$ERR" || fail "outsider: $(cat "$ERR")"
as "$INSIDER" "$TPROF_BUNDLE" --control-socket "$SOCK" -D "$STATE" status >"$OUT" 2>"$ERR" || fail "insider refused: $(cat "$ERR" "$OUT")"
grep -q "tprofd: running" "$OUT" || fail "insider: $(cat "$OUT")"
# The daemon itself refuses the outsider, even with the file opened up.
chmod 666 "$SOCK"
expect_exit 1 as "$OUTSIDER" "$TPROF_BUNDLE" --control-socket "$SOCK" capture
grep -q "refused the capture: permission denied: root or group tprof only" "$ERR" || fail "outsider through 0666: $(cat "$ERR")"

# SIGTERM while an incident waits for its 60 s after: written now, promptly, nothing left staged.
sleep 2
kmsg_write "tprof-svc-$TOKEN"
wait_for 10 compgen -G "$STATE/incidents/.tmp-*svc-slow*" || fail "no incident staged"
T0=$(date +%s.%N)
kill -TERM "$TPROFD_PID"
wait_for 10 grep -q "STOPPING=1" "$TEST_TMP/notify.log" || fail "no STOPPING=1"
wait "$TPROFD_PID" || fail "tprofd exited $? on SIGTERM"
awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "SIGTERM to exit with an open incident: %.2f s\n", b - a; exit !(b - a < 5) }' ||
        fail "tprofd took too long to stop"
! compgen -G "$STATE/incidents/.tmp-*" >/dev/null || fail "a staging directory was left behind"
B=$(compgen -G "$STATE/incidents/*-svc-slow-*") || fail "the open incident was not written"
[ -f "$B/manifest.json" ] || fail "no manifest in $B"
grep -q "Writing incident .* early" "$TEST_TMP/tprofd.log" || fail "no log line about the early write"
! compgen -G "$STATE/ring/*.partial" >/dev/null || fail "SIGTERM left an open window"
echo ok
