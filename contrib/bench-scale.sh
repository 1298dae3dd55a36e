#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The sample path at fleet scale: the tprofd daemon (ring written, kmsg source and the shipped
# rules on, control socket; on its defaults, so whole user stacks by call frame information, and
# with FP=1 a second one with --unwind fp, the walk perf record -g does) and `perf record -g -a`
# sample the same load AT THE SAME TIME, at
# 97 Hz and at the per-CPU rates that give this machine the sample rate of a 100-CPU and a 200-CPU
# host at 97 Hz (97 x 100 / CPUs and 97 x 200 / CPUs: 4850 and 9700 Hz on 2 CPUs). Running both at
# once on one load keeps the comparison fair on a busy, shared machine: whatever else runs slows
# both alike. Per rate and per tool: CPU seconds per sampled second, CPU microseconds per sample,
# samples kept against freq x CPUs x seconds, lost, peak RSS, bytes per sample on disk; perf also
# with `perf script | fold`, the step that turns its file into folded stacks.
#
# tprofd's CPU is measured over the sampled interval only (it is a daemon: its start-up is paid
# once); perf record's is its whole run, the build-id pass at exit included, as a user pays it.
#
# At the 100-CPU rate it then asks the daemon for a bundle (`capture --before B --after A`) and
# prints how long after t + after it was complete, its size (windows/ are hard links into the
# ring, counted apart), how many samples were lost while it was written, and how long a
# `tprof-bundle status` took meanwhile.
#
# Usage: contrib/bench-scale.sh [BUILD_DIR]      (as root)
#   SECS=30              sampled seconds per rate
#   RATES="97 100 200"   97 = 97 Hz per CPU; N = the rate of an N-CPU host at 97 Hz
#   BURNERS=$(nproc)     copies of the test burner as the load
#   BUNDLE=1             the bundle at the 100-CPU rate (BUNDLE_BEFORE=min(60, SECS-2)s, BUNDLE_AFTER=10s)
#   LONG=600             instead: one run of LONG seconds at the 100-CPU rate, printing tprofd's RSS
#                        every 30 s (flat or not)
#   FP=1                 also a second daemon with --unwind fp, beside the first on the same load:
#                        frame pointers only, the same walk as perf record -g (FP=0: not run)
#   KEEP=1               keep the temporary directory

set -eu

BUILD=${1:-build}
SECS=${SECS:-30}
RATES=${RATES:-"97 100 200"}
NCPU=$(nproc)
BURNERS=${BURNERS:-$NCPU}
BUNDLE=${BUNDLE:-1}
BUNDLE_AFTER=${BUNDLE_AFTER:-10}
LONG=${LONG:-0}
FP=${FP:-1}
TPROFD=$BUILD/src/tprofd/tprofd
TPROF_BUNDLE=$BUILD/src/tprof-bundle/tprof-bundle
BURN=$BUILD/tests/burn
SRC=$(cd "$(dirname "$0")/.." && pwd)
HZ=$(getconf CLK_TCK)

