/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A planted tree looked up within its root: links absolute and relative, ".." at and below the
 * top, loops, a file where a directory should be. Each lookup by the walk (kernels before 5.6)
 * must end where the kernel's own openat2(RESOLVE_IN_ROOT) ends, or fail as it fails; where this
 * kernel has openat2(), it is asked too, and the walk must agree with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "basic/open-in-root.h"
#include "tests.h"

static char top[] = "/tmp/test-open-in-root-XXXXXX";
static char root[256];
static int root_fd = -1;

static void make_file(const char *rel, const char *text) {
        char p[PATH_MAX];
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", root, rel);
        f = fopen(p, "we");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

static void make_dir(const char *rel) {
        char p[PATH_MAX];

        snprintf(p, sizeof p, "%s/%s", root, rel);
        assert_int_equal(mkdir(p, 0755), 0);
}

static void make_link(const char *rel, const char *target) {
        char p[PATH_MAX];

        snprintf(p, sizeof p, "%s/%s", root, rel);
        assert_int_equal(symlink(target, p), 0);
}

static int setup(void **state) {
        char p[PATH_MAX];
        FILE *f;

        if (!mkdtemp(top))
                return -1;
        /* Beside the root, a file a planted link would like to reach. */
        snprintf(p, sizeof p, "%s/outside", top);
        f = fopen(p, "we");
        if (!f)
                return -1;
        fclose(f);
        snprintf(root, sizeof root, "%s/root", top);
        if (mkdir(root, 0755) < 0)
                return -1;
        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return root_fd < 0 ? -1 : 0;
}

static int teardown(void **state) {
        char cmd[PATH_MAX + 32];

        close(root_fd);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
        return system(cmd) == 0 ? 0 : -1;
}

/* The inode the lookup of path ends at (its descriptor's), or -errno. */
static long ino_of(int fd) {
        struct stat st;

        if (fd < 0)
                return fd;
        assert_int_equal(fstat(fd, &st), 0);
        close(fd);
        return (long) st.st_ino;
}

static long ino_in_root(const char *rel) {
        char p[PATH_MAX];
        struct stat st;

        snprintf(p, sizeof p, "%s/%s", root, rel);
        assert_int_equal(lstat(p, &st), 0);
        return (long) st.st_ino;
}

static long kernel_lookup(const char *path) {
        struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
        int fd = (int) syscall(SYS_openat2, root_fd, path, &how, sizeof(how));

        return fd < 0 ? -errno : ino_of(fd);
}

/* path must end at the root's rel, or fail with -err (rel NULL). */
static void check(const char *path, const char *rel, int err) {
        long want = rel ? ino_in_root(rel) : -err;
        long walk = ino_of(open_in_root_walk(root_fd, path)), kernel = kernel_lookup(path);

        if (walk != want)
                fail_msg("walk of '%s': %ld, want %ld", path, walk, want);
        if (kernel != -ENOSYS && kernel != want)
                fail_msg("openat2 of '%s': %ld, want %ld (the test is wrong)", path, kernel, want);
        if (ino_of(open_in_root(root_fd, path)) != want)
                fail_msg("open_in_root of '%s' differs from the walk", path);
}

static void test_lookups(void **state) {
        char name[32], target[32];

        make_dir("etc");
        make_file("etc/secret", "inside\n");
        make_dir("usr");
        make_dir("usr/lib");
        make_dir("usr/lib/debug");
        make_dir("usr/lib/debug/.build-id");
        make_dir("usr/lib/debug/.build-id/ab");
        make_file("usr/lib/debug/real.debug", "debug\n");
        make_link("usr/lib/debug/.build-id/ab/cd.debug", "../../real.debug");
        make_link("abs", "/usr/lib/debug/real.debug");
        make_link("up", "../../../../../../../../etc/secret");
        make_dir("dir");
        make_link("dir/up", "../../../etc/secret");
        make_link("dir/abs-dir", "/usr//lib/./debug");
        make_link("escape", "../outside");
        make_link("loop1", "loop2");
        make_link("loop2", "loop1");
        make_link("dangling", "/nowhere");
        make_link("to-root", "/");

        /* Plain paths, absolute or not. */
        check("etc/secret", "etc/secret", 0);
        check("/etc/secret", "etc/secret", 0);
        check("//etc/./secret", "etc/secret", 0);
        check("/", ".", 0);
        check(".", ".", 0);
        /* Links: relative from their directory, absolute from the top, even through a directory. */
        check("/usr/lib/debug/.build-id/ab/cd.debug", "usr/lib/debug/real.debug", 0);
        check("abs", "usr/lib/debug/real.debug", 0);
        check("dir/abs-dir/real.debug", "usr/lib/debug/real.debug", 0);
        check("dir/abs-dir/.build-id/ab/cd.debug", "usr/lib/debug/real.debug", 0);
        check("to-root/etc/secret", "etc/secret", 0);
        /* ".." no higher than the top, by name or by a link. */
        check("../../../etc/secret", "etc/secret", 0);
        check("dir/../../../etc/secret", "etc/secret", 0);
        check("up", "etc/secret", 0);
        check("dir/up", "etc/secret", 0);
        check("escape", NULL, ENOENT);
        check("/../outside", NULL, ENOENT);
        /* Failures as the kernel's. */
        check("nope", NULL, ENOENT);
        check("dangling", NULL, ENOENT);
        check("loop1", NULL, ELOOP);
        check("etc/secret/more", NULL, ENOTDIR);
        check("etc/secret/", NULL, ENOTDIR);
        check("", NULL, ENOENT);

        /* 40 links on one lookup are followed, the 41st is a loop. */
        for (int i = 1; i <= 41; i++) {
                snprintf(name, sizeof name, "chain%d", i);
                if (i == 1)
                        snprintf(target, sizeof target, "etc/secret");
                else
                        snprintf(target, sizeof target, "chain%d", i - 1);
                make_link(name, target);
        }
        check("chain40", "etc/secret", 0);
        check("chain41", NULL, ELOOP);

        /* A link whose text is 580 rounds of "dir/../" before itself: each lookup through it asks
         * for 1,160 names more. The kernel stops at the 41st link, the walk at 8,192 names. */
        {
                char *big = malloc(580 * 7 + 16);

                assert_non_null(big);
                big[0] = '\0';
                for (int i = 0; i < 580; i++)
                        strcat(big, "dir/../");
                strcat(big, "work");
                make_link("work", big);
                free(big);
                check("work", NULL, ELOOP);
        }
}

static atomic_bool renaming;

/* Moves root/mv out of the root and back in, over and over. */
static void *rename_loop(void *arg) {
        char in[PATH_MAX], out[PATH_MAX];

        snprintf(in, sizeof in, "%s/mv", root);
        snprintf(out, sizeof out, "%s/mv", top);
        while (atomic_load(&renaming)) {
                (void) rename(in, out);
                (void) rename(out, in);
        }
        return NULL;
}

/* ".." is not the directory's own: a walk down into root/mv/a/b/c/d, whose mv a rename moves out of
 * the root and back meanwhile, must not climb by ".." from where mv went to the file beside the
 * root. It ends inside, or fails (-EAGAIN, -ENOENT: the way changed under it). */
static void test_dotdot_race(void **state) {
        const char *path = "mv/a/b/c/d/../../../../../outside";
        struct stat outside;
        char p[PATH_MAX];
        pthread_t t;
        unsigned inside = 0, failed = 0;

        make_dir("mv");
        make_dir("mv/a");
        make_dir("mv/a/b");
        make_dir("mv/a/b/c");
        make_dir("mv/a/b/c/d");
        make_file("outside", "inside\n"); /* where the walk should end */
        snprintf(p, sizeof p, "%s/outside", top);
        assert_int_equal(stat(p, &outside), 0);

        atomic_store(&renaming, true);
        assert_int_equal(pthread_create(&t, NULL, rename_loop, NULL), 0);
        for (int i = 0; i < 20000; i++) {
                int fd = open_in_root_walk(root_fd, path);
                struct stat st;

                if (fd < 0) {
                        failed++;
                        continue;
                }
                assert_int_equal(fstat(fd, &st), 0);
                close(fd);
                if (st.st_dev == outside.st_dev && st.st_ino == outside.st_ino)
                        fail_msg("walk %d of '%s' ended outside the root", i, path);
                inside++;
        }
        atomic_store(&renaming, false);
        assert_int_equal(pthread_join(t, NULL), 0);
        print_message("%u walks failed as the way changed, %u ended inside\n", failed, inside);
}

/* A path longer than PATH_MAX, or a name longer than NAME_MAX, is refused, not cut. */
static void test_long_names(void **state) {
        char path[PATH_MAX * 2 + 16], name[NAME_MAX + 2];

        memset(name, 'n', NAME_MAX + 1);
        name[NAME_MAX + 1] = '\0';
        assert_int_equal(open_in_root_walk(root_fd, name), -ENAMETOOLONG);
        memset(path, 'a', sizeof path - 1);
        path[sizeof path - 1] = '\0';
        for (size_t i = 100; i < sizeof path - 1; i += 100)
                path[i] = '/';
        assert_int_equal(open_in_root_walk(root_fd, path), -ENAMETOOLONG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lookups),
                cmocka_unit_test(test_long_names),
                cmocka_unit_test(test_dotdot_race),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
