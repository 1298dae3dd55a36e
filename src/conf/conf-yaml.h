/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading configuration written in YAML (rules.yaml, tprofd.yaml) with errors a person can act on:
 * every problem names the file, the line and column, and the cause, and an unknown key comes with
 * the nearest valid one. The helpers check a libyaml document node by node; they know nothing of
 * what the keys mean, which stays with each loader.
 *
 * Errors: a helper returns -EBADMSG (or -ENOMEM) and fills the ConfError of its ConfContext; only
 * the first error is kept by the loaders, which stop at it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "basic/macro.h"

typedef struct ConfError {
        char *file;
        unsigned line, column; /* 1-based; 0 when not about a position (e.g. an unreadable file) */
        char *message;
} ConfError;

#define CONF_ERROR_NULL ((ConfError) {})
void conf_error_done(ConfError *e);
/* "file:line:column: message" (or "file: message"); NULL on OOM. */
char *conf_error_format(const ConfError *e);

typedef struct ConfContext {
        const char *file; /* as shown in errors */
        const char *data;
        size_t size;
        ConfError *reterr; /* may be NULL: then errors only return their code */
} ConfContext;

int conf_error_at(ConfContext *c, unsigned line, unsigned column, int error, const char *fmt, ...) _printf_(5, 6);
#define conf_error(c, mark, ...)                                                                             \
        conf_error_at((c), (unsigned) (mark).line + 1, (unsigned) (mark).column + 1, -EBADMSG, __VA_ARGS__)

/* Turns a libyaml parser failure into a positioned error. */
int conf_yaml_failure(ConfContext *c, const yaml_parser_t *p);

/* Line and column of a byte offset in the file; of a byte offset inside a scalar's value. */
void conf_offset_to_position(const ConfContext *c, size_t offset, unsigned *ret_line, unsigned *ret_column);
void conf_scalar_offset_position(const ConfContext *c, const yaml_node_t *node, size_t offset,
                                 unsigned *ret_line, unsigned *ret_column);

const char *conf_nearest_key(const char *key, const char *const *keys, size_t n);
const char *conf_node_type_name(const yaml_node_t *n);
const char *conf_scalar(const yaml_node_t *n);

/* Every key of map is a known, unique string; map must be a mapping ("<must>, not a list"). */
int conf_check_keys(ConfContext *c, yaml_document_t *doc, yaml_node_t *map, const char *what,
                    const char *const *keys, size_t n_keys);
int conf_check_mapping(ConfContext *c, yaml_document_t *doc, yaml_node_t *node, const char *must, const char *what,
                       const char *const *keys, size_t n_keys);

/* Typed values: a non-empty string without NUL of at most max bytes; a duration; a boolean. */
int conf_get_string(ConfContext *c, const yaml_node_t *v, const char *key, size_t max, const char **ret);
int conf_set_string(ConfContext *c, const yaml_node_t *v, const char *key, size_t max, char **p);
int conf_get_duration(ConfContext *c, const yaml_node_t *v, const char *key, uint64_t max_usec, uint64_t *ret);
int conf_get_bool(ConfContext *c, const yaml_node_t *v, const char *key, bool *ret);
yaml_node_t *conf_mapping_get(yaml_document_t *doc, yaml_node_t *map, const char *key);

void conf_yaml_parser_deletep(yaml_parser_t *p);
void conf_yaml_document_deletep(yaml_document_t **d);
