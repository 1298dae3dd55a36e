/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The manifest's "cgroups" comms: beside the processes with the most slice samples in a cgroup,
 * those with the most in the event's own seconds and in the rest of the bundle, so that show can
 * say where a burst at the event or a process that stopped at it ran, in a cgroup where other
 * processes had more of the slice; each listed once, most slice samples first.
 */
#include <string.h>

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

static JsonValue *listing(const IncidentCgroups *c) {
        JsonWriter w;

        json_writer_init(&w, false);
        json_begin_object(&w);
        incident_cgroups_json(c, "/nonexistent", &w);
        json_end_object(&w);
        return test_json_finish_parse(&w);
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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_comms_burst_and_fall),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
