#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# docs/window-format.md claims to be enough to write a second reader. tests/helpers/window-reader.py
# is one, written from the document alone; this holds it against the store's own reader, sample for
# sample, on rings the store's writer made: synthetic rings (with cgroups) and imported perf script
# text, windows of the previous formats, with the
# default chains, one chunk per chain and short chains, a damaged chunk, and, where perf events
# can be opened, tprofd's own compact and exact rings.
#
# Two references:
#  - `store-tool dump` prints what the store reads, every field as stored (raw comm, symbol, DSO,
#    period 0 when unknown), in the second reader's format: compared exactly (as sorted lists:
#    the store merges chunks by time, the second reader keeps file order).
#  - `tprof-bundle export --format perf-script`, what users get: compared after normalizing the
#    second reader's side the way the export names things (docs/window-format.md, "Exports of a
#    range"): times in microseconds, period 0 printed as 1, comms tidied, no offset on an [unknown]
#    frame, the last sample moved off a whole second. The export also tidies symbols and DSOs
#    (src/profile/profile-names.h) in ways this test does not redo, so a symbol or DSO that holds
#    anything but plain name characters is compared by address and offset only. The kernel-frame
#    flag and the lost-sample counts appear in neither reference and are not compared.
# Last, the comparison must be able to fail: copies of the reader with one rule broken must
# disagree with the store.
set -eu
. "$(dirname "$0")/lib.sh"
: "${STORE_TOOL:?run through meson test}"
command -v python3 >/dev/null || skip "needs python3"
command -v zstd >/dev/null || skip "needs the zstd command"
READER="$TPROF_SOURCE_ROOT/tests/helpers/window-reader.py"
DATA="$TPROF_SOURCE_ROOT/tests/data/store"

cat >"$TEST_TMP/export-compare.py" <<'EOF'
# export-compare.py READER-OUTPUT PERF-SCRIPT-EXPORT: the same samples, up to the export's naming?
import collections, re, sys

def unescape(s):
    return re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), s)

def tidy_comm(c):
    c = bytes(b"_"[0] if b in b" \t" or b < 0x20 or b == 0x7f else b":"[0] if b == 0x3b else b for b in c)
    if not c:
        return b"[unknown]"
    return c + b"_" if len(c) == 1 else c

PLAIN_SYMBOL = re.compile(rb"^[A-Za-z0-9_.:/<>\[\]@$-]+$")
PLAIN_DSO = re.compile(rb"^[A-Za-z0-9_.:/\[\]@+,=~-]+$")

def plain_symbol(s):
    return PLAIN_SYMBOL.match(s) and b"->" not in s and not re.search(rb"\+0x[0-9a-f]+$", s)

def reader_samples(path):
    """(coarse key, names) per sample: names are None where the export's tidying is not redone."""
    out = []
    for line in open(path, "rb"):
        head, frames, _cgroup = line.rstrip(b"\n").split(b"\t", 2)
        t_ns, cpu, pid, tid, period, comm = head.split(b" ", 5)
        assert int(t_ns) % 1000 == 0, line
        addrs, offs, names = [], [], []
        for f in frames.split(b";") if frames else []:
            addr, rest = f.split(b":", 1)
            mid, dso = rest.rsplit(b":", 1)
            sym, off = mid.rsplit(b"+0x", 1)
            sym, dso = unescape(sym), unescape(dso)
            addrs.append(int(addr, 16))
            # an empty symbol is exported as [unknown] too, without an offset
            offs.append(None if sym in (b"[unknown]", b"") else int(off, 16))
            names.append((sym if plain_symbol(sym) else None, dso if PLAIN_DSO.match(dso) else None))
        key = (int(t_ns) // 1000, int(cpu), int(pid), int(tid), int(period) or 1, tidy_comm(unescape(comm)),
               tuple(addrs), tuple(offs))
        out.append((key, tuple(names)))
    return out

EVENT = re.compile(rb"^(.*) (\d+)/(\d+) \[(\d+)\] (\d+)\.(\d{6}): (\d+) [^ ]+:$")

