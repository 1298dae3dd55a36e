/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * file-failures.c: a failure is the process's alone, kept for a while, and the table stays
 * bounded without marking any file unreadable for everyone.
 */
#include "tests.h"

#include "symbolizer/file-failures.h"

static void test_failures_per_process_for_a_while(void **state) {
        FileFailures f = {};
        const FileFailureKey a = { 1, 2, 3, 100 }, b = { 1, 2, 3, 101 }, c = { 1, 2, 4, 100 };
        uint64_t t = 5 * FILE_FAILURE_RETRY_USEC;

        assert_false(file_failures_recent(&f, &a, t));
        assert_int_equal(file_failures_add(&f, &a, t), 1);
        assert_true(file_failures_recent(&f, &a, t));
        assert_true(file_failures_recent(&f, &a, t + FILE_FAILURE_RETRY_USEC - 1));
        /* another process of the file, and the same pid for another generation of it: asked */
        assert_false(file_failures_recent(&f, &b, t));
        assert_false(file_failures_recent(&f, &c, t));
        /* later, the pid may be another process's: asked again */
        assert_false(file_failures_recent(&f, &a, t + FILE_FAILURE_RETRY_USEC));
        file_failures_done(&f);
}

static void test_failures_bounded(void **state) {
        FileFailures f = {};

        for (uint64_t pid = 0; pid < FILE_FAILURES_MAX; pid++)
                assert_true(file_failures_add(&f, &(FileFailureKey) { 1, 2, 3, pid }, 1000) >= 0);
        assert_int_equal(file_failures_size(&f), FILE_FAILURES_MAX);
        assert_true(file_failures_recent(&f, &(FileFailureKey) { 1, 2, 3, 7 }, 1000));
        /* one more: all forgotten, each costs one more try at the most */
        assert_true(file_failures_add(&f, &(FileFailureKey) { 1, 2, 3, 999999 }, 1000) >= 0);
        assert_int_equal(file_failures_size(&f), 1);
        assert_false(file_failures_recent(&f, &(FileFailureKey) { 1, 2, 3, 7 }, 1000));
        file_failures_done(&f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_failures_per_process_for_a_while),
                cmocka_unit_test(test_failures_bounded),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
