#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tprof-bundle ls, show, rm, export and open on fixture bundles written by
# tests/helpers/make-fixture-bundle.py: the text of ls and show against golden files (TZ=UTC,
# LANG=C, fixed COLUMNS), JSON a real parser accepts, SVG an XML parser accepts, prefixes and
# ambiguity, filters, the planted anomaly ranked first, and honest exit codes.
# TPROF_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.
set -eu
. "$(dirname "$0")/lib.sh"

FIXTURE="$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py"
GOLDEN="$TPROF_SOURCE_ROOT/tests/integration/golden"
STATE="$TEST_TMP/state"
export TZ=UTC LANG=C LC_ALL=C COLUMNS=120
unset NO_COLOR TPROF_VIEWER || true
tb() { "$TPROF_BUNDLE" -D "$STATE" "$@"; }

# golden NAME: compares $OUT, with the state directory replaced by STATE, with golden/NAME.
golden() {
        sed "s|$STATE|STATE|g" "$OUT" >"$TEST_TMP/golden-actual"
        if [ "${TPROF_UPDATE_GOLDEN:-0}" = 1 ]; then
                cp "$TEST_TMP/golden-actual" "$GOLDEN/$1"
                return
        fi
        diff -u "$GOLDEN/$1" "$TEST_TMP/golden-actual" >&2 || fail "output differs from golden/$1"
}

command -v python3 >/dev/null || skip "needs python3"

# A state directory that does not exist is said to be missing, not shown as an empty ring.
"$TPROF_BUNDLE" -D "$STATE" status >"$OUT" 2>"$ERR" || true
grep -q "State directory: .*(No such file or directory)" "$OUT" || fail "status on a missing state directory: $(cat "$OUT")"
! grep -q "Ring:" "$OUT" || fail "status of a missing state directory shows a ring"

# Nothing there yet: the honest exit code, like coredumpctl.
mkdir -p "$STATE"
expect_exit 1 tb ls
grep -q "No bundles found." "$ERR" || fail "empty ls does not say 'No bundles found.'"
[ ! -s "$OUT" ] || fail "empty ls printed to stdout"
expect_exit 1 tb show
grep -q "No bundles found." "$ERR" || fail "empty show does not say 'No bundles found.'"

python3 "$FIXTURE" "$STATE" anomaly
python3 "$FIXTURE" "$STATE" quiet --id 3fb01234 --time 1795262400000000 --rule oom-kill
python3 "$FIXTURE" "$STATE" corrupt --id 0badc0de --time 1795266000000000 --rule hung-task
python3 "$FIXTURE" "$STATE" pending --id 77aa0001 --time 1795273200000000
python3 "$FIXTURE" "$STATE" nocov --id 5e5e5e5e --time 1795258800000000

# Bash completion: verbs, options, and bundle ids from the state directory given with -D.
complete_words() {
        bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tprof_bundle; printf "%s\n" "${COMPREPLY[@]}"' \
                _ "$TPROF_SOURCE_ROOT/contrib/tprof-bundle.bash-completion" "$@"
}
bash -n "$TPROF_SOURCE_ROOT/contrib/tprof-bundle.bash-completion" || fail "completion has a syntax error"
[ "$(complete_words tprof-bundle s | sort | tr '\n' ' ')" = "show status " ] || fail "verbs not completed"
complete_words tprof-bundle ls --no | grep -qx -- --no-legend || fail "ls options not completed"
[ "$(complete_words tprof-bundle -D "$STATE" show 3f | sort | tr '\n' ' ')" = "3fa9c2d1 3fb01234 " ] ||
        fail "ids not completed: $(complete_words tprof-bundle -D "$STATE" show 3f)"
complete_words tprof-bundle -D "$STATE" rm 2026112 | grep -qx 20261121T143000Z-ena-reset-3fa9c2d1 ||
        fail "full ids not completed"
complete_words tprof-bundle export x --format s | grep -qx svg || fail "--format values not completed"
complete_words tprof-bundle export x -f p | grep -qx pprof || fail "-f values not completed"
[ "$(complete_words tprof-bundle --control-socket /tmp/s -D "$STATE" show 3fa | tr '\n' ' ')" = "3fa9c2d1 " ] ||
        fail "--control-socket's value taken for the verb"
