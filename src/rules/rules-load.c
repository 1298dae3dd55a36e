/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules.yaml (or a rules.d folder of *.yaml) to a RuleSet, with libyaml's document API.
 *
 * Every problem is reported once, precisely: file, line and column (1-based, as editors count)
 * and what is wrong, with the nearest valid key suggested for a misspelt one and, for a pattern
 * that does not compile, the column of the offending character inside the pattern. Loading is
 * all or nothing: the first error frees everything built so far.
 *
 * Input is bounded: file size, number of files, number of rules, pattern and text lengths (see
 * the limits in rules.h). The tree walked has a fixed depth (top level, rules list, one rule), so
 * YAML aliases cannot make the walk explode.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "basic/macro.h"
#include "basic/parse-util.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "rules/rules-internal.h"

typedef struct LoadContext {
        const char *file; /* as shown in errors */
        const char *data;
        size_t size;
        RuleError *reterr;
        RuleSet *rs;
        size_t allocated;
        uint64_t before_usec, after_usec, cooldown_usec; /* defaults of the current file */
} LoadContext;

static void yaml_parser_deletep(yaml_parser_t *p) {
        yaml_parser_delete(p);
}

static void yaml_document_deletep(yaml_document_t **d) {
        if (*d)
                yaml_document_delete(*d);
}

static int load_error_at(LoadContext *c, unsigned line, unsigned column, int error, const char *fmt, ...)
        _printf_(5, 6);
static int load_error_at(LoadContext *c, unsigned line, unsigned column, int error, const char *fmt, ...) {
        va_list ap;

        if (!c->reterr)
                return error;
        rule_error_done(c->reterr);
        c->reterr->file = strdup(c->file);
        c->reterr->line = line;
        c->reterr->column = column;
        va_start(ap, fmt);
        if (vasprintf(&c->reterr->message, fmt, ap) < 0)
                c->reterr->message = NULL;
        va_end(ap);
        if (!c->reterr->file || !c->reterr->message)
                return -ENOMEM;
        return error;
}

#define load_error(c, mark, ...)                                                                             \
        load_error_at((c), (unsigned) (mark).line + 1, (unsigned) (mark).column + 1, -EBADMSG, __VA_ARGS__)

/* Line and column (1-based) of byte offset in the file, for errors libyaml reports as offsets. */
static void offset_to_position(const LoadContext *c, size_t offset, unsigned *ret_line, unsigned *ret_column) {
        unsigned line = 1, column = 1;

        for (size_t i = 0; i < offset && i < c->size; i++) {
                if (c->data[i] == '\n') {
                        line++;
                        column = 1;
                } else if (((unsigned char) c->data[i] & 0xc0) != 0x80)
                        column++;
        }
        *ret_line = line;
        *ret_column = column;
}

/*
 * Where the byte at offset inside a scalar's value sits in the file. Follows the quoting rules of
 * the scalar's style far enough for single-line patterns; for anything else (a multi-line or
 * block scalar) it returns the scalar's own start.
 */
static void scalar_offset_position(const LoadContext *c, const yaml_node_t *node, size_t offset,
                                   unsigned *ret_line, unsigned *ret_column) {
        const char *s = c->data + node->start_mark.index, *end = c->data + c->size;
        unsigned column = (unsigned) node->start_mark.column + 1;
        yaml_scalar_style_t style = node->data.scalar.style;

        *ret_line = (unsigned) node->start_mark.line + 1;
        *ret_column = column;

        if (style == YAML_LITERAL_SCALAR_STYLE || style == YAML_FOLDED_SCALAR_STYLE)
                return;
        if (style != YAML_PLAIN_SCALAR_STYLE) {
                s++;
                column++;
        }
        for (size_t k = 0; k < offset; k++) {
                if (s >= end || *s == '\n')
                        return;
                if (style == YAML_SINGLE_QUOTED_SCALAR_STYLE && s[0] == '\'' && s + 1 < end && s[1] == '\'') {
                        s += 2;
                        column += 2;
                        continue;
                }
                if (style == YAML_DOUBLE_QUOTED_SCALAR_STYLE && s[0] == '\\' && s + 1 < end) {
                        size_t skip = s[1] == 'x' ? 4 : s[1] == 'u' ? 6 : s[1] == 'U' ? 10 : 2;
                        s += skip;
                        column += (unsigned) skip;
                        continue;
                }
                s++;
                if (s >= end || ((unsigned char) *s & 0xc0) != 0x80)
                        column++;
        }
        *ret_column = column;
}

