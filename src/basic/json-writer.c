/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Streaming JSON emitter; see json-writer.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "basic/json-writer.h"

void json_writer_init(JsonWriter *w, bool pretty) {
        *w = (JsonWriter) { .pretty = pretty };
        w->first[0] = true;
}

void json_writer_done(JsonWriter *w) {
        strbuf_done(&w->out);
}

static void put(JsonWriter *w, const char *s, size_t n) {
        if (w->error == 0)
                w->error = strbuf_append_n(&w->out, s, n) < 0 ? -ENOMEM : 0;
}

static void puts_(JsonWriter *w, const char *s) {
        put(w, s, strlen(s));
}

static void newline(JsonWriter *w) {
        if (!w->pretty)
                return;
        put(w, "\n", 1);
        for (unsigned i = 0; i < w->depth; i++)
                put(w, "  ", 2);
}

/* Separator and indentation before a value or key at the current depth. */
static void before_item(JsonWriter *w) {
        if (w->after_key) {
                w->after_key = false;
                return;
        }
        if (w->depth > 0) {
                if (!w->first[w->depth])
                        put(w, ",", 1);
                newline(w);
        }
        w->first[w->depth] = false;
}

static void open_(JsonWriter *w, const char *c) {
        before_item(w);
        puts_(w, c);
        if (w->depth + 1 >= JSON_DEPTH_MAX) {
                w->error = -E2BIG;
                return;
        }
        w->depth++;
        w->first[w->depth] = true;
}

static void close_(JsonWriter *w, const char *c) {
        bool empty;

        if (w->depth == 0) {
                w->error = -EINVAL;
                return;
        }
        empty = w->first[w->depth];
        w->depth--;
        if (!empty)
                newline(w);
        puts_(w, c);
}

void json_begin_object(JsonWriter *w) {
        open_(w, "{");
}
void json_end_object(JsonWriter *w) {
        close_(w, "}");
}
void json_begin_array(JsonWriter *w) {
        open_(w, "[");
}
void json_end_array(JsonWriter *w) {
        close_(w, "]");
}

static void put_quoted(JsonWriter *w, const char *s, size_t n) {
        static const char hex[] = "0123456789abcdef";

        put(w, "\"", 1);
        for (size_t i = 0; i < n;) {
                unsigned char c = (unsigned char) s[i];
                size_t k;

                if (c == '"' || c == '\\') {
                        char e[2] = { '\\', (char) c };
                        put(w, e, 2);
                        i++;
                } else if (c < 0x20 || c == 0x7f) {
                        char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
                        put(w, e, 6);
                        i++;
                } else if (c < 0x80) {
                        put(w, s + i, 1);
                        i++;
                } else if ((k = utf8_sequence_length(s + i, n - i)) == 2 && c == 0xc2 &&
                           (unsigned char) s[i + 1] < 0xa0) {
                        /* C1 controls (U+0080..U+009F): terminals obey some, so never pass them raw. */
                        unsigned char c1 = (unsigned char) s[i + 1];
                        char e[6] = { '\\', 'u', '0', '0', hex[c1 >> 4], hex[c1 & 15] };
                        put(w, e, 6);
                        i += 2;
                } else if (k > 0) {
                        put(w, s + i, k);
                        i += k;
                } else {
                        char e[5] = { '\\', '\\', 'x', hex[c >> 4], hex[c & 15] };
                        put(w, e, 5);
                        i++;
                }
        }
        put(w, "\"", 1);
}

void json_key(JsonWriter *w, const char *key) {
        before_item(w);
        put_quoted(w, key, strlen(key));
        put(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
        w->after_key = true;
}

void json_string_n(JsonWriter *w, const char *s, size_t n) {
        before_item(w);
        put_quoted(w, s, n);
}

void json_string(JsonWriter *w, const char *s) {
        json_string_n(w, s, strlen(s));
}

void json_u64(JsonWriter *w, uint64_t v) {
        char b[32];
        before_item(w);
        snprintf(b, sizeof b, "%" PRIu64, v);
        puts_(w, b);
}

void json_i64(JsonWriter *w, int64_t v) {
        char b[32];
        before_item(w);
        snprintf(b, sizeof b, "%" PRIi64, v);
        puts_(w, b);
}

void json_double(JsonWriter *w, double v) {
        char b[64];
        before_item(w);
        if (!isfinite(v)) {
                puts_(w, "null"); /* JSON has no NaN or infinity */
                return;
        }
        snprintf(b, sizeof b, "%.6g", v);
        puts_(w, b);
}

void json_bool(JsonWriter *w, bool v) {
        before_item(w);
        puts_(w, v ? "true" : "false");
}

void json_null(JsonWriter *w) {
        before_item(w);
        puts_(w, "null");
}

char *json_finish(JsonWriter *w, int *ret_error) {
        if (w->error == 0 && w->depth != 0)
                w->error = -EINVAL;
        if (w->error == 0 && w->pretty)
                put(w, "\n", 1);
        if (w->error < 0) {
                if (ret_error)
                        *ret_error = w->error;
                json_writer_done(w);
                return NULL;
        }
        return strbuf_steal(&w->out);
}
