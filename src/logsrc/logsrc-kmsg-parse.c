/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /dev/kmsg record parser; see logsrc-kmsg-parse.h. Written as a single forward scan with an explicit
 * end pointer: the input is untrusted and not NUL-terminated.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "logsrc/logsrc-kmsg-parse.h"

static int fail(const char **reterr_reason, const char *reason, int r) {
        if (reterr_reason)
                *reterr_reason = reason;
        return r;
}

/* Parses decimal digits in [*p, end) up to the delimiter: -ENODATA if empty, -ENOENT if the delimiter
 * (and so the next field) is missing, -EINVAL for a non-digit, -ERANGE on overflow. */
static int parse_u64_field(const char **p, const char *end, char delim, uint64_t *ret) {
        const char *s = *p;
        uint64_t v = 0;

        if (s >= end || *s == delim)
                return -ENODATA;
        for (; s < end && *s != delim; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t) (*s - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        if (s >= end)
                return -ENOENT;
        *p = s + 1; /* past the delimiter */
        *ret = v;
        return 0;
}

static bool is_raw_control(unsigned char c) {
        return c < 0x20 || c == 0x7f;
}

int kmsg_record_parse(const char *buf, size_t n, KmsgRecord *ret, const char **reterr_reason) {
        const char *p = buf, *end = buf + n, *semicolon, *nl;
        uint64_t pri, seq, usec;
        size_t k;
        int r;

        assert(buf || n == 0);
        assert(ret);

        if (n == 0)
                return fail(reterr_reason, "empty record", -EBADMSG);
        if (n > KMSG_RECORD_BYTES_MAX)
                return fail(reterr_reason, "record too long", -EMSGSIZE);

        semicolon = memchr(buf, ';', n);
        nl = memchr(buf, '\n', n);
        if (!semicolon || (nl && nl < semicolon))
                return fail(reterr_reason, "missing ';' after the header", -EBADMSG);

        r = parse_u64_field(&p, semicolon, ',', &pri);
        if (r == -ENOENT)
                return fail(reterr_reason, "missing sequence number", -EBADMSG);
        if (r == -ENODATA)
                return fail(reterr_reason, "missing priority", -EBADMSG);
        if (r == -ERANGE || (r >= 0 && pri > KMSG_PRI_MAX))
                return fail(reterr_reason, "priority out of range", -EBADMSG);
        if (r < 0)
                return fail(reterr_reason, "non-numeric priority", -EBADMSG);

        r = parse_u64_field(&p, semicolon, ',', &seq);
        if (r == -ENOENT)
                return fail(reterr_reason, "missing timestamp", -EBADMSG);
        if (r == -ENODATA)
                return fail(reterr_reason, "missing sequence number", -EBADMSG);
        if (r == -ERANGE)
                return fail(reterr_reason, "sequence number overflows", -EBADMSG);
        if (r < 0)
                return fail(reterr_reason, "non-numeric sequence number", -EBADMSG);

        r = parse_u64_field(&p, semicolon, ',', &usec);
        if (r == -ENOENT)
                return fail(reterr_reason, "missing flags", -EBADMSG);
        if (r == -ENODATA)
                return fail(reterr_reason, "missing timestamp", -EBADMSG);
        if (r == -ERANGE || (r >= 0 && usec > UINT64_MAX / NSEC_PER_USEC))
                return fail(reterr_reason, "timestamp overflows", -EBADMSG);
        if (r < 0)
                return fail(reterr_reason, "non-numeric timestamp", -EBADMSG);

        /* FLAGS: one character, then either ';' or ",more fields" we do not interpret (caller=...). */
        if (p >= semicolon)
                return fail(reterr_reason, "missing flags", -EBADMSG);
        if (!strchr("-c+", *p) || *p == '\0')
                return fail(reterr_reason, "unknown flags", -EBADMSG);
        if (p + 1 != semicolon && p[1] != ',')
                return fail(reterr_reason, "unknown flags", -EBADMSG);

        *ret = (KmsgRecord){
                .facility = (int) (pri >> 3),
                .level = (int) (pri & 7),
                .seq = seq,
                .usec = usec,
                .flag = *p,
        };

        /* The message: up to the first newline, which must exist. */
        p = semicolon + 1;
        nl = memchr(p, '\n', (size_t) (end - p));
        if (!nl)
                return fail(reterr_reason, "missing newline after the message", -EBADMSG);
        if ((size_t) (nl - p) > LOG_MESSAGE_BYTES_MAX)
                return fail(reterr_reason, "message too long", -EMSGSIZE);
        ret->message_escaped = p;
        ret->message_escaped_len = (size_t) (nl - p);

        for (k = 0; p < nl; p++) {
                unsigned char c = (unsigned char) *p;

                if (c == '\\') {
                        int hi, lo;

                        if (nl - p < 4 || p[1] != 'x')
                                return fail(reterr_reason, "bad escape in the message", -EBADMSG);
                        hi = unhexchar(p[2]);
                        lo = unhexchar(p[3]);
                        if (hi < 0 || lo < 0)
                                return fail(reterr_reason, "bad escape in the message", -EBADMSG);
                        c = (unsigned char) (hi << 4 | lo);
                        p += 3;
                } else if (is_raw_control(c))
                        return fail(reterr_reason, "unescaped control byte in the message", -EBADMSG);
                ret->message[k++] = (char) c;
        }
        ret->message[k] = '\0';
        ret->message_len = k;

        /* Dictionary: " KEY=VALUE\n" lines, nothing else. */
        p = nl + 1;
        k = 0;
        while (p < end) {
                const char *line, *eq, *q;
                size_t len;

                if (*p != ' ')
                        return fail(reterr_reason, "trailing data after the message", -EBADMSG);
                line = p + 1;
                nl = memchr(line, '\n', (size_t) (end - line));
                if (!nl)
                        return fail(reterr_reason, "dictionary line without newline", -EBADMSG);
                eq = memchr(line, '=', (size_t) (nl - line));
                if (!eq || eq == line)
                        return fail(reterr_reason, "dictionary line without KEY=", -EBADMSG);
                for (q = line; q < eq; q++)
                        if (!((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') ||
                              (*q >= '0' && *q <= '9') || *q == '_'))
                                return fail(reterr_reason, "bad dictionary key", -EBADMSG);
                for (q = eq + 1; q < nl; q++)
                        if (is_raw_control((unsigned char) *q))
                                return fail(reterr_reason, "unescaped control byte in the dictionary",
                                            -EBADMSG);

                len = (size_t) (nl - line) + 1;
                if (len > KMSG_DICTIONARY_BYTES_MAX - k)
                        return fail(reterr_reason, "dictionary too long", -EMSGSIZE);
                memcpy(ret->dictionary + k, line, len);
                k += len;
                p = nl + 1;
        }
        ret->dictionary[k] = '\0';
        ret->dictionary_len = k;

        return 0;
}

void kmsg_record_to_log_record(const KmsgRecord *k, const ClockMap *clock, LogRecord *ret) {
        uint64_t t_ns;

        assert(k);
        assert(ret);

        t_ns = k->usec * NSEC_PER_USEC;
        *ret = LOG_RECORD_NULL;
        ret->source = LOG_SOURCE_KMSG;
        ret->kernel_origin = k->facility == 0;
        ret->priority = k->level;
        ret->facility = k->facility;
        ret->seq = k->seq;
        ret->t_ns = t_ns;
        ret->source_usec = k->usec;
        ret->realtime_usec = clock ? clock_map_perf_to_realtime(clock, t_ns) / NSEC_PER_USEC : 0;
        ret->t_error_ns = 0;
        ret->message = k->message;
        ret->message_len = k->message_len;
        ret->message_escaped = k->message_escaped;
        ret->message_escaped_len = k->message_escaped_len;
        ret->dictionary = k->dictionary_len > 0 ? k->dictionary : NULL;
}
