/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * report.html: one self-contained page (data, script and styles inline, no network request) that
 * shows a bundle or a range of the ring the way Flamescope does — a sub-second heatmap, per-CPU
 * lanes, the log lines on the time axis, the flame graph of any selection, the differential view
 * against the baseline and the unusual ranking `tprof-bundle show` prints. It is generated from the
 * bundle's own files through the same readers the CLI uses (bundle-read, bundle-analyze, the ring
 * slicer and the fold names), so show, export and the report agree. The page's template, script and
 * styles are src/report/report.{html.in,js,css}, embedded at build time. No logging.
 */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "bundle/bundle-unreadable.h"

/* The report of the bundle in directory dir (manifest.json, log.jsonl, stacks.folded,
 * baseline.folded, windows/). -ENOENT/-EPROTO/... when the manifest cannot be read. The files that
 * are there but cannot be read are left out and, unless ret_unreadable is NULL, added to it; a
 * damaged window is not one of them, the page says it. */
int report_write_bundle(const char *dir, FILE *out, BundleUnreadable *ret_unreadable);

/* The report of [from_perf_ns, to_perf_ns] of the given windows (one boot), with no log and no
 * baseline; -ENODATA when the range holds no sample (nothing is written then). */
int report_write_range(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, FILE *out);

/* Writes the report of a bundle as dir/report.html (through a temporary file, mode 0640, synced). */
int report_write_bundle_file(const char *dir, const char *name);
