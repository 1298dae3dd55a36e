/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The manifest's "cgroups" comms: beside the processes with the most slice samples in a cgroup,
 * those with the most in the event's own seconds and in the rest of the bundle, so that show can
 * say where a burst at the event or a process that stopped at it ran, in a cgroup where other
 * processes had more of the slice; each listed once, most slice samples first.
 */
#include <string.h>
#include <sys/stat.h>

#include "basic/fileio.h"
#include "incident/incident-cgroups.h"
#include "json-test-util.h"
#include "tests.h"

#define CG "/system.slice/build.service"

static void add(IncidentCgroups *c, const char *comm, unsigned slice, unsigned near, unsigned baseline) {
        Sample s = { .pid = 100, .tid = 100, .comm = comm, .cgroup = CG };

        for (unsigned i = 0; i < slice; i++)
                assert_int_equal(incident_cgroups_add(c, &s, true, i < near), 0);
        for (unsigned i = 0; i < baseline; i++)
                assert_int_equal(incident_cgroups_add(c, &s, false, false), 0);
}

static JsonValue *listing_at(const IncidentCgroups *c, const char *root) {
        JsonWriter w;

        json_writer_init(&w, false);
        json_begin_object(&w);
        incident_cgroups_json(c, root, &w);
        json_end_object(&w);
        return test_json_finish_parse(&w);
}

static JsonValue *listing(const IncidentCgroups *c) {
        return listing_at(c, "/nonexistent");
}

static uint64_t u64(const JsonValue *o, const char *k) {
        uint64_t v = 0;
        assert_true(json_u64_value(json_object_get(o, k), &v));
        return v;
}

static void test_comms_burst_and_fall(void **state) {
        _cleanup_(json_value_freep) JsonValue *v = NULL;
        IncidentCgroups *c = incident_cgroups_new();
        static const char *const cc[] = { "cc1-a", "cc1-b", "cc1-c", "cc1-d", "cc1-e", "cc1-f" };

        assert_non_null(c);
        /* A build that started with the slice: six compilers with the most of it. */
        for (size_t i = 0; i < ELEMENTSOF(cc); i++)
                add(c, cc[i], 100 + (unsigned) i, 10, 0);
        /* burstp: all its 40 samples in the event's seconds; stopped: ran before them, and in the
         * baseline, then stopped. Neither is among the five with the most slice samples. */
        add(c, "burstp", 40, 40, 0);
        add(c, "stopped", 50, 0, 80);
        v = listing(c);
        c = incident_cgroups_free(c);

        const JsonValue *a = json_object_get(v, "cgroups");
        assert_int_equal(json_length(a), 1);
        const JsonValue *comms = json_object_get(json_array_get(a, 0), "comms");
        size_t n = json_length(comms);
        bool burst = false, stopped = false;
        uint64_t last = UINT64_MAX;

        assert_true(n >= 7 && n <= 3 * INCIDENT_CGROUP_COMMS_MAX);
        for (size_t i = 0; i < n; i++) {
                const JsonValue *e = json_array_get(comms, i);
                const char *comm = json_string_value(json_object_get(e, "comm"));

                assert_non_null(comm);
                assert_true(u64(e, "samples") <= last); /* most slice samples first */
                last = u64(e, "samples");
                for (size_t j = 0; j < i; j++)
                        assert_false(streq(comm, json_string_value(json_object_get(json_array_get(comms, j), "comm"))));
                if (streq(comm, "burstp")) {
                        burst = true;
                        assert_int_equal(u64(e, "samples"), 40);
                        assert_int_equal(u64(e, "near_samples"), 40);
                        assert_int_equal(u64(e, "baseline_samples"), 0);
                } else if (streq(comm, "stopped")) {
                        stopped = true;
                        assert_int_equal(u64(e, "samples"), 50);
                        assert_int_equal(u64(e, "near_samples"), 0);
                        assert_int_equal(u64(e, "baseline_samples"), 80);
                }
        }
        assert_true(burst);
        assert_true(stopped);
        /* the five with the most slice samples are there, first */
        assert_string_equal(json_string_value(json_object_get(json_array_get(comms, 0), "comm")), "cc1-f");
}

#define ID1 "1111111111111111111111111111111111111111111111111111111111111111"
#define ID2 "2222222222222222222222222222222222222222222222222222222222222222"
#define ID3 "3333333333333333333333333333333333333333333333333333333333333333"
#define ID4 "4444444444444444444444444444444444444444444444444444444444444444"
#define UID "8f3c2a10-5b7e-4d2a-9c11-0e6f4b3a2d19"

