/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A bundle's attribution from its manifest's cgroups: services ranked by their share of the
 * slice, the unit, container and pod a process ran in, and the ls filters; a manifest without the
 * list has none of it.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bundle/bundle-cgroups.h"
#include "tests.h"

static const char manifest_text[] =
        "{\"format\":1,\"slice\":{\"samples\":100},\"baseline\":{\"samples\":1000},\"cgroups\":["
        "{\"path\":\"/system.slice/kubelet.service\",\"samples\":50,\"baseline_samples\":100,"
        " \"unit\":\"kubelet.service\",\"comms\":[{\"comm\":\"kubelet\",\"samples\":45},{\"comm\":\"sh\",\"samples\":5}]},"
        "{\"path\":\"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podu.slice/cri-containerd-c.scope\","
        " \"samples\":30,\"baseline_samples\":300,\"unit\":\"cri-containerd-c.scope\",\"container_runtime\":\"containerd\","
        " \"container_id\":\"0123456789abcdef\",\"container_name\":\"web\",\"pod_uid\":\"8f3c\",\"pod_qos\":\"burstable\","
        " \"pod_namespace\":\"shop\",\"pod_name\":\"web-1\",\"comms\":[{\"comm\":\"java\",\"samples\":30}]},"
        "{\"path\":\"/system.slice/docker-d.scope\",\"samples\":15,\"baseline_samples\":550,\"unit\":\"docker-d.scope\","
        " \"container_runtime\":\"docker\",\"container_id\":\"fedcba9876543210\",\"comms\":[{\"comm\":\"java\",\"samples\":10},"
        "  {\"comm\":\"sh\",\"samples\":5}]},"
        "{\"path\":\"/\",\"samples\":5,\"baseline_samples\":50,\"comms\":[{\"comm\":\"swapper\",\"samples\":5},"
        "  {\"comm\":\"ksoftirqd/0\",\"samples\":2},{\"comm\":\"ksoftirqd/1\",\"samples\":1}]}"
        "]}";

static BundleManifest *load(void) {
        BundleManifest *m = NULL;
        assert_int_equal(bundle_manifest_parse(manifest_text, strlen(manifest_text), &m, NULL), 0);
        return m;
}

