/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Exports of a range that spans a window boundary: the folded export equals folding the expected
 * samples, and the perf-script export has the shape VIEWERS.md asks for (event line at column 0,
 * tab-indented frames ending in "(DSO)", a blank line after every sample, times in order, one
 * event, no whole-second last timestamp). Empty and single-sample ranges behave as documented.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/time-util.h"
#include "profile/profile-fold.h"
#include "store/ring-store.h"
#include "store/store-export.h"
#include "store-test-util.h"
#include "tests.h"

static char tmpdir[64];
static Collected expect;
static WindowInfo *windows;
static size_t n_windows;
static char **paths;

static int setup(void **state) {
        WindowHeaderInfo info = test_header_info();
        RingOptions o = { .window_usec = 10 * USEC_PER_SEC };
        RingStore *rs = NULL;
        char ring[128];
        uint64_t rng = 51, t = UINT64_C(7000000000000), now = now_usec(CLOCK_REALTIME), boundary;

        strcpy(tmpdir, "/tmp/test-store-export.XXXXXX");
        assert_non_null(mkdtemp(tmpdir));
        snprintf(ring, sizeof ring, "%s/ring", tmpdir);
        assert_int_equal(ring_store_open(ring, &o, &info, &rs), 0);
        boundary = (now / (10 * USEC_PER_SEC) + 1) * 10 * USEC_PER_SEC;
        for (int i = 0; i < 2000; i++) {
                OwnedSample s;
                if (i == 1000)
                        assert_int_equal(ring_store_rotate(rs, boundary), 1);
                test_make_sample(&rng, t, &s);
                t += 10309278;
                assert_int_equal(ring_store_add_sample(rs, &s.s), 0);
                collect_handler(&s.s, &expect);
                if (i % 300 == 299)
                        assert_int_equal(ring_store_flush(rs), 0);
        }
        ring_store_free(rs);
        assert_int_equal(ring_list_windows(ring, false, &windows, &n_windows), 0);
        assert_int_equal(n_windows, 2);
        paths = calloc(n_windows, sizeof(char *));
        for (size_t i = 0; i < n_windows; i++)
                paths[i] = windows[i].path;
        return 0;
}

static int teardown(void **state) {
        char cmd[128];
        free(paths);
        window_info_array_free(windows, n_windows);
        collected_done(&expect);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        (void) system(cmd);
        return 0;
}

static char *capture_folded(uint64_t from, uint64_t to, int *ret_r) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ExportStats st;

        *ret_r = export_folded(paths, n_windows, from, to, f, &st);
        fclose(f);
        export_stats_done(&st);
        return buf;
}

static void test_folded_across_boundary(void **state) {
        _cleanup_(folder_freep) Folder *f = folder_new();
        size_t lo = 700, hi = 1400;
        char *want = NULL, *got;
        size_t len = 0;
        FILE *mf = open_memstream(&want, &len);
        int r;

        for (size_t i = lo; i <= hi; i++)
                assert_int_equal(folder_add(f, &expect.v[i].s, 1), 0);
        assert_int_equal(folder_write(f, mf), 0);
        fclose(mf);
        got = capture_folded(expect.v[lo].s.t_ns, expect.v[hi].s.t_ns, &r);
        assert_int_equal(r, 0);
        assert_string_equal(got, want);
        free(got);
        free(want);
}

static void test_folded_empty_range(void **state) {
        int r;
        char *got = capture_folded(1, 2, &r);
        assert_int_equal(r, -ENODATA);
        assert_string_equal(got, "");
        free(got);
}

static char *capture_script(uint64_t from, uint64_t to, ExportStats *st, int *ret_r) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        *ret_r = export_perf_script(paths, n_windows, from, to, NULL, f, st);
        fclose(f);
        return buf;
}

