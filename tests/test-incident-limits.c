/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bundle retention: beyond max_bundles the oldest bundles go, by name (their UTC second first),
 * and the bundle just published stays, though bundles of the same second sort by rule and short id.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/string-util.h"
#include "incident/incident-limits.h"
#include "tests.h"

static char dir[] = "/tmp/test-incident-limits-XXXXXX";

static int setup(void **state) {
        return test_dir_make(dir);
}

static int teardown(void **state) {
        return test_dir_remove(dir);
}

static int open_fresh(const char *const *names, size_t n) {
        int fd;

        (void) rm_rf_at(AT_FDCWD, dir, 4);
        assert_int_equal(mkdir(dir, 0750), 0);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        for (size_t i = 0; i < n; i++) {
                char path[256];
                assert_int_equal(mkdirat(fd, names[i], 0750), 0);
                snprintf(path, sizeof path, "%s/manifest.json", names[i]);
                int f = openat(fd, path, O_WRONLY | O_CREAT | O_CLOEXEC, 0640);
                assert_true(f >= 0);
                assert_int_equal(write(f, "{}\n", 3), 3);
                assert_int_equal(fsync(f), 0);
                close(f);
        }
        return fd;
}

static bool present(int fd, const char *name) {
        struct stat st;
        return fstatat(fd, name, &st, 0) == 0;
}

static void test_oldest_go_first(void **state) {
        const char *names[] = { "20261127T003557Z-manual-ffff0000", "20261127T003558Z-manual-00000001",
                                "20261127T003559Z-manual-00000002" };
        IncidentLimits lim = { .max_bundles = 2, .max_bundle_bytes = UINT64_MAX };
        int fd = open_fresh(names, 3);

        incident_limits_enforce(fd, &lim, names[2], NULL, NULL, NULL);
        assert_false(present(fd, names[0]));
        assert_true(present(fd, names[1]));
        assert_true(present(fd, names[2]));
        close(fd);
}

/* Three bundles of one second: the one just published sorts first by its short id, and stays. */
static void test_the_bundle_just_published_stays(void **state) {
        const char *names[] = { "20261127T003559Z-manual-7ad24864", "20261127T003559Z-manual-b03dc24f",
                                "20261127T003559Z-manual-b459ed55" };
        IncidentLimits lim = { .max_bundles = 2, .max_bundle_bytes = UINT64_MAX };
        int fd = open_fresh(names, 3);

        incident_limits_enforce(fd, &lim, names[0], NULL, NULL, NULL);
        assert_true(present(fd, names[0]));
        assert_int_equal(present(fd, names[1]) + present(fd, names[2]), 1);
        close(fd);

        /* Over the size limit alone it stays too, the only one left. */
        lim = (IncidentLimits) { .max_bundles = 100, .max_bundle_bytes = 0 };
        fd = open_fresh(names, 3);
        incident_limits_enforce(fd, &lim, names[0], NULL, NULL, NULL);
        assert_true(present(fd, names[0]));
        assert_false(present(fd, names[1]));
        assert_false(present(fd, names[2]));
        close(fd);

        /* Without a bundle to keep, the last by name stays. */
        fd = open_fresh(names, 3);
        incident_limits_enforce(fd, &lim, NULL, NULL, NULL, NULL);
        assert_false(present(fd, names[0]));
        assert_false(present(fd, names[1]));
        assert_true(present(fd, names[2]));
        close(fd);
}

static bool held_first(const char *name, void *userdata) {
        return streq(name, userdata);
}

/* A bundle whose hook has not run yet is passed over: the next oldest goes instead. */
static void test_held_bundles_stay(void **state) {
        const char *names[] = { "20261127T003557Z-manual-ffff0000", "20261127T003558Z-manual-00000001",
                                "20261127T003559Z-manual-00000002" };
        IncidentLimits lim = { .max_bundles = 2, .max_bundle_bytes = UINT64_MAX };
        int fd = open_fresh(names, 3);

        incident_limits_enforce(fd, &lim, names[2], held_first, NULL, (void *) names[0]);
        assert_true(present(fd, names[0]));
        assert_false(present(fd, names[1]));
        assert_true(present(fd, names[2]));
        close(fd);

        /* Everything else held: over the limit until a later call. */
        lim.max_bundles = 1;
        fd = open_fresh(names, 3);
        incident_limits_enforce(fd, &lim, names[2], held_first, NULL, (void *) names[0]);
        assert_true(present(fd, names[0]));
        assert_false(present(fd, names[1]));
        assert_true(present(fd, names[2]));
        close(fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_oldest_go_first),
                cmocka_unit_test(test_the_bundle_just_published_stays),
                cmocka_unit_test(test_held_bundles_stay),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
