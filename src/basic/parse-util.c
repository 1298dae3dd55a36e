/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict number and size parsing; see parse-util.h.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "basic/parse-util.h"

int safe_atou64(const char *s, uint64_t *ret) {
        unsigned long long v;
        char *end;

        if (!s || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end != '\0')
                return -EINVAL;
        *ret = (uint64_t) v;
        return 0;
}

int safe_atou32(const char *s, uint32_t *ret) {
        uint64_t v;
        int r = safe_atou64(s, &v);

        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

int safe_atoi64(const char *s, int64_t *ret) {
        long long v;
        char *end;

        if (!s || !(isdigit((unsigned char) s[0]) || ((s[0] == '-' || s[0] == '+') && isdigit((unsigned char) s[1]))))
                return -EINVAL;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end != '\0')
                return -EINVAL;
        *ret = (int64_t) v;
        return 0;
}

int safe_atoi(const char *s, int *ret) {
        int64_t v;
        int r = safe_atoi64(s, &v);

        if (r < 0)
                return r;
        if (v < INT_MIN || v > INT_MAX)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}

int parse_size(const char *s, uint64_t *ret_bytes) {
        uint64_t v = 0, mult = 1;
        const char *p = s;

        if (!s || !isdigit((unsigned char) *p))
                return -EINVAL;
        while (isdigit((unsigned char) *p)) {
                if (v > (UINT64_MAX - 9) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*p - '0');
                p++;
        }
        switch (*p) {
        case '\0':
                break;
        case 'K': case 'k':
                mult = UINT64_C(1) << 10;
                break;
        case 'M':
                mult = UINT64_C(1) << 20;
                break;
        case 'G':
                mult = UINT64_C(1) << 30;
                break;
        case 'T':
                mult = UINT64_C(1) << 40;
                break;
        default:
                return -EINVAL;
        }
        if (*p != '\0') {
                p++;
                if (*p == 'i')
                        p++;
                if (*p == 'B')
                        p++;
                if (*p != '\0')
                        return -EINVAL;
        }
        if (v > UINT64_MAX / mult)
                return -ERANGE;
        *ret_bytes = v * mult;
        return 0;
}

const char *format_bytes(char *buf, size_t l, uint64_t bytes) {
        static const char suffix[] = "KMGTPE";
        double v = (double) bytes;
        int i = -1;

        if (bytes < 1024) {
                snprintf(buf, l, "%lluB", (unsigned long long) bytes);
                return buf;
        }
        while (v >= 1024 && i < 5) {
                v /= 1024;
                i++;
        }
        snprintf(buf, l, v < 10 ? "%.1f%c" : "%.0f%c", v, suffix[i]);
        return buf;
}
