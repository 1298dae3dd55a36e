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
#include "basic/log.h"
#include "basic/macro.h"
#include "basic/parse-util.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "conf/conf-yaml.h"
#include "rules/rules-internal.h"

typedef struct LoadContext {
        ConfContext conf; /* the file being read and where its errors go */
        RuleSet *rs;
        size_t allocated;
        uint64_t before_usec, after_usec, cooldown_usec; /* defaults of the current file */
} LoadContext;

static const char *const top_keys[] = { "defaults", "rules" };
static const char *const defaults_keys[] = { "before", "after", "cooldown" };
static const char *const rule_keys[] = {
        "name", "description", "source", "match",  "origin",   "unit",     "comm",    "exe",
        "transport", "uid", "before", "after", "cooldown", "severity", "enabled", "group",
};
static const char *const transports[] = { "audit", "driver", "syslog", "journal", "stdout", "kernel" };

#define BEFORE_AFTER_USEC_MAX USEC_PER_HOUR
#define COOLDOWN_USEC_MAX (7 * USEC_PER_DAY)

static int load_defaults(LoadContext *c, yaml_document_t *doc, yaml_node_t *map) {
        yaml_node_t *v;
        int r;

        r = conf_check_mapping(&c->conf, doc, map, "'defaults' must be a mapping", "defaults", defaults_keys,
                          ELEMENTSOF(defaults_keys));
        if (r < 0)
                return r;
        if ((v = conf_mapping_get(doc, map, "before")) &&
            (r = conf_get_duration(&c->conf, v, "before", BEFORE_AFTER_USEC_MAX, &c->before_usec)) < 0)
                return r;
        if ((v = conf_mapping_get(doc, map, "after")) &&
            (r = conf_get_duration(&c->conf, v, "after", BEFORE_AFTER_USEC_MAX, &c->after_usec)) < 0)
                return r;
        if ((v = conf_mapping_get(doc, map, "cooldown")) &&
            (r = conf_get_duration(&c->conf, v, "cooldown", COOLDOWN_USEC_MAX, &c->cooldown_usec)) < 0)
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
        r->file = strdup(c->conf.file);
        if (!r->file)
                return -ENOMEM;

        q = conf_check_mapping(&c->conf, doc, map, "each rule must be a mapping with name, source and match", "a rule",
                          rule_keys, ELEMENTSOF(rule_keys));
        if (q < 0)
                return q;

        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                const char *key, *s;

                k = yaml_document_get_node(doc, p->key);
                v = yaml_document_get_node(doc, p->value);
                key = conf_scalar(k);

                if (streq(key, "name")) {
                        q = conf_set_string(&c->conf, v, key, RULE_NAME_BYTES_MAX, &r->name);
                        if (q < 0)
                                return q;
                        if (!name_is_valid(r->name))
                                return conf_error(&c->conf, v->start_mark,
                                                  "invalid rule name '%s': use only letters, digits, '-' and '_'",
                                                  r->name);
                        for (size_t i = 0; i < c->rs->n_rules; i++) {
                                const Rule *o = &c->rs->rules[i];
                                if (streq(o->name, r->name))
                                        return conf_error(&c->conf, v->start_mark,
                                                          "duplicate rule name '%s' (first defined at %s:%u:%u)",
                                                          r->name, o->file, o->line, o->column);
                        }
                } else if (streq(key, "group")) {
                        q = conf_set_string(&c->conf, v, key, RULE_NAME_BYTES_MAX, &r->group);
                        if (q < 0)
                                return q;
                        if (!*r->group || !name_is_valid(r->group))
                                return conf_error(&c->conf, v->start_mark,
                                                  "invalid group name '%s': use only letters, digits, '-' and '_'",
                                                  r->group);
                } else if (streq(key, "description")) {
                        q = conf_set_string(&c->conf, v, key, RULE_TEXT_BYTES_MAX, &r->description);
                } else if (streq(key, "source")) {
                        q = conf_get_string(&c->conf, v, key, 64, &s);
                        if (q < 0)
                                return q;
                        r->source = rule_source_from_string(s);
                        if (r->source < 0)
                                return conf_error(&c->conf, v->start_mark,
                                                  "invalid source '%s': expected kernel or journal", s);
                } else if (streq(key, "match")) {
                        q = conf_set_string(&c->conf, v, key, RULE_PATTERN_BYTES_MAX, &r->match);
                        match_node = v;
                } else if (streq(key, "origin")) {
                        q = conf_get_string(&c->conf, v, key, 64, &s);
                        if (q < 0)
                                return q;
                        if (streq(s, "any"))
                                r->origin_any = true;
                        else if (streq(s, "kernel"))
                                r->origin_any = false;
                        else
                                return conf_error(&c->conf, v->start_mark, "invalid origin '%s': expected kernel or any",
                                                  s);
                        kernel_only_key = k;
                } else if (streq(key, "unit") || streq(key, "comm") || streq(key, "exe")) {
                        char **f = streq(key, "unit") ? &r->unit : streq(key, "comm") ? &r->comm : &r->exe;
                        q = conf_set_string(&c->conf, v, key, RULE_TEXT_BYTES_MAX, f);
                        journal_only_key = journal_only_key ?: k;
                } else if (streq(key, "transport")) {
                        bool ok = false;
                        q = conf_set_string(&c->conf, v, key, RULE_TEXT_BYTES_MAX, &r->transport);
                        if (q < 0)
                                return q;
                        for (size_t i = 0; i < ELEMENTSOF(transports); i++)
                                ok = ok || streq(r->transport, transports[i]);
                        if (!ok)
                                return conf_error(&c->conf, v->start_mark,
                                                  "invalid transport '%s': expected audit, driver, syslog, "
                                                  "journal, stdout or kernel", r->transport);
                        journal_only_key = journal_only_key ?: k;
                } else if (streq(key, "uid")) {
                        uint32_t u;
                        q = conf_get_string(&c->conf, v, key, 16, &s);
                        if (q < 0)
                                return q;
                        if (safe_atou32(s, &u) < 0 || u == UINT32_MAX)
                                return conf_error(&c->conf, v->start_mark, "invalid uid '%s': expected a number", s);
                        r->uid = (uid_t) u;
                        journal_only_key = journal_only_key ?: k;
                } else if (streq(key, "before"))
                        q = conf_get_duration(&c->conf, v, key, BEFORE_AFTER_USEC_MAX, &r->before_usec);
                else if (streq(key, "after"))
                        q = conf_get_duration(&c->conf, v, key, BEFORE_AFTER_USEC_MAX, &r->after_usec);
                else if (streq(key, "cooldown"))
                        q = conf_get_duration(&c->conf, v, key, COOLDOWN_USEC_MAX, &r->cooldown_usec);
                else if (streq(key, "severity")) {
                        q = conf_get_string(&c->conf, v, key, 16, &s);
                        if (q < 0)
                                return q;
                        r->severity = rule_severity_from_string(s);
                        if (r->severity < 0)
                                return conf_error(&c->conf, v->start_mark,
                                                  "invalid severity '%s': expected emerg, alert, crit, err, "
                                                  "warning, notice, info or debug", s);
                } else if (streq(key, "enabled"))
                        q = conf_get_bool(&c->conf, v, key, &r->enabled);
                else
                        assert(false); /* conf_check_keys() let through a key this loop does not know */
                if (q < 0)
                        return q;
        }

        if (!r->name)
                return conf_error(&c->conf, map->start_mark, "rule is missing required key 'name'");
        if (r->source < 0)
                return conf_error(&c->conf, map->start_mark, "rule '%s' is missing required key 'source' (kernel or journal)",
                                  r->name);
        if (!r->match)
                return conf_error(&c->conf, map->start_mark, "rule '%s' is missing required key 'match'", r->name);
        if (r->source == RULE_SOURCE_KERNEL && journal_only_key)
                return conf_error(&c->conf, journal_only_key->start_mark,
                                  "'%s' filters journal entries and cannot be used in a 'source: kernel' rule",
                                  conf_scalar(journal_only_key));
        if (r->source == RULE_SOURCE_JOURNAL && kernel_only_key)
                return conf_error(&c->conf, kernel_only_key->start_mark,
                                  "'origin' applies only to 'source: kernel' rules");

        {
                _cleanup_free_ char *msg = NULL;
                size_t offset = 0;
                unsigned line, column;

                q = rule_compile(r, &offset, &msg);
                if (q == -EBADMSG) {
                        conf_scalar_offset_position(&c->conf, match_node, offset, &line, &column);
                        return conf_error_at(&c->conf, line, column, -EBADMSG,
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
        r = conf_check_mapping(&c->conf, doc, root, "the top level must be a mapping with 'rules' (and optionally 'defaults')",
                          "the top level", top_keys, ELEMENTSOF(top_keys));
        if (r < 0)
                return r;

        c->before_usec = RULE_BEFORE_USEC_DEFAULT;
        c->after_usec = RULE_AFTER_USEC_DEFAULT;
        c->cooldown_usec = RULE_COOLDOWN_USEC_DEFAULT;
        defaults = conf_mapping_get(doc, root, "defaults");
        if (defaults) {
                r = load_defaults(c, doc, defaults);
                if (r < 0)
                        return r;
        }

        rules = conf_mapping_get(doc, root, "rules");
        if (!rules)
                return conf_error(&c->conf, root->start_mark, "missing required key 'rules'");
        if (rules->type == YAML_SCALAR_NODE && rules->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
            rules->data.scalar.length == 0)
                return 0; /* "rules:" with nothing under it */
        if (rules->type != YAML_SEQUENCE_NODE)
                return conf_error(&c->conf, rules->start_mark, "'rules' must be a list, not %s", conf_node_type_name(rules));

        for (yaml_node_item_t *i = rules->data.sequence.items.start; i < rules->data.sequence.items.top; i++) {
                yaml_node_t *item = yaml_document_get_node(doc, *i);
                RuleSet *rs = c->rs;

                if (rs->n_rules >= RULES_MAX)
                        return conf_error(&c->conf, item->start_mark, "too many rules (at most %u)", RULES_MAX);
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

static int load_buffer(LoadContext *c, const char *file, const char *data, size_t size) {
        _cleanup_(conf_yaml_parser_deletep) yaml_parser_t parser = {};
        _cleanup_(conf_yaml_document_deletep) yaml_document_t *docp = NULL;
        yaml_document_t doc, extra;
        int r;

        c->conf.file = file;
        c->conf.data = data;
        c->conf.size = size;

        if (size > RULES_FILE_BYTES_MAX)
                return conf_error_at(&c->conf, 0, 0, -EFBIG, "file is too large (%zu bytes, at most %llu)", size,
                                     (unsigned long long) RULES_FILE_BYTES_MAX);
        if (!yaml_parser_initialize(&parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *) data, size);
        if (!yaml_parser_load(&parser, &doc))
                return conf_yaml_failure(&c->conf, &parser);
        docp = &doc;

        r = load_document(c, &doc);
        if (r < 0)
                return r;

        /* A second document would be silently ignored; say so instead. */
        if (!yaml_parser_load(&parser, &extra))
                return conf_yaml_failure(&c->conf, &parser);
        yaml_node_t *root = yaml_document_get_root_node(&extra);
        if (root) {
                yaml_mark_t m = root->start_mark;
                yaml_document_delete(&extra);
                return conf_error(&c->conf, m, "only one YAML document is allowed per rules file");
        }
        yaml_document_delete(&extra);
        return 0;
}

static int load_file(LoadContext *c, const char *path) {
        _cleanup_free_ char *data = NULL;
        size_t size;
        int r;

        c->conf.file = path;
        r = read_full_file(path, RULES_FILE_BYTES_MAX, &data, &size);
        if (r == -EFBIG)
                return conf_error_at(&c->conf, 0, 0, r, "file is too large (at most %llu bytes)",
                                     (unsigned long long) RULES_FILE_BYTES_MAX);
        if (r < 0)
                return conf_error_at(&c->conf, 0, 0, r, "cannot read rules: %s", strerror(-r));
        return load_buffer(c, path, data, size);
}

static int load_folder(LoadContext *c, const char *path) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_strv_ char **names = NULL;
        size_t n = 0, allocated = 0;
        int r;

        c->conf.file = path;
        d = opendir(path);
        if (!d)
                return conf_error_at(&c->conf, 0, 0, -errno, "cannot open rules folder: %s", strerror(errno));

        for (struct dirent *de; (de = readdir(d));) {
                if (de->d_name[0] == '.')
                        continue;
                if (!endswith(de->d_name, ".yaml")) {
                        /* A rules file named .yml is a rule set disabled by its name: say so. */
                        if (endswith(de->d_name, ".yml"))
                                log_warning("%s/%s: not read (rules files end in .yaml).", path, de->d_name);
                        continue;
                }
                if (n >= RULES_FILES_MAX)
                        return conf_error_at(&c->conf, 0, 0, -E2BIG, "too many *.yaml files (at most %u)", RULES_FILES_MAX);
                if (!GREEDY_REALLOC(names, allocated, n + 2))
                        return -ENOMEM;
                if (asprintf(&names[n], "%s/%s", path, de->d_name) < 0)
                        return -ENOMEM;
                names[++n] = NULL;
        }
        if (n == 0)
                return conf_error_at(&c->conf, 0, 0, -ENOENT, "no rules files (*.yaml) in folder");

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
        LoadContext c = { .conf = { .file = path, .reterr = reterr }, .rs = rs };
        struct stat st;
        int r;

        if (!rs)
                return -ENOMEM;
        if (stat(path, &st) < 0)
                return conf_error_at(&c.conf, 0, 0, -errno, "cannot access rules: %s", strerror(errno));
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
        LoadContext c = { .conf = { .file = file, .reterr = reterr }, .rs = rs };
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
