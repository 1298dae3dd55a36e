# SPDX-License-Identifier: LGPL-2.1-or-later
# Helpers shared by the log source tests (test-logsrc-*.sh): run the logsrc-follow driver in the
# background and wait until its sources are set up, pick fields out of its tab-separated output, and
# make /dev/kmsg writes unthrottled for the duration of a test (restoring the setting on exit).

. "$(dirname "$0")/lib.sh"

FOLLOW=${LOGSRC_FOLLOW:?run through meson test}
TAG="tprof-test-$$-$RANDOM"

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
