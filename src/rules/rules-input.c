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
                [LINE_FORMAT_JOURNAL] = "journalctl/syslog",
                [LINE_FORMAT_JOURNAL_JSON] = "journal JSON",
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

/* "Jan" ... "Dec", "Mon" ... "Sun": the C locale's names, which dmesg, journalctl and syslog use. */
static bool name_at(const char *s, size_t len, size_t i, const char *names, size_t n) {
        if (i + 3 > len)
                return false;
        for (size_t k = 0; k < n; k++)
                if (memcmp(s + i, names + 3 * k, 3) == 0)
                        return true;
        return false;
}

static bool month_at(const char *s, size_t len, size_t i) {
        return name_at(s, len, i, "JanFebMarAprMayJunJulAugSepOctNovDec", 12);
}

static bool weekday_at(const char *s, size_t len, size_t i) {
        return name_at(s, len, i, "MonTueWedThuFriSatSun", 7);
}

static bool char_at(const char *s, size_t len, size_t i, char c) {
        return i < len && s[i] == c;
}

static bool digit_at(const char *s, size_t len, size_t i) {
        return i < len && isdigit((unsigned char) s[i]);
}

/* Skips min to max digits at s[*i]. */
static bool skip_digits(const char *s, size_t len, size_t *i, size_t min, size_t max) {
        size_t n = 0;

        while (n < max && digit_at(s, len, *i + n))
                n++;
        if (n < min)
                return false;
        *i += n;
        return true;
}

static void skip_spaces(const char *s, size_t len, size_t *i) {
        while (char_at(s, len, *i, ' '))
                (*i)++;
}

/* "123.456789" */
static bool skip_seconds(const char *s, size_t len, size_t *i) {
        size_t j = *i;

        if (!skip_digits(s, len, &j, 1, 20) || !char_at(s, len, j, '.'))
                return false;
        j++;
        if (!skip_digits(s, len, &j, 1, 9))
                return false;
        *i = j;
        return true;
}

/* "11:39" or "11:39:55" */
static bool skip_clock(const char *s, size_t len, size_t *i, bool with_seconds) {
        size_t j = *i;

        if (!skip_digits(s, len, &j, 2, 2) || !char_at(s, len, j, ':'))
                return false;
        j++;
        if (!skip_digits(s, len, &j, 2, 2))
                return false;
        if (with_seconds) {
                if (!char_at(s, len, j, ':'))
                        return false;
                j++;
                if (!skip_digits(s, len, &j, 2, 2))
                        return false;
        }
        *i = j;
        return true;
}

/* "YYYY-MM-DD" */
static bool skip_date(const char *s, size_t len, size_t *i) {
        size_t j = *i;

        if (!skip_digits(s, len, &j, 4, 4) || !char_at(s, len, j, '-'))
                return false;
        j++;
        if (!skip_digits(s, len, &j, 2, 2) || !char_at(s, len, j, '-'))
                return false;
        j++;
        if (!skip_digits(s, len, &j, 2, 2))
                return false;
        *i = j;
        return true;
}

/* RFC 3339's "2026-11-26T11:40:09.649404+00:00" (any fraction, "Z" or an offset with or without
 * its colon), as short-iso and talosctl write it. */
static bool skip_rfc3339(const char *s, size_t len, size_t *i) {
        size_t j = *i;

        if (!skip_date(s, len, &j) || !char_at(s, len, j, 'T'))
                return false;
        j++;
        if (!skip_clock(s, len, &j, true))
                return false;
        while (j < len && (isdigit((unsigned char) s[j]) || (s[j] != '\0' && strchr(".+-:Z", s[j]))))
                j++;
        *i = j;
        return true;
}

/* strftime's "%a %b %e %H:%M:%S %Y" (ctime's "Tue Aug  2 16:40:43 2025": the day padded with a space) */
static bool skip_ctime(const char *s, size_t len, size_t *i) {
        size_t j = *i;

        if (!weekday_at(s, len, j) || !char_at(s, len, j + 3, ' ') || !month_at(s, len, j + 4) ||
            !char_at(s, len, j + 7, ' '))
                return false;
        j += 8;
        skip_spaces(s, len, &j);
        if (!skip_digits(s, len, &j, 1, 2) || !char_at(s, len, j, ' '))
                return false;
        j++;
        if (!skip_clock(s, len, &j, true) || !char_at(s, len, j, ' '))
                return false;
        j++;
        if (!skip_digits(s, len, &j, 4, 4))
                return false;
        *i = j;
        return true;
}

