/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Retention on a temporary directory with small limits: age, total size and free-space margin,
 * oldest first, reasons reported, pinned windows (a second hard link) never removed, the open
 * .partial never touched, and the emergency mode used on ENOSPC; the running boot's windows aged and
 * ordered by the monotonic clock, whatever steps the wall clock took.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/time-util.h"
#include "store/store-vacuum.h"
#include "store-test-util.h"
#include "tests.h"

#define NSEC_PER_MINUTE (UINT64_C(60) * NSEC_PER_SEC)

static char dir[64], pins[80];
static int dir_fd = -1;

typedef struct Removal {
        char name[64];
        VacuumReason reason;
} Removal;

static Removal removed[16];
static size_t n_removed;

static void on_removed(const char *name, VacuumReason reason, uint64_t bytes, void *ud) {
        assert_true(n_removed < 16);
        snprintf(removed[n_removed].name, sizeof removed[n_removed].name, "%s", name);
        removed[n_removed++].reason = reason;
}

/* Creates dir/name with size bytes, last modified age_sec ago. */
static void make_window(const char *name, size_t size, uint64_t age_sec) {
        struct timespec ts[2];
        char *buf = calloc(1, size ?: 1);
        int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC, 0640);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, buf, size), (ssize_t) size);
        clock_gettime(CLOCK_REALTIME, &ts[0]);
        ts[0].tv_sec -= (time_t) age_sec;
        ts[1] = ts[0];
        assert_int_equal(futimens(fd, ts), 0);
        close(fd);
        free(buf);
}

static void pin(const char *name) {
        char target[160];
        snprintf(target, sizeof target, "%s/%s", pins, name);
        assert_int_equal(linkat(dir_fd, name, AT_FDCWD, target, 0), 0);
}

static bool exists(const char *name) {
        return faccessat(dir_fd, name, F_OK, 0) == 0;
}

static int setup(void **state) {
        strcpy(dir, "/tmp/test-store-vacuum.XXXXXX");
        assert_non_null(mkdtemp(dir));
        snprintf(pins, sizeof pins, "%s.pins", dir);
        assert_int_equal(mkdir(pins, 0750), 0);
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY);
        n_removed = 0;
        /* oldest first: a (5 h), b (4 h, pinned), c (3 h), d (2 h), e (1 h), f open */
        make_window("h-20261121T090000Z-120s.tpw", 1000, 5 * 3600);
        make_window("h-20261121T100000Z-120s.tpw", 1000, 4 * 3600);
        make_window("h-20261121T110000Z-120s.tpw", 1000, 3 * 3600);
        make_window("h-20261121T120000Z-120s.tpw", 1000, 2 * 3600);
        make_window("h-20261121T130000Z-120s.tpw", 1000, 1 * 3600);
        make_window("h-20261121T140000Z-120s.tpw.partial", 1000, 30 * 3600); /* old mtime, still open */
        make_window("unrelated.txt", 1000, 30 * 3600);
        pin("h-20261121T100000Z-120s.tpw");
        return 0;
}

static int teardown(void **state) {
        char cmd[200];
        close(dir_fd);
        snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, pins);
        (void) system(cmd);
        return 0;
}

static void test_vacuum_by_age_keeps_pinned(void **state) {
        VacuumLimits l = { .max_age_usec = 150 * USEC_PER_MINUTE };
        VacuumResult res;

        assert_int_equal(store_vacuum(dir_fd, &l, now_usec(CLOCK_REALTIME), false, on_removed, NULL, &res), 0);
        assert_int_equal(res.removed, 2);
        assert_int_equal(res.bytes_freed, 2000);
        assert_int_equal(res.pinned_kept, 1);
        assert_string_equal(removed[0].name, "h-20261121T090000Z-120s.tpw");
        assert_string_equal(removed[1].name, "h-20261121T110000Z-120s.tpw");
        assert_int_equal(removed[0].reason, VACUUM_REASON_AGE);
        assert_true(exists("h-20261121T100000Z-120s.tpw"));
        assert_true(exists("h-20261121T120000Z-120s.tpw"));
        assert_true(exists("h-20261121T140000Z-120s.tpw.partial"));
        assert_true(exists("unrelated.txt"));
        assert_string_equal(vacuum_reason_to_string(VACUUM_REASON_AGE), "older than the age limit");
}

