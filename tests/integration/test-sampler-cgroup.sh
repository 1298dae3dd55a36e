#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every sample is attributed to its cgroup, from the sampler to the CLI. Cgroups are made by hand
# in the cgroup v2 hierarchy (found in /proc/self/mountinfo: /sys/fs/cgroup on a pure v2 host,
# /sys/fs/cgroup/unified on a hybrid one), named as systemd, Docker (both drivers), containerd,
# CRI-O, podman (also split, as Quadlet runs it), nerdctl and the kubelet (both drivers) name
# theirs, with a known burner in each; one burner moves from one cgroup to another while sampled. Then: tprofd --once --by (from perf and from
# /proc), the daemon's ring through export --by/--unit/--cgroup, a captured bundle's manifest
# (counts, derived names, container and pod names from the runtimes' local files), show, show
# --json, ls filters and the bundle's own export --by. Everything made is removed at exit.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/test-sampler-lib.sh"

require_perf
require_cgroup_v2

TAG=tp$$$RANDOM
ROOT="$V2/$TAG.slice"
hex64() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
uuid() { cat /proc/sys/kernel/random/uuid; }
ID_DOCKER=$(hex64); ID_DOCKERFS=$(hex64); ID_CTRD=$(hex64); ID_CRIO=$(hex64); ID_PODMAN=$(hex64); ID_KFS=$(hex64)
ID_SPLIT=$(hex64); ID_NERD=$(hex64)
UID_B=$(uuid); UID_E=$(uuid); UID_G=$(uuid)