/* A delta after a time stamp or alone: dmesg's "< 1118.575697>", journalctl's "<    1.537409 >". */
static bool skip_delta(const char *s, size_t len, size_t *i) {
        size_t j = *i;

        skip_spaces(s, len, &j);
        if (!char_at(s, len, j, '<'))
                return false;
        j++;
        skip_spaces(s, len, &j);
        if (char_at(s, len, j, '+'))
                j++;
        if (!skip_seconds(s, len, &j))
                return false;
        skip_spaces(s, len, &j);
        if (!char_at(s, len, j, '>'))
                return false;
        *i = j + 1;
        return true;
}

/* The time in one of dmesg's brackets, at s[*i] past the '[': see dmesg_bracket_len(). */
static bool skip_bracket_time(const char *s, size_t len, size_t *i) {
        size_t j = *i;

        skip_spaces(s, len, &j);
        if (digit_at(s, len, j)) {
                if (!skip_seconds(s, len, &j))
                        return false;
                (void) skip_delta(s, len, &j);
        } else if (char_at(s, len, j, '+')) {
                j++;
                if (!skip_seconds(s, len, &j))
                        return false;
        } else if (char_at(s, len, j, '<')) {
                if (!skip_delta(s, len, &j))
                        return false;
        } else if (weekday_at(s, len, j)) {
                if (!skip_ctime(s, len, &j))
                        return false;
                (void) skip_delta(s, len, &j);
        } else if (month_at(s, len, j)) {
                /* "%b%d %H:%M" */
                j += 3;
                if (!skip_digits(s, len, &j, 1, 2) || !char_at(s, len, j, ' '))
                        return false;
                j++;
                if (!skip_clock(s, len, &j, false))
                        return false;
        } else
                return false;
        if (!char_at(s, len, j, ']'))
                return false;
        *i = j + 1;
        return true;
}

/*
 * Index past a bracketed kernel time stamp at the start of s and what follows it up to the
 * message, or 0. The brackets dmesg (util-linux) prints: "[  123.456789]" (the kernel's own,
 * also on the console and in journalctl -o short-monotonic), "[Thu Nov 26 11:39:55 2026]" (-T),
 * "[Nov26 11:39]" and "[  +1.001986]" (--reltime, -H), "[< 1118.575697>]" (--time-format delta)
 * and either first form followed by a delta (-d; journalctl -o short-delta); and, where more
 * than one time format is printed, a bracket for each, a space apart ("[  +0.001354] [Tue Jan
 * 13 10:00:00 2026]", as pasted from dmesg -x -d -T). Then the caller id that a kernel built with
 * CONFIG_PRINTK_CALLER prints, "[  T123]" or "[    C1]", and one space.
 */
static size_t dmesg_bracket_len(const char *s, size_t len) {
        size_t i = 1, j;

        if (!char_at(s, len, 0, '[') || !skip_bracket_time(s, len, &i))
                return 0;
        for (;;) {
                j = i;
                if (char_at(s, len, j, ' '))
                        j++;
                if (!char_at(s, len, j, '['))
                        break;
                j++;
                if (!skip_bracket_time(s, len, &j))
                        break;
                i = j;
        }

        /* The caller id: "[%6s]" of "T<pid>" or "C<cpu>", right after the time on the console;
         * dmesg puts a space between. */
        j = i;
        if (char_at(s, len, j, ' '))
                j++;
        if (char_at(s, len, j, '[')) {
                j++;
                skip_spaces(s, len, &j);
                if (char_at(s, len, j, 'T') || char_at(s, len, j, 'C')) {
                        j++;
                        if (skip_digits(s, len, &j, 1, 10) && char_at(s, len, j, ']'))
                                i = j + 1;
                }
        }
        if (char_at(s, len, i, ' '))
                i++;
        return i;
}

