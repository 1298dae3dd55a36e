#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Long-run memory: tprofd runs under a leak checker while it samples, rotates 2 s windows, matches
# lines written into /dev/kmsg and records bundles and manual captures, then stops on SIGTERM.
# In the sanitizer build (build-asan, TPROFD linked with AddressSanitizer) LeakSanitizer checks at
# exit; otherwise the daemon runs under valgrind memcheck --leak-check=full. Either way: no leak,
# no memory error. Then the plain daemon does the same while its RSS is sampled: once warmed up it
# must not keep growing. RELIABILITY_LEAK_SECONDS and RELIABILITY_RSS_SECONDS (default 20 each)
# set the lengths, RELIABILITY_RSS_GROWTH_KB_MAX (default 2048) the growth allowed after warm-up,
# between the median RSS of the run's third sixth and of its last sixth (sampled every 0.25 s).
# tprofd samples the whole machine: on a busy one, programs it has not seen before start all the
# time (a build's compilers), and its bounded caches of their symbols and stacks legitimately fill.
# Their sizes come from `status` (SYMBOL_CACHE_BYTES, UNWIND_CACHE_BYTES, STACK_CACHE_BYTES), each
# bounded by its own limit, and their growth over the
# same stretch is printed and taken off; what is left is what no bounded cache explains. That is
# judged on what malloc has handed out (status's HEAP_BYTES), which every leak of the heap raises
# and nothing else does; RSS also holds freed memory malloc keeps for reuse, so RSS growth no
# cache explains is held to four times the limit: enough to catch memory malloc does not count
# (mappings), not what a busy machine's burst of new programs leaves free in malloc's arenas.
set -eu
. "$(dirname "$0")/reliability-lib.sh"

require_perf
require_kmsg_writable
command -v python3 >/dev/null || skip "needs python3"
LEAK_SECONDS=${RELIABILITY_LEAK_SECONDS:-20}
RSS_SECONDS=${RELIABILITY_RSS_SECONDS:-20}
RSS_GROWTH_KB_MAX=${RELIABILITY_RSS_GROWTH_KB_MAX:-2048}
# Not valgrind.log: the run named "valgrind" writes its own log to $TEST_TMP/valgrind.log, and the
# two would overwrite each other's lines.
VG_LOG="$TEST_TMP/memcheck.log"

if grep -q __asan_init "$TPROFD"; then
        CHECKER=lsan
        export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=23"
        RUN=("$TPROFD")
else
        command -v valgrind >/dev/null || skip "needs valgrind, or TPROFD built with -Dsanitizers=true"
        CHECKER=valgrind
        RUN=(valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect
             --errors-for-leak-kinds=definite,indirect --error-exitcode=23 --track-fds=no
             --log-file="$VG_LOG" "$TPROFD")
fi

cat >"$TEST_TMP/rules.yaml" <<RULES
defaults: { before: 2s, after: 1s, cooldown: 3s }
rules:
  - name: leak-any
    source: kernel
    origin: any
    match: 'tprof-leak-$TOKEN \w+ (?<n>\d+)'
  - name: leak-kernel
    source: kernel
    match: 'tprof-leak-$TOKEN \w+ (?<n>\d+)'
RULES

# sample_rss PID FILE: appends "<ms since start> <RSS KiB> <bytes of the bounded caches> <heap
# bytes> <tasks>" to FILE every 0.25 s while PID lives; the last three are asked of the daemon's
# control socket once a second (the last answer carries over, -1 before the first).
sample_rss() {
        python3 - "$1" "$2" "$CTL" <<'PY'
import os, socket, sys, time
pid, out, ctl = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def rss_kb():
    try:
        for l in open("/proc/%d/status" % pid):
            if l.startswith("VmRSS:"):
                return int(l.split()[1])
    except OSError:
        return None
def caches():
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(2)
        s.connect(ctl)
        s.send(b"OP=status\n")
        f = dict(l.split("=", 1) for l in s.recv(8192).decode().splitlines() if "=" in l)
        s.close()
        return (int(f["SYMBOL_CACHE_BYTES"]) + int(f["UNWIND_CACHE_BYTES"]) + int(f["STACK_CACHE_BYTES"]),
                int(f["HEAP_BYTES"]), int(f["TASKS"]))
    except (OSError, KeyError, ValueError):
        return None
t0, known, n = time.monotonic(), (-1, -1, -1), 0
with open(out, "a") as o:
    while True:
        kb = rss_kb()
        if kb is None:
            break
        if n % 4 == 0:
            c = caches()
            known = c if c is not None else known
        o.write("%d %d %d %d %d\n" % ((time.monotonic() - t0) * 1000, kb, known[0], known[1], known[2]))
        o.flush()
        n += 1
        time.sleep(0.25)
PY
}

