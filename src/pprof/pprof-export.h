/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pprof export of a range of windows (a ring range, a bundle's slice or its baseline): reads the
 * samples with slice_read() and writes one gzipped Profile (pprof-builder.h). Each sample weighs
 * 1e9 / the sampling frequency of its window (a daemon restarted with another frequency wrote the
 * windows before), the profile's period is the newest window's; time_nanos and duration_nanos are the range, mapped to UTC
 * through the clock mapping of the newest window, the duration without the part left out (a
 * baseline's slice); every sample's time label is its UTC time.
 *
 * The caller describes the profile (host, rule, incident id, trigger line) in PprofMeta: the
 * non-NULL ones become labels on every sample (host, rule, incident) and comments.
 */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "store/store-export.h"

typedef struct PprofMeta {
        const char *host;        /* label "host" */
        const char *rule;        /* label "rule" */
        const char *incident;    /* label "incident": the bundle id */
        const char *kind;        /* label "slice": "incident", "baseline" or "range" */
        const char *comments[8]; /* free text, NULL-terminated if shorter */
        /* Samples inside [exclude_from_ns, exclude_to_ns] are left out (a baseline around its slice);
         * both 0 to keep all. */
        uint64_t exclude_from_ns, exclude_to_ns;
} PprofMeta;

/* Returns -ENODATA when the range holds no sample (nothing is written then), -EFBIG when it holds
 * more than PPROF_SAMPLES_MAX. */
int export_pprof(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, const PprofMeta *meta,
                 FILE *out, ExportStats *ret_stats);
