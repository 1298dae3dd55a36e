/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small streaming JSON emitter for manifests, --json output and control-socket replies. Strings
 * are written as valid JSON whatever bytes they hold: valid UTF-8 passes, control characters (C0, DEL
 * and C1) are \u-escaped, and bytes that are not UTF-8 appear as the text "\xNN" (so the output stays valid and
 * a hostile name cannot smuggle anything through). Errors (ENOMEM) are sticky: check json_finish().
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "basic/string-util.h"

#define JSON_DEPTH_MAX 32

typedef struct JsonWriter {
        StrBuf out;
        bool pretty;
        unsigned depth;
        bool first[JSON_DEPTH_MAX];
        bool after_key;
        int error;
} JsonWriter;

void json_writer_init(JsonWriter *w, bool pretty);
void json_writer_done(JsonWriter *w);
/* Returns the text (owned by the caller) or NULL with the sticky error in *ret_error. */
char *json_finish(JsonWriter *w, int *ret_error);

void json_begin_object(JsonWriter *w);
void json_end_object(JsonWriter *w);
void json_begin_array(JsonWriter *w);
void json_end_array(JsonWriter *w);
void json_key(JsonWriter *w, const char *key);
void json_string(JsonWriter *w, const char *s);
void json_string_n(JsonWriter *w, const char *s, size_t n);
void json_u64(JsonWriter *w, uint64_t v);
void json_i64(JsonWriter *w, int64_t v);
void json_double(JsonWriter *w, double v);
void json_bool(JsonWriter *w, bool v);
void json_null(JsonWriter *w);

static inline void json_kv_string(JsonWriter *w, const char *k, const char *v) {
        json_key(w, k);
        if (v)
                json_string(w, v);
        else
                json_null(w);
}
static inline void json_kv_u64(JsonWriter *w, const char *k, uint64_t v) {
        json_key(w, k);
        json_u64(w, v);
}
static inline void json_kv_i64(JsonWriter *w, const char *k, int64_t v) {
        json_key(w, k);
        json_i64(w, v);
}
static inline void json_kv_bool(JsonWriter *w, const char *k, bool v) {
        json_key(w, k);
        json_bool(w, v);
}
static inline void json_kv_double(JsonWriter *w, const char *k, double v) {
        json_key(w, k);
        json_double(w, v);
}