static void test_services_by_share(void **state) {
        BundleManifest *m = load();
        Rise *r;
        size_t n;

        assert_int_equal(bundle_services(m, CGROUP_BY_UNIT, 10, &r, &n), 0);
        assert_int_equal(n, 4);
        assert_string_equal(r[0].name, "kubelet.service");
        assert_int_equal(r[0].slice, 50);
        assert_true(r[0].slice_share > 0.49 && r[0].slice_share < 0.51);
        assert_true(r[0].baseline_share > 0.09 && r[0].baseline_share < 0.11);
        assert_true(r[0].z > 3);
        assert_string_equal(r[0].top_function, "kubelet");
        assert_string_equal(r[3].name, "[no-unit]");
        rises_free(r, n);

        /* cut to the largest; containers by name where the runtime had one */
        assert_int_equal(bundle_services(m, CGROUP_BY_CONTAINER, 2, &r, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(r[0].name, "[no-container]");
        assert_int_equal(r[0].slice, 55);
        assert_string_equal(r[1].name, "web");
        rises_free(r, n);

        assert_int_equal(bundle_services(m, CGROUP_BY_POD, 10, &r, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(r[1].name, "shop/web-1");
        rises_free(r, n);
        bundle_manifest_free(m);
}

static void test_process_cgroup(void **state) {
        BundleManifest *m = load();
        char buf[512];

        /* java ran in two containers: the one with most of its samples */
        assert_non_null(bundle_process_cgroup(m, "java", 0, false, buf, sizeof buf));
        assert_string_equal(buf, "unit cri-containerd-c.scope, container web (containerd), pod shop/web-1");
        assert_non_null(bundle_process_cgroup(m, "kubelet", 0, false, buf, sizeof buf));
        assert_string_equal(buf, "unit kubelet.service");
        assert_non_null(bundle_process_cgroup(m, "swapper", 0, false, buf, sizeof buf));
        assert_string_equal(buf, "");
        assert_null(bundle_process_cgroup(m, "nginx", 0, false, buf, sizeof buf));
        /* per-CPU kernel threads ranked as one: found by their own names, in the root cgroup */
        const JsonValue *c = bundle_process_cgroup(m, "ksoftirqd/*", +1, false, buf, sizeof buf);
        assert_non_null(c);
        assert_string_equal(json_string_value(json_object_get(c, "path")), "/");
        assert_string_equal(buf, "");
        assert_null(bundle_process_cgroup(m, "kworker/*", +1, false, buf, sizeof buf));

        /* Where it rose, where it fell: java's container c kept its 30% share, d went from 55% to
         * 15%; sh ran as much in kubelet.service (10% -> 50%) as in d. */
        assert_non_null(bundle_process_cgroup(m, "java", +1, false, buf, sizeof buf));
        assert_string_equal(buf, "unit cri-containerd-c.scope, container web (containerd), pod shop/web-1");
        assert_non_null(bundle_process_cgroup(m, "java", -1, false, buf, sizeof buf));
        assert_string_equal(buf, "unit docker-d.scope, container docker-fedcba987654 (docker)");
        assert_non_null(bundle_process_cgroup(m, "sh", +1, false, buf, sizeof buf));
        assert_string_equal(buf, "unit kubelet.service");
        assert_non_null(bundle_process_cgroup(m, "sh", -1, false, buf, sizeof buf));
        assert_string_equal(buf, "unit docker-d.scope, container docker-fedcba987654 (docker)");
        bundle_manifest_free(m);
}

/*
 * One program in two units, as written since the manifest counts each process's samples in the
 * event's own seconds and in the baseline: svcworker ran steadily in a.service, beside a batch job
 * there that rose over the whole slice (so a.service's share rose most); svcworker in b.service
 * went from little to most of the event's seconds. Its rise around the event is b.service's, its
 * rise over the slice against the baseline too (it was steady in a); the whole cgroups' change
 * would name a.service for both.
 */
static const char two_units_text[] =
        "{\"format\":1,\"slice\":{\"samples\":1000,\"near_samples\":300},\"baseline\":{\"samples\":1000},\"cgroups\":["
        "{\"path\":\"/system.slice/a.service\",\"samples\":500,\"near_samples\":100,\"baseline_samples\":200,"
        " \"unit\":\"a.service\",\"comms\":[{\"comm\":\"batch\",\"samples\":400,\"near_samples\":80,\"baseline_samples\":100},"
        "  {\"comm\":\"svcworker\",\"samples\":100,\"near_samples\":20,\"baseline_samples\":100}]},"
        "{\"path\":\"/system.slice/b.service\",\"samples\":200,\"near_samples\":150,\"baseline_samples\":150,"
        " \"unit\":\"b.service\",\"comms\":[{\"comm\":\"svcworker\",\"samples\":200,\"near_samples\":150,\"baseline_samples\":150}]},"
        "{\"path\":\"/\",\"samples\":300,\"near_samples\":50,\"baseline_samples\":650,"
        " \"comms\":[{\"comm\":\"swapper\",\"samples\":300,\"near_samples\":50,\"baseline_samples\":650}]}"
        "]}";

static void test_process_cgroup_own_change(void **state) {
        BundleManifest *m = NULL;
        char buf[512];

        assert_int_equal(bundle_manifest_parse(two_units_text, strlen(two_units_text), &m, NULL), 0);
        assert_non_null(bundle_process_cgroup(m, "svcworker", +1, true, buf, sizeof buf));
        assert_string_equal(buf, "unit b.service");
        assert_non_null(bundle_process_cgroup(m, "svcworker", +1, false, buf, sizeof buf));
        assert_string_equal(buf, "unit b.service");
        /* Where it fell around the event: a.service's share of the event's seconds is its share
         * of the rest (20/300 against 180/1700), b.service's far above: a.service. */
        assert_non_null(bundle_process_cgroup(m, "svcworker", -1, true, buf, sizeof buf));
        assert_string_equal(buf, "unit a.service");
        /* Without a direction: where most of its samples are. */
        assert_non_null(bundle_process_cgroup(m, "svcworker", 0, false, buf, sizeof buf));
        assert_string_equal(buf, "unit b.service");
        bundle_manifest_free(m);
}

/*
 * A bundle written seconds after tprofd started: no baseline, so only the event's own seconds
 * against the rest of the slice tell a rise. svcworker ran mostly in a.service (300 samples, 20 of
 * them around the event), yet rose around the event in b.service (150 of its 200 there).
 */
static const char no_baseline_text[] =
        "{\"format\":1,\"slice\":{\"samples\":1000,\"near_samples\":200},\"baseline\":{\"samples\":0},\"cgroups\":["
        "{\"path\":\"/system.slice/a.service\",\"samples\":600,\"near_samples\":50,\"baseline_samples\":0,"
        " \"unit\":\"a.service\",\"comms\":[{\"comm\":\"svcworker\",\"samples\":300,\"near_samples\":20,\"baseline_samples\":0}]},"
        "{\"path\":\"/system.slice/b.service\",\"samples\":400,\"near_samples\":150,\"baseline_samples\":0,"
        " \"unit\":\"b.service\",\"comms\":[{\"comm\":\"svcworker\",\"samples\":200,\"near_samples\":150,\"baseline_samples\":0}]}"
        "]}";

static void test_process_cgroup_near_without_baseline(void **state) {
        BundleManifest *m = NULL;
        char buf[512];

        assert_int_equal(bundle_manifest_parse(no_baseline_text, strlen(no_baseline_text), &m, NULL), 0);
        assert_non_null(bundle_process_cgroup(m, "svcworker", +1, true, buf, sizeof buf));
        assert_string_equal(buf, "unit b.service");
        assert_non_null(bundle_process_cgroup(m, "svcworker", -1, true, buf, sizeof buf));
        assert_string_equal(buf, "unit a.service");
        /* Over the slice there is nothing to compare with: where most of its samples are. */
        assert_non_null(bundle_process_cgroup(m, "svcworker", +1, false, buf, sizeof buf));
        assert_string_equal(buf, "unit a.service");
        bundle_manifest_free(m);
}

/*
 * Threads ranked as one key ("pool/" "*") counted in each cgroup together: pool/0..2 have 90 of
 * its samples in a.service, pool/0 40 in b.service. Each cgroup's largest single entry would name
 * b.service.
 */
static const char merged_text[] =
        "{\"format\":1,\"slice\":{\"samples\":1000,\"near_samples\":100},\"baseline\":{\"samples\":1000},\"cgroups\":["
        "{\"path\":\"/system.slice/a.service\",\"samples\":90,\"near_samples\":30,\"baseline_samples\":0,"
        " \"unit\":\"a.service\",\"comms\":[{\"comm\":\"pool/0\",\"samples\":30,\"near_samples\":10,\"baseline_samples\":0},"
        "  {\"comm\":\"pool/1\",\"samples\":30,\"near_samples\":10,\"baseline_samples\":0},"
        "  {\"comm\":\"pool/2\",\"samples\":30,\"near_samples\":10,\"baseline_samples\":0}]},"
        "{\"path\":\"/system.slice/b.service\",\"samples\":40,\"near_samples\":10,\"baseline_samples\":0,"
        " \"unit\":\"b.service\",\"comms\":[{\"comm\":\"pool/0\",\"samples\":40,\"near_samples\":10,\"baseline_samples\":0}]},"
        "{\"path\":\"/\",\"samples\":870,\"near_samples\":60,\"baseline_samples\":1000,"
        " \"comms\":[{\"comm\":\"swapper\",\"samples\":870,\"near_samples\":60,\"baseline_samples\":1000}]}"
        "]}";

static void test_process_cgroup_merged_key(void **state) {
        BundleManifest *m = NULL;
        char buf[512];

        assert_int_equal(bundle_manifest_parse(merged_text, strlen(merged_text), &m, NULL), 0);
        assert_non_null(bundle_process_cgroup(m, "pool/*", 0, false, buf, sizeof buf));
        assert_string_equal(buf, "unit a.service");
        assert_non_null(bundle_process_cgroup(m, "pool/*", +1, false, buf, sizeof buf));
        assert_string_equal(buf, "unit a.service");
        assert_non_null(bundle_process_cgroup(m, "pool/*", +1, true, buf, sizeof buf));
        assert_string_equal(buf, "unit a.service");
        bundle_manifest_free(m);
}

/*
 * More than 256 cgroups ran: the manifest lists the 256 largest, and the event's own seconds of the
 * rest (450 of its 600) are in slice.near_samples only. Against those 600, svcworker's share of the
 * event's seconds in b.service (50 of 600) is far below its share of the rest there (350 of 1900);
 * a.service's barely moved: a.service. Against the listed cgroups' 150 alone, b.service.
 */
static const char unlisted_text[] =
        "{\"format\":1,\"slice\":{\"samples\":1500,\"near_samples\":600},\"baseline\":{\"samples\":1000},\"cgroups\":["
        "{\"path\":\"/\",\"samples\":800,\"near_samples\":80,\"baseline_samples\":700,"
        " \"comms\":[{\"comm\":\"swapper\",\"samples\":800,\"near_samples\":80,\"baseline_samples\":700}]},"
        "{\"path\":\"/system.slice/a.service\",\"samples\":100,\"near_samples\":20,\"baseline_samples\":0,"
        " \"unit\":\"a.service\",\"comms\":[{\"comm\":\"svcworker\",\"samples\":100,\"near_samples\":20,\"baseline_samples\":0}]},"
        "{\"path\":\"/system.slice/b.service\",\"samples\":100,\"near_samples\":50,\"baseline_samples\":300,"
        " \"unit\":\"b.service\",\"comms\":[{\"comm\":\"svcworker\",\"samples\":100,\"near_samples\":50,\"baseline_samples\":300}]}"
        "]}";

static void test_process_cgroup_unlisted_near(void **state) {
        BundleManifest *m = NULL;
        char buf[512];

        assert_int_equal(bundle_manifest_parse(unlisted_text, strlen(unlisted_text), &m, NULL), 0);
        assert_int_equal(m->slice_near_samples, 600);
        assert_non_null(bundle_process_cgroup(m, "svcworker", +1, true, buf, sizeof buf));
        assert_string_equal(buf, "unit a.service");
        bundle_manifest_free(m);
}

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "8f3c2a10-5b7e-4d2a-9c11-0e6f4b3a2d19"

/* Named containers and pods as the daemon writes them (incident-cgroups.c), with real paths. */
static const char named_text[] =
        "{\"format\":1,\"slice\":{\"samples\":20},\"cgroups\":["
        "{\"path\":\"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod8f3c2a10_5b7e_4d2a_9c11_0e6f4b3a2d19.slice/"
        "cri-containerd-" ID ".scope\",\"samples\":10,\"unit\":\"cri-containerd-" ID ".scope\","
        " \"container_runtime\":\"containerd\",\"container_id\":\"" ID "\",\"container_name\":\"web\","
        " \"pod_uid\":\"" UID "\",\"pod_qos\":\"burstable\",\"pod_namespace\":\"shop\",\"pod_name\":\"web-1\"},"
        "{\"path\":\"/lxc.payload.frontend-canary-02/init.scope\",\"samples\":10,\"container_runtime\":\"lxc\","
        " \"container_id\":\"frontend-canary-02\",\"container_name\":\"frontend-canary-02\"}"
        "]}";

/* ls container= and pod= take the names export --by, --once --by and the pprof labels give, which
 * come from the path alone, for a container or pod the runtime or the kubelet named too. */
static void test_filters_by_export_names(void **state) {
        static const struct {
                const char *field, *value;
                bool match;
        } cases[] = {
                { "container", "web", true },
                { "container", "containerd-0123456789ab", true },
                { "container", "docker-0123456789ab", false },
                { "container", "lxc-frontend-canary-02", true },
                { "container", "frontend-canary-02", true },
                { "pod", "shop/web-1", true },
                { "pod", "pod-" UID, true },
                { "pod", "pod-web-1", false },
        };
        BundleManifest *m = NULL;

        assert_int_equal(bundle_manifest_parse(named_text, strlen(named_text), &m, NULL), 0);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                print_message("%s=%s\n", cases[i].field, cases[i].value);
                assert_int_equal(bundle_cgroups_match(m, cases[i].field, cases[i].value), cases[i].match);
        }
        bundle_manifest_free(m);
}

/*
 * A pool's work spread over its threads wrk-0 ... wrk-7 (as the daemon lists them in "threads": raw
 * comm, pid and process), each with a sliver: ranked as one, "wrk-*", the rise is the pool's. One
 * GC thread of java, and two threads of alike names of two processes, are not grouped.
 */
static const char threads_text[] =
        "{\"format\":1,\"slice\":{\"samples\":5820,\"near_samples\":1940},\"baseline\":{\"samples\":1000},"
        "\"threads\":[{\"comm\":\"wrk-0\",\"pid\":10,\"process\":\"pool\",\"samples\":6},"
        " {\"comm\":\"wrk-1\",\"pid\":10,\"process\":\"pool\",\"samples\":6},"
        " {\"comm\":\"wrk-2\",\"pid\":10,\"process\":\"pool\",\"samples\":6},"
        " {\"comm\":\"wrk-3\",\"pid\":10,\"process\":\"pool\",\"samples\":6},"
        " {\"comm\":\"wrk-4\",\"pid\":10,\"process\":\"pool\",\"samples\":6},"
        " {\"comm\":\"wrk-5\",\"pid\":10,\"process\":\"pool\",\"samples\":6},"
        " {\"comm\":\"wrk-6\",\"pid\":10,\"process\":\"pool\",\"samples\":6},"
        " {\"comm\":\"wrk-7\",\"pid\":10,\"process\":\"pool\",\"samples\":6},"
        " {\"comm\":\"GC Thread#0\",\"pid\":20,\"process\":\"java\",\"samples\":7},"
        " {\"comm\":\"job-1\",\"pid\":30,\"process\":\"a\",\"samples\":1},"
        " {\"comm\":\"job-2\",\"pid\":31,\"process\":\"b\",\"samples\":1}],"
        "\"cgroups\":[{\"path\":\"/system.slice/pool.service\",\"samples\":50,\"near_samples\":48,"
        " \"baseline_samples\":0,\"unit\":\"pool.service\",\"comms\":[{\"comm\":\"wrk-0\",\"samples\":6,"
        "  \"near_samples\":6,\"baseline_samples\":0},{\"comm\":\"wrk-5\",\"samples\":6,\"near_samples\":6,"
        "  \"baseline_samples\":0},{\"comm\":\"pool\",\"samples\":2,\"near_samples\":0,\"baseline_samples\":0}]}]}";

static void test_thread_groups(void **state) {
        static const struct {
                const char *comm, *key;
        } keys[] = {
                { "wrk-12", "wrk-*" },           { "GC_Thread#0", "GC_Thread#*" },
                { "CPU_0/KVM", "CPU_*/KVM" },     { "pool-1-thread-3", "pool-1-thread-*" },
                { "7zip", "*zip" },               { "VM_Thread", NULL },
                { "1234", NULL },                 { "", NULL },
        };
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL, gnear = FOLDED_NULL,
                                       grest = FOLDED_NULL, g = FOLDED_NULL;
        BundleManifest *m = NULL, *old = NULL;
        char buf[FOLDED_COMM_KEY_MAX], pbuf[64];
        Rise *r;
        size_t n;

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                const char *k = bundle_thread_group_key(keys[i].comm, buf);
                print_message("%s\n", keys[i].comm);
                if (keys[i].key)
                        assert_string_equal(k, keys[i].key);
                else
                        assert_null(k);
        }

        assert_int_equal(bundle_manifest_parse(threads_text, strlen(threads_text), &m, NULL), 0);
        /* 2 CPUs at 97 Hz, 10 s around the event and 20 s of rest: each thread of the pool had 6
         * samples near (0.3%), the pool 48 (2.5%: 5% of a CPU), none in the rest. */
        FILE *f = fmemopen((void *) "wrk-0;main;spin 6\nwrk-1;main;spin 6\nwrk-2;main;spin 6\nwrk-3;main;spin 6\n"
                                    "wrk-4;main;spin 6\nwrk-5;main;spin 6\nwrk-6;main;spin 6\nwrk-7;main;spin 6\n"
                                    "GC_Thread#0;gc 20\njob-1;x 3\njob-2;x 3\nswapper;idle 1846\n",
                           strlen("wrk-0;main;spin 6\nwrk-1;main;spin 6\nwrk-2;main;spin 6\nwrk-3;main;spin 6\n"
                                  "wrk-4;main;spin 6\nwrk-5;main;spin 6\nwrk-6;main;spin 6\nwrk-7;main;spin 6\n"
                                  "GC_Thread#0;gc 20\njob-1;x 3\njob-2;x 3\nswapper;idle 1846\n"),
                           "r");
        assert_non_null(f);
        assert_int_equal(folded_load_file(f, &near), 0);
        fclose(f);
        f = fmemopen((void *) "pool;main;loop 10\nGC_Thread#0;gc 40\nswapper;idle 3830\n",
                     strlen("pool;main;loop 10\nGC_Thread#0;gc 40\nswapper;idle 3830\n"), "r");
        assert_non_null(f);
        assert_int_equal(folded_load_file(f, &rest), 0);
        fclose(f);

        /* Thread by thread nothing rose that an answer names. */
        AnswerInput in = { .near = &near, .rest = &rest, .n_cpus = 2 };
        Answer a = {};
        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &r, &n), 0);
        in.near_proc = r;
        in.n_near_proc = n;
        assert_int_equal(answer_choose(&in, NULL, NULL, &a), 0);
        assert_false(a.clear);
        answer_done(&a);
        rises_free(r, n);

        /* Grouped, the pool's threads rose as one: the answer. */
        assert_int_equal(bundle_threads_grouped(m, &near, &gnear), 1);
        assert_int_equal(gnear.total, near.total);
        assert_int_equal(bundle_threads_grouped(m, &rest, &grest), 0); /* no thread of a group in it */
        assert_int_equal(folded_rises(&gnear, &rest, RISE_PROCESS, SIZE_MAX, &r, &n), 0);
        in.near = &gnear;
        in.near_proc = r;
        in.n_near_proc = n;
        assert_int_equal(answer_choose(&in, NULL, NULL, &a), 0);
        assert_true(a.clear);
        assert_string_equal(a.rise.name, "wrk-*");
        assert_int_equal(a.rise.slice, 48);
        answer_done(&a);
        rises_free(r, n);
        /* The thread alone of its name in java, and those of two processes, as they were. */
        assert_true(folded_key_share(&gnear, RISE_PROCESS, "job-1") > 0);
        assert_true(folded_key_share(&gnear, RISE_PROCESS, "job-2") > 0);
        assert_true(folded_key_share(&gnear, RISE_PROCESS, "GC_Thread#0") == folded_key_share(&near, RISE_PROCESS, "GC_Thread#0"));
        assert_true(folded_key_share(&gnear, RISE_PROCESS, "job-*") == 0);
        assert_true(folded_key_share(&gnear, RISE_PROCESS, "GC_Thread#*") == 0);

        /* Whose threads they are, and where they ran: every thread of the group. */
        assert_string_equal(bundle_thread_process(m, "wrk-*", pbuf, sizeof pbuf), "pool");
        assert_string_equal(bundle_thread_process(m, "wrk-3", pbuf, sizeof pbuf), "pool");
        assert_string_equal(bundle_thread_process(m, "GC_Thread#0", pbuf, sizeof pbuf), "java");
        assert_non_null(bundle_process_cgroup(m, "wrk-*", +1, true, buf, sizeof buf));
        assert_string_equal(buf, "unit pool.service");

        /* A thread's interrupt work stays "[irq]" once its comm is grouped. */
        {
                _cleanup_(folded_donep) Folded irq = FOLDED_NULL, girq = FOLDED_NULL;
                const char *t = "wrk-0;main;spin 6\nwrk-1;main;asm_common_interrupt;common_interrupt;handle_irq_event 4\n";
                FILE *fi = fmemopen((void *) t, strlen(t), "r");

                assert_non_null(fi);
                assert_int_equal(folded_load_file(fi, &irq), 0);
                fclose(fi);
                assert_int_equal(bundle_threads_grouped(m, &irq, &girq), 1);
                assert_true(folded_key_share(&girq, RISE_PROCESS, "wrk-*") == 0.6);
                assert_true(folded_key_share(&girq, RISE_PROCESS, "[irq]") == 0.4);
        }

        /* A bundle written before the list: nothing is grouped. */
        assert_int_equal(bundle_manifest_parse("{\"format\":1}", 12, &old, NULL), 0);
        assert_int_equal(bundle_threads_grouped(old, &near, &g), 0);
        assert_int_equal(g.n, 0);
        bundle_manifest_free(old);
        bundle_manifest_free(m);
}