static void test_perf_script_shape(void **state) {
        size_t lo = 900, hi = 1100, samples = 0;
        ExportStats st;
        regex_t ev, fr;
        double prev = -1;
        bool expect_event = true, in_header = true;
        char *buf, *line, *save = NULL;
        int r;

        buf = capture_script(expect.v[lo].s.t_ns, expect.v[hi].s.t_ns, &st, &r);
        assert_int_equal(r, 0);
        assert_int_equal(st.slice.samples, hi - lo + 1);
        assert_int_equal(st.slice.windows, 2);
        export_stats_done(&st);
        assert_int_equal(regcomp(&ev, "^[^ \t][^ ]* [0-9]+/[0-9]+ \\[[0-9]{3}\\] [0-9]+\\.[0-9]{6}: [0-9]+ cpu-clock:$",
                                 REG_EXTENDED | REG_NOSUB), 0);
        assert_int_equal(regcomp(&fr, "^\t[0-9a-f]+ [^ ].* \\([^ ()]+\\)$", REG_EXTENDED | REG_NOSUB), 0);

        /* strsep keeps empty lines, which are the point here */
        for (char *p = buf; (line = strsep(&p, "\n"));) {
                if (!p)
                        break; /* after the final newline */
                if (in_header && line[0] == '#')
                        continue;
                in_header = false;
                if (expect_event) {
                        double ts;
                        assert_int_equal(regexec(&ev, line, 0, NULL, 0), 0);
                        ts = strtod(strrchr(line, ']') + 2, NULL);
                        assert_true(ts >= prev);
                        prev = ts;
                        samples++;
                        expect_event = false;
                } else if (line[0] == '\0')
                        expect_event = true;
                else
                        assert_int_equal(regexec(&fr, line, 0, NULL, 0), 0);
        }
        assert_true(expect_event); /* the last sample ended with its blank line */
        assert_int_equal(samples, hi - lo + 1);
        (void) save;
        regfree(&ev);
        regfree(&fr);
        free(buf);
}

static void test_perf_script_names(void **state) {
        ExportStats st;
        char *buf;
        int r;

        buf = capture_script(expect.v[0].s.t_ns, expect.v[1999].s.t_ns, &st, &r);
        assert_int_equal(r, 0);
        export_stats_done(&st);
        /* comm blanks become '_', one-letter comms get a '_', deleted DSOs lose the suffix */
        assert_non_null(strstr(buf, "\nmy_prog "));
        assert_null(strstr(buf, "\nmy prog "));
        assert_non_null(strstr(buf, "\nx_ "));
        assert_null(strstr(buf, "(deleted)"));
        assert_non_null(strstr(buf, " [unknown] ("));
        assert_null(strstr(buf, "[unknown]+0x"));
        free(buf);
}

static void test_perf_script_last_timestamp_not_whole(void **state) {
        WindowHeaderInfo info = test_header_info();
        RingStore *rs = NULL;
        char ring[128], *buf = NULL, *p;
        size_t len = 0;
        Frame fr = { .symbol = "main", .dso = "/usr/bin/x", .addr = 0x401000, .offset = 0x10 };
        Sample s = { .comm = "whole", .pid = 1, .tid = 1, .period = 0, .n_frames = 1, .frames = &fr };
        WindowInfo *w = NULL;
        size_t n;
        FILE *f;
        ExportStats st;

        snprintf(ring, sizeof ring, "%s/whole", tmpdir);
        assert_int_equal(ring_store_open(ring, NULL, &info, &rs), 0);
        s.t_ns = 5 * NSEC_PER_SEC;
        assert_int_equal(ring_store_add_sample(rs, &s), 0);
        s.t_ns = 6 * NSEC_PER_SEC;
        assert_int_equal(ring_store_add_sample(rs, &s), 0);
        ring_store_free(rs);
        assert_int_equal(ring_list_windows(ring, false, &w, &n), 0);
        assert_int_equal(n, 1);

        f = open_memstream(&buf, &len);
        assert_int_equal(export_perf_script(&w[0].path, 1, 0, UINT64_MAX, NULL, f, &st), 0);
        fclose(f);
        export_stats_done(&st);
        p = strchr(buf, '\n') + 1; /* after the '#' line */
        assert_string_equal(p, "whole 1/1 [000] 5.000000: 1 cpu-clock:\n"
                               "\t401000 main+0x10 (/usr/bin/x)\n"
                               "\n"
                               "whole 1/1 [000] 6.000001: 1 cpu-clock:\n"
                               "\t401000 main+0x10 (/usr/bin/x)\n"
                               "\n");
        free(buf);

        /* a single sample is written all the same; the caller warns */
        buf = NULL;
        f = open_memstream(&buf, &len);
        assert_int_equal(export_perf_script(&w[0].path, 1, 0, 5 * NSEC_PER_SEC, NULL, f, &st), 0);
        fclose(f);
        assert_int_equal(st.slice.samples, 1);
        export_stats_done(&st);
        assert_non_null(strstr(buf, " 5.000001: 1 cpu-clock:\n"));
        free(buf);
        window_info_array_free(w, n);
}

