/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conversions through a ClockMap round-trip and saturate instead of wrapping.
 */
#include <time.h>

#include "basic/clock-map.h"
#include "basic/time-util.h"
#include "tests.h"

static void test_round_trip(void **state) {
        ClockMap m = {
                .method = CLOCK_MAP_PERF_BRACKET,
                .perf_minus_mono_ns = -1500,
                .realtime_minus_mono_ns = INT64_C(1795271400) * (int64_t) NSEC_PER_SEC,
        };
        uint64_t perf = UINT64_C(123456789000);

        assert_int_equal(clock_map_perf_to_mono(&m, perf), perf + 1500);
        assert_int_equal(clock_map_mono_to_perf(&m, clock_map_perf_to_mono(&m, perf)), perf);
        assert_int_equal(clock_map_realtime_to_perf(&m, clock_map_perf_to_realtime(&m, perf)), perf);
        assert_int_equal(clock_map_perf_to_realtime(&m, perf), perf + 1500 + UINT64_C(1795271400) * NSEC_PER_SEC);
}

static void test_saturates_at_zero(void **state) {
        ClockMap m = { .perf_minus_mono_ns = 1000 };

        assert_int_equal(clock_map_perf_to_mono(&m, 10), 0);
}

/* Offsets and times from files may be anything: sums past INT64_MAX are fine, the extremes saturate. */
static void test_saturates_at_the_extremes(void **state) {
        ClockMap m = { .perf_minus_mono_ns = INT64_MIN, .realtime_minus_mono_ns = INT64_MAX };

        assert_int_equal(clock_map_perf_to_mono(&m, UINT64_MAX - 5), UINT64_MAX);
        assert_int_equal(clock_map_mono_to_perf(&m, UINT64_C(1) << 62), 0);
        assert_int_equal(clock_map_perf_to_realtime(&m, 0), UINT64_MAX);
        assert_int_equal(clock_map_realtime_to_perf(&m, UINT64_MAX), 0);
        m.realtime_minus_mono_ns = INT64_MIN;
        assert_int_equal(clock_map_realtime_to_perf(&m, UINT64_MAX), (uint64_t) INT64_MAX);
        m = (ClockMap) { .realtime_minus_mono_ns = 1795280963346275057 };
        assert_int_equal(clock_map_perf_to_realtime(&m, UINT64_C(8888888885000100000)),
                         UINT64_C(10684169848346375057));
}

static void test_assume_is_sane(void **state) {
        ClockMap m;

        clock_map_assume(&m);
        assert_int_equal(m.method, CLOCK_MAP_ASSUMED);
        uint64_t real = now_nsec(CLOCK_REALTIME), mono = now_nsec(CLOCK_MONOTONIC);
        int64_t d = (int64_t) (real - mono) - m.realtime_minus_mono_ns;
        assert_true(d > -(int64_t) NSEC_PER_SEC && d < (int64_t) NSEC_PER_SEC);
        assert_string_equal(clock_map_method_to_string(CLOCK_MAP_PERF_BRACKET), "perf-bracket");
        assert_int_equal(clock_map_method_from_string("perf-bracket"), CLOCK_MAP_PERF_BRACKET);
        assert_true(clock_map_method_from_string("nope") < 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_saturates_at_zero),
                cmocka_unit_test(test_saturates_at_the_extremes),
                cmocka_unit_test(test_assume_is_sane),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
