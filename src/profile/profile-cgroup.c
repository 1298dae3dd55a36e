/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cgroup path -> unit, container, pod; see profile-cgroup.h for the forms. The path is walked
 * component by component; the outermost unit wins (the one the system manager runs), the
 * innermost container and pod win (a container nested in another is the one that ran).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "basic/macro.h"
#include "profile/profile-cgroup.h"

static const char *const runtime_table[_CGROUP_RUNTIME_MAX] = {
        [CGROUP_RUNTIME_NONE] = "",
        [CGROUP_RUNTIME_DOCKER] = "docker",
        [CGROUP_RUNTIME_CONTAINERD] = "containerd",
        [CGROUP_RUNTIME_CRIO] = "cri-o",
        [CGROUP_RUNTIME_PODMAN] = "podman",
        [CGROUP_RUNTIME_CRI] = "cri",
        [CGROUP_RUNTIME_LXC] = "lxc",
};

static const char *const qos_table[_KUBE_QOS_MAX] = {
        [KUBE_QOS_NONE] = "",
        [KUBE_QOS_GUARANTEED] = "guaranteed",
        [KUBE_QOS_BURSTABLE] = "burstable",
        [KUBE_QOS_BESTEFFORT] = "besteffort",
};

static const char *const by_table[_CGROUP_BY_MAX] = {
        [CGROUP_BY_PROCESS] = "process",
        [CGROUP_BY_UNIT] = "unit",
        [CGROUP_BY_CONTAINER] = "container",
        [CGROUP_BY_POD] = "pod",
};

const char *cgroup_runtime_to_string(CgroupRuntime r) {
        return r >= 0 && r < _CGROUP_RUNTIME_MAX ? runtime_table[r] : NULL;
}

const char *kube_qos_to_string(KubeQos q) {
        return q >= 0 && q < _KUBE_QOS_MAX ? qos_table[q] : NULL;
}

const char *cgroup_by_to_string(CgroupBy b) {
        return b >= 0 && b < _CGROUP_BY_MAX ? by_table[b] : NULL;
}

CgroupBy cgroup_by_from_string(const char *s) {
        for (int i = 0; s && i < _CGROUP_BY_MAX; i++)
                if (strcmp(s, by_table[i]) == 0)
                        return (CgroupBy) i;
        return _CGROUP_BY_INVALID;
}

/* A component: n bytes at p (not NUL-terminated). */
typedef struct Part {
        const char *p;
        size_t n;
} Part;

static bool part_eq(Part c, const char *s) {
        return c.n == strlen(s) && memcmp(c.p, s, c.n) == 0;
}

static bool part_starts(Part c, const char *s) {
        size_t l = strlen(s);
        return c.n >= l && memcmp(c.p, s, l) == 0;
}

static bool part_ends(Part c, const char *s) {
        size_t l = strlen(s);
        return c.n >= l && memcmp(c.p + c.n - l, s, l) == 0;
}

static bool is_hex(const char *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
                        return false;
        return true;
}

/* A container id: 64 lower-case hex digits (Docker, containerd, CRI-O and podman all use them). */
static bool is_container_id(const char *p, size_t n) {
        return n == 64 && is_hex(p, n);
}

/* "prefix<id>suffix" with a container id in the middle. */
static bool match_id(Part c, const char *prefix, const char *suffix, CgroupNames *ret, CgroupRuntime rt) {
        size_t a = strlen(prefix), b = strlen(suffix);

        if (!part_starts(c, prefix) || !part_ends(c, suffix) || c.n < a + b ||
            !is_container_id(c.p + a, c.n - a - b))
                return false;
        memcpy(ret->container_id, c.p + a, c.n - a - b);
        ret->container_id[c.n - a - b] = '\0';
        ret->runtime = rt;
        return true;
}

/* A pod UID as the kubelet writes it into a name: 36 characters of hex digits and '-' (or '_' in
 * systemd slice names), or 32 hex digits (static pods: the hash of their manifest). */
static bool set_pod_uid(const char *p, size_t n, CgroupNames *ret) {
        if (n != 36 && n != 32)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(is_hex(p + i, 1) || p[i] == '-' || p[i] == '_'))
                        return false;
        for (size_t i = 0; i < n; i++)
                ret->pod_uid[i] = p[i] == '_' ? '-' : p[i];
        ret->pod_uid[n] = '\0';
        return true;
}

