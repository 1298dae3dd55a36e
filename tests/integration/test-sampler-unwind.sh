#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Whole user stacks of binaries built without frame pointers, unwound by tprofd from the stack
# copies with the files' call frame information: Debian's own python3, bash and gzip, each sampled
# by `tprofd --once --pid` and by `perf record --call-graph dwarf -p` over the same seconds. Their
# stacks must reach _start or main, and agree with perf's (tests/helpers/unwind-compare.py) for at
# least 90% of the samples both ways. Then the fixture built without frame pointers (PIE, shared
# library, stripped copy) with its known call path, a process that execs into another binary, and
# one that loads and unloads a library while sampled; and --unwind fp still gives the old cut
# stacks on the same binary, so the check can fail. Last, a program in a mount namespace of its
# own at a path that holds another file on the host, and a 32-bit program, walked by its frame
# pointers, and a library whose .debug_frame is in a separate debug file that only its container has.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"
require_perf
command -v perf >/dev/null || skip "perf not installed"
[ "$(uname -m)" = x86_64 ] || skip "its programs and fixtures are x86-64's (arm64's walk: test-sampler-unwind-arm64)"
COMPARE="$TPROF_SOURCE_ROOT/tests/helpers/unwind-compare.py"
SECS=${TPROF_UNWIND_TEST_SECONDS:-5}
# Enough samples that the two tools' sets of stacks overlap where they agree.
FREQ=499

# side_by_side NAME PID: samples PID with tprofd and perf at once into $TEST_TMP/NAME.{folded,perf}.
side_by_side() {
        local name=$1 pid=$2 perf_pid
        perf record -q -F "$FREQ" --call-graph dwarf -p "$pid" -o "$TEST_TMP/$name.data" -- sleep "$SECS" \
                >/dev/null 2>"$TEST_TMP/$name.perf-err" &
        perf_pid=$!
        "$TPROFD" --once "$SECS" --freq "$FREQ" --pid "$pid" --unwind auto >"$TEST_TMP/$name.folded" 2>"$TEST_TMP/$name.err" ||
                fail "tprofd --once failed: $(cat "$TEST_TMP/$name.err")"
        wait "$perf_pid" || fail "perf record failed: $(head -c 500 "$TEST_TMP/$name.perf-err")"
        perf script -i "$TEST_TMP/$name.data" >"$TEST_TMP/$name.perf" 2>/dev/null || fail "perf script failed"
        grep 'user stacks' "$TEST_TMP/$name.err"
}

compare() {
        python3 "$COMPARE" "$TEST_TMP/$1.perf" "$TEST_TMP/$1.folded" "$2" ||
                fail "$2: tprofd's stacks do not agree with perf's; summary: $(cat "$TEST_TMP/$1.err")"
}