static unsigned levenshtein(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        unsigned row[64];

        if (la >= ELEMENTSOF(row) || lb >= ELEMENTSOF(row))
                return UINT32_MAX;
        for (size_t j = 0; j <= lb; j++)
                row[j] = (unsigned) j;
        for (size_t i = 1; i <= la; i++) {
                unsigned diag = row[0];
                row[0] = (unsigned) i;
                for (size_t j = 1; j <= lb; j++) {
                        unsigned up = row[j];
                        unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
                        unsigned best = row[j] + 1;
                        if (row[j - 1] + 1 < best)
                                best = row[j - 1] + 1;
                        if (diag + cost < best)
                                best = diag + cost;
                        row[j] = best;
                        diag = up;
                }
        }
        return row[lb];
}

static const char *nearest_key(const char *key, const char *const *keys, size_t n) {
        const char *best = NULL;
        unsigned best_d = UINT32_MAX;

        for (size_t i = 0; i < n; i++) {
                unsigned d = levenshtein(key, keys[i]);
                if (d < best_d) {
                        best_d = d;
                        best = keys[i];
                }
        }
        /* Close enough to be a typo: two edits, or a third of a longer word. */
        if (best && (best_d <= 2 || best_d * 3 <= strlen(key)))
                return best;
        return NULL;
}

static const char *node_type_name(const yaml_node_t *n) {
        switch (n->type) {
        case YAML_SCALAR_NODE:
                return "a string";
        case YAML_SEQUENCE_NODE:
                return "a list";
        case YAML_MAPPING_NODE:
                return "a mapping";
        default:
                return "nothing";
        }
}

static const char *scalar(const yaml_node_t *n) {
        return (const char *) n->data.scalar.value;
}

/* Checks that every key of a mapping is a known, unique string. */
static int check_keys(LoadContext *c, yaml_document_t *doc, yaml_node_t *map, const char *what,
                      const char *const *keys, size_t n_keys) {
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                yaml_node_t *k = yaml_document_get_node(doc, p->key);
                bool known = false;

                if (!k || k->type != YAML_SCALAR_NODE)
                        return load_error(c, k ? k->start_mark : map->start_mark, "keys in %s must be strings",
                                          what);
                for (size_t i = 0; i < n_keys; i++)
                        if (streq(scalar(k), keys[i]))
                                known = true;
                if (!known) {
                        const char *near = nearest_key(scalar(k), keys, n_keys);
                        if (near)
                                return load_error(c, k->start_mark, "unknown key '%s', did you mean '%s'?",
                                                  scalar(k), near);
                        _cleanup_free_ char *list = NULL;
                        for (size_t i = 0; i < n_keys; i++) {
                                char *l = NULL;
                                if (asprintf(&l, "%s%s%s", list ?: "", list ? ", " : "", keys[i]) < 0)
                                        return -ENOMEM;
                                free(list);
                                list = l;
                        }
                        return load_error(c, k->start_mark, "unknown key '%s' in %s (valid keys: %s)", scalar(k),
                                          what, list);
                }
                for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
                        yaml_node_t *k2 = yaml_document_get_node(doc, q->key);
                        if (streq(scalar(k2), scalar(k)))
                                return load_error(c, k->start_mark, "duplicate key '%s' (first at line %zu)",
                                                  scalar(k), k2->start_mark.line + 1);
                }
        }
        return 0;
}

