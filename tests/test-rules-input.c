/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules-input.c: each text form becomes the LogRecord the daemon's own sources would build, and
 * lines that only look alike stay plain text.
 */
#include <string.h>

#include "rules/rules-input.h"
#include "tests.h"

static void test_line_forms_table(void **state) {
        static const struct {
                const char *line;
                LineFormat format;
                LogSource source;
                bool kernel_origin;
                int priority, facility;
                const char *message;
                const char *identifier;
        } cases[] = {
                { "ena 0000:00:05.0 eth0: Trigger reset is on", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1,
                  "ena 0000:00:05.0 eth0: Trigger reset is on", NULL },
                { "[  123.456789] INFO: task x:1 blocked", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1,
                  "INFO: task x:1 blocked", NULL },
                { "[123.4]no space", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "no space", NULL },
                { "[not a stamp] text", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "[not a stamp] text", NULL },
                { "3,1234,5678901,-;nvme nvme0: I/O 1 QID 2 timeout, aborting", LINE_FORMAT_KMSG, LOG_SOURCE_KMSG,
                  true, 3, 0, "nvme nvme0: I/O 1 QID 2 timeout, aborting", NULL },
                { "14,55,66,-;user wrote this", LINE_FORMAT_KMSG, LOG_SOURCE_KMSG, false, 6, 1, "user wrote this",
                  NULL },
                { "6,339,5140900,-,caller=T1;with caller", LINE_FORMAT_KMSG, LOG_SOURCE_KMSG, true, 6, 0,
                  "with caller", NULL },
                { "4,7,8,c;tab\\x09and\\x5cslash", LINE_FORMAT_KMSG, LOG_SOURCE_KMSG, true, 4, 0,
                  "tab\tand\\slash", NULL },
                /* The kernel never writes a bad escape: tprofd's kmsg parser refuses such a record, so
                 * the tester does not read it as one either. */
                { "4,7,8,c;bad \\xZZ escape", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1,
                  "4,7,8,c;bad \\xZZ escape", NULL },
                { " SUBSYSTEM=pci", LINE_FORMAT_SKIP, 0, false, 0, 0, NULL, NULL },
                { "-- Boot 0123456789abcdef --", LINE_FORMAT_SKIP, 0, false, 0, 0, NULL, NULL },
                { "12 apples, 3 pears", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "12 apples, 3 pears", NULL },
                { "Nov 21 14:30:00 host kernel: Out of memory: Killed process 1 (x)", LINE_FORMAT_JOURNAL,
                  LOG_SOURCE_TEXT, true, -1, 0, "Out of memory: Killed process 1 (x)", "kernel" },
                { "Nov  1 04:05:06 host myapp[4242]: Out of memory", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false,
                  -1, -1, "Out of memory", "myapp" },
                { "Nov 21 14:30:00.123456 h kubelet[7]: PLEG is not healthy", LINE_FORMAT_JOURNAL,
                  LOG_SOURCE_JOURNAL, false, -1, -1, "PLEG is not healthy", "kubelet" },
                { "2026-11-21T14:30:00+0000 h systemd[1]: Started x.", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL,
                  false, -1, -1, "Started x.", "systemd" },
                { "Nov 21 is a date, not a log line", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1,
                  "Nov 21 is a date, not a log line", NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char buf[256];
                LogRecord rec;
                size_t len = strlen(cases[i].line);

                memcpy(buf, cases[i].line, len + 1);
                LineFormat f = rules_input_parse_line(buf, len, &rec);
                if (f != cases[i].format)
                        fail_msg("'%s': format %s, expected %s", cases[i].line, line_format_to_string(f),
                                 line_format_to_string(cases[i].format));
                if (f == LINE_FORMAT_SKIP)
                        continue;
                assert_int_equal(rec.source, cases[i].source);
                assert_int_equal(rec.kernel_origin, cases[i].kernel_origin);
                assert_int_equal(rec.priority, cases[i].priority);
                assert_int_equal(rec.facility, cases[i].facility);
                assert_int_equal(rec.message_len, strlen(cases[i].message));
                assert_memory_equal(rec.message, cases[i].message, rec.message_len);
                if (cases[i].identifier)
                        assert_string_equal(rec.identifier, cases[i].identifier);
                else
                        assert_null(rec.identifier);
                /* The text forms never invent trusted journal fields. */
                assert_null(rec.unit);
                assert_null(rec.comm);
                assert_int_equal(rec.uid, (uid_t) -1);
        }
}

static void test_kmsg_fields(void **state) {
        char buf[] = "6,1234,5678901,-;hello";
        LogRecord rec;

        assert_int_equal(rules_input_parse_line(buf, strlen(buf), &rec), LINE_FORMAT_KMSG);
        assert_int_equal(rec.seq, 1234);
        assert_int_equal(rec.source_usec, 5678901);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_line_forms_table),
                cmocka_unit_test(test_kmsg_fields),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
