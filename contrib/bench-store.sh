#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Benchmarks the ring tprofd writes against perf's own files. For each load, four recorders sample
# the same seconds at once: `perf record -e cpu-clock -F 97 -g -a`, the same with -z, and tprofd
# itself twice (97 Hz, 120 s windows, private state directories under the work directory): on its
# default compact detail (functions, 1 ms) and with --detail exact (instruction addresses, 1 us,
# what perf keeps). One table per load gives:
#   - samples, bytes and bytes per sample of each recorder, and how much smaller the ring is;
#   - CPU seconds and peak RSS of each recorder while it recorded (from /proc, read just before the
#     recorders are stopped, so perf's build-id pass at exit is not counted);
#   - the writer alone: CPU seconds the ring writer spends per sampled second, measured by importing
#     the plain recording's perf script with store-tool (tprofd's figure above also holds sampling
#     and symbolizing).
# Then, once: a 10-second cut from a synthetic 12-hour ring (time, chunks read or skipped).
#
# tprofd's windows end on multiples of 120 s of wall-clock time. Unless the current window has room
# for the whole recording, it starts on the next boundary and stops half a second short of SECONDS,
# so a 120 s recording is one whole window, as the daemon writes them all day. The next load then
# waits most of a window for its boundary: BENCH_LOAD=all with 120 s takes about 12 minutes.
#
# Usage: [BENCH_LOAD=mixed|steady|none|all] [BENCH_KEEP=1] contrib/bench-store.sh [BUILD_DIR] [SECONDS] [HOURS]
# (root; perf installed; 120 seconds per load and a 12-hour synthetic ring unless told otherwise)
# Only the cpu-clock event is used, so it runs in VMs without hardware counters.
set -eu

BUILD=$(realpath "${1:-build}")
SECS=${2:-120}
HOURS=${3:-12}
LOADS=${BENCH_LOAD:-mixed}
WINDOW=120
FREQ=97
TOOL="$BUILD/tests/store-tool"
TPROFD="$BUILD/src/tprofd/tprofd"
BUNDLE="$BUILD/src/tprof-bundle/tprof-bundle"
[ "$(id -u)" = 0 ] || { echo "bench-store: needs root" >&2; exit 1; }
[ -x "$TOOL" ] && [ -x "$TPROFD" ] && [ -x "$BUNDLE" ] || { echo "build first: ninja -C $BUILD" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }
[ "$LOADS" = all ] && LOADS="mixed steady none"
for load in $LOADS; do
        case $load in
        mixed|steady|none) ;;
        *) echo "BENCH_LOAD must be mixed, steady, none or all, not '$load'" >&2; exit 1 ;;
        esac
done

# shellcheck source=contrib/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

W=$(mktemp -d /tmp/bench-store.XXXXXX)
RECORDER_PIDS=()
TPROFD_PIDS=()
SLEEP_PID=
cleanup() {
        local p
        [ -z "$SLEEP_PID" ] || kill "$SLEEP_PID" 2>/dev/null || true
        stop_load
        for p in "${RECORDER_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        for p in "${TPROFD_PIDS[@]}"; do
                kill -TERM "$p" 2>/dev/null || true
                wait "$p" 2>/dev/null || true
        done
        for p in "${RECORDER_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
        if [ -n "${BENCH_KEEP:-}" ]; then
                echo "bench-store: recordings kept in $W" >&2
        else
                rm -rf "$W"
        fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# The loads (BENCH_LOAD): see start_load in bench-lib.sh.

# proc_cost PID: "CPU-seconds peak-RSS-KiB" of a running process, from /proc.
proc_cost() {
        local cpu rss
        cpu=$(cpu_ticks_s "$1")
        rss=$(awk '/^VmHWM:/ { print $2 }' "/proc/$1/status")
        echo "$cpu $rss"
}

now() { date +%s.%N; }
# sleep_until EPOCH-SECONDS (fractions allowed). The sleep runs in the background so that a signal
# to the script is handled at once rather than when the sleep ends.
sleep_until() {
        local d
        d=$(echo "$1 - $(now)" | bc)
        case $d in
        -*|0) ;;
        *) sleep "$d" & SLEEP_PID=$!; wait "$SLEEP_PID"; SLEEP_PID= ;;
        esac
}

