#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Go programs (kubelet, containerd and most of a Kubernetes node's agents) write no .eh_frame.
# Built as `go build` leaves them, with DWARF, they are walked by their .debug_frame; built with
# -ldflags=-w (no DWARF) or stripped with -s -w (as Kubernetes ships its own), by frame pointers,
# which Go keeps on x86-64, and the chain ends where the saved frame pointer is 0, at
# runtime.goexit. Stripped ones are named from .gopclntab, the Go runtime's own function table, a
# PIE's too, linked by Go or by the host linker. Either way the stacks are whole and named, with no [unknown] cut at the root. Built
# here with Debian's Go (offline, no modules); skipped where there is none.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"
require_perf
[ "$(uname -m)" = x86_64 ] || skip "stacks are unwound from copies on x86-64 only"

# run_sampled BIN SECS [ARG]: runs BIN ARG and samples it SECS seconds (--once, --unwind auto),
# then stops it.
run_sampled() {
        local bin=$1 secs=$2 pid
        shift 2
        "$bin" "$@" &
        pid=$!
        on_exit "kill $pid 2>/dev/null"
        sleep 0.3
        once "$secs" --pid "$pid" --unwind auto
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
}

# go_burn OUT [VAR=VALUE...] -- GO-BUILD-ARGS: builds tests/helpers/go-burn into OUT with Debian's
# Go, offline, in the environment given.
go_burn() {
        local out=$1 env=()
        shift
        while [ "$1" != -- ]; do env+=("$1"); shift; done
        shift
        (cd "$TPROF_SOURCE_ROOT/tests/helpers/go-burn" &&
                env "${env[@]}" GOCACHE="$TEST_TMP/go-cache" GOPATH="$TEST_TMP/go-path" GOFLAGS=-mod=mod GOPROXY=off \
                        GOTOOLCHAIN=local go build "$@" -o "$out" .) >"$ERR" 2>&1 ||
                fail "${env[*]} go build $*: $(cat "$ERR")"
}

# Stripped Go PIEs of releases before 1.18, which Debian's Go cannot build, and of 1.18, by
# stand-ins (tests/helpers/go-table-fixture.S): the function table inside .data.rel.ro, its
# addresses in relocations (and in place, or 0 there as lld leaves them). Each named from it, whole.
check_old_table() {
        local variable=$1 bin comm total whole
        bin=${!variable:-}
        [ -n "$bin" ] || { echo "$variable not built (no lld?): not checked"; return 0; }
        comm=$(basename "$bin" | cut -c1-15)
        run_sampled "$bin" 2
        total=$(comm_total "$comm")
        whole=$(comm_matching "$comm" "^$comm;_rt0_amd64_linux;main\\.main;main\\.spin\$")
        echo "$variable: $total samples, named and whole: $whole"
        [ "$total" -ge 20 ] || fail "only $total samples of $comm in 2 s: $(head -c 2000 "$OUT")"
        [ $((whole * 100)) -ge $((total * 90)) ] ||
                fail "$whole of $total samples of $comm are _rt0_amd64_linux;main.main;main.spin: $(sort -t' ' -k2 -nr "$OUT" | head -5)"
}
check_old_table TPROF_GO12_FIXTURE
check_old_table TPROF_GO12_FIXTURE_LLD
check_old_table TPROF_GO116_FIXTURE_LLD
check_old_table TPROF_GO118_FIXTURE_LLD

command -v go >/dev/null || skip "no Go toolchain (contrib/setup.sh installs golang-go)"

