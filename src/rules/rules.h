/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rules engine: what a rule is, how a set of them is loaded from rules.yaml (or a rules.d
 * folder) and how a log record is matched against the whole set. The engine owns parsing,
 * validation with precise file:line:column errors, PCRE2 compilation (JIT where available) with
 * match limits, a literal prefilter that keeps the per-line cost low, named captures and the
 * counters. It knows nothing of incidents, cooldowns in time or bundles: the daemon's incident
 * manager applies before/after/cooldown; the log sources build the LogRecords.
 *
 * Threading: a RuleSet is used by one thread at a time (rule_set_match() writes scratch data
 * and counters inside it). A reload builds a new RuleSet and swaps it in only when it loaded
 * completely, so a bad file never replaces working rules.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include "basic/cleanup.h"
#include "conf/conf-yaml.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "logsrc/log-record.h"

/* Limits on input someone else controls (STYLE.md "Limits"). */
#define RULES_FILE_BYTES_MAX (UINT64_C(1) << 20) /* one rules file */
#define RULES_FILES_MAX 256U                     /* *.yaml files in a rules.d folder */
#define RULES_MAX 1024U                          /* rules in a set, across all files */
#define RULE_PATTERN_BYTES_MAX 4096U             /* one match: pattern */
#define RULE_NAME_BYTES_MAX 64U
#define RULE_TEXT_BYTES_MAX 1024U /* description and filter values */
#define RULE_CAPTURES_MAX 128U    /* named groups of a pattern (a name in several alternatives: each) */

/* PCRE2 limits: a pattern that needs more than this on one line counts a limit hit, not a match. */
#define RULE_MATCH_LIMIT 200000U
#define RULE_DEPTH_LIMIT 10000U
#define RULE_JIT_STACK_BYTES_MAX (512U * 1024U)

#define RULE_BEFORE_USEC_DEFAULT (60 * USEC_PER_SEC)
#define RULE_AFTER_USEC_DEFAULT (10 * USEC_PER_SEC)
#define RULE_COOLDOWN_USEC_DEFAULT (10 * USEC_PER_MINUTE)

typedef enum RuleSource {
        RULE_SOURCE_KERNEL,
        RULE_SOURCE_JOURNAL,
        _RULE_SOURCE_MAX,
        _RULE_SOURCE_INVALID = -EINVAL,
} RuleSource;

const char *rule_source_to_string(RuleSource s);
RuleSource rule_source_from_string(const char *s);

/* Counters, for the whole set (rule_set_get_stats) or one rule (rule_set_get_rule_stats). */
typedef struct RuleStats {
        uint64_t lines;      /* records offered (per rule: records its source/filters admitted) */
        uint64_t matches;    /* rule matches (a record matching three rules counts three) */
        uint64_t limit_hits; /* regex runs stopped by the match/depth/JIT stack limit */
        uint64_t regex_runs; /* regex runs, i.e. records that passed the prefilter */
} RuleStats;

typedef struct Rule {
        char *name;
        char *description; /* NULL when unset */
        RuleSource source;
        bool origin_any; /* origin: any, kernel rules only: also user-written kmsg records */
        char *match;     /* the pattern text */
        /* Rules of one group share one cooldown: a match of any of them inside the cooldown of the
         * group's incident joins it. NULL: the rule is its own group. */
        char *group;
        uint64_t before_usec, after_usec, cooldown_usec;
        /*
         * severity: the least urgent syslog level (0 emerg .. 7 debug) a record may have for the
         * rule to fire; records of unknown priority always pass. -1 when unset (any level).
         */
        int severity;
        bool enabled;

        /* Journal trusted-field filters (journal rules only), NULL when unset. */
        char *unit;      /* _SYSTEMD_UNIT */
        char *comm;      /* _COMM */
        char *exe;       /* _EXE */
        char *transport; /* _TRANSPORT */
        uid_t uid;       /* _UID, (uid_t) -1 when unset */

        char *file; /* where it was defined */
        unsigned line, column;

        /* Private to the engine (rules-match.c). */
        pcre2_code *code;
        bool jit;
        char *prefix; /* literal the pattern starts with after '^', or NULL */
        size_t prefix_len;
        /* Literals of which every match contains at least one (one for a plain pattern, one per
         * alternative for a top-level alternation); none: no prefilter. */
        struct {
                char *bytes;
                size_t len;
        } *literals;
        size_t n_literals;
        struct {
                const char *name; /* inside the compiled pattern's name table */
                uint32_t group;
        } *names;
        size_t n_names;
        RuleStats stats;
        uint64_t candidate_gen;
} Rule;

