/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bundle retention: beyond max_bundles the oldest bundles go, by their UTC second (the name's
 * start) and within a second by when their folder was made; the bundle just published stays.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* Three bundles of one second: the one just published stays though the others are newer by name. */
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

        /* Without a bundle to keep, the newest stays. */
        fd = open_fresh(names, 3);
        incident_limits_enforce(fd, &lim, NULL, NULL, NULL, NULL);
        assert_false(present(fd, names[0]));
        assert_false(present(fd, names[1]));
        assert_true(present(fd, names[2]));
        close(fd);
}

static bool made_after(int fd, const char *name, const struct statx_timestamp *t) {
        struct statx stx;

        assert_int_equal(statx(fd, name, 0, STATX_BTIME, &stx), 0);
        if (!(stx.stx_mask & STATX_BTIME))
                return false;
        return stx.stx_btime.tv_sec > t->tv_sec || (stx.stx_btime.tv_sec == t->tv_sec && stx.stx_btime.tv_nsec > t->tv_nsec);
}

/* Within one second the folder made first is the oldest, whatever the rule and short id; an
 * earlier second is older whatever its folder's time. */
static void test_same_second_by_creation(void **state) {
        /* made in this order: */
        const char *names[] = { "20261127T003559Z-manual-ffff0000", "20261127T003559Z-oom-kill-12345678",
                                "20261127T003559Z-manual-00000001", "20261127T003558Z-hung-task-0000aaaa" };
        IncidentLimits lim = { .max_bundles = 3, .max_bundle_bytes = UINT64_MAX };
        struct statx prev;
        int fd = open_fresh(names, 1);

        for (size_t i = 1; i < ELEMENTSOF(names); i++) {
                assert_int_equal(statx(fd, names[i - 1], 0, STATX_BTIME, &prev), 0);
                if (!(prev.stx_mask & STATX_BTIME)) {
                        close(fd);
                        skip(); /* the file system keeps no birth times: names alone order them */
                }
                for (unsigned tries = 0;; tries++) { /* the file system's clock moves in ticks */
                        assert_true(tries < 1000);
                        assert_int_equal(usleep(2000), 0);
                        assert_int_equal(mkdirat(fd, names[i], 0750), 0);
                        if (made_after(fd, names[i], &prev.stx_btime))
                                break;
                        assert_int_equal(unlinkat(fd, names[i], AT_REMOVEDIR), 0);
                }
        }
        incident_limits_enforce(fd, &lim, NULL, NULL, NULL, NULL);
        assert_false(present(fd, names[3]));
        assert_true(present(fd, names[0]) && present(fd, names[1]) && present(fd, names[2]));

        lim.max_bundles = 1;
        incident_limits_enforce(fd, &lim, NULL, NULL, NULL, NULL);
        assert_false(present(fd, names[0]));
        assert_false(present(fd, names[1]));
        assert_true(present(fd, names[2])); /* the newest stays */
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
                cmocka_unit_test(test_same_second_by_creation),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
