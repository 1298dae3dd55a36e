/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsing and formatting of control messages; see control-proto.h for the grammar.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/control-proto.h"

static bool key_char(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool key_valid(const char *k, size_t n) {
        if (n == 0 || n > CONTROL_KEY_BYTES_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!key_char(k[i]))
                        return false;
        return true;
}

int control_message_parse(const char *buf, size_t n, ControlMessage *ret, const char **reterr_reason) {
        const char *p = buf, *end = buf + n;

#define FAIL(reason)                                                                                         \
        do {                                                                                                 \
                if (reterr_reason)                                                                           \
                        *reterr_reason = (reason);                                                           \
                return -EBADMSG;                                                                             \
        } while (0)

        ret->n_fields = 0;
        if (n == 0)
                FAIL("empty message");
        if (n > CONTROL_MESSAGE_BYTES_MAX)
                FAIL("message too long");
        if (memchr(buf, '\0', n))
                FAIL("NUL byte in message");
        if (buf[n - 1] != '\n')
                FAIL("message does not end with a newline");

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *eq = memchr(p, '=', (size_t) (nl - p));
                ControlField *f;

                if (!eq)
                        FAIL("line without '='");
                if (!key_valid(p, (size_t) (eq - p)))
                        FAIL("invalid key");
                if ((size_t) (nl - eq - 1) > CONTROL_VALUE_BYTES_MAX)
                        FAIL("value too long");
                if (ret->n_fields >= CONTROL_FIELDS_MAX)
                        FAIL("too many fields");
                f = &ret->fields[ret->n_fields];
                memcpy(f->key, p, (size_t) (eq - p));
                f->key[eq - p] = '\0';
                if (control_message_get(ret, f->key))
                        FAIL("duplicate key");
                memcpy(f->value, eq + 1, (size_t) (nl - eq - 1));
                f->value[nl - eq - 1] = '\0';
                ret->n_fields++;
                p = nl + 1;
        }
        return 0;
#undef FAIL
}

const char *control_message_get(const ControlMessage *m, const char *key) {
        for (size_t i = 0; i < m->n_fields; i++)
                if (streq(m->fields[i].key, key))
                        return m->fields[i].value;
        return NULL;
}

int control_message_append(StrBuf *b, const char *key, const char *value) {
        size_t n = strlen(value);
        int r;

        if (!key_valid(key, strlen(key)))
                return -EINVAL;
        if (n > CONTROL_VALUE_BYTES_MAX)
                n = CONTROL_VALUE_BYTES_MAX;
        r = strbuf_appendf(b, "%s=", key);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = strbuf_putc(b, value[i] == '\n' ? ' ' : value[i]);
        if (r >= 0)
                r = strbuf_putc(b, '\n');
        return r;
}

int control_message_appendf(StrBuf *b, const char *key, const char *fmt, ...) {
        char buf[CONTROL_VALUE_BYTES_MAX + 1];
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        return control_message_append(b, key, buf);
}
