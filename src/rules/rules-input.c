/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Recognizes the text forms of log lines; see rules-input.h.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "basic/macro.h"
#include "logsrc/logsrc-kmsg-parse.h"
#include "rules/rules-input.h"

const char *line_format_to_string(LineFormat f) {
        static const char *const table[_LINE_FORMAT_MAX] = {
                [LINE_FORMAT_PLAIN] = "plain",
                [LINE_FORMAT_DMESG] = "dmesg",
                [LINE_FORMAT_KMSG] = "kmsg",
                [LINE_FORMAT_JOURNAL] = "journalctl",
                [LINE_FORMAT_SKIP] = "skipped",
        };
        if (f < 0 || f >= _LINE_FORMAT_MAX)
                return NULL;
        return table[f];
}

/* Parses digits at s[*i]; returns false if there are none or the value overflows. */
static bool parse_u64(const char *s, size_t len, size_t *i, uint64_t *ret) {
        uint64_t v = 0;
        size_t start = *i;

        while (*i < len && isdigit((unsigned char) s[*i])) {
                if (v > (UINT64_MAX - 9) / 10)
                        return false;
                v = v * 10 + (uint64_t) (s[*i] - '0');
                (*i)++;
        }
        *ret = v;
        return *i > start;
}

/*
 * A raw /dev/kmsg record, parsed by the kmsg source's own parser so the tester reads exactly what
 * tprofd reads. The decoded message is copied back over the line (it is never longer than the
 * escaped text), so the record can point into the caller's buffer like the other formats.
 */
static bool parse_kmsg(char *line, size_t len, LogRecord *rec) {
        /* About 32 KiB together: not on the stack; the tester is single-threaded. */
        static char record[KMSG_RECORD_BYTES_MAX];
        static KmsgRecord k;

        /* One read() of /dev/kmsg ends in a newline; the line we were given has lost it. */
        if (len + 1 > sizeof record)
                return false;
        memcpy(record, line, len);
        record[len] = '\n';
        if (kmsg_record_parse(record, len + 1, &k, /* reterr_reason= */ NULL) < 0)
                return false;
        kmsg_record_to_log_record(&k, /* clock= */ NULL, rec);
        memcpy(line, k.message, k.message_len);
        line[k.message_len] = '\0';
        rec->message = line;
        rec->message_escaped = NULL;
        rec->message_escaped_len = 0;
        rec->dictionary = NULL;
        return true;
}

/* "[  123.456789] " */
static bool parse_dmesg(char *line, size_t len, LogRecord *rec) {
        size_t i = 1;
        uint64_t v;

        if (len < 4 || line[0] != '[')
                return false;
        while (i < len && line[i] == ' ')
                i++;
        if (!parse_u64(line, len, &i, &v) || i >= len || line[i] != '.')
                return false;
        i++;
        if (!parse_u64(line, len, &i, &v) || i >= len || line[i] != ']')
                return false;
        i++;
        if (i < len && line[i] == ' ')
                i++;

        *rec = LOG_RECORD_NULL;
        rec->source = LOG_SOURCE_TEXT;
        rec->kernel_origin = true;
        rec->message = line + i;
        rec->message_len = len - i;
        return true;
}

/* Index past the time stamp of a journalctl short, short-precise or short-iso line, or 0. */
static size_t journal_timestamp_len(const char *s, size_t len) {
        static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
        size_t i;

        if (len >= 16 && isalpha((unsigned char) s[0])) {
                bool month = false;
                for (size_t m = 0; m < 12; m++)
                        month = month || memcmp(s, months + 3 * m, 3) == 0;
                if (!month || s[3] != ' ')
                        return 0;
                i = 4;
                if (s[i] == ' ')
                        i++;
                if (!isdigit((unsigned char) s[i]))
                        return 0;
                while (i < len && isdigit((unsigned char) s[i]))
                        i++;
                if (i + 9 > len || s[i] != ' ' || !isdigit((unsigned char) s[i + 1]) ||
                    !isdigit((unsigned char) s[i + 2]) || s[i + 3] != ':' || s[i + 6] != ':')
                        return 0;
                i += 9;
        } else if (len >= 20 && isdigit((unsigned char) s[0]) && s[4] == '-' && s[7] == '-' && s[10] == 'T') {
                i = 11;
                while (i < len && s[i] != ' ')
                        i++;
        } else
                return 0;

        if (i < len && s[i] == '.') /* short-precise */
                for (i++; i < len && isdigit((unsigned char) s[i]); i++)
                        ;
        if (i >= len || s[i] != ' ')
                return 0;
        return i + 1;
}

static bool parse_journal(char *line, size_t len, LogRecord *rec) {
        size_t i = journal_timestamp_len(line, len), ident, ident_end;
        pid_t pid = 0;

        if (i == 0)
                return false;
        /* host */
        while (i < len && line[i] != ' ')
                i++;
        if (i >= len)
                return false;
        ident = ++i;
        /* identifier, up to "[pid]: " or ": " */
        while (i < len && line[i] != ':' && line[i] != '[' && line[i] != ' ')
                i++;
        ident_end = i;
        if (ident_end == ident || i >= len)
                return false;
        if (line[i] == '[') {
                uint64_t v;
                i++;
                if (!parse_u64(line, len, &i, &v) || i >= len || line[i] != ']' || v > INT32_MAX)
                        return false;
                pid = (pid_t) v;
                i++;
        }
        if (i + 1 > len || line[i] != ':')
                return false;
        i++;
        if (i < len && line[i] == ' ')
                i++;

        *rec = LOG_RECORD_NULL;
        line[ident_end] = '\0'; /* the identifier is followed by '[' or ':', both consumed above */
        rec->identifier = line + ident;
        rec->pid = pid;
        rec->message = line + i;
        rec->message_len = len - i;
        if (streq(rec->identifier, "kernel")) {
                /* journald's kernel transport: a record the kernel logged, read as text. */
                rec->source = LOG_SOURCE_TEXT;
                rec->kernel_origin = true;
                rec->facility = 0;
        } else {
                rec->source = LOG_SOURCE_JOURNAL;
                rec->kernel_origin = false;
        }
        return true;
}

LineFormat rules_input_parse_line(char *line, size_t len, LogRecord *ret) {
        if (len > 0 && line[0] == ' ')
                return LINE_FORMAT_SKIP; /* kmsg dictionary continuation */
        if (len >= 3 && line[0] == '-' && line[1] == '-' && line[2] == ' ')
                return LINE_FORMAT_SKIP; /* journalctl "-- Boot 1234... --", "-- No entries --" */
        if (len > 0 && isdigit((unsigned char) line[0]) && parse_kmsg(line, len, ret))
                return LINE_FORMAT_KMSG;
        if (len > 0 && line[0] == '[' && parse_dmesg(line, len, ret))
                return LINE_FORMAT_DMESG;
        if (parse_journal(line, len, ret))
                return LINE_FORMAT_JOURNAL;

        *ret = LOG_RECORD_NULL;
        ret->source = LOG_SOURCE_TEXT;
        ret->kernel_origin = true;
        ret->message = line;
        ret->message_len = len;
        return LINE_FORMAT_PLAIN;
}
