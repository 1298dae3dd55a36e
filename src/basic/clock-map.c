/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conversions through a ClockMap; see clock-map.h. Conversions saturate at 0 and UINT64_MAX rather than wrap.
 */
#include <string.h>
#include <time.h>

#include "basic/clock-map.h"
#include "basic/macro.h"
#include "basic/time-util.h"

static const char *const method_table[_CLOCK_MAP_METHOD_MAX] = {
        [CLOCK_MAP_ASSUMED] = "assumed-monotonic",
        [CLOCK_MAP_PERF_BRACKET] = "perf-bracket",
        [CLOCK_MAP_RECORDED] = "recorded",
};

const char *clock_map_method_to_string(ClockMapMethod m) {
        if (m < 0 || m >= _CLOCK_MAP_METHOD_MAX)
                return NULL;
        return method_table[m];
}

ClockMapMethod clock_map_method_from_string(const char *s) {
        for (int i = 0; i < _CLOCK_MAP_METHOD_MAX; i++)
                if (s && streq(s, method_table[i]))
                        return (ClockMapMethod) i;
        return _CLOCK_MAP_METHOD_INVALID;
}

void clock_map_assume(ClockMap *ret) {
        uint64_t mono = now_nsec(CLOCK_MONOTONIC), real = now_nsec(CLOCK_REALTIME);

        *ret = (ClockMap) {
                .method = CLOCK_MAP_ASSUMED,
                .perf_minus_mono_ns = 0,
                .realtime_minus_mono_ns = (int64_t) (real - mono),
                .error_ns = 0,
                .measured_mono_ns = mono,
        };
}

/* |delta| as unsigned, also for INT64_MIN (whose negation does not fit int64_t). */
static uint64_t magnitude(int64_t delta) {
        return delta >= 0 ? (uint64_t) delta : (uint64_t) -(delta + 1) + 1;
}

/* t + delta and t - delta, clamped to [0, UINT64_MAX]: times and offsets may come from files
 * (window headers, recorded kmsg), so any value must be safe, not only plausible ones. */
static uint64_t add_saturating(uint64_t t, int64_t delta) {
        uint64_t d = magnitude(delta);

        if (delta < 0)
                return d > t ? 0 : t - d;
        return d > UINT64_MAX - t ? UINT64_MAX : t + d;
}

static uint64_t sub_saturating(uint64_t t, int64_t delta) {
        uint64_t d = magnitude(delta);

        if (delta >= 0)
                return d > t ? 0 : t - d;
        return d > UINT64_MAX - t ? UINT64_MAX : t + d;
}

uint64_t clock_map_perf_to_mono(const ClockMap *m, uint64_t perf_ns) {
        return sub_saturating(perf_ns, m->perf_minus_mono_ns);
}

uint64_t clock_map_mono_to_perf(const ClockMap *m, uint64_t mono_ns) {
        return add_saturating(mono_ns, m->perf_minus_mono_ns);
}

uint64_t clock_map_perf_to_realtime(const ClockMap *m, uint64_t perf_ns) {
        return add_saturating(clock_map_perf_to_mono(m, perf_ns), m->realtime_minus_mono_ns);
}

uint64_t clock_map_realtime_to_perf(const ClockMap *m, uint64_t realtime_ns) {
        return clock_map_mono_to_perf(m, sub_saturating(realtime_ns, m->realtime_minus_mono_ns));
}