# check BUILDMODE LDFLAGS WALKED: builds with -buildmode=BUILDMODE -ldflags=LDFLAGS, samples 3 s
# and needs 80% of the samples whole and named; WALKED is what the summary must count ("whole by
# CFI", "whole with frame pointers").
check() {
        local buildmode=$1 ldflags=$2 walked=$3 bin="$TEST_TMP/goburn" total whole cut
        go_burn "$bin" -- -buildmode="$buildmode" -ldflags="$ldflags"
        run_sampled "$bin" 3 6

        total=$(comm_total goburn)
        whole=$(comm_matching goburn '^goburn;runtime\.goexit(\.abi0)?;runtime\.main;main\.main;main\.goburnOuter;main\.goburnMiddle;main\.goburnLeaf$')
        cut=$(comm_matching goburn '^goburn;\[unknown\];')
        echo "go build -buildmode=$buildmode -ldflags='$ldflags': $total samples, whole from runtime.goexit: $whole, cut: $cut; $(grep 'user stacks' "$ERR")"
        [ "$total" -ge 30 ] || fail "only $total samples of goburn in 3 s: $(head -c 2000 "$OUT")"
        [ $((whole * 100)) -ge $((total * 80)) ] ||
                fail "$whole of $total samples walk runtime.goexit;runtime.main;main.main;...;main.goburnLeaf: $(sort -t' ' -k2 -nr "$OUT" | head -5)"
        grep -qE "[1-9][0-9]* $walked" "$ERR" || fail "summary counts no stack $walked: $(grep 'user stacks' "$ERR")"
}

check exe "" "whole by CFI"                                 # DWARF kept: .debug_frame
check exe "-w" "whole with frame pointers for some frames"  # no DWARF: frame pointers
check exe "-s -w" "whole with frame pointers for some frames" # stripped: names from .gopclntab
check pie "-s -w" "whole with frame pointers for some frames" # the same, relocated
# A host linker (cgo programs, distribution builds) merges a PIE's table into .data.rel.ro.
command -v gcc >/dev/null &&
        check pie "-s -w -linkmode=external" "whole with frame pointers for some frames"
# under_switch COMM HONEST: samples of COMM in $OUT in which runtime.mcall or runtime.systemstack
# calls a function of the program (one named in $TEST_TMP/goburn.names); with HONEST 1, only those
# cut right above it (COMM;[unknown];runtime.mcall;...).
under_switch() {
        awk -v c="$1" -v honest="$2" 'NR == FNR { own[$0] = 1; next }
                { n = $NF; k = $0; sub(/ [0-9]+$/, "", k); m = split(k, f, ";")
                  if (f[1] != c) next
                  for (i = 2; i < m; i++)
                          if (f[i] ~ /^runtime\.(mcall|systemstack)(\.abi0)?$/ && (f[i + 1] in own)) {
                                  if (!honest || (i == 3 && f[2] == "[unknown]")) t += n
                                  break
                          } }
                END { print t + 0 }' "$TEST_TMP/goburn.names" "$OUT"
}

