#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Writes a seed corpus for every fuzz target into OUTDIR/<target>/, from the project's own test
# data and writers rather than committed blobs:
#
#   kmsg             each record of tests/data/kmsg/recorded.kmsg, the --test-rules logs and journal JSON lines
#   rules            rules/default.yaml and every YAML file under tests/data/rules
#   window           window files from make-window-seeds (the store's own writer)
#   pprof            the same window files, whose samples fuzz-pprof gives the pprof builder
#   bundle-manifest  manifest.json of each kind of bundle tests/helpers/make-fixture-bundle.py makes
#   folded           the three folded files of the fixture bundles whose answers the tests know
#   control          requests tprof-bundle sends and replies tprofd gives
#   names            comm, DSO and symbol of each frame in tests/data/store/odd-names.perf-script
#   escape           the hostile fixture bundle's log, and the kmsg and rules test logs
#   activity         activity.tsv of the fixture bundles that have one, behind a header from their
#                    manifest (slice length, rate, captured CPU, the event's second)
#   oom              each kernel version's OOM kill in tests/data/rules-corpus/oom.txt, its lines
#   bundle-show      the files show reads of each kind of fixture bundle, log.jsonl or log.txt
#   gopclntab        Go function tables in each layout, from make-gopclntab-seeds
#   elf              the small ELF fixtures the build made: the symbolizer's library (whole, and
#                    stripped to .dynsym and .eh_frame_hdr), the stand-ins for Go PIEs
#   unwind-cfi       the unwinder's fixtures (.eh_frame with its search table before or after it,
#                    .debug_frame plain and compressed both ways, i386's), the Go stand-ins, and
#                    /bin/bash cut down to its .eh_frame_hdr and .eh_frame
#   unwind-walk      unwind-fixture's own registers and stack (snapshot mode, without address space
#                    randomization, as fuzz-unwind-walk maps it), shallow and deep, in each mode
#
#   make-seeds.sh OUTDIR [BUILDDIR]     (BUILDDIR: where make-*-seeds were built; build-fuzz)
set -eu

out=${1:?usage: make-seeds.sh OUTDIR [BUILDDIR]}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${2:-$top/build-fuzz}
data=$top/tests/data

for t in kmsg rules window pprof bundle-manifest folded control names escape gopclntab elf unwind-cfi unwind-walk \
        activity oom bundle-show; do
        mkdir -p "$out/$t"
done

