/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parser of time-parse.h. Absolute dates are read field by field with fixed widths rather
 * than with strptime(), so that trailing garbage is always an error and the result does not
 * depend on the locale.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "basic/macro.h"
#include "basic/time-parse.h"
#include "basic/time-util.h"

static bool digits(const char *s, size_t n, int *ret) {
        int v = 0;
        for (size_t i = 0; i < n; i++) {
                if (!isdigit((unsigned char) s[i]))
                        return false;
                v = v * 10 + (s[i] - '0');
        }
        *ret = v;
        return true;
}

static int local_midnight(uint64_t now_usec, int day_offset, uint64_t *ret) {
        time_t t = (time_t) (now_usec / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm))
                return -EINVAL;
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        tm.tm_mday += day_offset;
        tm.tm_isdst = -1;
        t = mktime(&tm);
        if (t == (time_t) -1 || t < 0)
                return -ERANGE;
        *ret = (uint64_t) t * USEC_PER_SEC;
        return 0;
}

/* "Z", "UTC", "+HH:MM", "+HHMM", "+HH", "-..." or nothing (local). */
static int parse_zone(const char *s, bool *ret_local, long *ret_offset_sec) {
        int hh = 0, mm = 0;
        size_t n = strlen(s);

        if (n == 0) {
                *ret_local = true;
                *ret_offset_sec = 0;
                return 0;
        }
        *ret_local = false;
        if (streq(s, "Z") || streq(s, "z") || streq(s, " UTC") || streq(s, " Z")) {
                *ret_offset_sec = 0;
                return 0;
        }
        if (s[0] == ' ')
                s++, n--;
        if (s[0] != '+' && s[0] != '-')
                return -EINVAL;
        if (n == 3 && digits(s + 1, 2, &hh))
                ;
        else if (n == 5 && digits(s + 1, 2, &hh) && digits(s + 3, 2, &mm))
                ;
        else if (n == 6 && s[3] == ':' && digits(s + 1, 2, &hh) && digits(s + 4, 2, &mm))
                ;
        else
                return -EINVAL;
        if (hh > 23 || mm > 59)
                return -EINVAL;
        *ret_offset_sec = (s[0] == '-' ? -1 : 1) * (long) (hh * 3600 + mm * 60);
        return 0;
}

static int parse_absolute(const char *s, uint64_t *ret) {
        int year, mon, mday, hour = 0, min = 0, sec = 0;
        uint64_t frac = 0, frac_div = 1;
        bool local;
        long offset;
        struct tm tm = {};
        time_t t;
        int r;

        if (strlen(s) < 10 || !digits(s, 4, &year) || s[4] != '-' || !digits(s + 5, 2, &mon) || s[7] != '-' ||
            !digits(s + 8, 2, &mday))
                return -EINVAL;
        s += 10;
        if (*s == ' ' || *s == 'T') {
                if (strlen(s) < 6 || !digits(s + 1, 2, &hour) || s[3] != ':' || !digits(s + 4, 2, &min))
                        return -EINVAL;
                s += 6;
                if (*s == ':') {
                        if (!digits(s + 1, 2, &sec) || strlen(s) < 3)
                                return -EINVAL;
                        s += 3;
                        if (*s == '.') {
                                s++;
                                if (!isdigit((unsigned char) *s))
                                        return -EINVAL;
                                while (isdigit((unsigned char) *s)) {
                                        if (frac_div < USEC_PER_SEC) {
                                                frac = frac * 10 + (uint64_t) (*s - '0');
                                                frac_div *= 10;
                                        }
                                        s++;
                                }
                        }
                }
        }
        r = parse_zone(s, &local, &offset);
        if (r < 0)
                return r;
        if (mon < 1 || mon > 12 || mday < 1 || mday > 31 || hour > 23 || min > 59 || sec > 60 || year < 1970)
                return -EINVAL;

        tm.tm_year = year - 1900;
        tm.tm_mon = mon - 1;
        tm.tm_mday = mday;
        tm.tm_hour = hour;
        tm.tm_min = min;
        tm.tm_sec = sec;
        tm.tm_isdst = -1;
        if (local)
                t = mktime(&tm);
        else
                t = timegm(&tm);
        if (t == (time_t) -1)
                return -ERANGE;
        /* mktime()/timegm() normalize Feb 31 into March: refuse dates that do not exist. */
        if (tm.tm_mday != mday || tm.tm_mon != mon - 1)
                return -EINVAL;
        if (!local)
                t -= offset;
        if (t < 0)
                return -ERANGE;
        *ret = (uint64_t) t * USEC_PER_SEC + frac * (USEC_PER_SEC / frac_div);
        return 0;
}

static int parse_epoch(const char *s, uint64_t *ret) {
        uint64_t whole = 0, frac = 0, frac_div = 1;

        if (!isdigit((unsigned char) *s))
                return -EINVAL;
        while (isdigit((unsigned char) *s)) {
                if (whole > (UINT64_MAX / USEC_PER_SEC - 9) / 10)
                        return -ERANGE;
                whole = whole * 10 + (uint64_t) (*s++ - '0');
        }
        if (*s == '.') {
                s++;
                if (!isdigit((unsigned char) *s))
                        return -EINVAL;
                while (isdigit((unsigned char) *s)) {
                        if (frac_div < USEC_PER_SEC) {
                                frac = frac * 10 + (uint64_t) (*s - '0');
                                frac_div *= 10;
                        }
                        s++;
                }
        }
        if (*s != '\0')
                return -EINVAL;
        *ret = whole * USEC_PER_SEC + frac * (USEC_PER_SEC / frac_div);
        return 0;
}

int parse_timestamp(const char *s, uint64_t now_usec, uint64_t *ret_usec) {
        char buf[128];
        size_t n;
        uint64_t v, d;
        int r;

        if (!s)
                return -EINVAL;
        while (isspace((unsigned char) *s))
                s++;
        n = strlen(s);
        while (n > 0 && isspace((unsigned char) s[n - 1]))
                n--;
        if (n == 0 || n >= sizeof buf)
                return -EINVAL;
        memcpy(buf, s, n);
        buf[n] = '\0';

        if (streq(buf, "now"))
                v = now_usec, r = 0;
        else if (streq(buf, "today"))
                r = local_midnight(now_usec, 0, &v);
        else if (streq(buf, "yesterday"))
                r = local_midnight(now_usec, -1, &v);
        else if (streq(buf, "tomorrow"))
                r = local_midnight(now_usec, +1, &v);
        else if (buf[0] == '@')
                r = parse_epoch(buf + 1, &v);
        else if (buf[0] == '-' || buf[0] == '+') {
                r = parse_duration(buf + 1, &d);
                if (r >= 0 && !isdigit((unsigned char) buf[1]))
                        r = -EINVAL;
                if (r >= 0) {
                        if (buf[0] == '-')
                                v = d > now_usec ? 0 : now_usec - d;
                        else if (d > UINT64_MAX - now_usec)
                                r = -ERANGE;
                        else
                                v = now_usec + d;
                }
        } else
                r = parse_absolute(buf, &v);
        if (r < 0)
                return r;
        *ret_usec = v;
        return 0;
}
