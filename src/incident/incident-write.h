/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Turning an incident into a bundle on disk (docs/bundle-format.md).
 *
 * Protocol: incident_stage() makes incidents/.tmp-<id>/ with windows/ and a `pending` manifest as
 * soon as the match happens (the caller then links the windows to pin them). When t + after has
 * been flushed, the caller feeds every sample of the pinned windows to an IncidentSink (it sorts
 * them into the slice, the baseline, per-second activity and, when the rule captured `cpu`, that
 * CPU's own slice and baseline), then incident_publish() writes the files, fsyncs them and renames
 * the directory into place. incident_discard() removes a staged directory, releasing its pins.
 */
#pragma once

#include <stdio.h>

#include "incident/incident.h"
#include "profile/profile-sample.h"

typedef struct IncidentSink IncidentSink;

int incident_sink_new(const Incident *i, IncidentSink **ret);
IncidentSink *incident_sink_free(IncidentSink *k);
int incident_sink_add(IncidentSink *k, const Sample *s);
void incident_sink_add_lost(IncidentSink *k, uint64_t n);
/* The slice's counts; its cgroups and threads point into the sink (valid while it lives, or until taken). */
void incident_sink_get_slice(const IncidentSink *k, IncidentSlice *ret);
/* Hands the sink's cgroup counts to the caller, to keep them for manifest rewrites. */
struct IncidentCgroups *incident_sink_take_cgroups(IncidentSink *k);
/* The same for the processes of its named threads. */
struct IncidentThreads *incident_sink_take_threads(IncidentSink *k);

/* Creates incidents/.tmp-<id>/windows and the pending manifest; returns an fd of the .tmp dir. */
int incident_stage(int incidents_fd, const Incident *i, const IncidentHost *h, const IncidentProfile *p,
                   int *ret_dir_fd);

/* Writes the staged folder's pending manifest anew with the incident as it is now (its repeats), so
 * that a later run resuming it finds them: a temporary file, synced and renamed over the old one;
 * a crash leaves one or the other. Not while a bundle is being written from the folder. */
int incident_restage(int dir_fd, const Incident *i, const IncidentHost *h, const IncidentProfile *p);

/* One log line of the bundle; trigger marks the triggering record and its repeats. */
typedef struct IncidentLogLine {
        const LogRecord *rec;
        bool trigger;
} IncidentLogLine;

/* Writes the perf-script file of the slice on out. With out NULL (a slice of more than
 * BUNDLE_PERF_SCRIPT_SAMPLES_MAX samples, which gets no perf-script file) it only counts what the
 * perf-script pass counts besides the text: the samples lost inside the slice. */
typedef int (*IncidentPerfScriptWriter)(FILE *out, void *userdata);

int incident_publish(int incidents_fd, int dir_fd, const Incident *i, IncidentSink *k, const IncidentHost *h,
                     const IncidentProfile *p, char *const *windows, size_t n_windows,
                     const IncidentLogLine *lines, size_t n_lines, IncidentPerfScriptWriter perf_script,
                     void *userdata);

/* Lists windows/ of the staged bundle id (dir_fd): the names for the manifest and the paths to read,
 * sorted (window names start with their UTC start time), as NULL-terminated vectors. */
int incident_list_windows(int dir_fd, const char *id, const char *incidents_path, char ***ret_names,
                          char ***ret_paths, size_t *ret_n);

int incident_discard(int incidents_fd, const Incident *i);

/* Formats one log line as log.txt and log.jsonl want it (no trailing newline). */
int incident_log_text_line(const IncidentLogLine *l, const ClockMap *m, char **ret);
int incident_log_json_line(const IncidentLogLine *l, const ClockMap *m, char **ret);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(IncidentSink *, incident_sink_free);