/* Checks that node is a mapping ("<must>, not a list" otherwise) whose keys are all known. */
static int check_mapping(LoadContext *c, yaml_document_t *doc, yaml_node_t *node, const char *must,
                         const char *what, const char *const *keys, size_t n_keys) {
        if (node->type != YAML_MAPPING_NODE)
                return load_error(c, node->start_mark, "%s, not %s", must, node_type_name(node));
        return check_keys(c, doc, node, what, keys, n_keys);
}

/* The value of key as a non-empty string without NUL bytes, at most max bytes. */
static int get_string(LoadContext *c, const yaml_node_t *v, const char *key, size_t max, const char **ret) {
        if (v->type != YAML_SCALAR_NODE)
                return load_error(c, v->start_mark, "'%s' must be a string, not %s", key, node_type_name(v));
        if (v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
            (v->data.scalar.length == 0 || streq(scalar(v), "~") || streq(scalar(v), "null")))
                return load_error(c, v->start_mark, "'%s' has no value", key);
        if (v->data.scalar.length == 0)
                return load_error(c, v->start_mark, "'%s' is empty", key);
        if (strlen(scalar(v)) != v->data.scalar.length)
                return load_error(c, v->start_mark, "'%s' contains a NUL byte", key);
        if (v->data.scalar.length > max)
                return load_error(c, v->start_mark, "'%s' is too long (%zu bytes, at most %zu)", key,
                                  v->data.scalar.length, max);
        *ret = scalar(v);
        return 0;
}

static int set_string(LoadContext *c, const yaml_node_t *v, const char *key, size_t max, char **p) {
        const char *s;
        int r = get_string(c, v, key, max, &s);
        if (r < 0)
                return r;
        free(*p);
        *p = strdup(s);
        return *p ? 0 : -ENOMEM;
}

static int get_duration(LoadContext *c, const yaml_node_t *v, const char *key, uint64_t max_usec,
                        uint64_t *ret) {
        char buf[FORMAT_TIMESPAN_MAX];
        const char *s;
        uint64_t u;
        int r;

        r = get_string(c, v, key, 64, &s);
        if (r < 0)
                return r;
        if (parse_duration(s, &u) < 0)
                return load_error(c, v->start_mark,
                                  "invalid duration '%s' for '%s': expected a number with a unit, like 500ms, "
                                  "90s, 5m or 1h", s, key);
        if (u > max_usec)
                return load_error(c, v->start_mark, "'%s' is too long: %s, at most %s", key, s,
                                  format_timespan(buf, sizeof buf, max_usec));
        *ret = u;
        return 0;
}

static int get_bool(LoadContext *c, const yaml_node_t *v, const char *key, bool *ret) {
        static const char *const yes[] = { "true", "True", "TRUE", "yes", "on" };
        static const char *const no[] = { "false", "False", "FALSE", "no", "off" };
        const char *s;
        int r;

        r = get_string(c, v, key, 16, &s);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (streq(s, yes[i])) {
                        *ret = true;
                        return 0;
                }
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (streq(s, no[i])) {
                        *ret = false;
                        return 0;
                }
        return load_error(c, v->start_mark, "invalid value '%s' for '%s': expected true or false", s, key);
}

static yaml_node_t *mapping_get(yaml_document_t *doc, yaml_node_t *map, const char *key) {
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                yaml_node_t *k = yaml_document_get_node(doc, p->key);
                if (k && k->type == YAML_SCALAR_NODE && streq(scalar(k), key))
                        return yaml_document_get_node(doc, p->value);
        }
        return NULL;
}

static const char *const top_keys[] = { "defaults", "rules" };
static const char *const defaults_keys[] = { "before", "after", "cooldown" };
static const char *const rule_keys[] = {
        "name", "description", "source", "match",  "origin",   "unit",     "comm",    "exe",
        "transport", "uid", "before", "after", "cooldown", "severity", "enabled",
};
static const char *const transports[] = { "audit", "driver", "syslog", "journal", "stdout", "kernel" };

