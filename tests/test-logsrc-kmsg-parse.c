/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The /dev/kmsg record parser against a table of records: normal, continuation fragments, escaped
 * bytes, dictionaries, extra header fields, overlong and malformed input. Every malformed record
 * must be rejected with a reason, never half-parsed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/time-util.h"
#include "logsrc/logsrc-kmsg-parse.h"
#include "tests.h"

typedef struct GoodCase {
        const char *name;
        const char *input;
        int facility, level;
        uint64_t seq, usec;
        char flag;
        const char *message; /* decoded; compared over message_len */
        size_t message_len;
        const char *escaped;
        const char *dictionary;
} GoodCase;

static const GoodCase good_cases[] = {
        {"kernel info", "6,339,5140900,-;NET: Registered PF_INET6 protocol family\n", 0, 6, 339, 5140900,
         '-', "NET: Registered PF_INET6 protocol family", 40, "NET: Registered PF_INET6 protocol family",
         ""},
        {"user facility", "14,344,462014877,-;tprof-test hello\n", 1, 6, 344, 462014877, '-',
         "tprof-test hello", 16, "tprof-test hello", ""},
        {"continuation fragment", "4,12,700,c;more text\n", 0, 4, 12, 700, 'c', "more text", 9, "more text",
         ""},
        {"continued (old kernels)", "4,11,699,+;start of\n", 0, 4, 11, 699, '+', "start of", 8, "start of",
         ""},
        {"escapes", "3,5,10,-;a\\x0ab\\x5cc\\xc3\\xa9\\x00z\n", 0, 3, 5, 10, '-', "a\nb\\c\xc3\xa9\0z", 9,
         "a\\x0ab\\x5cc\\xc3\\xa9\\x00z", ""},
        {"dictionary", "6,900,1000,-;usb 1-1: new high-speed USB device\n SUBSYSTEM=usb\n DEVICE=c189:1\n",
         0, 6, 900, 1000, '-', "usb 1-1: new high-speed USB device", 34,
         "usb 1-1: new high-speed USB device", "SUBSYSTEM=usb\nDEVICE=c189:1\n"},
        {"extra header fields", "6,1,0,-,caller=T1;Command line: quiet\n", 0, 6, 1, 0, '-',
         "Command line: quiet", 19, "Command line: quiet", ""},
        {"empty message", "7,2,3,-;\n", 0, 7, 2, 3, '-', "", 0, "", ""},
        {"high facility", "191,4,5,-;local7 debug\n", 23, 7, 4, 5, '-', "local7 debug", 12, "local7 debug",
         ""},
        {"max sequence number", "6,18446744073709551615,0,-;x\n", 0, 6, UINT64_MAX, 0, '-', "x", 1, "x", ""},
        {"semicolon in message", "6,1,2,-;a;b=c\n", 0, 6, 1, 2, '-', "a;b=c", 5, "a;b=c", ""},
        {"raw utf-8 passes", "6,1,2,-;caf\xc3\xa9\n", 0, 6, 1, 2, '-', "caf\xc3\xa9", 5, "caf\xc3\xa9", ""},
};

static void test_parse_good_records(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(good_cases); i++) {
                const GoodCase *c = &good_cases[i];
                _cleanup_free_ KmsgRecord *k = calloc(1, sizeof(KmsgRecord));
                const char *reason = NULL;
                int r;

                assert_non_null(k);
                r = kmsg_record_parse(c->input, strlen(c->input), k, &reason);
                if (r < 0)
                        fail_msg("case '%s': %d (%s)", c->name, r, reason);
                assert_int_equal(k->facility, c->facility);
                assert_int_equal(k->level, c->level);
                assert_true(k->seq == c->seq);
                assert_true(k->usec == c->usec);
                assert_int_equal(k->flag, c->flag);
                if (k->message_len != c->message_len || memcmp(k->message, c->message, c->message_len) != 0)
                        fail_msg("case '%s': message differs", c->name);
                assert_int_equal(k->message[k->message_len], '\0');
                assert_int_equal(k->message_escaped_len, strlen(c->escaped));
                assert_memory_equal(k->message_escaped, c->escaped, k->message_escaped_len);
                assert_string_equal(k->dictionary, c->dictionary);
                assert_int_equal(k->dictionary_len, strlen(c->dictionary));
        }
}

