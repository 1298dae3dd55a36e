#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Bundles' stacks in the real speedscope: the npm package speedscope (its built web app, at the
# version contrib/setup.sh pins and installs), served from 127.0.0.1 and opened by #profileURL= in
# Debian's chromium (chromium-driver, python3-selenium). Its sandwich view must list every function
# whole, with the totals and selfs that stacks.folded gives it (a perf script, one profile a thread,
# weighed as speedscope weighs its samples: by time), for
#   - names as real hosts make them (tests/data/store/real-names.perf-script: C++, Rust, Go, Java
#     and JIT names, comms with blanks, in other scripts or of digits alone) and a few more here
#     ("[irq]"-like and parenthesised comms, a comm cut inside a character, symbols that start
#     with a blank beyond ASCII), through the ring's folded and perf-script exports and the folded
#     stacks gzipped;
#   - a real bundle of the real daemon, a burner's thread named "[irq] wö " and a character cut in
#     two among its samples: its stacks.folded, stacks.perf-script, `export --format perf-script`
#     and the file `tprof-bundle open` hands speedscope, under the name it gives it.
# The checker must fail on folded stacks one sample off. Screenshots: build/tests/speedscope/.
set -eu
. "$(dirname "$0")/lib.sh"
: "${STORE_TOOL:?run through meson test}"

[ -x /usr/bin/chromium ] || skip "no chromium (contrib/setup.sh installs chromium, chromium-driver, python3-selenium)"
[ -x /usr/bin/chromedriver ] || skip "no chromedriver (Debian package chromium-driver)"
PY=
for p in /usr/bin/python3 python3; do
        if "$p" -c 'import selenium' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || skip "no python3-selenium"
WANT=$(sed -n 's/^SPEEDSCOPE_VERSION=\([0-9.]*\)$/\1/p' "$TPROF_SOURCE_ROOT/contrib/setup.sh")
APP=${TPROF_SPEEDSCOPE:-}
if [ -z "$APP" ]; then
        command -v npm >/dev/null || skip "no npm, so no speedscope (contrib/setup.sh installs speedscope $WANT with npm)"
        APP="$(npm root --global 2>/dev/null)/speedscope"
fi
[ -f "$APP/package.json" ] && [ -f "$APP/dist/release/index.html" ] ||
        skip "speedscope is not installed in $APP (contrib/setup.sh installs speedscope $WANT with npm)"
have=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' "$APP/package.json")
[ "$have" = "$WANT" ] || skip "speedscope $have is installed; this test reads speedscope $WANT's views (contrib/setup.sh installs it)"
CHECK="$TPROF_SOURCE_ROOT/tests/helpers/speedscope-browser.py"
FOLD="$(dirname "$0")/stackcollapse.py"
SHOTS="$TPROF_BUILD_ROOT/tests/speedscope"
rm -rf "$SHOTS"
mkdir -p "$SHOTS"
export LC_ALL=C.UTF-8

# folds FILE FOLDED: stackcollapse-perf.pl's rules fold the perf script FILE to exactly FOLDED
# (checked after speedscope has shown both, which the checker compares each on its own).
FOLDS=()
folds() { FOLDS+=("$1" "$2"); }

# Names: the real hosts' and these, in a ring written by the store's writer from perf script text.
{
        cat "$TPROF_SOURCE_ROOT/tests/data/store/real-names.perf-script"
        printf '[irq] 0/0 [001] 1001.000100: 10309278 cpu-clock:\n'
        printf '\tffffffff81a00000 ena_clean_rx_irq+0x4 ([kernel.kallsyms])\n\tffffffff81a00100 __napi_poll+0x5 ([kernel.kallsyms])\n\n'
        printf '(sd-pam) 1300/1300 [000] 1001.010100: 10309278 cpu-clock:\n\t401000 pam_end+0x4 (/usr/lib/x86_64-linux-gnu/libpam.so.0)\n\n'
        # A comm the kernel cut inside a character (15 bytes), and two symbols that start with a
        # blank beyond ASCII (JavaScript's \s, which speedscope's frame-line regex skips).
        printf 'a\xe5\xb7\xa5\xe4\xbd\x9c\xe7\xba\xbf\xe7\xa8\x8b\xe6\xb1 1301/1301 [001] 1001.020100: 10309278 cpu-clock:\n'
        printf '\t401000 \xc2\xa0nbsp_leaf+0x4 (/usr/bin/odd)\n\t401010 \xe3\x80\x80+0x5 (/usr/bin/odd)\n\t401020 main+0x6 (/usr/bin/odd)\n\n'
        printf '[irq] 0/0 [001] 1001.030100: 10309278 cpu-clock:\n'
        printf '\tffffffff81a00000 ena_clean_rx_irq+0x4 ([kernel.kallsyms])\n\tffffffff81a00100 __napi_poll+0x5 ([kernel.kallsyms])\n\n'
} >"$TEST_TMP/names.in"
"$STORE_TOOL" import "$TEST_TMP/ring" 120 <"$TEST_TMP/names.in" >/dev/null
ex() { expect_exit 0 "$TPROF_BUNDLE" export --ring "$TEST_TMP/ring" --from -2h --to now "$@"; }
ex -o "$TEST_TMP/names.folded"
ex --format perf-script -o "$TEST_TMP/names.perf-script"
folds "$TEST_TMP/names.perf-script" "$TEST_TMP/names.folded"
gzip -c "$TEST_TMP/names.folded" >"$TEST_TMP/names.folded.gz"
CUT='a工作线程\xe6\xb1'
GROUPS_=(-- "$TEST_TMP/names.folded" --perf-script "$TEST_TMP/names.perf-script"
        --folded "$TEST_TMP/names.folded" --folded "$TEST_TMP/names.folded.gz"
        --comm "[irq]" --comm "(sd-pam)" --comm "$CUT" --comm "Web_Content" --comm "线程池-1" --comm "x_1" --comm "12345"
        --frame "std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >"
        --frame "Foo::operator[]" --frame "Foo::operator+=" --frame "_anonymous namespace)::f"
        --frame "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop" --frame "main.(*T).Method"
        --frame "main.Map[go.shape.int,go.shape.string]" --frame "type:.eq.[2]interface {}" --frame "runtime·goexit"
        --frame "LazyCompile:*foo /srv/app/x.js:10:5" --frame "nbsp_leaf" --frame "ena_clean_rx_irq")