#define BEFORE_AFTER_USEC_MAX USEC_PER_HOUR
#define COOLDOWN_USEC_MAX (7 * USEC_PER_DAY)

static int load_defaults(LoadContext *c, yaml_document_t *doc, yaml_node_t *map) {
        yaml_node_t *v;
        int r;

        r = check_mapping(c, doc, map, "'defaults' must be a mapping", "defaults", defaults_keys,
                          ELEMENTSOF(defaults_keys));
        if (r < 0)
                return r;
        if ((v = mapping_get(doc, map, "before")) &&
            (r = get_duration(c, v, "before", BEFORE_AFTER_USEC_MAX, &c->before_usec)) < 0)
                return r;
        if ((v = mapping_get(doc, map, "after")) &&
            (r = get_duration(c, v, "after", BEFORE_AFTER_USEC_MAX, &c->after_usec)) < 0)
                return r;
        if ((v = mapping_get(doc, map, "cooldown")) &&
            (r = get_duration(c, v, "cooldown", COOLDOWN_USEC_MAX, &c->cooldown_usec)) < 0)
                return r;
        return 0;
}

static bool name_is_valid(const char *s) {
        for (; *s; s++)
                if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", *s))
                        return false;
        return true;
}

static int load_rule(LoadContext *c, yaml_document_t *doc, yaml_node_t *map, Rule *r) {
        yaml_node_t *k, *v, *match_node = NULL, *kernel_only_key = NULL, *journal_only_key = NULL;
        int q;

        /* Initialized before anything can fail: the caller frees *r on error. */
        *r = (Rule) {
                .source = _RULE_SOURCE_INVALID,
                .before_usec = c->before_usec,
                .after_usec = c->after_usec,
                .cooldown_usec = c->cooldown_usec,
                .severity = -1,
                .enabled = true,
                .uid = (uid_t) -1,
                .line = (unsigned) map->start_mark.line + 1,
                .column = (unsigned) map->start_mark.column + 1,
        };
        r->file = strdup(c->file);
        if (!r->file)
                return -ENOMEM;

        q = check_mapping(c, doc, map, "each rule must be a mapping with name, source and match", "a rule",
                          rule_keys, ELEMENTSOF(rule_keys));
        if (q < 0)
                return q;

        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                const char *key, *s;

                k = yaml_document_get_node(doc, p->key);
                v = yaml_document_get_node(doc, p->value);
                key = scalar(k);

                if (streq(key, "name")) {
                        q = set_string(c, v, key, RULE_NAME_BYTES_MAX, &r->name);
                        if (q < 0)
                                return q;
                        if (!name_is_valid(r->name))
                                return load_error(c, v->start_mark,
                                                  "invalid rule name '%s': use only letters, digits, '-' and '_'",
                                                  r->name);
                        for (size_t i = 0; i < c->rs->n_rules; i++) {
                                const Rule *o = &c->rs->rules[i];
                                if (streq(o->name, r->name))
                                        return load_error(c, v->start_mark,
                                                          "duplicate rule name '%s' (first defined at %s:%u:%u)",
                                                          r->name, o->file, o->line, o->column);
                        }
                } else if (streq(key, "description")) {
                        q = set_string(c, v, key, RULE_TEXT_BYTES_MAX, &r->description);
                } else if (streq(key, "source")) {
                        q = get_string(c, v, key, 64, &s);
                        if (q < 0)
                                return q;
                        r->source = rule_source_from_string(s);
                        if (r->source < 0)
                                return load_error(c, v->start_mark,
                                                  "invalid source '%s': expected kernel or journal", s);
                } else if (streq(key, "match")) {
                        q = set_string(c, v, key, RULE_PATTERN_BYTES_MAX, &r->match);
                        match_node = v;
                } else if (streq(key, "origin")) {
                        q = get_string(c, v, key, 64, &s);
                        if (q < 0)
                                return q;
                        if (streq(s, "any"))
                                r->origin_any = true;
                        else if (streq(s, "kernel"))
                                r->origin_any = false;
                        else
                                return load_error(c, v->start_mark, "invalid origin '%s': expected kernel or any",
                                                  s);
                        kernel_only_key = k;
                } else if (streq(key, "unit") || streq(key, "comm") || streq(key, "exe")) {
                        char **f = streq(key, "unit") ? &r->unit : streq(key, "comm") ? &r->comm : &r->exe;
                        q = set_string(c, v, key, RULE_TEXT_BYTES_MAX, f);
                        journal_only_key = journal_only_key ?: k;
                } else if (streq(key, "transport")) {
                        bool ok = false;
                        q = set_string(c, v, key, RULE_TEXT_BYTES_MAX, &r->transport);
                        if (q < 0)
                                return q;
                        for (size_t i = 0; i < ELEMENTSOF(transports); i++)
                                ok = ok || streq(r->transport, transports[i]);
                        if (!ok)
                                return load_error(c, v->start_mark,
                                                  "invalid transport '%s': expected audit, driver, syslog, "
                                                  "journal, stdout or kernel", r->transport);
                        journal_only_key = journal_only_key ?: k;
                } else if (streq(key, "uid")) {
                        uint32_t u;
                        q = get_string(c, v, key, 16, &s);
                        if (q < 0)
                                return q;
                        if (safe_atou32(s, &u) < 0 || u == UINT32_MAX)
                                return load_error(c, v->start_mark, "invalid uid '%s': expected a number", s);
                        r->uid = (uid_t) u;
                        journal_only_key = journal_only_key ?: k;
                } else if (streq(key, "before"))
                        q = get_duration(c, v, key, BEFORE_AFTER_USEC_MAX, &r->before_usec);
                else if (streq(key, "after"))
                        q = get_duration(c, v, key, BEFORE_AFTER_USEC_MAX, &r->after_usec);
                else if (streq(key, "cooldown"))
                        q = get_duration(c, v, key, COOLDOWN_USEC_MAX, &r->cooldown_usec);
                else if (streq(key, "severity")) {
                        q = get_string(c, v, key, 16, &s);
                        if (q < 0)
                                return q;
                        r->severity = rule_severity_from_string(s);
                        if (r->severity < 0)
                                return load_error(c, v->start_mark,
                                                  "invalid severity '%s': expected emerg, alert, crit, err, "
                                                  "warning, notice, info or debug", s);
                } else if (streq(key, "enabled"))
                        q = get_bool(c, v, key, &r->enabled);
                else
                        assert(false); /* check_keys() let through a key this loop does not know */
                if (q < 0)
                        return q;
        }

        if (!r->name)
                return load_error(c, map->start_mark, "rule is missing required key 'name'");
        if (r->source < 0)
                return load_error(c, map->start_mark, "rule '%s' is missing required key 'source' (kernel or journal)",
                                  r->name);
        if (!r->match)
                return load_error(c, map->start_mark, "rule '%s' is missing required key 'match'", r->name);
        if (r->source == RULE_SOURCE_KERNEL && journal_only_key)
                return load_error(c, journal_only_key->start_mark,
                                  "'%s' filters journal entries and cannot be used in a 'source: kernel' rule",
                                  scalar(journal_only_key));
        if (r->source == RULE_SOURCE_JOURNAL && kernel_only_key)
                return load_error(c, kernel_only_key->start_mark,
                                  "'origin' applies only to 'source: kernel' rules");

        {
                _cleanup_free_ char *msg = NULL;
                size_t offset = 0;
                unsigned line, column;

                q = rule_compile(r, &offset, &msg);
                if (q == -EBADMSG) {
                        scalar_offset_position(c, match_node, offset, &line, &column);
                        return load_error_at(c, line, column, -EBADMSG,
                                             "invalid pattern in rule '%s': %s (at offset %zu of the pattern)",
                                             r->name, msg, offset);
                }
                if (q < 0)
                        return q;
        }
        return 0;
}

