#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Unusual binaries: one deleted after it started (still symbolized, through /proc/PID/map_files),
# a stripped one (frames fall back to the DSO name), and code mapped from a file that is not ELF
# (DSO named, symbol unknown). tprofd must get through all of them and exit 0.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"
require_perf
: "${TPROF_BURN_STRIPPED:?run through meson test}"

cp "$TPROF_BURN" "$TEST_TMP/burn-deleted"
"$TEST_TMP/burn-deleted" 5 &
p1=$!
"$TPROF_BURN_STRIPPED" 5 &
p2=$!
on_exit "kill $p1 $p2 2>/dev/null"
pids="$p1 $p2"
if [ "$(uname -m)" = x86_64 ]; then
        "$(burn_as burn-code)" --file-code "$TEST_TMP/code.bin" 5 &
        p3=$!
        on_exit "kill $p3 2>/dev/null"
fi
sleep 0.3
rm "$TEST_TMP/burn-deleted"

once 3

n=$(comm_total burn-deleted)
good=$(comm_matching burn-deleted ';main;burn_outer;burn_middle;burn_leaf$')
echo "deleted binary: $n samples, $good symbolized"
[ "$n" -ge 15 ] || fail "deleted binary has $n samples: $(head -c 2000 "$OUT")"
[ $((good * 100)) -ge $((n * 70)) ] || fail "deleted binary: $good of $n symbolized: $(grep '^burn-deleted;' "$OUT" | head)"

n=$(comm_total burn-stripped)
dso=$(comm_matching burn-stripped '\[burn-stripped\]$')
echo "stripped binary: $n samples, $dso leaf frames named by DSO"
[ "$n" -ge 15 ] || fail "stripped binary has $n samples"
[ $((dso * 100)) -ge $((n * 70)) ] || fail "stripped binary: $dso of $n leaves are [burn-stripped]: $(grep '^burn-stripped;' "$OUT" | head)"

if [ -n "${p3:-}" ]; then
        n=$(comm_total burn-code)
        code=$(comm_matching burn-code '\[code\.bin\]$')
        echo "non-ELF code file: $n samples, $code leaf frames named [code.bin]"
        [ "$n" -ge 15 ] || fail "non-ELF mapping process has $n samples"
        [ $((code * 100)) -ge $((n * 70)) ] || fail "non-ELF mapping: $code of $n leaves are [code.bin]: $(grep '^burn-code;' "$OUT" | head)"
fi
echo OK