# bench_load LOAD: records LOAD with the three recorders and prints its table.
bench_load() {
        local load=$1 D="$W/$1" t0 left start stop p p1 p2 c_plain c_z c_tprofd span
        mkdir -p "$D"
        echo
        echo "=== BENCH_LOAD=$load ==="
        start_load "$load"

        t0=$(now)
        left=$(awk -v n="$t0" -v w="$WINDOW" 'BEGIN { printf "%.3f", (int(n / w) + 1) * w - n }')
        if [ "$(echo "$left >= $SECS + 2" | bc)" = 1 ]; then
                stop=$(echo "$t0 + $SECS" | bc)
        else
                echo "Waiting ${left}s for the next ${WINDOW} s window boundary, so the ring holds whole" \
                     "windows..."
                start=$(echo "$t0 + $left" | bc)
                sleep_until "$start"
                stop=$(echo "$start + $SECS - 0.5" | bc)
        fi

        echo "Recording ${SECS}s of cpu-clock at $FREQ Hz on all CPUs four ways at once" \
             "(perf, perf -z, tprofd on its default compact detail, tprofd --detail exact)..."
        start=$(now)
        local detail
        for detail in compact exact; do
                env -u NOTIFY_SOCKET -u JOURNAL_STREAM "$TPROFD" --config "$W/tprofd.yaml" \
                        --rules "$W/rules.yaml" --kmsg "$W/kmsg" --control-socket "$D/$detail.sock" \
                        --state-dir "$D/$detail" --window "$WINDOW" --freq "$FREQ" --detail "$detail" \
                        >"$D/tprofd-$detail.log" 2>&1 &
                TPROFD_PIDS+=($!)
        done
        perf record -q -e cpu-clock -F "$FREQ" -g -a -o "$D/plain.data" 2>"$D/plain.log" &
        p1=$!
        perf record -q -e cpu-clock -F "$FREQ" -g -a -z -o "$D/z.data" 2>"$D/z.log" &
        p2=$!
        RECORDER_PIDS=("$p1" "$p2")

        sleep_until "$stop"
        for p in "${TPROFD_PIDS[@]}" "$p1" "$p2"; do
                if ! kill -0 "$p" 2>/dev/null; then
                        echo "a recorder exited early; logs:" >&2
                        tail -n 20 "$D"/tprofd-*.log "$D/plain.log" "$D/z.log" >&2
                        exit 1
                fi
        done
        c_plain=$(proc_cost "$p1")
        c_z=$(proc_cost "$p2")
        c_tprofd=$(proc_cost "${TPROFD_PIDS[0]}")
        c_exact=$(proc_cost "${TPROFD_PIDS[1]}")
        # perf stops on SIGTERM too, finishes its file and then dies of the signal again.
        kill -TERM "${TPROFD_PIDS[@]}" "$p1" "$p2"
        span=$(echo "$(now) - $start" | bc)
        for p in "${TPROFD_PIDS[@]}"; do
                if ! wait "$p"; then
                        echo "tprofd did not exit cleanly after SIGTERM:" >&2
                        tail -n 20 "$D"/tprofd-*.log >&2
                        exit 1
                fi
        done
        TPROFD_PIDS=()
        wait "$p1" 2>/dev/null || true
        wait "$p2" 2>/dev/null || true
        RECORDER_PIDS=()
        stop_load

        local n_plain n_z b_plain b_z n_ring b_ring n_exact b_exact wins lost
        count() { perf script -i "$1" -F time 2>/dev/null | grep -c . ; }
        n_plain=$(count "$D/plain.data")
        n_z=$(count "$D/z.data")
        b_plain=$(stat -c %s "$D/plain.data")
        b_z=$(stat -c %s "$D/z.data")

        for detail in compact exact; do
                if ls "$D/$detail"/ring/*.partial >/dev/null 2>&1; then
                        echo "tprofd left an open window behind after SIGTERM:" >&2
                        ls -l "$D/$detail/ring" >&2
                        exit 1
                fi
                # Every sample the ring holds, read back through the CLI.
                "$BUNDLE" export --state-dir "$D/$detail" --from "@$(( ${start%.*} - WINDOW ))" \
                        --to "@$(( ${stop%.*} + WINDOW ))" --format perf-script -o "$D/$detail.script" || true
        done
        b_ring=$(cat "$D"/compact/ring/*.tpw | wc -c)
        n_ring=$(grep -c 'cpu-clock:$' "$D/compact.script" || true)
        b_exact=$(cat "$D"/exact/ring/*.tpw | wc -c)
        n_exact=$(grep -c 'cpu-clock:$' "$D/exact.script" || true)
        # The last line of `windows` is "N windows, N samples, N lost, SIZE."
        "$BUNDLE" windows --state-dir "$D/compact" >"$D/windows.out"
        wins=$(sed -n 's/^\([0-9]*\) windows\{0,1\}, .*/\1/p' "$D/windows.out")
        lost=$(sed -n 's/^[0-9]* windows\{0,1\}, [0-9]* samples\{0,1\}, \([0-9]*\) lost.*/\1/p' \
                "$D/windows.out")

        # The writer alone, on the plain recording's samples.
        local span_i cpu_i
        perf script -i "$D/plain.data" -F comm,pid,tid,cpu,time,period,event,ip,sym,symoff,dso --ns \
                >"$D/plain.script" 2>/dev/null
        "$TOOL" import "$D/import-ring" "$WINDOW" <"$D/plain.script" >"$D/import.out"
        span_i=$(awk '/^span_s/ { print $2 }' "$D/import.out")
        cpu_i=$(awk '/^ring_cpu_s/ { print $2 }' "$D/import.out")

        awk -v np="$n_plain" -v bp="$b_plain" -v nz="$n_z" -v bz="$b_z" -v nr="$n_ring" -v br="$b_ring" \
            -v cp="${c_plain% *}" -v rp="${c_plain#* }" -v cz="${c_z% *}" -v rz="${c_z#* }" \
            -v ct="${c_tprofd% *}" -v rt="${c_tprofd#* }" -v ne="$n_exact" -v be="$b_exact" \
            -v ce="${c_exact% *}" -v re="${c_exact#* }" -v span="$span" -v wins="$wins" -v lost="$lost" \
            -v load="$load" -v win="$WINDOW" -v spani="$span_i" -v cpui="$cpu_i" -v ncpu="$(nproc)" 'BEGIN {
                pp = bp / np; pz = bz / nz; pr = br / nr; pe = be / ne;
                printf "\nBENCH_LOAD=%s, %.1f s recorded on %d CPUs:\n", load, span, ncpu;
                f = "%-28s %9d %11d %13.2f %8.2f %13.1f\n";
                printf "%-28s %9s %11s %13s %8s %13s\n", "", "samples", "bytes", "bytes/sample", "CPU s",
                       "peak RSS MiB";
                printf f, "perf record -g -a", np, bp, pp, cp, rp / 1024;
                printf f, "perf record -z -g -a", nz, bz, pz, cz, rz / 1024;
                printf f, "tprofd ring, compact", nr, br, pr, ct, rt / 1024;
                printf f, "tprofd ring, --detail exact", ne, be, pe, ce, re / 1024;
                printf "\n%-28s %12s %12s\n", "", "vs perf", "vs perf -z";
                printf "%-28s %11.1fx %11.1fx   (goals: 40x, 10x)\n", "compact (default)", pp / pr, pz / pr;
                printf "%-28s %11.1fx %11.1fx\n", "exact", pp / pe, pz / pe;
                printf "\ntprofd (compact) wrote %s window(s) of %d s, lost %s samples. CPU s and peak RSS:\n", wins, win, lost;
                printf "each ";
                printf "recorder until SIGTERM, so perf'"'"'s build-id pass at exit is not counted.\n";
                printf "Writer alone (store-tool import of the plain recording): %.4f CPU-s for %.1f s\n",
                       cpui, spani;
                printf "of samples = %.5f CPU-s per sampled second (%.3f%% of one CPU)\n",
                       cpui / spani, 100 * cpui / spani;
        }'
}

: >"$W/tprofd.yaml"     # no /etc/tprof/tprofd.yaml: defaults and the options given
: >"$W/rules.yaml"      # no rules: no incidents, and the journal is not followed
: >"$W/kmsg"            # an empty recorded kernel log instead of /dev/kmsg

for load in $LOADS; do
        bench_load "$load"
done

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