static char dir[] = "/tmp/test-incident-cgroups-XXXXXX";

static int setup(void **state) {
        return test_dir_make(dir);
}

static int teardown(void **state) {
        return test_dir_remove(dir);
}

static void put(const char *rel, const char *text) {
        char p[PATH_MAX];

        snprintf(p, sizeof p, "%s%s", dir, rel);
        *strrchr(p, '/') = '\0';
        assert_int_equal(mkdir_p(p, 0755), 0);
        snprintf(p, sizeof p, "%s%s", dir, rel);
        assert_int_equal(write_file_atomic(p, text, strlen(text), 0644), 0);
}

static const JsonValue *entry(const JsonValue *v, const char *id) {
        const JsonValue *a = json_object_get(v, "cgroups");

        for (size_t i = 0; i < json_length(a); i++)
                if (streq(json_string_value(json_object_get(json_array_get(a, i), "container_id")) ?: "", id))
                        return json_array_get(a, i);
        fail_msg("no cgroup of container %s", id);
        return NULL;
}

static const char *field(const JsonValue *e, const char *k) {
        return json_string_value(json_object_get(e, k)) ?: "";
}

/*
 * The names only the host knows, from the runtimes' own files. cri-dockerd 0.4.3 names a
 * container "k8s_<container>_<pod>_<namespace>_<uid>_<attempt>" and labels it with the kubelet's
 * io.kubernetes.container.name, .pod.name, .pod.namespace (core/naming.go, config/constants.go),
 * below the kubelet's cgroupfs driver too (runtime unknown from the path); nerdctl 2.3.5 copies
 * its labels, nerdctl/name among them, into the spec's annotations
 * (pkg/cmd/container/create.go), which containerd keeps in the task's bundle, in the default
 * namespace nerdctl runs in.
 */
static void test_container_names(void **state) {
        _cleanup_(json_value_freep) JsonValue *v = NULL;
        IncidentCgroups *c = incident_cgroups_new();
        static const char *const paths[] = {
                "/system.slice/docker-" ID1 ".scope",
                "/kubepods/burstable/pod" UID "/" ID2,
                "/system.slice/nerdctl-" ID3 ".scope",
                "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod8f3c2a10_5b7e_4d2a_9c11_0e6f4b3a2d19.slice/"
                "docker-" ID4 ".scope",
        };

        put("/var/lib/docker/containers/" ID1 "/config.v2.json", "{\"Name\":\"/web\",\"Config\":{\"Labels\":{}}}");
#define CRI_DOCKERD(id)                                                                                  \
        put("/var/lib/docker/containers/" id "/config.v2.json",                                          \
            "{\"Name\":\"/k8s_app_shop-0_prod_" UID "_0\",\"Config\":{\"Labels\":{"                        \
            "\"io.kubernetes.container.name\":\"app\",\"io.kubernetes.pod.name\":\"shop-0\","                \
            "\"io.kubernetes.pod.namespace\":\"prod\",\"io.kubernetes.pod.uid\":\"" UID "\"}}}")
        CRI_DOCKERD(ID2);
        CRI_DOCKERD(ID4);
        put("/run/containerd/io.containerd.runtime.v2.task/default/" ID3 "/config.json",
            "{\"ociVersion\":\"1.2.0\",\"annotations\":{\"nerdctl/name\":\"cache\",\"nerdctl/namespace\":\"default\"}}");
        assert_non_null(c);
        for (size_t i = 0; i < ELEMENTSOF(paths); i++)
                assert_int_equal(incident_cgroups_add(c, &(Sample) { .comm = "x", .cgroup = paths[i] }, true, false), 0);
        v = listing_at(c, dir);
        c = incident_cgroups_free(c);

        assert_string_equal(field(entry(v, ID1), "container_name"), "web");
        assert_string_equal(field(entry(v, ID2), "container_runtime"), "cri");
        assert_string_equal(field(entry(v, ID3), "container_name"), "cache");
        assert_string_equal(field(entry(v, ID3), "container_runtime"), "containerd");
        for (const char *const *id = (const char *const[]) { ID2, ID4, NULL }; *id; id++) {
                assert_string_equal(field(entry(v, *id), "container_name"), "app");
                assert_string_equal(field(entry(v, *id), "pod_name"), "shop-0");
                assert_string_equal(field(entry(v, *id), "pod_namespace"), "prod");
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_comms_burst_and_fall),
                cmocka_unit_test_setup_teardown(test_container_names, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
