#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The command lines tell the truth: --help and --version succeed, unknown options and bad values
# are usage errors (64) that name the problem.
set -eu
. "$(dirname "$0")/lib.sh"

"$TPROFD" --help | grep -q -- '--test-rules' || fail "tprofd --help does not mention --test-rules"
"$TPROFD" --version | grep -qE '^tprofd [0-9]+\.[0-9]+' || fail "tprofd --version"
"$TPROF_BUNDLE" --help | grep -qE '^  ls ' || fail "tprof-bundle --help lists no ls"
"$TPROF_BUNDLE" --version | grep -qE '^tprof-bundle [0-9]' || fail "tprof-bundle --version"

expect_exit 64 "$TPROFD" --no-such-option
grep -q "Unknown option '--no-such-option'" "$ERR" || fail "unknown option not named: $(cat "$ERR")"
expect_exit 64 "$TPROFD" --freq 0
grep -q "Invalid --freq '0'" "$ERR" || fail "bad --freq not named"
expect_exit 64 "$TPROFD" --freq
grep -q "needs an argument" "$ERR" || fail "missing argument not reported"
expect_exit 64 "$TPROFD" --window 1s
expect_exit 64 "$TPROFD" --window banana
expect_exit 64 "$TPROFD" --pid 1
expect_exit 64 "$TPROFD" --max-bundles 0
expect_exit 64 "$TPROFD" --max-bundle-bytes lots
expect_exit 64 "$TPROFD" stray-argument
expect_exit 64 "$TPROF_BUNDLE"
expect_exit 64 "$TPROF_BUNDLE" frobnicate
expect_exit 64 "$TPROF_BUNDLE" --bogus ls
echo "ok"
