#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shipped rules (rules/) fire exactly where they should: every default rule on its real-format
# kernel lines in all four input forms (dmesg, raw kmsg, journalctl -o short, plain) and the dmesg
# lines in the forms other tools and log files print them, and nothing
# on the near misses (recovery messages, link changes, other drivers' look-alikes, user space and
# user-written kmsg records quoting kernel text). The prefilter must not change any of it.
set -eu
. "$(dirname "$0")/lib.sh"

RULES="$TPROF_SOURCE_ROOT/rules"
DATA="$TPROF_SOURCE_ROOT/tests/data/rules"

expect_exit 0 "$TPROFD" --check-config --rules "$RULES"
grep -qE '^rules: [0-9]+ loaded from ' "$OUT" || fail "--check-config said: $(cat "$OUT")"

cut -f2 "$DATA/positive.expected" >"$TEST_TMP/want-rules"

for form in dmesg kmsg journal plain; do
        log="$DATA/positive-$form.log"
        expect_exit 0 "$TPROFD" --test-rules --rules "$RULES" "$log"
        cut -f2 "$OUT" >"$TEST_TMP/got-rules"
        diff -u "$TEST_TMP/want-rules" "$TEST_TMP/got-rules" >&2 || fail "$form: wrong rules matched"
        # Third column: the input line itself, at the line number of the first column.
        while IFS=$'\t' read -r n rule line; do
                [ "$(sed -n "${n}p" "$log")" = "$line" ] || fail "$form: line $n printed as '$line'"
        done <"$OUT"
        # The same with the prefilter off: it may change speed, never results.
        TPROF_RULES_PREFILTER=0 "$TPROFD" --test-rules --rules "$RULES" "$log" >"$TEST_TMP/noprefilter" 2>/dev/null
        cmp -s "$OUT" "$TEST_TMP/noprefilter" || fail "$form: prefilter changed the matches"
done

# dmesg and plain keep one event per line: the line numbers are exact.
for form in dmesg plain; do
        "$TPROFD" --test-rules --rules "$RULES" "$DATA/positive-$form.log" 2>/dev/null | cut -f1,2 >"$TEST_TMP/got"
        diff -u "$DATA/positive.expected" "$TEST_TMP/got" >&2 || fail "$form: wrong line numbers"
done

# The dmesg lines as the other tools and files people paste from show them: each form must match
# the same rules on the same lines (the prefixes and time stamps taken off exactly).
for form in "${!DMESG_FORMS[@]}"; do
        sed "${DMESG_FORMS[$form]}" "$DATA/positive-dmesg.log" >"$TEST_TMP/positive-$form.log"
        ! cmp -s "$TEST_TMP/positive-$form.log" "$DATA/positive-dmesg.log" || fail "$form: sed changed nothing"
        "$TPROFD" --test-rules --rules "$RULES" "$TEST_TMP/positive-$form.log" 2>/dev/null | cut -f1,2 >"$TEST_TMP/got"
        diff -u "$DATA/positive.expected" "$TEST_TMP/got" >&2 || fail "$form: wrong rules or lines ($(head -1 "$TEST_TMP/positive-$form.log"))"
done

# journalctl -o json of the kernel's own records (_TRANSPORT=kernel, facility 0): the same rules on
# the same lines. The same text written to /dev/kmsg by user space (facility 1, as journald keeps
# it) is nobody's event.
python3 - "$DATA/positive-plain.log" "$TEST_TMP" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
# As journald's dev_kmsg_record() keeps them: the kernel's records carry no SYSLOG_FACILITY and
# are identified "kernel"; user space's have their facility and the identifier they wrote.
for name, facility in (("json-kernel", None), ("json-user", "1")):
    with open(src, encoding="utf-8") as f, open(f"{out}/positive-{name}.log", "w", encoding="utf-8") as o:
        for n, line in enumerate(f):
            entry = {"__CURSOR": f"s=1;i={n:x}", "__REALTIME_TIMESTAMP": str(1764176400000000 + n),
                     "PRIORITY": "3", "SYSLOG_IDENTIFIER": "kernel" if facility is None else "app",
                     "_TRANSPORT": "kernel", "MESSAGE": line.rstrip("\n")}
            if facility is not None:
                entry["SYSLOG_FACILITY"] = facility
            o.write(json.dumps(entry) + "\n")
PY
"$TPROFD" --test-rules --rules "$RULES" "$TEST_TMP/positive-json-kernel.log" 2>"$ERR" | cut -f1,2 >"$TEST_TMP/got"
diff -u "$DATA/positive.expected" "$TEST_TMP/got" >&2 || fail "journalctl -o json: wrong rules or lines"
grep -q ' 36 journal JSON' "$ERR" || fail "journalctl -o json: not read as JSON: $(head -1 "$ERR")"
"$TPROFD" --test-rules --rules "$RULES" "$TEST_TMP/positive-json-user.log" >"$OUT" 2>/dev/null
[ ! -s "$OUT" ] || fail "user space's kmsg records in journalctl -o json matched: $(head -3 "$OUT")"

# Every shipped rule is covered by the positive lines.
expect_exit 0 "$TPROFD" --test-rules --rules "$RULES" "$DATA/positive-dmesg.log"
n_rules=$("$TPROFD" --check-config --rules "$RULES" | sed -nE 's/^rules: ([0-9]+) loaded.*/\1/p')
n_covered=$(cut -f2 "$OUT" | sort -u | wc -l)
[ "$n_rules" = "$n_covered" ] || fail "only $n_covered of $n_rules default rules have a positive line"

# Near misses: nothing at all.
for log in "$DATA"/negative-*.log; do
        expect_exit 0 "$TPROFD" --test-rules --rules "$RULES" "$log"
        [ ! -s "$OUT" ] || fail "$(basename "$log") matched: $(cat "$OUT")"
        # (its exit status too: a run that failed printed no match either)
        TPROF_RULES_PREFILTER=0 expect_exit 0 "$TPROFD" --test-rules --rules "$RULES" "$log"
        [ ! -s "$OUT" ] || fail "$(basename "$log") matched with the prefilter off: $(cat "$OUT")"
done
echo "ok"