/* A process that renamed itself during a rise (PR_SET_NAME; later samples carry the new comm,
 * __set_task_comm(), fs/exec.c, Linux 6.12): the manifest's "renames" says its former name, and
 * the stacks of both rank as one process under its name now, with all of its rise, not as two
 * processes with half of it each. A thread pool beside it groups as before. */
static void test_renamed_process(void **state) {
        static const char text[] =
                "{\"format\":1,\"slice\":{\"samples\":1985},\"baseline\":{\"samples\":4000},"
                "\"threads\":[{\"comm\":\"wrk-0\",\"pid\":10,\"process\":\"pool\",\"samples\":6},"
                " {\"comm\":\"wrk-1\",\"pid\":10,\"process\":\"pool\",\"samples\":6}],"
                "\"renames\":[{\"comm\":\"rn-old\",\"pid\":50,\"process\":\"rn-new\",\"samples\":40},"
                " {\"comm\":\"same\",\"pid\":51,\"process\":\"same\",\"samples\":1}]}";
        static const char near_text[] = "rn-old;main;spin 40\nrn-new;main;spin 45\nwrk-0;main;loop 3\n"
                                        "wrk-1;main;loop 3\nother;main;work 60\nswapper;idle 1834\n";
        static const char rest_text[] = "rn-old;main;wait 5\nother;main;work 120\nswapper;idle 3875\n";
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL, gnear = FOLDED_NULL,
                                       grest = FOLDED_NULL;
        BundleManifest *m = NULL;
        Answer a = {};
        Rise *r;
        size_t n;
        FILE *f;

        assert_int_equal(bundle_manifest_parse(text, strlen(text), &m, NULL), 0);
        f = fmemopen((void *) near_text, strlen(near_text), "r");
        assert_non_null(f);
        assert_int_equal(folded_load_file(f, &near), 0);
        fclose(f);
        f = fmemopen((void *) rest_text, strlen(rest_text), "r");
        assert_non_null(f);
        assert_int_equal(folded_load_file(f, &rest), 0);
        fclose(f);

        assert_int_equal(bundle_threads_grouped(m, &near, &gnear), 1);
        assert_int_equal(bundle_threads_grouped(m, &rest, &grest), 1);
        assert_int_equal(gnear.total, near.total);
        assert_true(folded_key_share(&gnear, RISE_PROCESS, "rn-old") == 0);
        assert_true(folded_key_share(&gnear, RISE_PROCESS, "rn-new") == 85.0 / 1985.0);
        assert_true(folded_key_share(&grest, RISE_PROCESS, "rn-new") == 5.0 / 4000.0);
        assert_true(folded_key_share(&gnear, RISE_PROCESS, "wrk-*") == 6.0 / 1985.0);

        AnswerInput in = { .near = &gnear, .rest = &grest, .n_cpus = 2 };
        assert_int_equal(folded_rises(&gnear, &grest, RISE_PROCESS, SIZE_MAX, &r, &n), 0);
        for (size_t i = 0; i < n; i++)
                assert_string_not_equal(r[i].name, "rn-old");
        in.near_proc = r;
        in.n_near_proc = n;
        assert_int_equal(answer_choose(&in, NULL, NULL, &a), 0);
        assert_true(a.clear);
        assert_string_equal(a.rise.name, "rn-new");
        assert_int_equal(a.rise.slice, 85);
        assert_string_equal(a.rise.top_function, "spin");
        answer_done(&a);
        rises_free(r, n);
        bundle_manifest_free(m);
}

