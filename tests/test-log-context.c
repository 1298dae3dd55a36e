/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The log context buffer: deep copies, the three bounds (lines, bytes, age) kept per source, the
 * journal admission setting, and range queries in time order across out-of-order arrivals from two
 * sources.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logsrc/log-context.h"
#include "tests.h"

static LogRecord make(LogSource source, uint64_t t_ns, const char *msg) {
        LogRecord r = LOG_RECORD_NULL;

        r.source = source;
        r.t_ns = t_ns;
        r.message = msg;
        r.message_len = strlen(msg);
        r.message_escaped = msg;
        r.message_escaped_len = r.message_len;
        return r;
}

typedef struct Collected {
        size_t n;
        uint64_t t[64];
        char msg[64][32];
        int stop_after;
} Collected;

static int collect(const LogRecord *rec, void *userdata) {
        Collected *c = userdata;

        if (c->stop_after > 0 && (int) c->n >= c->stop_after)
                return -ECANCELED;
        c->t[c->n] = rec->t_ns;
        snprintf(c->msg[c->n], sizeof c->msg[c->n], "%.*s", (int) rec->message_len, rec->message);
        c->n++;
        return 0;
}

static void test_dup_is_deep_and_complete(void **state) {
        char msg[] = "binary\0part";
        char esc[] = "binary\\x00part";
        char unit[] = "kubelet.service";
        _cleanup_(log_record_freep) LogRecord *copy = NULL;
        LogRecord r = make(LOG_SOURCE_JOURNAL, 5, "x");

        r.message = msg;
        r.message_len = sizeof msg - 1;
        r.message_escaped = esc;
        r.message_escaped_len = strlen(esc);
        r.unit = unit;
        r.comm = "kubelet";
        r.uid = 0;
        r.pid = 77;
        r.cursor = "s=1;i=2";

        copy = log_record_dup(&r);
        assert_non_null(copy);
        memset(msg, 'X', sizeof msg - 1);
        memset(unit, 'Y', sizeof unit - 1);
        assert_int_equal(copy->message_len, 11);
        assert_memory_equal(copy->message, "binary\0part", 11);
        assert_int_equal(copy->message[11], '\0');
        assert_string_equal(copy->message_escaped, "binary\\x00part");
        assert_string_equal(copy->unit, "kubelet.service");
        assert_string_equal(copy->comm, "kubelet");
        assert_string_equal(copy->cursor, "s=1;i=2");
        assert_null(copy->exe);
        assert_null(copy->dictionary);
        assert_int_equal(copy->pid, 77);
        assert_true(log_record_dup_size(copy) == log_record_dup_size(&r));

        /* When the escaped form is the message itself, the copy shares one string. */
        LogRecord same = make(LOG_SOURCE_JOURNAL, 1, "plain");
        _cleanup_(log_record_freep) LogRecord *c2 = log_record_dup(&same);
        assert_non_null(c2);
        assert_ptr_equal(c2->message, c2->message_escaped);
        assert_true(log_record_dup_size(&same) == sizeof(LogRecord) + 6);
}

static void test_line_bound_evicts_oldest(void **state) {
        _cleanup_(log_context_freep) LogContext *c = NULL;
        LogContextLimits l = {.lines_max = 3};
        Collected got = {};
        char buf[16];

        assert_int_equal(log_context_new(&l, &c), 0);
        for (unsigned i = 1; i <= 5; i++) {
                LogRecord r;

                snprintf(buf, sizeof buf, "m%u", i);
                r = make(LOG_SOURCE_KMSG, i * 1000, buf);
                assert_int_equal(log_context_add(c, &r), 0);
                assert_true(log_context_lines(c) <= 3);
        }
        assert_int_equal(log_context_lines(c), 3);
        assert_true(log_context_evicted(c) == 2);
        assert_int_equal(log_context_range(c, 0, UINT64_MAX, collect, &got), 3);
        assert_string_equal(got.msg[0], "m3");
        assert_string_equal(got.msg[2], "m5");
}

static void test_byte_bound_evicts_oldest(void **state) {
        _cleanup_(log_context_freep) LogContext *c = NULL;
        LogRecord r = make(LOG_SOURCE_KMSG, 1, "0123456789");
        size_t one = log_record_dup_size(&r);
        LogContextLimits l = {.bytes_max = one * 4 + one / 2};
        LogRecord big;
        char *huge;

        assert_int_equal(log_context_new(&l, &c), 0);
        for (unsigned i = 0; i < 10; i++) {
                r.t_ns = i + 1;
                assert_int_equal(log_context_add(c, &r), 0);
                assert_true(log_context_bytes(c) <= l.bytes_max);
        }
        assert_int_equal(log_context_lines(c), 4);
        assert_true(log_context_bytes(c) == 4 * one);

        /* A single record larger than the whole budget is refused, the rest stays. */
        huge = malloc(l.bytes_max + 1);
        assert_non_null(huge);
        memset(huge, 'h', l.bytes_max);
        huge[l.bytes_max] = '\0';
        big = make(LOG_SOURCE_KMSG, 100, huge);
        assert_int_equal(log_context_add(c, &big), -E2BIG);
        assert_int_equal(log_context_lines(c), 4);
        free(huge);
}