static void test_vacuum_by_size_oldest_first(void **state) {
        /* 6000 bytes in the ring (the .partial counts); the limit forces out 3 deletable windows */
        VacuumLimits l = { .max_bytes = 3000 };
        VacuumResult res;

        assert_int_equal(store_vacuum(dir_fd, &l, now_usec(CLOCK_REALTIME), false, on_removed, NULL, &res), 0);
        assert_int_equal(res.removed, 3);
        assert_string_equal(removed[0].name, "h-20261121T090000Z-120s.tpw");
        assert_string_equal(removed[1].name, "h-20261121T110000Z-120s.tpw");
        assert_string_equal(removed[2].name, "h-20261121T120000Z-120s.tpw");
        assert_int_equal(removed[2].reason, VACUUM_REASON_SIZE);
        assert_true(exists("h-20261121T100000Z-120s.tpw"));
        assert_true(exists("h-20261121T130000Z-120s.tpw"));
        assert_int_equal(res.newest_removed, -1);
}

/* A limit smaller than the open window and the newest finished one removes every window as soon as
 * it is finished: said, so that tprofd can warn of it. */
static void test_vacuum_newest_removed(void **state) {
        VacuumLimits l = { .max_bytes = 1500 };
        VacuumResult res;

        assert_int_equal(store_vacuum(dir_fd, &l, now_usec(CLOCK_REALTIME), false, on_removed, NULL, &res), 0);
        assert_int_equal(res.removed, 4);
        assert_string_equal(removed[3].name, "h-20261121T130000Z-120s.tpw");
        assert_int_equal(res.newest_removed, VACUUM_REASON_SIZE);
        assert_int_equal(res.pinned_bytes, 1000); /* b, which counts against the limit and stays */
        assert_true(exists("h-20261121T140000Z-120s.tpw.partial"));
}

/* The newest finished window pinned by a bundle stays, and is not said to be removed. */
static void test_vacuum_newest_pinned(void **state) {
        VacuumLimits l = { .max_bytes = 1500 };
        VacuumResult res;

        pin("h-20261121T130000Z-120s.tpw");
        assert_int_equal(store_vacuum(dir_fd, &l, now_usec(CLOCK_REALTIME), false, on_removed, NULL, &res), 0);
        assert_int_equal(res.removed, 3);
        assert_true(exists("h-20261121T130000Z-120s.tpw"));
        assert_int_equal(res.newest_removed, -1);
        assert_int_equal(res.pinned_bytes, 2000);
}

static void test_vacuum_free_space_margin(void **state) {
        /* no file system has 2^62 bytes free: everything unpinned goes, pinned and open stay */
        VacuumLimits l = { .keep_free_bytes = UINT64_C(1) << 62 };
        VacuumResult res;

        assert_int_equal(store_vacuum(dir_fd, &l, now_usec(CLOCK_REALTIME), false, on_removed, NULL, &res), 0);
        assert_int_equal(res.removed, 4);
        assert_int_equal(removed[0].reason, VACUUM_REASON_FREE_SPACE);
        assert_int_equal(res.newest_removed, VACUUM_REASON_FREE_SPACE);
        assert_true(exists("h-20261121T100000Z-120s.tpw"));
        assert_true(exists("h-20261121T140000Z-120s.tpw.partial"));
}

static void test_vacuum_unpinned_after_bundle_removed(void **state) {
        VacuumLimits l = { .max_age_usec = 150 * USEC_PER_MINUTE };
        char target[160];

        snprintf(target, sizeof target, "%s/h-20261121T100000Z-120s.tpw", pins);
        assert_int_equal(unlink(target), 0);
        assert_int_equal(store_vacuum(dir_fd, &l, now_usec(CLOCK_REALTIME), false, on_removed, NULL, NULL), 0);
        assert_int_equal(n_removed, 3);
        assert_false(exists("h-20261121T100000Z-120s.tpw"));
}

static void test_vacuum_emergency(void **state) {
        VacuumLimits l = {};
        VacuumResult res;

        for (int i = 0; i < 4; i++) {
                assert_int_equal(store_vacuum(dir_fd, &l, now_usec(CLOCK_REALTIME), true, on_removed, NULL, &res), 0);
                assert_int_equal(res.removed, 1);
                assert_int_equal(removed[i].reason, VACUUM_REASON_DISK_FULL);
        }
        assert_string_equal(removed[0].name, "h-20261121T090000Z-120s.tpw");
        /* only the pinned and the open window are left */
        assert_int_equal(store_vacuum(dir_fd, &l, now_usec(CLOCK_REALTIME), true, on_removed, NULL, &res), -ENOSPC);
        assert_true(exists("h-20261121T100000Z-120s.tpw"));
        assert_true(exists("h-20261121T140000Z-120s.tpw.partial"));
}

/* Writes dir/name as a window of boot_id holding one sample at last_ns (perf clock), last
 * modified at mtime_usec (wall clock). */
