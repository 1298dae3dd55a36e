/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bundle-read: the manifest of docs/bundle-format.md parsed into its fields, missing fields left
 * unset, newer formats refused; a state directory with complete, pending, crashed and corrupt
 * bundles listed in time order; FIELD=VALUE filters; id and prefix resolution with ambiguity.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests.h"

#include "basic/fileio.h"
#include "bundle/bundle-read.h"

static const char manifest_text[] =
        "{\n"
        "  \"format\": 1,\n"
        "  \"id\": \"20261121T143000Z-ena-reset-3fa9c2d1\",\n"
        "  \"short_id\": \"3fa9c2d1\",\n"
        "  \"status\": \"complete\",\n"
        "  \"host\": \"ip-10-0-0-1\",\n"
        "  \"kernel_release\": \"6.1.0-27-cloud-amd64\",\n"
        "  \"rule\": { \"name\": \"ena-reset\", \"description\": \"AWS ENA driver reset\",\n"
        "            \"before_usec\": 90000000, \"after_usec\": 15000000 },\n"
        "  \"event\": { \"t_perf_ns\": 81234567891000, \"t_realtime_usec\": 1795271400123456,\n"
        "             \"source\": \"kmsg\", \"priority\": 3, \"unit\": null,\n"
        "             \"message\": \"ena 0000:00:05.0 eth0: Trigger reset is on\",\n"
        "             \"captures\": { \"cpu\": \"3\" },\n"
        "             \"alignment\": { \"method\": \"kmsg-timestamp\", \"error_ns\": 4200 } },\n"
        "  \"repeats\": 2,\n"
        "  \"unknown_future_field\": [1, {\"x\": true}],\n"
        "  \"profile\": { \"event\": \"cpu-clock\", \"freq_hz\": 97, \"n_cpus\": 2 },\n"
        "  \"slice\": { \"from_perf_ns\": 81144567891000, \"to_perf_ns\": 81249567891000,\n"
        "             \"samples\": 20370, \"lost\": 5 },\n"
        "  \"baseline\": { \"samples\": 77600 },\n"
        "  \"windows\": [ \"a.tpw\", \"b.tpw\" ]\n"
        "}\n";

static void test_manifest_fields(void **state) {
        _cleanup_(bundle_manifest_freep) BundleManifest *m = NULL;
        unsigned cpu;

        assert_int_equal(bundle_manifest_parse(manifest_text, strlen(manifest_text), &m, NULL), 0);
        assert_string_equal(m->id, "20261121T143000Z-ena-reset-3fa9c2d1");
        assert_string_equal(m->rule_name, "ena-reset");
        assert_int_equal(m->rule_before_usec, 90000000);
        assert_true(m->has_event_perf_ns);
        assert_int_equal(m->event_t_perf_ns, UINT64_C(81234567891000));
        assert_int_equal(m->event_realtime_usec, UINT64_C(1795271400123456));
        assert_int_equal(m->event_priority, 3);
        assert_null(m->event_unit);
        assert_string_equal(m->alignment_method, "kmsg-timestamp");
        assert_int_equal(m->alignment_error_ns, 4200);
        assert_int_equal(m->repeats, 2);
        assert_true(m->has_slice);
        assert_int_equal(m->slice_samples, 20370);
        assert_int_equal(m->slice_lost, 5);
        assert_int_equal(m->baseline_samples, 77600);
        assert_int_equal(m->n_windows, 2);
        assert_true(bundle_manifest_capture_cpu(m, &cpu));
        assert_int_equal(cpu, 3);
}

