/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json-reader: a table of valid documents and what they parse to, a table of invalid ones with
 * the byte offset each error must name, and the limits (depth bombs, huge numbers, bad escapes,
 * bad UTF-8) a hostile manifest could try.
 */
#include <math.h>
#include <string.h>

#include "tests.h"

#include "basic/json-reader.h"

static void test_valid_scalars(void **state) {
        static const struct {
                const char *text;
                JsonType type;
        } cases[] = {
                { "null", JSON_TYPE_NULL },
                { " true ", JSON_TYPE_BOOLEAN },
                { "false", JSON_TYPE_BOOLEAN },
                { "0", JSON_TYPE_INTEGER },
                { "-0", JSON_TYPE_INTEGER },
                { "-9223372036854775808", JSON_TYPE_INTEGER },
                { "9223372036854775807", JSON_TYPE_INTEGER },
                { "9223372036854775808", JSON_TYPE_UNSIGNED },
                { "18446744073709551615", JSON_TYPE_UNSIGNED },
                { "18446744073709551616", JSON_TYPE_REAL },
                { "-9223372036854775809", JSON_TYPE_REAL },
                { "1.5", JSON_TYPE_REAL },
                { "1e3", JSON_TYPE_REAL },
                { "-1.25E-2", JSON_TYPE_REAL },
                { "\"\"", JSON_TYPE_STRING },
                { "[]", JSON_TYPE_ARRAY },
                { "{}", JSON_TYPE_OBJECT },
                { "\n\t[1, [2, {}], {\"a\": null}]\r\n", JSON_TYPE_ARRAY },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_value_freep) JsonValue *v = NULL;
                size_t off = 0;
                int r = json_parse(cases[i].text, strlen(cases[i].text), 0, &v, &off);
                if (r != 0 || v->type != cases[i].type)
                        fail_msg("case %zu '%s': r=%d type=%d", i, cases[i].text, r, v ? (int) v->type : -1);
        }
}

static void test_numbers_exact(void **state) {
        _cleanup_(json_value_freep) JsonValue *v = NULL;
        const char *t = "[81234567891000, 18446744073709551615, -5, 2.5]";
        uint64_t u;
        int64_t i;
        double d;

        assert_int_equal(json_parse(t, strlen(t), 0, &v, NULL), 0);
        assert_true(json_u64_value(json_array_get(v, 0), &u));
        assert_int_equal(u, UINT64_C(81234567891000));
        assert_true(json_u64_value(json_array_get(v, 1), &u));
        assert_true(u == UINT64_MAX);
        assert_false(json_u64_value(json_array_get(v, 2), &u));
        assert_true(json_i64_value(json_array_get(v, 2), &i));
        assert_int_equal(i, -5);
        assert_false(json_i64_value(json_array_get(v, 3), &i));
        assert_true(json_double_value(json_array_get(v, 3), &d));
        assert_true(d == 2.5);
        assert_null(json_array_get(v, 4));
}