static int load_document(LoadContext *c, yaml_document_t *doc) {
        yaml_node_t *root = yaml_document_get_root_node(doc), *rules, *defaults;
        int r;

        if (!root)
                return 0; /* an empty file: no rules */
        r = check_mapping(c, doc, root, "the top level must be a mapping with 'rules' (and optionally 'defaults')",
                          "the top level", top_keys, ELEMENTSOF(top_keys));
        if (r < 0)
                return r;

        c->before_usec = RULE_BEFORE_USEC_DEFAULT;
        c->after_usec = RULE_AFTER_USEC_DEFAULT;
        c->cooldown_usec = RULE_COOLDOWN_USEC_DEFAULT;
        defaults = mapping_get(doc, root, "defaults");
        if (defaults) {
                r = load_defaults(c, doc, defaults);
                if (r < 0)
                        return r;
        }

        rules = mapping_get(doc, root, "rules");
        if (!rules)
                return load_error(c, root->start_mark, "missing required key 'rules'");
        if (rules->type == YAML_SCALAR_NODE && rules->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
            rules->data.scalar.length == 0)
                return 0; /* "rules:" with nothing under it */
        if (rules->type != YAML_SEQUENCE_NODE)
                return load_error(c, rules->start_mark, "'rules' must be a list, not %s", node_type_name(rules));

        for (yaml_node_item_t *i = rules->data.sequence.items.start; i < rules->data.sequence.items.top; i++) {
                yaml_node_t *item = yaml_document_get_node(doc, *i);
                RuleSet *rs = c->rs;

                if (rs->n_rules >= RULES_MAX)
                        return load_error(c, item->start_mark, "too many rules (at most %u)", RULES_MAX);
                if (!GREEDY_REALLOC(rs->rules, c->allocated, rs->n_rules + 1))
                        return -ENOMEM;
                r = load_rule(c, doc, item, &rs->rules[rs->n_rules]);
                if (r < 0) {
                        rule_done(&rs->rules[rs->n_rules]);
                        return r;
                }
                rs->n_rules++;
        }
        return 0;
}

