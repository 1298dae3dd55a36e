/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the verbs share to talk to a person: whether colour is allowed, the width to cut lines to,
 * escaping untrusted text and cutting it to a width, sizes and times in a compact form, and
 * finding the bundle an ID names with the error messages that go with it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "basic/cleanup.h"
#include "basic/log.h"
#include "basic/parse-util.h"
#include "bundle/bundle-read.h"

/* Colour only on a terminal, and not with NO_COLOR set or TERM=dumb. */
bool output_colors(void);
/* The width to fit lines to: $COLUMNS if valid, else the terminal's, else 0 (do not cut). */
unsigned output_columns(void);
/* Whether the locale's charset is UTF-8 (after setlocale(LC_CTYPE, "")). */
bool output_utf8(void);

#define ANSI_BOLD "\x1b[1m"
#define ANSI_RED "\x1b[31m"
#define ANSI_GREEN "\x1b[32m"
#define ANSI_YELLOW "\x1b[33m"
#define ANSI_GREY "\x1b[2m"
#define ANSI_NORMAL "\x1b[0m"

/*
 * Escapes s (control bytes and invalid UTF-8 become \xNN) and, when width > 0, cuts the result
 * to at most width characters, ending it with "…" (or "...") when cut. NULL s gives "-".
 * Returns a malloc'ed string, or NULL on OOM.
 */
char *text_for_terminal(const char *s, size_t width);
char *text_for_terminal_n(const char *s, size_t n, size_t width);

/*
 * Logs as log_full_errno() does (error for %m, 0 for none; returns its negative), with text, the
 * format's first argument, escaped and cut to width by text_for_terminal() ("?" when out of
 * memory). error is read before text is escaped, so errno may be given. Macros, so that the log
 * names the caller's line.
 */
#define log_full_errno_escaped(level, error, width, format, text, ...)                                       \
        ({                                                                                                   \
                int _error_ = (error);                                                                       \
                _cleanup_free_ char *_escaped_ = text_for_terminal((text), (width));                         \
                log_full_errno((level), _error_, format, _escaped_ ?: "?", ##__VA_ARGS__);                   \
        })
#define log_error_errno_escaped(error, format, text, ...)                                                    \
        log_full_errno_escaped(LOG_ERR, error, 0, format, text, ##__VA_ARGS__)
#define log_warning_errno_escaped(error, format, text, ...)                                                  \
        log_full_errno_escaped(LOG_WARNING, error, 0, format, text, ##__VA_ARGS__)
#define log_error_escaped(format, text, ...)                                                                 \
        (void) log_full_errno_escaped(LOG_ERR, 0, 0, format, text, ##__VA_ARGS__)

/* Characters (code points) of a valid UTF-8 string. */
size_t utf8_width(const char *s);

/* Writes JSON text from json-writer (which escapes every control character, C1 included, so it
 * is safe on a terminal) to stdout, ending in one newline. */
void json_text_print(const char *text);

#define FORMAT_BYTES_MAX 16

/* Loads the state directory's bundles, logging failures. Returns 0 or a negative errno. */
int bundles_load(BundleList *ret);
/* Warns that e's manifest cannot be read, naming why; nothing for a readable one. */
void bundle_entry_warn_corrupt(const BundleEntry *e);
/*
 * Resolves id (NULL: the newest complete or partial bundle, else the newest of any) and logs
 * "No bundle matches", the candidates of an ambiguous prefix, or "No bundles found.". Returns
 * the index or a negative errno.
 */
int bundles_resolve(const BundleList *l, const char *id);

/* --json[=short|pretty]: 1 for short, 2 for pretty (also when no value is given), -EINVAL. */
int parse_json_mode(const char *s);
