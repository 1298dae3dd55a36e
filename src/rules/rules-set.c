/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RuleSet lifecycle, accessors, counters, string tables and the journal match list; see rules.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/string-util.h"
#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/macro.h"
#include "rules/rules-internal.h"

static const char *const rule_source_table[_RULE_SOURCE_MAX] = {
        [RULE_SOURCE_KERNEL] = "kernel",
        [RULE_SOURCE_JOURNAL] = "journal",
};

const char *rule_source_to_string(RuleSource s) {
        if (s < 0 || s >= _RULE_SOURCE_MAX)
                return NULL;
        return rule_source_table[s];
}

RuleSource rule_source_from_string(const char *s) {
        for (int i = 0; i < _RULE_SOURCE_MAX; i++)
                if (s && streq(s, rule_source_table[i]))
                        return (RuleSource) i;
        return _RULE_SOURCE_INVALID;
}

static const char *const severity_table[] = {
        "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

int rule_severity_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(severity_table); i++)
                if (streq(s, severity_table[i]))
                        return (int) i;
        if (streq(s, "panic"))
                return 0;
        if (streq(s, "error"))
                return 3;
        if (streq(s, "warn"))
                return 4;
        return -EINVAL;
}

const char *rule_severity_to_string(int level) {
        if (level < 0 || (size_t) level >= ELEMENTSOF(severity_table))
                return NULL;
        return severity_table[level];
}

void rule_done(Rule *r) {
        free(r->name);
        free(r->group);
        free(r->description);
        free(r->match);
        free(r->unit);
        free(r->comm);
        free(r->exe);
        free(r->transport);
        free(r->file);
        free(r->prefix);
        for (size_t i = 0; i < r->n_literals; i++)
                free(r->literals[i].bytes);
        free(r->literals);
        free(r->names);
        pcre2_code_free(r->code);
        *r = (Rule) {};
}

RuleSet *rule_set_new(void) {
        return calloc(1, sizeof(RuleSet));
}

RuleSet *rule_set_free(RuleSet *rs) {
        if (!rs)
                return NULL;
        for (size_t i = 0; i < rs->n_rules; i++)
                rule_done(&rs->rules[i]);
        free(rs->rules);
        free(rs->literals);
        free(rs->bigram_start);
        pcre2_match_data_free(rs->md);
        pcre2_jit_stack_free(rs->jit_stack);
        pcre2_match_context_free(rs->mctx);
        return mfree(rs);
}

size_t rule_set_size(const RuleSet *rs) {
        return rs ? rs->n_rules : 0;
}

const Rule *rule_set_get(const RuleSet *rs, size_t i) {
        if (!rs || i >= rs->n_rules)
                return NULL;
        return &rs->rules[i];
}

int rule_set_find(const RuleSet *rs, const char *name) {
        for (size_t i = 0; rs && i < rs->n_rules; i++)
                if (streq(rs->rules[i].name, name))
                        return (int) i;
        return -ENOENT;
}

void rule_set_get_stats(const RuleSet *rs, RuleStats *ret) {
        *ret = rs->stats;
}

void rule_set_get_rule_stats(const RuleSet *rs, size_t i, RuleStats *ret) {
        *ret = i < rs->n_rules ? rs->rules[i].stats : (RuleStats) {};
}

void rule_set_reset_stats(RuleSet *rs) {
        rs->stats = (RuleStats) {};
        for (size_t i = 0; i < rs->n_rules; i++)
                rs->rules[i].stats = (RuleStats) {};
}

int rule_set_journal_matches(const RuleSet *rs, char ***ret_strv, bool *ret_any) {
        char **l = NULL;
        size_t n = 0;
        bool any = false;

        l = new0(char *, rs->n_rules + 1);
        if (!l)
                return -ENOMEM;

        for (size_t i = 0; i < rs->n_rules; i++) {
                const Rule *r = &rs->rules[i];
                char *s = NULL;
                int k;

                if (!r->enabled || r->source != RULE_SOURCE_JOURNAL)
                        continue;
                /* Most selective filter first: a unit or executable names one service. */
                if (r->unit)
                        k = asprintf(&s, "_SYSTEMD_UNIT=%s", r->unit);
                else if (r->exe)
                        k = asprintf(&s, "_EXE=%s", r->exe);
                else if (r->comm)
                        k = asprintf(&s, "_COMM=%s", r->comm);
                else if (r->uid != (uid_t) -1)
                        k = asprintf(&s, "_UID=%u", (unsigned) r->uid);
                else if (r->transport)
                        k = asprintf(&s, "_TRANSPORT=%s", r->transport);
                else {
                        any = true;
                        continue;
                }
                if (k < 0) {
                        strv_free(l);
                        return -ENOMEM;
                }
                l[n++] = s;
        }

        qsort(l, n, sizeof l[0], cmp_string_ptr);
        size_t w = 0;
        for (size_t i = 0; i < n; i++) {
                if (w > 0 && streq(l[w - 1], l[i])) {
                        free(l[i]);
                        continue;
                }
                l[w++] = l[i];
        }
        l[w] = NULL;

        *ret_strv = l;
        *ret_any = any;
        return 0;
}
