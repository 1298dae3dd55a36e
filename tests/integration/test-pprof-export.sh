#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# pprof exports read by Go's own pprof tool: a real bundle's slice, its baseline and a ring range.
# The total samples equal those of the folded files, the top function of a known burner is its
# leaf, the labels carry its comm and pid, the incident's rule and host, and a baseline diffs; over
# a restart with another --freq each sample weighs its own window's period. The burner's mapping
# carries its build id (as readelf -n gives it), the kernel's the one /sys/kernel/notes holds, and
# the first mapping, pprof's "File:", is a program (not the kernel or a shared library).
set -eu
. "$(dirname "$0")/lib.sh"
: "${TPROF_BURN:?run through meson test}"

require_perf
command -v go >/dev/null || skip "go is not installed (Debian golang-go)"
# Go must never reach the network or the user's caches.
export HOME="$TEST_TMP/home" GOCACHE="$TEST_TMP/gocache" GOPATH="$TEST_TMP/gopath" GOTOOLCHAIN=local \
        GOFLAGS=-mod=mod GOPROXY=off GOTELEMETRY=off GOSUMDB=off
mkdir -p "$HOME"
go tool pprof -h >/dev/null 2>&1 || skip "go tool pprof does not run here"
pprof() { go tool pprof "$@" 2>>"$TEST_TMP/pprof.err"; }

SOCK="$TEST_TMP/control.sock"
export TPROF_CONTROL_SOCKET="$SOCK"
BURN=$TEST_TMP/pprofburn
cp "$TPROF_BURN" "$BURN"

start_tprofd --rules "$TPROF_SOURCE_ROOT/rules" --window 4s --control-socket "$SOCK"
wait_for 10 test -S "$SOCK" || fail "no control socket"
"$BURN" 12 &
BURN_PID=$!
on_exit "kill $BURN_PID 2>/dev/null"
# Kernel frames in the slice whatever else the machine runs: a copy that lives in getppid().
cp "$TPROF_BURN" "$TEST_TMP/pprofsys"
"$TEST_TMP/pprofsys" --syscall 12 &
SYS_PID=$!
on_exit "kill $SYS_PID 2>/dev/null"
sleep 5
ID=$("$TPROF_BUNDLE" capture --before 3s --after 2s --note 'pprof test') || fail "capture failed"
B="$STATE/incidents/$ID"
wait "$BURN_PID" || true
wait "$SYS_PID" || true