static void test_manifest_bad(void **state) {
        static const struct {
                const char *text;
                int error;
        } cases[] = {
                { "{\"format\": 2}", -EPROTO },
                { "[1]", -EUCLEAN },
                /* damaged: a count that is text, a list that is not one */
                { "{\"slice\": {\"samples\": \"lots\"}}", -EUCLEAN },
                { "{\"windows\": {}}", -EUCLEAN },
                { "{\"rule\": {\"name\": 7}}", -EUCLEAN },
                { "{\"id\": ", -EBADMSG },
                { "", -EBADMSG },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                BundleManifest *m = NULL;
                size_t off;
                assert_int_equal(bundle_manifest_parse(cases[i].text, strlen(cases[i].text), &m, &off),
                                 cases[i].error);
                assert_null(m);
        }

        /* Everything optional: an empty object is a manifest with nothing known. */
        _cleanup_(bundle_manifest_freep) BundleManifest *m = NULL;
        unsigned cpu;
        assert_int_equal(bundle_manifest_parse("{}", 2, &m, NULL), 0);
        assert_null(m->id);
        assert_false(m->has_slice);
        assert_int_equal(m->repeats, 1);
        assert_int_equal(m->event_priority, -1);
        assert_false(bundle_manifest_capture_cpu(m, &cpu));
}

static void make_bundle(const char *state, const char *dir, const char *file, const char *content) {
        char path[512];
        snprintf(path, sizeof path, "%s/incidents/%s", state, dir);
        assert_int_equal(mkdir_p(path, 0755), 0);
        if (!file)
                return;
        snprintf(path, sizeof path, "%s/incidents/%s/%s", state, dir, file);
        assert_int_equal(write_file_atomic(path, content, strlen(content), 0644), 0);
}

static char *manifest_for(const char *id, const char *rule, uint64_t t, const char *status) {
        char *s;
        assert_true(asprintf(&s,
                             "{\"id\":\"%s\",\"status\":\"%s\",\"rule\":{\"name\":\"%s\"},"
                             "\"event\":{\"t_realtime_usec\":%llu,\"priority\":3,\"captures\":{\"cpu\":\"%d\"}}}",
                             id, status, rule, (unsigned long long) t, (int) (t % 4)) > 0);
        return s;
}

