/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bundle-activity: activity.tsv read with bounds, and the CPUs that delivered under half the
 * samples their rate asks for.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

#include "bundle/bundle-activity.h"

/* Loads text as an activity.tsv into a. */
static void load_text(const char *text, unsigned n_seconds_hint, Activity *a) {
        char path[] = "/tmp/test-bundle-activity-XXXXXX";
        int fd = mkstemp(path);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        assert_int_equal(activity_load(path, n_seconds_hint, a), 0);
        unlink(path);
}

static void test_activity(void **state) {
        _cleanup_(activity_donep) Activity a = {};

        load_text("# offset_s\tcpu\tsamples\tbusy\n0\t0\t97\t12\n0\t1\t97\t95\n2\t1\t97\t97\n"
                  "bogus\n3\t1\t5\t6\n", 5, &a);
        assert_int_equal(a.n_cpus, 2);
        assert_int_equal(a.n_seconds, 5);
        assert_int_equal(a.n_skipped, 2); /* "bogus" and busy > samples */
        assert_int_equal(a.busy[0 * 5 + 0], 12);
        assert_int_equal(a.busy[1 * 5 + 2], 97);
        assert_int_equal(a.samples[1 * 5 + 1], 0);
}

/* A cell's rows are summed: a damaged file's repeated rows must not wrap its samples below its busy
 * samples (show draws busy / samples as one of nine levels, an index). */
static void test_activity_repeated_rows(void **state) {
        _cleanup_(activity_donep) Activity a = {};

        load_text("0\t0\t4294967295\t0\n0\t0\t1\t1\n0\t0\t2\t2\n1\t0\t4294967295\t4294967295\n"
                  "1\t0\t4294967295\t4294967295\n", 0, &a);
        assert_int_equal(a.n_cpus, 1);
        assert_int_equal(a.n_seconds, 2);
        for (unsigned sec = 0; sec < a.n_seconds; sec++)
                assert_true(a.busy[sec] <= a.samples[sec]);
        assert_int_equal(a.samples[0], UINT32_MAX);
        assert_int_equal(a.busy[1], UINT32_MAX);
}

/* CPUs that delivered under half their samples: over whole seconds only, fewest first, never a
 * CPU with none at all (offline), and not over too few seconds. */
static void test_activity_shortfalls(void **state) {
        enum { CPUS = 5, SECS = 10 };
        uint32_t samples[CPUS * SECS], busy[CPUS * SECS] = {};
        Activity a = { .n_cpus = CPUS, .n_seconds = SECS, .samples = samples, .busy = busy };
        /* per second: a full CPU, one at 40%, none (offline), one at 10%, one at exactly half */
        static const uint32_t rate[CPUS] = { 100, 40, 0, 10, 50 };
        CpuShortfall f[4];

        for (unsigned cpu = 0; cpu < CPUS; cpu++)
                for (unsigned sec = 0; sec < SECS; sec++)
                        samples[cpu * SECS + sec] = rate[cpu];
        /* the partial first second would make CPU 0 look short if it counted */
        samples[0] = 1;
        assert_int_equal(activity_shortfalls(&a, 100, 1, SECS, f, 4), 2);
        assert_int_equal(f[0].cpu, 3);
        assert_int_equal(f[0].samples, 90);
        assert_int_equal(f[0].expected, 900);
        assert_int_equal(f[1].cpu, 1);
        /* at most max_n, the fewest delivered kept */
        assert_int_equal(activity_shortfalls(&a, 100, 1, SECS, f, 1), 1);
        assert_int_equal(f[0].cpu, 3);
        /* too few seconds, no rate, an empty range */
        assert_int_equal(activity_shortfalls(&a, 100, 1, 1 + SHORTFALL_SECONDS_MIN - 1, f, 4), 0);
        assert_int_equal(activity_shortfalls(&a, 0, 1, SECS, f, 4), 0);
        assert_int_equal(activity_shortfalls(&a, 100, 7, 3, f, 4), 0);
        /* a range past the grid is cut to it */
        assert_int_equal(activity_shortfalls(&a, 100, 1, 1000, f, 4), 2);
        /* a rate no daemon samples at (a damaged manifest) judges nothing */
        assert_int_equal(activity_shortfalls(&a, SHORTFALL_FREQ_MAX + 1, 1, SECS, f, 4), 0);

        /* A CPU whose idle task is never sampled (its clock does not fire in idle): its missing
         * samples are idle time, not lost time. */
        for (unsigned sec = 0; sec < SECS; sec++)
                busy[3 * SECS + sec] = samples[3 * SECS + sec];
        assert_int_equal(activity_shortfalls(&a, 100, 1, SECS, f, 4), 1);
        assert_int_equal(f[0].cpu, 1);
        for (unsigned sec = 0; sec < SECS; sec++)
                busy[3 * SECS + sec] = 0;

        /* Seconds no CPU has samples in (the daemon was not running) are not judged: four of nine
         * seconds left are too few (counted, the full CPU 0 would have delivered 400 of 900). */
        uint32_t saved[CPUS * SECS];
        memcpy(saved, samples, sizeof saved);
        for (unsigned sec = 2; sec < 7; sec++)
                for (unsigned cpu = 0; cpu < CPUS; cpu++)
                        samples[cpu * SECS + sec] = 0;
        assert_int_equal(activity_shortfalls(&a, 100, 1, SECS, f, 4), 0);
        memcpy(samples, saved, sizeof saved);

        /* A CPU brought online at second 4 is judged from then: full from then on, not short. */
        for (unsigned sec = 0; sec < 4; sec++)
                samples[0 * SECS + sec] = 0;
        for (unsigned sec = 4; sec < SECS; sec++)
                samples[0 * SECS + sec] = 100;
        assert_int_equal(activity_shortfalls(&a, 100, 1, SECS, f, 4), 2);
        assert_true(f[0].cpu != 0 && f[1].cpu != 0);

        /* Rows the reader dropped would read as missing samples: nothing is judged. */
        a.n_skipped = 1;
        assert_int_equal(activity_shortfalls(&a, 100, 1, SECS, f, 4), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_activity),
                cmocka_unit_test(test_activity_repeated_rows),
                cmocka_unit_test(test_activity_shortfalls),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
