# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# What the benchmarks share; sourced, it only defines functions and LOAD_PGIDS.

# The loads, each loop in a session of its own, so that stop_load kills the whole process group:
# the loop and whatever find, head or gzip it runs at that moment.
#   mixed   a CPU-bound shell loop, a file-system walk and a compressor, the last two restarted
#           over and over (Debian binaries without frame pointers; new processes keep appearing);
#   steady  one CPU-bound shell loop and one compressor that runs throughout: long-lived
#           processes with stable stacks and no churn, closer to a server;
#   partial on each CPU a compressor that runs 0.3 s of every second: a host busy a third of the
#           time, whose rings fill slowly;
#   none    the machine as it is.
# setsid does not fork here (a background job is no group leader), so $! is the new group's id.
LOAD_PGIDS=()
start_load() {
        case $1 in
        mixed)
                setsid bash -c 'while :; do :; done' & LOAD_PGIDS+=($!)
                setsid bash -c 'while :; do find /usr/lib -name "*.so*" -newer /etc/hostname; done' \
                        >/dev/null 2>&1 & LOAD_PGIDS+=($!)
                setsid bash -c 'while :; do head -c 50M /dev/urandom | gzip -1 >/dev/null; done' \
                        & LOAD_PGIDS+=($!)
                ;;
        steady)
                setsid bash -c 'while :; do :; done' & LOAD_PGIDS+=($!)
                setsid gzip -1 </dev/urandom >/dev/null & LOAD_PGIDS+=($!)
                ;;
        partial)
                # A host busy a third of the time: on each CPU, a compressor runs 0.3 s of each second.
                for _ in $(seq "$(nproc)"); do
                        setsid bash -c 'while :; do timeout 0.3 gzip -1 </dev/urandom >/dev/null; sleep 0.7; done' \
                                >/dev/null 2>&1 & LOAD_PGIDS+=($!)
                done
                ;;
        none) ;;
        *) echo "start_load: no load named $1" >&2; return 1 ;;
        esac
        [ "$1" = none ] || sleep 1
}

stop_load() {
        local g
        for g in "${LOAD_PGIDS[@]}"; do kill -TERM -- "-$g" 2>/dev/null || true; done
        for g in "${LOAD_PGIDS[@]}"; do wait "$g" 2>/dev/null || true; done
        for g in "${LOAD_PGIDS[@]}"; do
                if pgrep -g "$g" >/dev/null; then
                        sleep 0.5
                        kill -KILL -- "-$g" 2>/dev/null || true
                fi
        done
        LOAD_PGIDS=()
}

# cpu_ns PID: nanoseconds of CPU a running process's threads have had, from the scheduler's
# counters (/proc/PID/task/*/schedstat). /proc/PID/stat counts 10 ms ticks, which at 97 Hz hide
# most of what a recorder does in a minute. Threads that have exited are not in the sum: take
# differences over a span in which the process keeps its threads, not its whole life.
cpu_ns() {
        cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { printf "%d", t }'
}

# cpu_ticks_s PID: CPU seconds of a running process from /proc/PID/stat (user + system, every
# thread it ever had), in steps of one clock tick.
cpu_ticks_s() {
        sed 's/^.*) //' "/proc/$1/stat" | awk -v tck="$(getconf CLK_TCK)" '{ printf "%.2f", ($12 + $13) / tck }'
}

# perf_lost DATA: samples perf lost, from the sampling event's own block of `perf report --stats`
# (its LOST_SAMPLES line sums the counts of every LOST and LOST_SAMPLES record). The aggregated
# block above it counts records and prints a percentage after each, which is not a sample count.
perf_lost() {
        perf report -i "$1" --stats 2>/dev/null |
                awk '/stats:$/ { ev = ($0 !~ /^Aggregated/ && $1 !~ /^dummy/) } ev && $1 == "LOST_SAMPLES" { s += $3 } END { print s + 0 }'
}