# --- Debian's python3: a pure-Python loop
cat >"$TEST_TMP/loop.py" <<'PY'
import time
def inner(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def outer(seconds):
    t = time.time()
    while time.time() - t < seconds:
        inner(20000)
outer(30)
PY
/usr/bin/python3 "$TEST_TMP/loop.py" &
pid=$!
on_exit "kill $pid 2>/dev/null"
sleep 0.5
side_by_side python "$pid"
kill "$pid" 2>/dev/null || true
compare python python3
grep -q '^python3;_start;.*;Py_BytesMain;.*;_PyEval_EvalFrameDefault' "$TEST_TMP/python.folded" ||
        fail "python3 stacks do not run from _start to the interpreter loop: $(head -5 "$TEST_TMP/python.folded")"

# --- Debian's bash: a shell loop
/bin/bash -c 'while :; do :; done' &
pid=$!
on_exit "kill $pid 2>/dev/null"
sleep 0.3
side_by_side bash "$pid"
kill "$pid" 2>/dev/null || true
compare bash bash
grep -q '^bash;_start;.*;main;.*;execute_command' "$TEST_TMP/bash.folded" ||
        fail "bash stacks do not run from _start through execute_command: $(head -5 "$TEST_TMP/bash.folded")"

# --- Debian's gzip: compressing an endless stream
/bin/gzip -6 </dev/urandom >/dev/null &
pid=$!
on_exit "kill $pid 2>/dev/null"
sleep 0.3
side_by_side gzip "$pid"
kill "$pid" 2>/dev/null || true
compare gzip gzip
# Debian's gzip has no symbols of its own at all: its frames are [gzip], libc's start is named.
grep -q '^gzip;\[gzip\];__libc_start_main[^;]*;__libc_start_call_main;\[gzip\];\[gzip\];\[gzip\]' "$TEST_TMP/gzip.folded" ||
        fail "gzip stacks do not run from _start through libc's start into gzip: $(head -5 "$TEST_TMP/gzip.folded")"

# --- the fixture without frame pointers: a PIE through a shared library, then its stripped copy
path='unwind_fixture_lib_middle;unwind_callback;unwind_leaf'
# A busy machine can leave a process few samples: judge the shares, with a floor of 3 samples.
fixture_check() { # NAME COMM REGEX
        local total good
        total=$(comm_total "$2")
        good=$(comm_matching "$2" "$3")
        echo "$1: $good of $total samples match"
        [ "$total" -ge 3 ] || fail "$1: only $total samples: $(head -c 2000 "$OUT"); summary: $(cat "$ERR")"
        [ $((good * 100)) -ge $((total * 80)) ] || fail "$1: $good of $total samples whole: $(head -20 "$OUT"); summary: $(cat "$ERR")"
}
"$TPROF_UNWIND_FIXTURE" spin 4 &
pid=$!
sleep 0.2
once 3 --pid "$pid" --unwind dwarf
wait "$pid"
fixture_check fixture unwind-fixture "^unwind-fixture;_start;.*__libc_start_call_main;main;unwind_outer;$path"

if [ -n "${TPROF_UNWIND_FIXTURE_STRIPPED:-}" ]; then
        cp "$TPROF_UNWIND_FIXTURE_STRIPPED" "$TEST_TMP/unwind-stripped"
        "$TEST_TMP/unwind-stripped" spin 4 &
        pid=$!
        sleep 0.2
        once 3 --pid "$pid" --unwind dwarf
        wait "$pid"
        # The program's own functions have no names left; the walk still crosses them to libc's start.
        fixture_check stripped unwind-stripped \
                "^unwind-stripped;\\[unwind-stripped\\];.*__libc_start_call_main;\\[unwind-stripped\\];\\[unwind-stripped\\];unwind_fixture_lib_middle;\\[unwind-stripped\\];\\[unwind-stripped\\]"
fi

# --- lazy binding: each call through the PLT runs ld.so's resolver, whose CFA is kept in rbx
# (rbx is sampled with the other registers); and signal returns, whose samples in rt_sigreturn
# stop one byte past __restore_rt's FDE. Without the first nine in ten of the lazy stacks were cut,
# without the second every one in rt_sigreturn.
# sample_lazy MODE [ONCE-OPTIONS...]: the helper in MODE for 4 s, sampled for 3 (by its CFI alone);
# in mode lazy with LD_BIND_NOT=1 (the helper only: tprofd itself binds as usual).
sample_lazy() {
        local mode=$1 pid bind=()
        shift
        [ "$mode" != lazy ] || bind=(LD_BIND_NOT=1)
        env "${bind[@]}" "$TPROF_UNWIND_LAZY" "$mode" 4 &
        pid=$!
        sleep 0.2
        once 3 --pid "$pid" --unwind dwarf "$@"
        wait "$pid"
}
lazy_path="^unwind-lazy;_start;.*__libc_start_call_main;main;unwind_lazy_outer;unwind_lazy_inner"
sample_lazy lazy
[ "$(comm_matching unwind-lazy '_dl_runtime_resolve')" -gt 0 ] ||
        fail "lazy: no sample in ld.so's resolver, nothing checked: $(head -5 "$OUT")"
fixture_check lazy unwind-lazy "$lazy_path"
sample_lazy signal
[ "$(comm_matching unwind-lazy '__restore_rt')" -gt 0 ] ||
        fail "signal: no sample in a signal return, nothing checked: $(head -5 "$OUT")"
fixture_check signal unwind-lazy "$lazy_path"
# A twentieth of them are in rt_sigreturn: the share above would pass without them.
! grep -q 'no unwind information' "$ERR" || fail "signal: stacks cut for want of rules: $(cat "$ERR")"

# --- a frame of 16 KiB: past the default 8 KiB copy the walk is cut, and the summary says how to
# copy more; with a 32 KiB copy the stacks are whole and nothing is said.
sample_lazy deep --freq 997
grep -q 'beyond the copied stack' "$ERR" || fail "deep: no stack cut beyond the copy: $(cat "$ERR")"
if [ "$(comm_total unwind-lazy)" -ge 1000 ]; then
        grep -qE '^  \([0-9]+% of user stacks ran past the 8192-byte copy of the stack and were cut there; --unwind-stack' "$ERR" ||
                fail "deep: no advice to copy more: $(cat "$ERR")"
else
        echo "deep: $(comm_total unwind-lazy) samples, fewer than the advice needs (a busy machine): not checked"
fi
sample_lazy deep --freq 997 --unwind-stack 32768
fixture_check deep unwind-lazy "$lazy_path;unwind_lazy_deep;unwind_lazy_spin"
! grep -q 'ran past the' "$ERR" || fail "deep with a 32 KiB copy: advice given: $(cat "$ERR")"

# --- hand-written code whose CFA is in r9 while it runs, as OpenSSL's ChaCha20 and SHA-512 code
# keeps it in r9, rax, r10 or r11: without those registers of the sample every stack in it was cut.
sample_lazy cfareg
fixture_check cfareg unwind-lazy "$lazy_path;unwind_lazy_cfareg"
! grep -q 'register not sampled' "$ERR" || fail "cfareg: stacks cut for want of a register: $(cat "$ERR")"

# --- a CFA rule that reads below the stack pointer (OpenSSL's SHA-512 AVX2): no copy holds that
# word, so the walk is cut there, said as such, and no advice to copy more is given.
sample_lazy belowsp --freq 997
[ "$(comm_matching unwind-lazy 'unwind_lazy_belowsp')" -gt 0 ] ||
        fail "belowsp: no sample in the function, nothing checked: $(head -5 "$OUT")"
grep -q 'below the stack pointer' "$ERR" || fail "belowsp: the cut is not said as below the stack pointer: $(cat "$ERR")"
! grep -q 'ran past the' "$ERR" || fail "belowsp: advice to copy more, which cannot help: $(cat "$ERR")"

# --- a function that realigns the stack pointer as Go's vDSO calls do on the g0 stack
# (runtime.nanotime1, from the scheduler), its rules in .debug_frame as Go's are: they name a zero
# word as its return address. Without its frame pointer every stack ended there, counted whole.
sample_lazy realign --unwind auto
fixture_check realign unwind-lazy "$lazy_path;unwind_lazy_realign;unwind_lazy_busy"
grep -Eq '[1-9][0-9]* whole with frame pointers for some frames' "$ERR" ||
        fail "realign: not counted as walked by frame pointers: $(cat "$ERR")"

# --- frame pointers only: the same program's stacks are cut, as before
"$TPROF_UNWIND_FIXTURE" spin 3 &
pid=$!
sleep 0.2
once 2 --pid "$pid" --unwind fp
wait "$pid"
good=$(comm_matching unwind-fixture "^unwind-fixture;_start;.*;main;unwind_outer;$path")
[ "$good" -eq 0 ] || fail "--unwind fp gave $good whole stacks of a program without frame pointers"
grep -q 'user stacks: by frame pointers' "$ERR" || fail "summary does not say fp: $(cat "$ERR")"
# tprofd.8 quotes that line, for the hosts where every mode is fp.
quote=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$TPROF_SOURCE_ROOT/man/tprofd.8" | tr '\n' ' ' |
        grep -oE -- '--once \("[^"]*"\)' | sed 's/^--once ("//; s/")$//')