/* Index past dmesg --time-format iso's "2026-11-26T11:39:55,345569+00:00 ", or 0. The comma tells
 * it from journalctl's short-iso, which has a host and an identifier after it. */
static size_t dmesg_iso_len(const char *s, size_t len) {
        size_t i = 0;

        if (!skip_date(s, len, &i) || !char_at(s, len, i, 'T'))
                return 0;
        i++;
        if (!skip_clock(s, len, &i, true) || !char_at(s, len, i, ','))
                return 0;
        i++;
        if (!skip_digits(s, len, &i, 1, 9) || !(char_at(s, len, i, '+') || char_at(s, len, i, '-')))
                return 0;
        i++;
        if (!skip_clock(s, len, &i, false) || !char_at(s, len, i, ' '))
                return 0;
        return i + 1;
}

/*
 * The dmesg forms, from util-linux's dmesg and the kernel's own syslog(2) and console output:
 * "[time] message" in any of dmesg_bracket_len()'s forms, "2026-...,345569+00:00 message"
 * (--time-format iso), "kern  :err   : " before either (-x, --decode: facility and level), or
 * "<PRI>" before the bracket (-r, --raw, /proc/kmsg: (facility << 3) | level, as the kernel
 * writes it). -x and "<PRI>" give the record its facility, so a line user space wrote is not
 * taken for the kernel's; without either a dmesg line counts as the kernel's, as plain text does.
 */
static const char *const facility_names[] = { /* util-linux's, by number */
        "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "authpriv", "ftp",
        "res0", "res1", "res2", "res3", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
};
static const char *const level_names[] = { "emerg", "alert", "crit", "err", "warn", "notice", "info", "debug" };
/* rsyslog's %syslogseverity-text% in capitals, and the longer names others write */
static const struct {
        const char *name;
        int priority;
} severities[] = {
        { "EMERG", 0 }, { "ALERT", 1 }, { "CRIT", 2 }, { "ERR", 3 }, { "WARNING", 4 }, { "NOTICE", 5 },
        { "INFO", 6 }, { "DEBUG", 7 }, { "ERROR", 3 }, { "WARN", 4 }, { "CRITICAL", 2 }, { "EMERGENCY", 0 },
};

/* The index in names of the word at s[*i], which it skips, or -1. */
static int skip_name(const char *s, size_t len, size_t *i, const char *const *names, size_t n) {
        size_t j = *i;

        while (j < len && islower((unsigned char) s[j]))
                j++;
        while (j < len && isdigit((unsigned char) s[j]))
                j++;
        for (size_t k = 0; k < n; k++)
                if (strlen(names[k]) == j - *i && memcmp(s + *i, names[k], j - *i) == 0) {
                        *i = j;
                        return (int) k;
                }
        return -1;
}

/* "%-6s:%-6s: " of dmesg -x: index past it, or 0. */
static size_t dmesg_decode_len(const char *s, size_t len, int *ret_facility, int *ret_level) {
        size_t i = 0;
        int f, l;

        if ((f = skip_name(s, len, &i, facility_names, ELEMENTSOF(facility_names))) < 0)
                return 0;
        skip_spaces(s, len, &i);
        if (!char_at(s, len, i, ':'))
                return 0;
        i++;
        if ((l = skip_name(s, len, &i, level_names, ELEMENTSOF(level_names))) < 0)
                return 0;
        skip_spaces(s, len, &i);
        if (!char_at(s, len, i, ':') || !char_at(s, len, i + 1, ' '))
                return 0;
        *ret_facility = f;
        *ret_level = l;
        return i + 2;
}

/*
 * talosctl dmesg (Talos Linux, which has no journald): "%s: %7s: [%s]: %s" of the facility, the
 * level ("warning" where util-linux says "warn") and the RFC 3339 time, perhaps after the node it
 * asked, "10.5.0.3: kern:    info: [2022-07-28T11:49:42.504764063Z]: msg": index past it, or 0.
 */
