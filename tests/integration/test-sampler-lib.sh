# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the sampler integration tests: skip unless perf events can be opened, and helpers to
# run `tprofd --once` and pick out one process's folded stacks.

: "${TPROF_BURN:?run through meson test}"

require_perf() {
        require_root
        [ -x "$TPROF_BURN" ] || skip "burn helper not built"
        "$TPROFD" --once 0.2 >/dev/null 2>"$TEST_TMP/probe.err" ||
                skip "perf events unavailable: $(head -c 300 "$TEST_TMP/probe.err")"
}

# require_cgroup_v2: skips unless a cgroup v2 hierarchy is mounted and writable; its mount point
# in V2, where the tests make their cgroups.
require_cgroup_v2() {
        V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
        [ -n "$V2" ] || skip "no cgroup v2 hierarchy is mounted"
        [ -w "$V2" ] || skip "the cgroup v2 hierarchy at $V2 is not writable"
}

# burn_as NAME: a copy of the burner under NAME in $TEST_TMP, so its comm is unique to this test
# (integration tests run in parallel). Prints the path.
burn_as() {
        cp "$TPROF_BURN" "$TEST_TMP/$1"
        echo "$TEST_TMP/$1"
}

# once SECONDS [ARGS...]: samples into $OUT/$ERR, fails unless tprofd exits 0.
once() {
        local secs=$1
        shift
        expect_exit 0 "$TPROFD" --once "$secs" "$@"
}

# once_copies SECONDS [ARGS...]: once, for a run whose stacks need the kernel's user stack copies.
# A run in which no stack was walked because every copy the kernel made came back empty (its read
# at the stack pointer failed: "N samples without user stack (N whose copy was empty)"; seen twice
# for a 32-bit process on a loaded machine, never on a quiet one) is run again, at most twice, and
# said so; a third such run, or a run without copies for any other cause, is left for the checks
# to fail on.
once_copies() {
        local tries=0
        once "$@"
        while [ "$tries" -lt 2 ] && grep -q 'user stacks (dwarf): 0 walked' "$ERR" &&
                grep -Eq '; ([1-9][0-9]*) samples without user stack \(\1 whose copy was empty\)' "$ERR"; do
                tries=$((tries + 1))
                echo "the kernel's user stack copies all came back empty in this run: once more"
                once "$@"
        done
}

# comm_total COMM: samples of that comm in $OUT.
comm_total() {
        awk -v c="$1" '{ n = $NF; k = $0; sub(/ [0-9]+$/, "", k); split(k, f, ";"); if (f[1] == c) t += n } END { print t + 0 }' "$OUT"
}

# comm_matching COMM REGEX: samples of that comm whose stack matches REGEX.
comm_matching() {
        awk -v c="$1" -v re="$2" '{ n = $NF; k = $0; sub(/ [0-9]+$/, "", k); split(k, f, ";"); if (f[1] == c && k ~ re) t += n } END { print t + 0 }' "$OUT"
}