static int yaml_failure(LoadContext *c, const yaml_parser_t *p) {
        unsigned line, column;
        const char *problem = p->problem ?: "malformed YAML";

        if (p->error == YAML_MEMORY_ERROR)
                return -ENOMEM;
        if (p->error == YAML_READER_ERROR) {
                offset_to_position(c, p->problem_offset, &line, &column);
                return load_error_at(c, line, column, -EBADMSG, "invalid YAML: %s", problem);
        }
        if (p->context)
                return load_error_at(c, (unsigned) p->problem_mark.line + 1, (unsigned) p->problem_mark.column + 1,
                                     -EBADMSG, "invalid YAML: %s (%s started at line %zu)", problem, p->context,
                                     p->context_mark.line + 1);
        return load_error_at(c, (unsigned) p->problem_mark.line + 1, (unsigned) p->problem_mark.column + 1,
                             -EBADMSG, "invalid YAML: %s", problem);
}

static int load_buffer(LoadContext *c, const char *file, const char *data, size_t size) {
        _cleanup_(yaml_parser_deletep) yaml_parser_t parser = {};
        _cleanup_(yaml_document_deletep) yaml_document_t *docp = NULL;
        yaml_document_t doc, extra;
        int r;

        c->file = file;
        c->data = data;
        c->size = size;

        if (size > RULES_FILE_BYTES_MAX)
                return load_error_at(c, 0, 0, -EFBIG, "file is too large (%zu bytes, at most %llu)", size,
                                     (unsigned long long) RULES_FILE_BYTES_MAX);
        if (!yaml_parser_initialize(&parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *) data, size);
        if (!yaml_parser_load(&parser, &doc))
                return yaml_failure(c, &parser);
        docp = &doc;

        r = load_document(c, &doc);
        if (r < 0)
                return r;

        /* A second document would be silently ignored; say so instead. */
        if (!yaml_parser_load(&parser, &extra))
                return yaml_failure(c, &parser);
        yaml_node_t *root = yaml_document_get_root_node(&extra);
        if (root) {
                yaml_mark_t m = root->start_mark;
                yaml_document_delete(&extra);
                return load_error(c, m, "only one YAML document is allowed per rules file");
        }
        yaml_document_delete(&extra);
        return 0;
}

