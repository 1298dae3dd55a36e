/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perf-PID.map parsing: ordinary lines, names with blanks, 0x prefixes, regenerated code (the
 * later line wins), and lines that must be skipped rather than trusted.
 */
#include "tests.h"

#include <string.h>

#include "symbolizer/symbolizer-jitmap.h"

static const char text[] =
        "7f0000001000 40 LFoo;::bar\n"
        "0x7f0000002000 0x100 Interpreted: void java.lang.Thread.run() [hot]\n"
        "7f0000003000 10 old_version\n"
        "7f0000003000 20 new_version\r\n"
        "nonsense line\n"
        "7f0000004000 zz bad_size\n"
        "7f0000005000 0 zero_size\n"
        "ffffffffffffffff 10 wraps\n"
        "12345678901234567890 10 too_long_address\n"
        "7f0000006000 10\n"
        "7f0000007000 8 last_without_newline";

static const struct {
        uint64_t addr;
        const char *name;
        uint64_t offset;
} cases[] = {
        { 0x7f0000000fff, NULL },
        { 0x7f0000001000, "LFoo;::bar", 0 },
        { 0x7f000000103f, "LFoo;::bar", 0x3f },
        { 0x7f0000001040, NULL },
        { 0x7f0000002080, "Interpreted: void java.lang.Thread.run() [hot]", 0x80 },
        { 0x7f0000003018, "new_version", 0x18 },
        { 0x7f0000003004, "new_version", 4 },
        { 0x7f0000004000, NULL },
        { 0x7f0000005000, NULL },
        { 0x7f0000007007, "last_without_newline", 7 },
};

static void test_parse_and_lookup(void **state) {
        _cleanup_(jit_map_freep) JitMap *m = NULL;

        assert_int_equal(jit_map_parse(text, strlen(text), &m), 0);
        assert_int_equal(jit_map_size(m), 5);
        assert_int_equal(jit_map_skipped(m), 6);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *name = NULL;
                uint64_t off = 0;
                bool found = jit_map_lookup(m, cases[i].addr, &name, &off);
                if (!cases[i].name) {
                        assert_false(found);
                        continue;
                }
                assert_true(found);
                assert_string_equal(name, cases[i].name);
                assert_int_equal(off, cases[i].offset);
        }
}

static void test_binary_garbage(void **state) {
        uint8_t junk[4096];
        uint32_t x = 12345;

        for (size_t i = 0; i < sizeof(junk); i++) {
                x = x * 1103515245 + 12345;
                junk[i] = (uint8_t) (x >> 16);
        }
        for (size_t n = 0; n < sizeof(junk); n += 97) {
                _cleanup_(jit_map_freep) JitMap *m = NULL;
                const char *name;
                uint64_t off;
                assert_int_equal(jit_map_parse((const char *) junk, n, &m), 0);
                (void) jit_map_lookup(m, 0x1000, &name, &off);
        }
}

static void test_missing_file(void **state) {
        JitMap *m = NULL;
        assert_int_equal(jit_map_load("/nonexistent/perf-1.map", &m), -ENOENT);
        assert_null(m);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_and_lookup),
                cmocka_unit_test(test_binary_garbage),
                cmocka_unit_test(test_missing_file),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
