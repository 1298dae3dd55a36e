#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A recorded kmsg file of many records (dictionaries, continuation fragments, escapes, garbage and a
# sequence gap), far more than /dev/kmsg's rate limit would let a test write, replayed through the
# follower's file mode: everything well-formed arrives once and in order, the rest is counted.
# Unprivileged.
set -eu
. "$(dirname "$0")/logsrc-lib.sh"

REC=$TEST_TMP/recorded.kmsg
awk -v tag="$TAG" 'BEGIN {
        for (i = 0; i < 20000; i++) {
                if (i >= 5010 && i < 5110)
                        continue                                   # a gap of 100
                if (i % 1000 == 7) {
                        print "garbage line " i                    # 20 malformed
                        continue
                }
                if (i % 3 == 0)
                        printf "6,%d,%d,-;%s plain %d\n", i, i * 1000, tag, i
                else if (i % 3 == 1)
                        printf "4,%d,%d,c;%s fragment %d tab\\x09nl\\x0a\n", i, i * 1000, tag, i
                else
                        printf "14,%d,%d,-,caller=T%d;%s dict %d\n SUBSYSTEM=pci\n DEVICE=+pci:0000:00:%02d.0\n", i, i * 1000, i, tag, i, i % 32
        }
}' >"$REC"

expect_exit 0 "$FOLLOW" --kmsg "$REC" --timeout 60
cp "$OUT" "$TEST_TMP/replay.out"
cp "$ERR" "$TEST_TMP/replay.err"
n=$(tagged replay | wc -l)
expect_eq "records delivered" "$n" 19880
expect_eq "records counter" "$(counter replay kmsg records)" 19880
expect_eq "malformed" "$(counter replay kmsg malformed)" 20
# The gap, plus each garbage line's sequence number that never showed up.
expect_eq "lost" "$(counter replay kmsg lost)" 120
tagged replay | cut -f3 | sort -c -n -u || fail "sequence numbers not strictly increasing"
tagged replay | awk -F'\t' '$1 != "kmsg" { exit 1 }' || fail "wrong source"
# Escapes decoded (then shown escaped by the driver), facility decides the origin.
messages replay | grep -qx 'fragment 1 tab\\x09nl\\x0a' || fail "escapes not decoded"
tagged replay | awk -F'\t' '$5 == 1 && $2 != 0 { exit 1 } $5 == 0 && $2 != 1 { exit 1 }' || fail "origin"
[ "$(tagged replay | awk -F'\t' '$2 == 0' | wc -l)" -gt 6000 ] || fail "no user-facility records"
[ "$(head -1 "$TEST_TMP/replay.out" | cut -f4)" = 0 ] || fail "t_ns of usec 0"
[ "$(sed -n 2p "$TEST_TMP/replay.out" | cut -f4)" = 1000000 ] || fail "t_ns is not usec * 1000"
