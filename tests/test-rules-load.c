/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules-load.c: good files load with every field as written; each bad file under
 * tests/data/rules/bad/ fails with exactly the file, line, column and message a person needs;
 * limits hold; a failed load hands out nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "basic/alloc-util.h"
#include "basic/string-util.h"
#include "rules/rules.h"
#include "tests.h"

static char *data_path(const char *rel) {
        const char *root = getenv("TPROF_SOURCE_ROOT");
        char *p = NULL;

        assert_non_null(root);
        assert_true(asprintf(&p, "%s/tests/data/rules/%s", root, rel) > 0);
        return p;
}

static void test_bad_files_report_position_and_cause(void **state) {
        static const struct {
                const char *file;
                unsigned line, column;
                const char *message;
        } cases[] = {
                { "unknown-key.yaml", 5, 5, "unknown key 'befor', did you mean 'before'?" },
                { "unknown-top.yaml", 1, 1, "unknown key 'rule', did you mean 'rules'?" },
                { "unknown-default.yaml", 2, 3, "unknown key 'cooldwn', did you mean 'cooldown'?" },
                { "wrong-type.yaml", 4, 12, "'match' must be a string, not a list" },
                { "rules-not-list.yaml", 2, 3, "'rules' must be a list, not a mapping" },
                { "top-list.yaml", 1, 1,
                  "the top level must be a mapping with 'rules' (and optionally 'defaults'), not a list" },
                { "rule-not-mapping.yaml", 2, 5, "each rule must be a mapping with name, source and match, not a string" },
                { "bad-duration.yaml", 6, 12,
                  "invalid duration '10 parsecs' for 'after': expected a number with a unit, like 500ms, 90s, 5m or 1h" },
                { "long-duration.yaml", 5, 13, "'before' is too long: 2h, at most 1h" },
                /* The column points at the offending character inside the pattern. */
                { "bad-regex.yaml", 4, 20,
                  "invalid pattern in rule 'x': missing closing parenthesis (at offset 7 of the pattern)" },
                { "bad-regex-plain.yaml", 4, 16,
                  "invalid pattern in rule 'x': missing terminating ] for character class (at offset 4 of the pattern)" },
                { "bad-regex-quoted.yaml", 4, 24,
                  "invalid pattern in rule 'x': subpattern name must start with a non-digit (at offset 10 of the pattern)" },
                { "missing-match.yaml", 2, 5, "rule 'x' is missing required key 'match'" },
                { "missing-name.yaml", 2, 5, "rule is missing required key 'name'" },
                { "missing-source.yaml", 2, 5, "rule 'x' is missing required key 'source' (kernel or journal)" },
                { "missing-rules.yaml", 1, 1, "missing required key 'rules'" },
                { "syntax.yaml", 5, 1,
                  "invalid YAML: found unexpected end of stream (while scanning a quoted scalar started at line 4)" },
                { "syntax-indent.yaml", 3, 4,
                  "invalid YAML: did not find expected '-' indicator (while parsing a block collection started at line 2)" },
                { "filter-on-kernel.yaml", 5, 5,
                  "'unit' filters journal entries and cannot be used in a 'source: kernel' rule" },
                { "origin-on-journal.yaml", 4, 5, "'origin' applies only to 'source: kernel' rules" },
                { "bad-group.yaml", 5, 12, "invalid group name 'nic tx': use only letters, digits, '-' and '_'" },
                { "bad-source.yaml", 3, 13, "invalid source 'kmsg': expected kernel or journal" },
                { "bad-name.yaml", 2, 11, "invalid rule name 'ena reset!': use only letters, digits, '-' and '_'" },
                { "bad-severity.yaml", 5, 15,
                  "invalid severity 'loud': expected emerg, alert, crit, err, warning, notice, info or debug" },
                { "bad-bool.yaml", 5, 14, "invalid value 'maybe' for 'enabled': expected true or false" },
                { "bad-uid.yaml", 5, 10, "invalid uid 'root': expected a number" },
                { "bad-transport.yaml", 5, 16,
                  "invalid transport 'carrier-pigeon': expected audit, driver, syslog, journal, stdout or kernel" },
                { "duplicate-key.yaml", 5, 5, "duplicate key 'match' (first at line 4)" },
                { "empty-value.yaml", 4, 11, "'match' has no value" },
                { "two-documents.yaml", 3, 1, "only one YAML document is allowed per rules file" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *rel = NULL, *path = NULL;
                RuleError e = RULE_ERROR_NULL;
                RuleSet *rs = (RuleSet *) 0x1;

                assert_true(asprintf(&rel, "bad/%s", cases[i].file) > 0);
                path = data_path(rel);
                assert_int_equal(rule_set_load(path, &rs, &e), -EBADMSG);
                assert_ptr_equal(rs, (RuleSet *) 0x1); /* nothing handed out */
                assert_string_equal(e.file, path);
                assert_string_equal(e.message, cases[i].message);
                assert_int_equal(e.line, cases[i].line);
                assert_int_equal(e.column, cases[i].column);
                rule_error_done(&e);
        }
}

static void test_duplicate_name_says_where_the_first_was(void **state) {
        _cleanup_free_ char *path = data_path("bad/duplicate-name.yaml"), *want = NULL;
        RuleError e = RULE_ERROR_NULL;
        RuleSet *rs = NULL;

        assert_int_equal(rule_set_load(path, &rs, &e), -EBADMSG);
        assert_true(asprintf(&want, "duplicate rule name 'x' (first defined at %s:2:5)", path) > 0);
        assert_string_equal(e.message, want);
        assert_int_equal(e.line, 8);
        assert_int_equal(e.column, 11);
        _cleanup_free_ char *s = rule_error_format(&e);
        assert_non_null(strstr(s, ":8:11: duplicate rule name 'x'"));
        rule_error_done(&e);
}

static void test_full_file_loads_every_field(void **state) {
        _cleanup_free_ char *path = data_path("good/full.yaml");
        _cleanup_(rule_set_freep) RuleSet *rs = NULL;
        RuleError e = RULE_ERROR_NULL;
        const Rule *r;

        assert_int_equal(rule_set_load(path, &rs, &e), 0);
        assert_null(e.message);
        assert_int_equal(rule_set_size(rs), 3);

        r = rule_set_get(rs, 0);
        assert_string_equal(r->name, "ena-reset");
        assert_string_equal(r->description, "AWS ENA driver reset");
        assert_int_equal(r->source, RULE_SOURCE_KERNEL);
        assert_false(r->origin_any);
        assert_string_equal(r->match, "^ena \\S+ \\S+: Trigger reset is on");
        assert_int_equal(r->before_usec, 90 * USEC_PER_SEC);
        assert_int_equal(r->after_usec, 15 * USEC_PER_SEC);
        assert_int_equal(r->cooldown_usec, USEC_PER_MINUTE); /* from defaults */
        assert_string_equal(r->group, "nic-tx-reset");
        assert_string_equal(rule_cooldown_key(r), "nic-tx-reset");
        assert_int_equal(r->severity, -1);
        assert_true(r->enabled);
        assert_string_equal(r->file, path);
        assert_int_equal(r->line, 4);
        assert_int_equal(r->column, 5);

        r = rule_set_get(rs, 1);
        assert_string_equal(r->name, "demo_any");
        assert_true(r->origin_any);
        assert_int_equal(r->severity, LOG_WARNING);
        assert_false(r->enabled);
        assert_null(r->group);
        assert_string_equal(rule_cooldown_key(r), "demo_any");
        assert_int_equal(r->before_usec, 30 * USEC_PER_SEC);
        assert_int_equal(r->after_usec, 5 * USEC_PER_SEC);

        r = rule_set_get(rs, 2);
        assert_int_equal(r->source, RULE_SOURCE_JOURNAL);
        assert_string_equal(r->unit, "kubelet.service");
        assert_string_equal(r->comm, "kubelet");
        assert_string_equal(r->exe, "/usr/bin/kubelet");
        assert_string_equal(r->transport, "stdout");
        assert_int_equal(r->uid, 0);
        assert_int_equal(r->cooldown_usec, USEC_PER_HOUR);

        assert_int_equal(rule_set_find(rs, "kubelet-pleg"), 2);
        assert_int_equal(rule_set_find(rs, "nope"), -ENOENT);
        assert_null(rule_set_get(rs, 3));
}

static void test_empty_file_is_zero_rules(void **state) {
        _cleanup_free_ char *path = data_path("good/empty.yaml");
        _cleanup_(rule_set_freep) RuleSet *rs = NULL;

        assert_int_equal(rule_set_load(path, &rs, NULL), 0);
        assert_int_equal(rule_set_size(rs), 0);
}

static void test_folder_loads_yaml_files_in_order_with_their_own_defaults(void **state) {
        _cleanup_free_ char *path = data_path("rules.d");
        _cleanup_(rule_set_freep) RuleSet *rs = NULL;

        /* rules.d/README is not YAML and not *.yaml: it must be ignored. */
        assert_int_equal(rule_set_load(path, &rs, NULL), 0);
        assert_int_equal(rule_set_size(rs), 2);
        assert_string_equal(rule_set_get(rs, 0)->name, "a");
        assert_int_equal(rule_set_get(rs, 0)->cooldown_usec, RULE_COOLDOWN_USEC_DEFAULT);
        assert_true(endswith(rule_set_get(rs, 0)->file, "/10-kernel.yaml"));
        assert_string_equal(rule_set_get(rs, 1)->name, "b");
        assert_int_equal(rule_set_get(rs, 1)->cooldown_usec, 2 * USEC_PER_MINUTE);
}

static void test_folder_names_unique_across_files(void **state) {
        _cleanup_free_ char *path = data_path("dup.d"), *first = data_path("dup.d/10-a.yaml"),
                            *second = data_path("dup.d/20-b.yaml"), *want = NULL;
        RuleError e = RULE_ERROR_NULL;
        RuleSet *rs = NULL;

        assert_int_equal(rule_set_load(path, &rs, &e), -EBADMSG);
        assert_null(rs);
        assert_string_equal(e.file, second);
        assert_int_equal(e.line, 5);
        assert_true(asprintf(&want, "duplicate rule name 'a' (first defined at %s:2:5)", first) > 0);
        assert_string_equal(e.message, want);
        rule_error_done(&e);
}

static void test_missing_path_is_an_error_with_a_message(void **state) {
        RuleError e = RULE_ERROR_NULL;
        RuleSet *rs = NULL;

        assert_int_equal(rule_set_load("/nonexistent/rules.yaml", &rs, &e), -ENOENT);
        assert_int_equal(e.line, 0);
        assert_string_equal(e.message, "cannot access rules: No such file or directory");
        _cleanup_free_ char *s = rule_error_format(&e);
        assert_string_equal(s, "/nonexistent/rules.yaml: cannot access rules: No such file or directory");
        rule_error_done(&e);
}

static char *make_rules(size_t n, size_t pattern_len) {
        StrBuf b = STRBUF_NULL;

        assert_int_equal(strbuf_append(&b, "rules:\n"), 0);
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(strbuf_appendf(&b, "  - name: r%zu\n    source: kernel\n    match: '", i), 0);
                for (size_t k = 0; k < pattern_len; k++)
                        assert_int_equal(strbuf_putc(&b, 'a'), 0);
                assert_int_equal(strbuf_append(&b, "'\n"), 0);
        }
        return strbuf_steal(&b);
}

