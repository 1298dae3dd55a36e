/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Matching log records against a RuleSet: PCRE2 compilation (JIT, interpreter as fallback), the
 * literal prefilter and the per-record loop.
 *
 * Cost model. A log line is usually noise that no rule matches. Running every pattern on it costs
 * one regex call per rule per line. Instead each rule carries the longest literal any match must
 * contain, or one per alternative of a top-level alternation (rules-prefilter.c); all those literals are indexed by two of their bytes
 * (their first two letters or digits: a driver's literal often starts with ": ", a pair in nearly
 * every line), and one pass over the line with a 64 Kibit bigram set finds which of them occur. Only rules one of whose
 * literals occurred (or that have none) run their regex. Patterns anchored with '^' are also checked against
 * their literal prefix with one memcmp. Since a missing literal proves that the pattern cannot
 * match, results are identical with the prefilter on or off; tests check exactly that.
 *
 * Limits. Patterns come from an administrator but lines come from anyone who can log; a pattern
 * with catastrophic backtracking meets its worst case sooner or later. Every match runs under a
 * match limit, a depth limit, a heap limit and a bounded JIT stack; hitting one is counted in the
 * stats as a limit hit and treated as no match. Nothing is logged per line.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/macro.h"
#include "rules/rules-internal.h"
#include "rules/rules-prefilter.h"