# Every long option a command's --help lists is completed for it.
for v in ls show export report windows rm open capture status; do
        for o in $("$TPROF_BUNDLE" $v --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
                complete_words tprof-bundle $v "$o" | grep -qx -- "$o" || fail "$v: $o, which its --help lists, is not completed"
        done
done

# README's quick start opens the newest bundle's page: xdg-open takes one file (xdg-utils 1.1.3's
# xdg-open exits "unexpected argument" on a second one), whatever the number of bundles.
xdg_open() {
        [ $# = 1 ] || fail "README's quick start gives xdg-open $# files: $*"
        [ "$1" = "$STATE/incidents/20261121T143000Z-ena-reset-3fa9c2d1/report.html" ] ||
                fail "README's quick start opens $1, not the newest bundle's report.html"
}
line=$(sed -n '/^## Quick start/,/^## How it works/s/^    xdg-open \(.*\)#.*/\1/p' "$TPROF_SOURCE_ROOT/README.md")
[ -n "$line" ] || fail "README's quick start opens no report.html"
for d in "$STATE"/incidents/*/; do touch "$d/report.html"; done # the fixture's bundles have none
eval "xdg_open ${line//\/var\/lib\/tprof/\$STATE}"
rm -f "$STATE"/incidents/*/report.html

# ls: the table, the corrupt one listed with a warning, never a crash.
expect_exit 0 tb ls
golden bundle-ls.txt
grep -q "invalid manifest" "$ERR" || fail "no warning about the corrupt manifest: $(cat "$ERR")"
expect_exit 0 tb ls --no-legend -r
[ "$(wc -l <"$OUT")" = 5 ] || fail "ls --no-legend -r: $(cat "$OUT")"
head -1 "$OUT" | grep -q "77aa0001.*pending" || fail "ls -r does not start with the newest"
expect_exit 0 tb ls -1 --no-legend
grep -q 77aa0001 "$OUT" && [ "$(wc -l <"$OUT")" = 1 ] || fail "ls -1"

# Filters: rule names, FIELD=VALUE (captures, status), time ranges; no match is exit 1.
expect_exit 0 tb ls --no-legend oom-kill
[ "$(wc -l <"$OUT")" = 1 ] && grep -q 3fb01234 "$OUT" || fail "ls RULE"
expect_exit 0 tb ls --no-legend ena-reset
[ "$(wc -l <"$OUT")" = 3 ] || fail "ls ena-reset: $(cat "$OUT")"
expect_exit 0 tb ls --no-legend cpu=3
[ "$(wc -l <"$OUT")" = 1 ] && grep -q 3fa9c2d1 "$OUT" || fail "ls cpu=3"
expect_exit 0 tb ls --no-legend status=pending
grep -q 77aa0001 "$OUT" || fail "ls status=pending"
expect_exit 0 tb ls --no-legend status=corrupt
grep -q 0badc0de "$OUT" || fail "ls status=corrupt"
# Manifests that parse but are damaged: no status, a count that is text.
D2="$TEST_TMP/damaged"
mkdir -p "$D2/incidents/20261121T120000Z-x-0e0e0e01" "$D2/incidents/20261121T120100Z-x-0e0e0e02"
echo '{}' >"$D2/incidents/20261121T120000Z-x-0e0e0e01/manifest.json"
echo '{"status": "complete", "slice": {"samples": "lots"}}' >"$D2/incidents/20261121T120100Z-x-0e0e0e02/manifest.json"
expect_exit 0 "$TPROF_BUNDLE" -D "$D2" ls --no-legend
[ "$(grep -c ' corrupt ' "$OUT")" = 2 ] || fail "damaged manifests not listed as corrupt: $(cat "$OUT")"
[ "$(grep -c 'without a status or with a field of the wrong type' "$ERR")" = 2 ] || fail "damage not named: $(cat "$ERR")"
# A mistyped field is named as one no bundle has; a field bundles have, with no match, is not.
expect_exit 1 tb ls statsu=complete
grep -q "No bundle has a field 'statsu'" "$ERR" || fail "ls with a mistyped field: $(cat "$ERR")"
expect_exit 1 tb ls status=no-such-status
grep -q "No bundle has a field" "$ERR" && fail "ls status=...: a known field called unknown: $(cat "$ERR")"
expect_exit 0 tb ls --no-legend oom-kill rule=hung-task
[ "$(wc -l <"$OUT")" = 2 ] || fail "two rules are alternatives: $(cat "$OUT")"
expect_exit 0 tb ls --no-legend ena-reset status=complete
[ "$(wc -l <"$OUT")" = 1 ] || fail "different fields must all match: $(cat "$OUT")"
expect_exit 0 tb ls --no-legend --since "2026-11-21 14:00" --until "2026-11-21T15:30:00Z"
[ "$(wc -l <"$OUT")" = 2 ] || fail "--since/--until: $(cat "$OUT")"
expect_exit 1 tb ls no-such-rule
grep -q "No bundles found." "$ERR" || fail "no match does not say so"
expect_exit 64 tb ls --since banana
grep -q "Invalid time 'banana'" "$ERR" || fail "bad --since not named"
expect_exit 64 tb ls --json=yaml

# ls --json: valid JSON, full ids.
expect_exit 0 tb ls --json=short
python3 -m json.tool "$OUT" >/dev/null || fail "ls --json is not JSON"
[ "$(wc -l <"$OUT")" = 1 ] || fail "--json=short is not one line"
expect_exit 0 tb ls --json
[ "$(tail -c 2 "$OUT" | od -An -c | tr -d ' ')" = ']\n' ] || fail "ls --json does not end in one newline"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d)==5; assert d[3]["id"]=="20261121T143000Z-ena-reset-3fa9c2d1"; assert d[2]["status"]=="corrupt"' "$OUT" ||
        fail "ls --json content"

# show: the newest complete bundle by default, golden text for the anomaly.
expect_exit 0 tb show 3fa9
golden bundle-show-anomaly.txt
grep -qE '^  kubelet +6\.5% \(baseline +0\.8%\) +mem_cgroup_nr_lru_pages +z=[0-9.]+$' "$OUT" ||
        fail "the anomaly line is missing or misshapen"
grep -q '^   In short: kubelet rose to 6\.5% of the samples (baseline 0\.8%, z=[0-9.]*); its function that rose most: mem_cgroup_nr_lru_pages\.$' "$OUT" ||
        fail "the summary does not name the process and function"
# Ranked first among processes, and no noise process listed as a rise.
sed -n '/^  Processes/,/^  Functions/p' "$OUT" | sed -n 2p | grep -q kubelet || fail "kubelet not ranked first"
sed -n '/^Unusual/,/^CPU 3/p' "$OUT" | grep -qE 'java|nginx|postgres|swapper' && fail "stable noise reported as unusual"
grep -q '^CPU 3 alone' "$OUT" || fail "no per-CPU section for captures.cpu"
# The commands it offers run as printed: they name the state directory show was given.
sed -n 's/^  \(tprof-bundle .*\) > flame\.svg$/\1/p' "$OUT" >"$TEST_TMP/offered"
[ "$(wc -l <"$TEST_TMP/offered")" = 1 ] || fail "show offers no export command: $(sed -n '/^Open with/,$p' "$OUT")"
(cd "$TEST_TMP" && eval "\"\$TPROF_BUNDLE\"$(sed 's/^tprof-bundle//' "$TEST_TMP/offered")") >"$TEST_TMP/flame.svg" 2>"$ERR" ||
        fail "show's '$(cat "$TEST_TMP/offered")' does not run: $(cat "$ERR")"
grep -q '<svg' "$TEST_TMP/flame.svg" || fail "show's export command wrote no SVG"
# The event's own seconds against the rest: kubelet's 6.5% there too.
sed -n '/^Around the event (5s before .. 5s after)/,/^Services/p' "$OUT" |
        grep -qE '^  kubelet +6\.5% \(rest +[0-9.]+%\) +mem_cgroup_nr_lru_pages +z=' || fail "no rise around the event"

# A burst in the event's own seconds alone, which the 105 s slice dilutes to 1.3%: the summary
# names it from event.folded, against the rest of the bundle.
python3 "$FIXTURE" "$TEST_TMP/burst" burst --id 0b0b0b0b
"$TPROF_BUNDLE" -D "$TEST_TMP/burst" show >"$OUT" 2>"$ERR" || fail "show burst: $(cat "$ERR")"
grep -qE '^   In short: kubelet rose to 6\.5% of the samples in the 10s around the event \(the rest of the bundle 0\.[0-9]%, z=[0-9.]+\); its function that rose most: mem_cgroup_nr_lru_pages\.$' \
        "$OUT" || fail "burst: the summary does not name the burst: $(grep 'In short' "$OUT")"
sed -n '/^Around the event/,/^Services/p' "$OUT" | sed -n '/Processes/{n;p}' | grep -q '^  kubelet ' ||
        fail "burst: kubelet not first around the event"
grep -q ' fell to ' "$OUT" && fail "burst: a fall where nothing stopped: $(grep -A1 'In short' "$OUT")"
# A process that stops at the event (its CPUs idle then): nothing rose, and the summary says what
# fell, in show, show --json and the page's data.
python3 "$FIXTURE" "$TEST_TMP/drop" drop --id 0e0e0e0e
"$TPROF_BUNDLE" -D "$TEST_TMP/drop" show >"$TEST_TMP/drop.txt" 2>"$ERR" || fail "show drop: $(cat "$ERR")"
grep -A1 '^   In short: ' "$TEST_TMP/drop.txt" |
        grep -qE '^ +postgres fell to 0\.0% of the samples in the 10s around the event \(the rest of the bundle 1[01]\.[0-9]%, z=-[0-9.]+\)\.$' ||
        fail "drop: the summary does not say postgres fell: $(grep -A1 'In short' "$TEST_TMP/drop.txt")"
"$TPROF_BUNDLE" -D "$TEST_TMP/drop" show --json >"$TEST_TMP/drop.json" 2>"$ERR" || fail "show --json drop: $(cat "$ERR")"
python3 - "$TEST_TMP/drop.json" <<'PY' || fail "json: the fall"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["answer"] is None, d["answer"]
assert d["fall"]["process"] == "postgres" and d["fall"]["slice_share"] == 0 and d["fall"]["z"] < -3, d["fall"]
PY
# A host at 100% where kubelet spins on 55% of the CPUs around the event: every other process keeps
# 45% of its share, starved by the rise, not stopped. The summary names the rise and no fall, in
# show, show --json and the page's data.
python3 "$FIXTURE" "$TEST_TMP/starve" starve --id 0c0c0c0c
"$TPROF_BUNDLE" -D "$TEST_TMP/starve" show >"$TEST_TMP/starve.txt" 2>"$ERR" || fail "show starve: $(cat "$ERR")"
grep -qE '^   In short: kubelet rose to 55\.0% of the samples in the 10s around the event ' "$TEST_TMP/starve.txt" ||
        fail "starve: the summary does not name the rise: $(grep -A1 'In short' "$TEST_TMP/starve.txt")"
grep -q ' fell to ' "$TEST_TMP/starve.txt" && fail "starve: a starved process named as a fall: $(grep -A1 'In short' "$TEST_TMP/starve.txt")"
"$TPROF_BUNDLE" -D "$TEST_TMP/starve" show --json >"$TEST_TMP/starve.json" 2>"$ERR" || fail "show --json starve: $(cat "$ERR")"
"$TPROF_BUNDLE" -D "$TEST_TMP/starve" report 0c0c -o "$TEST_TMP/starve.html" 2>"$ERR" || fail "report starve: $(cat "$ERR")"
python3 - "$TEST_TMP/starve.json" "$TEST_TMP/starve.html" <<'PY' || fail "starve: a fall in --json or the page"
import json, sys
d, html = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
page = json.JSONDecoder().raw_decode(html[html.index('"analysis":') + len('"analysis":'):])[0]
assert d["fall"] is None and page["fall"] is None, (d["fall"], page["fall"])
assert d["answer"]["process"] == "kubelet" and page["answer"]["name"] == "kubelet", (d["answer"], page["answer"])
PY
# with_sh DIR: 8 samples of sh, no thread of any process, around the event of DIR's one bundle (as
# the few fixture has them): a row of the rankings beside the threads', that must name no thread.
with_sh() {
        python3 - "$1"/incidents/*/ <<'PY'
import json, os, sys
b = sys.argv[1]
for f in ("event.folded", "stacks.folded"):
    lines = open(os.path.join(b, f)).read().splitlines() + ["sh;main;fork 8"]
    open(os.path.join(b, f), "w").write("".join(l + "\n" for l in sorted(lines, key=lambda l: l.encode())))
m = json.load(open(os.path.join(b, "manifest.json")))
m["slice"]["samples"] += 8
json.dump(m, open(os.path.join(b, "manifest.json"), "w"))
PY
}
# A named thread rose (a JVM's "VM Thread", "VM_Thread" in the stacks): the summary, the table
# and --json say whose thread it is, and its unit is found by the manifest's raw name.
python3 "$FIXTURE" "$TEST_TMP/thread" thread --id 0f0f0f0f
with_sh "$TEST_TMP/thread"
"$TPROF_BUNDLE" -D "$TEST_TMP/thread" show >"$TEST_TMP/thread.txt" 2>"$ERR" || fail "show thread: $(cat "$ERR")"
grep -qE '^   In short: VM_Thread of java \(unit app\.service\) rose to 6\.5% of the samples \(baseline 0\.8%' \
        "$TEST_TMP/thread.txt" || fail "thread: $(grep 'In short' "$TEST_TMP/thread.txt")"
grep -A1 '^  VM_Thread ' "$TEST_TMP/thread.txt" | grep -qE '^ +thread of java, in unit app\.service$' ||
        fail "thread: the table does not say whose thread: $(grep -A1 '^  VM_Thread ' "$TEST_TMP/thread.txt")"
"$TPROF_BUNDLE" -D "$TEST_TMP/thread" show --json >"$TEST_TMP/thread.json" 2>"$ERR" || fail "show --json thread: $(cat "$ERR")"
python3 - "$TEST_TMP/thread.json" <<'PY' || fail "json: thread_of"
import json, sys
d = json.load(open(sys.argv[1]))
a = d["answer"]
assert a["process"] == "VM_Thread" and a["thread_of"] == "java" and a["cgroup"]["unit"] == "app.service", a
# a process that is no thread of another (sh) has none
others = [p for p in d["unusual"]["processes"] + d["around_event"]["processes"] if p["process"] != "VM_Thread"]
assert others and all(p["thread_of"] is None for p in others), (d["unusual"], d["around_event"])
# a function's rise, in its process, says whose thread too
f = [x for x in d["unusual"]["functions"] if x["process"] == "VM_Thread"]
assert f and all(x["thread_of"] == "java" for x in f), d["unusual"]["functions"]
PY
# A pool's rise carried by one of its threads (pool-2 of mt stuck spinning, the others as before):
# show, --json and the page name the thread, the group after it; where the same rise is spread
# over the four threads, the pool, as before, and no thread.
for k in stuck pool; do
        python3 "$FIXTURE" "$TEST_TMP/$k" $k --id 0b0b0b0b
        with_sh "$TEST_TMP/$k"
        "$TPROF_BUNDLE" -D "$TEST_TMP/$k" show >"$TEST_TMP/$k.txt" 2>"$ERR" || fail "show $k: $(cat "$ERR")"
        "$TPROF_BUNDLE" -D "$TEST_TMP/$k" show --json >"$TEST_TMP/$k.json" 2>"$ERR" || fail "show --json $k: $(cat "$ERR")"
        "$TPROF_BUNDLE" -D "$TEST_TMP/$k" report 0b0b -o "$TEST_TMP/$k.html" 2>"$ERR" || fail "report $k: $(cat "$ERR")"
done
grep -qE '^   In short: pool-2 of mt \(one of its threads pool-\*; unit mt\.service\) rose to 6\.5% of the samples \(baseline 0\.8%' \
        "$TEST_TMP/stuck.txt" || fail "stuck: the thread is not named: $(grep 'In short' "$TEST_TMP/stuck.txt")"
grep -qE '^   In short: pool-\* of mt \(unit mt\.service\) rose to 6\.5% of the samples \(baseline 0\.8%' \
        "$TEST_TMP/pool.txt" || fail "pool: not the pool's rise: $(grep 'In short' "$TEST_TMP/pool.txt")"
python3 - "$TEST_TMP" <<'PY' || fail "stuck, pool: the thread in --json and the page"
import json, sys
for k, thread in (("stuck", "pool-2"), ("pool", None)):
    d = json.load(open("%s/%s.json" % (sys.argv[1], k)))
    html = open("%s/%s.html" % (sys.argv[1], k)).read()
    page = json.JSONDecoder().raw_decode(html[html.index('"analysis":') + len('"analysis":'):])[0]
    a, pa = d["answer"], page["answer"]
    assert (a["process"], a["thread_of"], a["thread"]) == ("pool-*", "mt", thread), (k, a)
    assert (pa["name"], pa["thread_of"], pa["thread"]) == ("pool-*", "mt", thread), (k, pa)
    # the rankings' rows of the group, show's and the page's, name the thread as the answer does
    rows = d["around_event"]["processes"] + d["unusual"]["processes"]
    prows = page["near"]["processes"] + page["processes"]
    assert [r["thread"] for r in rows if r["process"] == "pool-*"] == [thread, thread], (k, rows)
    assert [r["thread"] for r in prows if r["name"] == "pool-*"] == [thread, thread], (k, prows)
    # and a row that is no group's (sh) names no thread, in either
    others = [r for r in rows if "*" not in r["process"]], [r for r in prows if "*" not in r["name"]]
    assert all(others) and all(r["thread"] is None for r in others[0] + others[1]), (k, rows, prows)
PY
grep -qE '^ +threads of mt, carried by pool-2, in unit mt\.service$' "$TEST_TMP/stuck.txt" ||
        fail "stuck: the ranking's row does not name the thread: $(grep -A1 -E '^  pool-\* ' "$TEST_TMP/stuck.txt")"
! grep -q 'carried by' "$TEST_TMP/pool.txt" || fail "pool: a thread named for a spread rise: $(grep 'carried by' "$TEST_TMP/pool.txt")"
# A softirq storm spread over 16 CPUs' ksoftirqd threads, each under the answer's floor: named as
# one, in the root cgroup, no thread of another process.
python3 "$FIXTURE" "$TEST_TMP/softirq" softirq --cpus 16 --id 0d0d0d0d
"$TPROF_BUNDLE" -D "$TEST_TMP/softirq" show >"$TEST_TMP/softirq.txt" 2>"$ERR" || fail "show softirq: $(cat "$ERR")"
grep -qE '^   In short: ksoftirqd/\* rose to 1\.6% of the samples in the 10s around the event .*; its function that rose most: ena_io_poll\.$' \
        "$TEST_TMP/softirq.txt" || fail "softirq: $(grep 'In short' "$TEST_TMP/softirq.txt")"
"$TPROF_BUNDLE" -D "$TEST_TMP/softirq" show --json >"$TEST_TMP/softirq.json" 2>"$ERR" || fail "show --json softirq: $(cat "$ERR")"
python3 - "$TEST_TMP/softirq.json" <<'PY' || fail "json: per-CPU kernel threads as one"
import json, sys
d = json.load(open(sys.argv[1]))
a = d["answer"]
assert a["process"] == "ksoftirqd/*" and a["clear"] and a["top_function"] == "ena_io_poll", a
assert a["thread_of"] is None and a["cgroup"]["path"] == "/", a
PY
# A NIC's receive storm on a mostly idle host: the softirqs ran on the way out of the NIC's
# interrupts, in the idle task and, on a busy CPU, in postgres. show and --json name that work
# "[irq]", all of it (12% and 3%), never idle nor postgres; the folded stacks keep perf's swapper
# and postgres.
python3 "$FIXTURE" "$TEST_TMP/irqidle" irqidle --id 1a1a1a1a
"$TPROF_BUNDLE" -D "$TEST_TMP/irqidle" show >"$TEST_TMP/irqidle.txt" 2>"$ERR" || fail "show irqidle: $(cat "$ERR")"
grep -qE '^   In short: \[irq\] rose to 15\.1% of the samples in the 10s around the event .*; its function that rose most: ena_clean_rx_irq\.$' \
        "$TEST_TMP/irqidle.txt" || fail "irqidle: $(grep 'In short' "$TEST_TMP/irqidle.txt")"
grep -qE '^  \[irq\] +1\.5% \(baseline  0\.1%\)  ena_clean_rx_irq  z=' "$TEST_TMP/irqidle.txt" ||
        fail "irqidle: the unusual processes: $(grep -A3 'Unusual in the slice' "$TEST_TMP/irqidle.txt")"
"$TPROF_BUNDLE" -D "$TEST_TMP/irqidle" show --json >"$TEST_TMP/irqidle.json" 2>"$ERR" || fail "show --json irqidle: $(cat "$ERR")"
python3 - "$TEST_TMP/irqidle.json" <<'PY' || fail "json: the interrupt work"
import json, sys
d = json.load(open(sys.argv[1]))
a = d["answer"]
assert a["process"] == "[irq]" and a["clear"] and a["top_function"] == "ena_clean_rx_irq", a
assert [r["process"] for r in d["unusual"]["processes"]] == ["[irq]"], d["unusual"]
assert d["unusual"]["functions"][0]["process"] == "[irq]", d["unusual"]["functions"]
PY
grep -q '^swapper;secondary_startup_64;.*;intel_idle;asm_common_interrupt;.*;ena_clean_rx_irq ' \
        "$TEST_TMP"/irqidle/incidents/*-1a1a1a1a/stacks.folded || fail "irqidle: the folded stacks lost their swapper"
grep -q '^postgres;__libc_start_main;.*;heap_getnext;asm_common_interrupt;.*;ena_clean_rx_irq ' \
        "$TEST_TMP"/irqidle/incidents/*-1a1a1a1a/stacks.folded || fail "irqidle: the folded stacks lost their postgres"
# A mostly idle 16-CPU host sampled with cycles: the samples are one busy CPU's, and cron's 1% of
# them around the event is 1% of a CPU, under the floor, not 16% (its share times the CPUs).
python3 "$FIXTURE" "$TEST_TMP/idle" idle --cpus 16 --id 0e0e0e0e
"$TPROF_BUNDLE" -D "$TEST_TMP/idle" show >"$TEST_TMP/idle.txt" 2>"$ERR" || fail "show idle: $(cat "$ERR")"
grep -qE '^   In short: no clear rise; the strongest: cron rose to 1\.0% of the samples in the 10s around the event ' \
        "$TEST_TMP/idle.txt" || fail "idle: $(grep 'In short' "$TEST_TMP/idle.txt")"
"$TPROF_BUNDLE" -D "$TEST_TMP/idle" show --json >"$TEST_TMP/idle.json" 2>"$ERR" || fail "show --json idle: $(cat "$ERR")"
python3 -c 'import json, sys; a = json.load(open(sys.argv[1]))["answer"]; assert a["process"] == "cron" and not a["clear"], a' \
        "$TEST_TMP/idle.json" || fail "json: idle host, a clear rise of 1% of a CPU"
# A vCPU the host did not run (a quarter of its samples): show says its work is undercounted.
python3 "$FIXTURE" "$TEST_TMP/steal" steal --id 0c0c0c0c
"$TPROF_BUNDLE" -D "$TEST_TMP/steal" show >"$TEST_TMP/steal.txt" 2>"$ERR" || fail "show steal: $(cat "$ERR")"
grep -qE '^  cpu2 delivered 24% of the samples its 49 Hz asks for: time it did not have' "$TEST_TMP/steal.txt" ||
        fail "steal: no shortfall: $(sed -n '/^CPU activity/,/^$/p' "$TEST_TMP/steal.txt")"
[ "$(grep -c ' delivered ' "$TEST_TMP/steal.txt")" = 1 ] || fail "steal: other CPUs called short"
"$TPROF_BUNDLE" -D "$TEST_TMP/steal" show --json >"$TEST_TMP/steal.json" 2>"$ERR" || fail "show --json steal: $(cat "$ERR")"
python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["activity"]["shortfalls"]; assert [x["cpu"] for x in f] == [2] and f[0]["samples"] * 4 < f[0]["expected"], f' \
        "$TEST_TMP/steal.json" || fail "json: shortfalls"
grep -q ' delivered ' "$TEST_TMP/drop.txt" && fail "a CPU called short in a bundle without one"
# Sampled with cycles, which stop while a CPU idles: missing samples say nothing there.
sed -i 's/"event": "cpu-clock"/"event": "cycles"/' "$TEST_TMP"/steal/incidents/*/manifest.json
"$TPROF_BUNDLE" -D "$TEST_TMP/steal" show >"$TEST_TMP/steal-cycles.txt" 2>"$ERR" || fail "show steal (cycles): $(cat "$ERR")"
grep -q ' delivered ' "$TEST_TMP/steal-cycles.txt" && fail "a cycles bundle's CPU called short"
# The same burst, its work split between two leaves: the summary names their caller too.
python3 "$FIXTURE" "$TEST_TMP/under" under --id 0d0d0d0d
"$TPROF_BUNDLE" -D "$TEST_TMP/under" show >"$TEST_TMP/under.txt" 2>"$ERR" || fail "show under: $(cat "$ERR")"
grep -qE '^   In short: kubelet rose to 6\.5% of the samples in the 10s around the event .*; its function that rose most: (mem_cgroup_nr_lru_pages|memcg_page_state), most of the rise under memcg_stat_show\.$' \
        "$TEST_TMP/under.txt" || fail "under: $(grep 'In short' "$TEST_TMP/under.txt")"
"$TPROF_BUNDLE" -D "$TEST_TMP/under" show --json >"$TEST_TMP/under.json" 2>"$ERR" || fail "show --json under: $(cat "$ERR")"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["answer"]; assert a["under"] == "memcg_stat_show" and a["from"] == "near", a' \
        "$TEST_TMP/under.json" || fail "json: under"
# A long baseline is just counted; one of a few seconds (the windows' edges fell close to the
# slice) is said to be short.
grep -qE '^   Baseline: [0-9]+ samples from the pinned windows outside the slice$' "$TEST_TMP/under.txt" ||
        fail "baseline line: $(grep Baseline "$TEST_TMP/under.txt")"
python3 - "$TEST_TMP"/under/incidents/*/manifest.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["baseline"]["samples"] = 500
json.dump(m, open(sys.argv[1], "w"))
PY
"$TPROF_BUNDLE" -D "$TEST_TMP/under" show >"$OUT" 2>"$ERR" || fail "show under, short baseline: $(cat "$ERR")"
grep -qE '^   Baseline: 500 samples from the pinned windows outside the slice \(about [0-9.]+s of sampling: a short baseline' "$OUT" ||
        fail "short baseline not said: $(grep Baseline "$OUT")"
# A process that ran only around the event, a handful of samples (the one that logged it, a core
# dump): its z-score there is large, the CPU it took is not; the summary keeps the slice's kubelet.
python3 "$FIXTURE" "$TEST_TMP/few" few --id 0c0c0c0c
"$TPROF_BUNDLE" -D "$TEST_TMP/few" show >"$OUT" 2>"$ERR" || fail "show few: $(cat "$ERR")"
sed -n '/^Around the event/,/^Services/p' "$OUT" | grep -qE '^  sh +0\.4% \(rest +0\.0%\)' ||
        fail "few: sh not listed around the event: $(sed -n '/^Around/,/^Services/p' "$OUT")"
grep -qE '^   In short: kubelet rose to 2\.0% of the samples \(baseline 0\.8%' "$OUT" ||
        fail "few: the summary chose the handful of samples: $(grep 'In short' "$OUT")"

# A hog that drifted up by many CPUs' worth without doubling its share, and nothing else rose: no
# clear rise, and the answer says so before naming the strongest.
python3 "$FIXTURE" "$TEST_TMP/drift" drift --id 0d0d0d0d
"$TPROF_BUNDLE" -D "$TEST_TMP/drift" show >"$OUT" 2>"$ERR" || fail "show drift: $(cat "$ERR")"
grep -qE '^   In short: no clear rise; the strongest: kubelet rose to 55\.0% of the samples' "$OUT" ||
        fail "drift: the answer reads as a clear one: $(grep 'In short' "$OUT")"
"$TPROF_BUNDLE" -D "$TEST_TMP/drift" show --json | jq -e '.answer.clear == false' >/dev/null ||
        fail "drift: --json answer.clear is not false"
"$TPROF_BUNDLE" -D "$TEST_TMP/few" show --json | jq -e '.answer.clear == true' >/dev/null ||
        fail "few: --json answer.clear is not true"

# Without event.folded (a bundle from before it): the slice alone, and show says why.
rm "$TEST_TMP"/burst/incidents/*/event.folded
"$TPROF_BUNDLE" -D "$TEST_TMP/burst" show >"$OUT" 2>"$ERR" || fail "show burst without event.folded: $(cat "$ERR")"
grep -q '^  (no event.folded in this bundle: written before' "$OUT" || fail "no note on the missing event.folded"
# Over the whole slice kubelet went from 0.8% to 1.x%, less than twice its share: its function
# that went from nothing to 0.6% (a few percent of a CPU) is the answer, named in its process.
grep -qE '^   In short: mem_cgroup_nr_lru_pages in kubelet rose to 0\.[0-9]% of the samples \(baseline <0\.1%' "$OUT" ||
        fail "burst without event.folded: $(grep 'In short' "$OUT")"
"$TPROF_BUNDLE" -D "$TEST_TMP/burst" show --json >"$TEST_TMP/burst.json" 2>"$ERR" ||
        fail "show --json burst without event.folded: $(cat "$ERR")"
python3 - "$TEST_TMP/burst.json" <<'PY' || fail "json: a function's answer"
import json, sys
ans = json.load(open(sys.argv[1]))["answer"]
assert ans["from"] == "slice" and ans["kind"] == "function", ans
assert ans["process"] == "kubelet" and ans["function"] == "mem_cgroup_nr_lru_pages", ans
PY
# The function's process is said with its unit, in the text and in --json alike.
python3 - "$TEST_TMP"/burst/incidents/*/manifest.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["cgroups"] = [{"path": "/system.slice/kubelet.service", "samples": m["slice"]["samples"],
                 "baseline_samples": m["baseline"]["samples"], "unit": "kubelet.service",
                 "comms": [{"comm": "kubelet", "samples": 200}]}]
json.dump(m, open(sys.argv[1], "w"))
PY
"$TPROF_BUNDLE" -D "$TEST_TMP/burst" show >"$OUT" 2>"$ERR" || fail "show burst with cgroups: $(cat "$ERR")"
grep -qE '^   In short: mem_cgroup_nr_lru_pages in kubelet \(unit kubelet\.service\) rose to ' "$OUT" ||
        fail "burst with cgroups: $(grep 'In short' "$OUT")"
"$TPROF_BUNDLE" -D "$TEST_TMP/burst" show --json >"$TEST_TMP/burst.json" 2>"$ERR" || fail "show --json burst with cgroups"
python3 - "$TEST_TMP/burst.json" <<'PY' || fail "json: a function's answer without its unit"
import json, sys
ans = json.load(open(sys.argv[1]))["answer"]
assert ans["kind"] == "function" and ans["cgroup"]["unit"] == "kubelet.service", ans
PY
grep -q '^> .*Trigger reset is on' "$OUT" || fail "trigger line not marked"
grep -q "\.\.\. 4 more lines in" "$OUT" || fail "no note on the log lines left out"
grep -q -- '-1m30s \.\. +15s around the event' "$OUT" || fail "slice bounds not relative to the event"
expect_exit 0 tb show
grep -q '^Bundle 20261121T143000Z-ena-reset-3fa9c2d1' "$OUT" || fail "show without ID is not the newest finished bundle"
expect_exit 0 tb show 20261121T143000Z-ena-reset-3fa9c2d1
expect_exit 0 tb show 3fb0
sed -n '/^Unusual/,/^Files/p' "$OUT" | grep -q "Nothing rose significantly" || fail "quiet bundle reports a rise"
# A baseline of a handful of samples (tprofd started just before the event) cannot show a rise:
# that is said, not that the slice looks like it.
rm -rf "$TEST_TMP/tiny" && cp -r "$STATE" "$TEST_TMP/tiny"
printf 'java;main 10\nswapper;idle 7\n' >"$TEST_TMP/tiny/incidents/20261121T120000Z-oom-kill-3fb01234/baseline.folded"
"$TPROF_BUNDLE" -D "$TEST_TMP/tiny" show 3fb0 >"$TEST_TMP/tiny.txt" 2>"$ERR" || fail "show, tiny baseline: $(cat "$ERR")"
sed -n '/^Unusual/,/^Files/p' "$TEST_TMP/tiny.txt" | grep -q "the baseline has 17 samples, too few to compare with" ||
        fail "tiny baseline: $(sed -n '/^Unusual/,/^Around/p' "$TEST_TMP/tiny.txt")"
# Nothing rose around the event against the rest: said as that, not as a comparison with the baseline.
grep -q '^   In short: nothing rose significantly in the 10s around the event against the rest of the bundle (the baseline has 17 samples, too few to compare the slice with); see the top stacks\.$' \
        "$TEST_TMP/tiny.txt" || fail "tiny baseline, answer: $(grep -A1 'In short' "$TEST_TMP/tiny.txt")"
# Nor can the event's seconds when they are the whole slice (a bundle taken seconds after tprofd
# started): their rest is the same 17 samples, and the answer says that nothing could be compared.
T=$TEST_TMP/tiny/incidents/20261121T120000Z-oom-kill-3fb01234
cp "$T/stacks.folded" "$T/event.folded"
"$TPROF_BUNDLE" -D "$TEST_TMP/tiny" show 3fb0 >"$TEST_TMP/tiny.txt" 2>"$ERR" || fail "show, tiny rest: $(cat "$ERR")"
grep -q '^   In short: no comparison possible: the baseline has 17 samples, too few to compare with; see the top stacks\.$' \
        "$TEST_TMP/tiny.txt" || fail "tiny rest, answer: $(grep -A1 'In short' "$TEST_TMP/tiny.txt")"
sed -n '/^Around/,/^Services/p' "$TEST_TMP/tiny.txt" | grep -q "the rest has 17 samples, too few to compare with" ||
        fail "tiny rest: $(sed -n '/^Around/,/^Services/p' "$TEST_TMP/tiny.txt")"
"$TPROF_BUNDLE" -D "$TEST_TMP/tiny" show --json 3fb0 >"$TEST_TMP/tiny.json" 2>"$ERR" || fail "show --json, tiny rest"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["answer"] is None and j["fall"] is None, j["answer"]' \
        "$TEST_TMP/tiny.json" || fail "tiny rest: an answer in --json"
# Without log.jsonl, the log comes from log.txt.
rm "$STATE/incidents/20261121T120000Z-oom-kill-3fb01234/log.jsonl"
expect_exit 0 tb show 3fb0
grep -q '^> 2026-11-21T12:00:00.000000Z kmsg     err     ena 0000:00:05.0 eth0: Trigger reset is on$' "$OUT" ||
        fail "no fallback to log.txt"
expect_exit 0 tb show --json 3fb0
python3 -m json.tool "$OUT" >/dev/null || fail "show --json with log.txt only is not JSON"
expect_exit 0 tb show 5e5e
grep -q "no-coverage" "$OUT" || fail "no-coverage not explained"
# A corrupt bundle: what its files hold is shown, with a warning, and nothing to open is offered
# (the report and exports need the manifest); another bundle's command does not warn about it.
expect_exit 1 tb show 0bad
grep -q "manifest cannot be read" "$OUT" || fail "corrupt bundle not explained"
grep -q "invalid manifest" "$ERR" || fail "show of a corrupt bundle: no warning: $(cat "$ERR")"
grep -q "^Open with" "$OUT" && fail "show of a corrupt bundle offers to open it"
expect_exit 0 tb show 5e5e
grep -q "invalid manifest" "$ERR" && fail "show of another bundle warns about the corrupt one: $(cat "$ERR")"
expect_exit 0 tb show 77aa
grep -q "(pending)" "$OUT" || fail "pending bundle not shown as pending"

# Ambiguous and unknown ids.
expect_exit 1 tb show 3f
grep -q "matches 2 bundles" "$ERR" && grep -q 3fa9c2d1 "$ERR" && grep -q 3fb01234 "$ERR" ||
        fail "ambiguous prefix does not list the candidates: $(cat "$ERR")"
expect_exit 1 tb show nope
grep -q "No bundle matches 'nope'" "$ERR" || fail "unknown id not reported"
expect_exit 64 tb show a b

# On a terminal: bold headers and red rises, block characters in a UTF-8 locale; NO_COLOR and
# TERM=dumb turn colour off, and show still shows the bundle (no colour in no output proves nothing).
on_tty() { # CMD...: runs CMD on a pseudo-terminal, prints what it wrote there, exits as it did
        python3 - "$@" <<'EOS'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:
        break
    if not d:
        break
    out += d
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(status) & 0xff)
EOS
}
on_tty env LANG=C.UTF-8 LC_ALL=C.UTF-8 "$TPROF_BUNDLE" -D "$STATE" show 3fa9 >"$OUT" ||
        fail "show on a terminal exited $?: $(cat -v "$OUT")"
grep -q $'\e\[1mWhat happened' "$OUT" || fail "no bold header on a terminal"
grep -q $'\e\[31m  *kubelet\|\e\[31mkubelet' "$OUT" || fail "rise not highlighted on a terminal"
grep -q '^  cpu3 *|.*█' "$OUT" || fail "no block characters in a UTF-8 locale"
for plain in NO_COLOR=1 TERM=dumb; do
        on_tty env "$plain" "$TPROF_BUNDLE" -D "$STATE" show 3fa9 >"$OUT" ||
                fail "show on a terminal with $plain exited $?: $(cat -v "$OUT")"
        grep -q '^What happened' "$OUT" && grep -qE '^  kubelet +6\.5% ' "$OUT" ||
                fail "show on a terminal with $plain does not show the bundle: $(cat -v "$OUT")"
        ! grep -q $'\e\[' "$OUT" || fail "colour despite $plain"
done

# Many CPUs: the heatmap groups them into at most 16 rows, plus the captured CPU on its own.
python3 "$FIXTURE" "$TEST_TMP/many" anomaly --cpus 64
"$TPROF_BUNDLE" -D "$TEST_TMP/many" show >"$OUT"
[ "$(grep -c '^  [0-9c][-0-9pu]* *|' "$OUT")" = 17 ] || fail "64 CPUs not grouped into 16 rows + cpu3"
grep -q '^  60-63 *|' "$OUT" && grep -q '^  cpu3 *|' "$OUT" || fail "grouped heatmap labels"

# show --json: valid, and the same findings.
expect_exit 0 tb show --json 3fa9
python3 -m json.tool "$OUT" >/dev/null || fail "show --json is not JSON"
if command -v jq >/dev/null; then
        [ "$(jq -r '.unusual.processes[0].process' "$OUT")" = kubelet ] || fail "json: first rise"
        [ "$(jq -r '.unusual.processes[0].top_function' "$OUT")" = mem_cgroup_nr_lru_pages ] || fail "json: function"
        [ "$(jq -r '.cpu.cpu' "$OUT")" = 3 ] || fail "json: cpu"
        [ "$(jq -r '.manifest.event.captures.cpu' "$OUT")" = 3 ] || fail "json: manifest"
        [ "$(jq '.log.lines | map(select(.trigger)) | length' "$OUT")" = 1 ] || fail "json: log"
        [ "$(jq '.activity.cpus | length' "$OUT")" = 4 ] || fail "json: activity"
fi
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(f.endswith("/cpu3-baseline.folded") for f in d["files"])' "$OUT" ||
        fail "json: files"
python3 - "$OUT" <<'PY' || fail "json: around_event"
import json, sys
a = json.load(open(sys.argv[1]))["around_event"]
assert a["before_ns"] == a["after_ns"] == 5 * 10**9, a
assert a["samples"] == 1960 and a["processes"][0]["process"] == "kubelet", a
assert a["functions"][0]["function"] == "mem_cgroup_nr_lru_pages", a["functions"]
ans = json.load(open(sys.argv[1]))["answer"]
assert ans["from"] == "slice" and ans["kind"] == "process" and ans["process"] == "kubelet", ans
assert ans["top_function"] == "mem_cgroup_nr_lru_pages" and "function" not in ans, ans
assert ans["under"] is None, ans  # its hot stack is nine in ten of its samples: nothing to add
PY
for id in 3fb0 5e5e 0bad 77aa; do
        want=0
        [ $id = 0bad ] && want=1 # the corrupt one: its JSON still, and exit 1
        expect_exit $want tb show --json=short $id
        python3 -m json.tool "$OUT" >/dev/null || fail "show --json $id is not JSON"
done

# check_svg FILE [diff]: an XML parser accepts it, frames have tooltips; a diff colours rises red.
check_svg() {
        if command -v xmllint >/dev/null; then
                xmllint --noout "$1" || fail "$1 is not XML"
        fi
        grep -q '<svg ' "$1" || fail "not an svg"
        grep -q '<title>mem_cgroup_nr_lru_pages (1231 samples' "$1" || fail "svg lacks a frame tooltip"
        if [ "${2:-}" = diff ]; then
                grep -q 'baseline' "$1" || fail "diff svg does not mention the baseline"
                grep -A1 '<title>mem_cgroup_nr_lru_pages' "$1" | grep -q 'fill="rgb(255,' || fail "risen frame not red"
                grep -A1 '<title>intel_idle' "$1" | grep -q 'fill="rgb([0-9]*,[0-9]*,255)' || fail "fallen frame not blue"
        fi
}

# export ID (bundle_export_bundle): the bundle's own files byte for byte, SVG an XML parser accepts.
DIR="$STATE/incidents/20261121T143000Z-ena-reset-3fa9c2d1"
expect_exit 0 tb export 3fa9 --format folded
cmp -s "$OUT" "$DIR/stacks.folded" || fail "export folded differs from stacks.folded"
expect_exit 0 tb export 3fa9 --format perf-script
cmp -s "$OUT" "$DIR/stacks.perf-script" || fail "export perf-script differs"
expect_exit 0 tb export 3fa9 --format svg
check_svg "$OUT"
expect_exit 0 tb export 3fa9 --format svg --diff
check_svg "$OUT" diff
expect_exit 64 tb export 3fa9 --format svg --from -1h
grep -q "do not apply to a bundle" "$ERR" || fail "--from not refused clearly"
expect_exit 64 tb export 3fa9 --format png
expect_exit 1 tb export 3f --format folded

# open: needs $TPROF_VIEWER; speedscope gets the perf-script, anything else an SVG.
expect_exit 64 tb open 3fa9
grep -q 'TPROF_VIEWER is not set' "$ERR" || fail "open without a viewer not explained"
mkdir "$TEST_TMP/viewed"
TPROF_VIEWER="cp -t $TEST_TMP/viewed" TMPDIR="$TEST_TMP" expect_exit 0 tb open 3fa9
svg=$(ls "$TEST_TMP"/viewed/tprof-3fa9c2d1-*.svg) || fail "open did not hand an svg to the viewer"
check_svg "$svg"
rm "$svg"
TPROF_VIEWER="cp -t $TEST_TMP/viewed" TMPDIR="$TEST_TMP" expect_exit 0 tb open --diff 3fa9
check_svg "$(ls "$TEST_TMP"/viewed/tprof-3fa9c2d1-*.svg)" diff
cat >"$TEST_TMP/speedscope" <<EOS
#!/bin/sh
cp "\$1" "$TEST_TMP/viewed/speedscope-input"
basename "\$1" >"$TEST_TMP/viewed/speedscope-name"
EOS
chmod +x "$TEST_TMP/speedscope"
# speedscope tells formats by the file's name first: named so, it never guesses.
TPROF_VIEWER="$TEST_TMP/speedscope" TMPDIR="$TEST_TMP" expect_exit 0 tb open 3fa9
cmp -s "$TEST_TMP/viewed/speedscope-input" "$DIR/stacks.perf-script" || fail "speedscope did not get stacks.perf-script"
[ "$(cat "$TEST_TMP/viewed/speedscope-name")" = 3fa9c2d1.linux-perf.txt ] ||
        fail "speedscope's file is named $(cat "$TEST_TMP/viewed/speedscope-name")"
# README and tprof-bundle(1) name it by the short id too.
grep -qF '`<short id>.linux-perf.txt`' "$TPROF_SOURCE_ROOT/README.md" || fail "README names speedscope's file otherwise"
sed 's/\\-/-/g; s/\\f[BIRP]//g' "$TPROF_SOURCE_ROOT/man/tprof-bundle.1" | grep -qF 'SHORT-ID.linux-perf.txt' ||
        fail "tprof-bundle.1 names speedscope's file otherwise"
# A state directory given relative to where tprof-bundle runs: the link still reaches the file.
(cd "$(dirname "$STATE")" && TPROF_VIEWER="$TEST_TMP/speedscope" TMPDIR="$TEST_TMP" \
        "$TPROF_BUNDLE" -D "$(basename "$STATE")" open 3fa9 >/dev/null 2>"$ERR") || fail "open with a relative -D: $(cat "$ERR")"
cmp -s "$TEST_TMP/viewed/speedscope-input" "$DIR/stacks.perf-script" || fail "open with a relative -D: the link leads nowhere"
mv "$DIR/stacks.perf-script" "$TEST_TMP/perf-script.aside"
TPROF_VIEWER="$TEST_TMP/speedscope" TMPDIR="$TEST_TMP" expect_exit 0 tb open 3fa9
mv "$TEST_TMP/perf-script.aside" "$DIR/stacks.perf-script"
cmp -s "$TEST_TMP/viewed/speedscope-input" "$DIR/stacks.folded" || fail "speedscope did not get stacks.folded"
[ "$(cat "$TEST_TMP/viewed/speedscope-name")" = 3fa9c2d1.collapsedstack.txt ] ||
        fail "speedscope's folded file is named $(cat "$TEST_TMP/viewed/speedscope-name")"
TPROF_VIEWER=false TMPDIR="$TEST_TMP" expect_exit 1 tb open 3fa9

# rm: refuses ambiguity and pending ones, removes by prefix, says what it removed.
expect_exit 1 tb rm 3f
[ -d "$DIR" ] || fail "ambiguous rm removed something"
expect_exit 1 tb rm 77aa
grep -q -- "--force" "$ERR" || fail "pending rm not refused with a hint"
[ -d "$STATE/incidents/.tmp-20261121T150000Z-ena-reset-77aa0001" ] || fail "pending bundle removed without --force"
expect_exit 1 tb rm 3fa9 nope
[ -d "$DIR" ] || fail "rm removed something although one ID was unknown"
expect_exit 0 tb rm 3fa9
grep -q "Removed .*20261121T143000Z-ena-reset-3fa9c2d1 (released 2 pinned windows" "$OUT" || fail "rm output: $(cat "$OUT")"
[ ! -e "$DIR" ] || fail "rm left the bundle"
expect_exit 0 tb rm --force 77aa 0bad
[ "$(wc -l <"$OUT")" = 2 ] || fail "rm of two"
expect_exit 0 tb ls --no-legend
[ "$(wc -l <"$OUT")" = 2 ] || fail "ls after rm: $(cat "$OUT")"
expect_exit 64 tb rm
echo ok
