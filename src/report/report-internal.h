/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the report's files; not part of its interface. */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "basic/json-writer.h"
#include "report/report-stacks.h"
#include "store/store-slice.h"

/* How much of the log a report carries. */
#define REPORT_LOG_LINES_MAX 20000u
#define REPORT_LOG_LINE_BYTES_MAX 2048u
/* The default selection: at most this much before and after the trigger. */
#define REPORT_DEFAULT_SPAN_USEC (UINT64_C(5) * 1000000)

/* Adds the samples of [from, to] of windows recorded with one event (as the perf-script export
 * keeps them) to s; *ret_event gets that event. Where the tree reaches its bound, the samples of
 * [focus_from, focus_to] (the selection the page opens with) go in first, so that the stacks cut
 * are the ones farthest from the event; focus_from == focus_to: none. */
int report_read_samples(ReportStacks *s, char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns,
                        uint64_t focus_from_perf_ns, uint64_t focus_to_perf_ns, char **ret_event,
                        SliceStats *ret_stats);

/* Writes the page: the template with the styles, the script and the JSON document (a complete
 * object) put in. */
int report_html_write(FILE *out, const char *title, const char *json);

/* The page's files, embedded at build time by embed-assets.py (NUL-terminated). */
extern const char report_asset_html[];
extern const char report_asset_js[];
extern const char report_asset_css[];
