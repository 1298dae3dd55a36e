/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The samples of a report, held compactly and written as the page reads them: folded stacks (the
 * exporters' names, profile-fold.h) become paths in a call tree of interned frame names; each
 * sample keeps its time, CPU and leaf node; baseline stacks (folded lines with counts) go into the
 * same tree. report_stacks_write_json() emits the tables as JSON members, the bulky columns as
 * base64 of unsigned LEB128 varints (docs/bundle-format.md, "report.html"):
 *
 *   "frames":   [name, ...]                          frame names, index = frame id
 *   "nodes":    varints (parent delta, frame id)...  node i (from 1; 0 is the root) has parent
 *                                                    i - delta and names frame id
 *   "stacks":   varints node...                      leaf nodes of the slice, most sampled first
 *   "samples":  varints per CPU, CPUs ascending: cpu, n, then n × (time step, stack index); the
 *               first step counts from t0_us, steps are in units of quantum_us
 *   "baseline": varints (node, count)...
 *   "cut":      {nodes_max, frame_bytes_max, stacks, samples, baseline}: the distinct stacks cut
 *               short to keep the tree within its bounds, and their slice and baseline samples
 *
 * Times are the perf clock in whole microseconds, as `perf script` prints them.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "basic/json-writer.h"
#include "profile/profile-sample.h"

typedef struct ReportStacks ReportStacks;

/* The call tree's bound: past either, a stack that leaves the tree is cut at its last frame in it
 * (its sample keeps its time and CPU) and counted in "cut". A node costs 3 to 7 bytes of page and
 * 50 to 140 of a browser's heap: two million open in about a second. Without a bound, 70 s of 96
 * CPUs running a deep recursion made 60 million, gigabytes here and in the browser. */
#define REPORT_NODES_MAX 2000000u
#define REPORT_FRAME_BYTES_MAX (32u << 20)

ReportStacks *report_stacks_new(void);
/* Other bounds than the defaults above (for the tests). */
void report_stacks_set_limits(ReportStacks *s, size_t nodes_max, size_t frame_bytes_max);
ReportStacks *report_stacks_free(ReportStacks *s);
int report_stacks_add_sample(ReportStacks *s, const Sample *sample);
/* One folded line of the baseline: "comm;root;...;leaf" seen count times. */
int report_stacks_add_baseline(ReportStacks *s, const char *key, uint64_t count);
/* Empties s (its bounds stay). */
int report_stacks_reset(ReportStacks *s);
/* The distinct stacks cut so far. */
uint64_t report_stacks_cut_stacks(const ReportStacks *s);
uint64_t report_stacks_n_samples(const ReportStacks *s);
/* First sample time in perf microseconds; 0 when there is none. */
uint64_t report_stacks_first_us(const ReportStacks *s);
/* Writes the members listed above, plus "t0_us", "quantum_us", "n_samples", "baseline_total". */
int report_stacks_write_json(ReportStacks *s, JsonWriter *w);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(ReportStacks *, report_stacks_free);
