/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * StrBuf, UTF-8 checks and escaping; see string-util.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/string-util.h"

int strbuf_append_n(StrBuf *b, const char *s, size_t n) {
        if (!GREEDY_REALLOC(b->data, b->allocated, b->len + n + 1))
                return -ENOMEM;
        if (n > 0)
                memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
        return 0;
}

int strbuf_append(StrBuf *b, const char *s) {
        return strbuf_append_n(b, s, strlen(s));
}

int strbuf_putc(StrBuf *b, char c) {
        return strbuf_append_n(b, &c, 1);
}

int strbuf_appendf(StrBuf *b, const char *fmt, ...) {
        va_list ap;
        int k;

        if (!GREEDY_REALLOC(b->data, b->allocated, b->len + 64))
                return -ENOMEM;
        va_start(ap, fmt);
        k = vsnprintf(b->data + b->len, b->allocated - b->len, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -EINVAL;
        if ((size_t) k >= b->allocated - b->len) {
                if (!GREEDY_REALLOC(b->data, b->allocated, b->len + (size_t) k + 1))
                        return -ENOMEM;
                va_start(ap, fmt);
                (void) vsnprintf(b->data + b->len, b->allocated - b->len, fmt, ap);
                va_end(ap);
        }
        b->len += (size_t) k;
        return 0;
}

void strbuf_reset(StrBuf *b) {
        b->len = 0;
        if (b->data)
                b->data[0] = '\0';
}

void strbuf_done(StrBuf *b) {
        b->data = mfree(b->data);
        b->len = b->allocated = 0;
}

char *strbuf_steal(StrBuf *b) {
        char *s = b->data ? b->data : strdup("");
        *b = STRBUF_NULL;
        return s;
}

const char *startswith(const char *s, const char *prefix) {
        size_t l = strlen(prefix);
        return strncmp(s, prefix, l) == 0 ? s + l : NULL;
}

const char *endswith(const char *s, const char *suffix) {
        size_t sl = strlen(s), xl = strlen(suffix);
        if (xl > sl || memcmp(s + sl - xl, suffix, xl) != 0)
                return NULL;
        return s + sl - xl;
}

size_t utf8_sequence_length(const char *str, size_t n) {
        const uint8_t *s = (const uint8_t *) str;
        size_t len;
        uint32_t cp;

        if (n == 0)
                return 0;
        if (s[0] < 0x80)
                return 1;
        if ((s[0] & 0xe0) == 0xc0) {
                len = 2;
                cp = s[0] & 0x1f;
        } else if ((s[0] & 0xf0) == 0xe0) {
                len = 3;
                cp = s[0] & 0x0f;
        } else if ((s[0] & 0xf8) == 0xf0) {
                len = 4;
                cp = s[0] & 0x07;
        } else
                return 0;
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        /* Reject overlong forms, surrogates and values past U+10FFFF. */
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
                return 0;
        return len;
}

size_t utf8_prefix_length(const char *s, size_t n, size_t max) {
        size_t l;

        if (n <= max)
                return n;
        /* Back over the continuation bytes before the cut to the lead byte they follow, at most 3. */
        for (l = max; l > 0 && max - l < 3 && ((uint8_t) s[l] & 0xc0) == 0x80; l--)
                ;
        if (l < max && utf8_sequence_length(s + l, n - l) > max - l)
                return l;
        return max;
}

int unhexchar(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

bool utf8_is_valid_n(const char *s, size_t n) {
        for (size_t i = 0; i < n;) {
                size_t k = utf8_sequence_length(s + i, n - i);
                if (k == 0)
                        return false;
                i += k;
        }
        return true;
}

int strbuf_append_escaped(StrBuf *b, const char *s, size_t n) {
        static const char hex[] = "0123456789abcdef";
        int r;

        for (size_t i = 0; i < n;) {
                unsigned char c = (unsigned char) s[i];
                size_t k;

                if (c == '\\') {
                        r = strbuf_append_n(b, "\\\\", 2);
                        i++;
                } else if (c >= 0x20 && c < 0x7f) {
                        r = strbuf_putc(b, (char) c);
                        i++;
                } else if (c >= 0x80 && (k = utf8_sequence_length(s + i, n - i)) > 0 &&
                           !(k == 2 && (unsigned char) s[i] == 0xc2 && (unsigned char) s[i + 1] < 0xa0)) {
                        /* Valid UTF-8, except the C1 controls U+0080..U+009F, which terminals obey. */
                        r = strbuf_append_n(b, s + i, k);
                        i += k;
                } else {
                        char esc[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };
                        r = strbuf_append_n(b, esc, 4);
                        i++;
                }
                if (r < 0)
                        return r;
        }
        if (!b->data)
                return strbuf_append_n(b, "", 0);
        return 0;
}

char *escape_text(const char *s, size_t n) {
        StrBuf b = STRBUF_NULL;

        if (strbuf_append_escaped(&b, s, n) < 0) {
                strbuf_done(&b);
                return NULL;
        }
        return strbuf_steal(&b);
}

/* Bytes no POSIX shell treats specially anywhere in a word (XCU 2.2 Quoting, 2.6 Word Expansions):
 * '=' only matters before a command name, '~' and '#' only at a word's start, so they are quoted. */
static bool shell_safe(unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80 ||
               strchr("_@%+:,./-", (char) c);
}

char *shell_escape_text(const char *s) {
        StrBuf b = STRBUF_NULL;
        size_t n = strlen(s), i;
        int r = 0;

        for (i = 0; i < n && shell_safe((unsigned char) s[i]); i++)
                ;
        if (n > 0 && i == n)
                return escape_text(s, n);
        /* Inside single quotes every byte is itself: only the quote must leave them, and a
         * backslash is not doubled (the shell would keep both). */
        r = strbuf_putc(&b, '\'');
        for (i = 0; r >= 0 && i < n;) {
                size_t k = strcspn(s + i, "'\\");

                r = strbuf_append_escaped(&b, s + i, k);
                i += k;
                if (r >= 0 && s[i] == '\'')
                        r = strbuf_append_n(&b, "'\\''", 4);
                else if (r >= 0 && s[i] == '\\')
                        r = strbuf_putc(&b, '\\');
                if (i < n)
                        i++;
        }
        if (r >= 0)
                r = strbuf_putc(&b, '\'');
        if (r < 0) {
                strbuf_done(&b);
                return NULL;
        }
        return strbuf_steal(&b);
}

void filename_sanitize(char *s) {
        /* A leading dot would allow "." and ".." and hide the file; make it visible and harmless. */
        if (*s == '.')
                *s = '_';
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      *s == '.' || *s == '_' || *s == '-'))
                        *s = '_';
}

char **strv_free(char **l) {
        if (!l)
                return NULL;
        for (char **p = l; *p; p++)
                free(*p);
        free(l);
        return NULL;
}

size_t strv_length(char *const *l) {
        size_t n = 0;
        while (l && l[n])
                n++;
        return n;
}

int cmp_string_ptr(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}