static size_t talos_len(const char *s, size_t len, int *ret_facility, int *ret_level) {
        size_t start = 0;

        for (int pass = 0; pass < 2; pass++) {
                size_t i = start;
                int f, l;

                if (pass == 1) {
                        /* "<node>: " first: a host name or address, no space in it */
                        while (i < len && s[i] != ' ' && !(s[i] == ':' && char_at(s, len, i + 1, ' ')))
                                i++;
                        if (i == 0 || !char_at(s, len, i, ':'))
                                return 0;
                        i += 2;
                }
                if ((f = skip_name(s, len, &i, facility_names, ELEMENTSOF(facility_names))) < 0 ||
                    !char_at(s, len, i, ':'))
                        continue;
                i++;
                skip_spaces(s, len, &i);
                if (len - i >= 7 && memcmp(s + i, "warning", 7) == 0) {
                        l = 4;
                        i += 7;
                } else if ((l = skip_name(s, len, &i, level_names, ELEMENTSOF(level_names))) < 0)
                        continue;
                if (!char_at(s, len, i, ':') || !char_at(s, len, i + 1, ' ') || !char_at(s, len, i + 2, '['))
                        continue;
                i += 3;
                if (!skip_rfc3339(s, len, &i) || !char_at(s, len, i, ']') || !char_at(s, len, i + 1, ':'))
                        continue;
                i += 2;
                if (char_at(s, len, i, ' '))
                        i++;
                *ret_facility = f;
                *ret_level = l;
                return i;
        }
        return 0;
}

/* "<PRI>": index past it, or 0. */
static size_t syslog_pri_len(const char *s, size_t len, int *ret_pri) {
        size_t i = 1;
        uint64_t v;

        if (!char_at(s, len, 0, '<') || !parse_u64(s, len, &i, &v) || i > 4 || v > 191 || !char_at(s, len, i, '>'))
                return 0;
        *ret_pri = (int) v;
        return i + 1;
}

/* A line the kernel logged as dmesg shows it, message from i on. */
static void dmesg_record(char *line, size_t len, size_t i, int facility, int level, LogRecord *rec) {
        *rec = LOG_RECORD_NULL;
        rec->source = LOG_SOURCE_TEXT;
        rec->kernel_origin = facility <= 0; /* unknown (-1) counts as the kernel's */
        rec->facility = facility;
        rec->priority = level;
        rec->message = line + i;
        rec->message_len = len - i;
}

/*
 * The syslog-shaped forms: "<time> <host> <identifier>[<pid>]: <message>". The times: journalctl's
 * short ("Nov 26 11:40:09"), short-precise (".649404" after it), short-iso and short-iso-precise
 * ("2026-11-26T11:40:09.649404+0000"; also rsyslog's RFC 3339 file format), short-full
 * ("Thu 2026-11-26 11:40:09 UTC"), short-unix ("1795693209.649404"); short-monotonic and
 * short-delta begin with a bracket as dmesg does (see parse_bracketed()). And OpenWrt's logread:
 * ctime with the year ("Tue Aug 12 16:40:43 2025 kern.crit kernel: ..."; FACILITY.LEVEL: see
 * parse_syslog()); short's with the year before it ("2025 Jul  2 06:57:28.475818", a syslog
 * template's, with the severity after the host: see parse_host_identifier()); and the date and
 * time with a space between ("2026-11-26 11:40:09", ".649" or ",649" after it), as log shippers
 * and many programs write them.
 */