/* Renames are followed one step, by name: a chain (alpha -> beta, beta -> gamma) or a cycle
 * (xray -> yank, yank -> xray) in a manifest would carry a name's stacks under one that is not its
 * process's now; such a rename is not followed, the other is. */
static void test_renames_chained(void **state) {
        static const char text[] =
                "{\"format\":1,\"slice\":{\"samples\":100},\"baseline\":{\"samples\":100},"
                "\"renames\":[{\"comm\":\"alpha\",\"pid\":1,\"process\":\"beta\",\"samples\":10},"
                " {\"comm\":\"beta\",\"pid\":2,\"process\":\"gamma\",\"samples\":10},"
                " {\"comm\":\"xray\",\"pid\":3,\"process\":\"yank\",\"samples\":10},"
                " {\"comm\":\"yank\",\"pid\":4,\"process\":\"xray\",\"samples\":10}]}";
        static const char near_text[] = "alpha;main 10\nbeta;main 20\ngamma;main 30\nxray;main 15\nyank;main 25\n";
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, g = FOLDED_NULL;
        BundleManifest *m = NULL;
        FILE *f;

        assert_int_equal(bundle_manifest_parse(text, strlen(text), &m, NULL), 0);
        f = fmemopen((void *) near_text, strlen(near_text), "r");
        assert_non_null(f);
        assert_int_equal(folded_load_file(f, &near), 0);
        fclose(f);
        assert_int_equal(bundle_threads_grouped(m, &near, &g), 1);
        assert_true(folded_key_share(&g, RISE_PROCESS, "alpha") == 0.10);
        assert_true(folded_key_share(&g, RISE_PROCESS, "beta") == 0);
        assert_true(folded_key_share(&g, RISE_PROCESS, "gamma") == 0.50);
        assert_true(folded_key_share(&g, RISE_PROCESS, "xray") == 0.15);
        assert_true(folded_key_share(&g, RISE_PROCESS, "yank") == 0.25);
        bundle_manifest_free(m);
}

