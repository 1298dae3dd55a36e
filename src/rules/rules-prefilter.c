/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Literal extraction from PCRE2 patterns; see rules-prefilter.h for what is extracted and why it
 * is safe.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/macro.h"
#include "rules/rules-prefilter.h"

void pattern_literals_done(PatternLiterals *l) {
        l->prefix = mfree(l->prefix);
        l->literal = mfree(l->literal);
        l->prefix_len = l->literal_len = 0;
}

/* Index just past the class that starts at p[i] == '[', or 0 if it does not end. */
static size_t skip_class(const char *p, size_t n, size_t i) {
        i++;
        if (i < n && p[i] == '^')
                i++;
        if (i < n && p[i] == ']') /* a ']' first is a member, not the end */
                i++;
        while (i < n) {
                if (p[i] == '\\')
                        i += 2;
                else if (p[i] == '[' && i + 1 < n && p[i + 1] == ':') {
                        const char *e = memmem(p + i + 2, n - i - 2, ":]", 2);
                        if (!e)
                                return 0;
                        i = (size_t) (e - p) + 2;
                } else if (p[i] == ']')
                        return i + 1;
                else
                        i++;
        }
        return 0;
}

/* Index just past the group that starts at p[i] == '(', or 0 if it does not end. */
static size_t skip_group(const char *p, size_t n, size_t i) {
        unsigned depth = 0;

        while (i < n) {
                if (p[i] == '\\')
                        i += 2;
                else if (p[i] == '[') {
                        i = skip_class(p, n, i);
                        if (i == 0)
                                return 0;
                } else if (p[i] == '(') {
                        depth++;
                        i++;
                } else if (p[i] == ')') {
                        i++;
                        if (--depth == 0)
                                return i;
                } else
                        i++;
        }
        return 0;
}

/* Length of a {n}, {n,} or {n,m} quantifier at p[i], or 0 if the brace is a literal. */
static size_t quantifier_brace_len(const char *p, size_t n, size_t i) {
        size_t j = i + 1;
        bool digits = false;

        while (j < n && isdigit((unsigned char) p[j])) {
                digits = true;
                j++;
        }
        if (j < n && p[j] == ',') {
                j++;
                while (j < n && isdigit((unsigned char) p[j]))
                        j++;
        }
        if (!digits || j >= n || p[j] != '}')
                return 0;
        return j + 1 - i;
}

/* Things we do not model: any of them and we claim no literal at all. */
static bool pattern_is_opaque(const char *p, size_t n) {
        for (size_t i = 0; i < n; i++) {
                if (p[i] == '\\') {
                        if (i + 1 < n && p[i + 1] == 'Q')
                                return true;
                        i++;
                        continue;
                }
                if (p[i] == '(' && i + 1 < n && p[i + 1] == '*')
                        return true; /* (*VERB) */
                if (p[i] == '(' && i + 2 < n && p[i + 1] == '?' && strchr("imnsxJU-^#)", p[i + 2]))
                        return true; /* inline options, comments */
        }
        return false;
}

typedef struct Run {
        size_t start, len; /* into the output buffer */
} Run;

int pattern_required_literals(const char *p, size_t n, PatternLiterals *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, run_start = 0, best_start = 0, best_len = 0, prefix_len = 0;
        bool anchored = false, in_prefix = false, last_is_char = false;

        *ret = (PatternLiterals) {};
        if (pattern_is_opaque(p, n))
                return 0;

        buf = malloc(n + 1);
        if (!buf)
                return -ENOMEM;

#define END_RUN()                                                                                            \
        do {                                                                                                 \
                if (len - run_start > best_len) {                                                            \
                        best_start = run_start;                                                              \
                        best_len = len - run_start;                                                          \
                }                                                                                            \
                if (in_prefix) {                                                                             \
                        prefix_len = len - run_start;                                                        \
                        in_prefix = false;                                                                   \
                }                                                                                            \
                run_start = len;                                                                             \
                last_is_char = false;                                                                        \
        } while (0)

        if (n > 0 && p[0] == '^') {
                anchored = in_prefix = true;
        }

        for (size_t i = anchored ? 1 : 0; i < n;) {
                char c = p[i];
                size_t q;

                switch (c) {
                case '\\':
                        if (i + 1 >= n)
                                return 0;
                        if (isalnum((unsigned char) p[i + 1])) {
                                /* \d \w \b \x.. \1 \p{..}...: not one literal byte */
                                END_RUN();
                                i += 2;
                                /* skip the argument of \x{..} \p{..} \g{..} \k<..> etc. */
                                if (i < n && (p[i] == '{' || p[i] == '<' || p[i] == '\'')) {
                                        char close = p[i] == '{' ? '}' : p[i] == '<' ? '>' : '\'';
                                        const char *e = memchr(p + i + 1, close, n - i - 1);
                                        if (!e)
                                                return 0;
                                        i = (size_t) (e - p) + 1;
                                }
                                break;
                        }
                        buf[len++] = p[i + 1];
                        last_is_char = true;
                        i += 2;
                        break;
                case '[':
                        END_RUN();
                        i = skip_class(p, n, i);
                        if (i == 0)
                                return 0;
                        break;
                case '(':
                        END_RUN();
                        i = skip_group(p, n, i);
                        if (i == 0)
                                return 0;
                        break;
                case '|':
                case ')':
                        return 0; /* top-level alternation (or a stray parenthesis): give up */
                case '.':
                case '^':
                case '$':
                        END_RUN();
                        i++;
                        break;
                case '?':
                case '*':
                case '+':
                case '{':
                        q = c == '{' ? quantifier_brace_len(p, n, i) : 1;
                        if (q == 0) {
                                buf[len++] = c; /* a '{' that starts no quantifier is literal */
                                last_is_char = true;
                                i++;
                                break;
                        }
                        /* The quantified character may be absent or repeated: drop it from the run. */
                        if (last_is_char)
                                len--;
                        END_RUN();
                        i += q;
                        if (i < n && (p[i] == '?' || p[i] == '+')) /* lazy or possessive */
                                i++;
                        break;
                default:
                        buf[len++] = c;
                        last_is_char = true;
                        i++;
                }
        }
        END_RUN();
#undef END_RUN

        if (anchored && prefix_len > 0) {
                ret->prefix = memdup(buf, prefix_len);
                if (!ret->prefix)
                        return -ENOMEM;
                ret->prefix_len = prefix_len;
        }
        if (best_len > 0) {
                ret->literal = memdup(buf + best_start, best_len);
                if (!ret->literal) {
                        pattern_literals_done(ret);
                        return -ENOMEM;
                }
                ret->literal_len = best_len;
        }
        return 0;
}