# kmsg: one file per record (its header line and the " KEY=value" lines after it), as one read()
# of /dev/kmsg returns it; and each line of the logs the rules tester reads.
python3 - "$data/kmsg/recorded.kmsg" "$out/kmsg" "$data"/rules/*.log <<'PY'
import sys
src, out, logs = sys.argv[1], sys.argv[2], sys.argv[3:]
records = []
for line in open(src, "rb").read().splitlines(keepends=True):
    if line.startswith(b" ") and records:
        records[-1] += line
    else:
        records.append(line)
n = 0
for r in records:
    open("%s/recorded-%03d" % (out, n), "wb").write(r)
    n += 1
for log in logs:
    for line in open(log, "rb").read().splitlines(keepends=True):
        open("%s/log-%03d" % (out, n), "wb").write(line)
        n += 1
# journalctl -o json, json-seq and json-sse entries (the tester's JSON form)
for line in (b'{"_TRANSPORT":"kernel","SYSLOG_FACILITY":"0","PRIORITY":"3","MESSAGE":"nvme nvme0: I/O 1 QID 2 timeout, aborting"}\n',
             b'\x1e{"_TRANSPORT":"journal","_SYSTEMD_UNIT":"kubelet.service","_UID":"0","_PID":"7","MESSAGE":[104,105]}\n',
             b'data: {"MESSAGE":["a",[98]],"_COMM":"x","__CURSOR":"s=1"}\n'):
    open("%s/json-%03d" % (out, n), "wb").write(line)
    n += 1
PY

# rules
cp "$top/rules/default.yaml" "$out/rules/default.yaml"
find "$data/rules" -name '*.yaml' | while read -r f; do
        rel=${f#"$data/rules/"}
        cp "$f" "$out/rules/$(echo "$rel" | tr / -)"
done

# window
"$build/tests/fuzz/make-window-seeds" "$out/window"
cp "$out/window"/* "$out/pprof/"

# gopclntab
"$build/tests/fuzz/make-gopclntab-seeds" "$out/gopclntab"

# elf: the small fixtures (the table lookalikes are megabytes: left out); those not built are not
# seeds.
for f in libtprof-elf-fixture.so libtprof-elf-fixture-stripped.so go12-fixture go12-fixture-lld \
        go116-fixture-lld go118-fixture-lld; do
        [ ! -f "$build/tests/$f" ] || cp "$build/tests/$f" "$out/elf/$f"
done

# unwind-cfi: the fixtures as built, .debug_frame compressed (SHF_COMPRESSED, and GNU's
# .zdebug_frame), and bash's unwind tables alone.
for f in unwind-fixture unwind-fixture-stripped libtprof-unwind-fixture.so libtprof-unwind-fixture-debugframe.so \
        libtprof-unwind-fixture-nocfi.so unwind-lazy compat32-fixture compat32-fixture-nofp \
        compat32-fixture-debugframe go12-fixture go118-fixture-lld; do
        [ ! -f "$build/tests/$f" ] || cp "$build/tests/$f" "$out/unwind-cfi/$f"
done
debugframe=$build/tests/libtprof-unwind-fixture-debugframe.so
if [ -f "$debugframe" ]; then
        objcopy --compress-debug-sections=zlib-gabi "$debugframe" "$out/unwind-cfi/debugframe-zlib-gabi.so" || true
        objcopy --compress-debug-sections=zlib-gnu "$debugframe" "$out/unwind-cfi/debugframe-zlib-gnu.so" || true
fi
if [ -f /bin/bash ]; then
        objcopy --only-section=.eh_frame_hdr --only-section=.eh_frame /bin/bash "$out/unwind-cfi/bash-eh-frame" || true
fi

# unwind-walk: flags, frame limit, ip sp bp bx, nine caller-saved registers, the stack (see
# fuzz-unwind-walk.c), from the fixture's snapshot without address space randomization.
if [ -x "$build/tests/unwind-fixture" ]; then
        for depth in 0 20; do
                UNWIND_FIXTURE_DEPTH=$depth setarch "$(uname -m)" -R "$build/tests/unwind-fixture" snapshot \
                        "$out/unwind-walk/snapshot" || continue
                python3 - "$out/unwind-walk/snapshot" "$out/unwind-walk" "$depth" <<'PY'
import struct, sys
src, out, depth = sys.argv[1], sys.argv[2], sys.argv[3]
b = open(src, "rb").read()
assert b[:4] in (b"TPUW", b"TPUA")  # an arm64 fixture's has its link register after the header
ip, sp, bp, size = struct.unpack_from("<4Q", b, 4)
start = 44 if b[:4] == b"TPUA" else 36
stack = b[start:start + size]
for flags in (0x00, 0x01, 0x02, 0x08, 0x10):
    hdr = bytes([flags, 128]) + struct.pack("<4Q", ip, sp, bp, 0) + bytes(8 * 9)
    open("%s/depth%s-flags%02x" % (out, depth, flags), "wb").write(hdr + stack)
PY
                rm -f "$out/unwind-walk/snapshot"
        done
fi

# bundle-manifest: one state directory per kind, each manifest copied out.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for kind in anomaly quiet hostile corrupt pending nocov; do
        python3 "$top/tests/helpers/make-fixture-bundle.py" "$tmp/$kind" "$kind" >/dev/null
        find "$tmp/$kind" -name manifest.json | while read -r f; do
                cp "$f" "$out/bundle-manifest/$kind.json"
        done
done

# folded: a byte of CPUs, then stacks.folded, baseline.folded and event.folded, NUL between, of
# the bundles whose answers the tests know.
for kind in anomaly burst under few quiet hostile; do
        python3 "$top/tests/helpers/make-fixture-bundle.py" "$tmp/folded-$kind" "$kind" >/dev/null
        d=$(find "$tmp/folded-$kind/incidents" -mindepth 1 -maxdepth 1 -type d | head -n 1)
        { printf '\010'; cat "$d/stacks.folded"; printf '\000'; cat "$d/baseline.folded"; printf '\000'
          cat "$d/event.folded" 2>/dev/null || true; } >"$out/folded/$kind"
done

# control
printf 'OP=status\n' >"$out/control/status"
printf 'OP=capture\nBEFORE_USEC=30000000\nAFTER_USEC=5000000\nNOTE=checking\n' >"$out/control/capture"
printf 'OK=1\nID=20261121T143000Z-manual-1a2b3c\n' >"$out/control/reply-capture"
printf 'ERROR=too many incidents are being recorded, try again later\n' >"$out/control/reply-error"
printf 'OK=1\nVERSION=0.1.0\nCPUS=4\nSAMPLES=123456\nLOST=0\nRULES=14\nBUNDLES=2\n' >"$out/control/reply-status"

# names: a byte for the buffer size, then comm, DSO and symbol, NUL-separated.
python3 - "$data/store/odd-names.perf-script" "$out/names" <<'PY'
import re, sys
src, out = sys.argv[1], sys.argv[2]
comm, n = b"", 0
for line in open(src, "rb").read().splitlines():
    if line.startswith(b"#") or not line.strip():
        continue
    if not line[:1].isspace():
        m = re.match(rb"(.*?)\s+\d+/\d+\s+\[", line)
        comm = m.group(1) if m else line
        continue
    m = re.match(rb"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", line)
    if not m:
        continue
    for size in (255, 15):
        open("%s/frame-%03d" % (out, n), "wb").write(bytes([size]) + comm + b"\0" + m.group(2) + b"\0" + m.group(1))
        n += 1
PY

# escape
find "$tmp/hostile" -name 'log.jsonl' -exec cp {} "$out/escape/hostile-log.jsonl" \;
cp "$data/kmsg/recorded.kmsg" "$out/escape/recorded.kmsg"
for f in "$data"/rules/*.log; do
        cp "$f" "$out/escape/$(basename "$f")"
done

# activity: a header (flags, columns, slice seconds, captured CPU, event's second, rate, the
# seconds the samples cover whole; see fuzz-activity.c), as show reads them from the manifest,
# then activity.tsv.
for kind in anomaly steal idle irqidle drop starve hostile; do
        python3 "$top/tests/helpers/make-fixture-bundle.py" "$tmp/activity-$kind" "$kind" >/dev/null
        d=$(find "$tmp/activity-$kind/incidents" -mindepth 1 -maxdepth 1 -type d | head -n 1)
        [ -f "$d/activity.tsv" ] || continue
        python3 - "$d" "$out/activity/$kind" <<'PY'
import json, struct, sys
d, out = sys.argv[1], sys.argv[2]
m = json.load(open(d + "/manifest.json"))
sl, ev = m.get("slice") or {}, m.get("event") or {}
frm, to = sl.get("from_perf_ns", 0), sl.get("to_perf_ns", 0)
secs = min((to - frm + 10**9 - 1) // 10**9, 65535)
t = ev.get("t_perf_ns", 0)
ev_s = (t - frm) // 10**9 if frm <= t <= to else 0
cap = ev.get("captures") or {}
cpu = int(cap["cpu"]) if str(cap.get("cpu", "")).isdigit() else 0
a = max(sl.get("covered_from_perf_ns", frm) - frm, 0)
b = max(sl.get("covered_to_perf_ns", to) - frm, 0)
cov_from, cov_to = min((a + 10**9 - 1) // 10**9, 65535), min(b // 10**9, 65535)
freq = (m.get("profile") or {}).get("freq_hz", 0)
tsv = open(d + "/activity.tsv", "rb").read()
lost = 8 if sl.get("lost") else 0
for flags, cols, suffix in ((0x06 | lost, 80, "ascii"), (0x07 | lost, 0, "utf8")):
    if "cpu" not in cap:
        flags &= ~2
    hdr = struct.pack("<BBHHHIHH", flags, cols, secs, cpu, ev_s, freq, cov_from, cov_to)
    open("%s-%s" % (out, suffix), "wb").write(hdr + tsv)
PY
done

# oom: each kernel version's OOM kill from the rules corpus, its lines as the kernel logged them
# (without dmesg's time), the line that opens it marked as the trigger (flags 3), the others as
# the kernel's (1).
python3 - "$data/rules-corpus/oom.txt" "$out/oom" <<'PY'
import re, sys
src, out = sys.argv[1], sys.argv[2]
groups, cur = [], None
for line in open(src, "rb").read().splitlines():
    if line.startswith(b"# Linux") or line.startswith(b"# RHEL"):
        cur = []
        groups.append(cur)
        continue
    if line.startswith(b"#") or not line.strip() or cur is None:
        continue
    cols = line.split(b"\t", 3)
    if len(cols) < 4:
        continue
    msg = re.sub(rb"^\[ *[0-9.]+\] ", b"", cols[3])
    msg = re.sub(rb"^\d+,\d+,\d+,[^;]*;", b"", msg)
    msg = re.sub(rb"^[A-Z][a-z]{2} +\d+ [0-9:]+ \S+ kernel: ", b"", msg)
    cur.append(msg)
n = 0
for g in groups:
    if not g:
        continue
    lines = [bytes([3 if i == 0 else 1]) + m for i, m in enumerate(g)]
    open("%s/kill-%02d" % (out, n), "wb").write(b"\n".join(lines) + b"\n")
    n += 1
PY

# bundle-show: the flags (1: log.txt) and columns bytes, then the files of each kind of fixture
# bundle in fuzz-bundle-show.c's order, FF 00 FF between them (a missing file in the middle is
# given empty; those missing at the end are left out).
for kind in anomaly thread stuck pool steal drift burst under few quiet softirq idle irqidle drop starve hostile \
        corrupt nocov; do
        python3 "$top/tests/helpers/make-fixture-bundle.py" "$tmp/show-$kind" "$kind" >/dev/null
        d=$(find "$tmp/show-$kind/incidents" -mindepth 1 -maxdepth 1 -type d | head -n 1)
        python3 - "$d" "$out/bundle-show/$kind" <<'PY'
import os, sys
d, out = sys.argv[1], sys.argv[2]
def parts(log):
    names = ["manifest.json", log, "activity.tsv", "stacks.folded", "baseline.folded", "event.folded",
             "cpu3.folded", "cpu3-baseline.folded"]
    p = [open(os.path.join(d, n), "rb").read() if os.path.isfile(os.path.join(d, n)) else None for n in names]
    while p and p[-1] is None:
        p.pop()
    return b"\xff\x00\xff".join(x or b"" for x in p)
open(out, "wb").write(b"\x00\x50" + parts("log.jsonl"))
if os.path.isfile(os.path.join(d, "log.txt")) and os.path.basename(out) in ("anomaly", "hostile"):
    open(out + "-log-txt", "wb").write(b"\x01\x00" + parts("log.txt"))
PY
done
