#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# report.html in a real browser (Debian's chromium through chromium-driver and python3-selenium):
# the real daemon samples a burner with real perf, a line written into the real /dev/kmsg triggers
# an origin:any rule, and the bundle's report.html, opened in headless Chromium, must show in each
# heatmap cell exactly the samples its stacks.perf-script file has there (Flamescope's binning),
# give the flame graph of exactly the samples a mouse drag selects (over the heatmap and over the
# per-CPU lanes), highlight a search, mark the log lines on the time axis and fetch nothing.
# `tprof-bundle report ID` makes the same file again; `report --from --to` makes one for a range
# of the ring that agrees with `export --format perf-script` of that range; a fixture bundle's
# report shows show's one-line answer and the unusual ranking (or, against a baseline too small to
# compare with, says so as show does); a line matched after a restart, logged while tprofd was
# down, is marked on the heatmap, which spans the slice, and a bundle without samples shows its
# slice, its log and empty lanes, a log longer than the page keeps keeps its trigger line and says
# what it left out, and a call tree past two million nodes is cut, says so and stays small. The checker
# must fail on a perf-script file that lost one sample. Screenshots: build/tests/report-browser/.
set -eu
. "$(dirname "$0")/lib.sh"

require_perf
[ -w /dev/kmsg ] || skip "/dev/kmsg is not writable"
require_burn
[ -x /usr/bin/chromium ] || skip "no chromium (contrib/setup.sh installs chromium, chromium-driver, python3-selenium)"
[ -x /usr/bin/chromedriver ] || skip "no chromedriver (Debian package chromium-driver)"
PY=
for p in /usr/bin/python3 python3; do
        if "$p" -c 'import selenium' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || skip "no python3-selenium"
CHECK="$TPROF_SOURCE_ROOT/tests/helpers/report-browser.py"
SHOTS="$TPROF_BUILD_ROOT/tests/report-browser"
rm -rf "$SHOTS"
mkdir -p "$SHOTS"

cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: report-any
    source: kernel
    origin: any
    match: 'tprof-report-$TOKEN (?<word>\w+)'
    before: 8s
    after: 3s
    cooldown: 60s
  - name: report-down
    source: kernel
    origin: any
    match: 'tprof-report-$TOKEN-down'
    before: 8s
    after: 3s
  - name: report-past
    source: kernel
    origin: any
    match: 'tprof-report-$TOKEN-past'
    before: 8s
    after: 3s
RULES

start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s --control-socket ""
"$TPROF_BURN" 20 &
BURN_PID=$!
on_exit "kill $BURN_PID 2>/dev/null"
sleep 9
echo "tprof-report-$TOKEN trigger" >/dev/kmsg
sleep 1
echo "tprof-report-$TOKEN-other a line that is not a match" >/dev/kmsg

bundle_wait report-any 15
ID=$(basename "$B")

[ -s "$B/report.html" ] || fail "the bundle has no report.html: $(ls "$B")"
[ "$(stat -c %a "$B/report.html")" = 640 ] || fail "report.html mode $(stat -c %a "$B/report.html")"
! compgen -G "$B/.report.html.tmp-*" >/dev/null || fail "a temporary report file was left behind"
echo "report.html: $(stat -c %s "$B/report.html") bytes for $(grep -c '^[^[:space:]#]' "$B/stacks.perf-script") samples"

# The CLI makes the same page from the same files.
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" report "$ID" -o "$TEST_TMP/again.html"
cmp "$B/report.html" "$TEST_TMP/again.html" || fail "tprof-bundle report differs from the bundle's report.html"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" show "$ID"
grep -q "report.html" "$OUT" || fail "show does not point to report.html"

# The browser checks on the bundle's report.
"$PY" "$CHECK" "$B/report.html" "$B/stacks.perf-script" "$SHOTS" --search burn ||
        fail "the bundle's report failed in the browser (exit $?)"

# The checker can fail: one sample fewer in the perf-script file than in the page.
awk 'BEGIN { n = 0 } /^[^[:space:]#]/ { n++; if (n == 50) { skip = 1; next } } /^$/ { skip = 0 } !skip' \
        "$B/stacks.perf-script" >"$TEST_TMP/one-less.perf-script"
rc=0
"$PY" "$CHECK" "$B/report.html" "$TEST_TMP/one-less.perf-script" "$TEST_TMP" >"$TEST_TMP/neg.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "the checker did not notice a missing sample (exit $rc): $(tail -3 "$TEST_TMP/neg.out")"