static size_t syslog_timestamp_len(const char *s, size_t len) {
        size_t i = 0;

        /* The year first, as some syslog templates write it: "2025 Jul  2 06:57:28.475818" */
        if (skip_digits(s, len, &i, 4, 4) && char_at(s, len, i, ' ') && month_at(s, len, i + 1))
                i++;
        else
                i = 0;
        if (month_at(s, len, i)) {
                i += 3;
                if (!char_at(s, len, i, ' '))
                        return 0;
                i++;
                if (char_at(s, len, i, ' '))
                        i++;
                if (!skip_digits(s, len, &i, 1, 2) || !char_at(s, len, i, ' '))
                        return 0;
                i++;
                if (!skip_clock(s, len, &i, true))
                        return 0;
        } else if (weekday_at(s, len, 0) && month_at(s, len, 4)) {
                /* busybox's and OpenWrt's logread */
                if (!skip_ctime(s, len, &i))
                        return 0;
                return char_at(s, len, i, ' ') ? i + 1 : 0;
        } else if (weekday_at(s, len, 0)) {
                i = 3;
                if (!char_at(s, len, i, ' '))
                        return 0;
                i++;
                if (!skip_date(s, len, &i) || !char_at(s, len, i, ' '))
                        return 0;
                i++;
                if (!skip_clock(s, len, &i, true))
                        return 0;
                if (char_at(s, len, i, '.')) {
                        i++;
                        (void) skip_digits(s, len, &i, 1, 9);
                }
                if (!char_at(s, len, i, ' ') || i + 1 >= len || s[i + 1] == ' ')
                        return 0;
                /* the time zone, as strftime's %Z writes it */
                for (i++; i < len && s[i] != ' '; i++)
                        ;
                return char_at(s, len, i, ' ') ? i + 1 : 0;
        } else if (skip_rfc3339(s, len, &i)) {
                return char_at(s, len, i, ' ') ? i + 1 : 0;
        } else if (skip_date(s, len, &i)) {
                if (!char_at(s, len, i, ' '))
                        return 0;
                i++;
                if (!skip_clock(s, len, &i, true))
                        return 0;
                if (char_at(s, len, i, '.') || char_at(s, len, i, ',')) {
                        i++;
                        (void) skip_digits(s, len, &i, 1, 9);
                }
                return char_at(s, len, i, ' ') ? i + 1 : 0;
        } else if (skip_seconds(s, len, &i)) /* never a date: "2026-" has no '.' */
                return char_at(s, len, i, ' ') ? i + 1 : 0;
        else
                return 0;

        if (char_at(s, len, i, '.')) { /* short-precise */
                i++;
                (void) skip_digits(s, len, &i, 1, 9);
        }
        return char_at(s, len, i, ' ') ? i + 1 : 0;
}

/*
 * "<host> <identifier>[<pid>]: <message>" from line[i] on. Only the kernel's own records have the
 * identifier "kernel" and no pid (journald's kernel transport; syslog daemons reading the kernel
 * log); "kernel[1234]" is a program that called itself so. A kernel record from a syslog daemon
 * keeps the kernel's time stamp in its text ("kernel: [  123.456789] message": rsyslog's imklog
 * unless told to parse it): it is dropped as dmesg's is. require_kernel: only the kernel's line is
 * taken (after a dmesg-like bracket, where "nvme nvme0: I/O ..." has the same shape).
 * journalctl --no-hostname leaves the host out ("Nov 26 11:40:09 kernel: m", "[  123.456789]
 * kernel: m"), and so do many logs pasted into bug reports: a first word that ends in ':' or
 * '[' is the identifier (no host name holds either), taken only when ": " follows it, so that an
 * IPv6 address ("fe80::1 kernel: m") is not.
 */
static bool parse_host_identifier(char *line, size_t len, size_t i, bool require_kernel, LogRecord *rec) {
        size_t host, ident, ident_end;
        bool kernel, no_host = false;
        int priority = -1;
        pid_t pid = 0;

        while (char_at(line, len, i, ' '))
                i++;
        host = i;
        while (i < len && line[i] != ' ' && line[i] != ':' && line[i] != '[')
                i++;
        if (i == host)
                return false;
        if (char_at(line, len, i, ' ')) {
                ident = ++i;
                /* A syslog template's severity between the host and the identifier, in capitals
                 * ("host CRIT kernel: m") */
                for (size_t k = 0; k < ELEMENTSOF(severities); k++) {
                        size_t n = strlen(severities[k].name);
                        if (len - i > n && memcmp(line + i, severities[k].name, n) == 0 && line[i + n] == ' ') {
                                ident = i += n + 1;
                                priority = severities[k].priority;
                                break;
                        }
                }
        } else {
                ident = i = host;
                no_host = true;
        }
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
        if (!char_at(line, len, i, ':'))
                return false;
        i++;
        if (no_host && i < len && line[i] != ' ')
                return false;
        if (char_at(line, len, i, ' '))
                i++;
        kernel = pid == 0 && ident_end - ident == 6 && memcmp(line + ident, "kernel", 6) == 0;
        if (require_kernel && !kernel)
                return false;

        *rec = LOG_RECORD_NULL;
        if (priority >= 0)
                rec->priority = priority;
        line[ident_end] = '\0'; /* the identifier is followed by '[' or ':', both consumed above */
        rec->identifier = line + ident;
        rec->pid = pid;
        if (kernel) {
                size_t k = dmesg_bracket_len(line + i, len - i);
                i += k;
                /* journald's kernel transport; a syslog daemon's kernel input */
                rec->source = LOG_SOURCE_TEXT;
                rec->kernel_origin = true;
                rec->facility = 0;
        } else {
                rec->source = LOG_SOURCE_JOURNAL;
                rec->kernel_origin = false;
        }
        rec->message = line + i;
        rec->message_len = len - i;
        return true;
}

