# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers for the integration tests: failure reporting, exit-code checks, skipping, and a
# temporary directory that is removed on exit.

: "${TPROFD:?run through meson test}"
: "${TPROF_BUNDLE:?run through meson test}"

TEST_TMP=$(mktemp -d /tmp/tprof-test.XXXXXX)
ERR="$TEST_TMP/stderr"
OUT="$TEST_TMP/stdout"
CLEANUP_CMDS=()

cleanup() {
        local c
        for c in "${CLEANUP_CMDS[@]}"; do eval "$c" || true; done
        rm -rf "$TEST_TMP"
}
trap cleanup EXIT

on_exit() { CLEANUP_CMDS+=("$1"); }

# new_token: a random mark for the lines a test writes to the kernel log or the journal, which other
# tests and earlier runs write to as well: its rules and checks take only lines with its own.
new_token() { od -An -N4 -tx1 /dev/urandom | tr -d ' \n'; }
TOKEN=$(new_token)

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

skip() {
        echo "SKIP: $*" >&2
        exit 77
}

# expect_exit CODE CMD...: runs CMD with stdout in $OUT and stderr in $ERR, fails unless it exits CODE.
expect_exit() {
        local want=$1 got=0
        shift
        "$@" >"$OUT" 2>"$ERR" || got=$?
        [ "$got" = "$want" ] || fail "'$*' exited $got, expected $want; stderr: $(head -c 2000 "$ERR")"
}

require_root() { [ "$(id -u)" = 0 ] || skip "needs root"; }

# wait_for SECONDS CMD...: polls CMD every 0.1 s until it succeeds; fails after SECONDS.
wait_for() {
        local limit=$1 i=0
        shift
        while ! "$@" >/dev/null 2>&1; do
                i=$((i + 1))
                [ "$i" -le $((limit * 10)) ] || return 1
                sleep 0.1
        done
}

# require_perf: skips unless this machine lets us open perf events system wide.
require_perf() {
        require_root
        [ -e /proc/sys/kernel/perf_event_paranoid ] || skip "no perf events in this kernel"
        "$TPROFD" --once 0.2 >/dev/null 2>"$TEST_TMP/perf-probe" || skip "perf events unavailable: $(head -c 300 "$TEST_TMP/perf-probe")"
}

# require_burn: skips unless the burn helper (tests/helpers/burn.c) was built.
require_burn() { [ -n "${TPROF_BURN:-}" ] && [ -x "$TPROF_BURN" ] || skip "the burn helper was not built"; }

# Each test's daemon listens on a control socket of its own, and tprof-bundle finds it there: tests
# running at once (and the host's own tprofd) never answer each other's status or capture. A test
# may choose another (--control-socket after start_tprofd's, and TPROF_CONTROL_SOCKET).
export TPROF_CONTROL_SOCKET="$TEST_TMP/control.sock"

# start_tprofd ARGS...: runs tprofd in the background on $STATE with its log in $TEST_TMP/tprofd.log,
# waits until it runs, stops it at exit. Sets TPROFD_PID.
running_lines() {
        local n
        n=$(grep -c "running: state in" "$TEST_TMP/tprofd.log" 2>/dev/null) || true
        echo "${n:-0}"
}
running_more_than() { [ "$(running_lines)" -gt "$1" ]; }
start_tprofd() {
        local before
        before=$(running_lines)
        "$TPROFD" --state-dir "$STATE" --control-socket "$TEST_TMP/control.sock" "$@" >>"$TEST_TMP/tprofd.log" 2>&1 &
        TPROFD_PID=$!
        on_exit "kill $TPROFD_PID 2>/dev/null; wait $TPROFD_PID 2>/dev/null"
        # The log is appended across restarts: wait for this run's line, not an earlier one.
        wait_for 30 running_more_than "$before" ||
                fail "tprofd did not start: $(tail -20 "$TEST_TMP/tprofd.log")"
}

# ring_inode NAME: the inode of the ring's window NAME ($STATE/ring), or of NAME.partial while that
# window is open; the daemon may finish it (rename it to NAME) between two looks, so NAME is looked
# at again after. Nothing, and status 1, if neither is there.
ring_inode() {
        stat -c %i "$STATE/ring/$1" 2>/dev/null || stat -c %i "$STATE/ring/$1.partial" 2>/dev/null ||
                stat -c %i "$STATE/ring/$1" 2>/dev/null
}

# stop_tprofd: SIGTERM, and it must exit 0 within 10 s.
stop_tprofd() {
        local i=0
        kill -TERM "$TPROFD_PID"
        while kill -0 "$TPROFD_PID" 2>/dev/null; do
                i=$((i + 1))
                [ "$i" -le 100 ] || fail "tprofd did not exit within 10 s of SIGTERM"
                sleep 0.1
        done
        wait "$TPROFD_PID" || fail "tprofd exited $? after SIGTERM: $(tail -20 "$TEST_TMP/tprofd.log")"
}

