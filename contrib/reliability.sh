#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The reliability tests, long: the same scripts CI runs (tests/integration/test-reliability-*.sh),
# with the sizes turned up, and the figures they report gathered into one summary: rounds of
# SIGKILL survived, how long the disk stayed full, the storm's rate and duration and what it
# became (bundles, dropped matches, RSS over time, status latency, SIGTERM time), how many
# manifest rewrites a flood of repeats costs, the leak checkers' summaries and RSS over a long
# run. Needs root, perf events and /dev/kmsg, like the tests; about 20 minutes with the defaults.
#
#   contrib/reliability.sh [--build DIR] [--asan-build DIR] [--rounds N] [--storm-seconds S]
#                          [--storm-rate LINES] [--replay-records N] [--leak-seconds S]
#                          [--rss-seconds S] [--full-seconds S] [--repeat-lines N]
#                          [--only NAME[,NAME...]]
#
# NAME is crash, disk, storm, repeats, leak, lsan, perms or hostile. Exit status: 0 when every
# test passed (or skipped), 1 otherwise. Logs go to a temporary folder, named at the end.
set -u

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$SRC/build
ASAN_BUILD=$SRC/build-asan
ROUNDS=50
STORM_SECONDS=120
STORM_RATE=2000
REPLAY_RECORDS=1000000
LEAK_SECONDS=180
RSS_SECONDS=300
FULL_SECONDS=30
REPEAT_LINES=60000
ONLY=crash,disk,storm,repeats,leak,lsan,perms,hostile

usage() { sed -n '10,16p' "$0" | sed 's/^# \{0,1\}//'; exit 64; }
while [ $# -gt 0 ]; do
        case "$1" in
        --build) BUILD=$(realpath "$2"); shift ;;
        --asan-build) ASAN_BUILD=$(realpath "$2"); shift ;;
        --rounds) ROUNDS=$2; shift ;;
        --storm-seconds) STORM_SECONDS=$2; shift ;;
        --storm-rate) STORM_RATE=$2; shift ;;
        --replay-records) REPLAY_RECORDS=$2; shift ;;
        --leak-seconds) LEAK_SECONDS=$2; shift ;;
        --rss-seconds) RSS_SECONDS=$2; shift ;;
        --full-seconds) FULL_SECONDS=$2; shift ;;
        --repeat-lines) REPEAT_LINES=$2; shift ;;
        --only) ONLY=$2; shift ;;
        -h | --help) usage ;;
        *) echo "Unknown argument '$1'." >&2; usage ;;
        esac
        shift
done
[ "$(id -u)" = 0 ] || { echo "contrib/reliability.sh needs root (perf events, /dev/kmsg, mounts, users)." >&2; exit 1; }
[ -x "$BUILD/src/tprofd/tprofd" ] || { echo "No tprofd in $BUILD: run meson setup $BUILD && ninja -C $BUILD first." >&2; exit 1; }

LOGS=$(mktemp -d /tmp/tprof-reliability.XXXXXX)
SUMMARY=$LOGS/figures
: >"$SUMMARY"
failed=0

# run NAME BUILD_DIR SCRIPT [VAR=VALUE...]: one test script with the environment meson gives it.
run() {
        local name=$1 build=$2 script=$3 rc t0
        shift 3
        case ",$ONLY," in *",$name,"*) ;; *) return 0 ;; esac
        echo "== $name ($(date -u +%H:%M:%S) UTC) ..." >&2
        t0=$(date +%s)
        env TPROFD="$build/src/tprofd/tprofd" TPROF_BUNDLE="$build/src/tprof-bundle/tprof-bundle" \
                TPROF_SOURCE_ROOT="$SRC" TPROF_BUILD_ROOT="$build" TPROF_BURN="$build/tests/burn" \
                TPROF_BURN_STRIPPED="$build/tests/burn-stripped" STORE_TOOL="$build/tests/store-tool" \
                LOGSRC_FOLLOW="$build/tests/logsrc-follow" ASAN_OPTIONS=detect_leaks=1 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$@" \
                bash "$SRC/tests/integration/$script" >"$LOGS/$name.log" 2>&1
        rc=$?
        case $rc in
        0) result=passed ;;
        77) result="skipped: $(grep -m1 '^SKIP' "$LOGS/$name.log")" ;;
        *) result="FAILED (exit $rc): $(grep -m1 '^FAIL' "$LOGS/$name.log")"; failed=1 ;;
        esac
        printf '%-8s %-60s %5ss\n' "$name" "$result" "$(($(date +%s) - t0))" | tee -a "$SUMMARY.results" >&2
        sed -n "s/^FIGURE /$name  /p" "$LOGS/$name.log" >>"$SUMMARY"
}

run crash "$BUILD" test-reliability-crash.sh RELIABILITY_ROUNDS="$ROUNDS" RELIABILITY_MAX_LIFE_MS=6000
run disk "$BUILD" test-reliability-disk.sh RELIABILITY_FULL_SECONDS="$FULL_SECONDS"
run storm "$BUILD" test-reliability-storm.sh RELIABILITY_STORM_SECONDS="$STORM_SECONDS" \
        RELIABILITY_STORM_RATE="$STORM_RATE" RELIABILITY_REPLAY_RECORDS="$REPLAY_RECORDS"
run repeats "$BUILD" test-reliability-repeats.sh RELIABILITY_REPEAT_LINES="$REPEAT_LINES"
run leak "$BUILD" test-reliability-leak.sh RELIABILITY_LEAK_SECONDS="$LEAK_SECONDS" \
        RELIABILITY_RSS_SECONDS="$RSS_SECONDS"
if [ -x "$ASAN_BUILD/src/tprofd/tprofd" ]; then
        run lsan "$ASAN_BUILD" test-reliability-leak.sh RELIABILITY_LEAK_SECONDS="$LEAK_SECONDS"
else
        case ",$ONLY," in *,lsan,*) echo "lsan     skipped: no $ASAN_BUILD (meson setup build-asan -Dsanitizers=true -Db_lundef=false)" |
                tee -a "$SUMMARY.results" >&2 ;; esac
fi
run perms "$BUILD" test-reliability-perms.sh
run hostile "$BUILD" test-reliability-hostile.sh

echo
echo "Results:"
cat "$SUMMARY.results" 2>/dev/null
echo
echo "Figures:"
awk '{ name = $1; key = $2; $1 = $2 = ""; sub(/^ +/, ""); printf "%-8s %-40s %s\n", name, key, $0 }' "$SUMMARY"
echo
echo "Logs: $LOGS"
exit "$failed"