/*
 * systemd driver: "kubepods-pod<uid>.slice", "kubepods-burstable-pod<uid>.slice", ..., also
 * after the dash-joined components of a cgroup root the kubelet was given ("kubelet-kubepods-
 * burstable-pod<uid>.slice" under kind's cgroupRoot /kubelet).
 */
static bool match_pod_slice(Part c, CgroupNames *ret) {
        static const struct {
                const char *prefix;
                KubeQos qos;
        } forms[] = {
                { "kubepods-pod", KUBE_QOS_GUARANTEED },
                { "kubepods-burstable-pod", KUBE_QOS_BURSTABLE },
                { "kubepods-besteffort-pod", KUBE_QOS_BESTEFFORT },
        };

        if (!part_ends(c, ".slice"))
                return false;
        for (size_t k = 0; k < c.n; k++) {
                if (k > 0 && c.p[k - 1] != '-')
                        continue;
                Part t = { c.p + k, c.n - k };
                for (size_t i = 0; i < ELEMENTSOF(forms); i++) {
                        size_t a = strlen(forms[i].prefix);
                        if (part_starts(t, forms[i].prefix) && set_pod_uid(t.p + a, t.n - a - strlen(".slice"), ret)) {
                                ret->qos = forms[i].qos;
                                return true;
                        }
                }
        }
        return false;
}

/* A unit name of a type processes can run in (systemd's unit types but slices, which only hold
 * other cgroups); the prefix must not be empty. */
static bool is_unit_name(Part c) {
        static const char *const suffixes[] = { ".service", ".scope",  ".socket", ".mount", ".swap",
                                                ".automount", ".device", ".target", ".path",  ".timer" };

        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                if (part_ends(c, suffixes[i]) && c.n > strlen(suffixes[i]))
                        return true;
        return false;
}

/* LXC and LXD: "lxc.payload.<name>" (LXC 4 on), "lxc.payload/<name>" and "lxc/<name>" before;
 * "lxc.monitor.<name>" is LXC's own process, not the guest. */
static bool match_lxc(Part c, Part prev, CgroupNames *ret) {
        Part name;

        if (part_starts(c, "lxc.payload."))
                name = (Part) { c.p + strlen("lxc.payload."), c.n - strlen("lxc.payload.") };
        else if (part_eq(prev, "lxc.payload") || part_eq(prev, "lxc"))
                name = c;
        else
                return false;
        if (name.n == 0 || name.n >= sizeof ret->container_id)
                return false;
        memcpy(ret->container_id, name.p, name.n);
        ret->container_id[name.n] = '\0';
        ret->runtime = CGROUP_RUNTIME_LXC;
        return true;
}