static void test_list_and_resolve(void **state) {
        char state_dir[] = "/tmp/test-bundle-read-XXXXXX";
        _cleanup_(bundle_list_donep) BundleList l = BUNDLE_LIST_NULL;
        _cleanup_free_ size_t *cand = NULL;
        size_t n_cand = 0;
        _cleanup_free_ char *m1 = NULL, *m2 = NULL, *m3 = NULL, *m4 = NULL;
        int r;

        assert_non_null(mkdtemp(state_dir));
        /* No incidents directory yet: an empty list, not an error. */
        assert_int_equal(bundle_list_load(state_dir, &l), 0);
        assert_int_equal(l.n, 0);

        m1 = manifest_for("20261121T143000Z-ena-reset-3fa9c2d1", "ena-reset", UINT64_C(1795271400000000), "complete");
        m2 = manifest_for("20261121T120000Z-oom-3fb00000", "oom", UINT64_C(1795262400000000), "partial");
        m3 = manifest_for("20261121T150000Z-oom-77aa0001", "oom", UINT64_C(1795273200000001), "complete");
        m4 = manifest_for("20261121T160000Z-hung-0000beef", "hung", UINT64_C(1795276800000000), "complete");
        make_bundle(state_dir, "20261121T143000Z-ena-reset-3fa9c2d1", "manifest.json", m1);
        make_bundle(state_dir, "20261121T120000Z-oom-3fb00000", "manifest.json", m2);
        make_bundle(state_dir, ".tmp-20261121T150000Z-oom-77aa0001", "pending", m3);
        make_bundle(state_dir, ".tmp-20261121T155000Z-crash-12345678", NULL, NULL); /* crashed: skipped */
        make_bundle(state_dir, "20261121T160000Z-hung-0000beef", "manifest.json", "{ not json");
        make_bundle(state_dir, "20261121T130000Z-gone-deadbeef", NULL, NULL); /* no manifest at all */
        make_bundle(state_dir, ".hidden", NULL, NULL);

        assert_int_equal(bundle_list_load(state_dir, &l), 0);
        assert_int_equal(l.n, 5);
        /* Oldest first: 12:00 oom, 13:00 gone, 14:30 ena, 15:00 pending oom, 16:00 hung. */
        assert_string_equal(l.entries[0].id, "20261121T120000Z-oom-3fb00000");
        assert_int_equal(l.entries[0].state, BUNDLE_ENTRY_PARTIAL);
        assert_string_equal(l.entries[1].id, "20261121T130000Z-gone-deadbeef");
        assert_int_equal(l.entries[1].state, BUNDLE_ENTRY_CORRUPT);
        assert_int_equal(l.entries[1].manifest_error, -ENOENT);
        assert_string_equal(l.entries[1].rule, "gone"); /* from the name */
        assert_string_equal(l.entries[2].short_id, "3fa9c2d1");
        assert_int_equal(l.entries[2].state, BUNDLE_ENTRY_COMPLETE);
        assert_string_equal(l.entries[3].dirname, ".tmp-20261121T150000Z-oom-77aa0001");
        assert_string_equal(l.entries[3].id, "20261121T150000Z-oom-77aa0001");
        assert_int_equal(l.entries[3].state, BUNDLE_ENTRY_PENDING);
        assert_int_equal(l.entries[4].state, BUNDLE_ENTRY_CORRUPT);
        assert_int_equal(l.entries[4].manifest_error, -EBADMSG);
        assert_int_equal(l.entries[4].manifest_error_offset, 2);
        assert_int_equal(l.entries[4].realtime_usec, UINT64_C(1795276800000000)); /* from the name */

        /* Filters. */
        assert_true(bundle_entry_matches(&l.entries[0], "oom"));
        assert_false(bundle_entry_matches(&l.entries[0], "ena-reset"));
        assert_true(bundle_entry_matches(&l.entries[0], "status=partial"));
        assert_true(bundle_entry_matches(&l.entries[2], "cpu=0"));
        assert_false(bundle_entry_matches(&l.entries[2], "cpu=1"));
        assert_true(bundle_entry_matches(&l.entries[2], "priority=3"));
        assert_true(bundle_entry_matches(&l.entries[2], "event.priority=3"));
        assert_true(bundle_entry_matches(&l.entries[2], "rule=ena-reset"));
        assert_true(bundle_entry_matches(&l.entries[4], "status=corrupt"));
        assert_true(bundle_entry_matches(&l.entries[4], "rule=hung"));
        assert_false(bundle_entry_matches(&l.entries[4], "cpu=0"));
        assert_false(bundle_entry_matches(&l.entries[2], "=x"));

        /* Resolution: full id, unique prefix of id or short id, ambiguity, nothing. */
        assert_int_equal(bundle_list_resolve(&l, "20261121T143000Z-ena-reset-3fa9c2d1", NULL, NULL), 2);
        assert_int_equal(bundle_list_resolve(&l, "3fa9", NULL, NULL), 2);
        assert_int_equal(bundle_list_resolve(&l, "20261121T14", NULL, NULL), 2);
        assert_int_equal(bundle_list_resolve(&l, "77aa", NULL, NULL), 3);
        assert_int_equal(bundle_list_resolve(&l, ".tmp-2026", NULL, NULL), 3);
        assert_int_equal(bundle_list_resolve(&l, "nope", NULL, NULL), -ENOENT);
        assert_int_equal(bundle_list_resolve(&l, "", NULL, NULL), -ENOENT);
        r = bundle_list_resolve(&l, "3f", &cand, &n_cand);
        assert_int_equal(r, -ENOTUNIQ);
        assert_int_equal(n_cand, 2);
        assert_int_equal(cand[0], 0);
        assert_int_equal(cand[1], 2);

        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", state_dir);
        assert_int_equal(system(cmd), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_manifest_fields),
                cmocka_unit_test(test_manifest_bad),
                cmocka_unit_test(test_list_and_resolve),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