# run_daemon NAME SECONDS CMD...: the daemon under CMD on a fresh state directory, with a matching
# line every 2 s, a capture every 6 s and a status request every 8 s; RSS sampled into NAME.rss.
# Sets GOT to its exit status after SIGTERM.
run_daemon() {
        local name=$1 secs=$2 t0 n=0
        shift 2
        STATE="$TEST_TMP/state-$name"
        LOG="$TEST_TMP/$name.log"
        "$@" --state-dir "$STATE" --rules "$TEST_TMP/rules.yaml" --window 2s --max-bundles 5 --control-socket "$CTL" \
                >>"$LOG" 2>&1 &
        TPROFD_PID=$!
        on_exit "kill $TPROFD_PID 2>/dev/null; wait $TPROFD_PID 2>/dev/null"
        wait_for 180 grep -q "running: state in" "$LOG" || fail "tprofd did not start ($name): $(tail "$LOG" "$VG_LOG" 2>/dev/null)"
        t0=$(date +%s)
        sample_rss "$TPROFD_PID" "$TEST_TMP/$name.rss" &
        RSS_SAMPLER=$!
        on_exit "kill $RSS_SAMPLER 2>/dev/null"
        while [ $(($(date +%s) - t0)) -lt "$secs" ]; do
                n=$((n + 1))
                printf '<15>tprof-leak-%s %s %s\n' "$TOKEN" "$name" "$n" >/dev/kmsg
                [ $((n % 3)) = 0 ] && "$TPROF_BUNDLE" --control-socket "$CTL" capture --before 2s --after 1s >/dev/null 2>&1 &
                [ $((n % 4)) = 0 ] && "$TPROF_BUNDLE" --control-socket "$CTL" status >/dev/null 2>&1
                sleep 2
        done
        kill "$RSS_SAMPLER" 2>/dev/null || true
        wait "$RSS_SAMPLER" 2>/dev/null || true
        wait_for 30 grep -q "rule leak-any matched" "$LOG" || fail "no match during the $name run"
        sleep 2
        kill -TERM "$TPROFD_PID"
        GOT=0
        wait "$TPROFD_PID" || GOT=$?
        figure "${name}_matches" "$(grep -c "rule leak-any matched" "$LOG" || true)"
        figure "${name}_bundles" "$(grep -c "Incident .*bundle" "$LOG" || true)"
        [ "$(grep -c "Incident .*bundle" "$LOG" || true)" -ge 2 ] ||
                fail "fewer than 2 bundles in the $name run; its log ends: $(tail -25 "$LOG")"
        ! grep -q "rule leak-kernel matched" "$LOG" || fail "a kernel-only rule fired on a user-written line"
}

# 1. Leaks and memory errors.
run_daemon "$CHECKER" "$LEAK_SECONDS" "${RUN[@]}"
figure leak_checker "$CHECKER"
figure leak_seconds "$LEAK_SECONDS"
if [ "$CHECKER" = valgrind ]; then
        grep -E "definitely lost|indirectly lost|possibly lost|still reachable|ERROR SUMMARY|All heap blocks|in use at exit|total heap usage" "$VG_LOG" |
                sed 's/^==[0-9]*== */FIGURE leak_summary /'
        grep -q "ERROR SUMMARY: 0 errors" "$VG_LOG" || fail "valgrind found errors: $(grep -B2 -A30 -m1 "lost in\|Invalid\|uninitialised" "$VG_LOG" | head -60)"
else
        grep -q "LeakSanitizer\|AddressSanitizer" "$LOG" && fail "the sanitizers found a problem: $(grep -A40 -m1 "Sanitizer" "$LOG")"
        figure leak_summary "LeakSanitizer: no leak reported at exit"
