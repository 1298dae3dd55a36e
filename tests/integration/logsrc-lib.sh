# SPDX-License-Identifier: LGPL-2.1-or-later
# Helpers shared by the log source tests (test-logsrc-*.sh): run the logsrc-follow driver in the
# background and wait until its sources are set up, pick fields out of its tab-separated output, and
# make /dev/kmsg writes unthrottled for the duration of a test (restoring the setting on exit).

. "$(dirname "$0")/lib.sh"

FOLLOW=${LOGSRC_FOLLOW:?run through meson test}
TAG="tprof-test-$$-$RANDOM"
# The private journald's namespace: a name no earlier run on this machine used (a namespace's
# journal directory under /var/log/journal outlives a run that was killed, and PIDs come round).
JOURNAL_NS="tprof-test-$$-$RANDOM"

# follow_bg NAME ARGS...: starts the driver with stdout in $TEST_TMP/NAME.out, stderr in NAME.err,
# sets FOLLOW_PID and returns once it printed "ready" (fails if it died first).
follow_bg() {
        local name=$1 i
        shift
        # FOLLOW_WRAP: a command or function to run the driver under (ns_run in the journal test).
        ${FOLLOW_WRAP:-} "$FOLLOW" "$@" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" &
        FOLLOW_PID=$!
        on_exit "kill $FOLLOW_PID 2>/dev/null"
        for i in $(seq 200); do
                grep -q '^ready' "$TEST_TMP/$name.err" && return 0
                kill -0 "$FOLLOW_PID" 2>/dev/null || fail "$name: driver died: $(cat "$TEST_TMP/$name.err")"
                sleep 0.05
        done
        fail "$name: driver not ready"
}

# follow_wait NAME [CODE]: waits for the background driver; fails unless it exits CODE (default 0).
follow_wait() {
        local name=$1 want=${2:-0} got=0
        wait "$FOLLOW_PID" || got=$?
        [ "$got" = "$want" ] || fail "$name: driver exited $got, expected $want: $(cat "$TEST_TMP/$name.err")"
}

# tagged NAME: the output lines of run NAME whose message (field 13) carries this test's tag.
tagged() {
        awk -F'\t' -v tag="$TAG" 'index($13, tag) > 0' "$TEST_TMP/$1.out"
}

# messages NAME: just the tagged messages, with the tag removed, one per line.
messages() {
        tagged "$1" | cut -f13 | sed "s/^.*$TAG //"
}

# counter NAME SOURCE KEY: a counter from the driver's "stats" line.
counter() {
        sed -n "s/^stats $2 .*\b$3=\([0-9]*\).*/\1/p" "$TEST_TMP/$1.err"
}

# expect_eq WHAT GOT WANT
expect_eq() {
        [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}

# Tests that write /dev/kmsg run one at a time: the overrun test floods the ring and would wipe the
# records another test is about to read back. Other tests reading kmsg should take this lock too.
KMSG_TEST_LOCK=/tmp/tprof-test-kmsg.lock

require_kmsg_writable() {
        require_root
        [ -r /dev/kmsg ] && [ -w /dev/kmsg ] || skip "/dev/kmsg is not readable and writable"
        exec 9>"$KMSG_TEST_LOCK"
        flock -w 240 9 || fail "another kmsg test holds $KMSG_TEST_LOCK"
        local old
        old=$(cat /proc/sys/kernel/printk_devkmsg 2>/dev/null) || skip "no /proc/sys/kernel/printk_devkmsg"
        if [ "$old" != on ]; then
                echo on >/proc/sys/kernel/printk_devkmsg 2>/dev/null || skip "cannot lift the /dev/kmsg rate limit"
                on_exit "echo $old >/proc/sys/kernel/printk_devkmsg"
        fi
}

kmsg_write() {
        printf '%s\n' "$1" >/dev/kmsg || fail "write to /dev/kmsg failed"
}

# start_private_journald: runs a journald of our own in a journal namespace (systemd-journald NS, as
# systemd-journald@.service does), so the host's journal is neither read nor written; skips when that
# cannot work here. Sets NS and defines ns_run CMD... (runs CMD with /run/systemd/journal being that
# journald's socket directory, in a private mount namespace: systemd 252's systemd-cat has no
# --namespace) and jsend FIELD=VALUE... (one native-protocol entry, through journal-send.py: it
# stays alive until journald has written the entry, so _COMM and the other fields journald reads
# from /proc/<pid> are always there; logger would exit first on a busy machine and leave them out).
start_private_journald() {
        local journald=/lib/systemd/systemd-journald mid i
        [ -x "$journald" ] || skip "no $journald"
        command -v unshare >/dev/null || skip "no unshare"
        command -v systemd-cat >/dev/null || skip "no systemd-cat"
        logger --help 2>&1 | grep -q -- --journald || skip "logger has no --journald"
        command -v python3 >/dev/null || skip "no python3"
        [ -s /etc/machine-id ] || skip "no /etc/machine-id, journald would not start"
        unshare -m true 2>/dev/null || skip "cannot create a mount namespace"

        NS=$JOURNAL_NS
        mid=$(cat /etc/machine-id)
        "$journald" "$NS" >"$TEST_TMP/journald.log" 2>&1 &
        JOURNALD_PID=$!
        # journald first: removed while it runs, its directory came back with the journal it
        # writes on the way out.
        on_exit "kill $JOURNALD_PID 2>/dev/null; wait $JOURNALD_PID 2>/dev/null"
        on_exit "rm -rf /run/systemd/journal.$NS /var/log/journal/$mid.$NS /run/log/journal/$mid.$NS"
        for i in $(seq 200); do
                [ -S "/run/systemd/journal.$NS/socket" ] && [ -S "/run/systemd/journal.$NS/stdout" ] && break
                kill -0 "$JOURNALD_PID" 2>/dev/null || fail "journald died: $(cat "$TEST_TMP/journald.log")"
                sleep 0.05
        done
        [ -S "/run/systemd/journal.$NS/socket" ] || fail "journald did not create its sockets"
        mkdir -p "$TEST_TMP/jsock"
        # A namespace's journald exits after 30 s without a client; a test that waits longer (for
        # tprofd's journal retry) would then send into a dead socket. An open stdout stream is a
        # client: keep one for as long as the test runs.
        # (ns_run runs in a subshell: the sleep is its child. 900 s bounds it even if the test is
        # killed before its exit handlers run.)
        ns_run systemd-cat -t tprof-test-keepalive sleep 900 </dev/null 9>&- &
        on_exit "pkill -P $! 2>/dev/null; kill $! 2>/dev/null"
}

ns_run() {
        unshare -m bash -c 'set -e
                mount --bind "/run/systemd/journal.$1" "$2"
                mount -t tmpfs tmpfs /run/systemd
                mkdir /run/systemd/journal
                mount --bind "$2" /run/systemd/journal
                shift 2
                exec "$@"' _ "$NS" "$TEST_TMP/jsock" "$@"
}

JSEND="$(dirname "$0")/journal-send.py"
JSEND_COMM=journal-send.py

jsend() {
        "$JSEND" "$NS" "$@" || fail "journal-send.py failed"
}
