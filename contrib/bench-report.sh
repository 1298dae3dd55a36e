#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Benchmarks report.html: its size and how fast it opens in headless Chromium.
#   1. tprofd samples a mixed load (a CPU burner, and a shell loop that keeps starting find, head
#      and gzip) at 97 Hz on this machine's CPUs for SLICE+5 seconds; `tprof-bundle report` of the
#      last SLICE seconds (70 by default): bytes, samples, bytes per sample. Goal: under 1 MiB on
#      2 CPUs.
#   2. The same at 4850 Hz, the sample rate of a 100-CPU host at 97 Hz, for FAST seconds (25):
#      bytes per sample of the report of the whole recording. Goal: at most 8.
#   3. From that ring, a report holding about 100,000 samples, opened in headless Chromium with
#      tests/helpers/report-browser.py --bench: when the heatmap is drawn (performance.now(), from
#      navigation start) and how long a selection of everything takes to redraw. Goals: under 1 s and
#      under 200 ms. Each report's cell counts are checked against `export --format perf-script` of
#      the same range on the way.
# The machine's load from anything else shows in the timings: run it on a quiet machine.
#
# Usage: [BENCH_KEEP=1] contrib/bench-report.sh [BUILD_DIR] [SLICE_SECONDS] [FAST_SECONDS]
# (root; chromium, chromium-driver and python3-selenium for step 3; BENCH_KEEP keeps the reports)
set -eu

BUILD=$(realpath "${1:-build}")
SLICE=${2:-70}
FAST=${3:-25}
SRC=$(dirname "$(realpath "$0")")/..
TPROFD="$BUILD/src/tprofd/tprofd"
BUNDLE="$BUILD/src/tprof-bundle/tprof-bundle"
BURN="$BUILD/tests/burn"
CHECK="$SRC/tests/helpers/report-browser.py"
[ "$(id -u)" = 0 ] || { echo "bench-report: needs root" >&2; exit 1; }
[ -x "$TPROFD" ] && [ -x "$BUNDLE" ] && [ -x "$BURN" ] || { echo "build first: ninja -C $BUILD" >&2; exit 1; }
PY=
for p in /usr/bin/python3 python3; do
        if "$p" -c 'import selenium' 2>/dev/null; then PY=$p; break; fi
done

W=$(mktemp -d /tmp/bench-report.XXXXXX)
PIDS=()
cleanup() {
        local p
        for p in "${PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
        for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
        if [ -n "${BENCH_KEEP:-}" ]; then echo "kept: $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT

start_load() {
        setsid "$BURN" 100000 >/dev/null 2>&1 &
        PIDS+=($!)
        setsid bash -c 'while :; do find /usr/share/doc -name "*.gz" 2>/dev/null | head -50 | xargs cat 2>/dev/null | gzip >/dev/null; sleep 0.2; done' &
        PIDS+=($!)
}

# record FREQ SECONDS DIR: tprofd on DIR for SECONDS at FREQ, then stopped.
record() {
        "$TPROFD" --state-dir "$3" --freq "$1" --window 60 --control-socket "" --rules "$W/rules.yaml" \
                >"$3.log" 2>&1 &
        local pid=$!
        sleep "$2"
        kill -TERM "$pid"
        wait "$pid" || { echo "tprofd failed: $(tail -5 "$3.log")" >&2; exit 1; }
}

utc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

# report_of DIR FROM TO NAME: the report and the perf-script export of a range; prints a table row.
report_of() {
        "$BUNDLE" -D "$1" report --from "$(utc "$2")" --to "$(utc "$3")" -o "$W/$4.html"
        "$BUNDLE" -D "$1" export --from "$(utc "$2")" --to "$(utc "$3")" --format perf-script -o "$W/$4.perf-script"
        local bytes samples
        bytes=$(stat -c %s "$W/$4.html")
        samples=$(grep -c '^[^[:space:]#]' "$W/$4.perf-script")
        awk -v n="$4" -v s="$samples" -v b="$bytes" \
                'BEGIN { printf "%-34s %9d samples %10d bytes (%.2f MiB) %6.2f bytes/sample\n", n, s, b, b / 1048576, b / s }'
}

printf 'rules:\n  - name: never\n    source: kernel\n    match: "^tprof-bench-report-never-matches$"\n' >"$W/rules.yaml"
echo "bench-report: $(nproc) CPUs, load: burn + find|head|gzip loop"
start_load

T0=$(date +%s)
record 97 $((SLICE + 5)) "$W/slow"
T1=$(date +%s)
report_of "$W/slow" $((T1 - SLICE - 3)) $((T1 - 3)) "97Hz-${SLICE}s"

T0=$(date +%s)
record 4850 $((FAST + 3)) "$W/fast"
T1=$(date +%s)
report_of "$W/fast" $((T0 + 2)) $((T1 - 1)) "4850Hz-$((T1 - T0 - 3))s"
# about 100,000 samples: seconds = 100000 / (4850 * CPUs)
SPAN=$(( (100000 + 4850 * $(nproc) - 1) / (4850 * $(nproc)) ))
report_of "$W/fast" $((T0 + 2)) $((T0 + 2 + SPAN)) "4850Hz-${SPAN}s-for-the-browser"

# The load stops before the browser opens: it would only slow the page down.
for p in "${PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
PIDS=()
if [ -z "$PY" ] || [ ! -x /usr/bin/chromium ]; then
        echo "no chromium/python3-selenium: browser timings skipped"
        exit 0
fi
echo "load average before the browser runs: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in 1 2 3; do
        "$PY" "$CHECK" "$W/4850Hz-${SPAN}s-for-the-browser.html" "$W/4850Hz-${SPAN}s-for-the-browser.perf-script" "$W" --bench |
                sed "s/^/browser run $i: /"
done
