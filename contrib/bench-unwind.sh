#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# What whole user stacks cost. On one load of programs built without frame pointers (Debian's
# bash, find and gzip: the mixed load of bench-store.sh), four recorders sample every CPU over the
# same seconds, at once:
#   - tprofd (the daemon, its ring in a private state directory) with --unwind auto: stack copies
#     unwound at capture by the call frame information, only frames kept;
#   - tprofd with --unwind fp beside it: the same daemon without stack copies, so that the cost of
#     the call-frame walk stands apart from the daemon's other work per sample (reading the ring,
#     symbols, the window writer);
#   - perf record -g -a: frame pointers, the kernel's walk (cheap, and cut in such programs);
#   - perf record --call-graph dwarf -a: 8 KiB stack copies in the file, unwound by perf script
#     later (shown alone, and with perf script and folding, the work a person needs done).
# For each: CPU seconds per sampled second, CPU microseconds per sample, samples, lost, and bytes
# per sample on disk. Run as root on an otherwise quiet machine; a shared one makes the figures
# noisy, and the recorders run at once so that they at least share the same noise.
#
# Two views of CPU: the whole run (start-up included: kallsyms, the /proc scan, the first load
# of every program's symbols and unwind tables for tprofd; synthesizing the running processes
# for perf), read from /proc/PID/stat in 10 ms ticks; and the steady state after WARM seconds,
# which is what a recorder that runs for hours costs, read from the scheduler's nanosecond
# counters (at 97 Hz a minute of perf record -g is a tick or two). Bytes per sample of tprofd's
# ring are given for the whole run and, when the run holds one, for the complete windows only (a
# window's tables are paid once per window, so a run shorter than a window overstates them): SECS
# of two windows and more (250 at the default WINDOW of 120 s) give at least one.
#
# Usage: contrib/bench-unwind.sh [BUILD_DIR]
#        FREQS="97 4850" SECS=60 (per frequency; SECS_HIGH=5 for frequencies above 1000 Hz)
#        WARM=20 (seconds before the steady-state measurement starts; WARM_HIGH=2 above 1000 Hz)
#        WINDOW=120 (tprofd's --window)
#        LOAD=mixed (or steady: long-lived processes, stable stacks; partial: CPUs busy a third of
#        the time; see bench-lib.sh)
#        BENCH_KEEP=1 keeps the recordings.
set -eu

BUILD=${1:-build}
FREQS=${FREQS:-"97 4850"}
SECS=${SECS:-60}
SECS_HIGH=${SECS_HIGH:-5}
WARM=${WARM:-20}
WARM_HIGH=${WARM_HIGH:-2}
WINDOW=${WINDOW:-120}
LOAD=${LOAD:-mixed}
TPROFD="$BUILD/src/tprofd/tprofd"
BUNDLE="$BUILD/src/tprof-bundle/tprof-bundle"
NCPU=$(nproc)

