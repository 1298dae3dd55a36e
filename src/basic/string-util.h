/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strings: a growable buffer for building output, escaping of untrusted text before it reaches a
 * terminal or a file a person reads (invalid UTF-8 and control bytes become \xNN), and a few
 * predicates.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "basic/macro.h"

typedef struct StrBuf {
        char *data; /* always NUL-terminated once anything was appended */
        size_t len;
        size_t allocated;
} StrBuf;

#define STRBUF_NULL ((StrBuf) {})

int strbuf_append_n(StrBuf *b, const char *s, size_t n);
int strbuf_append(StrBuf *b, const char *s);
int strbuf_appendf(StrBuf *b, const char *fmt, ...) _printf_(2, 3);
int strbuf_putc(StrBuf *b, char c);
void strbuf_reset(StrBuf *b);
void strbuf_done(StrBuf *b);
/* Hands the string out and leaves the buffer empty; never NULL on success. */
char *strbuf_steal(StrBuf *b);

static inline void strbuf_donep(StrBuf *b) {
        strbuf_done(b);
}
#define _cleanup_strbuf_ __attribute__((__cleanup__(strbuf_donep)))

const char *startswith(const char *s, const char *prefix);
const char *endswith(const char *s, const char *suffix);
/* The value of a hexadecimal digit (either case), or -1. */
int unhexchar(char c);

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid or truncated. */
size_t utf8_sequence_length(const char *s, size_t n);
bool utf8_is_valid_n(const char *s, size_t n);
/* The length of s's first n bytes cut to at most max without splitting a valid UTF-8 sequence:
 * a character that max would cut in two is left out whole. */
size_t utf8_prefix_length(const char *s, size_t n, size_t max);

/*
 * Appends s escaped for a terminal or a text file: printable ASCII and valid UTF-8 pass, backslash
 * becomes \\, other bytes \xNN. The result contains no control bytes and is valid UTF-8.
 */
int strbuf_append_escaped(StrBuf *b, const char *s, size_t n);
char *escape_text(const char *s, size_t n);
/*
 * s as one word of a command line a person pastes into a POSIX shell, escaped as escape_text()
 * does for the terminal: as it is when it holds only bytes no shell treats specially (so ordinary
 * paths print unchanged), else in single quotes, a quote inside as '\'' and a backslash as itself.
 * Control bytes and invalid UTF-8 stay \xNN: no command naming them can be printed safely.
 */
char *shell_escape_text(const char *s);

/* Replaces any byte that is not [A-Za-z0-9._-], and a leading dot, by '_': s is then one safe path component. */
void filename_sanitize(char *s);

/* NULL-terminated string vectors, as returned by several modules. */
char **strv_free(char **l);
size_t strv_length(char *const *l);
static inline void strv_freep(char ***l) {
        *l = strv_free(*l);
}
#define _cleanup_strv_ __attribute__((__cleanup__(strv_freep)))

/* qsort() comparator for an array of char *, bytewise. */
int cmp_string_ptr(const void *a, const void *b);
