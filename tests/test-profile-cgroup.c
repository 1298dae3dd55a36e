/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cgroup paths as systemd, Docker, containerd, CRI-O, podman and the kubelet (both cgroup drivers)
 * name them, and what profile-cgroup.h derives from each.
 */
#include <string.h>

#include "profile/profile-cgroup.h"
#include "tests.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "8f3c2a10-5b7e-4d2a-9c11-0e6f4b3a2d19"
#define UID_ "8f3c2a10_5b7e_4d2a_9c11_0e6f4b3a2d19"

static void test_names_table(void **state) {
        static const struct {
                const char *path, *unit;
                CgroupRuntime runtime;
                const char *container, *pod;
                KubeQos qos;
        } cases[] = {
                { "/", "", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "", "", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/system.slice/kubelet.service", "kubelet.service", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "user@1000.service",
                  CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/user.slice/user-1000.slice/session-3.scope", "session-3.scope", CGROUP_RUNTIME_NONE, "", "",
                  KUBE_QOS_NONE },
                { "/system.slice/docker-" ID ".scope", "docker-" ID ".scope", CGROUP_RUNTIME_DOCKER, ID, "",
                  KUBE_QOS_NONE },
                { "/docker/" ID, "", CGROUP_RUNTIME_DOCKER, ID, "", KUBE_QOS_NONE },
                { "/system.slice/containerd.service", "containerd.service", CGROUP_RUNTIME_NONE, "", "",
                  KUBE_QOS_NONE },
                { "/machine.slice/libpod-" ID ".scope", "libpod-" ID ".scope", CGROUP_RUNTIME_PODMAN, ID, "",
                  KUBE_QOS_NONE },
                { "/machine.slice/libpod-conmon-" ID ".scope", "libpod-conmon-" ID ".scope", CGROUP_RUNTIME_NONE,
                  "", "", KUBE_QOS_NONE },
                { "/libpod_parent/libpod-" ID, "", CGROUP_RUNTIME_PODMAN, ID, "", KUBE_QOS_NONE },
                { "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
                  ".slice/cri-containerd-" ID ".scope",
                  "cri-containerd-" ID ".scope", CGROUP_RUNTIME_CONTAINERD, ID, UID, KUBE_QOS_BURSTABLE },
                { "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" ID
                  ".scope",
                  "crio-" ID ".scope", CGROUP_RUNTIME_CRIO, ID, UID, KUBE_QOS_BESTEFFORT },
                { "/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID ".scope", "docker-" ID ".scope",
                  CGROUP_RUNTIME_DOCKER, ID, UID, KUBE_QOS_GUARANTEED },
                { "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice",
                  "", CGROUP_RUNTIME_NONE, "", UID, KUBE_QOS_BURSTABLE },
                { "/kubepods/burstable/pod" UID "/" ID, "", CGROUP_RUNTIME_CRI, ID, UID, KUBE_QOS_BURSTABLE },
                { "/kubepods/besteffort/pod" UID "/" ID, "", CGROUP_RUNTIME_CRI, ID, UID, KUBE_QOS_BESTEFFORT },
                { "/kubepods/pod" UID "/" ID, "", CGROUP_RUNTIME_CRI, ID, UID, KUBE_QOS_GUARANTEED },
                /* not a pod outside kubepods, not a container without a known parent */
                { "/pod" UID "/" ID, "", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/system.slice/docker-abc.scope", "docker-abc.scope", CGROUP_RUNTIME_NONE, "", "",
                  KUBE_QOS_NONE },
                { "//system.slice//x.service/", "x.service", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },

                /* systemd's cg_path_get_unit(): past the slices, the next component or none. */
                { "/system.slice/mnt-data.mount", "mnt-data.mount", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/system.slice/sshd.socket", "sshd.socket", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/system.slice/_cpu.foo.service", "cpu.foo.service", CGROUP_RUNTIME_NONE, "", "",
                  KUBE_QOS_NONE },
                { "/system.slice/getty@tty1.service", "getty@tty1.service", CGROUP_RUNTIME_NONE, "", "",
                  KUBE_QOS_NONE },
                { "/init.scope", "init.scope", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/system.slice/.service", "", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/system.slice/foo.slice.d/x.service", "", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/docker/" ID "/system.slice/nginx.service", "", CGROUP_RUNTIME_DOCKER, ID, "", KUBE_QOS_NONE },
                /* LXC and LXD guests, by name; LXC's monitor is no guest. */
                { "/lxc.payload.web1/system.slice/nginx.service", "", CGROUP_RUNTIME_LXC, "web1", "",
                  KUBE_QOS_NONE },
                { "/lxc.monitor.web1", "", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/lxc/web2/init.scope", "", CGROUP_RUNTIME_LXC, "web2", "", KUBE_QOS_NONE },
                { "/lxc.payload/web3", "", CGROUP_RUNTIME_LXC, "web3", "", KUBE_QOS_NONE },
                { "/lxc.payload.web1/docker/" ID, "", CGROUP_RUNTIME_DOCKER, ID, "", KUBE_QOS_NONE },
                /* CRI-O's cgroupfs manager (cgmgr/cgroupfs_linux.go): no .scope; conmon is not one. */
                { "/kubepods/burstable/pod" UID "/crio-" ID, "", CGROUP_RUNTIME_CRIO, ID, UID, KUBE_QOS_BURSTABLE },
                { "/kubepods/burstable/pod" UID "/crio-conmon-" ID, "", CGROUP_RUNTIME_NONE, "", UID,
                  KUBE_QOS_BURSTABLE },
                /* podman 5.8.2 (libpod/container_internal_linux.go, getOCICgroupPath()): the cgroupfs
                 * manager's <cgroup parent>/libpod-<id>, under --cgroup-parent too; --cgroups=split
                 * (Quadlet's default, pkg/systemd/quadlet/quadlet.go) makes libpod-payload-<id>
                 * below the cgroup podman ran in (the unit Quadlet made), and moves conmon to "runtime"
                 * there (libpod/oci_conmon_linux.go): no container. */
                { "/libpod_parent/" ID "/libpod-" ID, "", CGROUP_RUNTIME_PODMAN, ID, "", KUBE_QOS_NONE },
                { "/batch/libpod-" ID, "", CGROUP_RUNTIME_PODMAN, ID, "", KUBE_QOS_NONE },
                { "/libpod_parent/conmon", "", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/system.slice/web.service/libpod-payload-" ID, "web.service", CGROUP_RUNTIME_PODMAN, ID, "",
                  KUBE_QOS_NONE },
                { "/user.slice/user-1000.slice/user@1000.service/app.slice/web.service/libpod-payload-" ID
                  "/container",
                  "user@1000.service", CGROUP_RUNTIME_PODMAN, ID, "", KUBE_QOS_NONE },
                { "/system.slice/web.service/runtime", "web.service", CGROUP_RUNTIME_NONE, "", "",
                  KUBE_QOS_NONE },
                /* containerd without Kubernetes: with no cgroup asked for, containerd 2.3.4's spec is
                 * /<namespace>/<id> (pkg/oci/spec.go; ctr and nerdctl use "default", the CRI "k8s.io"),
                 * a namespace of any other name is not told from any other parent; nerdctl 2.3.5 asks
                 * runc's systemd manager for "system.slice:nerdctl:<id>" (pkg/cmd/container/
                 * run_cgroup_linux.go), "user.slice:..." rootless, a unit nerdctl-<id>.scope */
                { "/default/" ID, "", CGROUP_RUNTIME_CONTAINERD, ID, "", KUBE_QOS_NONE },
                { "/k8s.io/" ID, "", CGROUP_RUNTIME_CONTAINERD, ID, "", KUBE_QOS_NONE },
                { "/batch/" ID, "", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/batch/default/" ID, "", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                { "/system.slice/nerdctl-" ID ".scope", "nerdctl-" ID ".scope", CGROUP_RUNTIME_CONTAINERD, ID, "",
                  KUBE_QOS_NONE },
                { "/user.slice/user-1000.slice/user@1000.service/user.slice/nerdctl-" ID ".scope",
                  "user@1000.service", CGROUP_RUNTIME_CONTAINERD, ID, "", KUBE_QOS_NONE },
                { "/system.slice/" ID, "", CGROUP_RUNTIME_NONE, "", "", KUBE_QOS_NONE },
                /* Amazon ECS on cgroup v1: /ecs/<task id>/<container id> */
                { "/ecs/5a7e0e2f3a4b4c6d8e9f0a1b2c3d4e5f/" ID, "", CGROUP_RUNTIME_DOCKER, ID, "", KUBE_QOS_NONE },
                /* kind: the kubelet's cgroupRoot /kubelet joined into every slice name */
                { "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/"
                  "kubelet-kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID ".scope",
                  "cri-containerd-" ID ".scope", CGROUP_RUNTIME_CONTAINERD, ID, UID, KUBE_QOS_BURSTABLE },
                { "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod" UID_ ".slice", "", CGROUP_RUNTIME_NONE,
                  "", UID, KUBE_QOS_GUARANTEED },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                CgroupNames n;

                cgroup_names_parse(cases[i].path, &n);
                print_message("%s\n", cases[i].path);
                assert_string_equal(n.unit, cases[i].unit);
                assert_int_equal(n.runtime, cases[i].runtime);
                assert_string_equal(n.container_id, cases[i].container);
                assert_string_equal(n.pod_uid, cases[i].pod);
                assert_int_equal(n.qos, cases[i].qos);
        }
}

static void test_group_name_table(void **state) {
        static const struct {
                const char *path;
                CgroupBy by;
                const char *name;
        } cases[] = {
                { "/system.slice/kubelet.service", CGROUP_BY_UNIT, "kubelet.service" },
                { "/system.slice/kubelet.service", CGROUP_BY_CONTAINER, "[no-container]" },
                { "/system.slice/kubelet.service", CGROUP_BY_POD, "[no-pod]" },
                { "/", CGROUP_BY_UNIT, "[no-unit]" },
                { NULL, CGROUP_BY_UNIT, "[unknown]" },
                { "", CGROUP_BY_POD, "[unknown]" },
                { "/docker/" ID, CGROUP_BY_CONTAINER, "docker-0123456789ab" },
                { "/kubepods/burstable/pod" UID "/" ID, CGROUP_BY_POD, "pod-" UID },
                { "/kubepods/burstable/pod" UID "/" ID, CGROUP_BY_CONTAINER, "cri-0123456789ab" },
                { "/a/b", CGROUP_BY_PROCESS, "/a/b" },
                { "/lxc.payload.web-frontend-01/system.slice/nginx.service", CGROUP_BY_CONTAINER,
                  "lxc-web-frontend-01" },
                { "/lxc.payload.web-frontend-01/system.slice/nginx.service", CGROUP_BY_UNIT, "[no-unit]" },
        };
        char buf[256];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                assert_string_equal(cgroup_group_name(cases[i].path, cases[i].by, buf, sizeof buf), cases[i].name);
}

static void test_by_strings(void **state) {
        for (CgroupBy b = 0; b < _CGROUP_BY_MAX; b++)
                assert_int_equal(cgroup_by_from_string(cgroup_by_to_string(b)), b);
        assert_int_equal(cgroup_by_from_string("units"), _CGROUP_BY_INVALID);
        assert_int_equal(cgroup_by_from_string(NULL), _CGROUP_BY_INVALID);
        assert_string_equal(cgroup_runtime_to_string(CGROUP_RUNTIME_CRIO), "cri-o");
        assert_string_equal(kube_qos_to_string(KUBE_QOS_BESTEFFORT), "besteffort");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names_table),
                cmocka_unit_test(test_group_name_table),
                cmocka_unit_test(test_by_strings),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