static void test_limits(void **state) {
        RuleError e = RULE_ERROR_NULL;
        RuleSet *rs = NULL;

        {
                _cleanup_free_ char *s = make_rules(RULES_MAX, 4);
                assert_int_equal(rule_set_load_string("max.yaml", s, strlen(s), &rs, NULL), 0);
                assert_int_equal(rule_set_size(rs), RULES_MAX);
                rs = rule_set_free(rs);
        }
        {
                _cleanup_free_ char *s = make_rules(RULES_MAX + 1, 4);
                assert_int_equal(rule_set_load_string("many.yaml", s, strlen(s), &rs, &e), -EBADMSG);
                assert_null(rs);
                assert_string_equal(e.message, "too many rules (at most 1024)");
                assert_int_equal(e.line, 2 + 3 * RULES_MAX);
                rule_error_done(&e);
        }
        {
                _cleanup_free_ char *s = make_rules(1, RULE_PATTERN_BYTES_MAX + 1);
                assert_int_equal(rule_set_load_string("long.yaml", s, strlen(s), &rs, &e), -EBADMSG);
                assert_string_equal(e.message, "'match' is too long (4097 bytes, at most 4096)");
                assert_int_equal(e.line, 4);
                assert_int_equal(e.column, 12);
                rule_error_done(&e);
        }
        for (unsigned n = RULE_CAPTURES_MAX; n <= RULE_CAPTURES_MAX + 1; n++) {
                /* One name per alternative, as the shipped ena-reset rule repeats pci and dev. */
                _cleanup_strbuf_ StrBuf b = STRBUF_NULL;
                assert_int_equal(strbuf_append(&b, "rules:\n  - name: x\n    source: kernel\n    match: '"), 0);
                for (unsigned i = 0; i < n; i++)
                        assert_int_equal(strbuf_appendf(&b, "%s^w%u (?<g%u>\\d+)", i ? "|" : "", i, i), 0);
                assert_int_equal(strbuf_append(&b, "'\n"), 0);
                int r = rule_set_load_string("groups.yaml", b.data, b.len, &rs, &e);
                if (n == RULE_CAPTURES_MAX) {
                        assert_int_equal(r, 0);
                        rs = rule_set_free(rs);
                        continue;
                }
                assert_int_equal(r, -EBADMSG);
                assert_null(rs);
                assert_string_equal(e.message, "invalid pattern in rule 'x': too many named groups (129, at most 128) "
                                               "(at offset 0 of the pattern)");
                assert_int_equal(e.line, 4);
                rule_error_done(&e);
        }
        {
                size_t n = RULES_FILE_BYTES_MAX + 1;
                _cleanup_free_ char *s = malloc(n);
                memset(s, '#', n);
                assert_int_equal(rule_set_load_string("big.yaml", s, n, &rs, &e), -EFBIG);
                assert_non_null(strstr(e.message, "too large"));
                rule_error_done(&e);
        }
}