static void make_real_window(const char *name, const char *boot_id, uint64_t last_ns, uint64_t mtime_usec) {
        _cleanup_(chunk_writer_freep) ChunkWriter *cw = chunk_writer_new(1);
        _cleanup_(byte_buf_done) ByteBuf header = {}, chunk = {};
        WindowHeaderInfo info = test_header_info();
        struct timespec ts[2];
        uint64_t rng = last_ns;
        OwnedSample o;
        int fd;

        info.boot_id = boot_id;
        assert_non_null(cw);
        chunk_writer_set_clock(cw, &info.clock);
        test_make_sample(&rng, last_ns, &o);
        assert_int_equal(chunk_writer_add_sample(cw, &o.s), 0);
        assert_int_equal(chunk_writer_encode(cw, &chunk), 0);
        assert_int_equal(window_header_encode(&info, mtime_usec, 120 * USEC_PER_SEC, &header), 0);
        fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC, 0640);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, header.data, header.len), (ssize_t) header.len);
        assert_int_equal(write(fd, chunk.data, chunk.len), (ssize_t) chunk.len);
        ts[0] = (struct timespec) { .tv_sec = (time_t) (mtime_usec / USEC_PER_SEC) };
        ts[1] = ts[0];
        assert_int_equal(futimens(fd, ts), 0);
        close(fd);
}

/*
 * The wall clock was stepped back 3 h between the second and the third window of this boot (an
 * NTP correction, a VM restored): the first two carry modification times hours after the last
 * two's. Retention still takes this boot's oldest first, and a window of an earlier boot before
 * them all; and a step forward of hours does not make this boot's windows minutes old look old.
 */
static void test_vacuum_wall_clock_steps(void **state) {
        const WindowHeaderInfo info = test_header_info();
        const char *boot = info.boot_id, *other = "fedcba9876543210fedcba9876543210";
        uint64_t now = now_usec(CLOCK_REALTIME), perf = UINT64_C(50000) * NSEC_PER_SEC;
        /* the monotonic time of the last sample (test_header_info()'s mapping); now is 2 minutes later */
        uint64_t now_mono = clock_map_perf_to_mono(&info.clock, perf + 6 * NSEC_PER_MINUTE) / NSEC_PER_USEC;
        VacuumLimits size = { .max_bytes = 1, .boot_id = boot, .now_mono_usec = now_mono + 2 * USEC_PER_MINUTE };
        VacuumLimits age = { .max_age_usec = USEC_PER_HOUR, .boot_id = boot, .now_mono_usec = now_mono + 2 * USEC_PER_MINUTE };
        char cmd[200];
        VacuumResult res;

        snprintf(cmd, sizeof cmd, "rm -f '%s'/*", dir);
        assert_int_equal(system(cmd), 0);
        make_real_window("w1.tpw", boot, perf, now + 3 * USEC_PER_HOUR - 6 * USEC_PER_MINUTE);
        make_real_window("w2.tpw", boot, perf + 2 * NSEC_PER_MINUTE, now + 3 * USEC_PER_HOUR - 4 * USEC_PER_MINUTE);
        make_real_window("w3.tpw", boot, perf + 4 * NSEC_PER_MINUTE, now - 2 * USEC_PER_MINUTE);
        make_real_window("w4.tpw", boot, perf + 6 * NSEC_PER_MINUTE, now);
        make_real_window("earlier-boot.tpw", other, perf * 3, now - 30 * USEC_PER_MINUTE);
        make_window("h-20261121T140000Z-120s.tpw.partial", 1000, 0);

        /* a budget smaller than one window: everything unpinned goes, oldest first */
        n_removed = 0;
        assert_int_equal(store_vacuum(dir_fd, &size, now, false, on_removed, NULL, &res), 0);
        assert_int_equal(res.removed, 5);
        assert_string_equal(removed[0].name, "earlier-boot.tpw");
        assert_string_equal(removed[1].name, "w1.tpw");
        assert_string_equal(removed[2].name, "w2.tpw");
        assert_string_equal(removed[3].name, "w3.tpw");
        assert_string_equal(removed[4].name, "w4.tpw");

        /* a disk full takes the oldest of this boot, not the one written last */
        make_real_window("w1.tpw", boot, perf, now + 3 * USEC_PER_HOUR - 6 * USEC_PER_MINUTE);
        make_real_window("w3.tpw", boot, perf + 4 * NSEC_PER_MINUTE, now - 2 * USEC_PER_MINUTE);
        n_removed = 0;
        assert_int_equal(store_vacuum(dir_fd, &size, now, true, on_removed, NULL, &res), 0);
        assert_int_equal(n_removed, 1);
        assert_string_equal(removed[0].name, "w1.tpw");

        /* stepped forward 5 h: the windows of minutes ago stay, the earlier boot's goes by its mtime */
        make_real_window("w1.tpw", boot, perf, now - 5 * USEC_PER_HOUR - 6 * USEC_PER_MINUTE);
        make_real_window("earlier-boot.tpw", other, perf * 3, now - 2 * USEC_PER_HOUR);
        n_removed = 0;
        assert_int_equal(store_vacuum(dir_fd, &age, now, false, on_removed, NULL, &res), 0);
        assert_int_equal(n_removed, 1);
        assert_string_equal(removed[0].name, "earlier-boot.tpw");
        assert_true(exists("w1.tpw"));
        assert_true(exists("w3.tpw"));
        /* and they do age, by the monotonic clock */
        age.now_mono_usec = now_mono + 57 * USEC_PER_MINUTE;
        n_removed = 0;
        assert_int_equal(store_vacuum(dir_fd, &age, now, false, on_removed, NULL, &res), 0);
        assert_int_equal(n_removed, 1);
        assert_string_equal(removed[0].name, "w1.tpw");
}

