/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The export naming rules of profile-names.h, case by case, from what VIEWERS.md says the viewers
 * accept and what stackcollapse-perf.pl does to names.
 */
#include <string.h>

#include "profile/profile-names.h"
#include "tests.h"

static void test_comm_tidy_table(void **state) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "kubelet", "kubelet" },
                { "V8 WorkerThread", "V8_WorkerThread" },
                { "a", "a_" },
                { "", "[unknown]" },
                { NULL, "[unknown]" },
                { "semi;colon", "semi:colon" },
                { "tab\tnl\n", "tab_nl_" },
                { "kworker/0:1", "kworker/0:1" },
                /* UTF-8 stays: two threads named in another script are never merged into one
                 * name of question marks. Blanks beyond ASCII are blanks (speedscope's \s matches
                 * them), C1 controls are controls, bytes that are not UTF-8 (a name the kernel cut
                 * inside a character) are escaped as in symbols, and so is the backslash. */
                { "caf\xc3\xa9", "caf\xc3\xa9" },
                { "\xe7\xba\xbf\xe7\xa8\x8b\xe6\xb1\xa0-1", "\xe7\xba\xbf\xe7\xa8\x8b\xe6\xb1\xa0-1" },
                { "\xe7\xba\xbf", "\xe7\xba\xbf_" },
                { "a\xe3\x80\x80" "b\xc2\xa0" "c\xc2\x85" "d", "a_b_c_d" },
                { "ab\xe7\xba", "ab\\xe7\\xba" },
                { "a\\b", "a\\\\b" },
                /* perf script readers (Flamescope, stackcollapse-perf.pl, speedscope) skip '#' lines */
                { "#hidden", "_hidden" },
                { "a#b", "a#b" },
        };
        char buf[64];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                assert_string_equal(profile_comm_tidy(cases[i].in, buf, sizeof buf), cases[i].out);
        /* Cut to the buffer between characters, never inside one. */
        assert_string_equal(profile_comm_tidy("ab\xe7\xba\xbf", buf, 5), "ab");
        assert_string_equal(profile_comm_tidy("ab\xff", buf, 5), "ab");
}

static void test_dso_tidy_table(void **state) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "[kernel.kallsyms]", "[kernel.kallsyms]" },
                { "/usr/bin/burn (deleted)", "/usr/bin/burn" },
                { "/opt/my app/lib.so", "/opt/myapp/lib.so" },
                { "/x/(weird)", "/x/weird" },
                { "", "[unknown]" },
                { NULL, "[unknown]" },
        };
        char buf[256];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                assert_string_equal(profile_dso_tidy(cases[i].in, buf, sizeof buf), cases[i].out);
}

static void test_symbol_tidy_table(void **state) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "mem_cgroup_nr_lru_pages", "mem_cgroup_nr_lru_pages" },
                { "foo(int, char*)", "foo" },
                { "ns::f(std::vector<int>)", "ns::f" },
                { "(anonymous namespace)::g()", "_anonymous namespace)::g" },
                { "x::(anonymous namespace)::g()", "x::(anonymous namespace)::g" },
                { "net/http.(*Client).Do", "net/http.(*Client).Do" },
                { "a;b", "a:b" },
                { "RegExp:[&<>\"']", "RegExp:[&<>]" },
                { "x->y", "x_>y" },
                { "sym+0x1f", "sym" },
                { "clock_gettime@plt", "clock_gettime@plt" },
                { "fixture::gamma@plt", "fixture::gamma@plt" },
                { "sym +0x1f", "sym" },
                { "esc\x1b[0m", "esc\\x1b[0m" },
                { "", "[unknown]" },
                { "(", "[unknown]" },
                { "[unknown]", "[unknown]" },
                /* Flamescope's heatmap would take " 0.5: y:" in a frame line for a sample's time. */
                { "x 0.5: y:z", "x_0.5: y:z" },
                /* also where the quotes it loses made one */
                { "x 0.5\": y:z", "x_0.5: y:z" },
                { "x \"0.5: y:z", "x_0.5: y:z" },
                { "JS:~f /srv/x.js:10:5", "JS:~f /srv/x.js:10:5" },
                { "a 12:b", "a 12:b" },
                /* Leading blanks beyond ASCII go as ASCII ones do: speedscope's frame-line regex
                 * "^\s*(\w+)\s*(.+) \((\S*)\)" (src/import/linux-tools-perf.ts, 1.25.0) skips
                 * them, JavaScript's \s matching them. Within a name they stay. */
                { "\u00a0nbsp_leaf", "nbsp_leaf" },
                { " \u2003\u3000f", "f" },
                { "\u3000", "[unknown]" },
                { "a\u00a0b\u3000", "a\u00a0b\u3000" },
        };
        char buf[256];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *got = profile_symbol_tidy(cases[i].in, buf, sizeof buf);
                if (strcmp(got, cases[i].out) != 0)
                        fail_msg("tidy(\"%s\") = \"%s\", expected \"%s\"", cases[i].in, got, cases[i].out);
        }
}