[ -n "$quote" ] && grep -qF "  $quote" "$ERR" || fail "tprofd.8 quotes --once as \"$quote\": $(grep 'user stacks' "$ERR")"

# --- a process that execs into another binary while sampled
UNWIND_FIXTURE_EXEC="$TPROF_UNWIND_FIXTURE_NOCFI" "$TPROF_UNWIND_FIXTURE" exec 6 &
pid=$!
sleep 0.2
once 5.5 --pid "$pid" --unwind auto
wait "$pid"
fixture_check before-exec unwind-fixture "^unwind-fixture;_start;.*;main;unwind_outer;$path"
fixture_check after-exec unwind-fixture- "^unwind-fixture-;_start;.*;main;unwind_outer;$path"

# --- a process that loads and unloads a library over and over while sampled
"$TPROF_UNWIND_FIXTURE" dlclose 4 &
pid=$!
sleep 0.2
once 3 --pid "$pid" --unwind auto
wait "$pid"
total=$(comm_total unwind-fixture)
good=$(comm_matching unwind-fixture "^unwind-fixture;_start;.*;main;unwind_outer;$path")
echo "dlclose: $good of $total samples whole"
[ "$total" -ge 3 ] && [ $((good * 100)) -ge $((total * 80)) ] ||
        fail "dlclose: $good of $total samples whole: $(head -20 "$OUT"); $(cat "$ERR")"
