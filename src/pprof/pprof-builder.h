/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Builds a pprof Profile (profile.proto, compiled by protoc-c at build time) from tprof samples and
 * writes it gzipped, as go tool pprof, Pyroscope, Parca and the other profiling backends read it.
 *
 * What the profile holds: sample types samples/count and cpu/nanoseconds (each sample counts 1 and
 * weighs one period, 1e9 / the sampling frequency of its window); one mapping per DSO and build id
 * (Frame.build_id; "" when unknown; kernel frames without a module go to [kernel.kallsyms]), one function per name (the folded frame's, and the raw symbol as its
 * system name when they differ; no source file), one location per (DSO, address, symbol), each
 * interned once; per-sample labels cpu, pid, tid (numbers whose unit is their key:
 * Go's reader drops a 0 without a unit), comm (string), time
 * (number, unit nanoseconds: the sample's UTC time since the epoch, as the caller maps it), plus
 * labels the caller adds to every sample (host, rule, incident). Identical labels are shared between samples, so a sample
 * costs its location ids, its values, a label vector and its time label.
 *
 * Memory grows with the samples (about 250 bytes plus 8 per frame each): at most
 * PPROF_SAMPLES_MAX samples are taken, then pprof_builder_add_sample() returns -EFBIG.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile-sample.h"

#define PPROF_SAMPLES_MAX 2000000U
#define PPROF_LABELS_MAX 16U
#define PPROF_COMMENTS_MAX 64U

typedef struct PprofBuilder PprofBuilder;

/* A label: a string one when str is set, else a number with an optional unit. */
typedef struct PprofLabel {
        const char *key;
        const char *str;
        int64_t num;
        const char *num_unit;
} PprofLabel;

/* period_ns: the profile's period, and the weight of each sample unless said otherwise below. */
int pprof_builder_new(uint64_t period_ns, PprofBuilder **ret);
PprofBuilder *pprof_builder_free(PprofBuilder *b);

/* Labels added to every sample from now on (copied); at most PPROF_LABELS_MAX - 5. */
int pprof_builder_set_common_labels(PprofBuilder *b, const PprofLabel *labels, size_t n);
int pprof_builder_add_comment(PprofBuilder *b, const char *text);
void pprof_builder_set_time(PprofBuilder *b, int64_t time_nanos, int64_t duration_nanos);
/* The CPU time the samples added from now on weigh (0: the profile's period): samples from windows
 * taken at another frequency than the profile's period says. */
void pprof_builder_set_sample_period(PprofBuilder *b, uint64_t period_ns);

/*
 * time_ns: the value of the sample's time label (UTC nanoseconds since the epoch). extra: labels of
 * this sample alone, interned and shared like the others (the place for attribution such as
 * service and container, derived by the exporter from the sample's cgroup); at most
 * PPROF_LABELS_MAX - 5 together with the common labels, else -E2BIG.
 */
int pprof_builder_add_sample(PprofBuilder *b, const Sample *s, int64_t time_ns, const PprofLabel *extra,
                             size_t n_extra);

typedef struct PprofBuilderStats {
        size_t samples, locations, functions, mappings, strings, labels;
} PprofBuilderStats;

void pprof_builder_get_stats(const PprofBuilder *b, PprofBuilderStats *ret);

/* The encoded Profile, gzipped (gzip) or not; the bytes are the caller's to free. */
int pprof_builder_encode(PprofBuilder *b, bool gzip, uint8_t **ret, size_t *ret_size);
/* Writes the gzipped Profile to out, streaming through zlib. */
int pprof_builder_write(PprofBuilder *b, FILE *out);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(PprofBuilder *, pprof_builder_free);
