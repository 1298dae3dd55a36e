#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Two builds of tprofd side by side on one load: what a change to the sample path costs or saves.
# Both daemons (each with a private state directory, no rules, no control socket) sample the same
# CPUs over the same seconds, so they share the machine's noise; their CPU is read from
# /proc/PID/task/*/schedstat (nanoseconds, not the 10 ms ticks of /proc/PID/stat, which at 97 Hz
# hide most of the difference). The load is bench-store's mixed load: a shell loop, a file-system
# walk and a compressor, the last two restarted over and over (Debian binaries without frame
# pointers; new processes keep appearing).
#
# Usage: contrib/bench-ab.sh BUILD_A BUILD_B   (root; e.g. a build of main and one of a branch)
#        FREQ=97 WARM=10 (seconds before the measurement) SECS=60 ARGS="--unwind auto" (to both)
#        LOAD=mixed (or steady: long-lived processes, stable stacks; partial: CPUs busy a third of
#        the time; see bench-lib.sh)
#        ARGS_A, ARGS_B: options to one of the two only; with the same build twice, what an
#        option costs (ARGS_A="--unwind fp" ARGS_B="--unwind auto": frame pointers against CFI)
# Prints, per build: CPU seconds at the end of the warm-up (start-up included), CPU seconds per
# sampled second after it, and microseconds per sample. Run it twice with the builds swapped:
# the order they start in should not matter, and the difference between the two runs is the noise.
set -eu

[ $# -eq 2 ] || { echo "usage: contrib/bench-ab.sh BUILD_A BUILD_B" >&2; exit 64; }
FREQ=${FREQ:-97}
WARM=${WARM:-10}
SECS=${SECS:-60}
ARGS=${ARGS:-}
LOAD=${LOAD:-mixed}
BUILDS=("$1" "$2")
EXTRA=("${ARGS_A:-}" "${ARGS_B:-}")

[ "$(id -u)" = 0 ] || { echo "bench-ab: needs root" >&2; exit 1; }
for b in "${BUILDS[@]}"; do
        [ -x "$b/src/tprofd/tprofd" ] || { echo "bench-ab: no $b/src/tprofd/tprofd (ninja -C $b)" >&2; exit 1; }
done

# shellcheck source=contrib/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

W=$(mktemp -d /tmp/bench-ab.XXXXXX)
PIDS=()
cleanup() {
        local p
        for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
        stop_load
        rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT

printf '%s\n' "rules:" >"$W/rules.yaml"
: >"$W/kmsg"
: >"$W/tprofd.yaml"

start_load "$LOAD"

for i in 0 1; do
        # shellcheck disable=SC2086 # ARGS and EXTRA are lists of options
        env -u NOTIFY_SOCKET -u JOURNAL_STREAM "${BUILDS[$i]}/src/tprofd/tprofd" --config "$W/tprofd.yaml" \
                --rules "$W/rules.yaml" --kmsg "$W/kmsg" --control-socket "" --state-dir "$W/state-$i" \
                --freq "$FREQ" $ARGS ${EXTRA[$i]} >"$W/tprofd-$i.log" 2>&1 &
        PIDS+=($!)
done
sleep "$WARM"
W0=("$(cpu_ns "${PIDS[0]}")" "$(cpu_ns "${PIDS[1]}")")
sleep "$SECS"
W1=("$(cpu_ns "${PIDS[0]}")" "$(cpu_ns "${PIDS[1]}")")
for i in 0 1; do
        kill -0 "${PIDS[$i]}" 2>/dev/null || { echo "bench-ab: tprofd of ${BUILDS[$i]} stopped:" >&2; tail "$W/tprofd-$i.log" >&2; exit 1; }
done

echo "== ${FREQ} Hz on $(nproc) CPUs, ${SECS} s after ${WARM} s, $LOAD load =="
printf '%-40s %12s %12s %12s\n' "build" "CPU s warm" "CPU s/s" "us/sample"
for i in 0 1; do
        awk -v n="${BUILDS[$i]}${EXTRA[$i]:+ ${EXTRA[$i]}}" -v w0="${W0[$i]}" -v w1="${W1[$i]}" -v s="$SECS" -v f="$FREQ" -v c="$(nproc)" 'BEGIN {
                d = (w1 - w0) / 1e9
                printf "%-40s %12.4f %12.6f %12.2f\n", n, w0 / 1e9, d / s, d * 1e6 / (s * f * c) }'
done
echo "(us/sample: over the samples the rate asks for, ${FREQ} Hz on every CPU)"
