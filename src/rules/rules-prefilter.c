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
        for (size_t i = 0; i < l->n_any; i++)
                free(l->any[i].bytes);
        l->any = mfree(l->any);
        l->n_any = 0;
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

/*
 * Length of a {n}, {n,}, {n,m} quantifier at p[i], or 0 if the brace is a literal. Newer PCRE2 also
 * takes {,m} and spaces inside; any brace of digits, commas and spaces with a digit counts as a
 * quantifier here, which at worst drops one literal byte.
 */
static size_t quantifier_brace_len(const char *p, size_t n, size_t i) {
        size_t j = i + 1;
        bool digits = false;

        while (j < n && (isdigit((unsigned char) p[j]) || p[j] == ',' || p[j] == ' ')) {
                digits = digits || isdigit((unsigned char) p[j]);
                j++;
        }
        if (!digits || j >= n || p[j] != '}')
                return 0;
        return j + 1 - i;
}

/*
 * Index just past the escape with a letter or digit at p[i] == '\\', including its argument: the
 * hex digits of \x41, the digits of \12 or \g2, the character of \cJ or \pL, or a {...}, <...> or
 * '...' argument. 0 if a bracketed argument does not end.
 */
static size_t skip_escape(const char *p, size_t n, size_t i) {
        char e = p[i + 1];

        i += 2;
        if (i < n && (p[i] == '{' || p[i] == '<' || p[i] == '\'') && strchr("xopPgkN", e)) {
                char close = p[i] == '{' ? '}' : p[i] == '<' ? '>' : '\'';
                const char *end = memchr(p + i + 1, close, n - i - 1);
                return end ? (size_t) (end - p) + 1 : 0;
        }
        switch (e) {
        case 'c': /* \cX: X is part of the escape, whatever it is */
        case 'p':
        case 'P':
                return MIN(i + 1, n);
        case 'x':
                for (size_t k = 0; k < 2 && i < n && isxdigit((unsigned char) p[i]); k++)
                        i++;
                return i;
        case 'g':
                if (i < n && (p[i] == '+' || p[i] == '-'))
                        i++;
                __attribute__((__fallthrough__));
        case '0' ... '9':
                while (i < n && isdigit((unsigned char) p[i]))
                        i++;
                return i;
        default:
                return i;
        }
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

static int required_literals_one(const char *p, size_t n, PatternLiterals *ret) {
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
                                i = skip_escape(p, n, i);
                                if (i == 0)
                                        return 0;
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

/*
 * Offsets of the top-level '|' of p, at most max of them, in ret_bars; returns how many, or
 * (size_t) -1 when the pattern does not parse far enough to tell (an unterminated class or group,
 * a trailing backslash).
 */
static size_t top_level_bars(const char *p, size_t n, size_t *ret_bars, size_t max) {
        size_t k = 0;

        for (size_t i = 0; i < n;) {
                switch (p[i]) {
                case '\\':
                        if (i + 1 >= n)
                                return (size_t) -1;
                        i += 2;
                        break;
                case '[':
                        i = skip_class(p, n, i);
                        if (i == 0)
                                return (size_t) -1;
                        break;
                case '(':
                        i = skip_group(p, n, i);
                        if (i == 0)
                                return (size_t) -1;
                        break;
                case '|':
                        if (k >= max)
                                return (size_t) -1;
                        ret_bars[k++] = i++;
                        break;
                default:
                        i++;
                }
        }
        return k;
}

#define ALTERNATIVES_MAX 64U

int pattern_required_literals(const char *p, size_t n, PatternLiterals *ret) {
        /* Collected in a PatternLiterals of our own, so the cleanup frees whatever a failure leaves. */
        _cleanup_(pattern_literals_done) PatternLiterals all = {};
        size_t bars[ALTERNATIVES_MAX - 1], n_bars;
        int r;

        *ret = (PatternLiterals) {};
        if (pattern_is_opaque(p, n))
                return 0;
        n_bars = top_level_bars(p, n, bars, ELEMENTSOF(bars));
        if (n_bars == (size_t) -1)
                return 0;
        if (n_bars == 0)
                return required_literals_one(p, n, ret);

        all.any = new0(PatternLiteral, n_bars + 1);
        if (!all.any)
                return -ENOMEM;
        for (size_t a = 0; a <= n_bars; a++) {
                size_t start = a == 0 ? 0 : bars[a - 1] + 1, end = a == n_bars ? n : bars[a];
                _cleanup_(pattern_literals_done) PatternLiterals one = {};

                r = required_literals_one(p + start, end - start, &one);
                if (r < 0)
                        return r;
                if (!one.literal || one.literal_len < PATTERN_LITERAL_BYTES_MIN)
                        return 0; /* this alternative may match anything: no prefilter for the pattern */
                all.any[all.n_any++] = (PatternLiteral) { .bytes = TAKE_PTR(one.literal), .len = one.literal_len };
        }
        *ret = all;
        all = (PatternLiterals) {};
        return 0;
}
