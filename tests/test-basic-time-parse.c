/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * time-parse: every accepted form against a fixed "now", in UTC and in a zone with an offset and
 * DST, and the inputs that must be refused.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests.h"

#include "basic/time-parse.h"
#include "basic/time-util.h"

/* 2026-11-21T14:30:00.123456Z */
#define NOW UINT64_C(1795271400123456)
#define T0 UINT64_C(1795271400000000) /* 14:30:00 UTC */
#define MIDNIGHT UINT64_C(1795219200000000) /* 2026-11-21T00:00:00Z */

static void check(const char *s, uint64_t want) {
        uint64_t got = 0;
        int r = parse_timestamp(s, NOW, &got);
        if (r != 0 || got != want)
                fail_msg("'%s': r=%d got %llu want %llu", s, r, (unsigned long long) got, (unsigned long long) want);
}

static void test_utc_zone(void **state) {
        setenv("TZ", "UTC", 1);
        tzset();
        check("now", NOW);
        check("  now  ", NOW);
        check("today", MIDNIGHT);
        check("yesterday", MIDNIGHT - USEC_PER_DAY);
        check("tomorrow", MIDNIGHT + USEC_PER_DAY);
        check("-1h", NOW - USEC_PER_HOUR);
        check("+5m", NOW + 5 * USEC_PER_MINUTE);
        check("-2d3h", NOW - 2 * USEC_PER_DAY - 3 * USEC_PER_HOUR);
        check("-90s", NOW - 90 * USEC_PER_SEC);
        check("-1h30m", NOW - 90 * USEC_PER_MINUTE);
        check("2026-11-21", MIDNIGHT);
        check("2026-11-21 14:30", T0);
        check("2026-11-21 14:30:00", T0);
        check("2026-11-21T14:30:00", T0);
        check("2026-11-21T14:30:00Z", T0);
        check("2026-11-21 14:30:00 UTC", T0);
        check("2026-11-21T14:30:00.5+01:00", T0 - USEC_PER_HOUR + 500000);
        check("2026-11-21T14:30:00.123456-0530", T0 + 5 * USEC_PER_HOUR + 30 * USEC_PER_MINUTE + 123456);
        check("2026-11-21T14:30:00.1234567Z", T0 + 123456);
        check("@1795271400", T0);
        check("@1795271400.5", T0 + 500000);
        check("@0", 0);
}

static void test_local_zone(void **state) {
        /* Berlin: UTC+1 in November, UTC+2 in July. */
        setenv("TZ", "Europe/Berlin", 1);
        tzset();
        check("2026-11-21 14:30", T0 - USEC_PER_HOUR);
        check("2026-11-21T14:30:00Z", T0);
        check("today", MIDNIGHT - USEC_PER_HOUR);
        check("2026-07-01 12:00:00", UINT64_C(1782900000) * USEC_PER_SEC);
        setenv("TZ", "UTC", 1);
        tzset();
}

static void test_invalid(void **state) {
        static const char *const bad[] = {
                "", " ", "banana", "2026-11-21 14", "2026-11-21 14:30:", "2026-13-01", "2026-02-30",
                "2026-11-21 25:00", "2026-11-21T14:30:00+25:00", "2026-11-21T14:30:00 +01:00x",
                "2026-11-21T14:30:00.Z", "26-11-21", "@", "@-5", "@12x", "-", "+", "-h", "--1h", "-1x",
                "1969-12-31", "@99999999999999999999",
        };
        uint64_t v;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = parse_timestamp(bad[i], NOW, &v);
                if (r >= 0)
                        fail_msg("'%s' was accepted as %llu", bad[i], (unsigned long long) v);
        }
        assert_int_equal(parse_timestamp(NULL, NOW, &v), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_utc_zone),
                cmocka_unit_test(test_local_zone),
                cmocka_unit_test(test_invalid),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
