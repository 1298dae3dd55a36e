/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names and limits of the incident bundle format (docs/bundle-format.md), shared by the writer in
 * tprofd and the readers in tprof-bundle, so the two cannot drift apart.
 */
#pragma once

#include <errno.h>
#include <stdint.h>

#define BUNDLE_FORMAT_VERSION 1

#define BUNDLE_MANIFEST "manifest.json"
#define BUNDLE_LOG_TEXT "log.txt"
#define BUNDLE_LOG_JSON "log.jsonl"
#define BUNDLE_FOLDED "stacks.folded"
#define BUNDLE_PERF_SCRIPT "stacks.perf-script"
/* A slice with more samples gets no stacks.perf-script when the bundle is written (about 330
 * bytes of text per sample, 16 MB here; a 96-CPU host passes it in under a minute at 97 Hz):
 * `tprof-bundle export ID --format perf-script` makes the same text from windows/ on demand. */
#define BUNDLE_PERF_SCRIPT_SAMPLES_MAX 50000U
#define BUNDLE_BASELINE_FOLDED "baseline.folded"
#define BUNDLE_ACTIVITY "activity.tsv"
/* The samples of the seconds right around the event, [t - BUNDLE_NEAR_EVENT_NS, t +
 * BUNDLE_NEAR_EVENT_NS] within the slice: what the event's own seconds looked like, the view a
 * person zooms to in a heatmap; show compares it with the rest of the slice and the baseline. */
#define BUNDLE_NEAR_EVENT_FOLDED "event.folded"
#define BUNDLE_NEAR_EVENT_NS (UINT64_C(5) * UINT64_C(1000000000))

/* The range event.folded covers, [*ret_from, *ret_to], for an event at t in the slice [from, to]
 * (all on one clock): the writer cuts it so, readers say so. */
static inline void bundle_near_event_range(uint64_t t, uint64_t from, uint64_t to, uint64_t *ret_from,
                                           uint64_t *ret_to) {
        uint64_t a = t > BUNDLE_NEAR_EVENT_NS ? t - BUNDLE_NEAR_EVENT_NS : 0, b = t + BUNDLE_NEAR_EVENT_NS;

        *ret_from = a > from ? a : from;
        *ret_to = b < to ? b : to;
}
#define BUNDLE_REPORT "report.html"
#define BUNDLE_WINDOWS_DIR "windows"
#define BUNDLE_PENDING "pending"
#define BUNDLE_TMP_PREFIX ".tmp-"
#define BUNDLE_CPU_FOLDED_FMT "cpu%u.folded"
#define BUNDLE_CPU_BASELINE_FOLDED_FMT "cpu%u-baseline.folded"

/* A bundle is a directory with one level below it (windows/); deeper trees are not ours. */
#define BUNDLE_DEPTH_MAX 4U

#define BUNDLE_DIR_MODE 0750
#define BUNDLE_FILE_MODE 0640

/* The manifest's "threads" list holds at most this many names (those with most samples), and
 * its readers take a list this long as full: names it had no room for may be a group's threads. */
#define BUNDLE_THREADS_LISTED_MAX 64U

/* Largest manifest a reader accepts; real ones are a few KiB. */
#define BUNDLE_MANIFEST_BYTES_MAX (UINT64_C(1) << 20)
#define BUNDLE_SHORT_ID_LEN 8

typedef enum BundleStatus {
        BUNDLE_COMPLETE,
        BUNDLE_PARTIAL,
        BUNDLE_NO_COVERAGE,
        BUNDLE_PENDING_STATUS,
        _BUNDLE_STATUS_MAX,
        _BUNDLE_STATUS_INVALID = -EINVAL,
} BundleStatus;

static inline const char *bundle_status_to_string(BundleStatus s) {
        static const char *const table[_BUNDLE_STATUS_MAX] = {
                [BUNDLE_COMPLETE] = "complete",
                [BUNDLE_PARTIAL] = "partial",
                [BUNDLE_NO_COVERAGE] = "no-coverage",
                [BUNDLE_PENDING_STATUS] = "pending",
        };
        return s >= 0 && s < _BUNDLE_STATUS_MAX ? table[s] : NULL;
}