typedef struct BadCase {
        const char *input;
        int error;
        const char *reason;
} BadCase;

static const BadCase bad_cases[] = {
        {"", -EBADMSG, "empty record"},
        {"hello world\n", -EBADMSG, "missing ';' after the header"},
        {"6,1,2,-\n;x\n", -EBADMSG, "missing ';' after the header"},
        {";x\n", -EBADMSG, "missing priority"},
        {",1,2,-;x\n", -EBADMSG, "missing priority"},
        {"x,1,2,-;x\n", -EBADMSG, "non-numeric priority"},
        {"-6,1,2,-;x\n", -EBADMSG, "non-numeric priority"},
        {"2048,1,2,-;x\n", -EBADMSG, "priority out of range"},
        {"99999999999999999999999,1,2,-;x\n", -EBADMSG, "priority out of range"},
        {"6;x\n", -EBADMSG, "missing sequence number"},
        {"6,,2,-;x\n", -EBADMSG, "missing sequence number"},
        {"6,1a,2,-;x\n", -EBADMSG, "non-numeric sequence number"},
        {"6, 1,2,-;x\n", -EBADMSG, "non-numeric sequence number"},
        {"6,18446744073709551616,2,-;x\n", -EBADMSG, "sequence number overflows"},
        {"6,1;x\n", -EBADMSG, "missing timestamp"},
        {"6,1,2;x\n", -EBADMSG, "missing flags"},
        {"6,1,,-;x\n", -EBADMSG, "missing timestamp"},
        {"6,1,2.5,-;x\n", -EBADMSG, "non-numeric timestamp"},
        {"6,1,18446744073709552,-;x\n", -EBADMSG, "timestamp overflows"},
        {"6,1,2,;x\n", -EBADMSG, "missing flags"},
        {"6,1,2,x;x\n", -EBADMSG, "unknown flags"},
        {"6,1,2,--;x\n", -EBADMSG, "unknown flags"},
        {"6,1,2,-;no newline", -EBADMSG, "missing newline after the message"},
        {"6,1,2,-;bad \\q escape\n", -EBADMSG, "bad escape in the message"},
        {"6,1,2,-;bad \\x4g escape\n", -EBADMSG, "bad escape in the message"},
        {"6,1,2,-;short \\x4\n", -EBADMSG, "bad escape in the message"},
        {"6,1,2,-;trailing \\\n", -EBADMSG, "bad escape in the message"},
        {"6,1,2,-;tab\there\n", -EBADMSG, "unescaped control byte in the message"},
        {"6,1,2,-;x\ny\n", -EBADMSG, "trailing data after the message"},
        {"6,1,2,-;x\n SUBSYSTEM=usb", -EBADMSG, "dictionary line without newline"},
        {"6,1,2,-;x\n SUBSYSTEM\n", -EBADMSG, "dictionary line without KEY="},
        {"6,1,2,-;x\n =usb\n", -EBADMSG, "dictionary line without KEY="},
        {"6,1,2,-;x\n SUB SYSTEM=usb\n", -EBADMSG, "bad dictionary key"},
        {"6,1,2,-;x\n DEVICE=a\tb\n", -EBADMSG, "unescaped control byte in the dictionary"},
};

static void test_parse_rejects_malformed(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(bad_cases); i++) {
                const BadCase *c = &bad_cases[i];
                _cleanup_free_ KmsgRecord *k = calloc(1, sizeof(KmsgRecord));
                const char *reason = NULL;
                int r;

                r = kmsg_record_parse(c->input, strlen(c->input), k, &reason);
                if (r != c->error || !reason || !streq(reason, c->reason))
                        fail_msg("case #%zu '%s': got %d '%s', expected %d '%s'", i, c->input, r,
                                 reason ?: "(null)", c->error, c->reason);
        }
}

static void test_parse_raw_nul_is_rejected(void **state) {
        static const char input[] = "6,1,2,-;a\0b\n";
        _cleanup_free_ KmsgRecord *k = calloc(1, sizeof(KmsgRecord));
        const char *reason = NULL;

        assert_int_equal(kmsg_record_parse(input, sizeof input - 1, k, &reason), -EBADMSG);
        assert_string_equal(reason, "unescaped control byte in the message");
}

