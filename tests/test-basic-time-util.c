/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Durations as rules.yaml and the command lines write them; the once-per-interval check.
 */
#include <errno.h>
#include <unistd.h>

#include "basic/macro.h"
#include "basic/time-util.h"
#include "tests.h"

static void test_parse_duration_table(void **state) {
        static const struct {
                const char *in;
                int ret;
                uint64_t usec;
        } cases[] = {
                { "500ms", 0, 500 * USEC_PER_MSEC },
                { "90s", 0, 90 * USEC_PER_SEC },
                { "5m", 0, 5 * USEC_PER_MINUTE },
                { "1h", 0, USEC_PER_HOUR },
                { "1m30s", 0, 90 * USEC_PER_SEC },
                { "1m 30s", 0, 90 * USEC_PER_SEC },
                { "2", 0, 2 * USEC_PER_SEC },
                { "1.5s", 0, 1500 * USEC_PER_MSEC },
                { "10min", 0, 10 * USEC_PER_MINUTE },
                { "250us", 0, 250 },
                { "2d", 0, 2 * USEC_PER_DAY },
                { "", -EINVAL, 0 },
                { "s", -EINVAL, 0 },
                { "10x", -EINVAL, 0 },
                { "-5s", -EINVAL, 0 },
                { "5s 3", -EINVAL, 0 },
                { "10 minutes", -EINVAL, 0 },
                { "99999999999999999999s", -ERANGE, 0 },
                { "999999999999999d", -ERANGE, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t u = UINT64_C(0xdeadbeef);
                int r = parse_duration(cases[i].in, &u);
                if (r != cases[i].ret)
                        fail_msg("parse_duration(\"%s\") = %d, expected %d", cases[i].in, r, cases[i].ret);
                if (r == 0)
                        assert_int_equal(u, cases[i].usec);
                else
                        assert_int_equal(u, UINT64_C(0xdeadbeef)); /* untouched on failure */
        }
}

static void test_monotonic_interval_passed(void **state) {
        uint64_t last = 0;

        assert_true(monotonic_interval_passed(&last, USEC_PER_HOUR)); /* never before */
        assert_int_not_equal(last, 0);
        uint64_t first = last;
        assert_false(monotonic_interval_passed(&last, USEC_PER_HOUR));
        assert_int_equal(last, first); /* unchanged when it has not passed */
        usleep(2000);
        assert_true(monotonic_interval_passed(&last, 1000));
        assert_true(last > first);
}

static void test_format_timespan(void **state) {
        char buf[FORMAT_TIMESPAN_MAX];

        assert_string_equal(format_timespan(buf, sizeof buf, 90 * USEC_PER_SEC), "1m30s");
        assert_string_equal(format_timespan(buf, sizeof buf, 500 * USEC_PER_MSEC), "500ms");
        assert_string_equal(format_timespan(buf, sizeof buf, 0), "0");
        assert_string_equal(format_timespan(buf, sizeof buf, USEC_INFINITY), "infinity");
}

static void test_format_timestamp_utc(void **state) {
        char buf[FORMAT_TIMESTAMP_MAX];

        /* 2026-11-21T14:30:00Z */
        assert_string_equal(format_timestamp_utc(buf, sizeof buf, UINT64_C(1795271400) * USEC_PER_SEC + 42),
                            "2026-11-21T14:30:00.000042Z");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_duration_table),
                cmocka_unit_test(test_monotonic_interval_passed),
                cmocka_unit_test(test_format_timespan),
                cmocka_unit_test(test_format_timestamp_utc),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