# A range of the ring: the report agrees with the perf-script export of the same range. The
# daemon is stopped first (it writes what it holds as it stops): while it runs, a chunk that ends
# in the range can land between the two commands on a slow machine, and the export then holds
# samples the report did not.
stop_tprofd
FROM=$(date -u -d "@$(($(date +%s) - 9))" +%Y-%m-%dT%H:%M:%SZ)
TO=$(date -u -d "@$(($(date +%s) - 3))" +%Y-%m-%dT%H:%M:%SZ)
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" report --from "$FROM" --to "$TO" -o "$TEST_TMP/range.html"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from "$FROM" --to "$TO" --format perf-script -o "$TEST_TMP/range.perf-script"
mkdir -p "$SHOTS/range"
"$PY" "$CHECK" "$TEST_TMP/range.html" "$TEST_TMP/range.perf-script" "$SHOTS/range" --no-log ||
        fail "the ring range's report failed in the browser"
expect_exit 64 "$TPROF_BUNDLE" -D "$STATE" report --from "$FROM"
expect_exit 64 "$TPROF_BUNDLE" -D "$STATE" report "$ID" --from "$FROM" --to "$TO"

# A line logged while tprofd was down, matched when it starts again (it resumes after the last
# record it handled): the slice ends before the new run's first sample, so the trigger comes after
# the last sample. The heatmap still spans the slice and marks the trigger and every log line.
echo "tprof-report-$TOKEN-down while the daemon is stopped" >/dev/kmsg
sleep 4
start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s --control-socket ""
down_ready() { compgen -G "$STATE/incidents/*-report-down-*/manifest.json" >/dev/null; }
wait_for 20 down_ready || fail "no bundle of the line logged while tprofd was down: $(tail -20 "$TEST_TMP/tprofd.log")"
stop_tprofd
DOWN=$(compgen -G "$STATE/incidents/*-report-down-*")
mkdir -p "$SHOTS/down"
"$PY" "$CHECK" "$DOWN/report.html" "$DOWN/stacks.perf-script" "$SHOTS/down" ||
        fail "the report of a trigger after the last sample failed in the browser"

# A bundle without samples: a kernel line of five minutes ago, replayed from a file into a daemon
# on a fresh state directory, whose ring begins now.
uptime_s=$(cut -d. -f1 /proc/uptime)
if [ "$uptime_s" -gt 400 ]; then
        STATE="$TEST_TMP/state-past"
        printf '6,1,%d,-;tprof-report-%s-past a line from before tprofd ran\n' $(((uptime_s - 300) * 1000000)) "$TOKEN" \
                >"$TEST_TMP/past.kmsg"
        start_tprofd --rules "$TEST_TMP/rules.yaml" --window 4s --control-socket "" --kmsg "$TEST_TMP/past.kmsg"
        past_ready() { compgen -G "$STATE/incidents/*-report-past-*/manifest.json" >/dev/null; }
        wait_for 20 past_ready || fail "no bundle of the replayed line: $(tail -20 "$TEST_TMP/tprofd.log")"
        stop_tprofd
        PAST=$(compgen -G "$STATE/incidents/*-report-past-*")
        grep -q '"status": *"no-coverage"' "$PAST/manifest.json" || fail "the replayed line's bundle has samples: $(cat "$PAST/manifest.json")"
        mkdir -p "$SHOTS/empty"
        "$PY" "$CHECK" "$PAST/report.html" - "$SHOTS/empty" --empty || fail "the report without samples failed in the browser"
else
        echo "up for only ${uptime_s}s: the bundle without samples is not tried"
fi

