/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading incident bundles (docs/bundle-format.md) without trusting them: listing the bundles of a
 * state directory (complete ones and `.tmp-*` pending ones), parsing manifest.json into a typed
 * struct, matching bundles against FIELD=VALUE filters and resolving an id or a unique prefix of
 * an id or short id. A bundle whose manifest cannot be read stays in the list, marked corrupt
 * with the error, so the CLI can say so instead of hiding it. Strings in a manifest are returned
 * as found: callers escape them before they reach a terminal. The module does not log.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "basic/json-reader.h"
#include "bundle/bundle-format.h"

#define BUNDLE_LIST_MAX 100000u

typedef struct BundleManifest {
        JsonValue *json; /* the whole document: unknown fields, FIELD=VALUE matching */

        /* Pointers below point into json; NULL or 0 when absent or of the wrong type. */
        uint64_t format;
        const char *id, *short_id, *status, *tprof_version, *created_utc, *host, *boot_id, *kernel_release;
        const char *rule_name, *rule_description, *rule_match, *rule_severity, *rule_source;
        uint64_t rule_before_usec, rule_after_usec, rule_cooldown_usec;

        uint64_t event_t_perf_ns, event_realtime_usec;
        bool has_event_perf_ns, has_event_realtime;
        const char *event_utc, *event_source, *event_message, *event_unit, *event_comm;
        int64_t event_priority; /* -1 when absent */
        const JsonValue *event_captures; /* object or NULL */
        const char *alignment_method, *alignment_clock_map;
        uint64_t alignment_error_ns;
        bool has_alignment_error;

        const char *rule_group;
        uint64_t repeats, last_repeat_perf_ns;
        const JsonValue *joined_rules; /* object of rule name: matches, or NULL */
        const char *note;
        /* tprofd was stopped without warning while it recorded the slice, and a later start finished
         * the bundle (`interrupted`); when that start took it up, NULL when not known. */
        bool interrupted;
        const char *interrupted_resumed_utc;
        const char *profile_event;
        uint64_t profile_freq_hz, profile_n_cpus;

        uint64_t slice_from_perf_ns, slice_to_perf_ns, slice_samples, slice_lost;
        uint64_t slice_near_samples; /* of slice_samples, the event's own seconds'; 0 in bundles written before */
        uint64_t slice_covered_from_perf_ns, slice_covered_to_perf_ns;
        bool has_slice;
        uint64_t baseline_from_perf_ns, baseline_to_perf_ns, baseline_samples;
        bool has_baseline;
        size_t n_windows;
} BundleManifest;

/* Parses a manifest. Returns 0, -EBADMSG/-ELOOP/-ERANGE with *reterr_offset, -EPROTO when it is
 * of a newer format, -EUCLEAN when the document is JSON but not an object or has a field of the
 * wrong type (a count that is text), -ENOMEM. Every field may be absent. */
int bundle_manifest_parse(const char *text, size_t size, BundleManifest **ret, size_t *reterr_offset);
/* Reads and parses path (at most BUNDLE_MANIFEST_BYTES_MAX bytes). */
int bundle_manifest_load(const char *path, BundleManifest **ret, size_t *reterr_offset);
BundleManifest *bundle_manifest_free(BundleManifest *m);

/* The capture named cpu as a CPU number; false when there is none or it is not a number. */
bool bundle_manifest_capture_cpu(const BundleManifest *m, unsigned *ret_cpu);

/* The CPUs the samples of the slice, the baseline, the event's own seconds and the rest of the
 * bundle stand for (bundle-analyze.h, SampledCpus), from their totals as read and the seconds the
 * manifest gives them, each at most the host's CPUs; 0 where the manifest does not say. */
struct SampledCpus;
void bundle_sampled_cpus(const BundleManifest *m, uint64_t slice, uint64_t baseline, uint64_t near, uint64_t rest,
                         struct SampledCpus *ret);

typedef enum BundleEntryState {
        BUNDLE_ENTRY_COMPLETE,
        BUNDLE_ENTRY_PARTIAL,
        BUNDLE_ENTRY_NO_COVERAGE,
        BUNDLE_ENTRY_PENDING,
        BUNDLE_ENTRY_CORRUPT, /* manifest missing, unreadable or invalid */
        _BUNDLE_ENTRY_STATE_MAX,
        _BUNDLE_ENTRY_STATE_INVALID = -EINVAL,
} BundleEntryState;

const char *bundle_entry_state_to_string(BundleEntryState s);

typedef struct BundleEntry {
        char *id;      /* the directory name without any ".tmp-" prefix */
        char *dirname; /* the name on disk */
        char *path;    /* state_dir/incidents/dirname */
        char short_id[BUNDLE_SHORT_ID_LEN + 1]; /* "" when the name has none */
        char *rule;    /* from the manifest, else from the name */
        BundleEntryState state;
        BundleManifest *manifest; /* NULL when corrupt */
        int manifest_error;       /* < 0 when corrupt */
        size_t manifest_error_offset;
        uint64_t realtime_usec;   /* event time (manifest, else the name), 0 if unknown */
        uint64_t bytes;           /* regular files of the bundle itself, windows/ excluded */
        uint64_t windows_bytes;   /* files under windows/ (hard links shared with the ring) */
        size_t n_windows;
} BundleEntry;

typedef struct BundleList {
        BundleEntry *entries; /* oldest first, ties broken by id */
        size_t n, allocated;
} BundleList;

#define BUNDLE_LIST_NULL ((BundleList) {})

/* Loads every bundle under state_dir/incidents. A missing incidents directory is an empty list. */
int bundle_list_load(const char *state_dir, BundleList *ret);
void bundle_list_done(BundleList *l);

/*
 * Whether the entry matches one filter: a bare word is a rule name; FIELD=VALUE compares VALUE with
 * the scalar FIELD of the manifest, looked up as a dotted path ("event.priority"), then at the top
 * level, under "event", under "event.captures" and under "rule"; "rule", "status", "id" and
 * "short_id" also work for corrupt bundles. Returns true on a match.
 */
bool bundle_entry_matches(const BundleEntry *e, const char *filter);
/* Whether FIELD of a FIELD=VALUE filter is one e has (a manifest field in any of the scopes
 * bundle_entry_matches() looks in, or one of its own), whatever its value. */
bool bundle_entry_has_field(const BundleEntry *e, const char *field);

/*
 * Finds the bundle named by query: its id, or a unique prefix of an id or of a short id. Returns
 * the index, -ENOENT when nothing matches, or -ENOTUNIQ when several do; then, if ret_candidates
 * is not NULL, it gets a malloc'ed array of their indices and *ret_n_candidates their number.
 */
int bundle_list_resolve(const BundleList *l, const char *query, size_t **ret_candidates,
                        size_t *ret_n_candidates);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(BundleManifest *, bundle_manifest_free);
static inline void bundle_list_donep(BundleList *l) {
        bundle_list_done(l);
}
