#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Names as real hosts produce them (tests/data/store/real-names.perf-script: C++ templates and
# operators, Rust trait impls and closures, Go methods and generics, Java and other JIT perf-map
# names, PLT and versioned symbols, compiler clones, comms with blanks or in other scripts, DSOs
# with blanks or deleted), written into a ring by the store's writer and exported in every ring
# format: the perf-script export folds (by stackcollapse-perf.pl's rules) to the folded export,
# every event line gives speedscope's and stackcollapse's regexes back the comm whole, no frame
# line looks like an event to Flamescope's heatmap, and go tool pprof reads the pprof export back
# to the same stacks, frame names, comms and counts as the folded export.
set -eu
. "$(dirname "$0")/lib.sh"
: "${STORE_TOOL:?run through meson test}"
command -v python3 >/dev/null || skip "needs python3"
FOLD="$(dirname "$0")/stackcollapse.py"
DATA="$TPROF_SOURCE_ROOT/tests/data/store/real-names.perf-script"
export LC_ALL=C.UTF-8

"$STORE_TOOL" import "$TEST_TMP/ring" 120 <"$DATA" >/dev/null
ex() { expect_exit 0 "$TPROF_BUNDLE" export --ring "$TEST_TMP/ring" --from -2h --to now "$@"; }
ex -o "$TEST_TMP/names.folded"
ex --format perf-script -o "$TEST_TMP/names.script"
ex --format pprof -o "$TEST_TMP/names.pb.gz"

python3 "$FOLD" <"$TEST_TMP/names.script" >"$TEST_TMP/names.refold"
cmp -s "$TEST_TMP/names.refold" "$TEST_TMP/names.folded" ||
        fail "perf-script does not fold to the folded export: $(diff "$TEST_TMP/names.refold" "$TEST_TMP/names.folded")"
total=$(awk '{ s += $NF } END { print s }' "$TEST_TMP/names.folded")
[ "$total" -eq "$(grep -c ' cpu-clock:$' "$DATA")" ] || fail "folded export counts $total samples"

# has LINE: the folded export has exactly this line.
has() { grep -qxF -- "$1" "$TEST_TMP/names.folded" || fail "no folded line '$1': $(cat "$TEST_TMP/names.folded")"; }
# Two threads named in another script stay two; a blank beyond ASCII is a blank.
has "线程池-1;work 3"
has "线程组-1;work 3"
has "a_b;work 1"
has "Ünïcødé;work 1"
has "Web_Content;main;js::RunScript 3"
has "rust-app;rust_app::main;<std::fs::File as core::ops::drop::Drop>::drop 2"
has "perfmap;main;weird_0.5: y:z 3"

# The viewers' own event-line regexes: speedscope's (JavaScript's \s, like Python's, matches
# Unicode blanks) and stackcollapse-perf.pl's give back the comm the folded root has; Flamescope's
# heatmap finds its event regex in no frame line.
python3 - "$TEST_TMP/names.script" "$TEST_TMP/names.folded" <<'EOF' || fail "a viewer misreads the perf-script export"
import re, sys
roots = {l.rsplit(' ', 1)[0].split(';')[0] for l in open(sys.argv[2], encoding='utf-8')}
speedscope = re.compile(r'^(\S.+?)\s+(\d+)(?:/?(\d+))?\s+')
stackcollapse = re.compile(r'^(\S.+?)\s+(\d+)/*(\d+)*\s+', re.ASCII)
flamescope = re.compile(r' +([0-9.]+): .+?:')
bad = 0
for line in open(sys.argv[1], encoding='utf-8'):
    line = line.rstrip('\n')
    if not line or line.startswith('#'):
        continue
    if line.startswith('\t'):
        if flamescope.search(line):
            print('Flamescope takes a frame for an event: ' + line); bad += 1
        continue
    for name, rx in (('speedscope', speedscope), ('stackcollapse', stackcollapse)):
        m = rx.match(line)
        if not m or m.group(1) not in roots:
            print('%s reads the comm of %r as %r' % (name, line, m and m.group(1))); bad += 1
sys.exit(bad > 0)
EOF

# go tool pprof reads the same stacks back: comm label, frames root first, sample counts.
if command -v go >/dev/null; then
        export HOME="$TEST_TMP/home" GOCACHE="$TEST_TMP/gocache" GOPATH="$TEST_TMP/gopath" GOTOOLCHAIN=local \
                GOFLAGS=-mod=mod GOPROXY=off GOTELEMETRY=off GOSUMDB=off
        mkdir -p "$HOME"
        if go tool pprof -h >/dev/null 2>&1; then
                go tool pprof -traces -sample_index=samples "$TEST_TMP/names.pb.gz" >"$TEST_TMP/traces" 2>"$TEST_TMP/pprof.err" ||
                        fail "pprof -traces failed: $(cat "$TEST_TMP/pprof.err")"
                python3 - "$TEST_TMP/traces" >"$TEST_TMP/pprof.folded" <<'EOF'
import sys
stacks, comm, frames, count = {}, None, [], 0
def flush():
    if frames:
        key = ';'.join([comm] + frames[::-1])
        stacks[key] = stacks.get(key, 0) + count
for line in open(sys.argv[1], encoding='utf-8'):
    line = line.rstrip('\n')
    if line.startswith('-----------+'):
        flush(); comm, frames, count = None, [], 0
    elif len(line) > 13 and line[10] == ':' and line[:10].strip() == 'comm':
        comm = line[13:]
    elif len(line) > 13 and line[10:13] == '   ' and comm is not None:
        if line[:10].strip():
            count = int(line[:10])
        frames.append(line[13:])
flush()
for k in sorted(stacks, key=lambda s: s.encode()):
    print('%s %d' % (k, stacks[k]))
EOF
                cmp -s "$TEST_TMP/pprof.folded" "$TEST_TMP/names.folded" ||
                        fail "go tool pprof reads other stacks than the folded export: $(diff "$TEST_TMP/pprof.folded" "$TEST_TMP/names.folded")"
        fi
fi
echo ok
