/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Required literals of a PCRE2 pattern, for the rules engine's prefilter: the literal a pattern
 * must start with after a leading '^' (its prefix) and the longest run of literal bytes that every
 * match must contain. A line without that run cannot match, so the regex need not run.
 *
 * A pattern that is a top-level alternation (A|B|C) has no literal common to all its matches, but
 * each alternative may have its own: then the pattern gets the set of them (one per alternative)
 * and a line can match only if it contains at least one. That is how one rule covers the several
 * wordings different kernels use for one event and still stays behind the prefilter.
 *
 * The extraction is deliberately conservative: it reads only the top level of the pattern (never
 * inside groups or classes), drops a character a quantifier applies to, and gives up (no literal)
 * on an alternative without a literal of at least PATTERN_LITERAL_BYTES_MIN bytes, inline option
 * settings such as (?i) or (?x), (*VERB)s, \Q...\E and comments. A missing literal costs speed, a
 * wrong one would lose matches.
 */
#pragma once

#include <stddef.h>

/* Shorter literals filter nothing worth a table entry. */
#define PATTERN_LITERAL_BYTES_MIN 2U

typedef struct PatternLiteral {
        char *bytes;
        size_t len;
} PatternLiteral;

typedef struct PatternLiterals {
        char *prefix; /* NULL, or the bytes matched right after a leading '^' */
        size_t prefix_len;
        char *literal; /* NULL, or the longest run of bytes every match contains */
        size_t literal_len;
        /* For a top-level alternation: one literal per alternative, every match contains at least
         * one of them (literal and prefix are then NULL). NULL when not an alternation, or when
         * some alternative has no literal. */
        PatternLiteral *any;
        size_t n_any;
} PatternLiterals;

void pattern_literals_done(PatternLiterals *l);
/* Returns 0 (with possibly no literal found) or -ENOMEM. */
int pattern_required_literals(const char *pattern, size_t len, PatternLiterals *ret);
