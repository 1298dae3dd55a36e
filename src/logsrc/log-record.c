/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * String table of LogSource and deep copies of LogRecord; see log-record.h. A copy is one allocation:
 * the struct followed by its strings, so freeing it is one free() and its size is known exactly.
 */
#include <stdlib.h>
#include <string.h>

#include "basic/cleanup.h"
#include "basic/macro.h"
#include "logsrc/log-record.h"

const char *log_source_to_string(LogSource s) {
        static const char *const table[_LOG_SOURCE_MAX] = {
                [LOG_SOURCE_KMSG] = "kmsg",
                [LOG_SOURCE_JOURNAL] = "journal",
                [LOG_SOURCE_TEXT] = "text",
        };
        if (s < 0 || s >= _LOG_SOURCE_MAX)
                return NULL;
        return table[s];
}

static size_t str_size(const char *s) {
        return s ? strlen(s) + 1 : 0;
}

static bool escaped_is_message(const LogRecord *rec) {
        return rec->message_escaped == rec->message && rec->message_escaped_len == rec->message_len;
}

size_t log_record_dup_size(const LogRecord *rec) {
        size_t n = sizeof(LogRecord);

        if (rec->message)
                n += rec->message_len + 1;
        if (rec->message_escaped && !escaped_is_message(rec))
                n += rec->message_escaped_len + 1;
        n += str_size(rec->unit) + str_size(rec->comm) + str_size(rec->exe) + str_size(rec->transport) +
             str_size(rec->identifier) + str_size(rec->dictionary) + str_size(rec->cursor);
        return n;
}

/* Copies n bytes of s to *p, NUL-terminates, advances *p; returns the copy. */
static const char *put(char **p, const char *s, size_t n) {
        char *d = *p;

        if (!s)
                return NULL;
        memcpy(d, s, n);
        d[n] = '\0';
        *p += n + 1;
        return d;
}

static const char *put_str(char **p, const char *s) {
        return s ? put(p, s, strlen(s)) : NULL;
}

LogRecord *log_record_dup(const LogRecord *rec) {
        LogRecord *copy;
        char *p;

        copy = malloc(log_record_dup_size(rec));
        if (!copy)
                return NULL;
        *copy = *rec;
        p = (char *) (copy + 1);

        copy->message = put(&p, rec->message, rec->message_len);
        if (!rec->message_escaped)
                copy->message_escaped = NULL;
        else if (escaped_is_message(rec))
                copy->message_escaped = copy->message;
        else
                copy->message_escaped = put(&p, rec->message_escaped, rec->message_escaped_len);
        copy->unit = put_str(&p, rec->unit);
        copy->comm = put_str(&p, rec->comm);
        copy->exe = put_str(&p, rec->exe);
        copy->transport = put_str(&p, rec->transport);
        copy->identifier = put_str(&p, rec->identifier);
        copy->dictionary = put_str(&p, rec->dictionary);
        copy->cursor = put_str(&p, rec->cursor);
        return copy;
}

LogRecord *log_record_free(LogRecord *rec) {
        return mfree(rec);
}