fi
[ "$GOT" = 0 ] || fail "tprofd exited $GOT after SIGTERM under $CHECKER: $(tail -20 "$LOG")"

# 2. RSS over time, measured on the daemon alone: a leak checker's own memory would hide it.
if [ "$CHECKER" = lsan ]; then
        figure rss_note "not measured in the sanitizer build (ASan's quarantine grows by design)"
        echo ok
        exit 0
fi
run_daemon plain "$RSS_SECONDS" "$TPROFD"
[ "$GOT" = 0 ] || fail "tprofd exited $GOT after SIGTERM: $(tail -20 "$LOG")"
# The check prints its verdict as FAIL lines; a check that stopped on an error of its own printed
# none, and fails by its exit status.
rc=0
python3 - "$TEST_TMP/plain.rss" "$RSS_GROWTH_KB_MAX" >"$TEST_TMP/rss.figures" <<'PY' || rc=$?
# One reading can land on a transient peak (a bundle or capture being written, a busy machine
# delaying free()s), so compare steady states: the median of the samples just after warm-up (the
# third sixth of the run: caches and the log context filled) with the median of the last sixth.
# A leak raises every later sample and so the median; a peak moves neither.
import statistics, sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 5]
limit = int(sys.argv[2])
n = len(rows)
if n < 12:
    print("FAIL: too few RSS samples (%d)" % n)
    sys.exit(0)
known = [r for r in rows if r[2] >= 0]
if len(known) < n // 2:
    print("FAIL: status did not report the cache sizes (%d of %d samples)" % (len(known), n))
    sys.exit(0)
warm_rows, last_rows = rows[n // 3 : n // 2], rows[n - n // 6 :]
def median(part, col, scale=1):
    v = [r[col] for r in part if r[col] >= 0]
    return statistics.median(v) // scale if v else 0
warm, last = median(warm_rows, 1), median(last_rows, 1)
cache_warm, cache_last = median(warm_rows, 2, 1024), median(last_rows, 2, 1024)
heap_warm, heap_last = median(warm_rows, 3, 1024), median(last_rows, 3, 1024)
cache_growth = max(0, cache_last - cache_warm)
unexplained = (last - warm) - cache_growth
heap_unexplained = (heap_last - heap_warm) - cache_growth
print("FIGURE rss_samples %d" % n)
print("FIGURE rss_over_time " + " ".join("%.1fs:%dK" % (r[0] / 1000, r[1]) for r in rows[:: max(1, n // 12)]))
print("FIGURE rss_kb_first %d" % rows[0][1])
print("FIGURE rss_kb_warm_median %d" % warm)
print("FIGURE rss_kb_peak %d" % max(r[1] for r in rows))
print("FIGURE rss_kb_last_median %d" % last)
print("FIGURE rss_kb_growth_after_warmup %d" % (last - warm))
print("FIGURE cache_kb_warm_median %d" % cache_warm)
print("FIGURE cache_kb_last_median %d" % cache_last)
print("FIGURE heap_kb_warm_median %d" % heap_warm)
print("FIGURE heap_kb_last_median %d" % heap_last)
print("FIGURE tasks_warm_median %d" % median(warm_rows, 4))
print("FIGURE tasks_last_median %d" % median(last_rows, 4))
print("FIGURE rss_kb_growth_not_in_caches %d" % unexplained)
print("FIGURE heap_kb_growth_not_in_caches %d" % heap_unexplained)
if heap_unexplained > limit:
    print("FAIL: malloc's bytes in use grew by %d KiB after warm-up (median of the last sixth against the "
          "third), %d KiB of it not in the symbol, unwind and stack caches" % (heap_last - heap_warm, heap_unexplained))
if unexplained > 4 * limit:
    print("FAIL: RSS grew by %d KiB after warm-up (median of the last sixth against the third), %d KiB of it "
          "not in the symbol, unwind and stack caches" % (last - warm, unexplained))
PY
cat "$TEST_TMP/rss.figures"
[ "$rc" = 0 ] || fail "the RSS samples could not be checked (exit $rc)"
grep -q FAIL "$TEST_TMP/rss.figures" && fail "$(grep FAIL "$TEST_TMP/rss.figures")"
echo ok