def export_samples(path):
    out, cur = [], None
    for line in open(path, "rb"):
        line = line.rstrip(b"\n")
        if line.startswith(b"#"):
            continue
        if not line:
            if cur:
                out.append(cur)
            cur = None
            continue
        if cur is None:
            m = EVENT.match(line)
            assert m, line
            cur = [int(m.group(5)) * 1000000 + int(m.group(6)), int(m.group(4)), int(m.group(2)), int(m.group(3)),
                   int(m.group(7)), m.group(1), [], [], []]
            continue
        assert line.startswith(b"\t"), line
        addr, rest = line[1:].split(b" ", 1)
        i = rest.rindex(b" (")
        sym, dso = rest[:i], rest[i + 2:-1]
        m = re.match(rb"^(.*)\+0x([0-9a-f]+)$", sym)
        cur[6].append(int(addr, 16))
        cur[7].append(int(m.group(2), 16) if m else None)
        cur[8].append((m.group(1) if m else sym, dso))
    if cur:
        out.append(cur)
    return [((c[0], c[1], c[2], c[3], c[4], c[5], tuple(c[6]), tuple(c[7])), tuple(c[8])) for c in out]

mine, theirs = reader_samples(sys.argv[1]), export_samples(sys.argv[2])
keys = collections.Counter(k for k, _ in mine)
# The export prints its last sample one microsecond later if it would fall on a whole second.
if theirs and theirs[-1][0][0] % 1000000 == 1 and theirs[-1][0] not in keys:
    k, names = theirs[-1]
    theirs[-1] = ((k[0] - 1,) + k[1:], names)
by_key = collections.defaultdict(list)
for k, names in mine:
    by_key[k].append(names)
bad = 0
for k, names in theirs:
    cands = by_key.get(k)
    match = None
    for i, c in enumerate(cands or []):
        if all((ms is None or ms == ts) and (md is None or md == td) for (ms, md), (ts, td) in zip(c, names)):
            match = i
            break
    if match is None:
        bad += 1
        if bad <= 3:
            print("export sample not read by the second reader: %r %r" % (k, names), file=sys.stderr)
        continue
    cands.pop(match)
left = [(k, n) for k, v in by_key.items() for n in v]
for k, n in left[:3]:
    print("second reader's sample missing from the export: %r %r" % (k, n), file=sys.stderr)
if bad or left:
    print("%d export samples unmatched, %d of the second reader's left over (of %d and %d)" %
          (bad, len(left), len(theirs), len(mine)), file=sys.stderr)
    sys.exit(1)
print(len(mine))
EOF

