#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tprofd in a cgroup namespace of its own (unshare -C, as a container without --cgroupns=host),
# with the host's mount of the cgroup v2 hierarchy: /proc/PID/cgroup reads relative to the
# namespace's root there ("/../x" beside it, "/" the root itself; proc_cgroup_show() in
# kernel/cgroup/cgroup.c, Linux 6.1), and the cgroups read from it must still be the hierarchy's.
# The namespace is a made-up container's service cgroup with tprofd one level below its root and a
# burner beside tprofd; another burner is in a service outside the namespace. Both sources,
# --cgroups-from-proc (the kernels before 5.7) and perf's ids, name both burners' units; with the
# namespace's own mount (only its part) the outside one is named by neither, and that is said.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"

require_perf
require_cgroup_v2
command -v unshare >/dev/null || skip "no unshare(1)"
unshare -C true 2>/dev/null || skip "no cgroup namespaces here (unshare -C failed)"

TAG=tn$$$RANDOM
ROOT="$V2/$TAG.slice"
WEB="$ROOT/$TAG-web.service"      # outside the namespace
CTR="$ROOT/$TAG-ctr.service"      # the namespace's root
remove_cgroups() {
        local p
        for p in $(cat $(find "$ROOT" -name cgroup.procs) 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
        sleep 0.2
        find "$ROOT" -depth -type d -exec rmdir {} \; 2>/dev/null || true
        [ ! -e "$ROOT" ] || echo "could not remove $ROOT" >&2
}
on_exit remove_cgroups
mkdir -p "$WEB" "$CTR/tprofd" "$CTR/inner"

# web: the user-space path (burn_leaf); inner: getppid() in a loop (burn_syscall)
WEB_BIN=$(burn_as web)
INNER_BIN=$(burn_as inner)
bash -c 'echo $$ >"$1/cgroup.procs" && exec "$2" 30' _ "$WEB" "$WEB_BIN" >/dev/null &
WEB_PID=$!
on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
bash -c 'echo $$ >"$1/cgroup.procs" && exec "$2" --syscall 30' _ "$CTR/inner" "$INNER_BIN" >/dev/null &
on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
sleep 0.3

# unit_matching UNIT REGEX: samples rooted at UNIT whose stack matches REGEX (--by unit output,
# where the root comm_matching reads is the unit)
unit_matching() { comm_matching "$@"; }

# ns_once ARGS...: tprofd --once started in a new cgroup namespace rooted at $CTR, from the
# cgroup below it ("/tprofd" in the namespace)
ns_once() {
        bash -c 'echo $$ >"$1/cgroup.procs" && exec unshare -C sh -c "echo \$\$ >\"\$0/tprofd/cgroup.procs\" && exec \"\$@\"" "$1" "${@:2}"' \
                _ "$CTR" "$TPROFD" --once "$@" >"$OUT" 2>"$ERR" || fail "--once $* in a cgroup namespace: $(cat "$ERR")"
}

# what this test rests on: the namespace sees the service outside it as its root's sibling
bash -c 'echo $$ >"$1/cgroup.procs" && exec unshare -C cat "/proc/$2/cgroup"' _ "$CTR" "$WEB_PID" >"$OUT"
grep -qx "0::/../$TAG-web.service" "$OUT" || skip "the namespace does not see the service as /../$TAG-web.service: $(cat "$OUT")"

for src in --cgroups-from-proc ""; do
        want=perf; [ -z "$src" ] || want=proc
        ns_once 2 --by unit $src
        grep -q "cgroups: from $want" "$ERR" || fail "--once $src: $(cat "$ERR")"
        ! grep -q 'cgroups: .*namespace\|only part' "$ERR" || fail "--once $src: a problem, it says: $(cat "$ERR")"
        [ "$(unit_matching "$TAG-web.service" burn_leaf)" -gt 0 ] ||
                fail "--once $src: the service outside the namespace is not named: $(cut -d';' -f1 "$OUT" | sort | uniq -c)"
        [ "$(unit_matching "$TAG-ctr.service" burn_syscall)" -gt 0 ] ||
                fail "--once $src: the burner inside the namespace is not in its unit: $(cut -d';' -f1 "$OUT" | sort | uniq -c)"
done

# The namespace's own mount: outside it nothing can be told, and that is said.
if unshare -C -m --propagation private true 2>/dev/null; then
        for src in --cgroups-from-proc ""; do
                bash -c 'echo $$ >"$1/cgroup.procs" && exec unshare -C -m --propagation private sh -c \
                        "umount \"\$0\" && mount -t cgroup2 none \"\$0\" && exec \"\$@\"" "$2" "${@:3}"' \
                        _ "$CTR" "$V2" "$TPROFD" --once 2 --by unit $src >"$OUT" 2>"$ERR" ||
                        fail "--once $src with the namespace's own mount: $(cat "$ERR")"
                grep -q "cgroups: only part of the cgroup hierarchy is mounted here" "$ERR" ||
                        fail "--once $src with the namespace's own mount: no word of it: $(cat "$ERR")"
                [ "$(unit_matching "$TAG-web.service" burn_leaf)" -eq 0 ] ||
                        fail "--once $src with the namespace's own mount named what it cannot see"
        done
fi
echo ok