/* A manifest read from elsewhere may list as many threads as its megabyte holds (tprofd writes
 * 64): each of some 30,000, of names alike but for a letter, is looked at a bounded number of
 * times, not once per other thread (which took minutes). The pair at the end is still grouped. */
static void test_thread_groups_long_list(void **state) {
        _cleanup_(folded_donep) Folded f = FOLDED_NULL, g = FOLDED_NULL;
        _cleanup_free_ char *text = malloc(BUNDLE_MANIFEST_BYTES_MAX);
        size_t len = 0, n = 0;
        BundleManifest *m = NULL;
        clock_t start;

        assert_non_null(text);
        len += (size_t) snprintf(text, BUNDLE_MANIFEST_BYTES_MAX, "{\"format\":1,\"threads\":[");
        while (len < BUNDLE_MANIFEST_BYTES_MAX - 256) {
                char name[5];
                size_t x = n++;

                for (size_t d = 0; d < 4; d++, x /= 26)
                        name[d] = (char) ('a' + x % 26);
                name[4] = '\0';
                len += (size_t) snprintf(text + len, BUNDLE_MANIFEST_BYTES_MAX - len,
                                         "{\"comm\":\"%s1\",\"process\":\"p\"},", name);
        }
        len += (size_t) snprintf(text + len, BUNDLE_MANIFEST_BYTES_MAX - len,
                                 "{\"comm\":\"wrk-0\",\"process\":\"pool\"},"
                                 "{\"comm\":\"wrk-1\",\"process\":\"pool\"}]}");
        assert_true(n > 30000);
        assert_int_equal(bundle_manifest_parse(text, len, &m, NULL), 0);

        FILE *ff = fmemopen((void *) "wrk-0;spin 3\nwrk-1;spin 4\naaaa1;x 1\n",
                            strlen("wrk-0;spin 3\nwrk-1;spin 4\naaaa1;x 1\n"), "r");
        assert_non_null(ff);
        assert_int_equal(folded_load_file(ff, &f), 0);
        fclose(ff);

        start = clock();
        assert_int_equal(bundle_threads_grouped(m, &f, &g), 1);
        /* Well under a second even with sanitizers; minutes when quadratic. */
        assert_true(clock() - start < 10 * CLOCKS_PER_SEC);
        assert_int_equal(g.n, 2);
        assert_true(folded_key_share(&g, RISE_PROCESS, "wrk-*") == 7.0 / 8.0);
        assert_true(folded_key_share(&g, RISE_PROCESS, "aaaa1") == 1.0 / 8.0);
        bundle_manifest_free(m);
}

static void load_text(const char *text, Folded *ret) {
        FILE *f = fmemopen((void *) text, strlen(text), "r");

        assert_non_null(f);
        assert_int_equal(folded_load_file(f, ret), 0);
        fclose(f);
}

/*
 * A pool that makes a thread for each request, rq-0, rq-1, ... of sv, a sample or two each: tprofd
 * lists the 64 names with most samples (INCIDENT_THREADS_MAX), and most of the pool's work is in
 * the names it had no room for. Where the list is full they rank under the group of their key,
 * where it made one for one process alone and names them nowhere: rq-500 and rq-501 as rq-*, not
 * rq-900 (listed, another process's thread), job-9 (job-* is a group of two processes), px-2
 * (px-* no group). Where the list is not full, it named every thread with a sample in the slice.
 */