int rule_compile(Rule *r, size_t *reterr_offset, char **reterr_message) {
        _cleanup_(pattern_literals_done) PatternLiterals lit = {};
        PCRE2_UCHAR8 buf[256];
        PCRE2_SIZE erroffset = 0;
        uint32_t count = 0, entry_size = 0, capture_count = 0;
        PCRE2_SPTR table = NULL;
        int errcode, r2;

        assert(r && r->match && !r->code);

        /* No PCRE2_UTF: kernel messages may hold any byte, and byte matching needs no validity
         * check. Patterns with UTF-8 literals still match the same bytes. PCRE2_DUPNAMES lets the
         * alternatives of one pattern (one event, several kernels' wordings) each name their own
         * groups alike: only the alternative that matched sets its groups, so every name is
         * reported once. */
        r->code = pcre2_compile((PCRE2_SPTR) r->match, strlen(r->match), PCRE2_DUPNAMES, &errcode, &erroffset,
                                NULL);
        if (!r->code) {
                if (pcre2_get_error_message(errcode, buf, sizeof buf) < 0)
                        snprintf((char *) buf, sizeof buf, "error %d", errcode);
                *reterr_offset = erroffset;
                *reterr_message = strdup((const char *) buf);
                return *reterr_message ? -EBADMSG : -ENOMEM;
        }

        /* JIT is an optimization: without it (no JIT in this build, no executable memory) the
         * interpreter gives the same answers under the same limits. */
        r->jit = pcre2_jit_compile(r->code, PCRE2_JIT_COMPLETE) == 0;

        (void) pcre2_pattern_info(r->code, PCRE2_INFO_CAPTURECOUNT, &capture_count);
        (void) pcre2_pattern_info(r->code, PCRE2_INFO_NAMECOUNT, &count);
        (void) pcre2_pattern_info(r->code, PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
        (void) pcre2_pattern_info(r->code, PCRE2_INFO_NAMETABLE, &table);
        if (count > RULE_CAPTURES_MAX) {
                *reterr_offset = 0;
                if (asprintf(reterr_message, "too many named groups (%u, at most %u)", count,
                             RULE_CAPTURES_MAX) < 0)
                        return -ENOMEM;
                return -EBADMSG;
        }
        if (count > 0) {
                r->names = calloc(count, sizeof r->names[0]);
                if (!r->names)
                        return -ENOMEM;
                for (uint32_t i = 0; i < count; i++) {
                        PCRE2_SPTR e = table + (size_t) i * entry_size;
                        r->names[i].group = (uint32_t) e[0] << 8 | e[1];
                        r->names[i].name = (const char *) e + 2;
                }
                r->n_names = count;
        }

        r2 = pattern_required_literals(r->match, strlen(r->match), &lit);
        if (r2 < 0)
                return r2;
        r->prefix = TAKE_PTR(lit.prefix);
        r->prefix_len = lit.prefix_len;
        if (lit.n_any > 0) {
                r->literals = calloc(lit.n_any, sizeof r->literals[0]);
                if (!r->literals)
                        return -ENOMEM;
                for (size_t i = 0; i < lit.n_any; i++) {
                        r->literals[i].bytes = TAKE_PTR(lit.any[i].bytes);
                        r->literals[i].len = lit.any[i].len;
                }
                r->n_literals = lit.n_any;
        } else if (lit.literal_len >= PATTERN_LITERAL_BYTES_MIN) {
                r->literals = calloc(1, sizeof r->literals[0]);
                if (!r->literals)
                        return -ENOMEM;
                r->literals[0].bytes = TAKE_PTR(lit.literal);
                r->literals[0].len = lit.literal_len;
                r->n_literals = 1;
        }
        return 0;
}

static unsigned bigram(const char *s) {
        return (unsigned) (unsigned char) s[0] | (unsigned) (unsigned char) s[1] << 8;
}

static bool is_alnum_ascii(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Where a literal's indexed pair starts: at its first two letters or digits in a row, which are
 * rarer in log lines than the punctuation and blanks literals often start with (": ", ") ", "] "),
 * so the scan compares fewer literals; at 0 where it has no such pair. */
static size_t prefilter_index_at(const char *bytes, size_t len) {
        for (size_t i = 0; i + 1 < len; i++)
                if (is_alnum_ascii(bytes[i]) && is_alnum_ascii(bytes[i + 1]))
                        return i;
        return 0;
}

static unsigned literal_bigram(const PrefilterLiteral *l) {
        return bigram(l->bytes + l->at);
}

static int literal_compare(const void *a, const void *b) {
        const PrefilterLiteral *x = a, *y = b;
        unsigned bx = literal_bigram(x), by = literal_bigram(y);

        if (bx != by)
                return bx < by ? -1 : 1;
        return x->rule < y->rule ? -1 : x->rule > y->rule;
}

static int prefilter_build(RuleSet *rs) {
        size_t n = 0;

        for (size_t i = 0; i < rs->n_rules; i++)
                n += rs->rules[i].n_literals;
        if (n == 0)
                return 0;

        rs->literals = new0(PrefilterLiteral, n);
        rs->bigram_start = new0(uint16_t, 65537);
        if (!rs->literals || !rs->bigram_start)
                return -ENOMEM;
        /* bigram_start holds 16-bit indices. */
        if (n > UINT16_MAX)
                return -E2BIG;
        for (size_t i = 0; i < rs->n_rules; i++) {
                Rule *r = &rs->rules[i];
                for (size_t j = 0; j < r->n_literals; j++)
                        rs->literals[rs->n_literals++] = (PrefilterLiteral) {
                                .bytes = r->literals[j].bytes,
                                .len = r->literals[j].len,
                                .at = prefilter_index_at(r->literals[j].bytes, r->literals[j].len),
                                .rule = (uint32_t) i,
                        };
        }
        qsort(rs->literals, rs->n_literals, sizeof rs->literals[0], literal_compare);

        /* bigram_start[b] = first literal whose bigram is >= b; the range for b ends at b + 1. */
        size_t k = 0;
        for (unsigned b = 0; b <= 65536; b++) {
                while (k < rs->n_literals && literal_bigram(&rs->literals[k]) < b)
                        k++;
                rs->bigram_start[b] = (uint16_t) k;
        }
        for (size_t j = 0; j < rs->n_literals; j++) {
                unsigned b = literal_bigram(&rs->literals[j]);
                rs->bigram_bits[b >> 6] |= UINT64_C(1) << (b & 63);
        }
        return 0;
}

int rule_set_prepare(RuleSet *rs) {
        uint32_t max_groups = 0;
        int r;

        for (size_t i = 0; i < rs->n_rules; i++) {
                uint32_t c = 0;
                (void) pcre2_pattern_info(rs->rules[i].code, PCRE2_INFO_CAPTURECOUNT, &c);
                max_groups = MAX(max_groups, c);
        }

        rs->mctx = pcre2_match_context_create(NULL);
        if (!rs->mctx)
                return -ENOMEM;
        (void) pcre2_set_match_limit(rs->mctx, RULE_MATCH_LIMIT);
        (void) pcre2_set_depth_limit(rs->mctx, RULE_DEPTH_LIMIT);
        (void) pcre2_set_heap_limit(rs->mctx, 8192); /* KiB, for the interpreter's backtracking */
        rs->jit_stack = pcre2_jit_stack_create(32 * 1024, RULE_JIT_STACK_BYTES_MAX, NULL);
        if (rs->jit_stack) /* NULL without JIT support: then nothing uses it */
                pcre2_jit_stack_assign(rs->mctx, NULL, rs->jit_stack);
        rs->md = pcre2_match_data_create(max_groups + 1, NULL);
        if (!rs->md)
                return -ENOMEM;

        r = prefilter_build(rs);
        if (r < 0)
                return r;
        rs->prefilter = true;
        return 0;
}

void rule_set_set_prefilter(RuleSet *rs, bool enabled) {
        rs->prefilter = enabled;
}

/* One pass over the message: marks each rule whose literal occurs in it with the current gen. */
static void prefilter_scan(RuleSet *rs, const char *s, size_t n) {
        uint64_t gen = rs->gen;

        for (size_t i = 0; i + 1 < n; i++) {
                unsigned b = bigram(s + i);

                if (_likely_(!(rs->bigram_bits[b >> 6] & (UINT64_C(1) << (b & 63)))))
                        continue;
                for (size_t k = rs->bigram_start[b]; k < rs->bigram_start[b + 1]; k++) {
                        const PrefilterLiteral *l = &rs->literals[k];
                        Rule *r = &rs->rules[l->rule];

                        /* The literal would start at i - l->at. */
                        if (r->candidate_gen != gen && l->at <= i && l->len <= n - (i - l->at) &&
                            memcmp(s + i - l->at, l->bytes, l->len) == 0)
                                r->candidate_gen = gen;
                }
        }
}

static bool field_matches(const char *want, const char *have) {
        return !want || (have && streq(want, have));
}

/* Whether rec is the kind of record rule r looks at, before its pattern is tried. */
static bool rule_admits(const Rule *r, const LogRecord *rec, RuleMatchFlags flags) {
        if (r->severity >= 0 && rec->priority >= 0 && rec->priority > r->severity)
                return false;

        switch (r->source) {
        case RULE_SOURCE_KERNEL:
                /*
                 * The daemon reads kernel events from /dev/kmsg only; the same messages arrive
                 * again through journald (_TRANSPORT=kernel), and matching both would report every
                 * event twice. So kernel rules never look at journal records.
                 */
                if (rec->source == LOG_SOURCE_JOURNAL)
                        return false;
                return rec->kernel_origin || r->origin_any;

        case RULE_SOURCE_JOURNAL:
                if (rec->source != LOG_SOURCE_JOURNAL)
                        return false;
                if (flags & RULE_MATCH_IGNORE_TRUSTED_FIELDS)
                        return true;
                /* Only trusted fields, which journald sets itself; never SYSLOG_IDENTIFIER. */
                return field_matches(r->unit, rec->unit) && field_matches(r->comm, rec->comm) &&
                       field_matches(r->exe, rec->exe) && field_matches(r->transport, rec->transport) &&
                       (r->uid == (uid_t) -1 || r->uid == rec->uid);

        default:
                return false;
        }
}

static bool pcre2_is_limit(int rc) {
        return rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT ||
               rc == PCRE2_ERROR_JIT_STACKLIMIT;
}

int rule_set_match_full(RuleSet *rs, const LogRecord *rec, RuleMatchFlags flags, RuleMatchHandler handler,
                        void *userdata) {
        const char *msg = rec->message ?: "";
        size_t len = rec->message ? rec->message_len : 0;
        bool scanned = false;
        int n_matches = 0;

        assert(rs);
        rs->stats.lines++;
        rs->gen++;

        for (size_t i = 0; i < rs->n_rules; i++) {
                Rule *r = &rs->rules[i];
                int rc;

                if (!r->enabled || !rule_admits(r, rec, flags))
                        continue;
                r->stats.lines++;

                if (rs->prefilter) {
                        if (r->prefix && (len < r->prefix_len || memcmp(msg, r->prefix, r->prefix_len) != 0))
                                continue;
                        if (r->n_literals > 0) {
                                if (!scanned) {
                                        prefilter_scan(rs, msg, len);
                                        scanned = true;
                                }
                                if (r->candidate_gen != rs->gen)
                                        continue;
                        }
                }

                r->stats.regex_runs++;
                rs->stats.regex_runs++;
                if (r->jit)
                        rc = pcre2_jit_match(r->code, (PCRE2_SPTR) msg, len, 0, 0, rs->md, rs->mctx);
                else
                        rc = pcre2_match(r->code, (PCRE2_SPTR) msg, len, 0, 0, rs->md, rs->mctx);
                if (rc == PCRE2_ERROR_NOMATCH)
                        continue;
                if (pcre2_is_limit(rc)) {
                        r->stats.limit_hits++;
                        rs->stats.limit_hits++;
                        continue;
                }
                if (rc < 0)
                        return -EIO; /* PCRE2 refused the subject or ran out of memory */

                r->stats.matches++;
                rs->stats.matches++;
                n_matches++;
                if (!handler)
                        continue;

                PCRE2_SIZE *ov = pcre2_get_ovector_pointer(rs->md);
                uint32_t ov_pairs = pcre2_get_ovector_count(rs->md);
                size_t n_cap = 0;
                for (size_t k = 0; k < r->n_names; k++) {
                        uint32_t g = r->names[k].group;
                        if (g >= ov_pairs || g >= (uint32_t) (rc > 0 ? rc : (int) ov_pairs) ||
                            ov[2 * g] == PCRE2_UNSET)
                                continue;
                        rs->captures[n_cap++] = (RuleCapture) {
                                .name = r->names[k].name,
                                .value = msg + ov[2 * g],
                                .value_len = ov[2 * g + 1] - ov[2 * g],
                        };
                }
                RuleMatch m = {
                        .rule = r,
                        .n_captures = n_cap,
                        .captures = rs->captures,
                };
                int k = handler(&m, rec, userdata);
                if (k < 0)
                        return k;
        }
        return n_matches;
}

int rule_set_match(RuleSet *rs, const LogRecord *rec, RuleMatchHandler handler, void *userdata) {
        return rule_set_match_full(rs, rec, 0, handler, userdata);
}
