/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON parser of json-reader.h: recursive descent over a bounded buffer. Recursion depth is
 * bounded by depth_max, so a hostile file cannot exhaust the stack; every error carries the byte
 * offset where it was found.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/json-reader.h"
#include "basic/string-util.h"

typedef struct Parser {
        const char *p, *end, *start;
        unsigned depth, depth_max;
        size_t err_offset;
} Parser;

static int fail(Parser *ps, const char *where, int r) {
        ps->err_offset = (size_t) (where - ps->start);
        return r;
}

static void skip_ws(Parser *ps) {
        while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
                ps->p++;
}

JsonValue *json_value_free(JsonValue *v) {
        if (!v)
                return NULL;
        if (v->type == JSON_TYPE_STRING)
                free(v->string.s);
        else if (v->type == JSON_TYPE_ARRAY || v->type == JSON_TYPE_OBJECT) {
                for (size_t i = 0; i < v->container.n; i++) {
                        json_value_free(v->container.items[i]);
                        if (v->container.keys)
                                free(v->container.keys[i]);
                }
                free(v->container.items);
                free(v->container.keys);
        }
        free(v);
        return NULL;
}

static int hex4(const char *p, uint32_t *ret) {
        uint32_t v = 0;
        for (int i = 0; i < 4; i++) {
                char c = p[i];
                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (uint32_t) (c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (uint32_t) (c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (uint32_t) (c - 'A' + 10);
                else
                        return -EBADMSG;
        }
        *ret = v;
        return 0;
}

static int put_utf8(StrBuf *b, uint32_t cp) {
        char u[4];
        size_t n;

        if (cp < 0x80) {
                u[0] = (char) cp;
                n = 1;
        } else if (cp < 0x800) {
                u[0] = (char) (0xc0 | (cp >> 6));
                u[1] = (char) (0x80 | (cp & 0x3f));
                n = 2;
        } else if (cp < 0x10000) {
                u[0] = (char) (0xe0 | (cp >> 12));
                u[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
                u[2] = (char) (0x80 | (cp & 0x3f));
                n = 3;
        } else {
                u[0] = (char) (0xf0 | (cp >> 18));
                u[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
                u[2] = (char) (0x80 | ((cp >> 6) & 0x3f));
                u[3] = (char) (0x80 | (cp & 0x3f));
                n = 4;
        }
        return strbuf_append_n(b, u, n);
}

/* Called with ps->p on the opening quote. */
static int parse_string(Parser *ps, char **ret, size_t *ret_len) {
        _cleanup_strbuf_ StrBuf b = STRBUF_NULL;
        int r;

        ps->p++;
        for (;;) {
                if (ps->p >= ps->end)
                        return fail(ps, ps->p, -EBADMSG);
                unsigned char c = (unsigned char) *ps->p;
                if (c == '"') {
                        ps->p++;
                        break;
                }
                if (c < 0x20)
                        return fail(ps, ps->p, -EBADMSG);
                if (c == '\\') {
                        const char *esc = ps->p;
                        if (ps->p + 1 >= ps->end)
                                return fail(ps, esc, -EBADMSG);
                        char e = ps->p[1];
                        ps->p += 2;
                        switch (e) {
                        case '"': r = strbuf_putc(&b, '"'); break;
                        case '\\': r = strbuf_putc(&b, '\\'); break;
                        case '/': r = strbuf_putc(&b, '/'); break;
                        case 'b': r = strbuf_putc(&b, '\b'); break;
                        case 'f': r = strbuf_putc(&b, '\f'); break;
                        case 'n': r = strbuf_putc(&b, '\n'); break;
                        case 'r': r = strbuf_putc(&b, '\r'); break;
                        case 't': r = strbuf_putc(&b, '\t'); break;
                        case 'u': {
                                uint32_t cp, lo;
                                if (ps->end - ps->p < 4 || hex4(ps->p, &cp) < 0)
                                        return fail(ps, esc, -EBADMSG);
                                ps->p += 4;
                                if (cp >= 0xdc00 && cp <= 0xdfff)
                                        return fail(ps, esc, -EBADMSG); /* lone low surrogate */
                                if (cp >= 0xd800 && cp <= 0xdbff) {
                                        if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
                                            hex4(ps->p + 2, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
                                                return fail(ps, esc, -EBADMSG);
                                        ps->p += 6;
                                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                                }
                                r = put_utf8(&b, cp);
                                break;
                        }
                        default:
                                return fail(ps, esc, -EBADMSG);
                        }
                        if (r < 0)
                                return r;
                        continue;
                }
                if (c < 0x80) {
                        if (strbuf_putc(&b, (char) c) < 0)
                                return -ENOMEM;
                        ps->p++;
                        continue;
                }
                size_t k = utf8_sequence_length(ps->p, (size_t) (ps->end - ps->p));
                if (k == 0)
                        return fail(ps, ps->p, -EBADMSG);
                if (strbuf_append_n(&b, ps->p, k) < 0)
                        return -ENOMEM;
                ps->p += k;
        }
        if (strbuf_append_n(&b, "", 0) < 0)
                return -ENOMEM;
        *ret_len = b.len;
        *ret = strbuf_steal(&b);
        return 0;
}

static int parse_number(Parser *ps, JsonValue *v) {
        const char *s = ps->p, *q = ps->p;
        bool neg = false, integer = true;

        if (q < ps->end && *q == '-') {
                neg = true;
                q++;
        }
        if (q >= ps->end || !(*q >= '0' && *q <= '9'))
                return fail(ps, q, -EBADMSG);
        if (*q == '0') {
                q++;
                if (q < ps->end && *q >= '0' && *q <= '9')
                        return fail(ps, q, -EBADMSG); /* no leading zeros */
        } else
                while (q < ps->end && *q >= '0' && *q <= '9')
                        q++;
        if (q < ps->end && *q == '.') {
                integer = false;
                q++;
                if (q >= ps->end || !(*q >= '0' && *q <= '9'))
                        return fail(ps, q, -EBADMSG);
                while (q < ps->end && *q >= '0' && *q <= '9')
                        q++;
        }
        if (q < ps->end && (*q == 'e' || *q == 'E')) {
                integer = false;
                q++;
                if (q < ps->end && (*q == '+' || *q == '-'))
                        q++;
                if (q >= ps->end || !(*q >= '0' && *q <= '9'))
                        return fail(ps, q, -EBADMSG);
                while (q < ps->end && *q >= '0' && *q <= '9')
                        q++;
        }

        /* Copy out: the buffer need not be NUL-terminated, and strto* want a terminator. */
        size_t n = (size_t) (q - s);
        char buf[512];
        if (n >= sizeof buf)
                return fail(ps, s, -ERANGE);
        memcpy(buf, s, n);
        buf[n] = '\0';
        ps->p = q;

        if (integer) {
                char *e;
                errno = 0;
                if (neg) {
                        long long x = strtoll(buf, &e, 10);
                        if (errno == 0) {
                                v->type = JSON_TYPE_INTEGER;
                                v->i = x;
                                return 0;
                        }
                } else {
                        unsigned long long x = strtoull(buf, &e, 10);
                        if (errno == 0) {
                                if (x <= INT64_MAX) {
                                        v->type = JSON_TYPE_INTEGER;
                                        v->i = (int64_t) x;
                                } else {
                                        v->type = JSON_TYPE_UNSIGNED;
                                        v->u = x;
                                }
                                return 0;
                        }
                }
                /* Too large for 64 bits: fall through to a double. */
        }
        errno = 0;
        double d = strtod(buf, NULL);
        if (errno == ERANGE && (isinf(d) || d == HUGE_VAL || d == -HUGE_VAL))
                return fail(ps, s, -ERANGE);
        if (!isfinite(d))
                return fail(ps, s, -ERANGE);
        v->type = JSON_TYPE_REAL;
        v->d = d;
        return 0;
}

static int parse_value(Parser *ps, JsonValue **ret);

static int container_add(JsonValue *c, char *key, JsonValue *item) {
        if (!GREEDY_REALLOC(c->container.items, c->container.allocated, c->container.n + 1))
                return -ENOMEM;
        if (c->type == JSON_TYPE_OBJECT) {
                /* keys grows in step with items: realloc to the same element count. */
                char **k = reallocarray(c->container.keys, c->container.allocated, sizeof(char *));
                if (!k)
                        return -ENOMEM;
                c->container.keys = k;
                c->container.keys[c->container.n] = key;
        }
        c->container.items[c->container.n++] = item;
        return 0;
}

static int parse_container(Parser *ps, JsonValue *v, bool object) {
        char close = object ? '}' : ']';
        int r;

        v->type = object ? JSON_TYPE_OBJECT : JSON_TYPE_ARRAY;
        if (++ps->depth > ps->depth_max)
                return fail(ps, ps->p, -ELOOP);
        ps->p++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == close) {
                ps->p++;
                ps->depth--;
                return 0;
        }
        for (;;) {
                _cleanup_free_ char *key = NULL;
                _cleanup_(json_value_freep) JsonValue *item = NULL;
                size_t key_len;

                skip_ws(ps);
                if (object) {
                        if (ps->p >= ps->end || *ps->p != '"')
                                return fail(ps, ps->p, -EBADMSG);
                        r = parse_string(ps, &key, &key_len);
                        if (r < 0)
                                return r;
                        skip_ws(ps);
                        if (ps->p >= ps->end || *ps->p != ':')
                                return fail(ps, ps->p, -EBADMSG);
                        ps->p++;
                        skip_ws(ps);
                }
                r = parse_value(ps, &item);
                if (r < 0)
                        return r;
                r = container_add(v, key, item);
                if (r < 0)
                        return r;
                TAKE_PTR(key);
                TAKE_PTR(item);
                skip_ws(ps);
                if (ps->p >= ps->end)
                        return fail(ps, ps->p, -EBADMSG);
                if (*ps->p == ',') {
                        ps->p++;
                        continue;
                }
                if (*ps->p == close) {
                        ps->p++;
                        break;
                }
                return fail(ps, ps->p, -EBADMSG);
        }
        ps->depth--;
        return 0;
}

static bool literal(Parser *ps, const char *word) {
        size_t n = strlen(word);
        if ((size_t) (ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
                return false;
        ps->p += n;
        return true;
}

static int parse_value(Parser *ps, JsonValue **ret) {
        _cleanup_(json_value_freep) JsonValue *v = NULL;
        int r = 0;

        v = new0(JsonValue, 1);
        if (!v)
                return -ENOMEM;
        if (ps->p >= ps->end)
                return fail(ps, ps->p, -EBADMSG);
        switch (*ps->p) {
        case '{':
                r = parse_container(ps, v, true);
                break;
        case '[':
                r = parse_container(ps, v, false);
                break;
        case '"':
                v->type = JSON_TYPE_STRING;
                r = parse_string(ps, &v->string.s, &v->string.len);
                break;
        case 't':
        case 'f':
                v->type = JSON_TYPE_BOOLEAN;
                if (literal(ps, "true"))
                        v->b = true;
                else if (literal(ps, "false"))
                        v->b = false;
                else
                        r = fail(ps, ps->p, -EBADMSG);
                break;
        case 'n':
                v->type = JSON_TYPE_NULL;
                if (!literal(ps, "null"))
                        r = fail(ps, ps->p, -EBADMSG);
                break;
        default:
                v->type = JSON_TYPE_NULL;
                r = parse_number(ps, v);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(v);
        return 0;
}

int json_parse(const char *text, size_t size, unsigned depth_max, JsonValue **ret, size_t *reterr_offset) {
        _cleanup_(json_value_freep) JsonValue *v = NULL;
        Parser ps = {
                .p = text,
                .start = text,
                .end = text + size,
                .depth_max = depth_max ?: JSON_READER_DEPTH_DEFAULT,
        };
        int r;

        skip_ws(&ps);
        r = parse_value(&ps, &v);
        if (r >= 0) {
                skip_ws(&ps);
                if (ps.p != ps.end)
                        r = fail(&ps, ps.p, -EBADMSG);
        }
        if (r < 0) {
                if (reterr_offset)
                        *reterr_offset = ps.err_offset;
                return r;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

const char *json_type_to_string(JsonType t) {
        static const char *const table[_JSON_TYPE_MAX] = {
                [JSON_TYPE_NULL] = "null",         [JSON_TYPE_BOOLEAN] = "boolean", [JSON_TYPE_INTEGER] = "integer",
                [JSON_TYPE_UNSIGNED] = "unsigned", [JSON_TYPE_REAL] = "real",       [JSON_TYPE_STRING] = "string",
                [JSON_TYPE_ARRAY] = "array",       [JSON_TYPE_OBJECT] = "object",
        };
        return t >= 0 && t < _JSON_TYPE_MAX ? table[t] : NULL;
}

const JsonValue *json_object_get(const JsonValue *v, const char *key) {
        if (!v || v->type != JSON_TYPE_OBJECT || !key)
                return NULL;
        for (size_t i = v->container.n; i > 0; i--)
                if (streq(v->container.keys[i - 1], key))
                        return v->container.items[i - 1];
        return NULL;
}

const JsonValue *json_object_get_path(const JsonValue *v, const char *path) {
        char part[256];

        while (v && path) {
                const char *dot = strchr(path, '.');
                size_t n = dot ? (size_t) (dot - path) : strlen(path);
                if (n >= sizeof part)
                        return NULL;
                memcpy(part, path, n);
                part[n] = '\0';
                v = json_object_get(v, part);
                path = dot ? dot + 1 : NULL;
        }
        return v;
}

size_t json_length(const JsonValue *v) {
        if (!v || (v->type != JSON_TYPE_ARRAY && v->type != JSON_TYPE_OBJECT))
                return 0;
        return v->container.n;
}

const JsonValue *json_array_get(const JsonValue *v, size_t i) {
        if (!v || v->type != JSON_TYPE_ARRAY || i >= v->container.n)
                return NULL;
        return v->container.items[i];
}

const char *json_string_value(const JsonValue *v) {
        return v && v->type == JSON_TYPE_STRING ? v->string.s : NULL;
}

bool json_is_null(const JsonValue *v) {
        return v && v->type == JSON_TYPE_NULL;
}

bool json_u64_value(const JsonValue *v, uint64_t *ret) {
        if (!v)
                return false;
        if (v->type == JSON_TYPE_INTEGER && v->i >= 0) {
                *ret = (uint64_t) v->i;
                return true;
        }
        if (v->type == JSON_TYPE_UNSIGNED) {
                *ret = v->u;
                return true;
        }
        return false;
}

bool json_i64_value(const JsonValue *v, int64_t *ret) {
        if (!v || v->type != JSON_TYPE_INTEGER)
                return false;
        *ret = v->i;
        return true;
}

bool json_double_value(const JsonValue *v, double *ret) {
        if (!v)
                return false;
        switch (v->type) {
        case JSON_TYPE_INTEGER:
                *ret = (double) v->i;
                return true;
        case JSON_TYPE_UNSIGNED:
                *ret = (double) v->u;
                return true;
        case JSON_TYPE_REAL:
                *ret = v->d;
                return true;
        default:
                return false;
        }
}

bool json_bool_value(const JsonValue *v, bool *ret) {
        if (!v || v->type != JSON_TYPE_BOOLEAN)
                return false;
        *ret = v->b;
        return true;
}