[ "$(id -u)" = 0 ] || { echo "bench-unwind: needs root" >&2; exit 1; }
[ -x "$TPROFD" ] && [ -x "$BUNDLE" ] || { echo "bench-unwind: build first (ninja -C $BUILD)" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench-unwind: perf not installed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-unwind: /usr/bin/time not installed" >&2; exit 1; }

# shellcheck source=contrib/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

W=$(mktemp -d /tmp/bench-unwind.XXXXXX)
PIDS=()
cleanup() {
        local p
        stop_load
        for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
        if [ -n "${BENCH_KEEP:-}" ]; then echo "bench-unwind: kept $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT

printf '%s\n' "rules:" >"$W/rules.yaml"
: >"$W/kmsg"
: >"$W/tprofd.yaml"

# row NAME CPU_S SECS SAMPLES LOST BYTES [STEADY_NS STEADY_SECS]: one recorder's line. The steady
# microseconds per sample are over the samples the rate asks for in those seconds (F on every CPU).
row() {
        awk -v n="$1" -v c="$2" -v s="$3" -v k="$4" -v l="$5" -v b="$6" -v sn="${7:-}" -v ss="${8:-}" \
                -v f="$F" -v ncpu="$NCPU" 'BEGIN {
                us = 0; bs = "-"; st = "-"; su = "-"
                if (k > 0) { us = c * 1e6 / k; bs = sprintf("%.2f", b / k) }
                if (sn != "" && ss > 0) {
                        st = sprintf("%.6f", sn / 1e9 / ss)
                        su = sprintf("%.2f", sn / 1e3 / (ss * f * ncpu))
                }
                printf "%-32s %7.2f %8.4f %9.1f %8d %6s %8s %11s %9s\n", n, c, c / s, us, k, l, bs, st, su }'
}

for F in $FREQS; do
        S=$SECS
        WM=$WARM
        [ "$F" -le 1000 ] || { S=$SECS_HIGH; WM=$WARM_HIGH; }
        [ "$WM" -lt "$S" ] || WM=0
        D="$W/$F"
        mkdir -p "$D"
        start_load "$LOAD"

        start_tprofd() { # MODE DIR
                env -u NOTIFY_SOCKET -u JOURNAL_STREAM "$TPROFD" --config "$W/tprofd.yaml" --rules "$W/rules.yaml" \
                        --kmsg "$W/kmsg" --control-socket "" --state-dir "$2/state" --freq "$F" --unwind "$1" \
                        --window "$WINDOW" >"$2/tprofd.log" 2>&1 &
        }
        mkdir -p "$D/fp-tprofd"
        start_tprofd auto "$D"
        tp=$!
        start_tprofd fp "$D/fp-tprofd"
        tf=$!
        perf record -q -F "$F" -g -a -o "$D/fp.data" 2>"$D/fp.log" &
        fp=$!
        perf record -q -F "$F" --call-graph dwarf -a -o "$D/dwarf.data" 2>"$D/dwarf.log" &
        dw=$!
        PIDS=("$tp" "$tf" "$fp" "$dw")
        sleep "$WM"
        w_tp=$(cpu_ns "$tp")
        w_tf=$(cpu_ns "$tf")
        w_fp=$(cpu_ns "$fp")
        w_dw=$(cpu_ns "$dw")
        sleep $((S - WM))
        e_tp=$(cpu_ns "$tp")
        e_tf=$(cpu_ns "$tf")
        e_fp=$(cpu_ns "$fp")
        e_dw=$(cpu_ns "$dw")
        c_tp=$(cpu_ticks_s "$tp")
        c_tf=$(cpu_ticks_s "$tf")
        c_fp=$(cpu_ticks_s "$fp")
        c_dw=$(cpu_ticks_s "$dw")
        kill -TERM "$tp" "$tf" "$fp" "$dw"
        wait "$tp" || { echo "tprofd failed:" >&2; tail "$D/tprofd.log" >&2; exit 1; }
        wait "$tf" || { echo "tprofd --unwind fp failed:" >&2; tail "$D/fp-tprofd/tprofd.log" >&2; exit 1; }
        wait "$fp" 2>/dev/null || true
        wait "$dw" 2>/dev/null || true
        PIDS=()
        stop_load

        # tprofd: the ring's last line is "N windows, N samples, N lost, SIZE."
        "$BUNDLE" windows --state-dir "$D/state" >"$D/windows.out"
        n_tp=$(sed -n 's/^[0-9]* windows\{0,1\}, \([0-9]*\) samples\{0,1\}, .*/\1/p' "$D/windows.out")
        l_tp=$(sed -n 's/^[0-9]* windows\{0,1\}, [0-9]* samples\{0,1\}, \([0-9]*\) lost.*/\1/p' "$D/windows.out")
        b_tp=$(cat "$D"/state/ring/*.tpw | wc -c)
        "$BUNDLE" windows --state-dir "$D/fp-tprofd/state" >"$D/fp-tprofd/windows.out"
        n_tf=$(sed -n 's/^[0-9]* windows\{0,1\}, \([0-9]*\) samples\{0,1\}, .*/\1/p' "$D/fp-tprofd/windows.out")
        l_tf=$(sed -n 's/^[0-9]* windows\{0,1\}, [0-9]* samples\{0,1\}, \([0-9]*\) lost.*/\1/p' "$D/fp-tprofd/windows.out")
        b_tf=$(cat "$D"/fp-tprofd/state/ring/*.tpw | wc -c)
        # Complete windows: all but the first (it starts with tprofd) and the last (cut by the stop).
        wb=0; wn=0; wk=0
        while read -r name from to n rest; do
                case "$name" in *.tpw) ;; *) continue ;; esac
                wk=$((wk + 1))
                [ "$wk" -gt 1 ] || continue
                [ -f "$D/state/ring/$name" ] || continue
                printf '%s %s %s\n' "$name" "$n" "$(stat -c %s "$D/state/ring/$name")"
        done <"$D/windows.out" | head -n -1 >"$D/complete.txt"
        read -r wn wb < <(awk '{ n += $2; b += $3; k++ } END { print n + 0, b + 0 }' "$D/complete.txt")
        wc_tp=$(grep -c . "$D/complete.txt" || true)
        u_tp=$(grep -o 'User stacks: .*' "$D/tprofd.log" | tail -1 || true)

        n_fp=$(perf script -i "$D/fp.data" -F time 2>/dev/null | grep -c . || true)
        b_fp=$(stat -c %s "$D/fp.data")
        l_fp=$(perf_lost "$D/fp.data")
        b_dw=$(stat -c %s "$D/dwarf.data")
        l_dw=$(perf_lost "$D/dwarf.data")
        # perf script + folding, timed; the sample count comes from the folded stacks.
        /usr/bin/time -f "%U %S" -o "$D/script.time" sh -c \
                "perf script -i '$D/dwarf.data' 2>/dev/null | python3 '$(dirname "$0")/../tests/integration/stackcollapse.py' >'$D/dwarf.folded' 2>/dev/null"
        c_sc=$(awk '{ printf "%.2f", $1 + $2 }' "$D/script.time")
        n_dw=$(awk '{ t += $NF } END { print t + 0 }' "$D/dwarf.folded")

        echo
        echo "== $F Hz on $NCPU CPUs, $S s, $LOAD load (no frame pointers: bash, gzip$([ "$LOAD" = mixed ] && echo ", find")) =="
        printf '%-32s %7s %8s %9s %8s %6s %8s %11s %9s\n' "recorder" "CPU s" "CPU s/s" "CPU us/sa" "samples" "lost" \
                "bytes/sa" "steady s/s" "steady us"
        row "tprofd --unwind auto (ring)" "$c_tp" "$S" "${n_tp:-0}" "${l_tp:-?}" "$b_tp" "$((e_tp - w_tp))" "$((S - WM))"
        row "tprofd --unwind fp (ring)" "$c_tf" "$S" "${n_tf:-0}" "${l_tf:-?}" "$b_tf" "$((e_tf - w_tf))" "$((S - WM))"
        row "perf record -g" "$c_fp" "$S" "$n_fp" "$l_fp" "$b_fp" "$((e_fp - w_fp))" "$((S - WM))"
        row "perf record --call-graph dwarf" "$c_dw" "$S" "$n_dw" "$l_dw" "$b_dw" "$((e_dw - w_dw))" "$((S - WM))"
        row "  + perf script + folding" "$(echo "$c_dw + $c_sc" | bc -l)" "$S" "$n_dw" "$l_dw" "$b_dw"
        echo "(CPU s: the whole run, 10 ms ticks; steady: from ${WM} s to ${S} s, the scheduler's nanoseconds;"
        echo " steady us: microseconds per sample at ${F} Hz on ${NCPU} CPUs)"
        if [ "${wc_tp:-0}" -gt 0 ] && [ "$wn" -gt 0 ]; then
                awk -v k="$wc_tp" -v n="$wn" -v b="$wb" 'BEGIN {
                        printf "tprofd ring over its %d complete window(s): %d samples, %.2f bytes/sa\n", k, n, b / n }'
        else
                echo "tprofd ring: no complete window in ${S} s (the bytes above carry a partial window's tables)"
        fi
        [ -z "$u_tp" ] || echo "tprofd: $u_tp"
        rm -f "$D"/*.data
done
echo
echo "(CPU s: user + system of each recorder; the machine's other work makes all of them noisy)"