# read_ring RING [READER]: the reader's samples of every window in $TEST_TMP/mine, in file order;
# fails on any complaint.
read_ring() {
        local reader=${2:-$READER}
        python3 "$reader" "$1"/*.tpw >"$TEST_TMP/mine" 2>"$TEST_TMP/mine.err" ||
                { echo "second reader exited $?: $(head -c 2000 "$TEST_TMP/mine.err")"; return 1; }
        [ ! -s "$TEST_TMP/mine.err" ] || { echo "second reader complained: $(head -c 2000 "$TEST_TMP/mine.err")"; return 1; }
        [ -s "$TEST_TMP/mine" ] || { echo "second reader read no sample from $1"; return 1; }
}

# compare_dump RING [READER]: the reader and `store-tool dump` read the same samples.
compare_dump() {
        read_ring "$@" || return 1
        "$STORE_TOOL" dump "$1"/*.tpw >"$TEST_TMP/ref" 2>"$TEST_TMP/ref.err" || { echo "store-tool dump failed: $(cat "$TEST_TMP/ref.err")"; return 1; }
        LC_ALL=C sort "$TEST_TMP/mine" >"$TEST_TMP/mine.sorted"
        LC_ALL=C sort "$TEST_TMP/ref" >"$TEST_TMP/ref.sorted"
        cmp -s "$TEST_TMP/mine.sorted" "$TEST_TMP/ref.sorted" ||
                { echo "second reader and store differ on $1 ($(wc -l <"$TEST_TMP/mine") and $(wc -l <"$TEST_TMP/ref") samples): $(diff "$TEST_TMP/ref.sorted" "$TEST_TMP/mine.sorted" | head -6)"; return 1; }
}

# compare_export RING FROM: the samples read last ($TEST_TMP/mine) and the perf-script export of
# [FROM, now] are the same.
compare_export() {
        "$TPROF_BUNDLE" export --ring "$1" --from "$2" --to now --format perf-script -o "$TEST_TMP/export" 2>"$TEST_TMP/export.err" ||
                { echo "export of $1 failed: $(cat "$TEST_TMP/export.err")"; return 1; }
        python3 "$TEST_TMP/export-compare.py" "$TEST_TMP/mine" "$TEST_TMP/export" >/dev/null 2>"$TEST_TMP/cmp.err" ||
                { echo "second reader and perf-script export differ on $1: $(head -c 2000 "$TEST_TMP/cmp.err")"; return 1; }
}

# check RING FROM [SAMPLES]: both comparisons, and the sample count the writer reported.
check() {
        local msg
        msg=$(compare_dump "$1") || fail "$msg"
        if [ -n "${3:-}" ]; then
                [ "$(wc -l <"$TEST_TMP/mine")" = "$3" ] || fail "$1: the writer wrote $3 samples, the second reader read $(wc -l <"$TEST_TMP/mine")"
        fi
        msg=$(compare_export "$1" "$2") || fail "$msg"
}

written() { awk '$1 == "samples" { print $2 }' "$1"; }

# Synthetic rings ending now: 72 seconds of two CPUs at 97 Hz in 20-second windows (a chunk every
# 5 s), with the default chains (a window's chunks share tables and the sample model),
# with every chunk on its own, and with chains of three chunks that end inside windows. A ring at
# 997 Hz has intervals of 1003 us.
for chain in "" 1 3; do
        ring="$TEST_TMP/synth${chain:-default}"
        STORE_TOOL_CHAIN=$chain "$STORE_TOOL" synth "$ring" 0.02 2 97 20 >"$TEST_TMP/written"
        check "$ring" -1h "$(written "$TEST_TMP/written")"
done
"$STORE_TOOL" synth "$TEST_TMP/synth997" 0.002 2 997 5 >"$TEST_TMP/written"
check "$TEST_TMP/synth997" -1h "$(written "$TEST_TMP/written")"
# Times kept to the millisecond, as tprofd's compact detail keeps them at 97 Hz: the time model's
# predictions then hit and carry the unrounded tick on.
STORE_TOOL_RESOLUTION_US=1000 "$STORE_TOOL" synth "$TEST_TMP/synthms" 0.02 2 97 20 >"$TEST_TMP/written"
check "$TEST_TMP/synthms" -1h "$(written "$TEST_TMP/written")"

# A window of format 3 (no cgroups), written by the store before format 4: both readers still read
# it, as the store read it then (its dump then, with the empty cgroup column added, by checksum).
python3 "$READER" "$DATA/format-3.tpw" >"$TEST_TMP/v3.mine" 2>"$TEST_TMP/v3.err" || fail "second reader on format 3: $(cat "$TEST_TMP/v3.err")"
"$STORE_TOOL" dump "$DATA/format-3.tpw" >"$TEST_TMP/v3.ref" || fail "store-tool dump failed on format 3"
[ "$(sha256sum <"$TEST_TMP/v3.ref" | cut -d' ' -f1)" = "$(cat "$DATA/format-3.dump.sha256")" ] ||
        fail "the store reads the format 3 window differently from when it was written"
cmp -s "$TEST_TMP/v3.mine" "$TEST_TMP/v3.ref" || fail "second reader and store differ on the format 3 window"

# A window of format 4 (no build ids), written by the store before format 5: the same.
python3 "$READER" "$DATA/format-4.tpw" >"$TEST_TMP/v4.mine" 2>"$TEST_TMP/v4.err" || fail "second reader on format 4: $(cat "$TEST_TMP/v4.err")"
"$STORE_TOOL" dump "$DATA/format-4.tpw" >"$TEST_TMP/v4.ref" || fail "store-tool dump failed on format 4"
[ "$(sha256sum <"$TEST_TMP/v4.ref" | cut -d' ' -f1)" = "$(cat "$DATA/format-4.dump.sha256")" ] ||
        fail "the store reads the format 4 window differently from when it was written"
cmp -s "$TEST_TMP/v4.mine" "$TEST_TMP/v4.ref" || fail "second reader and store differ on the format 4 window"

# Imported perf script text (its first sample lands an hour ago): the odd names of the CLI test,
# and a generated stretch of twelve seconds (three chunks, one chain) with comms the export
# renames, unknown periods, threads that change their comm, samples without a call chain and
# frames that repeat a function at other offsets.
for chain in "" 1; do
        ring="$TEST_TMP/odd${chain:-default}"
        STORE_TOOL_CHAIN=$chain "$STORE_TOOL" import "$ring" 120 <"$DATA/odd-names.perf-script" >"$TEST_TMP/written"
        check "$ring" -2h "$(written "$TEST_TMP/written")"
done
python3 - >"$TEST_TMP/gen.perf-script" <<'EOF'
import random
random.seed(5)
comms = [("a b;c", 10, 11), ("x", 20, 20), ("Web Content", 30, 31), ("x", 20, 22), ("renamed", 20, 22),
         ("kworker/u8:2-events", 40, 40), ("tab\there", 50, 51)]
funcs = [("401000", "main", "/usr/bin/prog"), ("402000", "work", "/usr/bin/prog"),
         ("7f00001000", "memcpy", "/usr/lib/libc.so.6"), ("ffffffff81001000", "do_syscall_64", "[kernel.kallsyms]")]
for i in range(12 * 50):
    for cpu in range(3):
        if random.random() < 0.3:
            continue
        comm, pid, tid = random.choice(comms)
        period = random.choice([0, 1000000, 1000000, 2500000])
        print("%s %d/%d [%03d] %d.%06d: %d cpu-clock:" % (comm, pid, tid, cpu, 2000 + i // 50, (i % 50) * 20000 + cpu * 7 + random.randrange(3), period))
        for _ in range(random.choice([0, 1, 2, 4, 9])):
            addr, sym, dso = random.choice(funcs)
            off = random.choice([0, 4, 8, 0x40])
            print("\t%x %s+0x%x (%s)" % (int(addr, 16) + off, sym, off, dso))
        print()
EOF
STORE_TOOL_CHAIN="" "$STORE_TOOL" import "$TEST_TMP/gen" 120 <"$TEST_TMP/gen.perf-script" >"$TEST_TMP/written"
check "$TEST_TMP/gen" -2h "$(written "$TEST_TMP/written")"

# A damaged chunk: the second chunk of a window, its payload overwritten. Both readers skip it and
# the rest of its chain; the second reader names the same first offset as the export and as many
# chunks.
cp -r "$TEST_TMP/synthdefault" "$TEST_TMP/damaged"
victim=$(ls "$TEST_TMP"/damaged/*.tpw | sed -n 2p)
second=$(python3 - "$victim" <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
pos = int.from_bytes(d[12:16], "little")
pos += 48 + int.from_bytes(d[pos + 32:pos + 36], "little")
print(pos)
EOF
)
[ "$(stat -c %s "$victim")" -gt $((second + 48 + 200)) ] || fail "$victim has no second chunk to damage"
printf '\x55\x55\x55\x55' | dd of="$victim" bs=1 seek=$((second + 48 + 100)) conv=notrunc status=none
python3 "$READER" "$TEST_TMP"/damaged/*.tpw >"$TEST_TMP/mine" 2>"$TEST_TMP/mine.err" || fail "second reader exited $? on a damaged chunk"
grep -q "^window-reader: $victim: corrupt chunk at byte offset $second: payload CRC mismatch$" "$TEST_TMP/mine.err" ||
        fail "damaged chunk at $second not reported: $(cat "$TEST_TMP/mine.err")"
"$STORE_TOOL" dump "$TEST_TMP"/damaged/*.tpw | LC_ALL=C sort >"$TEST_TMP/ref.sorted"
LC_ALL=C sort "$TEST_TMP/mine" | cmp -s - "$TEST_TMP/ref.sorted" || fail "readers differ on a damaged ring"
expect_exit 0 "$TPROF_BUNDLE" export --ring "$TEST_TMP/damaged" --from -1h --to now -o "$TEST_TMP/damaged.folded"
n=$(grep -c "corrupt chunk" "$TEST_TMP/mine.err")
grep -q "Skipped $n damaged chunks\?; the first is in '$victim' at byte offset $second\.$" "$ERR" ||
        fail "second reader reports $n corrupt chunks from $second, the export: $(cat "$ERR")"

# tprofd's own rings, where perf events can be opened: compact detail (function frames, times to
# 100 us at 997 Hz) and exact detail, real stacks and names.
if [ "$(id -u)" = 0 ] && "$TPROFD" --once 0.1 >/dev/null 2>&1; then
        : >"$TEST_TMP/empty.yaml"
        : >"$TEST_TMP/kmsg"
        for detail in compact exact; do
                STATE="$TEST_TMP/tprofd-$detail"
                start_tprofd --config "$TEST_TMP/empty.yaml" --rules "$TEST_TMP/empty.yaml" --kmsg "$TEST_TMP/kmsg" \
                        --control-socket "" --window 2 --freq 997 --detail "$detail"
                sleep 2.5
                stop_tprofd
                check "$STATE/ring" -5m
        done
else
        echo "perf events unavailable: tprofd's own rings not compared"
fi

# The comparison can fail: the reader with one rule of the document broken must disagree.
mutate() {
        python3 - "$READER" "$TEST_TMP/broken.py" "$1" "$2" <<'EOF'
import sys
src = open(sys.argv[1]).read()
if src.count(sys.argv[3]) != 1:
    sys.exit("mutation target %r not found once in the reader" % sys.argv[3])
open(sys.argv[2], "w").write(src.replace(sys.argv[3], sys.argv[4]))
EOF
}
while IFS='|' read -r what from to; do
        mutate "$from" "$to" || fail "cannot break the reader for '$what'"
        if compare_dump "$TEST_TMP/gen" "$TEST_TMP/broken.py" >/dev/null 2>&1 &&
           compare_dump "$TEST_TMP/synthdefault" "$TEST_TMP/broken.py" >/dev/null 2>&1 &&
           compare_dump "$TEST_TMP/synthms" "$TEST_TMP/broken.py" >/dev/null 2>&1; then
                fail "a reader with '$what' broken still agrees with the store"
        fi
done <<'EOF'
recency list not updated|        self.recency.insert(0, t)|        self.recency.append(t)
stack counts not swapped|            e[i], e[j] = e[j], e[i]|            pass
offset guess ignored|            guess = prev_off + deltas[k]|            guess = 0
interval not added|        self.next_us[cpu] = (expected if hit else t) + interval_us|        self.next_us[cpu] = expected if hit else t
hit not carried|        self.next_us[cpu] = (expected if hit else t) + interval_us|        self.next_us[cpu] = t + interval_us
thread back from the front|                t = n_threads - 1 - b|                t = b
cgroup not predicted from the CPU|            pred, ctx = self.cpu_cgroup.get(cpu), 1|            pred, ctx = None, 1
cgroup probabilities shared|        if pred is not None and rc.bit(self.cgroup_same, ctx) == 0:|        if pred is not None and rc.bit(self.cgroup_same, 0) == 0:
build id bytes reversed|            chain.build_ids[sid] = r.bytes(ln).hex()|            chain.build_ids[sid] = r.bytes(ln)[::-1].hex()
EOF
echo ok