static void test_strings_and_escapes(void **state) {
        static const struct {
                const char *text;
                const char *want;
                size_t want_len;
        } cases[] = {
                { "\"a\\\"b\\\\c\\/d\"", "a\"b\\c/d", 7 },
                { "\"\\b\\f\\n\\r\\t\"", "\b\f\n\r\t", 5 },
                { "\"\\u0041\\u00e9\\u20ac\"", "A\xc3\xa9\xe2\x82\xac", 6 },
                { "\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4 },
                { "\"\\u001b[31m\"", "\x1b[31m", 5 },
                { "\"a\\u0000b\"", "a\0b", 3 },
                { "\"caf\xc3\xa9\"", "caf\xc3\xa9", 5 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_value_freep) JsonValue *v = NULL;
                assert_int_equal(json_parse(cases[i].text, strlen(cases[i].text), 0, &v, NULL), 0);
                assert_int_equal(v->type, JSON_TYPE_STRING);
                assert_int_equal(v->string.len, cases[i].want_len);
                assert_memory_equal(v->string.s, cases[i].want, cases[i].want_len);
        }
}

static void test_invalid_with_offsets(void **state) {
        static const struct {
                const char *text;
                int error;
                size_t offset;
        } cases[] = {
                { "", -EBADMSG, 0 },
                { "   ", -EBADMSG, 3 },
                { "{", -EBADMSG, 1 },
                { "{\"a\" 1}", -EBADMSG, 5 },
                { "{\"a\":1,}", -EBADMSG, 7 },
                { "[1,]", -EBADMSG, 3 },
                { "[1 2]", -EBADMSG, 3 },
                { "{a:1}", -EBADMSG, 1 },
                { "tru", -EBADMSG, 0 },
                { "nul", -EBADMSG, 0 },
                { "01", -EBADMSG, 1 },
                { "1.", -EBADMSG, 2 },
                { "-", -EBADMSG, 1 },
                { "1e", -EBADMSG, 2 },
                { "+1", -EBADMSG, 0 },
                { ".5", -EBADMSG, 0 },
                { "NaN", -EBADMSG, 0 },
                { "1 2", -EBADMSG, 2 },
                { "{} x", -EBADMSG, 3 },
                { "\"abc", -EBADMSG, 4 },
                { "\"a\nb\"", -EBADMSG, 2 },         /* raw control character */
                { "\"\\x41\"", -EBADMSG, 1 },        /* unknown escape */
                { "\"\\u12\"", -EBADMSG, 1 },        /* short \u */
                { "\"\\u12G4\"", -EBADMSG, 1 },
                { "\"\\ud800\"", -EBADMSG, 1 },      /* lone high surrogate */
                { "\"\\ud800\\u0041\"", -EBADMSG, 1 },
                { "\"\\udc00\"", -EBADMSG, 1 },      /* lone low surrogate */
                { "\"ab\xff\"", -EBADMSG, 3 },       /* invalid UTF-8 */
                { "\"\xc0\xaf\"", -EBADMSG, 1 },     /* overlong encoding */
                { "\"\xed\xa0\x80\"", -EBADMSG, 1 }, /* encoded surrogate */
                { "\"\xe2\x82\"", -EBADMSG, 1 },     /* truncated sequence */
                { "1e400", -ERANGE, 0 },
                { "[-1e999]", -ERANGE, 1 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                JsonValue *v = NULL;
                size_t off = SIZE_MAX;
                int r = json_parse(cases[i].text, strlen(cases[i].text), 0, &v, &off);
                if (r != cases[i].error || off != cases[i].offset)
                        fail_msg("case %zu: r=%d (want %d) offset=%zu (want %zu)", i, r, cases[i].error, off,
                                 cases[i].offset);
                assert_null(v);
        }
}

static void test_huge_numbers(void **state) {
        char digits[700];
        JsonValue *v = NULL;
        size_t off = SIZE_MAX;
        double d;

        /* 300 digits: too large for 64 bits, a finite double. */
        memset(digits, '9', 300);
        digits[300] = '\0';
        assert_int_equal(json_parse(digits, strlen(digits), 0, &v, NULL), 0);
        assert_int_equal(v->type, JSON_TYPE_REAL);
        assert_true(json_double_value(v, &d) && d > 9e299);
        v = json_value_free(v);

        /* 400 digits overflow a double; 600 are refused before conversion. */
        memset(digits, '9', 400);
        digits[400] = '\0';
        assert_int_equal(json_parse(digits, strlen(digits), 0, &v, &off), -ERANGE);
        assert_int_equal(off, 0);
        memset(digits, '1', 600);
        digits[600] = '\0';
        off = SIZE_MAX;
        assert_int_equal(json_parse(digits, strlen(digits), 0, &v, &off), -ERANGE);
        assert_int_equal(off, 0);
        assert_null(v);

        /* Tiny numbers underflow to 0 or a denormal, which is not an error. */
        assert_int_equal(json_parse("1e-400", 6, 0, &v, NULL), 0);
        v = json_value_free(v);
}

static void test_depth_bomb(void **state) {
        char bomb[100001];
        JsonValue *v = NULL;
        size_t off = 0;

        memset(bomb, '[', sizeof bomb - 1);
        bomb[sizeof bomb - 1] = '\0';
        assert_int_equal(json_parse(bomb, strlen(bomb), 64, &v, &off), -ELOOP);
        assert_int_equal(off, 64);
        assert_null(v);

        /* Exactly at the limit is fine. */
        const char *ok = "[[[[]]]]";
        assert_int_equal(json_parse(ok, strlen(ok), 4, &v, NULL), 0);
        json_value_free(v);
        assert_int_equal(json_parse(ok, strlen(ok), 3, &v, &off), -ELOOP);
}

static void test_not_nul_terminated(void **state) {
        /* The size bounds the parse, not a NUL: a number at the very end must not read past it. */
        char buf[4] = { '1', '2', '3', '4' };
        _cleanup_(json_value_freep) JsonValue *v = NULL;
        int64_t i;

        assert_int_equal(json_parse(buf, 2, 0, &v, NULL), 0);
        assert_true(json_i64_value(v, &i));
        assert_int_equal(i, 12);
}

static void test_lookup(void **state) {
        _cleanup_(json_value_freep) JsonValue *v = NULL;
        const char *t = "{\"a\": 1, \"event\": {\"captures\": {\"cpu\": \"3\"}}, \"a\": 2, \"s\": \"x\"}";
        int64_t i;

        assert_int_equal(json_parse(t, strlen(t), 0, &v, NULL), 0);
        assert_true(json_i64_value(json_object_get(v, "a"), &i));
        assert_int_equal(i, 2); /* the last of a repeated key */
        assert_string_equal(json_string_value(json_object_get_path(v, "event.captures.cpu")), "3");
        assert_null(json_object_get_path(v, "event.captures.nope"));
        assert_null(json_object_get_path(v, "s.deeper"));
        assert_null(json_string_value(json_object_get(v, "a")));
        assert_int_equal(json_length(v), 4);
        assert_string_equal(json_type_to_string(v->type), "object");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_valid_scalars),
                cmocka_unit_test(test_numbers_exact),
                cmocka_unit_test(test_strings_and_escapes),
                cmocka_unit_test(test_invalid_with_offsets),
                cmocka_unit_test(test_huge_numbers),
                cmocka_unit_test(test_depth_bomb),
                cmocka_unit_test(test_not_nul_terminated),
                cmocka_unit_test(test_lookup),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
