/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ring directory: window names and rotation at wall-clock boundaries, crash recovery (a child
 * writer killed with SIGKILL, plus a torn last chunk; one killed between the hard link and the
 * unlink that finish a window where renameat2() is missing), pinning finalized windows and the open one
 * (by hard link, and by copy onto another file system),
 * and time-ordered slices across a window boundary.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/time-util.h"
#include "store/ring-store.h"
#include "store/store-slice.h"
#include "store-test-util.h"
#include "tests.h"

static char tmpdir[64];

static int setup(void **state) {
        strcpy(tmpdir, "/tmp/test-store-ring.XXXXXX");
        assert_non_null(mkdtemp(tmpdir));
        return 0;
}

static int teardown(void **state) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        (void) system(cmd);
        return 0;
}

static size_t count_suffix(const char *dir, const char *suffix) {
        _cleanup_closedir_ DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        assert_non_null(d);
        while ((de = readdir(d)))
                if (strlen(de->d_name) > strlen(suffix) &&
                    streq(de->d_name + strlen(de->d_name) - strlen(suffix), suffix))
                        n++;
        return n;
}

static void add_samples(RingStore *rs, uint64_t *rng, uint64_t *t, size_t n, Collected *expect) {
        for (size_t i = 0; i < n; i++) {
                OwnedSample o;
                test_make_sample(rng, *t, &o);
                *t += 10309278;
                assert_int_equal(ring_store_add_sample(rs, &o.s), 0);
                if (expect)
                        collect_handler(&o.s, expect);
        }
}

static void test_window_name(void **state) {
        char buf[RING_NAME_MAX];

        /* 2026-11-21T14:30:00Z */
        assert_int_equal(ring_window_name("web-1", UINT64_C(1795271400) * USEC_PER_SEC, 120 * USEC_PER_SEC, false,
                                          buf, sizeof buf), 0);
        assert_string_equal(buf, "web-1-20261121T143000Z-120s.tpw");
        assert_int_equal(ring_window_name("a b/c", UINT64_C(1795271400) * USEC_PER_SEC, 5 * USEC_PER_SEC, true,
                                          buf, sizeof buf), 0);
        assert_string_equal(buf, "a_b_c-20261121T143000Z-5s.tpw.partial");
}

