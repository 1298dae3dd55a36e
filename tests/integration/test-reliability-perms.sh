#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Permissions, with tprofd run the way contrib/tprofd.service runs it (Group=tprof, UMask=0027):
# a user outside group tprof can read no bundle, no window and no position file, cannot list the
# bundles, cannot talk to the control socket (not even when its file mode lets anyone connect:
# the daemon checks SO_PEERCRED), and cannot write into /dev/kmsg; a line root writes there
# still does not fire a kernel-only rule. A member of group tprof can read the bundles and ask
# for the status. The test creates the users (and group tprof when missing) and removes them.
set -eu
. "$(dirname "$0")/reliability-lib.sh"

require_perf
for c in useradd userdel groupadd groupdel setpriv python3; do
        command -v "$c" >/dev/null || skip "needs $c"
done
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"

if ! getent group tprof >/dev/null; then
        groupadd --system tprof || skip "cannot create group tprof"
        on_exit "groupdel tprof"
fi
OUTSIDER="tprofo$$"
MEMBER="tprofm$$"
OUTSIDER=${OUTSIDER:0:16}
MEMBER=${MEMBER:0:16}
useradd --system --no-create-home --shell /usr/sbin/nologin "$OUTSIDER" || skip "cannot create a user"
on_exit "userdel '$OUTSIDER'"
useradd --system --no-create-home --shell /usr/sbin/nologin -G tprof "$MEMBER" || skip "cannot create a user"
on_exit "userdel '$MEMBER'"
as() {
        local u=$1
        shift
        setpriv --reuid "$u" --regid "$u" --init-groups --inh-caps=-all -- "$@"
}

# The test's temporary folder is 0700: open it, so only the daemon's own modes keep people out.
chmod 0755 "$TEST_TMP"
REAL_TPROFD=$TPROFD
TPROFD="$TEST_TMP/tprofd-as-service"
cat >"$TPROFD" <<EOF
#!/bin/sh
umask 0027
exec setpriv --regid tprof --keep-groups -- "$REAL_TPROFD" "\$@"
EOF
chmod 0755 "$TPROFD"

cat >"$TEST_TMP/rules.yaml" <<RULES
defaults: { before: 1s, after: 500ms, cooldown: 0s }
rules:
  - name: perm-kernel
    source: kernel
    match: 'tprof-perm-$TOKEN'
  - name: perm-any
    source: kernel
    origin: any
    match: 'tprof-perm-$TOKEN'
RULES
start_tprofd --rules "$TEST_TMP/rules.yaml" --window 2s --control-socket "$CTL"
sleep 2
expect_exit 0 "$TPROF_BUNDLE" --control-socket "$CTL" capture --before 1s --after 500ms
B=$(ls -d "$STATE"/incidents/*-manual-*)
W=$(ls "$STATE"/ring/*.tpw | head -n 1)
[ -n "$W" ] || fail "no finished window in the ring"

# An outsider: nothing readable, nothing listed.
for f in "$B/manifest.json" "$B/stacks.folded" "$B/log.txt" "$W" "$STATE/state/kmsg-position"; do
        ! as "$OUTSIDER" cat "$f" >/dev/null 2>&1 || fail "$OUTSIDER can read $f"
done
for d in "$STATE/incidents" "$STATE/ring" "$B" "$B/windows"; do
        ! as "$OUTSIDER" ls "$d" >/dev/null 2>&1 || fail "$OUTSIDER can list $d"
done
as "$OUTSIDER" "$TPROF_BUNDLE" -D "$STATE" ls >"$OUT" 2>&1 && fail "$OUTSIDER can run tprof-bundle ls: $(cat "$OUT")"
! grep -q "$(basename "$B" | sed 's/.*-//')" "$OUT" || fail "tprof-bundle ls showed a bundle to $OUTSIDER"
as "$OUTSIDER" "$TPROF_BUNDLE" windows --ring "$STATE/ring" >"$OUT" 2>&1 && fail "$OUTSIDER can list windows"

# The control socket: refused, whatever its file mode says.
refused() {
        as "$1" /usr/bin/python3 - "$CTL" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect:", e)
    sys.exit(0)
s.settimeout(5)
s.send(b"OP=capture\nBEFORE_USEC=1000000\nAFTER_USEC=100000\n")
reply = s.recv(65536).decode(errors="replace")
print(reply)
sys.exit(0 if "OK=1" not in reply else 1)
PY
}
refused "$OUTSIDER" >"$OUT" 2>&1 || fail "$OUTSIDER talked to the control socket: $(cat "$OUT")"
chmod 0666 "$CTL"
refused "$OUTSIDER" >"$OUT" 2>&1 || fail "$OUTSIDER talked to a world-writable control socket: $(cat "$OUT")"
grep -q "ERROR=" "$OUT" || fail "a refused request got no ERROR= reply: $(cat "$OUT")"
got=0
as "$OUTSIDER" "$TPROF_BUNDLE" --control-socket "$CTL" status >"$OUT" 2>&1 || got=$?
[ "$got" != 0 ] || fail "$OUTSIDER got the daemon's status: $(cat "$OUT")"
! grep -q "running, PID" "$OUT" || fail "$OUTSIDER got the daemon's status: $(cat "$OUT")"
got=0
as "$OUTSIDER" "$TPROF_BUNDLE" --control-socket "$CTL" capture --before 1s --after 100ms >"$OUT" 2>&1 || got=$?
[ "$got" != 0 ] || fail "$OUTSIDER made a capture"
[ "$(ls -d "$STATE"/incidents/*-manual-* | wc -l)" = 1 ] || fail "a refused capture made a bundle"

# /dev/kmsg: an outsider cannot write it; what root writes is not kernel-logged.
! as "$OUTSIDER" sh -c "echo 'tprof-perm-$TOKEN outsider' >/dev/kmsg" 2>/dev/null || fail "$OUTSIDER can write /dev/kmsg"
echo "tprof-perm-$TOKEN root" >/dev/kmsg
wait_for 10 grep -q "rule perm-any matched kmsg: tprof-perm-$TOKEN root" "$TEST_TMP/tprofd.log" ||
        fail "the origin-any rule did not see root's line"
sleep 1
! grep -q "rule perm-kernel matched" "$TEST_TMP/tprofd.log" || fail "a kernel-only rule fired on a user-written line"
! grep -q "tprof-perm-$TOKEN outsider" "$TEST_TMP/tprofd.log" || fail "the outsider's line reached the daemon"

# A member of group tprof reads the bundles and talks to the daemon.
as "$MEMBER" cat "$B/manifest.json" >/dev/null || fail "$MEMBER (group tprof) cannot read $B/manifest.json: $(ls -la "$B")"
as "$MEMBER" "$TPROF_BUNDLE" -D "$STATE" ls >"$OUT" 2>&1 || fail "$MEMBER cannot list the bundles: $(cat "$OUT")"
as "$MEMBER" "$TPROF_BUNDLE" --control-socket "$CTL" status >"$OUT" 2>&1 || fail "$MEMBER cannot get the status: $(cat "$OUT")"
grep -q "running, PID" "$OUT" || fail "$MEMBER got no status: $(cat "$OUT")"
# Modes: directories 0750, files 0640, nothing for others anywhere under the state directory.
others=$(find "$STATE" -perm /o=rwx -printf '%M %p\n' | head)
[ -z "$others" ] || fail "others have access to: $others"

stop_tprofd
echo ok