static void test_alias_bomb_is_bounded(void **state) {
        /* Aliases share nodes; a rules list made of the same alias must still fail on names. */
        static const char s[] = "x: &r {name: a, source: kernel, match: b}\n";
        static const char t[] = "defaults: &d {before: 1s}\nrules:\n  - &r {name: a, source: kernel, match: b}\n  - *r\n";
        RuleError e = RULE_ERROR_NULL;
        RuleSet *rs = NULL;

        assert_int_equal(rule_set_load_string("s.yaml", s, strlen(s), &rs, &e), -EBADMSG);
        rule_error_done(&e);
        assert_int_equal(rule_set_load_string("t.yaml", t, strlen(t), &rs, &e), -EBADMSG);
        assert_string_equal(e.message, "duplicate rule name 'a' (first defined at t.yaml:3:5)");
        rule_error_done(&e);
}

/* A buffer is read within its size: here a bad pattern ends the (unterminated) buffer. */
static void test_string_without_nul_pattern_error_at_end(void **state) {
        static const char s[] = "rules:\n  - name: x\n    source: kernel\n    match: ab[co";
        _cleanup_free_ char *buf = malloc(sizeof s - 1);
        RuleError e = RULE_ERROR_NULL;
        RuleSet *rs = NULL;

        memcpy(buf, s, sizeof s - 1);
        assert_int_equal(rule_set_load_string("end.yaml", buf, sizeof s - 1, &rs, &e), -EBADMSG);
        assert_int_equal(e.line, 4);
        assert_int_equal(e.column, 17);
        rule_error_done(&e);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bad_files_report_position_and_cause),
                cmocka_unit_test(test_duplicate_name_says_where_the_first_was),
                cmocka_unit_test(test_full_file_loads_every_field),
                cmocka_unit_test(test_empty_file_is_zero_rules),
                cmocka_unit_test(test_folder_loads_yaml_files_in_order_with_their_own_defaults),
                cmocka_unit_test(test_folder_names_unique_across_files),
                cmocka_unit_test(test_missing_path_is_an_error_with_a_message),
                cmocka_unit_test(test_limits),
                cmocka_unit_test(test_alias_bomb_is_bounded),
                cmocka_unit_test(test_string_without_nul_pattern_error_at_end),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
