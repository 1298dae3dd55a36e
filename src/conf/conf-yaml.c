/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Positioned errors and typed accessors for YAML configuration; see conf-yaml.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/cleanup.h"
#include "basic/time-util.h"
#include "conf/conf-yaml.h"

void conf_error_done(ConfError *e) {
        if (!e)
                return;
        e->file = mfree(e->file);
        e->message = mfree(e->message);
        e->line = e->column = 0;
}

char *conf_error_format(const ConfError *e) {
        char *s = NULL;
        int k;

        if (e->line > 0)
                k = asprintf(&s, "%s:%u:%u: %s", e->file ?: "-", e->line, e->column, e->message ?: "error");
        else
                k = asprintf(&s, "%s: %s", e->file ?: "-", e->message ?: "error");
        return k < 0 ? NULL : s;
}

void conf_yaml_parser_deletep(yaml_parser_t *p) {
        yaml_parser_delete(p);
}

void conf_yaml_document_deletep(yaml_document_t **d) {
        if (*d)
                yaml_document_delete(*d);
}

int conf_error_at(ConfContext *c, unsigned line, unsigned column, int error, const char *fmt, ...) {
        va_list ap;

        if (!c->reterr)
                return error;
        conf_error_done(c->reterr);
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

/* Line and column (1-based) of byte offset in the file, for errors libyaml reports as offsets. */
void conf_offset_to_position(const ConfContext *c, size_t offset, unsigned *ret_line, unsigned *ret_column) {
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
void conf_scalar_offset_position(const ConfContext *c, const yaml_node_t *node, size_t offset,
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
                /* The end of the buffer counts as the next character: a size-bounded buffer may
                 * end right after the pattern, with no byte of its own to look at. */
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

const char *conf_nearest_key(const char *key, const char *const *keys, size_t n) {
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

const char *conf_node_type_name(const yaml_node_t *n) {
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

const char *conf_scalar(const yaml_node_t *n) {
        return (const char *) n->data.scalar.value;
}

/* Checks that every key of a mapping is a known, unique string. */
int conf_check_keys(ConfContext *c, yaml_document_t *doc, yaml_node_t *map, const char *what,
                      const char *const *keys, size_t n_keys) {
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                yaml_node_t *k = yaml_document_get_node(doc, p->key);
                bool known = false;

                if (!k || k->type != YAML_SCALAR_NODE)
                        return conf_error(c, k ? k->start_mark : map->start_mark, "keys in %s must be strings",
                                          what);
                for (size_t i = 0; i < n_keys; i++)
                        if (streq(conf_scalar(k), keys[i]))
                                known = true;
                if (!known) {
                        const char *near = conf_nearest_key(conf_scalar(k), keys, n_keys);
                        if (near)
                                return conf_error(c, k->start_mark, "unknown key '%s', did you mean '%s'?",
                                                  conf_scalar(k), near);
                        _cleanup_free_ char *list = NULL;
                        for (size_t i = 0; i < n_keys; i++) {
                                char *l = NULL;
                                if (asprintf(&l, "%s%s%s", list ?: "", list ? ", " : "", keys[i]) < 0)
                                        return -ENOMEM;
                                free(list);
                                list = l;
                        }
                        return conf_error(c, k->start_mark, "unknown key '%s' in %s (valid keys: %s)", conf_scalar(k),
                                          what, list);
                }
                for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
                        yaml_node_t *k2 = yaml_document_get_node(doc, q->key);
                        if (streq(conf_scalar(k2), conf_scalar(k)))
                                return conf_error(c, k->start_mark, "duplicate key '%s' (first at line %zu)",
                                                  conf_scalar(k), k2->start_mark.line + 1);
                }
        }
        return 0;
}

/* Checks that node is a mapping ("<must>, not a list" otherwise) whose keys are all known. */
int conf_check_mapping(ConfContext *c, yaml_document_t *doc, yaml_node_t *node, const char *must,
                         const char *what, const char *const *keys, size_t n_keys) {
        if (node->type != YAML_MAPPING_NODE)
                return conf_error(c, node->start_mark, "%s, not %s", must, conf_node_type_name(node));
        return conf_check_keys(c, doc, node, what, keys, n_keys);
}

/* The value of key as a non-empty string without NUL bytes, at most max bytes. */
int conf_get_string(ConfContext *c, const yaml_node_t *v, const char *key, size_t max, const char **ret) {
        if (v->type != YAML_SCALAR_NODE)
                return conf_error(c, v->start_mark, "'%s' must be a string, not %s", key, conf_node_type_name(v));
        if (v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
            (v->data.scalar.length == 0 || streq(conf_scalar(v), "~") || streq(conf_scalar(v), "null")))
                return conf_error(c, v->start_mark, "'%s' has no value", key);
        if (v->data.scalar.length == 0)
                return conf_error(c, v->start_mark, "'%s' is empty", key);
        if (strlen(conf_scalar(v)) != v->data.scalar.length)
                return conf_error(c, v->start_mark, "'%s' contains a NUL byte", key);
        if (v->data.scalar.length > max)
                return conf_error(c, v->start_mark, "'%s' is too long (%zu bytes, at most %zu)", key,
                                  v->data.scalar.length, max);
        *ret = conf_scalar(v);
        return 0;
}

int conf_set_string(ConfContext *c, const yaml_node_t *v, const char *key, size_t max, char **p) {
        const char *s;
        int r = conf_get_string(c, v, key, max, &s);
        if (r < 0)
                return r;
        free(*p);
        *p = strdup(s);
        return *p ? 0 : -ENOMEM;
}

int conf_get_duration(ConfContext *c, const yaml_node_t *v, const char *key, uint64_t max_usec,
                        uint64_t *ret) {
        char buf[FORMAT_TIMESPAN_MAX];
        const char *s;
        uint64_t u;
        int r;

        r = conf_get_string(c, v, key, 64, &s);
        if (r < 0)
                return r;
        if (parse_duration(s, &u) < 0)
                return conf_error(c, v->start_mark,
                                  "invalid duration '%s' for '%s': expected a number with a unit, like 500ms, "
                                  "90s, 5m or 1h", s, key);
        if (u > max_usec)
                return conf_error(c, v->start_mark, "'%s' is too long: %s, at most %s", key, s,
                                  format_timespan(buf, sizeof buf, max_usec));
        *ret = u;
        return 0;
}

int conf_get_bool(ConfContext *c, const yaml_node_t *v, const char *key, bool *ret) {
        static const char *const yes[] = { "true", "True", "TRUE", "yes", "on" };
        static const char *const no[] = { "false", "False", "FALSE", "no", "off" };
        const char *s;
        int r;

        r = conf_get_string(c, v, key, 16, &s);
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
        return conf_error(c, v->start_mark, "invalid value '%s' for '%s': expected true or false", s, key);
}

yaml_node_t *conf_mapping_get(yaml_document_t *doc, yaml_node_t *map, const char *key) {
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                yaml_node_t *k = yaml_document_get_node(doc, p->key);
                if (k && k->type == YAML_SCALAR_NODE && streq(conf_scalar(k), key))
                        return yaml_document_get_node(doc, p->value);
        }
        return NULL;
}

int conf_yaml_failure(ConfContext *c, const yaml_parser_t *p) {
        unsigned line, column;
        const char *problem = p->problem ?: "malformed YAML";

        if (p->error == YAML_MEMORY_ERROR)
                return -ENOMEM;
        if (p->error == YAML_READER_ERROR) {
                conf_offset_to_position(c, p->problem_offset, &line, &column);
                return conf_error_at(c, line, column, -EBADMSG, "invalid YAML: %s", problem);
        }
        if (p->context)
                return conf_error_at(c, (unsigned) p->problem_mark.line + 1, (unsigned) p->problem_mark.column + 1,
                                     -EBADMSG, "invalid YAML: %s (%s started at line %zu)", problem, p->context,
                                     p->context_mark.line + 1);
        return conf_error_at(c, (unsigned) p->problem_mark.line + 1, (unsigned) p->problem_mark.column + 1,
                             -EBADMSG, "invalid YAML: %s", problem);
}