static void test_age_bound(void **state) {
        _cleanup_(log_context_freep) LogContext *c = NULL;
        LogContextLimits l = {.age_ns_max = 1000};
        Collected got = {};
        LogRecord r;

        assert_int_equal(log_context_new(&l, &c), 0);
        r = make(LOG_SOURCE_JOURNAL, 0, "unmapped");
        assert_int_equal(log_context_add(c, &r), 0);
        r = make(LOG_SOURCE_KMSG, 10000, "old");
        assert_int_equal(log_context_add(c, &r), 0);
        r = make(LOG_SOURCE_KMSG, 10500, "mid");
        assert_int_equal(log_context_add(c, &r), 0);
        assert_int_equal(log_context_lines(c), 2); /* the unmapped record was oldest */
        r = make(LOG_SOURCE_KMSG, 11200, "new");
        assert_int_equal(log_context_add(c, &r), 0);
        assert_int_equal(log_context_lines(c), 2); /* "old" is more than 1000 ns before "new" */
        assert_int_equal(log_context_range(c, 0, UINT64_MAX, collect, &got), 2);
        assert_string_equal(got.msg[0], "mid");
        assert_string_equal(got.msg[1], "new");
}

static void test_range_is_in_time_order(void **state) {
        _cleanup_(log_context_freep) LogContext *c = NULL;
        static const struct {
                LogSource s;
                uint64_t t;
                const char *m;
        } in[] = {
                {LOG_SOURCE_KMSG, 100, "k100"},    {LOG_SOURCE_KMSG, 300, "k300"},
                {LOG_SOURCE_JOURNAL, 200, "j200"}, {LOG_SOURCE_JOURNAL, 150, "j150"},
                {LOG_SOURCE_KMSG, 400, "k400"},    {LOG_SOURCE_JOURNAL, 300, "j300"},
                {LOG_SOURCE_KMSG, 500, "k500"},
        };
        Collected got = {}, part = {}, stop = {.stop_after = 2};

        assert_int_equal(log_context_new(NULL, &c), 0);
        for (size_t i = 0; i < ELEMENTSOF(in); i++) {
                LogRecord r = make(in[i].s, in[i].t, in[i].m);
                assert_int_equal(log_context_add(c, &r), 0);
        }

        assert_int_equal(log_context_range(c, 0, UINT64_MAX, collect, &got), 7);
        for (size_t i = 1; i < got.n; i++)
                assert_true(got.t[i - 1] <= got.t[i]);
        assert_string_equal(got.msg[0], "k100");
        assert_string_equal(got.msg[1], "j150");
        assert_string_equal(got.msg[3], "k300"); /* equal times keep arrival order */
        assert_string_equal(got.msg[4], "j300");

        /* Inclusive bounds. */
        assert_int_equal(log_context_range(c, 150, 300, collect, &part), 4);
        assert_string_equal(part.msg[0], "j150");
        assert_string_equal(part.msg[3], "j300");

        assert_int_equal(log_context_range(c, 600, 700, collect, &part), 0);
        assert_int_equal(log_context_range(c, 300, 100, collect, &part), 0);

        /* The callback can stop the walk. */
        assert_int_equal(log_context_range(c, 0, UINT64_MAX, collect, &stop), -ECANCELED);
        assert_int_equal(stop.n, 2);
}

static void test_journal_flood_keeps_kernel_lines(void **state) {
        _cleanup_(log_context_freep) LogContext *c = NULL;
        LogContextLimits l = {.lines_max = 4};
        Collected got = {};
        LogRecord k = make(LOG_SOURCE_KMSG, 10, "kernel");

        assert_int_equal(log_context_new(&l, &c), 0);
        assert_int_equal(log_context_add(c, &k), 0);
        for (unsigned i = 1; i <= 20; i++) {
                LogRecord j = make(LOG_SOURCE_JOURNAL, 10 + i, "journal");
                assert_int_equal(log_context_add(c, &j), 0);
        }
        /* Each source has its own bound: the journal's 20 lines left the kernel line in place. */
        assert_int_equal(log_context_lines(c), 5);
        assert_int_equal(log_context_range(c, 0, UINT64_MAX, collect, &got), 5);
        assert_string_equal(got.msg[0], "kernel");
        assert_true(got.t[1] == 27);
}

static void test_journal_admission_by_priority(void **state) {
        _cleanup_(log_context_freep) LogContext *c = NULL;
        LogRecord j = make(LOG_SOURCE_JOURNAL, 1, "j"), k = make(LOG_SOURCE_KMSG, 1, "k");

        assert_int_equal(log_context_new(NULL, &c), 0);
        /* Default: info and more urgent, and entries without a priority. */
        j.priority = 6;
        assert_true(log_context_admits(c, &j));
        j.priority = 7;
        assert_false(log_context_admits(c, &j));
        j.priority = -1;
        assert_true(log_context_admits(c, &j));
        k.priority = 7;
        assert_true(log_context_admits(c, &k)); /* kernel lines are always kept */

        log_context_set_journal_priority_max(c, 3);
        j.priority = 3;
        assert_true(log_context_admits(c, &j));
        j.priority = 4;
        assert_false(log_context_admits(c, &j));

        log_context_set_journal_priority_max(c, LOG_CONTEXT_JOURNAL_OFF);
        j.priority = 0;
        assert_false(log_context_admits(c, &j));
        j.priority = -1;
        assert_false(log_context_admits(c, &j));
        assert_true(log_context_admits(c, &k));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_dup_is_deep_and_complete),
                cmocka_unit_test(test_journal_flood_keeps_kernel_lines),
                cmocka_unit_test(test_journal_admission_by_priority),
                cmocka_unit_test(test_line_bound_evicts_oldest),
                cmocka_unit_test(test_byte_bound_evicts_oldest),
                cmocka_unit_test(test_age_bound),
                cmocka_unit_test(test_range_is_in_time_order),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
