/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Naming a sample's cgroup: from the path alone (relative to the cgroup v2 root, as the kernel
 * prints it: "/system.slice/kubelet.service") derive the systemd unit, the container runtime and
 * container id, and the Kubernetes pod UID and QoS class. Pure functions, no I/O: the ring stores
 * only the path, and every reader (bundle, CLI, exports) names it here, so better naming never
 * needs old windows rewritten. Metadata that is not in the path (container and pod names) is
 * looked up on the host by the bundle writer, not here.
 *
 * Forms understood:
 *  - systemd: past the leading "*.slice" components, the next one if it is a unit of a type that
 *    holds processes (.service, .scope, .socket, .mount, .swap, ...), as systemd's
 *    cg_path_get_unit() finds it: the unit the system manager runs ("kubelet.service",
 *    "user@1000.service", "session-3.scope", "docker-<id>.scope"); a unit deeper down, below a
 *    container's or guest's own cgroup ("/lxc.payload.web/system.slice/nginx.service"), is not
 *    this host's; cg_escape()'s leading '_' is taken off;
 *  - containers: "docker-<id>.scope" and "/docker/<id>" (Docker, systemd and cgroupfs drivers),
 *    "/ecs/<task>/<id>" (Amazon ECS on cgroup v1), "cri-containerd-<id>.scope" (containerd CRI),
 *    "nerdctl-<id>.scope" and "/default/<id>", "/k8s.io/<id>" (containerd without Kubernetes:
 *    nerdctl's systemd manager, containerd's own /<namespace>/<id> in its default namespace or the
 *    CRI's),
 *    "crio-<id>.scope" and "crio-<id>" (CRI-O, systemd and cgroupfs managers),
 *    "libpod-<id>.scope", "libpod-<id>" (below any cgroup parent, /libpod_parent by default) and
 *    "libpod-payload-<id>" (--cgroups=split, Quadlet's default) (podman); a bare 64-hex component
 *    under a pod (the kubelet's cgroupfs driver) is a container of unknown runtime; LXC and LXD
 *    guests, "lxc.payload.<name>" (or "/lxc.payload/<name>", "/lxc/<name>"), by name;
 *  - pods: "kubepods-<qos>-pod<uid with _>.slice" and "kubepods-pod<uid>.slice" (systemd driver,
 *    also after a cgroup root's prefix: "kubelet-kubepods-...", kind), "/kubepods/<qos>/pod<uid>"
 *    and "/kubepods/pod<uid>" (cgroupfs driver); pods directly under kubepods are of QoS class
 *    guaranteed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define CGROUP_UNIT_BYTES 256U
#define CGROUP_CONTAINER_ID_BYTES 65U /* 64 hex digits, or an LXC guest's name */
#define CGROUP_POD_UID_BYTES 37U      /* 8-4-4-4-12 */

typedef enum CgroupRuntime {
        CGROUP_RUNTIME_NONE,
        CGROUP_RUNTIME_DOCKER,
        CGROUP_RUNTIME_CONTAINERD,
        CGROUP_RUNTIME_CRIO,
        CGROUP_RUNTIME_PODMAN,
        CGROUP_RUNTIME_CRI, /* a kubelet cgroupfs-driver container: the path does not say which runtime */
        CGROUP_RUNTIME_LXC, /* container_id holds the guest's name */
        _CGROUP_RUNTIME_MAX,
        _CGROUP_RUNTIME_INVALID = -22,
} CgroupRuntime;

typedef enum KubeQos {
        KUBE_QOS_NONE,
        KUBE_QOS_GUARANTEED,
        KUBE_QOS_BURSTABLE,
        KUBE_QOS_BESTEFFORT,
        _KUBE_QOS_MAX,
        _KUBE_QOS_INVALID = -22,
} KubeQos;

typedef struct CgroupNames {
        char unit[CGROUP_UNIT_BYTES];                 /* "" if no unit */
        CgroupRuntime runtime;
        char container_id[CGROUP_CONTAINER_ID_BYTES]; /* "" if no container */
        char pod_uid[CGROUP_POD_UID_BYTES];           /* dashes, as the API server shows it; "" if no pod */
        KubeQos qos;
} CgroupNames;

/* Fills *ret from path (NULL or "" gives an empty result). Never fails: what is not recognized is
 * left empty. */
void cgroup_names_parse(const char *path, CgroupNames *ret);

const char *cgroup_runtime_to_string(CgroupRuntime r); /* "docker", "containerd", "cri-o", "podman", "cri", "lxc" */
const char *kube_qos_to_string(KubeQos q);             /* "guaranteed", "burstable", "besteffort" */

typedef enum CgroupBy {
        CGROUP_BY_PROCESS, /* the comm, as without attribution */
        CGROUP_BY_UNIT,
        CGROUP_BY_CONTAINER,
        CGROUP_BY_POD,
        _CGROUP_BY_MAX,
        _CGROUP_BY_INVALID = -22,
} CgroupBy;

const char *cgroup_by_to_string(CgroupBy b); /* "process", "unit", "container", "pod" */
CgroupBy cgroup_by_from_string(const char *s);

/*
 * The name a sample is grouped under: the unit; the container as "<runtime>-<first 12 digits of
 * its id>" ("lxc-<name>" for an LXC guest); the pod as "pod-<uid>". Samples whose cgroup names
 * none get "[no-unit]", "[no-container]" or "[no-pod]"; samples without a cgroup "[unknown]".
 * Returns buf.
 */
const char *cgroup_group_name(const char *path, CgroupBy by, char *buf, size_t l);