# folded_total FILE: the samples of a folded file.
folded_total() { awk '{ t += $NF } END { print t + 0 }' "$1"; }
# Build ids: the burner's, as binutils reads its NT_GNU_BUILD_ID note, and the running kernel's
# from its notes (ELF notes: 12-byte header, name and descriptor padded to 4; Linux v6.1
# kernel/ksysfs.c exposes the kernel's .notes section there), "" when unreadable.
BURN_BUILD_ID=$(readelf -n "$BURN" 2>/dev/null | awk '$1 == "Build" && $2 == "ID:" { print $3; exit }')
[ -n "$BURN_BUILD_ID" ] || skip "the burner has no build id (readelf -n)"
KERNEL_BUILD_ID=$(python3 -c 'import struct, sys
try:
    d = open("/sys/kernel/notes", "rb").read()
except OSError:
    d = b""
o = 0
while o + 12 <= len(d):
    n, s, t = struct.unpack_from("=III", d, o)
    o += 12
    name, o = d[o:o + n], o + (n + 3) // 4 * 4
    if t == 3 and name == b"GNU\0":
        print(d[o:o + s].hex())
        break
    o += (s + 3) // 4 * 4')
# check_mappings FILE WHAT [any]: FILE's mappings, as pprof -raw lists them ("ID: START/LIMIT/OFFSET
# FILE BUILDID [FLAGS]", google/pprof profile.go as Go 1.19 vendors it); with any, the burner may
# be missing (a range after it ended) and so may the kernel, and the first mapping may be the
# kernel (an idle range). The burner's mapping is the one its burn_leaf's locations name (samples
# "COUNT VALUE: LOCATION...", then their labels, pid:[PID pid] among them; locations "ID: ADDRESS
# M=MAPPING FUNCTION ..."), whatever its file: pprof merges mappings of one build id, size (rounded
# up to 4 KiB) and offset (Mapping.key(), profile/merge.go, ibid.), and another copy of the burner
# (pprofsys, or a program built from the same sources) may have had frames over the same range,
# the name of the first standing for both.
check_mappings() {
        pprof -raw "$1" >"$TEST_TMP/raw"
        awk '/^Mappings/ { m = 1; next } m' "$TEST_TMP/raw" >"$TEST_TMP/mappings"
        awk -v pid="pid:[$BURN_PID" '
                /^Samples/ { s = 1; next }
                /^Locations/ { s = 0; l = 1; next }
                /^Mappings/ { l = 0; m = 1; next }
                s && $2 ~ /^[0-9]+:$/ { n = split($0, ids); next }
                s && index($0, pid " pid]") { for (i = 3; i <= n; i++) mine[ids[i]] = 1 }
                l && $3 ~ /^M=/ && $4 == "burn_leaf" && (substr($1, 1, length($1) - 1) in mine) { use[substr($3, 3) ":"] = 1 }
                m && ($1 in use) { print $3, $4 }' "$TEST_TMP/raw" >"$TEST_TMP/burn.mappings"
        [ -s "$TEST_TMP/burn.mappings" ] || [ "${3:-}" = any ] ||
                fail "$2: no mapping of $BURN's burn_leaf: $(cat "$TEST_TMP/mappings")"
        while read -r file id; do
                [ "$id" = "$BURN_BUILD_ID" ] ||
                        fail "$2: the mapping of $BURN ($file) has build id '$id', readelf -n says $BURN_BUILD_ID"
        done <"$TEST_TMP/burn.mappings"
        if [ -n "$KERNEL_BUILD_ID" ] && [ "${3:-}" != any ]; then
                awk '$3 == "[kernel.kallsyms]" { print $4 }' "$TEST_TMP/mappings" | grep -qx "$KERNEL_BUILD_ID" ||
                        fail "$2: [kernel.kallsyms] lacks the kernel's build id $KERNEL_BUILD_ID: $(cat "$TEST_TMP/mappings")"
        fi
        # "File:" (the first mapping's base name) is the program most samples ran: while the two
        # burners run, neither the kernel, [unknown] nor a shared library
        [ "${3:-}" = any ] || pprof -top "$1" | grep -E '^File: ' | grep -qvE '^File: (\[|.*\.so(\.|$))' ||
                fail "$2: pprof names no program: $(pprof -top "$1" | head -3)"
}

# raw_total FILE: the samples (first value) of a profile, from pprof -raw.
raw_total() {
        pprof -raw "$1" | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ { t += $1 } END { print t + 0 }'
}

# --- the bundle's slice
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export "$ID" --format pprof -o "$TEST_TMP/slice.pb.gz"
[ "$(head -c 2 "$TEST_TMP/slice.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "not a gzip file"
want=$(folded_total "$B/stacks.folded")
got=$(raw_total "$TEST_TMP/slice.pb.gz")
[ "$want" -gt 0 ] || fail "empty slice"
[ "$got" = "$want" ] || fail "pprof -raw has $got samples, stacks.folded $want: $(tail -5 "$TEST_TMP/pprof.err")"
echo "slice: $got samples in pprof and folded"

# The burner's top function is its leaf, and its samples match its folded stacks.
pprof -top -sample_index=samples -tagfocus=comm=pprofburn "$TEST_TMP/slice.pb.gz" >"$OUT" || fail "pprof -top failed"
top=$(awk '/flat%/ { getline; print $NF; exit }' "$OUT")
[ "$top" = burn_leaf ] || fail "top function '$top', expected burn_leaf: $(head -20 "$OUT")"
burn_folded=$(awk '$0 ~ /^pprofburn;/ { t += $NF } END { print t + 0 }' "$B/stacks.folded")
# "Showing nodes accounting for N, P% of TOTAL total": with no node dropped (whole stacks make many
# small ones), N is what the tag filter kept.
pprof -top -nodefraction=0 -nodecount=1000000 -sample_index=samples -tagfocus=comm=pprofburn "$TEST_TMP/slice.pb.gz" \
        >"$OUT" || fail "pprof -top -nodefraction=0 failed"
burn_pprof=$(awk '/^Showing nodes accounting for/ { v = $5; sub(/,$/, "", v); print v; exit }' "$OUT")
[ "$burn_folded" -gt 0 ] || fail "the burner has no samples in stacks.folded"
[ "$burn_pprof" = "$burn_folded" ] || fail "comm=pprofburn: $burn_pprof samples in pprof, $burn_folded in folded: $(head -5 "$OUT")"

# Labels: comm, pid, cpu, tid, time, and the incident's rule, id and host.
pprof -tags "$TEST_TMP/slice.pb.gz" >"$OUT" || fail "pprof -tags failed"
for want in "pprofburn" "$BURN_PID" "manual" "$ID" "$(hostname)"; do
        grep -qF -- "$want" "$OUT" || fail "pprof -tags lacks '$want': $(head -40 "$OUT")"
done
for key in cpu pid tid comm time rule incident host slice; do
        grep -qE "^ *$key:" "$OUT" || fail "pprof -tags lacks label $key: $(head -40 "$OUT")"
done
# Every sample carries cpu, pid and tid, 0 included (Go's reader drops a 0 without a unit): each
# label's total is the profile's.
for key in cpu pid tid; do
        t=$(awk -v k="$key" '$1 == k ":" { print $3; exit }' "$OUT")
        c=$(awk '$1 == "comm:" { print $3; exit }' "$OUT")
        [ -n "$t" ] && [ "$t" = "$c" ] || fail "label $key totals $t, the profile $c: $(head -40 "$OUT")"
done
pprof -top -tagfocus=pid="$BURN_PID" -sample_index=samples "$TEST_TMP/slice.pb.gz" >"$OUT" || fail "pid tagfocus failed"
grep -q burn_leaf "$OUT" || fail "tagfocus pid=$BURN_PID does not show burn_leaf"
pprof -raw "$TEST_TMP/slice.pb.gz" >"$OUT"
grep -q "kernel.kallsyms" "$OUT" || fail "no [kernel.kallsyms] mapping: $(grep -A5 Mappings "$OUT")"
check_mappings "$TEST_TMP/slice.pb.gz" slice
# -list prints a function's source file, which tprof does not know: not the burner's binary as text,
# nor any other file; pprof finds the function and says it has no source.
pprof -list '^burn_leaf$' "$TEST_TMP/slice.pb.gz" >"$OUT" || fail "pprof -list finds no burn_leaf: $(tail -3 "$TEST_TMP/pprof.err")"
! grep -qaF "ELF" "$OUT" || fail "pprof -list prints the binary as source: $(head -c 300 "$OUT" | cat -v)"
! grep -qF "burn_leaf in $BURN" "$OUT" || fail "pprof -list takes the binary for a source file: $(head -3 "$OUT")"
grep -qxF "No source information for burn_leaf" "$OUT" ||
        fail "pprof -list does not say that burn_leaf has no source: $(head -c 300 "$OUT" | cat -v)"

# --- the baseline, and a diff against it
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export "$ID" --format pprof --baseline -o "$TEST_TMP/base.pb.gz"
# A full disk is said as such (it was "Input/output error").
expect_exit 1 "$TPROF_BUNDLE" -D "$STATE" export "$ID" --format pprof -o /dev/full
grep -q "No space left on device" "$ERR" || fail "export to a full disk: $(cat "$ERR")"
want=$(folded_total "$B/baseline.folded")
got=$(raw_total "$TEST_TMP/base.pb.gz")
[ "$got" = "$want" ] || fail "baseline: pprof $got samples, baseline.folded $want"
check_mappings "$TEST_TMP/base.pb.gz" baseline
pprof -top -sample_index=samples -diff_base "$TEST_TMP/base.pb.gz" "$TEST_TMP/slice.pb.gz" >"$OUT" ||
        fail "pprof -diff_base failed: $(tail -5 "$TEST_TMP/pprof.err")"
grep -q "flat%" "$OUT" || fail "no diff output: $(head "$OUT")"
# What rose as show says it, in shares of the samples: the diff the README gives scales the slice
# to the baseline's total first (-normalize; pprof rounds every scaled sample, so on the default
# cpu/nanoseconds, not on samples/count whose 1s would round to 0 or 1), and a function's flat%
# is then its share in the slice less its share in the baseline.
pprof -top -normalize -nodefraction=0 -nodecount=1000000 -diff_base "$TEST_TMP/base.pb.gz" "$TEST_TMP/slice.pb.gz" \
        >"$OUT" || fail "pprof -normalize -diff_base failed: $(tail -5 "$TEST_TMP/pprof.err")"
dgot=$(awk '$NF == "burn_leaf" { p = $2; sub(/%$/, "", p); print ($1 ~ /^-/ ? -p : p); exit }' "$OUT")
dwant=$(awk '$NF ~ /^[0-9]+$/ { n = $NF; t[FILENAME] += n; if ($0 ~ /;burn_leaf [0-9]+$/) b[FILENAME] += n }
        END { s = ARGV[1]; B = ARGV[2]; printf "%.2f\n", 100 * (b[s] / t[s] - b[B] / t[B]) }' "$B/stacks.folded" "$B/baseline.folded")
python3 -c 'import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 0.1)' "${dgot:-nan}" "$dwant" ||
        fail "burn_leaf: the normalized diff says ${dgot:-nothing}%, the shares in the folded files differ by $dwant%: $(head -12 "$OUT")"
echo "baseline: $got samples; diff ok"

# Durations, as pprof prints them: the slice's is its span; the baseline's the time its samples come
# from, its span without the slice, so that "Total samples = X (Y%)" is what the CPUs did then.
# duration_of FILE: pprof's "Duration: 3.83s," of FILE, in seconds.
duration_of() {
        pprof -top "$1" | python3 -c 'import re, sys
m = re.search(r"^Duration: ([0-9.]+)(ms|s|mins|hrs),", sys.stdin.read(), re.M)
print(float(m.group(1)) * {"ms": 0.001, "s": 1, "mins": 60, "hrs": 3600}[m.group(2)] if m else "none")'
}
read -r want_slice want_base < <(python3 -c 'import json, sys
m = json.load(open(sys.argv[1])); s, b = m["slice"], m["baseline"]
cut = max(0, min(b["to_perf_ns"], s["to_perf_ns"]) - max(b["from_perf_ns"], s["from_perf_ns"]))
print((s["to_perf_ns"] - s["from_perf_ns"]) / 1e9, (b["to_perf_ns"] - b["from_perf_ns"] - cut) / 1e9)' "$B/manifest.json")
for f in "slice $want_slice" "base $want_base"; do
        set -- $f
        got=$(duration_of "$TEST_TMP/$1.pb.gz")
        python3 -c 'import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 0.011)' "$got" "$2" 2>/dev/null ||
                fail "$1: pprof says the profile lasts ${got}s, its samples come from ${2}s: $(pprof -top "$TEST_TMP/$1.pb.gz" | head -8)"
done
echo "durations: slice ${want_slice}s, baseline ${want_base}s"

# --- a bundle whose windows are damaged or gone: the export says so, and how short it is
C="$TEST_TMP/copy"
mkdir -p "$C/incidents"
cp -a "$B" "$C/incidents/"
last=$(ls "$C/incidents/$ID/windows" | tail -1)
rm "$C/incidents/$ID/windows/$last"
echo garbage >"$C/incidents/$ID/windows/$last"
expect_exit 0 "$TPROF_BUNDLE" -D "$C" export "$ID" --format pprof -o "$TEST_TMP/short.pb.gz"
got=$(raw_total "$TEST_TMP/short.pb.gz")
want=$(folded_total "$B/stacks.folded")
[ "$got" -lt "$want" ] || fail "without window $last the profile still has $got of $want samples"
grep -q "Skipping unreadable window '.*$last'" "$ERR" || fail "no word of the unreadable window: $(cat "$ERR")"
grep -q "holds $got of the $want samples the manifest counts in the slice" "$ERR" ||
        fail "no word of the missing samples: $(cat "$ERR")"
# The slice cut again through a view says so too; a filter leaves samples out by design.
expect_exit 0 "$TPROF_BUNDLE" -D "$C" export "$ID" --format folded --by unit
grep -q "Skipping unreadable window '.*$last'" "$ERR" || fail "--by unit: no word of the unreadable window: $(cat "$ERR")"
grep -q "holds [0-9]* of the $want samples the manifest counts in the slice" "$ERR" ||
        fail "--by unit: no word of the missing samples: $(cat "$ERR")"
"$TPROF_BUNDLE" -D "$C" export "$ID" --format folded --unit '[no-unit]' >"$OUT" 2>"$ERR" || true
! grep -q "the manifest counts" "$ERR" || fail "a filtered export judged against the whole slice: $(cat "$ERR")"
# Without its perf-script file the perf script is made from the windows: said as well.
rm -f "$C/incidents/$ID/"*.perf-script*
expect_exit 0 "$TPROF_BUNDLE" -D "$C" export "$ID" --format perf-script
grep -q "holds [0-9]* of the $want samples the manifest counts in the slice" "$ERR" ||
        fail "perf script from windows: no word of the missing samples: $(cat "$ERR")"
# No window left at all: said as such, not as an empty slice.
rm "$C/incidents/$ID/windows/"*
expect_exit 1 "$TPROF_BUNDLE" -D "$C" export "$ID" --format pprof -o "$TEST_TMP/none.pb.gz"
grep -q "has no readable windows left" "$ERR" || fail "pprof without windows: $(cat "$ERR")"
expect_exit 1 "$TPROF_BUNDLE" -D "$C" export "$ID" --format folded --by unit
grep -q "has no readable windows left" "$ERR" || fail "--by unit without windows: $(cat "$ERR")"
# The intact bundle's exports say nothing of the kind.
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export "$ID" --format folded --by unit
! grep -q "the manifest counts" "$ERR" || fail "an intact bundle's view export warns: $(cat "$ERR")"
echo "damaged bundle: $got of $want samples, said so"

# --- a ring range, against the folded export of the same range
T0=$(python3 -c 'import time; print("@%.3f" % (time.time() - 9))')
T1=$(python3 -c 'import time; print("@%.3f" % (time.time() - 2))')
# The daemon flushes its samples every 5 s: stopped first, so that no flush between the two
# exports adds the range's last seconds to the second (a busy machine's ASan run once had 1329
# and 1375). Started again for the restart below.
stop_tprofd
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from "$T0" --to "$T1" --format folded -o "$TEST_TMP/range.folded"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from "$T0" --to "$T1" --format pprof -o "$TEST_TMP/range.pb.gz"
want=$(folded_total "$TEST_TMP/range.folded")
got=$(raw_total "$TEST_TMP/range.pb.gz")
[ "$want" -gt 0 ] && [ "$got" = "$want" ] || fail "range: pprof $got samples, folded $want"
pprof -tags "$TEST_TMP/range.pb.gz" >"$OUT"
grep -qF "range" "$OUT" || fail "range export lacks slice label: $(head -30 "$OUT")"
check_mappings "$TEST_TMP/range.pb.gz" range any
echo "range: $got samples in pprof and folded"
start_tprofd --rules "$TPROF_SOURCE_ROOT/rules" --window 4s --control-socket "$SOCK"

# --- a range over a restart with another --freq: each sample weighs its own window's period
# (1e9 / 97 Hz, the default, before; 1e9 / 199 Hz after), not the newest window's.
"$BURN" 8 &
on_exit "kill $! 2>/dev/null"
sleep 2
T0=$(python3 -c 'import time; print("@%.3f" % (time.time() - 1.5))')
stop_tprofd
start_tprofd --rules "$TPROF_SOURCE_ROOT/rules" --window 4s --freq 199 --control-socket "$SOCK"
sleep 3
T1=$(python3 -c 'import time; print("@%.3f" % (time.time() - 0.5))')
stop_tprofd # its window flushed, whatever the flush interval had come to
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from "$T0" --to "$T1" --format pprof -o "$TEST_TMP/mixed.pb.gz"
weights=$(pprof -raw "$TEST_TMP/mixed.pb.gz" |
        awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ { sub(/:$/, "", $2); print $2 }' |
        sort -nu | tr '\n' ' ')
[ "$weights" = "5025125 10309278 " ] || fail "samples over a --freq 97 to 199 restart weigh '$weights' ns"
echo "restart: samples weigh ${weights% } ns"

# Binary output is refused on a terminal only; a bad format is a usage error.
expect_exit 64 "$TPROF_BUNDLE" -D "$STATE" export --from "$T0" --to "$T1" --format protobuf
expect_exit 64 "$TPROF_BUNDLE" -D "$STATE" export "$ID" --format folded --baseline
echo ok