static void test_thread_groups_full_list(void **state) {
        static const char stacks[] = "rq-0;main;handle 2\nrq-500;main;handle 1\nrq-501;main;handle 1\n"
                                     "rq-900;x 1\njob-9;y 1\npx-2;z 1\nsv;main;loop 1\n";

        for (unsigned full = 0; full <= 1; full++) {
                _cleanup_(folded_donep) Folded f = FOLDED_NULL, g = FOLDED_NULL, own = FOLDED_NULL;
                char text[8192];
                size_t len = 0, n_rq = BUNDLE_THREADS_LISTED_MAX - 6 - !full;
                BundleManifest *m = NULL;

                len += (size_t) snprintf(text + len, sizeof text - len, "{\"format\":1,\"threads\":[");
                for (size_t i = 0; i < n_rq; i++)
                        len += (size_t) snprintf(
                                text + len, sizeof text - len,
                                "{\"comm\":\"rq-%zu\",\"pid\":10,\"process\":\"sv\",\"samples\":2},", i);
                len += (size_t) snprintf(
                        text + len, sizeof text - len,
                        "{\"comm\":\"job-0\",\"pid\":20,\"process\":\"a\",\"samples\":2},"
                        "{\"comm\":\"job-1\",\"pid\":20,\"process\":\"a\",\"samples\":2},"
                        "{\"comm\":\"job-2\",\"pid\":30,\"process\":\"b\",\"samples\":2},"
                        "{\"comm\":\"job-3\",\"pid\":30,\"process\":\"b\",\"samples\":2},"
                        "{\"comm\":\"px-1\",\"pid\":40,\"process\":\"c\",\"samples\":2},"
                        "{\"comm\":\"rq-900\",\"pid\":50,\"process\":\"other\",\"samples\":2}]}");
                assert_true(len < sizeof text);
                assert_int_equal(bundle_manifest_parse(text, len, &m, NULL), 0);
                assert_int_equal(json_length(json_object_get(m->json, "threads")),
                                 BUNDLE_THREADS_LISTED_MAX - !full);
                load_text(stacks, &f);

                assert_int_equal(bundle_threads_grouped(m, &f, &g), 1);
                assert_true(folded_key_share(&g, RISE_PROCESS, "rq-*") == (full ? 4.0 : 2.0) / 8.0);
                assert_true(folded_key_share(&g, RISE_PROCESS, "rq-500") == (full ? 0.0 : 1.0 / 8.0));
                assert_true(folded_key_share(&g, RISE_PROCESS, "rq-900") == 1.0 / 8.0);
                assert_true(folded_key_share(&g, RISE_PROCESS, "job-9") == 1.0 / 8.0);
                assert_true(folded_key_share(&g, RISE_PROCESS, "px-2") == 1.0 / 8.0);
                assert_true(folded_key_share(&g, RISE_PROCESS, "sv") == 1.0 / 8.0);

                /* Each thread's own stacks, the pool's carrying as the group ranks. */
                assert_int_equal(bundle_threads_own(m, &f, &own), 0);
                assert_int_equal(own.n, full ? 3 : 1);
                assert_true(folded_key_share(&own, RISE_FUNCTION, "rq-501;handle") ==
                            (full ? 1.0 / 8.0 : 0.0));
                bundle_manifest_free(m);
        }
}

/* A bundle's three files as show and the report read them: each thread's own stacks kept, the
 * threads grouped, and the rest of the bundle beside the event's seconds (of both). */
typedef struct Sides {
        Folded slice, baseline, near, rest, own_slice, own_baseline, own_near, own_rest;
} Sides;

static void sides_done(Sides *s) {
        Folded *all[] = { &s->slice, &s->baseline, &s->near, &s->rest,
                          &s->own_slice, &s->own_baseline, &s->own_near, &s->own_rest };
        for (size_t i = 0; i < ELEMENTSOF(all); i++)
                folded_done(all[i]);
}

static void sides_load(const BundleManifest *m, const char *slice_text, const char *baseline_text,
                       const char *near_text, Sides *s) {
        *s = (Sides) {};
        load_text(slice_text, &s->slice);
        load_text(baseline_text, &s->baseline);
        load_text(near_text, &s->near);
        assert_int_equal(bundle_threads_own(m, &s->slice, &s->own_slice), 0);
        assert_int_equal(bundle_threads_own(m, &s->baseline, &s->own_baseline), 0);
        assert_int_equal(bundle_threads_own(m, &s->near, &s->own_near), 0);
        assert_int_equal(bundle_threads_group(m, &s->slice), 0);
        assert_int_equal(bundle_threads_group(m, &s->baseline), 0);
        assert_int_equal(bundle_threads_group(m, &s->near), 0);
        assert_int_equal(folded_rest(&s->slice, &s->baseline, &s->near, &s->rest), 0);
        assert_int_equal(folded_rest(&s->own_slice, &s->own_baseline, &s->own_near, &s->own_rest), 0);
        s->own_rest.total = s->rest.total;
}

/* The answer as show and the report make it: the event's seconds against the rest of the
 * bundle, and the thread that carried a group's rise. */
static void answer_of(const BundleManifest *m, const char *slice_text, const char *baseline_text,
                      const char *near_text, Answer *ret) {
        _cleanup_(sides_done) Sides s;
        Rise *r;
        size_t n;

        sides_load(m, slice_text, baseline_text, near_text, &s);
        assert_int_equal(folded_rises(&s.near, &s.rest, RISE_PROCESS, SIZE_MAX, &r, &n), 0);
        AnswerInput in = { .near_proc = r, .n_near_proc = n, .near = &s.near, .rest = &s.rest, .n_cpus = 2 };
        assert_int_equal(answer_choose(&in, &s.slice, &s.baseline, ret), 0);
        rises_free(r, n);
        int k = bundle_answer_thread(&s.own_slice, &s.own_baseline, &s.own_near, &s.own_rest, ret);
        assert_int_equal(k, ret->thread ? 1 : 0);
}

/*
 * A pool's four threads pool-0 ... pool-3 of mt, each a sliver of work in the baseline and the
 * slice. Around the event (2 CPUs at 100 Hz for 10 s: 2000 samples) either one of them spins
 * (pool-2, 1000 samples: a whole CPU) while the others idle, or the same work is spread over all
 * four. The group rose either way, "pool-*" the answer; only in the first one thread carried it,
 * and it is named.
 */
static const char pool_manifest[] =
        "{\"format\":1,\"slice\":{\"samples\":6000,\"near_samples\":2000},\"baseline\":{\"samples\":4000},"
        "\"threads\":[{\"comm\":\"pool-0\",\"pid\":10,\"process\":\"mt\",\"samples\":30},"
        " {\"comm\":\"pool-1\",\"pid\":10,\"process\":\"mt\",\"samples\":30},"
        " {\"comm\":\"pool-2\",\"pid\":10,\"process\":\"mt\",\"samples\":1020},"
        " {\"comm\":\"pool-3\",\"pid\":10,\"process\":\"mt\",\"samples\":30},"
        " {\"comm\":\"wrk-0\",\"pid\":20,\"process\":\"other\",\"samples\":90},"
        " {\"comm\":\"wrk-1\",\"pid\":20,\"process\":\"other\",\"samples\":90}]}";