/* socklog's "FACILITY.LEVEL: " (Void Linux's log of the kernel, "kern.err: [ 1234.5] m"): index
 * past it, or 0. */
static size_t socklog_len(const char *s, size_t len, int *ret_facility, int *ret_level) {
        size_t i = 0;
        int f, l;

        if ((f = skip_name(s, len, &i, facility_names, ELEMENTSOF(facility_names))) < 0 || !char_at(s, len, i, '.'))
                return 0;
        i++;
        if ((l = skip_name(s, len, &i, level_names, ELEMENTSOF(level_names))) < 0 || !char_at(s, len, i, ':') ||
            !char_at(s, len, i + 1, ' '))
                return 0;
        *ret_facility = f;
        *ret_level = l;
        return i + 2;
}

/* logread's "FACILITY.LEVEL " at s[*i] ("kern.crit "): skips it and gives both, or returns false. */
static bool skip_facility_level(const char *s, size_t len, size_t *i, int *ret_facility, int *ret_level) {
        size_t j = *i;
        int f, l;

        if ((f = skip_name(s, len, &j, facility_names, ELEMENTSOF(facility_names))) < 0 || !char_at(s, len, j, '.'))
                return false;
        j++;
        if ((l = skip_name(s, len, &j, level_names, ELEMENTSOF(level_names))) < 0 || !char_at(s, len, j, ' '))
                return false;
        *i = j + 1;
        *ret_facility = f;
        *ret_level = l;
        return true;
}

static bool parse_syslog(char *line, size_t len, LogRecord *rec) {
        size_t i = syslog_timestamp_len(line, len), j = i;
        int facility = -1, level = -1;

        if (i == 0)
                return false;
        /* "FACILITY.LEVEL" before the identifier: busybox's syslogd writes it after the host ("Aug
         * 12 16:40:43 host kern.crit kernel: m"), OpenWrt's logread in the host's place after ctime
         * with the year ("Tue Aug 12 16:40:43 2025 kern.crit kernel: m", the host first with -h).
         * Only there: after any other time stamp that word is a host, which may well be
         * "news.info". */
        while (j < len && line[j] != ' ' && line[j] != ':' && line[j] != '[')
                j++;
        if (char_at(line, len, j, ' ')) {
                size_t k = j + 1;
                if (skip_facility_level(line, len, &k, &facility, &level))
                        i = j + 1; /* the host, then FACILITY.LEVEL: the latter in the host's place */
                else if (weekday_at(line, len, 0) && month_at(line, len, 4)) {
                        k = i;
                        if (!skip_facility_level(line, len, &k, &facility, &level))
                                facility = -1;
                }
        }
        if (!parse_host_identifier(line, len, i, /* require_kernel= */ false, rec))
                return false;
        if (facility >= 0) {
                rec->facility = facility;
                rec->priority = level;
                rec->kernel_origin = rec->kernel_origin && facility == 0;
                rec->source = rec->kernel_origin ? LOG_SOURCE_TEXT : LOG_SOURCE_JOURNAL;
        }
        return true;
}

