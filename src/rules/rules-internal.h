/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The RuleSet layout, shared by the engine's own files only (rules-set.c, rules-load.c,
 * rules-match.c). Everyone else goes through rules.h.
 */
#pragma once

#include "basic/cleanup.h"
#include "rules/rules.h"

/* One literal of the prefilter: every match of rule `rule` contains these bytes. It is indexed by
 * the two bytes at `at`, not always its first two (see prefilter_index_at()). */
typedef struct PrefilterLiteral {
        const char *bytes;
        size_t len;
        size_t at;
        uint32_t rule;
} PrefilterLiteral;

struct RuleSet {
        Rule *rules;
        size_t n_rules;

        /* Prefilter: rules with a literal are candidates only when a line contains it. */
        bool prefilter;
        PrefilterLiteral *literals; /* sorted by their indexed two bytes */
        size_t n_literals;
        uint64_t bigram_bits[65536 / 64]; /* bit set for each indexed two bytes of some literal */
        uint16_t *bigram_start;           /* 65537 entries: literals[start[b]..start[b+1]) */
        uint64_t gen;

        pcre2_match_context *mctx;
        pcre2_jit_stack *jit_stack;
        pcre2_match_data *md;
        RuleCapture captures[RULE_CAPTURES_MAX];

        RuleStats stats;
};

void rule_done(Rule *r);
/* qsort() comparator for an array of strings. */
RuleSet *rule_set_new(void);
/* Compiles r->match (JIT when available) and extracts its literals. On a pattern error returns
 * -EBADMSG with the offset inside the pattern and a message; -ENOMEM. */
int rule_compile(Rule *r, size_t *reterr_offset, char **reterr_message);
/* Once every rule is compiled: match contexts, scratch data and the prefilter tables. */
int rule_set_prepare(RuleSet *rs);

DEFINE_TRIVIAL_CLEANUP_FUNC(pcre2_code *, pcre2_code_free);