static void test_parse_bounds(void **state) {
        _cleanup_free_ KmsgRecord *k = calloc(1, sizeof(KmsgRecord));
        _cleanup_free_ char *buf = malloc(KMSG_RECORD_BYTES_MAX + 64);
        const char *reason = NULL;
        size_t n;

        /* A message of exactly LOG_MESSAGE_BYTES_MAX bytes passes ... */
        n = (size_t) sprintf(buf, "6,1,2,-;");
        memset(buf + n, 'm', LOG_MESSAGE_BYTES_MAX);
        n += LOG_MESSAGE_BYTES_MAX;
        buf[n++] = '\n';
        assert_int_equal(kmsg_record_parse(buf, n, k, &reason), 0);
        assert_int_equal(k->message_len, LOG_MESSAGE_BYTES_MAX);

        /* ... one more is rejected, not truncated. */
        n = (size_t) sprintf(buf, "6,1,2,-;");
        memset(buf + n, 'm', LOG_MESSAGE_BYTES_MAX + 1);
        n += LOG_MESSAGE_BYTES_MAX + 1;
        buf[n++] = '\n';
        assert_int_equal(kmsg_record_parse(buf, n, k, &reason), -EMSGSIZE);
        assert_string_equal(reason, "message too long");

        /* A dictionary over its bound. */
        n = (size_t) sprintf(buf, "6,1,2,-;x\n");
        while (n < KMSG_DICTIONARY_BYTES_MAX + 200)
                n += (size_t) sprintf(buf + n, " DEVICE=+pci:0000:00:1f.0\n");
        assert_int_equal(kmsg_record_parse(buf, n, k, &reason), -EMSGSIZE);
        assert_string_equal(reason, "dictionary too long");

        /* The whole record over its bound, before anything is looked at. */
        memset(buf, 'x', KMSG_RECORD_BYTES_MAX + 1);
        assert_int_equal(kmsg_record_parse(buf, KMSG_RECORD_BYTES_MAX + 1, k, &reason), -EMSGSIZE);
        assert_string_equal(reason, "record too long");
}

static void test_to_log_record(void **state) {
        static const char kernel[] = "3,77,1500000,-;nvme nvme0: I/O 12 QID 3 timeout\n SUBSYSTEM=nvme\n";
        static const char user[] = "14,78,1600000,-;tprof-test hello\n";
        _cleanup_free_ KmsgRecord *k = calloc(1, sizeof(KmsgRecord));
        ClockMap m = {.method = CLOCK_MAP_ASSUMED, .realtime_minus_mono_ns = 1000 * (int64_t) NSEC_PER_SEC};
        LogRecord rec;

        assert_int_equal(kmsg_record_parse(kernel, sizeof kernel - 1, k, NULL), 0);
        kmsg_record_to_log_record(k, &m, &rec);
        assert_int_equal(rec.source, LOG_SOURCE_KMSG);
        assert_true(rec.kernel_origin);
        assert_int_equal(rec.facility, 0);
        assert_int_equal(rec.priority, 3);
        assert_true(rec.seq == 77);
        assert_true(rec.t_ns == UINT64_C(1500000000));
        assert_true(rec.source_usec == 1500000);
        assert_true(rec.realtime_usec == UINT64_C(1001500000));
        assert_string_equal(rec.message, "nvme nvme0: I/O 12 QID 3 timeout");
        assert_string_equal(rec.dictionary, "SUBSYSTEM=nvme\n");
        assert_null(rec.unit);
        assert_int_equal(rec.uid, (uid_t) -1);

        assert_int_equal(kmsg_record_parse(user, sizeof user - 1, k, NULL), 0);
        kmsg_record_to_log_record(k, NULL, &rec);
        assert_false(rec.kernel_origin);
        assert_int_equal(rec.facility, 1);
        assert_true(rec.realtime_usec == 0);
        assert_null(rec.dictionary);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_good_records),
                cmocka_unit_test(test_parse_rejects_malformed),
                cmocka_unit_test(test_parse_raw_nul_is_rejected),
                cmocka_unit_test(test_parse_bounds),
                cmocka_unit_test(test_to_log_record),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
