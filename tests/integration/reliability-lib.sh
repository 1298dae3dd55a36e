# SPDX-License-Identifier: LGPL-2.1-or-later
# Helpers shared by the reliability tests (test-reliability-*.sh) and contrib/reliability.sh: the
# invariants that must hold whatever happened to the daemon (ring readable, no half bundle visible,
# pinned windows present), RSS sampling, and a small filesystem of the test's own. Each test reads
# its sizes from the environment (RELIABILITY_*), so the long script reruns the same test, longer.

. "$(dirname "$0")/logsrc-lib.sh"

tb() { "$TPROF_BUNDLE" -D "$STATE" "$@"; }

# figure KEY VALUE: one line of figures for contrib/reliability.sh to collect.
figure() { echo "FIGURE $*"; }

# rss_kb PID: the resident set of PID in KiB, or nothing when it is gone.
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || true; }

# verify_windows DIR WHAT: every window file in DIR reads without a checksum error (an open window's
# cut-short last chunk is fine: the reader reports that as "truncated", not "corrupt").
verify_windows() {
        local out="$TEST_TMP/verify.out" err="$TEST_TMP/verify.err"
        "$TPROF_BUNDLE" windows --ring "$1" --verify >"$out" 2>"$err" || {
                grep -q "No windows\|no windows" "$out" "$err" && return 0
                fail "$2: tprof-bundle windows --verify failed: $(cat "$err")"
        }
        if grep -Eq "corrupt|unreadable" "$out" || grep -q "damaged" "$err"; then
                fail "$2: damaged window in $1: $(grep -E "corrupt|unreadable" "$out") $(cat "$err")"
        fi
}

# check_incidents WHAT: what incidents/ shows is only complete bundles (a manifest and every file a
# bundle has, windows hard-linked into the ring and readable) or hidden .tmp-* staging folders.
check_incidents() {
        local what=$1 e name w ino
        for e in "$STATE"/incidents/* "$STATE"/incidents/.[!.]*; do
                [ -e "$e" ] || continue
                name=$(basename "$e")
                case "$name" in
                .tmp-*) continue ;;
                .*) fail "$what: unexpected hidden entry incidents/$name" ;;
                esac
                for f in manifest.json log.txt log.jsonl stacks.folded stacks.perf-script activity.tsv windows; do
                        [ -e "$e/$f" ] || fail "$what: bundle $name is visible without its $f: $(ls -la "$e")"
                done
                python3 - "$e/manifest.json" "$e/windows" <<'PY' || fail "$what: bundle $name: bad manifest or missing pinned windows"
import json, os, sys
m = json.load(open(sys.argv[1]))
assert m["status"] in ("complete", "partial", "no-coverage"), m["status"]
have = set(os.listdir(sys.argv[2]))
for w in m["windows"]:
    name = w if isinstance(w, str) else w.get("name")
    assert name in have, (name, sorted(have))
PY
                for w in "$e"/windows/*; do
                        [ -e "$w" ] || continue
                        ino=$(ring_inode "$(basename "$w")") ||
                                fail "$what: window $(basename "$w") pinned by $name is gone from the ring"
                        [ "$(stat -c %i "$w")" = "$ino" ] ||
                                fail "$what: window $(basename "$w") of $name is not a hard link into the ring"
                done
                verify_windows "$e/windows" "$what (bundle $name)"
        done
        # ls exits 1 saying "No bundles found." where there are none; any other failure is ls failing
        # on what it found, which must not pass as a listing without a damaged bundle.
        local rc=0
        tb ls --no-legend >"$TEST_TMP/ls.out" 2>"$TEST_TMP/ls.err" || rc=$?
        [ "$rc" = 0 ] || { [ "$rc" = 1 ] && grep -q 'No bundles found\.$' "$TEST_TMP/ls.err"; } ||
                fail "$what: tprof-bundle ls exited $rc: $(cat "$TEST_TMP/ls.err")"
        ! grep -Eq " corrupt " "$TEST_TMP/ls.out" ||
                fail "$what: tprof-bundle ls shows a damaged bundle: $(cat "$TEST_TMP/ls.out")"
}

# mount_small_fs DIR SIZE: a tmpfs of SIZE bytes on DIR, unmounted at exit; skips when that fails.
mount_small_fs() {
        mkdir -p "$1"
        mount -t tmpfs -o "size=$2,mode=0755" tmpfs "$1" 2>/dev/null || skip "cannot mount a tmpfs on $1"
        on_exit "umount -l '$1'"
}

# control socket of the test's daemon
CTL="$TEST_TMP/control.sock"
