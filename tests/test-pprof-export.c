/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pprof export of a range of windows: a daemon restarted with another sampling frequency wrote
 * the windows of one range, and each sample weighs the period of its own window (1e9 / that
 * window's frequency), so the profile's CPU time is what the CPUs did in each window.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "basic/string-util.h"
#include "basic/time-util.h"
#include "pprof/pprof-export.h"
#include "pprof/profile.pb-c.h"
#include "store/ring-store.h"
#include "store/store-slice.h"
#include "store-test-util.h"
#include "tests.h"

/* Writes n samples from *t on, one every step_ns, into a ring opened with freq_hz. */
static void write_ring(const char *ring, uint32_t freq_hz, uint64_t *t, uint64_t step_ns, int n, uint64_t *rng) {
        WindowHeaderInfo info = test_header_info();
        RingOptions o = { .window_usec = 3600 * USEC_PER_SEC };
        RingStore *rs = NULL;

        info.freq_hz = freq_hz;
        assert_int_equal(ring_store_open(ring, &o, &info, &rs), 0);
        for (int i = 0; i < n; i++) {
                OwnedSample s;
                test_make_sample(rng, *t, &s);
                assert_int_equal(ring_store_add_sample(rs, &s.s), 0);
                *t += step_ns;
        }
        ring_store_free(rs);
}

static Perftools__Profiles__Profile *unpack_gzip(const char *buf, size_t len) {
        _cleanup_free_ uint8_t *plain = NULL;
        size_t allocated = 1 << 20;
        z_stream zs = { .next_in = (uint8_t *) buf, .avail_in = len };

        plain = malloc(allocated);
        assert_non_null(plain);
        assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
        zs.next_out = plain;
        zs.avail_out = allocated;
        assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
        size_t n = zs.total_out;
        inflateEnd(&zs);
        Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, n, plain);
        assert_non_null(p);
        return p;
}

static const Perftools__Profiles__Label *label(const Perftools__Profiles__Profile *p,
                                               const Perftools__Profiles__Sample *s, const char *key) {
        for (size_t i = 0; i < s->n_label; i++)
                if (streq(p->string_table[s->label[i]->key], key))
                        return s->label[i];
        return NULL;
}

static void test_each_sample_weighs_its_windows_period(void **state) {
        char tmpdir[] = "/tmp/test-pprof-export.XXXXXX", ring[128], cmd[160];
        uint64_t rng = 7, t = UINT64_C(7000000000000), restart_ns;
        WindowInfo *windows = NULL;
        size_t n_windows;
        char *buf = NULL;
        size_t len = 0;
        ExportStats st;

        assert_non_null(mkdtemp(tmpdir));
        snprintf(ring, sizeof ring, "%s/ring", tmpdir);
        /* 97 Hz, then (a restart with --freq 997) 997 Hz. */
        write_ring(ring, 97, &t, 10309278, 50, &rng);
        restart_ns = t;
        t += NSEC_PER_SEC;
        write_ring(ring, 997, &t, 1003009, 40, &rng);
        assert_int_equal(ring_list_windows(ring, false, &windows, &n_windows), 0);
        assert_int_equal(n_windows, 2);
        char *paths[2] = { windows[0].path, windows[1].path };
        assert_int_equal(windows[0].header.info.freq_hz + windows[1].header.info.freq_hz, 97 + 997);

        FILE *f = open_memstream(&buf, &len);
        assert_int_equal(export_pprof(paths, 2, 0, UINT64_MAX, NULL, f, &st), 0);
        fclose(f);
        export_stats_done(&st);
        Perftools__Profiles__Profile *p = unpack_gzip(buf, len);

        assert_int_equal(p->n_sample, 90);
        /* The profile's period: the newest window's. */
        assert_int_equal(p->period, 1003009);
        uint64_t before = 0, after = 0;
        int64_t cpu_ns = 0;
        for (size_t i = 0; i < p->n_sample; i++) {
                const Perftools__Profiles__Sample *s = p->sample[i];
                uint64_t t_utc = (uint64_t) label(p, s, "time")->num;
                uint64_t restart_utc = clock_map_perf_to_realtime(&windows[0].header.info.clock, restart_ns);

                assert_int_equal(s->n_value, 2);
                assert_int_equal(s->value[0], 1);
                if (t_utc < restart_utc) {
                        assert_int_equal(s->value[1], NSEC_PER_SEC / 97);
                        before++;
                } else {
                        assert_int_equal(s->value[1], NSEC_PER_SEC / 997);
                        after++;
                }
                cpu_ns += s->value[1];
        }
        assert_int_equal(before, 50);
        assert_int_equal(after, 40);
        assert_int_equal(cpu_ns, 50 * (NSEC_PER_SEC / 97) + 40 * (NSEC_PER_SEC / 997));

        perftools__profiles__profile__free_unpacked(p, NULL);
        free(buf);
        window_info_array_free(windows, n_windows);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        (void) system(cmd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_each_sample_weighs_its_windows_period),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