/* A name longer than the buffer is cut between characters and escapes, never inside one: the
 * exports are UTF-8 for the viewers. */
static void test_symbol_tidy_cut(void **state) {
        static const struct {
                const char *in;
                size_t l;
                const char *out;
        } cases[] = {
                { "abc\xe2\x82\xac", 6, "abc" },           /* "€" needs 3 bytes, 2 are left */
                { "abc\xe2\x82\xac", 7, "abc\xe2\x82\xac" },
                { "ab\x01" "cd", 6, "ab" },                   /* "\x01" is 4 bytes */
                { "ab\x01" "cd", 7, "ab\\x01" },
                { "a\\b", 3, "a" },                        /* "\\" is 2 */
                { "a\\b", 4, "a\\\\" },
                { "\xff\xfe", 5, "\\xff" },
        };
        char buf[16];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                assert_true(cases[i].l <= sizeof buf);
                const char *got = profile_symbol_tidy(cases[i].in, buf, cases[i].l);
                if (strcmp(got, cases[i].out) != 0)
                        fail_msg("tidy(\"%s\", %zu) = \"%s\", expected \"%s\"", cases[i].in, cases[i].l, got,
                                 cases[i].out);
        }
        /* A long run of multibyte characters at the real buffer size ends on a boundary. */
        char in[4000], out[1024];
        for (size_t i = 0; i + 3 < sizeof in; i += 3)
                memcpy(in + i, "\xe2\x82\xac", 3);
        in[sizeof in - 1 - (sizeof in - 1) % 3] = '\0';
        profile_symbol_tidy(in, out, sizeof out);
        assert_true(strlen(out) % 3 == 0 && strlen(out) > 1000);
}

static void test_folded_frame(void **state) {
        char buf[256];

        assert_string_equal(profile_folded_frame("burn", "[unknown]", "/usr/lib/libc.so.6", buf, sizeof buf),
                            "[libc.so.6]");
        assert_string_equal(profile_folded_frame("burn", "[unknown]", "[unknown]", buf, sizeof buf), "[unknown]");
        assert_string_equal(
                profile_folded_frame("swapper", "[unknown]", "[kernel.kallsyms]", buf, sizeof buf),
                "[[kernel.kallsyms]]");
        assert_string_equal(profile_folded_frame("java", "Lorg/x/Y:.call", "/tmp/perf-1.map", buf, sizeof buf),
                            "org/x/Y:.call");
        /* stackcollapse-perf.pl's $tidy_java: any process name starting with "java" */
        assert_string_equal(profile_folded_frame("javac", "Lorg/x/Y:.call", "/tmp/perf-1.map", buf, sizeof buf),
                            "org/x/Y:.call");
        assert_string_equal(profile_folded_frame("notjava", "Lorg/x/Y:.call", "/tmp/perf-1.map", buf, sizeof buf),
                            "Lorg/x/Y:.call");
        /* A DSO named with ';' or quotes is tidied as stackcollapse-perf.pl tidies it. */
        assert_string_equal(profile_folded_frame("burn", "[unknown]", "/tmp/a;b\"c'd.so", buf, sizeof buf),
                            "[a:bcd.so]");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_comm_tidy_table),
                cmocka_unit_test(test_dso_tidy_table),
                cmocka_unit_test(test_symbol_tidy_table),
                cmocka_unit_test(test_symbol_tidy_cut),
                cmocka_unit_test(test_folded_frame),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