static void test_rotation_and_listing(void **state) {
        WindowHeaderInfo info = test_header_info();
        RingOptions o = { .window_usec = 10 * USEC_PER_SEC };
        _cleanup_(ring_store_freep) RingStore *rs = NULL;
        char ring[128];
        uint64_t rng = 11, t = UINT64_C(1000000000000), now;
        WindowInfo *w = NULL;
        size_t n;

        snprintf(ring, sizeof ring, "%s/ring", tmpdir);
        assert_int_equal(ring_store_open(ring, &o, &info, &rs), 0);
        now = now_usec(CLOCK_REALTIME);
        assert_non_null(ring_store_current_name(rs));
        add_samples(rs, &rng, &t, 100, NULL);
        assert_int_equal(ring_store_flush(rs), 0);
        assert_int_equal(ring_store_rotate(rs, now), 0); /* not due: the window runs to the next 10 s boundary */
        assert_int_equal(ring_store_rotate(rs, (now / (10 * USEC_PER_SEC) + 1) * 10 * USEC_PER_SEC), 1);
        add_samples(rs, &rng, &t, 50, NULL);
        assert_int_equal(ring_store_add_lost(rs, 3, 7), 0);
        assert_int_equal(ring_store_flush(rs), 0);
        assert_int_equal(count_suffix(ring, ".tpw"), 1);
        assert_int_equal(count_suffix(ring, ".tpw.partial"), 1);
        rs = ring_store_free(rs);
        assert_int_equal(count_suffix(ring, ".tpw.partial"), 0);

        assert_int_equal(ring_list_windows(ring, true, &w, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(w[0].samples, 100);
        assert_int_equal(w[1].samples, 50);
        assert_int_equal(w[1].lost, 7);
        assert_false(w[0].partial || w[0].corrupt || w[0].pinned);
        assert_true(w[0].last_ns < w[1].first_ns);
        assert_string_equal(w[1].header.info.host, "testhost");
        assert_true(w[0].window_start_usec < w[1].window_start_usec);
        window_info_array_free(w, n);
}

/* Lost counts alone make no chunk (it would have no time, and slices go by time): they go with the
 * next chunk that holds samples, and into the last chunk at the end. */
static void test_lost_waits_for_a_sample(void **state) {
        WindowHeaderInfo info = test_header_info();
        RingOptions o = { .window_usec = 3600 * USEC_PER_SEC };
        _cleanup_(ring_store_freep) RingStore *rs = NULL;
        char ring[128];
        uint64_t rng = 5, t = UINT64_C(2000000000000), lost = 0;
        WindowInfo *w = NULL;
        size_t n;
        char *path;

        snprintf(ring, sizeof ring, "%s/ring", tmpdir);
        assert_int_equal(ring_store_open(ring, &o, &info, &rs), 0);
        add_samples(rs, &rng, &t, 20, NULL);
        assert_int_equal(ring_store_flush(rs), 0);
        assert_int_equal(ring_store_add_lost(rs, 1, 40), 0);
        assert_int_equal(ring_store_flush(rs), 0);
        assert_int_equal(ring_list_windows(ring, false, &w, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(w[0].samples, 20);
        assert_int_equal(w[0].lost, 0);
        window_info_array_free(w, n);

        add_samples(rs, &rng, &t, 5, NULL);
        assert_int_equal(ring_store_flush(rs), 0);
        assert_int_equal(ring_list_windows(ring, false, &w, &n), 0);
        assert_int_equal(w[0].lost, 40);
        /* and a slice over the chunk's seconds finds them */
        path = w[0].path;
        assert_int_equal(slice_lost(&path, 1, t - 5 * 10309278, t, &lost), 0);
        assert_int_equal(lost, 40);
        window_info_array_free(w, n);

        assert_int_equal(ring_store_add_lost(rs, 0, 3), 0);
        rs = ring_store_free(rs);
        assert_int_equal(ring_list_windows(ring, true, &w, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(w[0].samples, 25);
        assert_int_equal(w[0].lost, 43);
        window_info_array_free(w, n);
}

/* A run killed while it wrote; with linked, one killed while it finished that window where
 * renameat2() is missing, between its hard link under the final name and removing the old one. */
static void crash_recovery(bool linked) {
        WindowHeaderInfo info = test_header_info();
        RingOptions o = { .window_usec = 3600 * USEC_PER_SEC };
        char ring[128], partial[PATH_MAX] = "";
        int pfd[2];
        pid_t pid;
        uint64_t flushed = 0, got;
        _cleanup_(ring_store_freep) RingStore *rs = NULL;
        WindowInfo *w = NULL;
        size_t n;

        snprintf(ring, sizeof ring, "%s/crash", tmpdir);
        assert_int_equal(pipe(pfd), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                RingStore *child = NULL;
                uint64_t rng = 21, t = UINT64_C(2000000000000), added = 0;

                close(pfd[0]);
                if (ring_store_open(ring, &o, &info, &child) < 0)
                        _exit(1);
                for (;;) {
                        for (int i = 0; i < 200; i++) {
                                OwnedSample s;
                                test_make_sample(&rng, t, &s);
                                t += 1000;
                                if (ring_store_add_sample(child, &s.s) < 0)
                                        _exit(1);
                        }
                        added += 200;
                        if (ring_store_flush(child) < 0)
                                _exit(1);
                        if (write(pfd[1], &added, sizeof added) != sizeof added)
                                _exit(1);
                        /* keep some samples buffered, unflushed, when the kill comes */
                        for (int i = 0; i < 50; i++) {
                                OwnedSample s;
                                test_make_sample(&rng, t, &s);
                                t += 1000;
                                if (ring_store_add_sample(child, &s.s) < 0)
                                        _exit(1);
                        }
                        added += 50;
                        usleep(1000);
                }
        }
        close(pfd[1]);
        while (flushed < 2000 && read(pfd[0], &got, sizeof got) == sizeof got)
                flushed = got;
        assert_int_equal(kill(pid, SIGKILL), 0);
        assert_int_equal(waitpid(pid, NULL, 0), pid);
        while (read(pfd[0], &got, sizeof got) == sizeof got)
                flushed = got; /* flushes that completed before the kill landed */
        close(pfd[0]);

        /* Tear the last chunk as a power cut would: half a chunk header of garbage. */
        {
                _cleanup_closedir_ DIR *d = opendir(ring);
                struct dirent *de;
                while ((de = readdir(d)))
                        if (strstr(de->d_name, ".tpw.partial"))
                                snprintf(partial, sizeof partial, "%s/%s", ring, de->d_name);
                assert_true(partial[0]);
                int fd = open(partial, O_WRONLY | O_APPEND);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, "TPCK\1\0\0\0garbage", 15), 15);
                close(fd);
        }
        if (linked) {
                char final[PATH_MAX];
                snprintf(final, sizeof final, "%.*s", (int) (strlen(partial) - strlen(".partial")), partial);
                assert_int_equal(link(partial, final), 0);
        }

        assert_int_equal(ring_store_open(ring, &o, &info, &rs), 0);
        assert_int_equal(access(partial, F_OK), -1); /* renamed */
        assert_int_equal(count_suffix(ring, ".tpw"), 1);
        assert_int_equal(count_suffix(ring, ".tpw.partial"), 1); /* the new window */
        rs = ring_store_free(rs);

        /* the new window got no chunk before it was closed, so it left no file */
        assert_int_equal(ring_list_windows(ring, true, &w, &n), 0);
        assert_int_equal(n, 1);
        assert_true(w[0].samples == flushed);
        assert_false(w[0].truncated); /* recovery cut the torn tail */
        assert_false(w[0].corrupt);
        window_info_array_free(w, n);
}

static void test_crash_recovery(void **state) {
        crash_recovery(false);
}

static void test_crash_recovery_linked(void **state) {
        crash_recovery(true);
}

static void on_unrecovered(const RingEvent *e, void *userdata) {
        char *name = userdata;

        if (e->type == RING_EVENT_UNRECOVERED)
                snprintf(name, PATH_MAX, "%s", e->name);
}

/* A .partial that cannot be finalized (here a directory by that name; on a host, an I/O error on a
 * bad sector) is said and left: the ring opens all the same, and recovers the others. */
static void test_recovery_unrecoverable(void **state) {
        WindowHeaderInfo info = test_header_info();
        char got[PATH_MAX] = "";
        RingOptions o = { .window_usec = 3600 * USEC_PER_SEC, .on_event = on_unrecovered, .userdata = got };
        _cleanup_(ring_store_freep) RingStore *rs = NULL;
        char ring[128], bad[PATH_MAX];

        snprintf(ring, sizeof ring, "%s/bad", tmpdir);
        assert_int_equal(mkdir(ring, 0750), 0);
        snprintf(bad, sizeof bad, "%s/h-20261121T100000Z-120s.tpw.partial", ring);
        assert_int_equal(mkdir(bad, 0750), 0);
        assert_int_equal(ring_store_open(ring, &o, &info, &rs), 0);
        assert_string_equal(got, "h-20261121T100000Z-120s.tpw.partial");
        assert_int_equal(access(bad, F_OK), 0);
}

/* A ring tmpdir/name of 10 s windows, n_windows of them with 100 samples each (from *rng, and from
 * time *t on; both go on past the last sample), the last one open and flushed. ret_second gets the
 * time of the second window's first sample. */
static RingStore *ring_of_windows(const char *name, uint64_t *rng, size_t n_windows, uint64_t *t,
                                  uint64_t *ret_second) {
        WindowHeaderInfo info = test_header_info();
        RingOptions o = { .window_usec = 10 * USEC_PER_SEC };
        uint64_t boundary = (now_usec(CLOCK_REALTIME) / (10 * USEC_PER_SEC) + 1) * 10 * USEC_PER_SEC;
        RingStore *rs = NULL;
        char ring[128];

        snprintf(ring, sizeof ring, "%s/%s", tmpdir, name);
        assert_int_equal(ring_store_open(ring, &o, &info, &rs), 0);
        for (size_t i = 0; i < n_windows; i++) {
                if (i > 0)
                        assert_int_equal(ring_store_rotate(rs, boundary + (i - 1) * 10 * USEC_PER_SEC), 1);
                if (i == 1 && ret_second)
                        *ret_second = *t;
                add_samples(rs, rng, t, 100, NULL);
        }
        assert_int_equal(ring_store_flush(rs), 0);
        return rs;
}

/* An empty directory tmpdir/name for a bundle's windows, opened. */
static int bundle_dir(const char *name) {
        char dest[128];
        int fd;

        snprintf(dest, sizeof dest, "%s/%s", tmpdir, name);
        assert_int_equal(mkdir(dest, 0750), 0);
        fd = open(dest, O_RDONLY | O_DIRECTORY);
        assert_true(fd >= 0);
        return fd;
}

static void test_pin_finalized_and_open(void **state) {
        _cleanup_(ring_store_freep) RingStore *rs = NULL;
        _cleanup_(ring_names_freep) char **linked = NULL;
        _cleanup_close_ int dest_fd = bundle_dir("bundle");
        char ring[128], dest[128], path[PATH_MAX];
        uint64_t rng = 31, t = UINT64_C(3000000000000), t_second = 0;
        struct stat st;
        WindowInfo *w = NULL;
        size_t n;

        snprintf(ring, sizeof ring, "%s/pinring", tmpdir);
        snprintf(dest, sizeof dest, "%s/bundle", tmpdir);
        rs = ring_of_windows("pinring", &rng, 3, &t, &t_second); /* A and B finalized, C open */

        /* From inside B to beyond the last sample (an incident's t+after): A stays unpinned. */
        assert_int_equal(ring_store_pin(rs, t_second + 10, t + NSEC_PER_SEC, dest_fd, &linked), 0);
        assert_non_null(linked[0]);
        assert_non_null(linked[1]);
        assert_null(linked[2]);
        for (size_t i = 0; linked[i]; i++)
                assert_non_null(strstr(linked[i], ".tpw"));
        assert_null(strstr(linked[0], ".partial"));
        assert_null(strstr(linked[1], ".partial"));
        linked = ring_names_free(linked);
        /* idempotent */
        assert_int_equal(ring_store_pin(rs, t_second + 10, t + NSEC_PER_SEC, dest_fd, &linked), 0);
        assert_non_null(linked[1]);

        /* Samples flushed after the pin reach the bundle's link of the open window. */
        add_samples(rs, &rng, &t, 40, NULL);
        rs = ring_store_free(rs);

        assert_int_equal(ring_list_windows(dest, true, &w, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(w[0].samples, 100);
        assert_int_equal(w[1].samples, 140);
        window_info_array_free(w, n);

        assert_int_equal(ring_list_windows(ring, false, &w, &n), 0);
        assert_int_equal(n, 3);
        assert_false(w[0].pinned);
        assert_true(w[1].pinned);
        assert_true(w[2].pinned);
        snprintf(path, sizeof path, "%s/%s", ring, w[2].name);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_nlink, 2);
        window_info_array_free(w, n);
}

/* Bundles on another file system than the ring (here tmpfs, /dev/shm): no hard link can be made,
 * so the pin copies, and a second pin after more samples were flushed copies the open window again. */
static void test_pin_copies_across_file_systems(void **state) {
        _cleanup_(ring_store_freep) RingStore *rs = NULL;
        _cleanup_(ring_names_freep) char **linked = NULL;
        _cleanup_close_ int dest_fd = -EBADF;
        char ring[128], dest[64] = "/dev/shm/test-store-ring.XXXXXX", path[PATH_MAX], cmd[128];
        uint64_t rng = 37, t = UINT64_C(3000000000000);
        struct stat ring_st, dest_st, st;
        WindowInfo *w = NULL;
        size_t n;

        snprintf(ring, sizeof ring, "%s/copyring", tmpdir);
        rs = ring_of_windows("copyring", &rng, 2, &t, NULL); /* A finalized, B open */
        if (!mkdtemp(dest))
                skip();
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dest);
        assert_int_equal(stat(ring, &ring_st), 0);
        assert_int_equal(stat(dest, &dest_st), 0);
        if (ring_st.st_dev == dest_st.st_dev) {
                (void) system(cmd);
                skip(); /* /dev/shm is no file system of its own here */
        }
        dest_fd = open(dest, O_RDONLY | O_DIRECTORY);
        assert_true(dest_fd >= 0);

        /* At the match: both windows, as they are now. */
        assert_int_equal(ring_store_pin(rs, 0, t + NSEC_PER_SEC, dest_fd, &linked), 0);
        assert_non_null(linked[1]);
        assert_null(linked[2]);
        linked = ring_names_free(linked);
        assert_int_equal(ring_list_windows(dest, true, &w, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(w[0].samples, 100);
        assert_int_equal(w[1].samples, 100);
        window_info_array_free(w, n);

        /* After t+after was flushed: the open window's copy is made again, the finished one kept. */
        add_samples(rs, &rng, &t, 40, NULL);
        assert_int_equal(ring_store_flush(rs), 0);
        assert_int_equal(ring_store_pin(rs, 0, t + NSEC_PER_SEC, dest_fd, &linked), 0);
        assert_non_null(linked[1]);
        add_samples(rs, &rng, &t, 10, NULL); /* later samples do not reach a copy */
        rs = ring_store_free(rs);

        assert_int_equal(ring_list_windows(dest, true, &w, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(w[0].samples, 100);
        assert_int_equal(w[1].samples, 140);
        assert_false(w[0].corrupt || w[1].corrupt);
        window_info_array_free(w, n);
        assert_int_equal(count_suffix(dest, ".copy"), 0);

        /* The ring's windows are its own again: retention may remove them. */
        assert_int_equal(ring_list_windows(ring, false, &w, &n), 0);
        assert_int_equal(n, 2);
        for (size_t i = 0; i < n; i++) {
                assert_false(w[i].pinned);
                snprintf(path, sizeof path, "%s/%s", ring, w[i].name);
                assert_int_equal(stat(path, &st), 0);
                assert_int_equal(st.st_nlink, 1);
        }
        window_info_array_free(w, n);
        (void) system(cmd);
}

/* A window that cannot be pinned (its name taken in the bundle by something not a window) does not
 * keep the others from being pinned, the open one above all; the pin says it failed. */
static void test_pin_goes_on_past_a_window_it_cannot_pin(void **state) {
        _cleanup_(ring_store_freep) RingStore *rs = NULL;
        _cleanup_close_ int dest_fd = bundle_dir("failbundle");
        char ring[128], dest[128], path[PATH_MAX], open_name[256];
        uint64_t rng = 41, t = UINT64_C(3000000000000);
        WindowInfo *w = NULL;
        size_t n;

        snprintf(ring, sizeof ring, "%s/failring", tmpdir);
        snprintf(dest, sizeof dest, "%s/failbundle", tmpdir);
        rs = ring_of_windows("failring", &rng, 2, &t, NULL); /* A finalized, B open */

        assert_int_equal(ring_list_windows(ring, false, &w, &n), 0);
        assert_int_equal(n, 2);
        snprintf(path, sizeof path, "%s/%s", dest, w[0].partial ? w[1].name : w[0].name);
        snprintf(open_name, sizeof open_name, "%s", w[0].partial ? w[0].name : w[1].name);
        window_info_array_free(w, n);
        assert_int_equal(mkdir(path, 0750), 0); /* A's name, taken */
        assert_non_null(strstr(open_name, ".partial"));
        *strstr(open_name, ".partial") = '\0';

        assert_int_equal(ring_store_pin(rs, 0, t + NSEC_PER_SEC, dest_fd, NULL), -EEXIST);
        snprintf(path, sizeof path, "%s/%s", dest, open_name);
        assert_int_equal(access(path, F_OK), 0); /* B, pinned all the same */
}

static int cmp_time(const void *a, const void *b) {
        const OwnedSample *x = a, *y = b;
        return x->s.t_ns < y->s.t_ns ? -1 : x->s.t_ns > y->s.t_ns;
}

static void test_slice_across_boundary(void **state) {
        WindowHeaderInfo info = test_header_info();
        RingOptions o = { .window_usec = 10 * USEC_PER_SEC };
        _cleanup_(ring_store_freep) RingStore *rs = NULL;
        char ring[128];
        uint64_t rng = 41, t = UINT64_C(4000000000000), now = now_usec(CLOCK_REALTIME), boundary, from, to;
        Collected expect = {}, got = {};
        WindowInfo *w = NULL;
        size_t n, lo, hi;
        char **paths;
        SliceStats st;

        snprintf(ring, sizeof ring, "%s/slicering", tmpdir);
        assert_int_equal(ring_store_open(ring, &o, &info, &rs), 0);
        boundary = (now / (10 * USEC_PER_SEC) + 1) * 10 * USEC_PER_SEC;
        /* chunk k of the twelve reports k + 1 lost samples */
        for (int chunk = 0; chunk < 6; chunk++) {
                add_samples(rs, &rng, &t, 300, &expect);
                assert_int_equal(ring_store_add_lost(rs, 0, (uint64_t) chunk + 1), 0);
                assert_int_equal(ring_store_flush(rs), 0);
        }
        assert_int_equal(ring_store_rotate(rs, boundary), 1);
        for (int chunk = 6; chunk < 12; chunk++) {
                add_samples(rs, &rng, &t, 300, &expect);
                assert_int_equal(ring_store_add_lost(rs, 1, (uint64_t) chunk + 1), 0);
                assert_int_equal(ring_store_flush(rs), 0);
        }
        /* the open window takes part too: no free() before the slice */
        assert_int_equal(ring_list_windows(ring, false, &w, &n), 0);
        assert_int_equal(n, 2);
        assert_true(w[1].partial);
        paths = calloc(n, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                paths[n - 1 - i] = w[i].path; /* reversed on purpose: order comes from time */

        lo = 1000;
        hi = 2700;
        from = expect.v[lo].s.t_ns;
        to = expect.v[hi].s.t_ns;
        assert_int_equal(slice_read(paths, n, from, to, collect_handler, &got, &st), 0);
        assert_int_equal(got.n, hi - lo + 1);
        for (size_t i = 0; i < got.n; i++)
                assert_true(sample_equal(&got.v[i].s, &expect.v[lo + i].s));
        assert_int_equal(st.windows, 2);
        /* chunks of 300 samples: 1000..2700 touches chunks 3..9, the others are never decompressed */
        assert_int_equal(st.chunks_read, 7);
        assert_int_equal(st.chunks_skipped, 5);
        /* chunks 3..9 lost 4 + 5 + ... + 10; slice_lost() counts the same from the headers */
        assert_int_equal(st.lost, 49);
        uint64_t lost = 0;
        assert_int_equal(slice_lost(paths, n, from, to, &lost), 0);
        assert_int_equal(lost, st.lost);
        assert_int_equal(slice_lost(paths, n, 0, UINT64_MAX, &lost), 0);
        assert_int_equal(lost, 78);
        qsort(got.v, got.n, sizeof(OwnedSample), cmp_time); /* already sorted: no-op check */
        collected_done(&got);
        slice_stats_done(&st);

        free(paths);
        window_info_array_free(w, n);
        collected_done(&expect);
}

static unsigned n_removed_events;

static void count_events(const RingEvent *e, void *ud) {
        if (e->type == RING_EVENT_REMOVED) {
                n_removed_events++;
                assert_string_equal(e->reason, "older than the age limit");
                assert_non_null(strstr(e->name, ".tpw"));
        }
}

static void test_clock_updates_and_retention_events(void **state) {
        WindowHeaderInfo info = test_header_info();
        /* Samples at 1 s of this boot and an age limit of 10 s: the windows of this boot are aged by
         * the monotonic time of their last sample, so theirs is old on any machine up for longer. */
        RingOptions o = { .window_usec = 10 * USEC_PER_SEC, .max_age_usec = 10 * USEC_PER_SEC, .on_event = count_events };
        _cleanup_(ring_store_freep) RingStore *rs = NULL;
        _cleanup_(window_file_freep) WindowFile *wf = NULL;
        _cleanup_(decoded_chunk_freep) DecodedChunk *d = NULL;
        ClockMap m = info.clock;
        char ring[128], path[PATH_MAX];
        uint64_t rng = 61, t = UINT64_C(1000000000), now;
        WindowInfo *w = NULL;
        size_t n;
        VacuumResult res;

        snprintf(ring, sizeof ring, "%s/clockring", tmpdir);
        assert_int_equal(ring_store_open(ring, &o, &info, &rs), 0);
        now = now_usec(CLOCK_REALTIME);
        add_samples(rs, &rng, &t, 10, NULL);
        assert_int_equal(ring_store_flush(rs), 0);
        m.perf_minus_mono_ns = 777;
        m.method = CLOCK_MAP_PERF_BRACKET;
        assert_int_equal(ring_store_update_clock(rs, &m), 0);
        add_samples(rs, &rng, &t, 10, NULL);
        assert_int_equal(ring_store_flush(rs), 0);
        assert_int_equal(ring_store_rotate(rs, (now / (10 * USEC_PER_SEC) + 1) * 10 * USEC_PER_SEC), 1);
        add_samples(rs, &rng, &t, 10, NULL);
        assert_int_equal(ring_store_flush(rs), 0);

        /* each chunk carries the mapping in effect; a window opened later has it in its header */
        assert_int_equal(ring_list_windows(ring, false, &w, &n), 0);
        assert_int_equal(n, 2);
        assert_true(w[0].header.info.clock.perf_minus_mono_ns == info.clock.perf_minus_mono_ns);
        assert_true(w[1].header.info.clock.perf_minus_mono_ns == 777);
        assert_int_equal(window_file_open(w[0].path, false, &wf), 0);
        assert_int_equal(window_file_decode_chunk(wf, 1, &d), 0);
        assert_true(decoded_chunk_clock(d)->perf_minus_mono_ns == 777);

        /* an old finalized window goes, with an event; the open one stays */
        snprintf(path, sizeof path, "%s", w[0].path);
        assert_true(now_usec(CLOCK_MONOTONIC) > 12 * USEC_PER_SEC);
        assert_int_equal(ring_store_vacuum(rs, now_usec(CLOCK_REALTIME), &res), 0);
        assert_int_equal(res.removed, 1);
        assert_int_equal(n_removed_events, 1);
        assert_int_equal(access(path, F_OK), -1);
        assert_int_equal(access(w[1].path, F_OK), 0);
        window_info_array_free(w, n);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_window_name),
                cmocka_unit_test_setup_teardown(test_rotation_and_listing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lost_waits_for_a_sample, setup, teardown),
                cmocka_unit_test_setup_teardown(test_crash_recovery, setup, teardown),
                cmocka_unit_test_setup_teardown(test_crash_recovery_linked, setup, teardown),
                cmocka_unit_test_setup_teardown(test_recovery_unrecoverable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_pin_finalized_and_open, setup, teardown),
                cmocka_unit_test_setup_teardown(test_pin_copies_across_file_systems, setup, teardown),
                cmocka_unit_test_setup_teardown(test_pin_goes_on_past_a_window_it_cannot_pin, setup, teardown),
                cmocka_unit_test_setup_teardown(test_slice_across_boundary, setup, teardown),
                cmocka_unit_test_setup_teardown(test_clock_updates_and_retention_events, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
