/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict number and size parsing.
 */
#include <errno.h>

#include "basic/macro.h"
#include "basic/parse-util.h"
#include "tests.h"

static void test_safe_atou32_rejects_garbage(void **state) {
        uint32_t u;

        assert_int_equal(safe_atou32("97", &u), 0);
        assert_int_equal(u, 97);
        assert_int_equal(safe_atou32("", &u), -EINVAL);
        assert_int_equal(safe_atou32("-1", &u), -EINVAL);
        assert_int_equal(safe_atou32(" 1", &u), -EINVAL);
        assert_int_equal(safe_atou32("1x", &u), -EINVAL);
        assert_int_equal(safe_atou32("4294967296", &u), -ERANGE);
}

static void test_safe_atoi(void **state) {
        int i;

        assert_int_equal(safe_atoi("-12", &i), 0);
        assert_int_equal(i, -12);
        assert_int_equal(safe_atoi("2147483648", &i), -ERANGE);
        assert_int_equal(safe_atoi("--1", &i), -EINVAL);
}

static void test_parse_size_table(void **state) {
        static const struct {
                const char *in;
                int ret;
                uint64_t bytes;
        } cases[] = {
                { "0", 0, 0 },
                { "4096", 0, 4096 },
                { "64K", 0, 64 << 10 },
                { "10M", 0, 10 << 20 },
                { "10MiB", 0, 10 << 20 },
                { "2G", 0, UINT64_C(2) << 30 },
                { "1T", 0, UINT64_C(1) << 40 },
                { "1X", -EINVAL, 0 },
                { "M", -EINVAL, 0 },
                { "99999999999T", -ERANGE, 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t b = 0;
                int r = parse_size(cases[i].in, &b);
                if (r != cases[i].ret)
                        fail_msg("parse_size(\"%s\") = %d, expected %d", cases[i].in, r, cases[i].ret);
                if (r == 0)
                        assert_int_equal(b, cases[i].bytes);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_safe_atou32_rejects_garbage),
                cmocka_unit_test(test_safe_atoi),
                cmocka_unit_test(test_parse_size_table),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
