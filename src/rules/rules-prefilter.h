/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Required literals of a PCRE2 pattern, for the rules engine's prefilter: the literal a pattern
 * must start with after a leading '^' (its prefix) and the longest run of literal bytes that every
 * match must contain. A line without that run cannot match, so the regex need not run.
 *
 * The extraction is deliberately conservative: it reads only the top level of the pattern (never
 * inside groups or classes), drops a character a quantifier applies to, and gives up (no literal)
 * on top-level alternation, inline option settings such as (?i) or (?x), (*VERB)s, \Q...\E and
 * comments. A missing literal costs speed, a wrong one would lose matches.
 */
#pragma once

#include <stddef.h>

typedef struct PatternLiterals {
        char *prefix; /* NULL, or the bytes matched right after a leading '^' */
        size_t prefix_len;
        char *literal; /* NULL, or the longest run of bytes every match contains */
        size_t literal_len;
} PatternLiterals;

void pattern_literals_done(PatternLiterals *l);
/* Returns 0 (with possibly no literal found) or -ENOMEM. */
int pattern_required_literals(const char *pattern, size_t len, PatternLiterals *ret);
