/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * journalctl's JSON output (-o json, json-seq, json-sse) as tprofd --test-rules input; see
 * rules-input.h. Unlike the short modes, an entry here carries journald's trusted fields, so
 * journal rules can be tried with their filters.
 */
#include <errno.h>
#include <string.h>

#include "basic/json-reader.h"
#include "basic/macro.h"
#include "basic/parse-util.h"
#include "rules/rules-input.h"

/* RFC 7464 puts an RS before each text (json-seq); Server-Sent Events a "data: " (json-sse). */
static size_t json_prefix_len(const char *s, size_t len) {
        if (len >= 1 && s[0] == '\x1e')
                return 1;
        if (len >= 6 && memcmp(s, "data: ", 6) == 0)
                return 6;
        return 0;
}

/*
 * The bytes of one field's value, as journalctl writes it: a string; an array of numbers for a
 * value that is not valid UTF-8 (or holds control characters); an array of those when the entry
 * has the field more than once (the first is taken, as sd_journal_get_data() does). Writes the
 * bytes at *out (room for them is checked against end) and returns false when the value is none
 * of these: null (journalctl's mark for a value longer than 4096 bytes without --all), a number.
 */
static bool take_value(const JsonValue *v, char **out, const char *end, const char **ret, size_t *ret_len) {
        char *start = *out;

        if (v && v->type == JSON_TYPE_ARRAY && json_length(v) > 0) {
                const JsonValue *first = json_array_get(v, 0);
                if (first->type == JSON_TYPE_STRING || first->type == JSON_TYPE_ARRAY)
                        v = first;
        }
        if (!v)
                return false;
        if (v->type == JSON_TYPE_STRING) {
                if ((size_t) (end - start) < v->string.len + 1)
                        return false;
                memcpy(start, v->string.s, v->string.len);
                *out = start + v->string.len;
        } else if (v->type == JSON_TYPE_ARRAY) {
                size_t n = json_length(v);
                if ((size_t) (end - start) < n + 1)
                        return false;
                for (size_t i = 0; i < n; i++) {
                        uint64_t b;
                        if (!json_u64_value(json_array_get(v, i), &b) || b > 255)
                                return false;
                        start[i] = (char) b;
                }
                *out = start + n;
        } else
                return false;
        *ret_len = (size_t) (*out - start);
        *(*out)++ = '\0';
        *ret = start;
        return true;
}

/* A field that is text: NULL when absent, or when it holds a NUL (it could not be compared). */
static const char *take_text(const JsonValue *obj, const char *key, char **out, const char *end) {
        const char *s;
        size_t n;

        if (!take_value(json_object_get(obj, key), out, end, &s, &n) || memchr(s, '\0', n))
                return NULL;
        return s;
}

static bool take_number(const JsonValue *obj, const char *key, uint64_t max, uint64_t *ret) {
        const JsonValue *v = json_object_get(obj, key);

        if (v && v->type == JSON_TYPE_STRING)
                return safe_atou64(v->string.s, ret) >= 0 && *ret <= max;
        return json_u64_value(v, ret) && *ret <= max;
}

int rules_input_parse_journal_json(char *line, size_t len, LogRecord *ret) {
        _cleanup_(json_value_freep) JsonValue *obj = NULL;
        size_t skip = json_prefix_len(line, len), offset;
        uint64_t u;

        if (skip >= len || line[skip] != '{')
                return 0;
        if (json_parse(line + skip, len - skip, JSON_READER_DEPTH_DEFAULT, &obj, &offset) < 0 ||
            obj->type != JSON_TYPE_OBJECT)
                return 0; /* not JSON: the line is someone's text */
        if (!json_object_get(obj, "MESSAGE")) {
                /* An entry with no message (journald keeps those too): nothing to match. Any other
                 * object is someone's text. */
                if (json_object_get(obj, "__CURSOR") || json_object_get(obj, "__REALTIME_TIMESTAMP") ||
                    json_object_get(obj, "_TRANSPORT"))
                        return -EBADMSG;
                return 0;
        }

        /*
         * The values are copied back over the line: each is no longer there than in its JSON
         * form (escapes and numbers only get shorter), quotes included, so they fit.
         */
        char *out = line;
        const char *end = line + len + 1;
        LogRecord rec = LOG_RECORD_NULL;

        if (!take_value(json_object_get(obj, "MESSAGE"), &out, end, &rec.message, &rec.message_len))
                return -EBADMSG;
        rec.transport = take_text(obj, "_TRANSPORT", &out, end);
        rec.unit = take_text(obj, "_SYSTEMD_UNIT", &out, end);
        rec.comm = take_text(obj, "_COMM", &out, end);
        rec.exe = take_text(obj, "_EXE", &out, end);
        rec.identifier = take_text(obj, "SYSLOG_IDENTIFIER", &out, end);
        rec.cursor = take_text(obj, "__CURSOR", &out, end);
        if (take_number(obj, "PRIORITY", 7, &u))
                rec.priority = (int) u;
        if (take_number(obj, "SYSLOG_FACILITY", 23, &u))
                rec.facility = (int) u;
        if (take_number(obj, "_UID", UINT32_MAX - 1, &u))
                rec.uid = (uid_t) u;
        if (take_number(obj, "_PID", INT32_MAX, &u))
                rec.pid = (pid_t) u;
        if (take_number(obj, "__REALTIME_TIMESTAMP", UINT64_MAX, &u))
                rec.realtime_usec = u;

        /*
         * journald's copy of a kmsg record: the kernel's when its facility is the kernel's (user
         * space writes to /dev/kmsg with its own), as tprofd reads it from /dev/kmsg itself.
         */
        if (rec.transport && streq(rec.transport, "kernel")) {
                rec.source = LOG_SOURCE_TEXT;
                rec.kernel_origin = rec.facility <= 0;
        } else {
                rec.source = LOG_SOURCE_JOURNAL;
                rec.kernel_origin = false;
        }
        *ret = rec;
        return 1;
}
