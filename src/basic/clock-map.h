/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The measured mapping between perf's clock (local_clock, what samples and kmsg records are
 * stamped with), CLOCK_MONOTONIC (journal entries) and CLOCK_REALTIME (what people type and read).
 * docs/design.md, "Time": the sampler measures it by bracketing a perf record it causes itself between two
 * clock_gettime() calls; error_ns is half the bracket. Until a measurement exists the map assumes
 * perf clock == CLOCK_MONOTONIC (true on most x86 machines to within milliseconds after boot, but
 * not guaranteed) and says so in method.
 */
#pragma once

#include <stdint.h>

typedef enum ClockMapMethod {
        CLOCK_MAP_ASSUMED,       /* no measurement: perf clock taken as CLOCK_MONOTONIC */
        CLOCK_MAP_PERF_BRACKET,  /* a self-caused perf record bracketed by clock_gettime() */
        CLOCK_MAP_RECORDED,      /* read back from a window or bundle */
        _CLOCK_MAP_METHOD_MAX,
        _CLOCK_MAP_METHOD_INVALID = -22,
} ClockMapMethod;

typedef struct ClockMap {
        ClockMapMethod method;
        int64_t perf_minus_mono_ns;     /* perf clock - CLOCK_MONOTONIC */
        int64_t realtime_minus_mono_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
        uint64_t error_ns;              /* estimated error of perf<->monotonic */
        uint64_t measured_mono_ns;      /* when it was measured, CLOCK_MONOTONIC */
} ClockMap;

const char *clock_map_method_to_string(ClockMapMethod m);
ClockMapMethod clock_map_method_from_string(const char *s);

/* Fills an ASSUMED map from the current clocks. */
void clock_map_assume(ClockMap *ret);

uint64_t clock_map_perf_to_mono(const ClockMap *m, uint64_t perf_ns);
uint64_t clock_map_mono_to_perf(const ClockMap *m, uint64_t mono_ns);
uint64_t clock_map_perf_to_realtime(const ClockMap *m, uint64_t perf_ns);
uint64_t clock_map_realtime_to_perf(const ClockMap *m, uint64_t realtime_ns);