static void test_thread_carrying(void **state) {
        static const char baseline[] = "pool-0;main;work 20\npool-1;main;work 20\npool-2;main;work 20\n"
                                       "pool-3;main;work 20\nwrk-0;main;serve 60\nwrk-1;main;serve 60\n"
                                       "swapper;idle 3800\n";
        /* One thread stuck: pool-2 spins 1000 of near's 2000 samples, the others work as before
         * outside near and not at all in it (idle, blocked on what pool-2 holds). */
        static const char one_near[] = "pool-2;main;spin 1000\nwrk-0;main;serve 30\nwrk-1;main;serve 30\n"
                                       "swapper;idle 940\n";
        static const char one_slice[] = "pool-2;main;spin 1000\nwrk-0;main;serve 90\nwrk-1;main;serve 90\n"
                                        "pool-0;main;work 30\npool-1;main;work 30\npool-2;main;work 20\n"
                                        "pool-3;main;work 30\nswapper;idle 4710\n";
        /* The pool busier: the same 1000 samples spread over its four threads. */
        static const char spread_near[] = "pool-0;main;spin 250\npool-1;main;spin 250\npool-2;main;spin 250\n"
                                          "pool-3;main;spin 250\nwrk-0;main;serve 30\nwrk-1;main;serve 30\n"
                                          "swapper;idle 940\n";
        static const char spread_slice[] = "pool-0;main;spin 250\npool-1;main;spin 250\npool-2;main;spin 250\n"
                                           "pool-3;main;spin 250\nwrk-0;main;serve 90\nwrk-1;main;serve 90\n"
                                           "pool-0;main;work 30\npool-1;main;work 30\npool-2;main;work 20\n"
                                           "pool-3;main;work 30\nswapper;idle 4710\n";
        _cleanup_(folded_donep) Folded own = FOLDED_NULL, base = FOLDED_NULL, own_base = FOLDED_NULL;
        BundleManifest *m = NULL;
        Answer a = {};
        char *t;

        assert_int_equal(bundle_manifest_parse(pool_manifest, strlen(pool_manifest), &m, NULL), 0);

        answer_of(m, one_slice, baseline, one_near, &a);
        assert_true(a.clear);
        assert_true(answer_from_near(a.from));
        assert_string_equal(a.rise.name, "pool-*");
        assert_int_equal(a.rise.slice, 1000);
        assert_string_equal(a.thread, "pool-2");
        answer_done(&a);

        answer_of(m, spread_slice, baseline, spread_near, &a);
        assert_true(a.clear);
        assert_string_equal(a.rise.name, "pool-*");
        assert_int_equal(a.rise.slice, 1000);
        assert_null(a.thread);
        answer_done(&a);

        /* The own stacks: the group's threads by their own comm and leaf, no other process's, with
         * the whole file's total. */
        load_text(one_slice, &own);
        assert_int_equal(bundle_threads_own(m, &own, &base), 0);
        assert_int_equal(base.total, 6000);
        assert_true(folded_key_share(&base, RISE_FUNCTION, "pool-2;spin") == 1000.0 / 6000.0);
        assert_true(folded_key_share(&base, RISE_PROCESS, "pool-2") == 1020.0 / 6000.0);
        assert_true(folded_key_share(&base, RISE_PROCESS, "wrk-0") == 90.0 / 6000.0);
        assert_true(folded_key_share(&base, RISE_PROCESS, "swapper") == 0);

        /* A thread's interrupt work is none of its own: it ranks as "[irq]". */
        {
                _cleanup_(folded_donep) Folded x = FOLDED_NULL, ox = FOLDED_NULL;
                load_text("pool-1;main;asm_common_interrupt;common_interrupt;handle_irq_event 4\npool-1;main;spin 6\n", &x);
                assert_int_equal(bundle_threads_own(m, &x, &ox), 0);
                assert_int_equal(ox.total, 10);
                assert_true(folded_key_share(&ox, RISE_PROCESS, "pool-1") == 0.6);
        }

        /* The slice against the baseline, and a function's rise: pool-2's spin is all one thread's. */
        folded_done(&own);
        load_text(baseline, &own);
        assert_int_equal(bundle_threads_own(m, &own, &own_base), 0);
        assert_int_equal(bundle_thread_carrying(&base, &own_base, "pool-*", RISE_PROCESS, &t), 1);
        assert_string_equal(t, "pool-2");
        free(t);
        assert_int_equal(bundle_thread_carrying(&base, &own_base, "pool-*;spin", RISE_FUNCTION, &t), 1);
        assert_string_equal(t, "pool-2");
        free(t);
        /* The threads' "work" did not rise at all; and two threads of the other process gaining
         * alike are the process busier. */
        assert_int_equal(bundle_thread_carrying(&base, &own_base, "pool-*;work", RISE_FUNCTION, &t), 0);
        assert_null(t);
        assert_int_equal(bundle_thread_carrying(&base, &own_base, "wrk-*", RISE_PROCESS, &t), 0);
        assert_null(t);

        /* Two thirds of what the threads gained, and no less: pool-2 gaining 100 and pool-0 50 is
         * pool-2 carrying the rise; pool-0 gaining 51 is not. */
        {
                _cleanup_(folded_donep) Folded x = FOLDED_NULL, y = FOLDED_NULL;
                load_text("pool-2;spin 100\npool-0;spin 50\nswapper;idle 850\n", &x);
                load_text("pool-2;spin 0\nswapper;idle 1000\n", &y);
                assert_int_equal(bundle_thread_carrying(&x, &y, "pool-*", RISE_PROCESS, &t), 1);
                assert_string_equal(t, "pool-2");
                free(t);
                folded_done(&x);
                load_text("pool-2;spin 100\npool-0;spin 51\nswapper;idle 849\n", &x);
                assert_int_equal(bundle_thread_carrying(&x, &y, "pool-*", RISE_PROCESS, &t), 0);
                assert_null(t);
        }
        bundle_manifest_free(m);
}

/* The rankings' rows, as show and the page list them: the group's row names the thread that
 * carried its rise where one did, and only there; a copy of a row keeps it. */
static void rows_of(const BundleManifest *m, const char *slice_text, const char *baseline_text, const char *near_text,
                    Rise **ret, size_t *ret_n) {
        _cleanup_(sides_done) Sides s;

        sides_load(m, slice_text, baseline_text, near_text, &s);
        assert_int_equal(folded_rises(&s.near, &s.rest, RISE_PROCESS, SIZE_MAX, ret, ret_n), 0);
        assert_int_equal(bundle_rises_threads(&s.own_near, &s.own_rest, *ret, *ret_n), 0);
}