[ "$(id -u)" = 0 ] || { echo "bench-scale: needs root" >&2; exit 1; }
[ -x "$TPROFD" ] && [ -x "$BURN" ] && [ -x "$TPROF_BUNDLE" ] || { echo "bench-scale: build first (ninja -C $BUILD)" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench-scale: perf not installed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-scale: /usr/bin/time not installed" >&2; exit 1; }

# shellcheck source=contrib/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

TMP=$(mktemp -d /tmp/tprof-bench-scale.XXXXXX)
PIDS=()
cleanup() {
        local p
        for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
        wait 2>/dev/null || true
        [ "${KEEP:-0}" = 1 ] && echo "kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT

FOLD_AWK='
/^[^ \t]/ { comm = $1; n = 0; next }
/^[ \t]+[0-9a-f]+ / {
        sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym)
        if (sym == "[unknown]") { dso = $NF; gsub(/[()]/, "", dso); sub(/.*\//, "", dso); sym = "[" dso "]" }
        f[n++] = sym; next
}
/^$/ { if (comm != "") { s = comm; for (i = n - 1; i >= 0; i--) s = s ";" f[i]; c[s]++ } comm = ""; n = 0 }
END { for (s in c) print s, c[s] }'

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hwm_kib() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.${2:-3}f\", ($1) }"; }

# status_samples [STATE SOCK]: "kept lost" from a running daemon (the last one started by default);
# retried: on a loaded machine an answer can take seconds
status_samples() {
        local o state=${1:-$STATE} sock=${2:-$SOCK}
        for _ in 1 2 3 4 5; do
                o=$("$TPROF_BUNDLE" -D "$state" --control-socket "$sock" status 2>/dev/null |
                        sed -n "s/^ *Samples: \([0-9]*\) kept, \([0-9]*\) lost.*/\1 \2/p")
                [ -n "$o" ] && { echo "$o"; return 0; }
        done
        echo "0 0"
}

start_daemon() { # freq [unwind mode]: sets STATE, SOCK and TPID
        local tag=$1${2:+-$2}
        STATE=$TMP/state-$tag
        SOCK=$TMP/sock-$tag
        "$TPROFD" --state-dir "$STATE" --control-socket "$SOCK" --rules "$SRC/rules" --freq "$1" \
                ${2:+--unwind "$2"} --max-bundles 10 2>"$TMP/tprofd-$tag.log" &
        TPID=$!
        PIDS+=("$TPID")
        for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
        [ -S "$SOCK" ] || { echo "bench-scale: tprofd did not start: $(cat "$TMP/tprofd-$tag.log")" >&2; exit 1; }
}

start_burners() { # seconds
        local i
        for ((i = 0; i < BURNERS; i++)); do
                "$BURN" "$1" &
                PIDS+=($!)
        done
}

printf "%-30s %8s %9s %10s %10s %10s %6s %8s %9s\n" profiler "CPU s" "CPU s/s" "µs/sample" samples expected lost "RSS MiB" "B/sample"
row() { # name cpu secs samples expected lost rss_kib bytes
        printf "%-30s %8.2f %9.4f %10.2f %10d %10d %6d %8.1f %9.2f\n" "$1" "$2" "$(calc "$2 / $3" 4)" \
                "$(calc "$4 > 0 ? $2 * 1e6 / $4 : 0" 2)" "$4" "$5" "$6" "$(calc "$7 / 1024" 1)" "$(calc "$4 > 0 ? $8 / $4 : 0" 2)"
}

run_rate() { # label freq secs bundle(0/1)
        local label=$1 F=$2 S=$3 bundle=$4
        local t0c t1c t0 t1 s0 l0 s1 l1 prss pcpu scpu tcpu tsamples tlost psamples plost before after

        start_burners $((S + BUNDLE_AFTER + 30))
        if [ "$FP" = 1 ]; then
                start_daemon "$F" fp
                FP_STATE=$STATE FP_SOCK=$SOCK FP_PID=$TPID
        fi
        start_daemon "$F"
        sleep 2 # past start-up: kallsyms, the /proc scan, the clock measurement
        /usr/bin/time -f "%U %S %M" -o "$TMP/perf-$F.time" \
                perf record -q -F "$F" -g -a -o "$TMP/perf-$F.data" -- sleep "$S" 2>"$TMP/perf-$F.err" >/dev/null &
        PPID_=$!
        read -r s0 l0 < <(status_samples)
        if [ "$FP" = 1 ]; then
                read -r fs0 fl0 < <(status_samples "$FP_STATE" "$FP_SOCK")
                f0c=$(cpu_ticks "$FP_PID")
        fi
        t0c=$(cpu_ticks "$TPID"); t0=$(now)
        if [ "$LONG" -gt 0 ]; then
                for ((k = 30; k <= S; k += 30)); do sleep 30; echo "  t=${k}s tprofd RSS $(awk '/^VmRSS:/ { print $2 }' "/proc/$TPID/status") KiB"; done
        fi
        wait "$PPID_"
        t1c=$(cpu_ticks "$TPID"); t1=$(now)
        if [ "$FP" = 1 ]; then
                f1c=$(cpu_ticks "$FP_PID")
                read -r fs1 fl1 < <(status_samples "$FP_STATE" "$FP_SOCK")
        fi
        read -r s1 l1 < <(status_samples)
        tcpu=$(calc "($t1c - $t0c) / $HZ" 2)
        tsamples=$((s1 - s0)); tlost=$((l1 - l0))
        S=$(calc "$t1 - $t0" 1)

        if [ "$bundle" = 1 ]; then
                before=${BUNDLE_BEFORE:-$(( ${S%.*} > 62 ? 60 : ${S%.*} - 2 ))}
                local c0 c1 st0 st1 lat id bytes wbytes lostb
                read -r s0 l0 < <(status_samples)
                c0=$(now)
                "$TPROF_BUNDLE" -D "$STATE" --control-socket "$SOCK" capture --before "${before}s" --after "${BUNDLE_AFTER}s" \
                        >"$TMP/capture.out" 2>&1 &
                local CAP=$!
                # status while the bundle is recorded and written: answered, and how fast
                lat=0; timeouts=0
                while kill -0 "$CAP" 2>/dev/null; do
                        st0=$(now)
                        "$TPROF_BUNDLE" -D "$STATE" --control-socket "$SOCK" status >/dev/null 2>&1 || timeouts=$((timeouts + 1))
                        st1=$(now)
                        lat=$(calc "($st1 - $st0) > $lat ? ($st1 - $st0) : $lat" 3)
                        sleep 0.2
                done
                wait "$CAP" || { echo "capture failed: $(cat "$TMP/capture.out")"; }
                c1=$(now)
                read -r s1 l1 < <(status_samples)
                id=$(tail -1 "$TMP/capture.out")
                bytes=$(find "$STATE/incidents/$id" -path '*/windows' -prune -o -type f -printf '%s\n' | awk '{ t += $1 } END { print t + 0 }')
                wbytes=$(find "$STATE/incidents/$id/windows" -type f -printf '%s\n' 2>/dev/null | awk '{ t += $1 } END { print t + 0 }')
                BUNDLE_LINE=$(printf "  bundle %ss+%ss at %s Hz: complete %.2f s after t+after, %.1f MB of files (+ %.1f MB windows/ hard links), %d samples; lost while written: %d; slowest status %.3f s, %d unanswered\n    files: %s" \
                        "$before" "$BUNDLE_AFTER" "$F" "$(calc "$c1 - $c0 - $BUNDLE_AFTER" 2)" "$(calc "$bytes / 1e6" 1)" "$(calc "$wbytes / 1e6" 1)" \
                        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["slice"]["samples"])' "$STATE/incidents/$id/manifest.json" 2>/dev/null || echo 0)" \
                        "$((l1 - l0))" "$lat" "$timeouts" "$(cd "$STATE/incidents/$id" && ls -s --block-size=K -1 | grep -v '^total' | tr '\n' ' ')")
        fi

        trss=$(hwm_kib "$TPID")
        read -r stotal _ < <(status_samples)
        kill "$TPID"; wait "$TPID" 2>/dev/null || true
        tbytes=$(du -sb "$STATE/ring" | cut -f1)
        if [ "$FP" = 1 ]; then
                frss=$(hwm_kib "$FP_PID")
                read -r ftotal _ < <(status_samples "$FP_STATE" "$FP_SOCK")
                kill "$FP_PID"; wait "$FP_PID" 2>/dev/null || true
                fbytes=$(du -sb "$FP_STATE/ring" | cut -f1)
        fi
        read -r pu ps prss < "$TMP/perf-$F.time"
        pcpu=$(calc "$pu + $ps" 2)
        /usr/bin/time -f "%U %S %M" -o "$TMP/script-$F.time" sh -c "perf script -i '$TMP/perf-$F.data' 2>/dev/null | awk '$FOLD_AWK' >'$TMP/perf-$F.folded'"
        read -r su ss srss < "$TMP/script-$F.time"
        scpu=$(calc "$su + $ss" 2)
        psamples=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/perf-$F.folded")
        plost=$(perf_lost "$TMP/perf-$F.data")
        pbytes=$(stat -c %s "$TMP/perf-$F.data")
        local expected pexpected
        expected=$(calc "$F * $NCPU * $S" 0)
        pexpected=$(calc "$F * $NCPU * $3" 0)
        echo "$label: -F $F on $NCPU CPUs, $S s sampled by both at once (perf record $3 s), $BURNERS burners"
        row "  tprofd (daemon, ring, auto)" "$tcpu" "$S" "$tsamples" "$expected" "$tlost" "$trss" \
                "$(calc "$tbytes * $tsamples / ($stotal > 0 ? $stotal : 1)" 0)"
        if [ "$FP" = 1 ]; then
                fcpu=$(calc "($f1c - $f0c) / $HZ" 2)
                row "  tprofd --unwind fp" "$fcpu" "$S" "$((fs1 - fs0))" "$expected" "$((fl1 - fl0))" "$frss" \
                        "$(calc "$fbytes * ($fs1 - $fs0) / ($ftotal > 0 ? $ftotal : 1)" 0)"
        fi
        row "  perf record -g -a" "$pcpu" "$3" "$psamples" "$pexpected" "$plost" "$prss" "$pbytes"
        row "    + perf script | fold" "$(calc "$pcpu + $scpu" 2)" "$3" "$psamples" "$pexpected" "$plost" \
                "$(( prss > srss ? prss : srss ))" "$pbytes"
        echo "  tprofd/perf record CPU per sampled second: $(calc "$pcpu > 0 ? ($tcpu / $S) / ($pcpu / $3) : 0" 2)"
        [ "$FP" = 1 ] && echo "  tprofd --unwind fp/perf record: $(calc "$pcpu > 0 ? ($fcpu / $S) / ($pcpu / $3) : 0" 2) (the same walk: frame pointers)"
        [ "$bundle" = 1 ] && echo "$BUNDLE_LINE"
        # the load of this rate ends before the next starts
        for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
        wait 2>/dev/null || true
        PIDS=()
        rm -f "$TMP/perf-$F.data"
        rm -rf "$STATE"
        [ "$FP" = 1 ] && rm -rf "$FP_STATE"
        return 0
}

if [ "$LONG" -gt 0 ]; then
        F=$(( (97 * 100 + NCPU / 2) / NCPU ))
        run_rate "100-CPU rate, long run" "$F" "$LONG" 0
        exit 0
fi
for R in $RATES; do
        if [ "$R" = 97 ]; then
                run_rate "97 Hz" 97 "$SECS" 0
        else
                F=$(( (97 * R + NCPU / 2) / NCPU ))
                b=0
                [ "$R" = 100 ] && [ "$BUNDLE" = 1 ] && b=1
                run_rate "$R-CPU rate" "$F" "$SECS" "$b"
        fi
done
echo "(both tools sample at once on the same load; tprofd CPU over the sampled interval, perf record's whole run;"
echo " bytes per sample: the ring's windows, perf.data; RSS: peak)"