static int load_file(LoadContext *c, const char *path) {
        _cleanup_free_ char *data = NULL;
        size_t size;
        int r;

        c->file = path;
        r = read_full_file(path, RULES_FILE_BYTES_MAX, &data, &size);
        if (r == -EFBIG)
                return load_error_at(c, 0, 0, r, "file is too large (at most %llu bytes)",
                                     (unsigned long long) RULES_FILE_BYTES_MAX);
        if (r < 0)
                return load_error_at(c, 0, 0, r, "cannot read rules: %s", strerror(-r));
        return load_buffer(c, path, data, size);
}

static int load_folder(LoadContext *c, const char *path) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_strv_ char **names = NULL;
        size_t n = 0, allocated = 0;
        int r;

        c->file = path;
        d = opendir(path);
        if (!d)
                return load_error_at(c, 0, 0, -errno, "cannot open rules folder: %s", strerror(errno));

        for (struct dirent *de; (de = readdir(d));) {
                if (de->d_name[0] == '.' || !endswith(de->d_name, ".yaml"))
                        continue;
                if (n >= RULES_FILES_MAX)
                        return load_error_at(c, 0, 0, -E2BIG, "too many *.yaml files (at most %u)", RULES_FILES_MAX);
                if (!GREEDY_REALLOC(names, allocated, n + 2))
                        return -ENOMEM;
                if (asprintf(&names[n], "%s/%s", path, de->d_name) < 0)
                        return -ENOMEM;
                names[++n] = NULL;
        }
        if (n == 0)
                return load_error_at(c, 0, 0, -ENOENT, "no rules files (*.yaml) in folder");

        qsort(names, n, sizeof names[0], cmp_string_ptr);
        for (size_t i = 0; i < n; i++) {
                r = load_file(c, names[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int load_finish(LoadContext *c, RuleSet **ret) {
        int r = rule_set_prepare(c->rs);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c->rs);
        return 0;
}

int rule_set_load(const char *path, RuleSet **ret, RuleError *reterr) {
        _cleanup_(rule_set_freep) RuleSet *rs = rule_set_new();
        LoadContext c = { .file = path, .reterr = reterr, .rs = rs };
        struct stat st;
        int r;

        if (!rs)
                return -ENOMEM;
        if (stat(path, &st) < 0)
                return load_error_at(&c, 0, 0, -errno, "cannot access rules: %s", strerror(errno));
        r = S_ISDIR(st.st_mode) ? load_folder(&c, path) : load_file(&c, path);
        if (r < 0)
                return r;
        r = load_finish(&c, ret);
        if (r >= 0)
                rs = NULL;
        return r;
}

int rule_set_load_string(const char *file, const char *data, size_t size, RuleSet **ret, RuleError *reterr) {
        _cleanup_(rule_set_freep) RuleSet *rs = rule_set_new();
        LoadContext c = { .file = file, .reterr = reterr, .rs = rs };
        int r;

        if (!rs)
                return -ENOMEM;
        r = load_buffer(&c, file, data, size);
        if (r < 0)
                return r;
        r = load_finish(&c, ret);
        if (r >= 0)
                rs = NULL;
        return r;
}
