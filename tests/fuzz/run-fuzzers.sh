#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Builds the fuzz targets (build-fuzz/, clang, -Dfuzz=true) if needed, writes their seed corpora
# with make-seeds.sh, runs each target for SECONDS (20 by default), then replays the committed
# regression inputs under regressions/<target>/. Prints one line per target: name, seconds,
# executions, corpus size and result. libFuzzer's own output goes to a log per target, shown
# (its tail) only when something fails. Exits 1 if any target crashed, hung, ran out of memory
# or failed a regression input.
#
#   run-fuzzers.sh [SECONDS_PER_TARGET]
#
# Targets run TPROF_FUZZ_JOBS at a time (the number of CPUs by default); each is one process.
# TPROF_FUZZ_WORKDIR keeps the corpora, logs and crash inputs in that directory instead of a
# temporary one that is removed at the end (when nothing failed).
set -eu

secs=${1:-20}
case $secs in
''|*[!0-9]*) echo "usage: run-fuzzers.sh [SECONDS_PER_TARGET]" >&2; exit 64 ;;
esac
jobs=${TPROF_FUZZ_JOBS:-$(nproc)}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/build-fuzz
targets="kmsg rules window pprof bundle-manifest folded control names escape gopclntab elf unwind-cfi unwind-walk
        activity oom bundle-show"

if [ -n "${TPROF_FUZZ_WORKDIR:-}" ]; then
        work=$TPROF_FUZZ_WORKDIR
        mkdir -p "$work"
        keep=1
else
        work=$(mktemp -d "${TMPDIR:-/tmp}/tprof-fuzz.XXXXXX")
        keep=0
fi

fail() {
        echo "run-fuzzers: $1; log: $2" >&2
        tail -n 40 "$2" >&2
        exit 1
}

if [ ! -f "$build/build.ninja" ]; then
        CC=clang meson setup "$build" "$top" -Dfuzz=true -Dsanitizers=true -Db_lundef=false \
                >"$work/setup.log" 2>&1 || fail "configuring $build failed" "$work/setup.log"
fi
ninja -C "$build" >"$work/build.log" 2>&1 || fail "building $build failed" "$work/build.log"

rm -rf "$work/seeds"
"$here/make-seeds.sh" "$work/seeds" "$build" >"$work/seeds.log" 2>&1 ||
        fail "making the seed corpora failed" "$work/seeds.log"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# Runs one target, then its regression inputs; leaves "LINE" in $dir/result and the log to show
# in $dir/failed-log when it failed.
run_target() {
        t=$1
        exe=$build/tests/fuzz/fuzz-$t
        dir=$work/$t
        log=$dir/fuzz.log
        rm -rf "$dir"
        mkdir -p "$dir/corpus" "$dir/artifacts"
        cp "$work/seeds/$t"/* "$dir/corpus/"

        result=ok
        start=$(date +%s)
        if ! "$exe" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
                -artifact_prefix="$dir/artifacts/" "$dir/corpus" >"$log" 2>&1; then
                result="FAILED ($(ls "$dir/artifacts" | head -n 1))"
        fi
        elapsed=$(($(date +%s) - start))
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
        corpus=$(ls "$dir/corpus" | wc -l)

        if [ "$result" = ok ] && [ -d "$here/regressions/$t" ]; then
                # Each input runs once; a crash fails the target.
                if ! (cd "$here" && "$exe" regressions/"$t"/*) >"$dir/regressions.log" 2>&1; then
                        result="FAILED (regression input)"
                        log=$dir/regressions.log
                fi
        fi
        [ "$result" = ok ] || echo "$log" >"$dir/failed-log"
        printf '%-16s %8s %12s %8s  %s\n' "$t" "$elapsed" "${execs:-?}" "$corpus" "$result" >"$dir/result"
}

failed=0
printf '%-16s %8s %12s %8s  %s\n' target seconds executions corpus result
set -- $targets
while [ $# -gt 0 ]; do
        batch=
        n=0
        while [ $# -gt 0 ] && [ "$n" -lt "$jobs" ]; do
                run_target "$1" &
                batch="$batch $1"
                n=$((n + 1))
                shift
        done
        wait
        for t in $batch; do
                if [ -f "$work/$t/result" ]; then
                        cat "$work/$t/result"
                else
                        printf '%-16s %8s %12s %8s  %s\n' "$t" - - - "FAILED (the runner itself, see $work/$t)"
                        failed=1
                        keep=1
                fi
                if [ -f "$work/$t/failed-log" ]; then
                        failed=1
                        keep=1
                        log=$(cat "$work/$t/failed-log")
                        echo "--- $log (last 40 lines)" >&2
                        tail -n 40 "$log" >&2
                fi
        done
done

if [ "$keep" = 1 ]; then
        echo "run-fuzzers: corpora, logs and crash inputs are in $work" >&2
else
        rm -rf "$work"
fi
exit "$failed"