/*
 * RFC 5424, as syslog daemons forward and store it: "<PRI>1 TIMESTAMP HOST APP-NAME PROCID MSGID
 * STRUCTURED-DATA MSG", "-" for a field left out, MSG perhaps after a UTF-8 byte order mark. The
 * kernel's records are those of facility 0 from APP-NAME "kernel".
 */
static bool parse_rfc5424(char *line, size_t len, size_t i, int pri, LogRecord *rec) {
        size_t field[4][2], app;
        uint64_t v;
        pid_t pid = 0;

        if (!char_at(line, len, i, '1') || !char_at(line, len, i + 1, ' '))
                return false;
        i += 2;
        for (size_t f = 0; f < 5; f++) { /* TIMESTAMP HOST APP-NAME PROCID MSGID */
                size_t start = i;
                while (i < len && line[i] != ' ')
                        i++;
                if (i == start || i >= len)
                        return false;
                if (f >= 1)
                        field[f - 1][0] = start, field[f - 1][1] = i;
                i++;
        }
        if (char_at(line, len, i, '-'))
                i++;
        else {
                if (!char_at(line, len, i, '['))
                        return false;
                while (char_at(line, len, i, '[')) { /* SD-ELEMENTs: '"', '\' and ']' escaped in values */
                        bool quoted = false;
                        for (i++; i < len && (quoted || line[i] != ']'); i++)
                                if (line[i] == '\\' && quoted)
                                        i++;
                                else if (line[i] == '"')
                                        quoted = !quoted;
                        if (i >= len)
                                return false;
                        i++;
                }
        }
        if (i < len) {
                if (line[i] != ' ')
                        return false;
                i++;
        }
        if (len - i >= 3 && memcmp(line + i, "\xEF\xBB\xBF", 3) == 0)
                i += 3;

        app = field[1][0];
        if (field[2][1] - field[2][0] != 1 || line[field[2][0]] != '-') {
                size_t k = field[2][0];
                if (parse_u64(line, len, &k, &v) && k == field[2][1] && v <= INT32_MAX)
                        pid = (pid_t) v;
        }
        *rec = LOG_RECORD_NULL;
        line[field[1][1]] = '\0';
        rec->identifier = line + app;
        rec->pid = pid;
        rec->facility = pri >> 3;
        rec->priority = pri & 7;
        rec->kernel_origin = rec->facility == 0 && streq(rec->identifier, "kernel");
        rec->source = rec->kernel_origin ? LOG_SOURCE_TEXT : LOG_SOURCE_JOURNAL;
        if (rec->kernel_origin) /* a syslog daemon's kernel input keeps the kernel's time stamp */
                i += dmesg_bracket_len(line + i, len - i);
        rec->message = line + i;
        rec->message_len = len - i;
        return true;
}

/*
 * A line that begins with a bracket: dmesg, or journalctl -o short-monotonic or short-delta. Only
 * the kernel's journal lines ("[  123.456789] host kernel: ...") are taken apart: a program's
 * ("[...] host app[42]: ...") has the shape of the kernel's own report of a process whose name
 * holds a space ("Web Content[4321]: segfault at ..."), and that stays the kernel's line.
 */
static LineFormat parse_bracketed(char *line, size_t len, LogRecord *rec) {
        size_t i = dmesg_bracket_len(line, len);

        if (i == 0)
                return _LINE_FORMAT_INVALID;
        if (parse_host_identifier(line, len, i, /* require_kernel= */ true, rec))
                return LINE_FORMAT_JOURNAL;
        dmesg_record(line, len, i, -1, -1, rec);
        return LINE_FORMAT_DMESG;
}

