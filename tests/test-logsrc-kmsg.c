/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kmsg follower in recorded-file mode, unprivileged: a canned file with dictionaries, a
 * continuation fragment, escapes, extra header fields, garbage and sequence gaps
 * (tests/data/kmsg/recorded.kmsg), and a generated file far larger than one batch. The live /dev/kmsg
 * paths (position, EPIPE, origin) are covered by integration/test-logsrc-kmsg.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "logsrc/logsrc-kmsg-parse.h"
#include "logsrc/logsrc-kmsg.h"
#include "tests.h"

typedef struct Seen {
        size_t n;
        uint64_t seq[8192];
        bool kernel[8192];
        char *message[16];
        char *dictionary[16];
        bool ended;
        int end_error;
} Seen;

static int on_record(const LogRecord *rec, void *userdata) {
        Seen *s = userdata;

        assert_int_equal(rec->source, LOG_SOURCE_KMSG);
        if (s->n < ELEMENTSOF(s->message)) {
                s->message[s->n] = strndup(rec->message, rec->message_len);
                s->dictionary[s->n] = rec->dictionary ? strdup(rec->dictionary) : NULL;
        }
        if (s->n < ELEMENTSOF(s->seq)) {
                s->seq[s->n] = rec->seq;
                s->kernel[s->n] = rec->kernel_origin;
        }
        s->n++;
        return 0;
}

static void on_end(KmsgSource *k, int error, void *userdata) {
        Seen *s = userdata;

        s->ended = true;
        s->end_error = error;
        assert_true(kmsg_source_at_end(k));
}

static void seen_done(Seen *s) {
        for (size_t i = 0; i < ELEMENTSOF(s->message); i++) {
                free(s->message[i]);
                free(s->dictionary[i]);
        }
}

static void replay(const char *path, Seen *s, LogSourceStats *ret_stats) {
        _cleanup_(kmsg_source_freep) KmsgSource *k = NULL;
        sd_event *e = NULL;
        KmsgSourceOptions o = {
                .path = path,
                .state_dir = "/nonexistent/never/written", /* file mode keeps no position */
                .on_end = on_end,
        };

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(kmsg_source_new(e, &o, on_record, s, &k), 0);
        while (!s->ended)
                assert_true(sd_event_run(e, UINT64_MAX) >= 0);
        kmsg_source_get_stats(k, ret_stats);
        k = kmsg_source_free(k);
        sd_event_unref(e);
}

static void test_recorded_file_replays_once(void **state) {
        const char *root = getenv("TPROF_SOURCE_ROOT") ?: "..";
        static const uint64_t want_seq[] = {100, 101, 102, 103, 104, 105, 110, 111, 112, 114};
        static const bool want_kernel[] = {true, true, true, true, false, true, true, false, true, true};
        _cleanup_free_ char *path = NULL;
        Seen s = {};
        LogSourceStats st;

        assert_true(asprintf(&path, "%s/tests/data/kmsg/recorded.kmsg", root) > 0);
        replay(path, &s, &st);

        assert_int_equal(s.end_error, 0);
        assert_int_equal(s.n, ELEMENTSOF(want_seq));
        for (size_t i = 0; i < ELEMENTSOF(want_seq); i++) {
                assert_true(s.seq[i] == want_seq[i]);
                assert_int_equal(s.kernel[i], want_kernel[i]);
        }
        assert_string_equal(s.message[1], "ena 0000:00:05.0 eth0: Trigger reset is on");
        assert_string_equal(s.dictionary[1], "SUBSYSTEM=pci\nDEVICE=+pci:0000:00:05.0\n");
        assert_string_equal(s.message[2], " continued fragment");
        assert_string_equal(s.message[3], "escaped\nnewline and tab\tand backslash\\ done");
        assert_string_equal(s.message[5], "with caller field");
        assert_string_equal(s.dictionary[8], "SUBSYSTEM=nvme\n");

        assert_true(st.records == 10);
        assert_true(st.malformed == 2); /* the garbage line and the bad flags */
        /* 106-109 never there; 113 malformed, so it shows as a gap too. */
        assert_true(st.lost == 5);
        assert_true(st.overruns == 0);
        seen_done(&s);
}

static void test_large_file_with_gap_and_overlong_line(void **state) {
        char path[] = "/tmp/test-logsrc-kmsg-XXXXXX";
        _cleanup_fclose_ FILE *f = NULL;
        Seen s = {};
        LogSourceStats st;
        int fd;

        fd = mkstemp(path);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        assert_non_null(f);
        for (unsigned i = 0; i < 3000; i++) {
                if (i >= 1000 && i < 1010)
                        continue; /* a gap of 10 */
                fprintf(f, "6,%u,%u,-;record %u\n", i, i * 10, i);
                if (i == 2000) {
                        /* One line longer than any record may be: dropped as malformed, not split. */
                        fputs("6,99999,1,-;", f);
                        for (unsigned j = 0; j < KMSG_RECORD_BYTES_MAX; j++)
                                fputc('x', f);
                        fputc('\n', f);
                }
        }
        assert_int_equal(fflush(f), 0);

        replay(path, &s, &st);
        (void) unlink(path);

        assert_int_equal(s.end_error, 0);
        assert_int_equal(s.n, 2990);
        assert_true(st.records == 2990);
        assert_true(st.lost == 10);
        assert_true(st.malformed == 1);
        for (size_t i = 1; i < s.n; i++)
                assert_true(s.seq[i] > s.seq[i - 1]);
        seen_done(&s);
}

static void test_missing_file_fails(void **state) {
        KmsgSource *k = NULL;
        sd_event *e = NULL;
        Seen s = {};
        KmsgSourceOptions o = {.path = "/nonexistent/kmsg"};

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(kmsg_source_new(e, &o, on_record, &s, &k), -ENOENT);
        assert_null(k);
        sd_event_unref(e);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_recorded_file_replays_once),
                cmocka_unit_test(test_large_file_with_gap_and_overlong_line),
                cmocka_unit_test(test_missing_file_fails),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