# The header and the unusual ranking, on the fixture whose answer is known (kubelet rose). The
# pages are checked at the end, in one browser.
HEADERS=()
FX="$TEST_TMP/fixture"
python3 "$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py" "$FX" anomaly --id 5e1f0a2b
expect_exit 0 "$TPROF_BUNDLE" -D "$FX" report 5e1f -o "$TEST_TMP/fixture.html"
HEADERS+=(-- "$TEST_TMP/fixture.html" --answer "kubelet rose to")
# The same bundle as a start of tprofd finishes it after a crash: the header says so, as show does.
FXI="$TEST_TMP/fixture-interrupted"
python3 "$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py" "$FXI" anomaly --id 5e1f0a2c
python3 - "$FXI"/incidents/*-5e1f0a2c/manifest.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["interrupted"] = {"resumed_utc": "2026-11-21T14:30:09.500000Z"}
json.dump(m, open(sys.argv[1], "w"))
PY
expect_exit 0 "$TPROF_BUNDLE" -D "$FXI" report 5e1f0a2c -o "$TEST_TMP/fixture-interrupted.html"
HEADERS+=(-- "$TEST_TMP/fixture-interrupted.html" --answer "kubelet rose to"
          --fact "tprofd stopped while recording the slice; its next start, at 2026-11-21T14:30:09.500000Z, finished the bundle")
# A burst in the event's own seconds alone: the answer names it from event.folded, as show does,
# and the ranking has its rows around the event.
python3 "$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py" "$TEST_TMP/burst" burst --id 0b0b0b0b
expect_exit 0 "$TPROF_BUNDLE" -D "$TEST_TMP/burst" report 0b0b -o "$TEST_TMP/burst.html"
HEADERS+=(-- "$TEST_TMP/burst.html" --answer "kubelet rose to 6.5% of the samples around the event" \
        --row "process around the event kubelet" --row "function around the event mem_cgroup_nr_lru_pages")
# A NIC's receive storm on the way out of its interrupts, in the idle task and in postgres: the
# page names it "[irq]" as show does, and its rows highlight the interrupt's frames (eight of the
# NIC's and four of the timer's in the idle task, eight of the NIC's in postgres) and neither the
# idle loop nor postgres's own frames beneath them. Its window holds the fixture's
# stacks.perf-script, so that the flame graph has the samples.
if [ -n "${STORE_TOOL:-}" ] && [ -x "$STORE_TOOL" ]; then
        python3 "$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py" "$TEST_TMP/irqidle" irqidle --id 1a1a1a1a
        IRQ=$(compgen -G "$TEST_TMP/irqidle/incidents/*-1a1a1a1a")
        "$STORE_TOOL" import "$TEST_TMP/irqidle-ring" 120 <"$IRQ/stacks.perf-script" >/dev/null
        rm -f "$IRQ"/windows/*
        cp "$TEST_TMP"/irqidle-ring/*.tpw "$IRQ/windows/"
        expect_exit 0 "$TPROF_BUNDLE" -D "$TEST_TMP/irqidle" report 1a1a -o "$TEST_TMP/irqidle.html"
        HEADERS+=(-- "$TEST_TMP/irqidle.html" --answer "[irq] rose to 15.1% of the samples around the event" \
                --row "process around the event [irq]" --marks "process around the event [irq]" 20 \
                --marks "function around the event ena_clean_rx_irq in [irq]" 2)
fi
# A process that stopped at the event: the page says it fell, as show does.
python3 "$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py" "$TEST_TMP/drop" drop --id 0e0e0e0e
expect_exit 0 "$TPROF_BUNDLE" -D "$TEST_TMP/drop" report 0e0e -o "$TEST_TMP/drop.html"
HEADERS+=(-- "$TEST_TMP/drop.html" --answer "postgres fell to 0.0% of the samples around the event")
# A named thread: the page says whose thread it is, as show does.
python3 "$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py" "$TEST_TMP/thread" thread --id 0f0f0f0f
expect_exit 0 "$TPROF_BUNDLE" -D "$TEST_TMP/thread" report 0f0f -o "$TEST_TMP/thread.html"
HEADERS+=(-- "$TEST_TMP/thread.html" --answer "VM_Thread of java (unit app.service) rose to 6.5% of the samples")
# One thread of a pool carried the pool's rise: the page names it, the group after it, as show
# does; spread over the pool's threads, the pool.
for k in stuck pool; do
        python3 "$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py" "$TEST_TMP/$k" $k --id 0b0b0b0b
        expect_exit 0 "$TPROF_BUNDLE" -D "$TEST_TMP/$k" report 0b0b -o "$TEST_TMP/$k.html"
done
HEADERS+=(-- "$TEST_TMP/stuck.html" --answer "pool-2 of mt (one of its threads pool-*; unit mt.service) rose to 6.5% of the samples")
HEADERS+=(-- "$TEST_TMP/pool.html" --answer "pool-* of mt (unit mt.service) rose to 6.5% of the samples")
# No rise passed the answer's floors: the page says so before the strongest, as show does.
python3 "$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py" "$TEST_TMP/drift" drift --id 0d0d0d0d
# ... and a storm of 20,100 lines before its trigger (the daemon keeps 20,000 a source, the page
# 20,000 in all): the page keeps the lines around the trigger line and says how many it left out.
DR=$(compgen -G "$TEST_TMP/drift/incidents/*-0d0d0d0d")
python3 - "$DR/log.jsonl" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
first = json.loads(lines[0])
storm = []
for k in range(20100, 0, -1):
    l = dict(first, t_perf_ns=first["t_perf_ns"] - k * 1000000, trigger=False, message="storm %d" % k)
    storm.append(json.dumps(l))
# and a line longer than the page keeps, of three-byte characters the bound falls inside of
storm[-1] = json.dumps(dict(json.loads(storm[-1]), message="\u2026" * 1000))
open(sys.argv[1], "w").write("\n".join(storm + lines) + "\n")
PY
expect_exit 0 "$TPROF_BUNDLE" -D "$TEST_TMP/drift" report 0d0d -o "$TEST_TMP/drift.html"
# The long line is cut between characters (2048 bytes: 682 of them) and ends in one more "…".
python3 - "$TEST_TMP/drift.html" <<'PY' || fail "the page's long log line is not cut whole and marked"
import json, sys
html = open(sys.argv[1], encoding="utf-8").read()
key = '"logs":'
logs = json.JSONDecoder().raw_decode(html[html.index(key) + len(key):])[0]
long = [l[4] for l in logs if l[4].startswith("\u2026")]
assert long == ["\u2026" * 683], [len(m) for m in long]
PY
HEADERS+=(-- "$TEST_TMP/drift.html" --answer "No clear rise; the strongest: kubelet rose to 55.0% of the samples" \
        --log-omitted "The log has 20145 lines: the 20000 around the trigger are shown, 145 earlier and 0 later ones left out")
# A baseline of a handful of samples (tprofd started just before the event): the page says that
# the slice could not be compared and lists no rise against it, as show does; nor when the event's
# seconds are the whole slice and their rest is as small.
python3 "$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py" "$TEST_TMP/tiny" quiet --id 3fb01234
T=$(compgen -G "$TEST_TMP/tiny/incidents/*-3fb01234")
printf 'java;main 10\nswapper;idle 7\n' >"$T/baseline.folded"
expect_exit 0 "$TPROF_BUNDLE" -D "$TEST_TMP/tiny" report 3fb0 -o "$TEST_TMP/tiny.html"
HEADERS+=(-- "$TEST_TMP/tiny.html" \
        --answer "Nothing rose significantly around the event against the rest of the bundle (the baseline has 17 samples, too few to compare the slice with)" \
        --unusual "the baseline has 17 samples, too few to compare the slice with")
cp "$T/stacks.folded" "$T/event.folded"
expect_exit 0 "$TPROF_BUNDLE" -D "$TEST_TMP/tiny" report 3fb0 -o "$TEST_TMP/tiny-rest.html"
HEADERS+=(-- "$TEST_TMP/tiny-rest.html" \
        --answer "No comparison possible: the baseline has 17 samples, too few to compare with" \
        --unusual "Nothing to tell: the baseline has 17 samples, too few to compare with.")
"$PY" "$CHECK" --headers "$SHOTS" "${HEADERS[@]}" || fail "a fixture's report header failed"

# Thousands of distinct stacks 100 frames deep (a JVM's, a deep recursion's): a ring of 24,000
# such samples, each a random walk over ten functions, written by the store from perf script text,
# would give a call tree of 2.4 million nodes (a 70 s slice of 96 CPUs, 60 million: gigabytes in
# the writer and the browser). The tree stops at two million, the page says how many stacks it
# cut, and it holds at most 64 bytes of heap a node.
if [ -n "${STORE_TOOL:-}" ] && [ -x "$STORE_TOOL" ]; then
        python3 -c 'import random, sys
rnd = random.Random(1)
line = ["\t%x f%d+0x0 (/usr/bin/deep)\n" % (0x401000 + f * 0x100, f) for f in range(10)]
for i in range(24000):
    sys.stdout.write("deep %d/%d [%03d] %.6f: 1003009 cpu-clock:\n" % (4000 + i % 2, 4000 + i % 2, i % 2, 1000 + i // 2 / 997) +
                     "".join(line[rnd.randrange(10)] for d in range(100)) + "\t400f00 main+0x0 (/usr/bin/deep)\n\n")' \
                >"$TEST_TMP/deep.perf-script"
        "$STORE_TOOL" import "$TEST_TMP/deep-ring" 120 <"$TEST_TMP/deep.perf-script" >/dev/null
        expect_exit 0 "$TPROF_BUNDLE" report --ring "$TEST_TMP/deep-ring" --from -2h --to now -o "$TEST_TMP/deep.html"
        "$PY" "$CHECK" "$TEST_TMP/deep.html" - "$SHOTS" --heap-per-node 64 --cut || fail "the page of deep, distinct stacks"
fi
echo "ok (screenshots in $SHOTS)"