/* Overwrites dir/name with as many bytes of garbage, its modification time kept, or set to mtime_usec. */
static void spoil_window(const char *name, uint64_t mtime_usec) {
        struct stat st;
        struct timespec ts[2];
        int fd = openat(dir_fd, name, O_WRONLY);
        char *junk;

        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        junk = malloc((size_t) st.st_size);
        assert_non_null(junk);
        memset(junk, 'x', (size_t) st.st_size);
        assert_int_equal(pwrite(fd, junk, (size_t) st.st_size, 0), st.st_size);
        free(junk);
        ts[0] = ts[1] = mtime_usec > 0 ? (struct timespec) { .tv_sec = (time_t) (mtime_usec / USEC_PER_SEC) } : st.st_mtim;
        assert_int_equal(futimens(fd, ts), 0);
        close(fd);
}

/* A finalized window is read once: the cache answers while its size and modification time are
 * unchanged (here its bytes were spoiled behind the cache's back, which only a test does), and a
 * window that changed is read again. */
static void test_vacuum_cache(void **state) {
        const WindowHeaderInfo info = test_header_info();
        uint64_t now = now_usec(CLOCK_REALTIME), perf = UINT64_C(50000) * NSEC_PER_SEC;
        VacuumCache *cache = vacuum_cache_new();
        VacuumLimits keep = { .boot_id = info.boot_id, .now_mono_usec = 1, .cache = cache };
        VacuumResult res;
        char cmd[200];

        assert_non_null(cache);
        snprintf(cmd, sizeof cmd, "rm -f '%s'/*", dir);
        assert_int_equal(system(cmd), 0);
        make_real_window("older.tpw", info.boot_id, perf, now - USEC_PER_MINUTE);
        make_real_window("newer.tpw", info.boot_id, perf + 2 * NSEC_PER_MINUTE, now);
        assert_int_equal(store_vacuum(dir_fd, &keep, now, false, on_removed, NULL, &res), 0);
        assert_int_equal(res.removed, 0);

        /* spoiled unseen: still this boot's newest, the older goes first */
        spoil_window("newer.tpw", 0);
        n_removed = 0;
        assert_int_equal(store_vacuum(dir_fd, &keep, now, true, on_removed, NULL, &res), 0);
        assert_int_equal(n_removed, 1);
        assert_string_equal(removed[0].name, "older.tpw");

        /* changed (a new modification time): read again, unreadable, so by its modification time and
         * before any window of this boot */
        make_real_window("older.tpw", info.boot_id, perf, now - USEC_PER_MINUTE);
        spoil_window("newer.tpw", now - 2 * USEC_PER_SEC);
        n_removed = 0;
        assert_int_equal(store_vacuum(dir_fd, &keep, now, true, on_removed, NULL, &res), 0);
        assert_int_equal(n_removed, 1);
        assert_string_equal(removed[0].name, "newer.tpw");
        vacuum_cache_free(cache);
}

static void test_vacuum_no_limits_removes_nothing(void **state) {
        VacuumLimits l = {};
        VacuumResult res;

        assert_int_equal(store_vacuum(dir_fd, &l, now_usec(CLOCK_REALTIME), false, on_removed, NULL, &res), 0);
        assert_int_equal(res.removed, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_vacuum_by_age_keeps_pinned, setup, teardown),
                cmocka_unit_test_setup_teardown(test_vacuum_by_size_oldest_first, setup, teardown),
                cmocka_unit_test_setup_teardown(test_vacuum_newest_removed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_vacuum_newest_pinned, setup, teardown),
                cmocka_unit_test_setup_teardown(test_vacuum_free_space_margin, setup, teardown),
                cmocka_unit_test_setup_teardown(test_vacuum_unpinned_after_bundle_removed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_vacuum_emergency, setup, teardown),
                cmocka_unit_test_setup_teardown(test_vacuum_no_limits_removes_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_vacuum_wall_clock_steps, setup, teardown),
                cmocka_unit_test_setup_teardown(test_vacuum_cache, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