# name -> cgroup path below the v2 root, and what it should be named
declare -A CG=(
        [svc]="/$TAG.slice/$TAG-web.service"
        [docker]="/$TAG.slice/docker-$ID_DOCKER.scope"
        [dockerfs]="/$TAG.slice/docker/$ID_DOCKERFS"
        [ctrd]="/$TAG.slice/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_B//-/_}.slice/cri-containerd-$ID_CTRD.scope"
        [crio]="/$TAG.slice/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${UID_E//-/_}.slice/crio-$ID_CRIO.scope"
        [podman]="/$TAG.slice/machine.slice/libpod-$ID_PODMAN.scope"
        [kfs]="/$TAG.slice/kubepods/pod$UID_G/$ID_KFS"
        [moveto]="/$TAG.slice/$TAG-other.service"
        # podman --cgroups=split (Quadlet's services), nerdctl's systemd manager
        [split]="/$TAG.slice/$TAG-quadlet.service/libpod-payload-$ID_SPLIT"
        [nerd]="/$TAG.slice/nerdctl-$ID_NERD.scope"
)
remove_cgroups() {
        local p
        # only our burners run in there; a process still inside would keep its cgroup
        for p in $(cat $(find "$ROOT" -name cgroup.procs) 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
        sleep 0.2
        find "$ROOT" -depth -type d -exec rmdir {} \; 2>/dev/null || true
        [ ! -e "$ROOT" ] || echo "could not remove $ROOT" >&2
}
on_exit remove_cgroups
for k in "${!CG[@]}"; do mkdir -p "$V2${CG[$k]}"; done

# Host metadata, as Docker and the kubelet leave it, under unique names removed at exit.
mkdir -p "/var/lib/docker/containers/$ID_DOCKER" "/var/log/pods/${TAG}ns_${TAG}-pod_$UID_B"
on_exit "rm -rf /var/lib/docker/containers/$ID_DOCKER /var/log/pods/${TAG}ns_${TAG}-pod_$UID_B"
printf '{"ID":"%s","Name":"/%s-web","Config":{"Labels":{}}}\n' "$ID_DOCKER" "$TAG" \
        >"/var/lib/docker/containers/$ID_DOCKER/config.v2.json"
# the kubelet's cgroupfs container as cri-dockerd makes it: Docker's, named and labelled by the kubelet
mkdir -p "/var/lib/docker/containers/$ID_KFS"
on_exit "rm -rf /var/lib/docker/containers/$ID_KFS"
printf '{"ID":"%s","Name":"/k8s_app_%s-g_%sns_%s_0","Config":{"Labels":{"io.kubernetes.container.name":"app","io.kubernetes.pod.name":"%s-g","io.kubernetes.pod.namespace":"%sns"}}}\n' \
        "$ID_KFS" "$TAG" "$TAG" "$UID_G" "$TAG" "$TAG" >"/var/lib/docker/containers/$ID_KFS/config.v2.json"

# run_in NAME SECONDS: a burner named NAME (its comm) in cgroup CG[NAME]; its pid in LAST_PID.
BURNERS=()
run_in() {
        local bin
        bin=$(burn_as "$1")
        bash -c 'echo $$ >"$1/cgroup.procs" && exec "$2" "$3"' _ "$V2${CG[$1]}" "$bin" "$2" >/dev/null &
        LAST_PID=$!
        BURNERS+=($!)
        on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
}
stop_burners() {
        local p
        for p in "${BURNERS[@]}"; do kill "$p" 2>/dev/null || true; done
        for p in "${BURNERS[@]}"; do wait "$p" 2>/dev/null || true; done
        BURNERS=()
}

# --- tprofd --once --by, from perf (PERF_SAMPLE_CGROUP) and from /proc/PID/cgroup -----------------
for k in svc docker ctrd split nerd; do run_in "$k" 30; done
sleep 0.3
for src in "" --cgroups-from-proc; do
        once 3 --by unit $src
        want=perf; [ -z "$src" ] || want=proc
        grep -q "cgroups: from $want" "$ERR" || fail "--once $src: $(cat "$ERR")"
        for u in "$TAG-web.service" "docker-$ID_DOCKER.scope" "cri-containerd-$ID_CTRD.scope" "$TAG-quadlet.service" \
                 "nerdctl-$ID_NERD.scope"; do
                [ "$(comm_total "$u")" -gt 0 ] || fail "--once --by unit $src: no samples rooted at $u: $(cut -d";" -f1 "$OUT" | sort | uniq -c)"
        done
        grep -q '^svc;' "$OUT" && fail "--once --by unit $src still roots by process: $(head -5 "$OUT")"
done
once 3 --by pod
[ "$(comm_total "pod-$UID_B")" -gt 0 ] || fail "--once --by pod: $(head -20 "$OUT")"
once 3 --by container
[ "$(comm_total "containerd-${ID_CTRD:0:12}")" -gt 0 ] || fail "--once --by container: $(head -20 "$OUT")"
[ "$(comm_total "docker-${ID_DOCKER:0:12}")" -gt 0 ] || fail "--once --by container: $(head -20 "$OUT")"
[ "$(comm_total "podman-${ID_SPLIT:0:12}")" -gt 0 ] || fail "--once --by container (podman split): $(head -20 "$OUT")"
[ "$(comm_total "containerd-${ID_NERD:0:12}")" -gt 0 ] || fail "--once --by container (nerdctl): $(head -20 "$OUT")"
stop_burners

# In a cgroup namespace of its own (a container without --cgroupns=host): with the hierarchy
# mounted before it entered (the mount's root shows as "/.."), tprofd still sees all of it and
# names the service's burner; with the namespace's own mount (what a container runtime makes)
# only part, and the summary says so and what to do.
if unshare -C true 2>/dev/null && unshare -C -m --propagation private true 2>/dev/null; then
        mkdir -p "$V2${CG[svc]}/ns"
        run_in svc 6
        sleep 0.3
        bash -c 'echo $$ >"$1/cgroup.procs" && exec unshare -C "$2" --once 1 --by unit' _ "$V2${CG[svc]}/ns" "$TPROFD" \
                >"$OUT" 2>"$ERR" || fail "--once in a cgroup namespace: $(cat "$ERR")"
        [ "$(comm_total "$TAG-web.service")" -gt 0 ] ||
                fail "--once in a cgroup namespace, the host's mount: the service not named: $(head -5 "$OUT"); $(cat "$ERR")"
        ! grep -q 'only part of the cgroup hierarchy' "$ERR" || fail "--once in a cgroup namespace: a part, it says: $(cat "$ERR")"
        bash -c 'echo $$ >"$1/cgroup.procs" && exec unshare -C -m --propagation private sh -c \
                "umount \"\$0\" && mount -t cgroup2 none \"\$0\" && exec \"\$1\" --once 0.3" "$2" "$3"' \
                _ "$V2${CG[svc]}/ns" "$V2" "$TPROFD" >"$OUT" 2>"$ERR" ||
                fail "--once with a cgroup namespace's own mount: $(cat "$ERR")"
        grep -q "cgroups: only part of the cgroup hierarchy is mounted here" "$ERR" ||
                fail "--once with a cgroup namespace's own mount: no word of it: $(cat "$ERR")"
        stop_burners
fi

# --- the daemon: ring, exports, a bundle ------------------------------------------------------
SOCK="$TEST_TMP/control.sock"
export TPROF_CONTROL_SOCKET="$SOCK"
start_tprofd --rules "$TPROF_SOURCE_ROOT/rules" --window 30s --control-socket "$SOCK"
wait_for 10 test -S "$SOCK" || fail "no control socket"
# A baseline with only the service busy, then every cgroup, and a burner that moves.
run_in svc 40
sleep 6 # the baseline: more than the slice's 8 s before the capture
for k in docker dockerfs ctrd crio podman kfs; do run_in "$k" 30; done
run_in moveto 30
MOVER=$LAST_PID
# in its first cgroup and exec'd, then moved to the service's and back
in_cgroup() { grep -qx "0::$2" "/proc/$1/cgroup" && [ "$(cat "/proc/$1/comm")" = "$3" ]; }
wait_for 10 in_cgroup "$MOVER" "${CG[moveto]}" moveto || fail "the moving burner did not start"
sleep 2
echo "$MOVER" >"$V2${CG[svc]}/cgroup.procs"
in_cgroup "$MOVER" "${CG[svc]}" moveto || fail "could not move the burner"
sleep 2.5
echo "$MOVER" >"$V2${CG[moveto]}/cgroup.procs"
sleep 1
ID=$("$TPROF_BUNDLE" capture --before 8s --after 1s --note cgroups) || fail "capture failed"
stop_burners
B="$STATE/incidents/$ID"

# export of the ring range, rooted by unit and filtered
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from -2min --to now --by unit
OUTU="$TEST_TMP/by-unit"; cp "$OUT" "$OUTU"
for u in "$TAG-web.service" "$TAG-other.service" "docker-$ID_DOCKER.scope" "cri-containerd-$ID_CTRD.scope" \
         "crio-$ID_CRIO.scope" "libpod-$ID_PODMAN.scope"; do
        grep -q "^$u;.*burn_leaf" "$OUTU" || fail "export --by unit: no burner stacks under $u: $(cut -c1-100 "$OUTU" | head -20)"
done
grep -q '^\[no-unit\];.*burn_leaf' "$OUTU" || fail "export --by unit: the cgroupfs burners are not [no-unit]"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from -2min --to now --by pod
grep -q "^pod-$UID_G;.*burn_leaf" "$OUT" || fail "export --by pod (cgroupfs driver): $(cut -c1-100 "$OUT" | head)"
grep -q "^pod-$UID_E;.*burn_leaf" "$OUT" || fail "export --by pod (CRI-O): $(cut -c1-100 "$OUT" | head)"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from -2min --to now --by container
grep -q "^docker-${ID_DOCKERFS:0:12};.*burn_leaf" "$OUT" || fail "export --by container (/docker/ID): $(cut -c1-100 "$OUT" | head)"
grep -q "^cri-${ID_KFS:0:12};.*burn_leaf" "$OUT" || fail "export --by container (kubelet cgroupfs): $(cut -c1-100 "$OUT" | head)"
grep -q "^podman-${ID_PODMAN:0:12};.*burn_leaf" "$OUT" || fail "export --by container (podman): $(cut -c1-100 "$OUT" | head)"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from -2min --to now --unit "$TAG-web.service"
grep -q '^svc;.*burn_leaf' "$OUT" || fail "export --unit: the service's burner is missing"
grep -qv '^svc;\|^moveto;\|^bash;' "$OUT" && fail "export --unit kept samples of other units: $(grep -v '^svc;\|^moveto;\|^bash;' "$OUT" | head -3)"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from -2min --to now --cgroup "/$TAG.slice/kubepods.slice" --format perf-script
grep -q '^ctrd ' "$OUT" && grep -q '^crio ' "$OUT" || fail "export --cgroup: the pods' burners are missing"
grep -qE '^(svc|docker|podman|kfs) ' "$OUT" && fail "export --cgroup kept samples outside the subtree"
expect_exit 1 "$TPROF_BUNDLE" -D "$STATE" export --from -2min --to now --unit "no-such-$TAG.service"
expect_exit 64 "$TPROF_BUNDLE" -D "$STATE" export --from -2min --to now --by nothing
expect_exit 64 "$TPROF_BUNDLE" -D "$STATE" export --from -2min --to now --cgroup relative/path
# pprof: every sample labelled with its cgroup and the unit, container and pod named from it.
expect_exit 64 "$TPROF_BUNDLE" -D "$STATE" export --from -2min --to now --format pprof --by unit
if command -v go >/dev/null; then
        mkdir -p "$TEST_TMP/home"
        "$TPROF_BUNDLE" -D "$STATE" export --from -2min --to now --format pprof -o "$TEST_TMP/range.pb.gz" ||
                fail "export --format pprof of the ring range failed"
        HOME="$TEST_TMP/home" GOCACHE="$TEST_TMP/gocache" GOPATH="$TEST_TMP/gopath" GOTOOLCHAIN=local GOPROXY=off \
                GOTELEMETRY=off go tool pprof -tags "$TEST_TMP/range.pb.gz" >"$TEST_TMP/tags.txt" 2>/dev/null ||
                fail "go tool pprof -tags failed"
        grep -q "$TAG-web.service" "$TEST_TMP/tags.txt" || fail "pprof: no unit label $TAG-web.service"
        grep -q "pod-$UID_G" "$TEST_TMP/tags.txt" || fail "pprof: no pod label pod-$UID_G"
        grep -q "docker-${ID_DOCKERFS:0:12}" "$TEST_TMP/tags.txt" || fail "pprof: no container label"
fi

# The burner that moved is in both cgroups, as the same pid.
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from -2min --to now --format perf-script --cgroup "${CG[svc]}"
grep -q "^moveto $MOVER/" "$OUT" || fail "the moving burner's samples in its first cgroup are missing"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export --from -2min --to now --format perf-script --cgroup "${CG[moveto]}"
grep -q "^moveto $MOVER/" "$OUT" || fail "the moving burner's samples in its second cgroup are missing"

# The manifest: cgroups with counts, names from the path and from the host's files.
python3 - "$B/manifest.json" "$TAG" "$ID_DOCKER" "$UID_B" "$ID_CTRD" "$UID_G" <<'PY' || fail "manifest cgroups"
import json, sys
m = json.load(open(sys.argv[1]))
tag, id_docker, uid_b, id_ctrd, uid_g = sys.argv[2:]
cg = {c["path"]: c for c in m["cgroups"]}
svc = cg["/%s.slice/%s-web.service" % (tag, tag)]
assert svc["unit"] == "%s-web.service" % tag and svc["samples"] > 0 and svc["baseline_samples"] > 0, svc
assert svc["comms"][0]["comm"] in ("svc", "moveto"), svc
d = [c for c in m["cgroups"] if c.get("container_id") == id_docker][0]
assert d["container_runtime"] == "docker" and d["container_name"] == "%s-web" % tag, d
k = [c for c in m["cgroups"] if c.get("container_id") == id_ctrd][0]
assert k["container_runtime"] == "containerd" and k["pod_uid"] == uid_b and k["pod_qos"] == "burstable", k
assert k["pod_namespace"] == tag + "ns" and k["pod_name"] == tag + "-pod", k
g = [c for c in m["cgroups"] if c.get("pod_uid") == uid_g][0]
assert g["pod_qos"] == "guaranteed" and g["container_runtime"] == "cri", g
assert g["container_name"] == "app" and g["pod_name"] == tag + "-g" and g["pod_namespace"] == tag + "ns", g
assert sum(c["samples"] for c in m["cgroups"]) == m["slice"]["samples"], "cgroup counts do not add up"
# Each cgroup's and each of its processes' samples in the event's own seconds (a part of the slice)
# and in the baseline: where one program ran in two units, which of them changed.
assert sum(c["baseline_samples"] for c in m["cgroups"]) == m["baseline"]["samples"], "baseline counts do not add up"
for c in m["cgroups"]:
    assert 0 <= c["near_samples"] <= c["samples"], c
    for p in c["comms"]:
        assert 0 <= p["near_samples"] <= p["samples"] and p["baseline_samples"] >= 0, c
assert 0 < sum(c["near_samples"] for c in m["cgroups"]) < m["slice"]["samples"], "no samples around the event"
assert sum(c["near_samples"] for c in m["cgroups"]) == m["slice"]["near_samples"], "near counts do not add up"
assert svc["comms"][0]["near_samples"] > 0 and svc["comms"][0]["baseline_samples"] > 0, svc
PY

# show names the unit, container or pod beside the process, and ranks the services.
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" show "$ID"
# (other processes of a busy machine may rise more: only ours are known to be in named cgroups)
OURS='svc|docker|dockerfs|ctrd|crio|podman|kfs|moveto'
top=$(sed -n 's/^ *In short: \([^ ]*\) .*/\1/p' "$OUT")
if [[ "$top" =~ ^($OURS)$ ]]; then
        grep -qE "In short: $top \((unit|container|pod) " "$OUT" || fail "show: the answer names no unit, container or pod: $(grep 'In short' "$OUT")"
fi
# every process of ours among the rises is followed by where it ran
for p in $(grep -oE "^  ($OURS) " "$OUT"); do
        grep -A1 -E "^  $p " "$OUT" | grep -qE "^ +in (unit|container|pod) " ||
                fail "show: $p is not named with its unit, container or pod: $(sed -n '/^Unusual/,/^$/p' "$OUT")"
done
sed -n '/^Services/,/^$/p' "$OUT" >"$TEST_TMP/services"
# Each list shows the 5 largest; nine burners share the slice, so a name of ours may be cut when
# the list is full (the manifest and ls, below, hold every cgroup).
listed() { # HEADING NAME: NAME is in the list under HEADING, or that list is full
        awk -v h="  $1:" -v n="$2" '$0 == h { on = 1; next } /^  [A-Z][a-z]+:$/ { on = 0 }
                on { rows++; if (index($0, n)) found = 1 } END { exit !(found || rows >= 5) }' "$TEST_TMP/services"
}
grep -q "^  Units:" "$TEST_TMP/services" && listed Units "$TAG-web.service" &&
        grep -q "^  Containers:" "$TEST_TMP/services" && listed Containers "$TAG-web " &&
        grep -q "^  Pods:" "$TEST_TMP/services" && listed Pods "${TAG}ns/$TAG-pod" ||
        fail "show: services section: $(cat "$TEST_TMP/services")"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" show "$ID" --json
python3 - "$OUT" "$TAG" <<'PY' || fail "show --json: services or attribution missing"
import json, re, sys
j = json.load(open(sys.argv[1]))
tag = sys.argv[2]
units = {u["name"]: u for u in j["services"]["units"]}
assert "%s-web.service" % tag in units or len(units) == 5, units
assert any(p["name"] == "%sns/%s-pod" % (tag, tag) for p in j["services"]["pods"]), j["services"]["pods"]
ours = {"svc", "docker", "dockerfs", "ctrd", "crio", "podman", "kfs", "moveto"}
# a process of these names is ours, or another run's of this test on the same machine (its own
# tag): either way it ran in a test's slice and is named by it
for p in j["unusual"]["processes"]:
    if p["process"] in ours:
        assert p["cgroup"] and re.match(r"/tp[0-9]+\.slice/", p["cgroup"]["path"]), p
PY

# ls filters on the cgroups of the slice.
for f in "unit=$TAG-web.service" "unit=docker-$ID_DOCKER.scope" "container=$TAG-web" "container=${ID_CRIO:0:12}" \
         "pod=${TAG}ns/$TAG-pod" "pod=$UID_G" "pod=$TAG-pod" "cgroup=${CG[kfs]}" \
         "container=cri-${ID_KFS:0:12}" "pod=pod-$UID_B"; do # named, by the names exports give
        expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" ls --no-legend "$f"
        grep -q "${ID##*-}" "$OUT" || fail "ls $f does not list the bundle: $(cat "$OUT")"
done
for f in "unit=no-such-$TAG.service" "container=no-such-$TAG" "pod=$(uuid)"; do
        expect_exit 1 "$TPROF_BUNDLE" -D "$STATE" ls --no-legend "$f"
done

# The bundle's own export, cut again from its windows.
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export "$ID" --format folded --by unit
grep -q "^$TAG-web.service;.*burn_leaf" "$OUT" || fail "export ID --by unit: $(cut -c1-100 "$OUT" | head)"
expect_exit 0 "$TPROF_BUNDLE" -D "$STATE" export "$ID" --format perf-script --unit "docker-$ID_DOCKER.scope"
grep -q '^docker ' "$OUT" || fail "export ID --unit: $(head -3 "$OUT")"
grep -qE '^(svc|ctrd|crio) ' "$OUT" && fail "export ID --unit kept other units"

stop_tprofd
echo ok