typedef struct RuleSet RuleSet;

/* The cooldown a rule's matches are counted in: its group's, or its own. */
static inline const char *rule_cooldown_key(const Rule *r) {
        return r->group ?: r->name;
}

/* Errors in rules files are configuration errors like any other (conf/conf-yaml.h). */
typedef ConfError RuleError;
#define RULE_ERROR_NULL CONF_ERROR_NULL
static inline void rule_error_done(RuleError *e) {
        conf_error_done(e);
}
/* "file:line:column: message" (or "file: message"); NULL on OOM. */
static inline char *rule_error_format(const RuleError *e) {
        return conf_error_format(e);
}

/*
 * Loads path, a rules file or a folder of *.yaml files (read in name order, rule names unique
 * across them). On error returns a negative errno (-EBADMSG for a problem in the rules, -ENOENT,
 * -EFBIG, -E2BIG...) and fills *reterr; nothing is half-loaded. reterr may be NULL.
 */
int rule_set_load(const char *path, RuleSet **ret, RuleError *reterr);
/* Same, from a buffer; file names the buffer in errors. */
int rule_set_load_string(const char *file, const char *data, size_t size, RuleSet **ret, RuleError *reterr);
RuleSet *rule_set_free(RuleSet *rs);
DEFINE_TRIVIAL_CLEANUP_FUNC(RuleSet *, rule_set_free);

size_t rule_set_size(const RuleSet *rs);
const Rule *rule_set_get(const RuleSet *rs, size_t i);
/* Index of the rule with that name, or -ENOENT. */
int rule_set_find(const RuleSet *rs, const char *name);

typedef struct RuleCapture {
        const char *name;
        const char *value; /* points into the record's message; not NUL-terminated */
        size_t value_len;
} RuleCapture;

typedef struct RuleMatch {
        const Rule *rule;
        size_t n_captures; /* named groups that took part in the match */
        const RuleCapture *captures;
} RuleMatch;

/* Called for each match; the RuleMatch is valid only during the call. A negative return stops
 * matching and is returned by rule_set_match(). */
typedef int (*RuleMatchHandler)(const RuleMatch *m, const LogRecord *rec, void *userdata);

typedef enum RuleMatchFlags {
        /*
         * Match journal rules on their pattern alone. For tprofd --test-rules only: text input
         * carries no trusted journal fields, so the filters cannot be checked there.
         */
        RULE_MATCH_IGNORE_TRUSTED_FIELDS = 1 << 0,
} RuleMatchFlags;

/*
 * Calls handler for every enabled rule that matches rec, in file order, respecting source,
 * kernel_origin/origin, severity and the journal trusted-field filters. Returns the number of
 * matches, or a negative errno (from handler, or a PCRE2 failure other than "no match" and the
 * limits). Limit hits are counted, never block, and are not matches.
 */
int rule_set_match(RuleSet *rs, const LogRecord *rec, RuleMatchHandler handler, void *userdata);
int rule_set_match_full(RuleSet *rs, const LogRecord *rec, RuleMatchFlags flags, RuleMatchHandler handler,
                        void *userdata);

/* Turns the literal prefilter off or on (default on). Results are the same either way; only speed
 * differs. For tests and benchmarks. */
void rule_set_set_prefilter(RuleSet *rs, bool enabled);

void rule_set_get_stats(const RuleSet *rs, RuleStats *ret);
void rule_set_get_rule_stats(const RuleSet *rs, size_t i, RuleStats *ret);
void rule_set_reset_stats(RuleSet *rs);

/*
 * Journal matches so the journal source reads only entries some journal rule can match. Each
 * string ("_SYSTEMD_UNIT=kubelet.service") is one alternative: add each with sd_journal_add_match()
 * followed by sd_journal_add_disjunction(). Together they select a superset of what the rules can
 * match (a rule with several filters contributes its most selective one; the engine checks all of
 * them again). *ret_any is true when some enabled journal rule has no trusted-field filter: then
 * every entry is needed and the strings should not be used as a filter. *ret_strv is
 * NULL-terminated, sorted, without duplicates; free it with strv_free().
 */
int rule_set_journal_matches(const RuleSet *rs, char ***ret_strv, bool *ret_any);

/* Syslog level names as rules.yaml takes them: emerg alert crit err warning notice info debug
 * (also "error", "warn", "panic"). Returns 0-7 or -EINVAL. */
int rule_severity_from_string(const char *s);
const char *rule_severity_to_string(int level);
