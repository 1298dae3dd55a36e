/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Escaping of hostile text, UTF-8 validation, path-safe names, StrBuf.
 */
#include <stdlib.h>
#include <string.h>

#include "basic/string-util.h"
#include "tests.h"

static void test_escape_table(void **state) {
        static const struct {
                const char *in;
                size_t len;
                const char *out;
        } cases[] = {
                { "plain text", 10, "plain text" },
                { "tab\there", 8, "tab\\x09here" },
                { "\x1b[31mred", 8, "\\x1b[31mred" },
                { "back\\slash", 10, "back\\\\slash" },
                { "caf\xc3\xa9", 5, "caf\xc3\xa9" },           /* valid UTF-8 passes */
                { "bad\xc3", 4, "bad\\xc3" },                   /* truncated sequence */
                { "\xc0\xaf", 2, "\\xc0\\xaf" },                /* overlong '/' */
                { "\xed\xa0\x80", 3, "\\xed\\xa0\\x80" },       /* surrogate */
                { "c1\xc2\x9b", 4, "c1\\xc2\\x9b" },            /* C1 CSI: a terminal would obey it */
                { "nul\0x", 5, "nul\\x00x" },
                { "", 0, "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *e = escape_text(cases[i].in, cases[i].len);
                assert_non_null(e);
                assert_string_equal(e, cases[i].out);
                assert_true(utf8_is_valid_n(e, strlen(e)));
        }
}

/* What a POSIX shell takes literally unquoted (XCU 2.2, 2.6): left alone; anything else in single
 * quotes, which keep every byte but the quote itself (2.2.2); control bytes still \xNN. */
static void test_shell_escape_table(void **state) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "/var/lib/tprof", "/var/lib/tprof" },
                { "a-b_c.d,e:f@g%h+i", "a-b_c.d,e:f@g%h+i" },
                { "caf\xc3\xa9", "caf\xc3\xa9" },
                { "my state", "'my state'" },
                { "it's", "'it'\\''s'" },
                { "$HOME", "'$HOME'" },
                { "a\\b", "'a\\b'" }, /* a backslash as itself, not doubled */
                { "~root", "'~root'" },
                { "#x", "'#x'" },
                { "a=b", "'a=b'" },
                { "*?[]", "'*?[]'" },
                { "`x`;|&<>(){}!\"", "'`x`;|&<>(){}!\"'" },
                { "'", "''\\'''" },
                { "esc\x1b[2J x", "'esc\\x1b[2J x'" }, /* control bytes stay escaped */
                { "esc\x1b", "'esc\\x1b'" },
                { "", "''" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *e = shell_escape_text(cases[i].in);
                assert_non_null(e);
                assert_string_equal(e, cases[i].out);
                assert_true(utf8_is_valid_n(e, strlen(e)));
        }
}

static void test_utf8_prefix(void **state) {
        const char *s = "ab\xe2\x80\xa6" "c"; /* "ab…c" */

        assert_int_equal(utf8_prefix_length(s, 6, 10), 6);
        assert_int_equal(utf8_prefix_length(s, 6, 5), 5); /* after the ellipsis */
        assert_int_equal(utf8_prefix_length(s, 6, 4), 2); /* it would be cut: left out whole */
        assert_int_equal(utf8_prefix_length(s, 6, 3), 2);
        assert_int_equal(utf8_prefix_length(s, 6, 2), 2);
        assert_int_equal(utf8_prefix_length("\xf0\x9f\x94\xa5!", 5, 3), 0);
        /* bytes that are no UTF-8 are cut where max says: nothing to keep whole */
        assert_int_equal(utf8_prefix_length("a\x80\x80\x80\x80" "b", 6, 4), 4);
        assert_int_equal(utf8_prefix_length("\xff\xfe", 2, 1), 1);
}

static void test_utf8_valid(void **state) {
        assert_true(utf8_is_valid_n("abc", 3));
        assert_true(utf8_is_valid_n("\xf0\x9f\x94\xa5", 4));
        assert_false(utf8_is_valid_n("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
        assert_false(utf8_is_valid_n("\xff", 1));
}

static void test_filename_sanitize_cannot_escape(void **state) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "ena-reset", "ena-reset" },
                { "../../etc/passwd", "_._.._etc_passwd" },
                { "..", "_." },
                { ".hidden", "_hidden" },
                { "a/b", "a_b" },
                { "sp ace\n", "sp_ace_" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *s = strdup(cases[i].in);
                filename_sanitize(s);
                assert_string_equal(s, cases[i].out);
                assert_null(strchr(s, '/'));
        }
}

static void test_strbuf(void **state) {
        _cleanup_strbuf_ StrBuf b = STRBUF_NULL;

        assert_int_equal(strbuf_append(&b, "a"), 0);
        assert_int_equal(strbuf_appendf(&b, "%d-%s", 42, "x"), 0);
        for (int i = 0; i < 1000; i++)
                assert_int_equal(strbuf_appendf(&b, "%04d", i), 0);
        assert_int_equal(b.len, 5 + 4000);
        assert_int_equal(strncmp(b.data, "a42-x0000", 9), 0);
        strbuf_reset(&b);
        assert_string_equal(b.data, "");
}

static void test_startswith_endswith(void **state) {
        assert_string_equal(startswith("ena 0000:00:05.0", "ena "), "0000:00:05.0");
        assert_null(startswith("en", "ena"));
        assert_non_null(endswith("x.tpw.partial", ".partial"));
        assert_null(endswith("x.tpw", ".partial"));
}

static void test_unhexchar(void **state) {
        assert_int_equal(unhexchar('0'), 0);
        assert_int_equal(unhexchar('9'), 9);
        assert_int_equal(unhexchar('a'), 10);
        assert_int_equal(unhexchar('F'), 15);
        assert_int_equal(unhexchar('g'), -1);
        assert_int_equal(unhexchar('/'), -1);
        assert_int_equal(unhexchar('\0'), -1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_escape_table),
                cmocka_unit_test(test_shell_escape_table),
                cmocka_unit_test(test_utf8_prefix),
                cmocka_unit_test(test_utf8_valid),
                cmocka_unit_test(test_filename_sanitize_cannot_escape),
                cmocka_unit_test(test_strbuf),
                cmocka_unit_test(test_startswith_endswith),
                cmocka_unit_test(test_unhexchar),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
