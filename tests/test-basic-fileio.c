/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Atomic publication and bounded reads in a temporary directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "tests.h"

static char dir[] = "/tmp/test-fileio-XXXXXX";

static int setup(void **state) {
        return test_dir_make(dir);
}

static int teardown(void **state) {
        return test_dir_remove(dir);
}

static void test_write_atomic_replaces_and_leaves_no_temp(void **state) {
        char path[256];
        _cleanup_free_ char *data = NULL;
        struct stat st;
        size_t n;

        snprintf(path, sizeof path, "%s/position", dir);
        assert_int_equal(write_file_atomic(path, "one\n", 4, 0640), 0);
        assert_int_equal(write_file_atomic(path, "two\n", 4, 0640), 0);
        assert_int_equal(read_full_file(path, 100, &data, &n), 0);
        assert_int_equal(n, 4);
        assert_string_equal(data, "two\n");
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0640);

        _cleanup_closedir_ DIR *d = opendir(dir);
        struct dirent *de;
        int files = 0;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        files++;
        assert_int_equal(files, 1);
}

static void test_read_is_bounded(void **state) {
        char path[256];
        char big[10000];
        char *data = NULL;

        memset(big, 'x', sizeof big);
        snprintf(path, sizeof path, "%s/big", dir);
        assert_int_equal(write_file_atomic(path, big, sizeof big, 0600), 0);
        assert_int_equal(read_full_file(path, 100, &data, NULL), -EFBIG);
        assert_null(data);
}

static void test_mkdir_p(void **state) {
        char path[256];
        struct stat st;

        snprintf(path, sizeof path, "%s/a/b/c", dir);
        assert_int_equal(mkdir_p(path, 0750), 0);
        assert_int_equal(mkdir_p(path, 0750), 0);
        assert_int_equal(stat(path, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
}

static void test_rm_rf_at_stays_inside(void **state) {
        char outside[256], tree[256], path[512];
        struct stat st;
        int fd;

        snprintf(outside, sizeof outside, "%s/outside", dir);
        snprintf(tree, sizeof tree, "%s/tree", dir);
        assert_int_equal(mkdir_p(outside, 0755), 0);
        snprintf(path, sizeof path, "%s/keep", outside);
        assert_int_equal(write_file_atomic(path, "x", 1, 0644), 0);
        snprintf(path, sizeof path, "%s/windows", tree);
        assert_int_equal(mkdir_p(path, 0755), 0);
        snprintf(path, sizeof path, "%s/windows/w.tpw", tree);
        assert_int_equal(write_file_atomic(path, "x", 1, 0644), 0);
        /* A link to a directory outside: removed as a link, never followed. */
        snprintf(path, sizeof path, "%s/escape", tree);
        assert_int_equal(symlink(outside, path), 0);

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(rm_rf_at(fd, "tree", 4), 0);
        assert_int_not_equal(lstat(tree, &st), 0);
        snprintf(path, sizeof path, "%s/keep", outside);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(rm_rf_at(fd, "tree", 4), 0); /* already gone: nothing to do */

        /* Deeper than allowed: refused, and what lies below the limit stays. */
        snprintf(path, sizeof path, "%s/deep/a/b/c", dir);
        assert_int_equal(mkdir_p(path, 0755), 0);
        assert_int_equal(rm_rf_at(fd, "deep", 2), -ELOOP);
        snprintf(path, sizeof path, "%s/deep/a/b", dir);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(rm_rf_at(fd, "deep", 8), 0);
        close(fd);
}

/* A copy of this process's own vDSO, read through /proc: the same bytes; past its end, refused. */
static void test_process_memory_copy(void **state) {
        const void *start;
        void *copy = NULL;
        size_t size;

        if (self_vdso_range(1024 * 1024, &start, &size) < 0)
                skip();
        assert_int_equal(process_memory_copy("/proc", (uint32_t) getpid(), (uintptr_t) start, size, &copy), 0);
        assert_memory_equal(copy, start, size);
        free(copy);
        copy = NULL;
        assert_int_equal(process_memory_copy("/proc", (uint32_t) getpid(), 0, 4096, &copy), -EIO); /* unmapped */
        assert_null(copy);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_write_atomic_replaces_and_leaves_no_temp),
                cmocka_unit_test(test_read_is_bounded),
                cmocka_unit_test(test_mkdir_p),
                cmocka_unit_test(test_rm_rf_at_stays_inside),
                cmocka_unit_test(test_process_memory_copy),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