# The scheduler's reads of the clock: runtime.nanotime1 calls the vDSO on the g0 stack, realigned,
# which its .debug_frame does not say (its rule names a zero word as the return address): walked
# on by its frame pointer, not ending at runtime.nanotime1 (all of them did before). The calls a
# goroutine makes (goSched's one time.Sleep(), the runtime's own) switch to the g0 stack, and their
# caller's frames are on the goroutine's stack, not in the copy: they still end there, a few.
sched() {
        local bin="$TEST_TMP/goburn" pid in_vdso at_nanotime
        go_burn "$bin" --
        "$bin" 6 -sched &
        pid=$!
        on_exit "kill $pid 2>/dev/null"
        sleep 0.3
        once 4 --freq 499 --pid "$pid" --unwind auto
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        in_vdso=$(comm_matching goburn 'runtime\.nanotime1(\.abi0)?;[^;]*clock_gettime')
        at_nanotime=$(comm_matching goburn '^goburn;runtime\.nanotime1(\.abi0)?;')
        echo "go scheduler: $in_vdso samples in the vDSO under runtime.nanotime1, $at_nanotime of them ending there"
        [ "$in_vdso" -ge 5 ] || fail "only $in_vdso samples in the vDSO under runtime.nanotime1, nothing checked: $(sort -t' ' -k2 -nr "$OUT" | head -5)"
        [ $((at_nanotime * 10)) -le "$in_vdso" ] ||
                fail "$at_nanotime of $in_vdso stacks end at runtime.nanotime1: $(grep '^goburn;runtime\.nanotime1' "$OUT" | head -5)"
        # runtime.mcall and runtime.systemstack move the stack pointer to g0's stack (their _func.flag
        # is SPWRITE, Go 1.19's runtime/asm_amd64.s), where their rule reads an old word at
        # g0.sched.sp as a return address: a false caller (runtime.newproc), then a cut, or a zero
        # that looked like the outermost frame. Go's traceback stops at such a function; so does the
        # walk, the stack cut there: [unknown] right above it, never another frame. Only a function
        # of the program is one they called: a sample taken in the kernel while the program was in
        # one of them itself (an interrupt, or the rt_sigreturn of the runtime's preemption
        # signal, more of both on a busy machine) has the kernel's frames after it, the program's
        # walked as any interrupted function's (sampler-unwind.c), not cut.
        local switched honest
        go tool nm "$bin" | sed -E 's/^ *[0-9a-f]+ [A-Za-z] //' >"$TEST_TMP/goburn.names"
        [ -s "$TEST_TMP/goburn.names" ] || fail "go tool nm names nothing in $bin"
        switched=$(under_switch goburn 0)
        honest=$(under_switch goburn 1)
        echo "go scheduler: $switched samples under runtime.mcall or runtime.systemstack, $honest of them cut right there"
        [ "$switched" -ge 20 ] || fail "only $switched samples under runtime.mcall or runtime.systemstack, nothing checked"
        [ "$honest" -eq "$switched" ] ||
                fail "$((switched - honest)) of $switched stacks go on past runtime.mcall or runtime.systemstack: $(grep -E ';runtime\.(mcall|systemstack)(\.abi0)?;' "$OUT" | grep -v '^goburn;\[unknown\];runtime\.' | sort -t' ' -k2 -nr | head -5)"
}
sched

# A 32-bit Go program (GOARCH=386, where Go keeps no frame pointers and writes no .eh_frame): with
# DWARF, walked whole by its .debug_frame in i386's terms; stripped, its leaf named from its
# table, the walk cut after it. Where the kernel runs no 32-bit programs, not checked.
check386() {
        local ldflags=$1 want=$2 bin="$TEST_TMP/goburn386" total named
        go_burn "$bin" GOARCH=386 -- -ldflags="$ldflags"
        "$bin" 0 2>/dev/null || { echo "GOARCH=386: the kernel runs no 32-bit programs: not checked"; return 0; }
        run_sampled "$bin" 3 6
        total=$(comm_total goburn386)
        named=$(comm_matching goburn386 "$want")
        echo "GOARCH=386 go build -ldflags='$ldflags': $total samples, as wanted: $named; $(grep 'user stacks' "$ERR")"
        [ "$total" -ge 30 ] || fail "only $total samples of goburn386 in 3 s: $(head -c 2000 "$OUT")"
        [ $((named * 100)) -ge $((total * 80)) ] ||
                fail "$named of $total samples of the 32-bit Go program match $want: $(sort -t' ' -k2 -nr "$OUT" | head -5)"
}
check386 "" '^goburn386;runtime\.goexit;runtime\.main;main\.main;main\.goburnOuter;main\.goburnMiddle;main\.goburnLeaf$'
check386 "-s -w" '^goburn386;\[unknown\];main\.goburnLeaf$'
# lld leaves the table's textStart to its relocation alone.
command -v gcc >/dev/null && command -v ld.lld >/dev/null &&
        check pie "-s -w -linkmode=external -extldflags=-fuse-ld=lld" "whole with frame pointers for some frames"
echo ok