LineFormat rules_input_parse_line(char *line, size_t len, LogRecord *ret) {
        LineFormat f;
        size_t i;
        int pri, facility, level;

        if (len == 0)
                return LINE_FORMAT_SKIP; /* nothing to match (json-sse puts one after each entry) */
        if (line[0] == ' ')
                return LINE_FORMAT_SKIP; /* kmsg dictionary continuation */
        if (len >= 3 && line[0] == '-' && line[1] == '-' && line[2] == ' ')
                return LINE_FORMAT_SKIP; /* journalctl "-- Boot 1234... --", "-- No entries --" */
        if (len > 0 && isdigit((unsigned char) line[0]) && parse_kmsg(line, len, ret))
                return LINE_FORMAT_KMSG;
        if (len > 0 && (line[0] == '{' || line[0] == '\x1e' || line[0] == 'd')) {
                int r = rules_input_parse_journal_json(line, len, ret);
                if (r > 0)
                        return LINE_FORMAT_JOURNAL_JSON;
                if (r < 0)
                        return LINE_FORMAT_SKIP;
        }

        if ((i = syslog_pri_len(line, len, &pri)) > 0) {
                if (parse_rfc5424(line, len, i, pri, ret))
                        return LINE_FORMAT_JOURNAL;
                /* RFC 3164 as sent: "<PRI>Nov 26 11:40:09 host ident: ..." */
                if (parse_syslog(line + i, len - i, ret)) {
                        ret->facility = pri >> 3;
                        ret->priority = pri & 7;
                        ret->kernel_origin = ret->kernel_origin && ret->facility == 0;
                        ret->source = ret->kernel_origin ? LOG_SOURCE_TEXT : LOG_SOURCE_JOURNAL;
                        return LINE_FORMAT_JOURNAL;
                }
                i += dmesg_bracket_len(line + i, len - i);
                dmesg_record(line, len, i, pri >> 3, pri & 7, ret);
                return LINE_FORMAT_DMESG;
        }
        if ((i = talos_len(line, len, &facility, &level)) > 0) {
                dmesg_record(line, len, i, facility, level, ret);
                return LINE_FORMAT_DMESG;
        }
        if ((i = dmesg_decode_len(line, len, &facility, &level)) > 0) {
                size_t k = dmesg_bracket_len(line + i, len - i);
                i += k > 0 ? k : dmesg_iso_len(line + i, len - i);
                dmesg_record(line, len, i, facility, level, ret);
                return LINE_FORMAT_DMESG;
        }
        if (len > 0 && line[0] == '[' && (f = parse_bracketed(line, len, ret)) >= 0)
                return f;
        if ((i = dmesg_iso_len(line, len)) > 0) {
                dmesg_record(line, len, i, -1, -1, ret);
                return LINE_FORMAT_DMESG;
        }
        if (parse_syslog(line, len, ret))
                return LINE_FORMAT_JOURNAL;
        if ((i = socklog_len(line, len, &facility, &level)) > 0) {
                i += dmesg_bracket_len(line + i, len - i);
                dmesg_record(line, len, i, facility, level, ret);
                return LINE_FORMAT_DMESG;
        }
        /* A time stamp and the kernel's bracket, with no host: a console server's or a serial
         * console's log ("2016-12-03 19:08:52    [ 1234.5] m"). */
        if ((i = syslog_timestamp_len(line, len)) > 0) {
                size_t k;
                skip_spaces(line, len, &i);
                if ((k = dmesg_bracket_len(line + i, len - i)) > 0) {
                        dmesg_record(line, len, i + k, -1, -1, ret);
                        return LINE_FORMAT_DMESG;
                }
        }
        /* A syslog line pasted without its time, or without its time and host: the kernel's, as
         * in the syslog form ("kernel: m", "vmhost kernel: m"). */
        if (len > 8 && memcmp(line, "kernel: ", 8) == 0 &&
            parse_host_identifier(line, len, 0, /* require_kernel= */ true, ret))
                return LINE_FORMAT_JOURNAL;
        for (i = 0; i < len && !strchr(" :[", line[i]); i++)
                ;
        if (i > 0 && i < len && len - i > 9 && memcmp(line + i, " kernel: ", 9) == 0 &&
            parse_host_identifier(line, len, 0, /* require_kernel= */ true, ret))
                return LINE_FORMAT_JOURNAL;

        *ret = LOG_RECORD_NULL;
        ret->source = LOG_SOURCE_TEXT;
        ret->kernel_origin = true;
        ret->message = line;
        ret->message_len = len;
        return LINE_FORMAT_PLAIN;
}
