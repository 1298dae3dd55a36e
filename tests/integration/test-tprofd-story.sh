#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The story tprof was made for, end to end with the real daemon, real perf sampling and the real
# /dev/kmsg: a Go node agent (tests/helpers/go-burn paced: 0.5% of a CPU, the kubelet's steady
# state) runs beside two burners that keep both CPUs busy; for 5 s around an ENA reset line one of
# its functions takes 6.5% of a CPU more. The bundle must show that process rising in the event's
# own seconds with that function, and show, show --json and the page must give one answer. Other
# people's work on the machine may rise more: the agent must be among the rises, not the first.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ "$(uname -m)" = x86_64 ] || skip "stacks are unwound from copies on x86-64 only"
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
require_burn
command -v go >/dev/null || skip "no Go toolchain (contrib/setup.sh installs golang-go)"

AGENT=kl-$TOKEN # its comm: this run's own, 11 bytes
(cd "$TPROF_SOURCE_ROOT/tests/helpers/go-burn" &&
        GOCACHE="$TEST_TMP/go-cache" GOPATH="$TEST_TMP/go-path" GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local \
                go build -ldflags="-s -w" -o "$TEST_TMP/$AGENT" .) >"$ERR" 2>&1 || fail "go build: $(cat "$ERR")"

ena_rule ena-story 20

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s
burn_both 60
HOT="$TEST_TMP/hot"
"$TEST_TMP/$AGENT" 60 "$HOT" &
on_exit "kill $! 2>/dev/null"
story_burst 26

bundle_shown ena-story
PYTHONPATH="$(dirname "$0")" python3 - "$TEST_TMP/show.json" "$TEST_TMP/report.html" "$AGENT" "$B" <<'PY' || fail "$(sed -n '/In short/,/^$/p;/^Around/,/^Services/p' "$TEST_TMP/show.txt")"
import json, sys
from bundle_check import check_answers_agree, check_ranked, comm_counts, near_rise, page_analysis
show, page = json.load(open(sys.argv[1])), page_analysis(sys.argv[2])
agent, bundle = sys.argv[3], sys.argv[4]

# The agent's rise, from the files: the event's own seconds against the rest of the bundle.
near, sl, base = (comm_counts(bundle, f) for f in ("event.folded", "stacks.folded", "baseline.folded"))
a1, n1, a2, n2, z = near_rise(near, sl, base, [agent])
# 6.5% of a CPU for 5 s of the 10 s, of 2 CPUs' samples: about 1.6% more, from 0.25%
assert z >= 3 and a1 / n1 >= 2 * a2 / n2 and 0.005 < a1 / n1 < 0.05, (a1, n1, a2, n2, z)
# Ranked among the rises around the event where its z puts it, by the function of the call path.
check_ranked(show, page, agent, z, lambda f: f == "main.goburnLeaf")
# One answer: show's and the page's; where the agent is the answer, its function is named, and
# where the rise ran is the call path (goburnLeaf itself, the most specific function that holds
# it: not said again), or nothing when the call path is in nearly all of the agent's samples
# around the event (a busy machine leaves few of its steady ones there), as the text allows.
a = check_answers_agree(show, page)
if a and a["process"] == agent and a["kind"] == "process":
    assert a["top_function"] == "main.goburnLeaf", a
    assert a["under"] in (None, "main.goburnLeaf", "main.goburnMiddle", "main.goburnOuter"), a
PY
if grep -q "^   In short: $AGENT rose" "$TEST_TMP/show.txt"; then
        grep -qE "^   In short: $AGENT rose to [0-9.]+% of the samples in the 10s around the event .*; its function that rose most: main\.goburnLeaf(, most of the rise under main\.goburn(Middle|Outer))?\.$" \
                "$TEST_TMP/show.txt" || fail "the answer: $(grep 'In short' "$TEST_TMP/show.txt")"
fi
echo "ok: $(grep 'In short' "$TEST_TMP/show.txt")"