static void test_rises_threads(void **state) {
        static const char baseline[] = "pool-0;main;work 20\npool-1;main;work 20\npool-2;main;work 20\n"
                                       "pool-3;main;work 20\nwrk-0;main;serve 20\nwrk-1;main;serve 20\n"
                                       "db;main;query 20\nswapper;idle 3860\n";
        /* pool-2 spins alone; the other process's two threads and db rise evenly and alone. */
        static const char one_near[] = "pool-2;main;spin 600\nwrk-0;main;serve 150\nwrk-1;main;serve 150\n"
                                       "db;main;query 150\nswapper;idle 950\n";
        static const char one_slice[] = "pool-2;main;spin 600\nwrk-0;main;serve 170\nwrk-1;main;serve 170\n"
                                        "db;main;query 170\npool-0;main;work 30\npool-1;main;work 30\n"
                                        "pool-2;main;work 20\npool-3;main;work 30\nswapper;idle 4780\n";
        static const char spread_near[] = "pool-0;main;spin 150\npool-1;main;spin 150\npool-2;main;spin 150\n"
                                          "pool-3;main;spin 150\nwrk-0;main;serve 150\nwrk-1;main;serve 150\n"
                                          "db;main;query 150\nswapper;idle 950\n";
        static const char spread_slice[] = "pool-0;main;spin 150\npool-1;main;spin 150\npool-2;main;spin 150\n"
                                           "pool-3;main;spin 150\nwrk-0;main;serve 170\nwrk-1;main;serve 170\n"
                                           "db;main;query 170\npool-0;main;work 30\npool-1;main;work 30\n"
                                           "pool-2;main;work 20\npool-3;main;work 30\nswapper;idle 4780\n";
        BundleManifest *m = NULL;
        Rise *r = NULL, copy = {};
        size_t n = 0, seen = 0;

        assert_int_equal(bundle_manifest_parse(pool_manifest, strlen(pool_manifest), &m, NULL), 0);

        rows_of(m, one_slice, baseline, one_near, &r, &n);
        for (size_t i = 0; i < n; i++) {
                if (streq(r[i].name, "pool-*")) {
                        assert_non_null(r[i].thread);
                        assert_string_equal(r[i].thread, "pool-2");
                        assert_int_equal(rise_copy(&r[i], &copy), 0);
                        assert_string_equal(copy.thread, "pool-2");
                        rise_done(&copy);
                        seen++;
                } else {
                        /* wrk-* rose on both of its threads alike; db is no group */
                        assert_null(r[i].thread);
                        seen += streq(r[i].name, "wrk-*") || streq(r[i].name, "db");
                }
        }
        assert_int_equal(seen, 3);
        rises_free(r, n);

        rows_of(m, spread_slice, baseline, spread_near, &r, &n);
        seen = 0;
        for (size_t i = 0; i < n; i++) {
                assert_null(r[i].thread);
                seen += streq(r[i].name, "pool-*");
        }
        assert_int_equal(seen, 1);
        rises_free(r, n);
        bundle_manifest_free(m);
}

static void test_filters(void **state) {
        static const struct {
                const char *field, *value;
                bool match;
        } cases[] = {
                { "unit", "kubelet.service", true },
                { "unit", "kubelet", false },
                { "container", "web", true },
                { "container", "docker-fedcba987654", true },
                { "container", "fedcba98", true },
                { "container", "fed", false }, /* too short a prefix */
                { "pod", "shop/web-1", true },
                { "pod", "web-1", true },
                { "pod", "8f3c", true },
                { "pod", "shop", false },
                { "cgroup", "/system.slice/docker-d.scope", true },
                { "cgroup", "/system.slice", false },
        };
        BundleManifest *m = load(), *old = NULL;
        Rise *r;
        size_t n;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                print_message("%s=%s\n", cases[i].field, cases[i].value);
                assert_true(bundle_cgroups_field(cases[i].field));
                assert_int_equal(bundle_cgroups_match(m, cases[i].field, cases[i].value), cases[i].match);
        }
        assert_false(bundle_cgroups_field("status"));

        assert_int_equal(bundle_manifest_parse("{\"format\":1}", 12, &old, NULL), 0);
        assert_false(bundle_cgroups_match(old, "unit", "kubelet.service"));
        assert_int_equal(bundle_services(old, CGROUP_BY_UNIT, 5, &r, &n), -ENODATA);
        bundle_manifest_free(old);
        bundle_manifest_free(m);
}

/* How many processes carried a ranked name, from the manifest's "processes": a name is counted as
 * the stacks tidy it, a key of many names or a group of threads is no one comm's, and a bundle
 * written before the list counts none. */
static void test_comm_processes(void **state) {
        static const char text[] =
                "{\"format\":1,\"processes\":["
                "{\"comm\":\"true\",\"processes\":812,\"samples\":1218},"
                "{\"comm\":\"my job\",\"processes\":3,\"samples\":30},"
                "{\"comm\":\"my_job\",\"processes\":2,\"samples\":20},"
                "{\"comm\":\"kworker/0:1\",\"processes\":2,\"samples\":9}]}";
        BundleManifest *m = NULL, *old = NULL;

        assert_int_equal(bundle_manifest_parse(text, strlen(text), &m, NULL), 0);
        assert_int_equal(bundle_comm_processes(m, "true"), 812);
        assert_int_equal(bundle_comm_processes(m, "my_job"), 5);
        assert_int_equal(bundle_comm_processes(m, "java"), 0);
        assert_int_equal(bundle_comm_processes(m, "kworker/*"), 0);
        assert_int_equal(bundle_comm_processes(m, NULL), 0);
        assert_int_equal(bundle_manifest_parse("{\"format\":1}", 12, &old, NULL), 0);
        assert_int_equal(bundle_comm_processes(old, "true"), 0);
        bundle_manifest_free(old);
        bundle_manifest_free(m);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_services_by_share),
                cmocka_unit_test(test_process_cgroup),
                cmocka_unit_test(test_process_cgroup_own_change),
                cmocka_unit_test(test_process_cgroup_unlisted_near),
                cmocka_unit_test(test_process_cgroup_near_without_baseline),
                cmocka_unit_test(test_process_cgroup_merged_key),
                cmocka_unit_test(test_thread_groups),
                cmocka_unit_test(test_thread_groups_long_list),
                cmocka_unit_test(test_thread_groups_full_list),
                cmocka_unit_test(test_renamed_process),
                cmocka_unit_test(test_thread_carrying),
                cmocka_unit_test(test_rises_threads),
                cmocka_unit_test(test_renames_chained),
                cmocka_unit_test(test_filters),
                cmocka_unit_test(test_filters_by_export_names),
                cmocka_unit_test(test_comm_processes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
