/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control protocol parser: accepted messages, and every way a hostile client can get it wrong.
 */
#include <errno.h>
#include <string.h>

#include "control/control-proto.h"
#include "tests.h"

static void test_parse_good(void **state) {
        static const char msg[] = "OP=capture\nBEFORE_USEC=60000000\nNOTE=disk stall = suspected\n";
        ControlMessage m;

        assert_int_equal(control_message_parse(msg, sizeof msg - 1, &m, NULL), 0);
        assert_int_equal(m.n_fields, 3);
        assert_string_equal(control_message_get(&m, "OP"), "capture");
        assert_string_equal(control_message_get(&m, "NOTE"), "disk stall = suspected");
        assert_null(control_message_get(&m, "AFTER_USEC"));
}

static void test_parse_bad_table(void **state) {
        char big[CONTROL_MESSAGE_BYTES_MAX + 2], longval[CONTROL_VALUE_BYTES_MAX + 16], many[2048] = "";
        static const struct {
                const char *msg;
                size_t len;
                const char *reason;
        } cases[] = {
                { "", 0, "empty message" },
                { "OP=capture", 10, "message does not end with a newline" },
                { "OP=cap\0ture\n", 12, "NUL byte in message" },
                { "OPcapture\n", 10, "line without '='" },
                { "op=capture\n", 11, "invalid key" },
                { "=x\n", 3, "invalid key" },
                { "\n", 1, "line without '='" },
                { "OP=a\nOP=b\n", 10, "duplicate key" },
                { "A_KEY_THAT_IS_MUCH_TOO_LONG_FOR_US=1\n", 37, "invalid key" },
        };
        const char *reason;
        ControlMessage m;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                reason = NULL;
                assert_int_equal(control_message_parse(cases[i].msg, cases[i].len, &m, &reason), -EBADMSG);
                assert_non_null(reason);
                if (strcmp(reason, cases[i].reason) != 0)
                        fail_msg("case %zu: reason \"%s\", expected \"%s\"", i, reason, cases[i].reason);
        }

        memset(big, 'A', sizeof big);
        assert_int_equal(control_message_parse(big, sizeof big, &m, &reason), -EBADMSG);
        assert_string_equal(reason, "message too long");

        memset(longval, 'x', sizeof longval);
        memcpy(longval, "NOTE=", 5);
        longval[sizeof longval - 1] = '\n';
        assert_int_equal(control_message_parse(longval, sizeof longval, &m, &reason), -EBADMSG);
        assert_string_equal(reason, "value too long");

        for (int i = 0; i <= (int) CONTROL_FIELDS_MAX; i++)
                snprintf(many + strlen(many), sizeof many - strlen(many), "K%d=v\n", i);
        assert_int_equal(control_message_parse(many, strlen(many), &m, &reason), -EBADMSG);
        assert_string_equal(reason, "too many fields");
}

static void test_append_round_trip(void **state) {
        _cleanup_strbuf_ StrBuf b = STRBUF_NULL;
        ControlMessage m;

        assert_int_equal(control_message_append(&b, "OK", "1"), 0);
        assert_int_equal(control_message_append(&b, "ID", "line\nbreak"), 0);
        assert_int_equal(control_message_appendf(&b, "SAMPLES", "%d", 42), 0);
        assert_int_equal(control_message_append(&b, "bad key", "x"), -EINVAL);
        assert_int_equal(control_message_parse(b.data, b.len, &m, NULL), 0);
        assert_string_equal(control_message_get(&m, "ID"), "line break");
        assert_string_equal(control_message_get(&m, "SAMPLES"), "42");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_good),
                cmocka_unit_test(test_parse_bad_table),
                cmocka_unit_test(test_append_round_trip),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
