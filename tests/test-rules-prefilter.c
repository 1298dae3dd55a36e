/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules-prefilter.c: the literals claimed for a pattern are really required, and the extraction
 * gives up wherever it cannot be sure.
 */
#include <string.h>

#include "rules/rules-prefilter.h"
#include "tests.h"

static void test_required_literals_table(void **state) {
        static const struct {
                const char *pattern;
                const char *prefix;  /* NULL: none */
                const char *literal; /* NULL: none */
        } cases[] = {
                { "^ena \\S+ \\S+: Trigger reset is on", "ena ", ": Trigger reset is on" },
                { "Trigger reset", NULL, "Trigger reset" },
                { "^INFO: task (?<comm>.+):(?<pid>\\d+) blocked for more than", "INFO: task ",
                  " blocked for more than" },
                { "NETDEV WATCHDOG: (?:CPU: (?<cpu>\\d+)|x): transmit queue", NULL, "NETDEV WATCHDOG: " },
                { "^XFS \\((?<dev>[^)]+)\\): Corr", "XFS (", "): Corr" },
                { "^mce: \\[Hardware Error\\]: x", "mce: [Hardware Error]: x", "mce: [Hardware Error]: x" },
                /* A quantified character is not required; the run stops before it. */
                { "abcd?efgh", NULL, "efgh" },
                { "abcde?fg", NULL, "abcd" },
                { "abcd*efghij", NULL, "efghij" },
                { "ab+cdef", NULL, "cdef" },
                { "abc{2}defg", NULL, "defg" },
                { "abc{2,}?d", NULL, "ab" },
                { "^ab?c", "a", "a" },
                { "a{x}b", NULL, "a{x}b" }, /* not a quantifier: literal braces */
                /* Classes, groups, escapes and dots break runs; their insides are never used. */
                { "foo[bar]bazz", NULL, "bazz" },
                { "x[]a]yy", NULL, "yy" },
                { "x[^]a]yy", NULL, "yy" },
                { "x[[:alpha:]]yy", NULL, "yy" },
                { "(abcdef)+xy", NULL, "xy" },
                { "ab\\dcde", NULL, "cde" },
                { "ab\\x{41}cde", NULL, "cde" },
                { "ab.cde", NULL, "cde" },
                { "a\\.b\\(c", NULL, "a.b(c" },
                { "\\bword\\b", NULL, "word" },
                /* Escape arguments are not literals: \x41 is 'A', \cJ a newline, \g1 a backreference. */
                { "a\\x41bc", NULL, "bc" },
                { "ab\\cJkl", NULL, "ab" },
                { "abc\\cJk", NULL, "abc" },
                { "ab\\g1cde", NULL, "cde" },
                { "ab\\12cde", NULL, "cde" },
                { "ab\\pLcde", NULL, "cde" },
                { "ab\\k<n>cde", NULL, "cde" },
                { "abc{,3}de", NULL, "ab" },
                { "abcd{ 2 }de", NULL, "abc" },
                { "foo$", NULL, "foo" },
                /* Unsure: no literal at all. */
                { "abc|def", NULL, NULL },
                { "(?i)abc", NULL, NULL },
                { "abc(?i:def)", NULL, NULL },
                { "(?x) a b c", NULL, NULL },
                { "(*UTF)abc", NULL, NULL },
                { "\\Qa.b\\E", NULL, NULL },
                { "abc(?#comment)", NULL, NULL },
                { "abc)", NULL, NULL },
                { "abc(def", NULL, NULL },
                { "abc[def", NULL, NULL },
                { "", NULL, NULL },
                { ".*", NULL, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                PatternLiterals l;

                assert_int_equal(pattern_required_literals(cases[i].pattern, strlen(cases[i].pattern), &l), 0);
                if (cases[i].prefix) {
                        assert_non_null(l.prefix);
                        assert_int_equal(l.prefix_len, strlen(cases[i].prefix));
                        assert_memory_equal(l.prefix, cases[i].prefix, l.prefix_len);
                } else
                        assert_null(l.prefix);
                if (cases[i].literal) {
                        if (!l.literal)
                                fail_msg("pattern '%s': no literal, expected '%s'", cases[i].pattern,
                                         cases[i].literal);
                        if (l.literal_len != strlen(cases[i].literal) ||
                            memcmp(l.literal, cases[i].literal, l.literal_len) != 0)
                                fail_msg("pattern '%s': literal '%.*s', expected '%s'", cases[i].pattern,
                                         (int) l.literal_len, l.literal, cases[i].literal);
                } else if (l.literal)
                        fail_msg("pattern '%s': literal '%.*s', expected none", cases[i].pattern,
                                 (int) l.literal_len, l.literal);
                pattern_literals_done(&l);
        }
}

/* A top-level alternation gets one literal per alternative, or none when one alternative has none. */
static void test_alternation_literals(void **state) {
        static const struct {
                const char *pattern;
                const char *any[4]; /* NULL-terminated; empty: no literals */
        } cases[] = {
                { "abc|def", { "abc", "def" } },
                { "^ena \\S+: Trigger reset is on|^ena \\S+: Keep alive watchdog timeout\\.",
                  { ": Trigger reset is on", ": Keep alive watchdog timeout." } },
                { "(?<comm>.+) invoked oom-killer: |^Out of memory: Kill(?:ed)? process (?<pid>\\d+)",
                  { " invoked oom-killer: ", "Out of memory: Kill" } },
                { "a(b|c)d|xyz", { NULL } }, /* the first alternative has only one-byte runs */
                { "abc|.*", { NULL } },
                { "abc|", { NULL } },
                { "abc|[x|y]zz|(q|r)st", { "abc", "zz", "st" } },
                { "a\\|bc", { NULL } }, /* an escaped bar is no alternation: the run is "a|bc" */
                { "abc|(?i)def", { NULL } },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                PatternLiterals l;
                size_t n = 0;

                assert_int_equal(pattern_required_literals(cases[i].pattern, strlen(cases[i].pattern), &l), 0);
                while (n < ELEMENTSOF(cases[i].any) && cases[i].any[n])
                        n++;
                if (l.n_any != n)
                        fail_msg("pattern '%s': %zu alternative literals, expected %zu", cases[i].pattern, l.n_any, n);
                for (size_t k = 0; k < n; k++)
                        if (l.any[k].len != strlen(cases[i].any[k]) ||
                            memcmp(l.any[k].bytes, cases[i].any[k], l.any[k].len) != 0)
                                fail_msg("pattern '%s': literal %zu is '%.*s', expected '%s'", cases[i].pattern, k,
                                         (int) l.any[k].len, l.any[k].bytes, cases[i].any[k]);
                assert_null(l.prefix);
                pattern_literals_done(&l);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_required_literals_table),
                cmocka_unit_test(test_alternation_literals),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
