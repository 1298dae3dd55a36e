/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Position files of the log sources: round trips, atomic replacement, and malformed files reported
 * as such (the sources then start as on a first start) rather than misread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "logsrc/logsrc-position.h"
#include "tests.h"

static char dir[] = "/tmp/test-logsrc-position-XXXXXX";

static int setup(void **state) {
        return test_dir_make(dir);
}

static int teardown(void **state) {
        return test_dir_remove(dir);
}

static void test_state_path_creates_directory(void **state) {
        _cleanup_free_ char *path = NULL;
        struct stat st;
        char sub[256];

        assert_int_equal(logsrc_state_path(dir, KMSG_POSITION_FILE, &path), 0);
        snprintf(sub, sizeof sub, "%s/state", dir);
        assert_int_equal(stat(sub, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(st.st_mode & 0777, 0750);
        snprintf(sub, sizeof sub, "%s/state/kmsg-position", dir);
        assert_string_equal(path, sub);
}

static void test_kmsg_position_round_trip(void **state) {
        _cleanup_free_ char *path = NULL;
        KmsgPosition p = {.boot_id = "81abae89-9221-41ae-a761-601bd7ad8034", .seq = UINT64_MAX}, q;

        assert_int_equal(logsrc_state_path(dir, KMSG_POSITION_FILE, &path), 0);
        (void) unlink(path);
        assert_int_equal(kmsg_position_load(path, &q), -ENOENT);
        assert_int_equal(kmsg_position_save(path, &p), 0);
        assert_int_equal(kmsg_position_load(path, &q), 0);
        assert_string_equal(q.boot_id, p.boot_id);
        assert_true(q.seq == UINT64_MAX);

        p.seq = 42;
        assert_int_equal(kmsg_position_save(path, &p), 0);
        assert_int_equal(kmsg_position_load(path, &q), 0);
        assert_true(q.seq == 42);

        strcpy(p.boot_id, "not-a-boot-id");
        assert_int_equal(kmsg_position_save(path, &p), -EINVAL);
}

static void test_kmsg_position_rejects_malformed(void **state) {
        static const char *const bad[] = {
                "",
                "boot_id=81abae89-9221-41ae-a761-601bd7ad8034\n",
                "seq=5\n",
                "boot_id=81abae89-9221-41ae-a761-601bd7ad8034\nseq=\n",
                "boot_id=81abae89-9221-41ae-a761-601bd7ad8034\nseq=-1\n",
                "boot_id=81abae89-9221-41ae-a761-601bd7ad8034\nseq=18446744073709551616\n",
                "boot_id=81ABAE89-9221-41ae-a761-601bd7ad8034\nseq=5\n",
                "boot_id=81abae89-9221-41ae-a761-601bd7ad803\nseq=5\n",
                "boot_id=81abae89-9221-41ae-a761-601bd7ad8034\nseq=5\nseq=6\n",
                "boot_id=81abae89-9221-41ae-a761-601bd7ad8034\nseq=5\nextra=1\n",
        };
        _cleanup_free_ char *path = NULL;
        KmsgPosition q;

        assert_int_equal(logsrc_state_path(dir, "bad-position", &path), 0);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                assert_int_equal(write_file_atomic(path, bad[i], strlen(bad[i]), 0600), 0);
                if (kmsg_position_load(path, &q) != -EBADMSG)
                        fail_msg("case #%zu accepted", i);
        }
}

static void test_journal_cursor_round_trip(void **state) {
        static const char cursor[] =
                "s=3e2c19f8b39742f591382c636d055b42;i=5;b=81abae89922141aea761601bd7ad8034;m=28446952;"
                "t=660cc945c08b4;x=f6b262848e4a9168";
        _cleanup_free_ char *path = NULL, *c = NULL, *c2 = NULL;

        assert_int_equal(logsrc_state_path(dir, JOURNAL_CURSOR_FILE, &path), 0);
        assert_int_equal(journal_cursor_load(path, &c), -ENOENT);
        assert_int_equal(journal_cursor_save(path, cursor), 0);
        assert_int_equal(journal_cursor_load(path, &c), 0);
        assert_string_equal(c, cursor);

        assert_int_equal(journal_cursor_save(path, ""), -EINVAL);
        assert_int_equal(journal_cursor_save(path, "with space"), -EINVAL);
        assert_int_equal(write_file_atomic(path, "a\nb\n", 4, 0600), 0);
        assert_int_equal(journal_cursor_load(path, &c2), -EBADMSG);
        assert_int_equal(write_file_atomic(path, "\n", 1, 0600), 0);
        assert_int_equal(journal_cursor_load(path, &c2), -EBADMSG);
}

static void test_boot_id_is_read(void **state) {
        char id[BOOT_ID_STRING_MAX];

        if (access("/proc/sys/kernel/random/boot_id", R_OK) < 0)
                skip();
        assert_int_equal(logsrc_read_boot_id(id), 0);
        assert_int_equal(strlen(id), 36);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_state_path_creates_directory),
                cmocka_unit_test(test_kmsg_position_round_trip),
                cmocka_unit_test(test_kmsg_position_rejects_malformed),
                cmocka_unit_test(test_journal_cursor_round_trip),
                cmocka_unit_test(test_boot_id_is_read),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
