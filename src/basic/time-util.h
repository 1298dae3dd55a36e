/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Clocks and durations. Sample and event times stay in perf's nanoseconds (t_ns); durations in
 * configuration are microseconds (usec). parse_duration() accepts what rules.yaml and the command
 * lines take: "500ms", "90s", "5m", "1h", "1m30s", a bare number meaning seconds.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define NSEC_PER_USEC UINT64_C(1000)
#define NSEC_PER_MSEC UINT64_C(1000000)
#define NSEC_PER_SEC UINT64_C(1000000000)
#define USEC_PER_MSEC UINT64_C(1000)
#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MINUTE (UINT64_C(60) * USEC_PER_SEC)
#define USEC_PER_HOUR (UINT64_C(60) * USEC_PER_MINUTE)
#define USEC_PER_DAY (UINT64_C(24) * USEC_PER_HOUR)
#define USEC_INFINITY UINT64_MAX

uint64_t now_nsec(clockid_t clock);
uint64_t now_usec(clockid_t clock);
/* At most once per interval: true, and *last_usec set to now, when *last_usec is 0 (never) or at
 * least interval_usec of CLOCK_MONOTONIC ago; else false. */
bool monotonic_interval_passed(uint64_t *last_usec, uint64_t interval_usec);
uint64_t timespec_to_nsec(const struct timespec *ts);

/* Parses a duration into microseconds. Returns -EINVAL on syntax, -ERANGE on overflow. */
int parse_duration(const char *s, uint64_t *ret_usec);

/* Formats a duration compactly ("1h30m", "90s", "250ms"); buf must hold FORMAT_TIMESPAN_MAX. */
#define FORMAT_TIMESPAN_MAX 64
const char *format_timespan(char *buf, size_t l, uint64_t usec);
#define FORMAT_TIMESPAN(usec) format_timespan((char[FORMAT_TIMESPAN_MAX]) {}, FORMAT_TIMESPAN_MAX, (usec))

/* Formats CLOCK_REALTIME microseconds as "2026-11-21T14:30:00.123456Z" (UTC) or local time. */
#define FORMAT_TIMESTAMP_MAX 64
const char *format_timestamp_utc(char *buf, size_t l, uint64_t realtime_usec);
const char *format_timestamp_local(char *buf, size_t l, uint64_t realtime_usec);
