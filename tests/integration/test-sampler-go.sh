#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Go programs (kubelet, containerd and most of a Kubernetes node's agents): Go keeps frame pointers
# on x86-64 but writes no .eh_frame, so --unwind auto walks them by frame pointers. The chain ends
# where the saved frame pointer is 0, at runtime.goexit: the stacks are whole, named from the
# program's symbols, with no [unknown] cut at the root. Built here with Debian's Go (offline, no
# modules); skipped where there is none.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"
require_perf
[ "$(uname -m)" = x86_64 ] || skip "stacks are unwound from copies on x86-64 only"
command -v go >/dev/null || skip "no Go toolchain (contrib/setup.sh installs golang-go)"

BIN="$TEST_TMP/goburn"
(cd "$TPROF_SOURCE_ROOT/tests/helpers/go-burn" &&
        GOCACHE="$TEST_TMP/go-cache" GOPATH="$TEST_TMP/go-path" GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local \
                go build -o "$BIN" .) >"$ERR" 2>&1 || fail "go build failed: $(cat "$ERR")"

"$BIN" 6 &
pid=$!
on_exit "kill $pid 2>/dev/null"
sleep 0.3
once 3 --pid "$pid" --unwind auto

total=$(comm_total goburn)
whole=$(comm_matching goburn '^goburn;runtime\.goexit(\.abi0)?;runtime\.main;main\.main;main\.goburnOuter;main\.goburnMiddle;main\.goburnLeaf$')
cut=$(comm_matching goburn '^goburn;\[unknown\];')
echo "goburn samples: $total, whole from runtime.goexit: $whole, cut: $cut"
[ "$total" -ge 30 ] || fail "only $total samples of goburn in 3 s: $(head -c 2000 "$OUT")"
[ $((whole * 100)) -ge $((total * 80)) ] ||
        fail "$whole of $total samples walk runtime.goexit;runtime.main;main.main;...;main.goburnLeaf: $(sort -t' ' -k2 -nr "$OUT" | head -5)"
grep -q 'whole with frame pointers for some frames' "$ERR" || fail "summary: $(cat "$ERR")"
echo ok
