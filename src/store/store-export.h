/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Exporters of a range of the ring: folded stacks (stackcollapse-perf.pl's format, counting
 * samples, built by profile-fold.h's Folder) and `perf script` text that Flamescope,
 * stackcollapse-perf.pl and speedscope load unmodified (VIEWERS.md). Names go through
 * profile-names.h in both, so folding the perf-script export with stackcollapse-perf.pl gives the
 * folded export byte for byte.
 *
 * perf-script details: one event name per file (samples of windows recorded with another event
 * are skipped and counted), samples in time order, the PERIOD column is the recorded period (1
 * when unknown), and when the last sample's timestamp would print as a whole second
 * ("12.000000", which Flamescope rejects) it is printed one microsecond later.
 */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "store/store-slice.h"

typedef struct ExportStats {
        SliceStats slice;
        uint64_t skipped_other_event; /* perf-script: samples of another event */
} ExportStats;

void export_stats_done(ExportStats *s);

/* Both return -ENODATA when the range holds no sample (nothing is written then). */
int export_folded(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, FILE *out,
                  ExportStats *ret_stats);
/*
 * The windows of paths recorded with one event (event, or NULL for the first window's; "cpu-clock"
 * when a window names none), as the perf-script export keeps them: *ret_keep points into paths,
 * *ret_event is that event, *ret_skipped (may be NULL) an upper bound of the samples left out.
 */
int export_select_event(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, const char *event,
                        char ***ret_keep, size_t *ret_n_keep, char **ret_event, uint64_t *ret_skipped);

/*
 * event NULL means the first window's event. Fewer than two samples cannot be loaded by
 * Flamescope; a single sample is still written (ret_stats says how many) and the caller warns.
 */
int export_perf_script(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, const char *event,
                       FILE *out, ExportStats *ret_stats);
