/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The writer on a full disk: a small tmpfs this test mounts (root only; exit 77 otherwise) fills
 * with windows; when a chunk hits ENOSPC the ring deletes the oldest unpinned windows and carries
 * on, never deleting a pinned one, and when nothing is left to delete it drops the chunk, says so,
 * and keeps working once space returns.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/time-util.h"
#include "store/ring-store.h"
#include "store/store-slice.h"
#include "store-test-util.h"
#include "tests.h"

static char mnt[64];
static unsigned removed_disk_full, dropped_events;

static void on_event(const RingEvent *e, void *ud) {
        if (e->type == RING_EVENT_REMOVED && streq(e->reason, vacuum_reason_to_string(VACUUM_REASON_DISK_FULL)))
                removed_disk_full++;
        if (e->type == RING_EVENT_DROPPED)
                dropped_events++;
}

/* Random symbols defeat compression, so the tmpfs fills after a few windows. */
static void add_noise(RingStore *rs, uint64_t *rng, uint64_t *t, size_t n) {
        static char names[32][40];
        Frame f[32];
        Sample s = { .comm = "noise", .pid = 7, .tid = 7, .frames = f, .n_frames = 32 };

        for (size_t i = 0; i < n; i++) {
                for (int k = 0; k < 32; k++) {
                        snprintf(names[k], sizeof names[k], "fn_%016llx", (unsigned long long) test_rand(rng));
                        f[k] = (Frame) { .symbol = names[k], .dso = "/bin/noise", .addr = test_rand(rng) };
                }
                s.t_ns = (*t += 1000000);
                assert_int_equal(ring_store_add_sample(rs, &s), 0);
        }
}

static void test_enospc_frees_unpinned_and_keeps_going(void **state) {
        WindowHeaderInfo info = test_header_info();
        RingOptions o = { .window_usec = 3600 * USEC_PER_SEC, .on_event = on_event };
        _cleanup_(ring_store_freep) RingStore *rs = NULL;
        char ring[128], pins[128], pinned_path[PATH_MAX] = "";
        uint64_t rng = 99, t = UINT64_C(9000000000000), now = now_usec(CLOCK_REALTIME);
        _cleanup_close_ int pins_fd = -EBADF;
        _cleanup_(ring_names_freep) char **linked = NULL;
        WindowInfo *w = NULL;
        size_t n;
        int r = 0;

        snprintf(ring, sizeof ring, "%s/ring", mnt);
        snprintf(pins, sizeof pins, "%s/pins", mnt);
        assert_int_equal(mkdir(pins, 0750), 0);
        pins_fd = open(pins, O_RDONLY | O_DIRECTORY);
        assert_int_equal(ring_store_open(ring, &o, &info, &rs), 0);

        /* window 0: pinned */
        add_noise(rs, &rng, &t, 200);
        assert_int_equal(ring_store_flush(rs), 0);
        assert_int_equal(ring_store_pin(rs, 0, UINT64_MAX, pins_fd, &linked), 0);
        snprintf(pinned_path, sizeof pinned_path, "%s/%s", pins, linked[0]);
        /* then windows until the disk has been full a few times */
        for (int i = 1; i < 200 && removed_disk_full < 3; i++) {
                now += 3600 * USEC_PER_SEC;
                assert_true(ring_store_rotate(rs, now) >= 0);
                add_noise(rs, &rng, &t, 200);
                r = ring_store_flush(rs);
                assert_true(r == 0 || r == -ENOSPC);
        }
        assert_true(removed_disk_full >= 3);
        assert_int_equal(access(pinned_path, F_OK), 0);

        /* the ring still holds the pinned window and the newest ones, all readable */
        rs = ring_store_free(rs);
        assert_int_equal(ring_list_windows(ring, true, &w, &n), 0);
        assert_true(n >= 2);
        for (size_t i = 0; i < n; i++)
                assert_false(w[i].corrupt);
        window_info_array_free(w, n);
}

static void test_enospc_with_nothing_to_free_drops_chunk(void **state) {
        WindowHeaderInfo info = test_header_info();
        RingOptions o = { .window_usec = 3600 * USEC_PER_SEC, .on_event = on_event };
        _cleanup_(ring_store_freep) RingStore *rs = NULL;
        char ring[128], filler[128];
        uint64_t rng = 7, t = UINT64_C(9000000000000);
        int fd, r = 0;

        snprintf(ring, sizeof ring, "%s/ring2", mnt);
        snprintf(filler, sizeof filler, "%s/filler", mnt);
        assert_int_equal(ring_store_open(ring, &o, &info, &rs), 0);
        /* fill the file system with something that is not ours */
        fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        {
                static char block[65536];
                while (write(fd, block, sizeof block) > 0)
                        ;
        }
        close(fd);
        dropped_events = 0;
        for (int i = 0; i < 20 && r == 0; i++) {
                add_noise(rs, &rng, &t, 200);
                r = ring_store_flush(rs);
        }
        assert_int_equal(r, -ENOSPC);
        assert_true(dropped_events >= 1);
        assert_true(ring_store_dropped_samples(rs) >= 200);
        /* space comes back: writing resumes */
        assert_int_equal(unlink(filler), 0);
        add_noise(rs, &rng, &t, 10);
        assert_int_equal(ring_store_flush(rs), 0);
}

/* Each test starts on an empty file system: what one leaves (a full ring) is not the next's concern. */
static int empty_mnt(void **state) {
        DIR *d = opendir(mnt);
        struct dirent *de;

        if (!d)
                return -1;
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        (void) rm_rf_at(dirfd(d), de->d_name, 8);
        closedir(d);
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_enospc_frees_unpinned_and_keeps_going, empty_mnt),
                cmocka_unit_test_teardown(test_enospc_with_nothing_to_free_drops_chunk, empty_mnt),
        };
        int r;

        strcpy(mnt, "/tmp/test-store-enospc.XXXXXX");
        if (!mkdtemp(mnt))
                return EXIT_FAILURE;
        if (geteuid() != 0 || mount("tmpfs", mnt, "tmpfs", 0, "size=2m,mode=0700") < 0) {
                fprintf(stderr, "SKIP: cannot mount a tmpfs on %s (needs root): %m\n", mnt);
                rmdir(mnt);
                return EXIT_TEST_SKIP;
        }
        r = cmocka_run_group_tests(tests, NULL, NULL);
        (void) umount2(mnt, MNT_DETACH);
        rmdir(mnt);
        return r;
}