grep -q 'user stacks (auto): [0-9]* walked' "$ERR" || fail "summary has no unwinding line: $(cat "$ERR")"

# --- a container's program: in a mount namespace of its own, at a path that holds another file on
# the host; its stacks and names must come from its own file (through /proc/PID/map_files)
container() {
        local host=$TEST_TMP/ctr-host ns=$TEST_TMP/ctr-ns
        mkdir -p "$host" "$ns"
        cp /bin/true "$host/app"
        cp "$TPROF_UNWIND_FIXTURE" "$ns/app"
        unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && exec "$2/app" spin 5' sh "$ns" "$host" \
                2>"$TEST_TMP/ctr.err" &
        pid=$!
        on_exit "kill $pid 2>/dev/null"
        # Running the fixture once it has exec'd (a busy machine may take a while to get there).
        wait_for 10 grep -q tprof-unwind-fixture "/proc/$pid/maps" ||
                fail "container: the program did not start: $(cat "$TEST_TMP/ctr.err")"
        once 3 --pid "$pid" --unwind auto
        wait "$pid" || true
        fixture_check container app "^app;_start;.*;main;unwind_outer;$path"
}
# --- the same, after short-lived runs of the program in the container: their samples are read
# once they are gone (map_files and root with them, and the path is not the file on the host), and
# that must not make the file unreadable for the long-lived run after them (a health check's
# commands, then the service, of one image)
container_short_lived() {
        local host=$TEST_TMP/ctr2-host ns=$TEST_TMP/ctr2-ns
        mkdir -p "$host" "$ns"
        cp "$TPROF_UNWIND_FIXTURE" "$ns/appgone"
        # Runs of 2 ms: a busy machine stretches them, and one read before it ends (tprofd
        # --once reads every 100 ms) checks nothing; of 60, some are always gone when read. They
        # start once tprofd samples (its start-up takes seconds on a loaded machine).
        unshare -m --propagation private sh -c 'mount --bind "$1" "$2" &&
                while [ ! -e "$3" ]; do sleep 0.05; done && i=0 &&
                while [ $i -lt 60 ]; do "$2/appgone" spin 0.002 || exit 1; i=$((i + 1)); done &&
                exec "$2/appgone" spin 4' sh "$ns" "$host" "$TEST_TMP/ctr2.go" 2>"$TEST_TMP/ctr2.err" &
        pid=$!
        on_exit "kill $pid 2>/dev/null"
        "$TPROFD" --once 10 --freq 997 --unwind auto >"$OUT" 2>"$ERR" &
        local tp=$!
        on_exit "kill $tp 2>/dev/null"
        wait_for 30 eval "ls -l /proc/$tp/fd 2>/dev/null | grep -q perf_event" ||
                fail "container, short-lived first: tprofd did not start sampling: $(cat "$ERR")"
        touch "$TEST_TMP/ctr2.go"
        wait "$tp" || fail "container, short-lived first: tprofd --once failed: $(cat "$ERR")"
        wait "$pid" || fail "container, short-lived first: $(cat "$TEST_TMP/ctr2.err")"
        unreadable=$(sed -nE 's/.*files read: [0-9]+ \(([0-9]+) unreadable\).*/\1/p' "$ERR")
        [ "${unreadable:-0}" -ge 1 ] ||
                fail "container, short-lived first: no run was gone when read, nothing checked: $(cat "$ERR")"
        # about a sixth of the samples are the short runs', most of them cut
        total=$(comm_total appgone)
        good=$(comm_matching appgone "^appgone;_start;.*;main;unwind_outer;$path")
        echo "container, short-lived first: $good of $total samples whole"
        [ "$total" -ge 10 ] && [ $((good * 100)) -ge $((total * 60)) ] ||
                fail "container, short-lived first: $good of $total whole: $(sort -t' ' -k2 -nr "$OUT" | grep '^appgone' | head -5); $(cat "$ERR")"
}
if command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
        container
        container_short_lived
