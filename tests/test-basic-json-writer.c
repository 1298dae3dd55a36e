/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON emitter: structure, escaping of hostile bytes, sticky errors.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "basic/json-writer.h"
#include "tests.h"

static void test_compact_structure(void **state) {
        JsonWriter w;
        _cleanup_free_ char *s = NULL;

        json_writer_init(&w, false);
        json_begin_object(&w);
        json_kv_string(&w, "rule", "ena-reset");
        json_kv_u64(&w, "repeats", 3);
        json_kv_i64(&w, "delta", -5);
        json_kv_bool(&w, "coverage", true);
        json_kv_string(&w, "none", NULL);
        json_key(&w, "windows");
        json_begin_array(&w);
        json_string(&w, "a.tpw");
        json_string(&w, "b.tpw");
        json_end_array(&w);
        json_key(&w, "empty");
        json_begin_object(&w);
        json_end_object(&w);
        json_kv_double(&w, "nan", NAN);
        json_end_object(&w);
        s = json_finish(&w, NULL);
        assert_non_null(s);
        assert_string_equal(s, "{\"rule\":\"ena-reset\",\"repeats\":3,\"delta\":-5,\"coverage\":true,\"none\":null,"
                               "\"windows\":[\"a.tpw\",\"b.tpw\"],\"empty\":{},\"nan\":null}");
}

static void test_pretty(void **state) {
        JsonWriter w;
        _cleanup_free_ char *s = NULL;

        json_writer_init(&w, true);
        json_begin_object(&w);
        json_kv_u64(&w, "a", 1);
        json_key(&w, "b");
        json_begin_array(&w);
        json_u64(&w, 2);
        json_end_array(&w);
        json_end_object(&w);
        s = json_finish(&w, NULL);
        assert_string_equal(s, "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}\n");
}

static void test_hostile_strings(void **state) {
        JsonWriter w;
        _cleanup_free_ char *s = NULL;
        const char evil[] = "q\"b\\\x1b[2J\n\xff\xc3\xa9\xc2\x9b";

        json_writer_init(&w, false);
        json_string_n(&w, evil, sizeof evil - 1);
        s = json_finish(&w, NULL);
        assert_string_equal(s, "\"q\\\"b\\\\\\u001b[2J\\u000a\\\\xff\xc3\xa9\\u009b\"");
}

static void test_unbalanced_is_an_error(void **state) {
        JsonWriter w;
        int r = 0;

        json_writer_init(&w, false);
        json_begin_object(&w);
        assert_null(json_finish(&w, &r));
        assert_int_equal(r, -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_compact_structure),
                cmocka_unit_test(test_pretty),
                cmocka_unit_test(test_hostile_strings),
                cmocka_unit_test(test_unbalanced_is_an_error),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