void cgroup_names_parse(const char *path, CgroupNames *ret) {
        Part prev = {}, prev2 = {};
        bool in_kubepods = false, past_slices = false;
        unsigned depth = 0;
        const char *p = path ?: "";

        *ret = (CgroupNames) {};
        while (*p) {
                Part c;

                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                c.p = p;
                c.n = strcspn(p, "/");
                p += c.n;
                depth++;

                /*
                 * The unit, as systemd's cg_path_get_unit() finds it: past the leading slices, the
                 * next component, if it is a unit ("/lxc.payload.web/system.slice/nginx.service"
                 * is a guest's nginx, no unit of this host's). cg_escape() put a '_' before names
                 * that could be taken for a controller's files ("_cpu.foo.service").
                 */
                if (!past_slices && !part_ends(c, ".slice")) {
                        past_slices = true;
                        Part u = c.n > 1 && c.p[0] == '_' ? (Part) { c.p + 1, c.n - 1 } : c;
                        if (is_unit_name(u) && u.n < sizeof ret->unit) {
                                memcpy(ret->unit, u.p, u.n);
                                ret->unit[u.n] = '\0';
                        }
                }

                if (part_eq(c, "kubepods") || part_eq(c, "kubepods.slice") || part_ends(c, "-kubepods.slice"))
                        in_kubepods = true;

                if (match_pod_slice(c, ret)) {
                        /* a pod's containers come after it: forget any container of an outer level */
                        ret->runtime = CGROUP_RUNTIME_NONE;
                        ret->container_id[0] = '\0';
                } else if (in_kubepods && part_starts(c, "pod") && set_pod_uid(c.p + 3, c.n - 3, ret)) {
                        /* cgroupfs driver: /kubepods/pod<uid> or /kubepods/<qos>/pod<uid> */
                        ret->qos = part_eq(prev, "burstable")    ? KUBE_QOS_BURSTABLE
                                   : part_eq(prev, "besteffort") ? KUBE_QOS_BESTEFFORT
                                                                  : KUBE_QOS_GUARANTEED;
                        ret->runtime = CGROUP_RUNTIME_NONE;
                        ret->container_id[0] = '\0';
                } else if (match_id(c, "docker-", ".scope", ret, CGROUP_RUNTIME_DOCKER) ||
                           match_id(c, "cri-containerd-", ".scope", ret, CGROUP_RUNTIME_CONTAINERD) ||
                           match_id(c, "crio-", ".scope", ret, CGROUP_RUNTIME_CRIO) ||
                           match_id(c, "libpod-", ".scope", ret, CGROUP_RUNTIME_PODMAN) ||
                           /* nerdctl's systemd cgroup manager: containerd without Kubernetes */
                           match_id(c, "nerdctl-", ".scope", ret, CGROUP_RUNTIME_CONTAINERD) ||
                           /* CRI-O's cgroupfs manager: "crio-<id>", no suffix (not crio-conmon-) */
                           match_id(c, "crio-", "", ret, CGROUP_RUNTIME_CRIO) ||
                           /* podman's cgroupfs manager, below any --cgroup-parent, and its split
                            * mode (Quadlet's default), below the cgroup podman ran in */
                           match_id(c, "libpod-", "", ret, CGROUP_RUNTIME_PODMAN) ||
                           match_id(c, "libpod-payload-", "", ret, CGROUP_RUNTIME_PODMAN))
                        ;
                else if (is_container_id(c.p, c.n)) {
                        /* ECS on cgroup v1: docker run --cgroup-parent /ecs/<task>; containerd's own
                         * default where no cgroup was asked for (ctr, nerdctl's cgroupfs manager) is
                         * /<namespace>/<id>, in its default namespace or the CRI's */
                        CgroupRuntime rt = part_eq(prev, "docker") || part_eq(prev2, "ecs")      ? CGROUP_RUNTIME_DOCKER
                                           : ret->pod_uid[0] != '\0' && part_starts(prev, "pod") ? CGROUP_RUNTIME_CRI
                                           : depth == 2 && (part_eq(prev, "default") || part_eq(prev, "k8s.io"))
                                                   ? CGROUP_RUNTIME_CONTAINERD
                                                   : CGROUP_RUNTIME_NONE;
                        if (rt != CGROUP_RUNTIME_NONE) {
                                memcpy(ret->container_id, c.p, c.n);
                                ret->container_id[c.n] = '\0';
                                ret->runtime = rt;
                        }
                } else
                        (void) match_lxc(c, prev, ret);
                prev2 = prev;
                prev = c;
        }
}

const char *cgroup_group_name(const char *path, CgroupBy by, char *buf, size_t l) {
        CgroupNames n;

        if (l == 0)
                return buf;
        if (!path || !*path) {
                snprintf(buf, l, "[unknown]");
                return buf;
        }
        cgroup_names_parse(path, &n);
        switch (by) {
        case CGROUP_BY_UNIT:
                snprintf(buf, l, "%s", n.unit[0] ? n.unit : "[no-unit]");
                break;
        case CGROUP_BY_CONTAINER:
                if (n.runtime == CGROUP_RUNTIME_LXC) /* a name, not an id */
                        snprintf(buf, l, "lxc-%s", n.container_id);
                else if (n.container_id[0])
                        snprintf(buf, l, "%s-%.12s", cgroup_runtime_to_string(n.runtime), n.container_id);
                else
                        snprintf(buf, l, "[no-container]");
                break;
        case CGROUP_BY_POD:
                if (n.pod_uid[0])
                        snprintf(buf, l, "pod-%s", n.pod_uid);
                else
                        snprintf(buf, l, "[no-pod]");
                break;
        default:
                snprintf(buf, l, "%s", path);
                break;
        }
        return buf;
}
