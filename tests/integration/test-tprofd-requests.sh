#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A thread for each request, end to end with the real daemon: a server (tests/helpers/burn
# --requests, its comm this run's own) makes its threads two at a time for 5 s around an ENA reset
# line, each a few milliseconds of work and gone, named after it and numbered on (SERVER-0,
# SERVER-1, ...): hundreds of names of a sample or two each, more than the 64 the manifest's
# threads list holds. Their work is the server's rise, which no thread alone shows: show, show
# --json and the page must rank it as one group, "SERVER-*", threads of SERVER, with all of their
# samples, those of the names the list had no room for too (its z the files' within a tenth), by
# the function that did the work. Other work on the machine may rise more: the group must be
# among the rises, not the first.
#
# With REQUESTS_MODE=--requests-idle (test-tprofd-requests-idle.sh) the threads are made by a
# thread of their own while the main thread only waits, never sampled, and the server is still
# there when the bundle is written, its requests' threads gone: the bundle names the server all
# the same, from /proc (it started before its threads' samples; or, where a thread was sampled on
# its way out, past its tid, and so under its process's name, by the main thread that still has
# that name).
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
require_burn

TOKEN=$(od -An -N2 -tx1 /dev/urandom | tr -d ' \n')
SERVER=rq-$TOKEN # its comm: this run's own, 7 bytes, and its threads' names at most 15
cp "$TPROF_BURN" "$TEST_TMP/$SERVER"

ena_rule ena-requests 10

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s
burn_both 40
sleep 16
MODE=${REQUESTS_MODE:---requests}
"$TEST_TMP/$SERVER" "$MODE" 5 &
SERVING=$!
on_exit "kill $SERVING 2>/dev/null"
sleep 2.5
echo "ena 0000:00:05.0 eth0: Trigger reset is on tprof-$TOKEN" >/dev/kmsg
if [ "$MODE" = --requests ]; then
        wait "$SERVING" || fail "the server failed"
fi

bundle_shown ena-requests
if [ "$MODE" != --requests ]; then
        kill -0 "$SERVING" || fail "the server was gone before the bundle"
        [ "$(ls "/proc/$SERVING/task" | wc -l)" = 1 ] || fail "the server's threads were not gone"
fi
PYTHONPATH="$(dirname "$0")" python3 - "$TEST_TMP/show.json" "$TEST_TMP/report.html" "$SERVER" "$B" <<'PY' || fail "$(sed -n '/In short/,/^$/p;/^Around/,/^Services/p' "$TEST_TMP/show.txt")"
import json, sys
from bundle_check import check_answers_agree, check_ranked, comm_counts, near_rise, page_analysis
show, page = json.load(open(sys.argv[1])), page_analysis(sys.argv[2])
server, bundle = sys.argv[3], sys.argv[4]
group = server + "-*"

near = comm_counts(bundle, "event.folded")
sl, base = comm_counts(bundle, "stacks.folded"), comm_counts(bundle, "baseline.folded")
threads = sorted(c for c in set(near) | set(sl) if c.startswith(server + "-"))
a1, n1, a2, n2, z = near_rise(near, sl, base, threads)
listed = [t for t in json.load(open(bundle + "/manifest.json"))["threads"] if t["comm"].startswith(server + "-")]
assert z >= 3 and a1 / n1 >= 2 * a2 / n2, (a1, n1, a2, n2, z)
print("the requests' threads: %d names, %d listed; %d samples of %d around the event; %d of %d in the rest; z=%.1f" %
      (len(threads), len(listed), a1, n1, a2, n2, z))
assert all(t["process"] == server for t in listed), listed

# Ranked as one group where its z puts it, with all of its threads' samples; its function the
# work's (burn_middle calls burn_leaf), never the server's own nor nothing said.
check_ranked(show, page, group, z, lambda fn: fn in ("burn_leaf", "burn_middle"))
for r in show["around_event"]["processes"]:
    assert r["process"] != group or r["thread_of"] == server, r
a = check_answers_agree(show, page)
if a and a["process"] == group and a["kind"] == "process":
    assert a["thread_of"] == server and a["top_function"] in ("burn_leaf", "burn_middle"), a
PY
echo "ok: $(sed -n '/^Around/,/^Services/p' "$TEST_TMP/show.txt" | grep -F "  $SERVER-*" || grep 'In short' "$TEST_TMP/show.txt")"
