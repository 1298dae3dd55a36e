/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsing the times people type after --since and --until, in the spirit of journalctl, into
 * CLOCK_REALTIME microseconds. Accepted:
 *
 *   now                              the now passed in
 *   today, yesterday, tomorrow       local midnight of that day
 *   -1h, +5m, -2d3h, -90s            now plus or minus a duration (parse_duration() units)
 *   2026-11-21                       local midnight of that date
 *   2026-11-21 14:30                 local time, seconds 0 ('T' may replace the blank)
 *   2026-11-21 14:30:00[.frac]       local time
 *   ...Z, ... UTC                    the same in UTC
 *   ...+01:00, ...-0530              the same at that offset from UTC
 *   @1795271400[.5]                  seconds since the epoch
 *
 * Local time follows TZ and the system's zone rules (mktime() decides DST). Leading and trailing
 * blanks are ignored. Returns 0, -EINVAL on syntax or an impossible date, -ERANGE on overflow.
 */
#pragma once

#include <stdint.h>

int parse_timestamp(const char *s, uint64_t now_usec, uint64_t *ret_usec);