# ena_rule NAME BEFORE: writes $TEST_TMP/rules.yaml with one rule, NAME, that takes the ENA
# driver's reset line (ena_timer_service(), drivers/net/ethernet/amazon/ena/ena_netdev.c, Linux 6.12)
# with this run's token after it, as story_burst writes it: BEFORE seconds of slice before the line
# and 5 after. The line is written from user space, so the rule is of origin any.
ena_rule() {
        cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: $1
    source: kernel
    origin: any
    match: '^ena (?<pci>\S+) (?<dev>\S+): Trigger reset is on tprof-$TOKEN\$'
    before: $2s
    after: 5s
RULES
}

# burn_both SECONDS: two burners keep both CPUs busy for SECONDS (stopped on exit; their pids in
# BURN_PIDS), as on a loaded host: a planted rise must stand out from them.
burn_both() {
        BURN_PIDS=()
        "$TPROF_BURN" "$1" &
        BURN_PIDS+=($!)
        on_exit "kill $! 2>/dev/null"
        "$TPROF_BURN" "$1" &
        BURN_PIDS+=($!)
        on_exit "kill $! 2>/dev/null"
}

# story_burst SECONDS: after SECONDS, the story tests' agent works hard (the file $HOT exists) for
# 2.5 s before and 2.5 s after an ENA reset line with this run's token written to /dev/kmsg.
story_burst() {
        sleep "$1"
        touch "$HOT"
        sleep 2.5
        echo "ena 0000:00:05.0 eth0: Trigger reset is on tprof-$TOKEN" >/dev/kmsg
        sleep 2.5
        rm -f "$HOT"
}

# bundle_wait RULE SECONDS: waits up to SECONDS for a bundle of RULE (its manifest written), and sets
# B (its directory).
bundle_wait() {
        local rule=$1
        bundle_ready() { compgen -G "$STATE/incidents/*-$rule-*/manifest.json" >/dev/null; }
        wait_for "$2" bundle_ready || fail "no bundle: $(tail -20 "$TEST_TMP/tprofd.log")"
        B=$(compgen -G "$STATE/incidents/*-$rule-*")
}

# bundle_shown RULE: waits for a bundle of RULE, sets B (its directory) and ID, and writes what show
# --json, show and report say of it to $TEST_TMP/show.json, show.txt and report.html.
bundle_shown() {
        bundle_wait "$1" 20
        ID=${B##*-}
        expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" show "$ID" --json
        cp "$OUT" "$TEST_TMP/show.json"
        expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" show "$ID"
        cp "$OUT" "$TEST_TMP/show.txt"
        expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" report "$ID" -o "$TEST_TMP/report.html"
}

STATE="$TEST_TMP/state"

# kmsg_records: prints every record still in the kernel's log buffer, read from /dev/kmsg without
# blocking, one a line: "PRI,SEQ,USEC;MESSAGE" (the message's first line, no continuation lines).
kmsg_records() {
        python3 -c '
import errno, os, sys
fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
out = []
while True:
    try:
        rec = os.read(fd, 8192)
    except OSError as e:
        if e.errno == errno.EPIPE:  # overwritten while read: the next one comes
            continue
        if e.errno == errno.EAGAIN:
            break
        raise
    head, _, msg = rec.decode("utf-8", "replace").partition(";")
    out.append(",".join(head.split(",")[:3]) + ";" + msg.split("\n", 1)[0])
sys.stdout.write("".join(l + "\n" for l in out))
'
}

# DMESG_FORMS: sed scripts that turn dmesg lines ("[ 1234.567890] msg") into the other text forms
# tools and log files print the kernel's lines in, which tprofd --test-rules reads: the rules must
# give each the dmesg line's verdict.
DMESG_STAMP='\[ *[0-9]*\.[0-9]*\] '
declare -A DMESG_FORMS=(
        [kern.log]="s/^\($DMESG_STAMP\)/Nov 21 14:00:00 ip-10-0-1-23 kernel: \1/"
        [rsyslog-rfc3339]="s/^\($DMESG_STAMP\)/2026-11-21T14:00:00.123456+00:00 ip-10-0-1-23 kernel: \1/"
        [dmesg-T]="s/^$DMESG_STAMP/[Sat Nov 21 14:00:00 2026] /"
        [dmesg-x]="s/^/kern  :err   : /"
        [dmesg-iso]="s/^$DMESG_STAMP/2026-11-21T14:00:00,123456+00:00 /"
        [dmesg-r]="s/^/<3>/"
        [console-caller]="s/^\($DMESG_STAMP\)/\1[  T123] /;s/\] \[/][/"
        [journalctl-full]="s/^$DMESG_STAMP/Sat 2026-11-21 14:00:00 UTC ip-10-0-1-23 kernel: /"
        [journalctl-monotonic]="s/^\($DMESG_STAMP\)/\1ip-10-0-1-23 kernel: /"
        [journalctl-unix]="s/^$DMESG_STAMP/1795693209.649404 ip-10-0-1-23 kernel: /"
        [rfc5424]="s/^$DMESG_STAMP/<3>1 2026-11-21T14:00:00.123456+00:00 ip-10-0-1-23 kernel - - - /"
)
