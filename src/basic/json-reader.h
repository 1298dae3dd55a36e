/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small strict JSON parser (RFC 8259) for the files tprof reads back: bundle manifests and
 * log.jsonl lines. It builds a tree of JsonValue nodes. Input is bounded by the caller (size) and
 * by depth_max (nesting), strings must be valid UTF-8, escapes are checked in full (\uXXXX with
 * surrogate pairs; a lone surrogate is an error), and nothing follows the value but blanks.
 * Integers that fit are kept exactly as int64 or uint64; other integers and all numbers with a
 * fraction or exponent are doubles, and a double that overflows is an error. On a syntax error
 * the parser returns -EBADMSG and the byte offset of the problem. Objects keep their members in
 * order; when a key repeats, lookups find the last one.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_READER_DEPTH_DEFAULT 64

typedef enum JsonType {
        JSON_TYPE_NULL,
        JSON_TYPE_BOOLEAN,
        JSON_TYPE_INTEGER,  /* fits int64_t (value.i) */
        JSON_TYPE_UNSIGNED, /* above INT64_MAX, fits uint64_t (value.u) */
        JSON_TYPE_REAL,     /* value.d */
        JSON_TYPE_STRING,
        JSON_TYPE_ARRAY,
        JSON_TYPE_OBJECT,
        _JSON_TYPE_MAX,
        _JSON_TYPE_INVALID = -EINVAL,
} JsonType;

typedef struct JsonValue JsonValue;
struct JsonValue {
        JsonType type;
        union {
                bool b;
                int64_t i;
                uint64_t u;
                double d;
                struct {
                        char *s; /* NUL-terminated; may hold NULs from \u0000, see len */
                        size_t len;
                } string;
                struct {
                        JsonValue **items;
                        char **keys; /* objects only, NUL-terminated */
                        size_t n, allocated;
                } container;
        };
};

/*
 * Parses exactly one JSON value from text[0..size). Returns 0, -EBADMSG (syntax, *reterr_offset
 * set), -ELOOP (deeper than depth_max, *reterr_offset set), -ERANGE (a number out of range,
 * *reterr_offset set) or -ENOMEM.
 */
int json_parse(const char *text, size_t size, unsigned depth_max, JsonValue **ret, size_t *reterr_offset);

JsonValue *json_value_free(JsonValue *v);

const char *json_type_to_string(JsonType t);

/* NULL when v is not an object or has no such key. */
const JsonValue *json_object_get(const JsonValue *v, const char *key);
/* Dotted path through nested objects: "event.captures.cpu". */
const JsonValue *json_object_get_path(const JsonValue *v, const char *path);
size_t json_length(const JsonValue *v);
const JsonValue *json_array_get(const JsonValue *v, size_t i);

/* Typed accessors: NULL/false when v is NULL or of another type. */
const char *json_string_value(const JsonValue *v);
bool json_is_null(const JsonValue *v);
bool json_u64_value(const JsonValue *v, uint64_t *ret);
bool json_i64_value(const JsonValue *v, int64_t *ret);
bool json_double_value(const JsonValue *v, double *ret); /* any number */
bool json_bool_value(const JsonValue *v, bool *ret);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(JsonValue *, json_value_free);
