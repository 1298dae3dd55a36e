/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Clock reads, duration parsing and timestamp formatting; see time-util.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "basic/macro.h"
#include "basic/time-util.h"

uint64_t timespec_to_nsec(const struct timespec *ts) {
        return (uint64_t) ts->tv_sec * NSEC_PER_SEC + (uint64_t) ts->tv_nsec;
}

uint64_t now_nsec(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return timespec_to_nsec(&ts);
}

uint64_t now_usec(clockid_t clock) {
        return now_nsec(clock) / NSEC_PER_USEC;
}

bool monotonic_interval_passed(uint64_t *last_usec, uint64_t interval_usec) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (*last_usec != 0 && now - *last_usec < interval_usec)
                return false;
        *last_usec = now;
        return true;
}

static const struct {
        const char *suffix;
        uint64_t usec;
} units[] = {
        /* Longest suffix first so "ms" is not read as "m" followed by garbage. */
        { "usec", 1 },
        { "msec", USEC_PER_MSEC },
        { "sec", USEC_PER_SEC },
        { "min", USEC_PER_MINUTE },
        { "us", 1 },
        { "ms", USEC_PER_MSEC },
        { "s", USEC_PER_SEC },
        { "m", USEC_PER_MINUTE },
        { "h", USEC_PER_HOUR },
        { "d", USEC_PER_DAY },
};

int parse_duration(const char *s, uint64_t *ret_usec) {
        uint64_t total = 0;
        bool any = false;

        if (!s)
                return -EINVAL;
        while (isspace((unsigned char) *s))
                s++;
        if (*s == '\0')
                return -EINVAL;

        while (*s != '\0') {
                uint64_t whole = 0, frac = 0, frac_div = 1, unit = 0;
                bool digits = false;

                while (isdigit((unsigned char) *s)) {
                        if (whole > (UINT64_MAX - 9) / 10)
                                return -ERANGE;
                        whole = whole * 10 + (uint64_t) (*s - '0');
                        digits = true;
                        s++;
                }
                if (*s == '.') {
                        s++;
                        while (isdigit((unsigned char) *s)) {
                                if (frac_div < UINT64_C(1000000000)) {
                                        frac = frac * 10 + (uint64_t) (*s - '0');
                                        frac_div *= 10;
                                }
                                digits = true;
                                s++;
                        }
                }
                if (!digits)
                        return -EINVAL;

                if (*s == '\0' || isspace((unsigned char) *s)) {
                        /* A bare number means seconds, but only as the whole string. */
                        if (any)
                                return -EINVAL;
                        unit = USEC_PER_SEC;
                } else {
                        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                                size_t n = strlen(units[i].suffix);
                                if (strneq(s, units[i].suffix, n) && !isalpha((unsigned char) s[n])) {
                                        unit = units[i].usec;
                                        s += n;
                                        break;
                                }
                        }
                        if (unit == 0)
                                return -EINVAL;
                }

                if (whole > UINT64_MAX / unit)
                        return -ERANGE;
                uint64_t v = whole * unit + frac * unit / frac_div;
                if (v > UINT64_MAX - total)
                        return -ERANGE;
                total += v;
                any = true;
                while (isspace((unsigned char) *s))
                        s++;
        }

        *ret_usec = total;
        return 0;
}

const char *format_timespan(char *buf, size_t l, uint64_t usec) {
        static const struct {
                const char *suffix;
                uint64_t usec;
        } parts[] = {
                { "d", USEC_PER_DAY }, { "h", USEC_PER_HOUR }, { "m", USEC_PER_MINUTE },
                { "s", USEC_PER_SEC }, { "ms", USEC_PER_MSEC }, { "us", 1 },
        };
        size_t n = 0;

        if (usec == USEC_INFINITY) {
                snprintf(buf, l, "infinity");
                return buf;
        }
        if (usec == 0) {
                snprintf(buf, l, "0");
                return buf;
        }
        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(parts) && usec > 0; i++) {
                uint64_t k = usec / parts[i].usec;
                if (k == 0)
                        continue;
                int w = snprintf(buf + n, l - n, "%llu%s", (unsigned long long) k, parts[i].suffix);
                if (w < 0 || (size_t) w >= l - n)
                        break;
                n += (size_t) w;
                usec -= k * parts[i].usec;
        }
        return buf;
}

static const char *format_timestamp(char *buf, size_t l, uint64_t realtime_usec, bool utc) {
        time_t sec = (time_t) (realtime_usec / USEC_PER_SEC);
        struct tm tm;
        char tmp[48];

        if (!(utc ? gmtime_r(&sec, &tm) : localtime_r(&sec, &tm))) {
                snprintf(buf, l, "n/a");
                return buf;
        }
        strftime(tmp, sizeof tmp, "%Y-%m-%dT%H:%M:%S", &tm);
        if (utc)
                snprintf(buf, l, "%s.%06lluZ", tmp, (unsigned long long) (realtime_usec % USEC_PER_SEC));
        else {
                char zone[16];
                strftime(zone, sizeof zone, "%z", &tm);
                snprintf(buf, l, "%s.%06llu%s", tmp, (unsigned long long) (realtime_usec % USEC_PER_SEC),
                         zone);
        }
        return buf;
}

const char *format_timestamp_utc(char *buf, size_t l, uint64_t realtime_usec) {
        return format_timestamp(buf, l, realtime_usec, true);
}

const char *format_timestamp_local(char *buf, size_t l, uint64_t realtime_usec) {
        return format_timestamp(buf, l, realtime_usec, false);
}