else
        echo "container: unshare -m does not work here: not run"
fi

# --- a container's debug file: the .debug_frame-only library with its DWARF split off into a
# separate debug file, which only the container has (an overlay on its /usr/lib adds
# debug/.build-id/xx/yyyy.debug). On the host, with no debug file, the library's frames have no
# rules and --unwind dwarf cuts the stacks; in the container they are whole, by the debug file's
# .debug_frame, found through /proc/PID/root.
container_debug_file() {
        local d=$TEST_TMP/dbg top=$TEST_TMP/dbg-top lib=libtprof-unwind-fixture-debugframe.so bid
        mkdir -p "$d"
        cp "$TPROF_UNWIND_FIXTURE_DEBUGFRAME" "$d/app-dbg"
        "$TPROF_OBJCOPY" --only-keep-debug "$(dirname "$TPROF_UNWIND_FIXTURE_DEBUGFRAME")/$lib" "$TEST_TMP/lib.debug"
        "$TPROF_OBJCOPY" --strip-debug "$(dirname "$TPROF_UNWIND_FIXTURE_DEBUGFRAME")/$lib" "$d/$lib"
        bid=$(readelf -n "$d/$lib" | awk '/Build ID:/ { print $3 }')
        [ -n "$bid" ] || fail "container debug file: the library has no build id"
        mkdir -p "$top/debug/.build-id/${bid:0:2}"
        mv "$TEST_TMP/lib.debug" "$top/debug/.build-id/${bid:0:2}/${bid:2}.debug"
        # The program finds the stripped copy by its $ORIGIN run path, not the build's library.
        env -u LD_LIBRARY_PATH "$d/app-dbg" spin 4 &
        pid=$!
        sleep 0.2
        grep -q "$d/$lib" "/proc/$pid/maps" || fail "container debug file: the stripped library is not the one loaded"
        once 3 --pid "$pid" --unwind dwarf
        wait "$pid" || true
        good=$(comm_matching app-dbg "^app-dbg;_start;.*;main;unwind_outer;$path")
        echo "host, no debug file: $good of $(comm_total app-dbg) samples whole"
        [ "$(comm_total app-dbg)" -ge 3 ] || fail "host, no debug file: only $(comm_total app-dbg) samples: $(cat "$ERR")"
        [ "$good" -eq 0 ] || fail "without a debug file $good stacks went through a library that has no rules"

        env -u LD_LIBRARY_PATH unshare -m --propagation private sh -c \
                'mount -t overlay overlay -o "lowerdir=$1:/usr/lib" /usr/lib && exec "$2" spin 12' sh "$top" "$d/app-dbg" \
                2>"$TEST_TMP/ctr-dbg.err" &
        pid=$!
        on_exit "kill $pid 2>/dev/null"
        if ! wait_for 10 grep -q "$lib" "/proc/$pid/maps"; then
                if grep -q overlay "$TEST_TMP/ctr-dbg.err"; then
                        echo "container debug file: no overlay mount here ($(cat "$TEST_TMP/ctr-dbg.err")): not run"
                        return 0
                fi
                fail "container debug file: the program did not start: $(cat "$TEST_TMP/ctr-dbg.err")"
        fi
        [ ! -e "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ] || fail "the host has the debug file too"
        once 3 --pid "$pid" --unwind dwarf
        fixture_check container-debug-file app-dbg "^app-dbg;_start;.*;main;unwind_outer;$path"
        grep -q ' 1 given .debug_frame by a debug file' "$ERR" || fail "summary does not count the debug file: $(cat "$ERR")"
        # The same container with openat2() refused, as kernels before 5.6 do: its root is walked
        # one name at a time, and the debug file found all the same.
        if grep -q __asan_init "$TPROFD"; then
                echo "container debug file without openat2: not run (a sanitizer build takes no LD_PRELOAD)"
        else
                LD_PRELOAD=$TPROF_NO_OPENAT2 once 3 --pid "$pid" --unwind dwarf
                fixture_check container-debug-file-no-openat2 app-dbg "^app-dbg;_start;.*;main;unwind_outer;$path"
                grep -q ' 1 given .debug_frame by a debug file' "$ERR" ||
                        fail "container debug file without openat2: not counted: $(cat "$ERR")"
        fi
        kill "$pid" 2>/dev/null
        wait "$pid" || true

        # The host's own debug file for a process of the host: tprofd and the program in one mount
        # namespace that has the debug file, and openat2() refused as kernels before 5.6 do. A
        # process whose root is tprofd's is searched by plain paths, which need no openat2().
        if grep -q __asan_init "$TPROFD"; then
                echo "host debug file without openat2: not run (a sanitizer build takes no LD_PRELOAD)"
                return 0
        fi
        r=0
        env -u LD_LIBRARY_PATH unshare -m --propagation private sh -c '
                mount -t overlay overlay -o "lowerdir=$1:/usr/lib" /usr/lib || exit 99
                "$2" spin 4 &
                app=$!
                sleep 0.3
                LD_PRELOAD="$4" "$3" --once 3 --pid "$app" --unwind dwarf >"$5.out" 2>"$5.err"
                r=$?
                wait "$app"
                exit "$r"' sh "$top" "$d/app-dbg" "$TPROFD" "$TPROF_NO_OPENAT2" "$TEST_TMP/hostdbg" || r=$?
        if [ "$r" = 99 ]; then
                echo "host debug file without openat2: no overlay mount here: not run"
                return 0
        fi
        [ "$r" = 0 ] || fail "host debug file without openat2: exit $r: $(cat "$TEST_TMP/hostdbg.err")"
        OUT=$TEST_TMP/hostdbg.out ERR=$TEST_TMP/hostdbg.err fixture_check host-debug-file-no-openat2 app-dbg \
                "^app-dbg;_start;.*;main;unwind_outer;$path"
        grep -q ' 1 given .debug_frame by a debug file' "$TEST_TMP/hostdbg.err" ||
                fail "host debug file without openat2: not counted: $(cat "$TEST_TMP/hostdbg.err")"
}
if [ -n "${TPROF_OBJCOPY:-}" ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
        container_debug_file
else
        echo "container debug file: no objcopy or unshare -m: not run"
fi

# --- a 32-bit process: walked by its i386 CFI (4-byte words, i386's register numbers; .eh_frame or
# .debug_frame), and by its 4-byte frame pointers where it has none. The program built without frame
# pointers is whole by its CFI alone, and cut with frame pointers alone.
compat32_run() { # FIXTURE: starts it, in $pid, once it has exec'd; 1 if 32-bit programs do not run
        "$1" &
        pid=$!
        on_exit "kill $pid 2>/dev/null"
        # Sampled once it has exec'd (a busy machine may take a while to get there).
        if ! wait_for 10 grep -q compat32 "/proc/$pid/comm"; then
                kill -0 "$pid" 2>/dev/null || return 1
                fail "compat32: the program did not start"
        fi
}
compat32() {
        local whole='^compat32-fixtur;_start;compat32_main;compat32_outer;compat32_middle;compat32_leaf$'
        if ! compat32_run "$TPROF_COMPAT32_FIXTURE"; then
                echo "compat32: the kernel does not run 32-bit programs (no IA32 emulation): not run"
                return 0
        fi
        once 3 --pid "$pid" --unwind auto
        kill "$pid" 2>/dev/null || true
        fixture_check compat32 compat32-fixtur "$whole"

        compat32_run "$TPROF_COMPAT32_FIXTURE_NOFP" || fail "compat32 without frame pointers did not run"
        once_copies 3 --pid "$pid" --unwind dwarf
        fixture_check compat32-cfi compat32-fixtur "$whole"
        grep -Eq '[1-9][0-9]* whole by CFI' "$ERR" || fail "compat32 by CFI: not counted: $(cat "$ERR")"
        # Frame pointers alone cannot walk it: the test would not tell CFI from them otherwise.
        once 2 --pid "$pid" --unwind fp
        kill "$pid" 2>/dev/null || true
        good=$(comm_matching compat32-fixtur "$whole")
        echo "compat32 without frame pointers, --unwind fp: $good of $(comm_total compat32-fixtur) whole"
        [ "$(comm_total compat32-fixtur)" -ge 3 ] && [ $((good * 2)) -lt "$(comm_total compat32-fixtur)" ] ||
                fail "compat32 without frame pointers walked whole by frame pointers: $(head -5 "$OUT")"

        # Its .debug_frame alone (no .eh_frame).
        compat32_run "$TPROF_COMPAT32_FIXTURE_DEBUGFRAME" || fail "compat32 with .debug_frame only did not run"
        once_copies 3 --pid "$pid" --unwind dwarf
        kill "$pid" 2>/dev/null || true
        fixture_check compat32-debug-frame compat32-fixtur "$whole"

        # Samples without a copy are named by the kernel's reason (Linux 6.18, kernel/events/core.c):
        # a stack pointer on an unmapped page gets a copy of which copy_from_user_nmi() read nothing,
        # one of 0 none at all (perf_ustack_task_size() is 0). Nothing else may be counted.
        for mode in unmapped-sp:'whose copy was empty' zero-sp:'given no copy'; do
                "$TPROF_COMPAT32_FIXTURE_NOFP" "${mode%%:*}" &
                pid=$!
                on_exit "kill $pid 2>/dev/null"
                wait_for 10 grep -q compat32 "/proc/$pid/comm" || fail "compat32 ${mode%%:*}: the program did not start"
                once 2 --pid "$pid" --unwind dwarf
                kill "$pid" 2>/dev/null || true
                grep -o '[0-9]* samples without user stack.*' "$ERR"
                grep -Eq "; ([1-9][0-9]*) samples without user stack \\(\\1 ${mode#*:}\\)\$" "$ERR" ||
                        fail "compat32 ${mode%%:*}: not all counted as ${mode#*:}: $(grep 'user stacks' "$ERR")"
        done

        # In system calls through the 32-bit vDSO (the user registers are in __kernel_vsyscall):
        # walked out of it by the vDSO's own i386 CFI, read from the process's memory.
        "$TPROF_COMPAT32_FIXTURE_NOFP" vsyscall &
        pid=$!
        on_exit "kill $pid 2>/dev/null"
        wait_for 10 grep -q compat32 "/proc/$pid/comm" || fail "compat32 vsyscall: the program did not start"
        wait_for 10 grep -q vdso "/proc/$pid/maps" || fail "compat32 vsyscall: no [vdso] mapped"
        once_copies 3 --pid "$pid" --unwind dwarf
        kill "$pid" 2>/dev/null || true
        fixture_check compat32-vdso compat32-fixtur '^compat32-fixtur;_start;compat32_main'
        # Named from the same image (__kernel_vsyscall), then the kernel's frames.
        in_vdso=$(comm_matching compat32-fixtur 'compat32_syscall;')
        good=$(comm_matching compat32-fixtur \
                '^compat32-fixtur;_start;compat32_main;compat32_outer;compat32_middle;compat32_syscall;__kernel_vsyscall(;|$)')
        echo "compat32-vdso: $good of $in_vdso samples in the vDSO whole and named"
        [ $((in_vdso * 2)) -ge "$(comm_total compat32-fixtur)" ] && [ "$good" -eq "$in_vdso" ] ||
                fail "compat32 in the vDSO: $good of $in_vdso whole: $(head -5 "$OUT")"
}
if [ -n "${TPROF_COMPAT32_FIXTURE:-}" ]; then
        compat32
else
        echo "compat32: no 32-bit fixture (the compiler cannot build -m32 programs): not run"
fi
echo OK
