#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# What sampling costs: the same CPU load (BURNERS copies of the test burner, one per CPU by default)
# profiled by `tprofd --once` and by `perf record -g -a`, at 97 Hz and 997 Hz. For each: the
# profiler's CPU seconds per sampled second, samples captured against freq x CPUs x seconds, and
# peak RSS. perf's figure is given alone and with the `perf script | fold` step that turns its
# file into what tprofd prints (folded stacks), since that is the work a person needs done.
#
# Usage: contrib/bench-sampler.sh [BUILD_DIR]   (as root; SECONDS=20 BURNERS=N FREQS="97 997")

set -eu

BUILD=${1:-build}
SECS=${SECONDS_TO_SAMPLE:-${SECS:-20}}
FREQS=${FREQS:-"97 997"}
NCPU=$(nproc)
BURNERS=${BURNERS:-$NCPU}
TPROFD=$BUILD/src/tprofd/tprofd
BURN=$BUILD/tests/burn

[ "$(id -u)" = 0 ] || { echo "bench-sampler: needs root" >&2; exit 1; }
[ -x "$TPROFD" ] && [ -x "$BURN" ] || { echo "bench-sampler: build first (ninja -C $BUILD)" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench-sampler: perf not installed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-sampler: /usr/bin/time not installed" >&2; exit 1; }

TMP=$(mktemp -d /tmp/tprof-bench.XXXXXX)
BURN_PIDS=()
cleanup() {
        local p
        for p in "${BURN_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
        rm -rf "$TMP"
}
trap cleanup EXIT

start_load() {
        local i
        BURN_PIDS=()
        for ((i = 0; i < BURNERS; i++)); do
                "$BURN" $((SECS + 5)) &
                BURN_PIDS+=($!)
        done
        sleep 0.5
}

stop_load() {
        local p
        for p in "${BURN_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
        wait 2>/dev/null || true
        BURN_PIDS=()
}

# Folds `perf script` output as stackcollapse-perf.pl does in its default mode: comm, then the
# frames root first, "[unknown]" symbols named after their DSO's basename.
FOLD_AWK='
/^[^ \t]/ { comm = $1; n = 0; next }
/^[ \t]+[0-9a-f]+ / {
        sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym)
        if (sym == "[unknown]") { dso = $NF; gsub(/[()]/, "", dso); sub(/.*\//, "", dso); sym = "[" dso "]" }
        f[n++] = sym; next
}
/^$/ { if (comm != "") { s = comm; for (i = n - 1; i >= 0; i--) s = s ";" f[i]; c[s]++ } comm = ""; n = 0 }
END { for (s in c) print s, c[s] }'

# time_fields FILE -> "cpu_seconds max_rss_kib"
time_fields() {
        awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$1"
}

printf "%-28s %9s %12s %10s %10s %9s\n" "profiler" "CPU s" "CPU s/s" "samples" "expected" "RSS MiB"
row() { # name cpu secs samples expected rss_kib
        printf "%-28s %9.2f %12.4f %10d %10d %9.1f\n" "$1" "$2" "$(echo "$2 / $3" | bc -l)" "$4" "$5" "$(echo "$6 / 1024" | bc -l)"
}

for F in $FREQS; do
        EXPECTED=$((F * NCPU * SECS))

        # tprofd --once
        start_load
        /usr/bin/time -f "%U %S %M" -o "$TMP/t.time" "$TPROFD" --once "$SECS" --freq "$F" >"$TMP/t.folded" 2>"$TMP/t.err"
        stop_load
        read -r tcpu trss < <(time_fields <(tail -1 "$TMP/t.time"))
        tsamples=$(sed -n 's/.*folded (\([0-9]*\) read.*/\1/p' "$TMP/t.err")
        row "tprofd --once -F $F" "$tcpu" "$SECS" "${tsamples:-0}" "$EXPECTED" "$trss"

        # perf record
        start_load
        /usr/bin/time -f "%U %S %M" -o "$TMP/p.time" perf record -q -F "$F" -g -a -o "$TMP/perf.data" -- sleep "$SECS" 2>"$TMP/p.err" >/dev/null
        stop_load
        read -r pcpu prss < <(time_fields <(tail -1 "$TMP/p.time"))
        /usr/bin/time -f "%U %S %M" -o "$TMP/s.time" sh -c "perf script -i '$TMP/perf.data' 2>/dev/null | awk '$FOLD_AWK' >'$TMP/p.folded'"
        read -r scpu srss < <(time_fields <(tail -1 "$TMP/s.time"))
        psamples=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/p.folded")
        row "perf record -F $F -g -a" "$pcpu" "$SECS" "$psamples" "$EXPECTED" "$prss"
        row "  + perf script | fold" "$(echo "$pcpu + $scpu" | bc -l)" "$SECS" "$psamples" "$EXPECTED" "$(( prss > srss ? prss : srss ))"
        echo "  perf.data: $(du -k "$TMP/perf.data" | cut -f1) KiB; tprofd lost: $(sed -n 's/.*lost: \([0-9]*\).*/\1/p' "$TMP/t.err")"
        rm -f "$TMP/perf.data"
done
echo "($BURNERS burners on $NCPU CPUs, $SECS s each run; CPU s = user + system of the profiler process tree)"