# A real bundle: the daemon samples a burner's thread with a name of blanks, brackets and a
# character cut in two (15 bytes at most, as the kernel keeps), and a line in /dev/kmsg triggers it.
if [ "$(id -u)" = 0 ] && [ -w /dev/kmsg ] && [ -n "${TPROF_BURN:-}" ] && [ -x "$TPROF_BURN" ] &&
        "$TPROFD" --once 0.2 >/dev/null 2>"$TEST_TMP/perf-probe"; then
        cat >"$TEST_TMP/rules.yaml" <<RULES
rules:
  - name: speedscope
    source: kernel
    origin: any
    match: 'tprof-speedscope-$TOKEN'
    before: 4s
    after: 1s
RULES
        start_tprofd --rules "$TEST_TMP/rules.yaml" --window 2s --control-socket ""
        "$TPROF_BURN" --thread $'[irq] w\xc3\xb6 \xe6\xb1' 9 &
        BURN_PID=$!
        on_exit "kill $BURN_PID 2>/dev/null"
        sleep 5
        echo "tprof-speedscope-$TOKEN" >/dev/kmsg
        bundle_ready() { compgen -G "$STATE/incidents/*-speedscope-*/manifest.json" >/dev/null; }
        wait_for 20 bundle_ready || fail "no bundle: $(tail -20 "$TEST_TMP/tprofd.log")"
        kill "$BURN_PID" 2>/dev/null || true
        stop_tprofd
        B=$(compgen -G "$STATE/incidents/*-speedscope-*")
        ID=${B##*-}
        [ -s "$B/stacks.perf-script" ] || fail "the bundle has no stacks.perf-script: $(ls "$B")"
        folds "$B/stacks.perf-script" "$B/stacks.folded"
        BURNER='[irq]_wö_\xe6\xb1'
        grep -qF "$BURNER;" "$B/stacks.folded" || fail "no samples of the burner's thread: $(cut -c1-80 "$B/stacks.folded" | head)"
        expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export "$ID" --format perf-script
        cp "$OUT" "$TEST_TMP/export.perf-script"
        folds "$TEST_TMP/export.perf-script" "$B/stacks.folded"
        # The file `open` hands a viewer named speedscope, under the name it gives it.
        printf '#!/bin/sh\nprintf "%%s\\n" "$1" >"%s/opened"\n' "$TEST_TMP" >"$TEST_TMP/speedscope"
        chmod +x "$TEST_TMP/speedscope"
        TPROF_VIEWER="$TEST_TMP/speedscope" TMPDIR="$TEST_TMP" expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" open "$ID"
        OPENED=$(cat "$TEST_TMP/opened")
        [ "$(basename "$OPENED")" = "$ID.linux-perf.txt" ] || fail "open handed speedscope $OPENED"
        GROUPS_+=(-- "$B/stacks.folded" --folded "$B/stacks.folded" --perf-script "$B/stacks.perf-script"
                --perf-script "$TEST_TMP/export.perf-script" --perf-script "$OPENED"
                --comm "$BURNER" --frame burn_outer --frame burn_middle --frame burn_leaf)
else
        echo "no perf events, /dev/kmsg or burner here: the names alone, without a daemon's bundle"
fi

"$PY" "$CHECK" "$APP/dist/release" "$SHOTS" "${GROUPS_[@]}" || fail "speedscope shows other stacks than the files hold"
for ((i = 0; i < ${#FOLDS[@]}; i += 2)); do
        "$PY" "$FOLD" <"${FOLDS[i]}" >"$TEST_TMP/refold"
        cmp -s "$TEST_TMP/refold" "${FOLDS[i + 1]}" ||
                fail "${FOLDS[i]} does not fold to ${FOLDS[i + 1]}: $(diff "$TEST_TMP/refold" "${FOLDS[i + 1]}" | head -5)"
done
# The blanks that led the two symbols are gone (one is nothing but a blank: [unknown], folded as
# its DSO's name), in both files alike.
grep -qxF "$CUT;main;[odd];nbsp_leaf 1" "$TEST_TMP/names.folded" ||
        fail "the cut comm and the blank-led symbols are not as expected: $(grep -F "$CUT" "$TEST_TMP/names.folded")"

# The checker fails on folded stacks one sample off from what speedscope shows.
awk 'NR == 1 { $NF = $NF + 1 } 1' "$TEST_TMP/names.folded" >"$TEST_TMP/off.folded"
rc=0
"$PY" "$CHECK" "$APP/dist/release" "$TEST_TMP/neg" -- "$TEST_TMP/off.folded" --folded "$TEST_TMP/names.folded" \
        >"$TEST_TMP/neg.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "the checker did not notice a sample too many (exit $rc): $(tail -3 "$TEST_TMP/neg.out")"
echo "ok (screenshots in $SHOTS)"