/* Windows recorded with another event (tprofd restarted with --event) are left out of a perf
 * script, which holds one event, and counted; asked for, that event's alone are written. */
static void test_perf_script_one_event(void **state) {
        static const char *const events[] = { "cpu-clock", "task-clock" };
        Frame fr = { .symbol = "main", .dso = "/usr/bin/x", .addr = 0x401000, .offset = 0x10 };
        Sample s = { .comm = "ev", .pid = 1, .tid = 1, .period = 0, .n_frames = 1, .frames = &fr };
        WindowInfo *w[2] = {};
        size_t n[2];
        char *p[2];

        for (unsigned e = 0; e < 2; e++) {
                WindowHeaderInfo info = test_header_info();
                RingStore *rs = NULL;
                char ring[128];

                info.event = events[e];
                snprintf(ring, sizeof ring, "%s/event-%u", tmpdir, e);
                assert_int_equal(ring_store_open(ring, NULL, &info, &rs), 0);
                for (unsigned i = 0; i < 3 - e; i++) { /* 3 samples of cpu-clock, then 2 of task-clock */
                        s.t_ns = (10 * e + i + 1) * NSEC_PER_SEC;
                        assert_int_equal(ring_store_add_sample(rs, &s), 0);
                }
                ring_store_free(rs);
                assert_int_equal(ring_list_windows(ring, false, &w[e], &n[e]), 0);
                assert_int_equal(n[e], 1);
                p[e] = w[e][0].path;
        }

        for (unsigned e = 0; e < 3; e++) {
                const char *want = e == 2 ? "task-clock" : "cpu-clock"; /* NULL: the first window's */
                char *buf = NULL, *line;
                size_t len = 0, samples = 0;
                FILE *f = open_memstream(&buf, &len);
                ExportStats st;

                assert_int_equal(export_perf_script(p, 2, 0, UINT64_MAX, e == 0 ? NULL : want, f, &st), 0);
                fclose(f);
                assert_int_equal(st.slice.samples, e == 2 ? 2 : 3);
                assert_int_equal(st.skipped_other_event, e == 2 ? 3 : 2);
                export_stats_done(&st);
                for (line = buf; (line = strstr(line, ": 1 ")); line++) {
                        assert_true(strneq(line + 4, want, strlen(want)));
                        samples++;
                }
                assert_int_equal(samples, e == 2 ? 2 : 3);
                free(buf);
        }
        for (unsigned e = 0; e < 2; e++)
                window_info_array_free(w[e], n[e]);
}

static void test_perf_script_empty_range(void **state) {
        ExportStats st;
        char *buf;
        int r;

        buf = capture_script(1, 2, &st, &r);
        assert_int_equal(r, -ENODATA);
        assert_string_equal(buf, "");
        export_stats_done(&st);
        free(buf);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_folded_across_boundary),
                cmocka_unit_test(test_folded_empty_range),
                cmocka_unit_test(test_perf_script_shape),
                cmocka_unit_test(test_perf_script_names),
                cmocka_unit_test(test_perf_script_last_timestamp_not_whole),
                cmocka_unit_test(test_perf_script_empty_range),
                cmocka_unit_test(test_perf_script_one_event),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
