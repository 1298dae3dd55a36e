/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the escaping in basic/string-util: every log line, rule text and process name
 * that tprof-bundle prints goes through strbuf_append_escaped() first, so its promise (no control
 * bytes, no C1 controls, valid UTF-8, and nothing lost) is what stands between a hostile kernel
 * message and the operator's terminal. The input is any bytes: the escaped text is checked
 * against that promise and unescaped back to the input; the same bytes also go through
 * filename_sanitize() and the UTF-8 validator.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic/cleanup.h"
#include "basic/string-util.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int unhex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *buf = NULL, *escaped = NULL, *back = NULL, *name = NULL;
        size_t n = 0, len;

        buf = fuzz_copy(data, size);
        if (!buf)
                return 0;

        escaped = escape_text(buf, size);
        if (!escaped)
                return 0;
        len = strlen(escaped);
        assert(utf8_is_valid_n(escaped, len));
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) escaped[i];
                assert(c >= 0x20 && c != 0x7f);
                if (c == 0xc2 && i + 1 < len)
                        assert((unsigned char) escaped[i + 1] >= 0xa0);
        }

        /* Nothing is lost: backslash is always escaped, so \xNN and \\ read back unambiguously. */
        back = malloc(len + 1);
        if (!back)
                return 0;
        for (size_t i = 0; i < len;) {
                if (escaped[i] == '\\') {
                        assert(i + 1 < len);
                        if (escaped[i + 1] == '\\') {
                                back[n++] = '\\';
                                i += 2;
                        } else {
                                assert(escaped[i + 1] == 'x' && i + 3 < len);
                                assert(unhex(escaped[i + 2]) >= 0 && unhex(escaped[i + 3]) >= 0);
                                back[n++] = (char) (unhex(escaped[i + 2]) << 4 | unhex(escaped[i + 3]));
                                i += 4;
                        }
                } else
                        back[n++] = escaped[i++];
        }
        assert(n == size && memcmp(back, buf, size) == 0);

        /* Valid input (that needs no escaping) is exactly what utf8_is_valid_n() accepts. */
        if (utf8_is_valid_n(buf, size)) {
                size_t i = 0;
                while (i < size) {
                        size_t k = utf8_sequence_length(buf + i, size - i);
                        assert(k >= 1 && k <= 4 && k <= size - i);
                        i += k;
                }
        }

        /* filename_sanitize() on the bytes up to the first NUL. */
        name = strndup(buf, size);
        if (!name)
                return 0;
        filename_sanitize(name);
        assert(name[0] != '.');
        assert(strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == strlen(name));
        return 0;
}
