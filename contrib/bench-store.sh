#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Benchmarks the ring against perf's own files, on one load recorded three ways at once:
#   - bytes per sample: `perf record -g -a`, `perf record -z -g -a`, and a tprof ring written from
#     the same samples (perf script of the plain recording, imported by store-tool; the daemon
#     wiring does not exist yet, so this is how real samples reach the writer);
#   - CPU cost of writing: CPU seconds spent in the ring writer per sampled second;
#   - a 10-second cut from a synthetic 12-hour ring: time, and how many chunks were read or skipped.
#
# Usage: [BENCH_LOAD=mixed|none] contrib/bench-store.sh [BUILD_DIR] [SECONDS] [HOURS]
# (root; perf installed)
# Only the cpu-clock event is used, so it runs in VMs without hardware counters.
set -eu

BUILD=$(realpath "${1:-build}")
SECS=${2:-20}
HOURS=${3:-12}
TOOL="$BUILD/tests/store-tool"
BUNDLE="$BUILD/src/tprof-bundle/tprof-bundle"
[ -x "$TOOL" ] && [ -x "$BUNDLE" ] || { echo "build first: ninja -C $BUILD" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }

W=$(mktemp -d /tmp/bench-store.XXXXXX)
LOAD_PIDS=()
cleanup() {
        for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
        rm -rf "$W"
}
trap cleanup EXIT

# The load (BENCH_LOAD): "mixed" (default) runs one CPU-bound shell loop, a file-system walk
# (kernel stacks) and a compressor (library stacks), so the profile is neither all idle nor one
# stack; "none" records the machine as it is.
if [ "${BENCH_LOAD:-mixed}" = mixed ]; then
        ( while :; do :; done ) & LOAD_PIDS+=($!)
        ( while :; do find /usr/lib -name '*.so*' -newer /etc/hostname >/dev/null 2>&1; done ) & LOAD_PIDS+=($!)
        ( while :; do head -c 50M /dev/urandom | gzip -1 >/dev/null; done ) & LOAD_PIDS+=($!)
        sleep 1
fi

echo "Recording ${SECS}s of cpu-clock at 97 Hz on all CPUs, twice at once (plain and -z)..."
perf record -q -e cpu-clock -F 97 -g -a -o "$W/plain.data" -- sleep "$SECS" 2>"$W/plain.log" &
P1=$!
perf record -q -e cpu-clock -F 97 -g -a -z -o "$W/z.data" -- sleep "$SECS" 2>"$W/z.log" &
P2=$!
wait $P1 $P2
for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
LOAD_PIDS=()

count() { perf script -i "$1" -F time 2>/dev/null | grep -c . ; }
n_plain=$(count "$W/plain.data")
n_z=$(count "$W/z.data")
b_plain=$(stat -c %s "$W/plain.data")
b_z=$(stat -c %s "$W/z.data")

perf script -i "$W/plain.data" -F comm,pid,tid,cpu,time,period,event,ip,sym,symoff,dso --ns \
        >"$W/plain.script" 2>/dev/null
"$TOOL" import "$W/ring" 120 <"$W/plain.script" >"$W/import.out"
n_ring=$(awk '/^samples/ { print $2 }' "$W/import.out")
span=$(awk '/^span_s/ { print $2 }' "$W/import.out")
cpu=$(awk '/^ring_cpu_s/ { print $2 }' "$W/import.out")
b_ring=$(cat "$W"/ring/*.tpw | wc -c)

awk -v np="$n_plain" -v bp="$b_plain" -v nz="$n_z" -v bz="$b_z" -v nr="$n_ring" -v br="$b_ring" \
    -v span="$span" -v cpu="$cpu" -v ncpu="$(nproc)" 'BEGIN {
        pp = bp / np; pz = bz / nz; pr = br / nr;
        printf "\n%-26s %10s %12s %14s\n", "", "samples", "bytes", "bytes/sample";
        printf "%-26s %10d %12d %14.1f\n", "perf record -g -a", np, bp, pp;
        printf "%-26s %10d %12d %14.1f\n", "perf record -z -g -a", nz, bz, pz;
        printf "%-26s %10d %12d %14.2f\n", "tprof ring (120 s windows)", nr, br, pr;
        printf "\nring vs plain perf: %.0fx smaller (goal >= 40x)\n", pp / pr;
        printf "ring vs perf -z:    %.1fx smaller (goal >= 10x)\n", pz / pr;
        printf "\nwriter CPU: %.4f s for %.1f s of samples on %d CPUs = %.5f CPU-s per sampled second (%.3f%% of one CPU)\n",
               cpu, span, ncpu, cpu / span, 100 * cpu / span;
}'

echo
echo "Writing a synthetic ${HOURS}-hour ring (2 CPUs, 97 Hz, 120 s windows)..."
start=$(date +%s.%N)
"$TOOL" synth "$W/ring12" "$HOURS" 2 97 120 >"$W/synth.out"
end=$(date +%s.%N)
n12=$(awk '/^samples/ { print $2 }' "$W/synth.out")
c12=$(awk '/^ring_cpu_s/ { print $2 }' "$W/synth.out")
b12=$(cat "$W"/ring12/*.tpw | wc -c)
files=$(ls "$W"/ring12/*.tpw | wc -l)
awk -v n="$n12" -v b="$b12" -v c="$c12" -v f="$files" -v h="$HOURS" -v wall="$(echo "$end - $start" | bc)" 'BEGIN {
        printf "%d samples in %d windows, %.1f MB, %.2f bytes/sample; writer %.2f CPU-s for %g h of samples (%.1f s wall)\n",
               n, f, b / 1048576, b / n, c, h, wall;
}'

# A 10-second cut from the middle of the ring, cold and warm page cache aside: both the store
# reader directly (chunk statistics) and the CLI end to end.
mid=$(( $(date +%s) - HOURS * 1800 ))
echo
echo "10 s slice from the middle of the ${HOURS}-hour ring:"
"$TOOL" slice "$W/ring12" "$mid" 10 | sed 's/^/  /'
start=$(date +%s.%N)
"$BUNDLE" export --ring "$W/ring12" --from "@$mid" --to "@$((mid + 10))" --format perf-script -o "$W/slice.script"
end=$(date +%s.%N)
echo "  tprof-bundle export --format perf-script: $(echo "$end - $start" | bc) s wall, $(grep -c 'cpu-clock:$' "$W/slice.script") samples"
start=$(date +%s.%N)
"$BUNDLE" export --ring "$W/ring12" --from "@$((mid - 3600))" --to "@$mid" -o "$W/hour.folded"
end=$(date +%s.%N)
echo "  (for scale) a 1-hour folded export: $(echo "$end - $start" | bc) s wall"
