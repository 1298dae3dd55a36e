# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers for the integration tests: failure reporting, exit-code checks, skipping, and a
# temporary directory that is removed on exit.

: "${TPROFD:?run through meson test}"
: "${TPROF_BUNDLE:?run through meson test}"

TEST_TMP=$(mktemp -d /tmp/tprof-test.XXXXXX)
ERR="$TEST_TMP/stderr"
OUT="$TEST_TMP/stdout"
CLEANUP_CMDS=()

cleanup() {
        local c
        for c in "${CLEANUP_CMDS[@]}"; do eval "$c" || true; done
        rm -rf "$TEST_TMP"
}
trap cleanup EXIT

on_exit() { CLEANUP_CMDS+=("$1"); }

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

skip() {
        echo "SKIP: $*" >&2
        exit 77
}

# expect_exit CODE CMD...: runs CMD with stdout in $OUT and stderr in $ERR, fails unless it exits CODE.
expect_exit() {
        local want=$1 got=0
        shift
        "$@" >"$OUT" 2>"$ERR" || got=$?
        [ "$got" = "$want" ] || fail "'$*' exited $got, expected $want; stderr: $(head -c 2000 "$ERR")"
}

require_root() { [ "$(id -u)" = 0 ] || skip "needs root"; }
