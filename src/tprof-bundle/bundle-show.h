/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What tprof-bundle show loads from a bundle, shared by its text output (bundle-show.c) and its
 * JSON output (bundle-show-json.c), so both show the same content.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bundle/bundle-activity.h"
#include "bundle/bundle-analyze.h"
#include "bundle/bundle-cgroups.h"
#include "bundle/bundle-oom.h"
#include "bundle/bundle-read.h"
#include "bundle/bundle-unreadable.h"

#define LOG_CONTEXT_LINES 10
#define LOG_LINES_MAX 200000u
#define LOG_LINE_BYTES_MAX (64u * 1024u)
#define TOP_STACKS 5
#define TOP_FUNCTIONS 8
#define TOP_RISES 5
/* A baseline of fewer seconds of samples than this is said to be short. */
#define SHOW_BASELINE_SHORT_S 10u
/* Fewer baseline samples than this cannot show a rise of a few percent at z >= 3 at all. */
#define SHOW_BASELINE_SAMPLES_MIN ANSWER_BASELINE_SAMPLES_MIN
#define STACK_FRAMES_SHOWN 5
#define HEATMAP_ROWS_MAX 16
#define TOP_SERVICES 5

typedef struct LogLine {
        uint64_t realtime_usec, perf_ns;
        bool has_realtime, has_perf;
        char *source;
        int64_t priority;
        char *message;
        size_t message_len;
        bool trigger;
        bool kernel; /* the kernel's line (log.jsonl's kernel_origin) */
        char *who; /* journal entries: "unit comm[pid]", each part when known; else NULL */
} LogLine;

typedef struct Show {
        const BundleEntry *entry;
        const BundleManifest *m;
        bool color, utf8;
        unsigned columns; /* 0: not cut */

        LogLine *log;
        size_t n_log, log_allocated, log_skipped;
        size_t log_first, log_end, trigger; /* shown range [first, end) and the trigger's index */
        int log_error;
        bool log_from_text; /* log.jsonl missing: the lines of log.txt, as written */
        OomVictim victim;   /* the task the OOM kill the event opened killed, from log.jsonl */

        Activity activity;
        int activity_error;
        unsigned n_seconds, event_second;
        bool has_event_second;
        /* CPUs that delivered under half their samples over the seconds the slice covers whole */
#define SHOW_SHORTFALLS_MAX 8U
        CpuShortfall shortfalls[SHOW_SHORTFALLS_MAX];
        size_t n_shortfalls;

        Folded slice, baseline;
        int slice_error, baseline_error;
        /* The slice as it is ranked: its grouped threads as one (bundle_threads_grouped()), where
         * the manifest groups any; the top stacks are slice's, as sampled. The baseline, near and
         * the captured CPU's are ranked only, and grouped in place. */
        Folded slice_grouped;
        bool grouped;
        FunctionStat *functions;
        size_t n_functions;
        Rise *proc_rises, *func_rises;
        size_t n_proc_rises, n_func_rises;

        /* event.folded, the seconds around the event, against everything else the bundle holds
         * (the rest of the slice and the baseline); -ENOENT in bundles written before it. */
        Folded near, near_rest;
        int near_error;
        uint64_t near_from_ns, near_to_ns; /* its range: ns before and after the event */
        Rise *near_proc_rises, *near_func_rises;
        size_t n_near_proc_rises, n_near_func_rises;

        /* The stacks of the grouped threads, each under its own comm (bundle_threads_own()) of the
         * slice, the baseline and near, kept before they are grouped: which one thread of a group
         * carried its rise. */
        Folded own_slice, own_baseline, own_near;
        int own_error;

        /* The one-line answer, chosen from the untruncated lists before they are cut to TOP_RISES
         * for display (answer_choose()); answer.rise.name NULL when every list is empty; of a
         * group's rise, answer.thread the one thread that carried it (bundle_answer_thread()). */
        Answer answer;

        bool has_cpu;
        unsigned cpu;
        Folded cpu_slice, cpu_baseline;
        int cpu_error;
        Rise *cpu_rises;
        size_t n_cpu_rises;

        /* by unit, container and pod (CgroupBy - 1), from the manifest's cgroups */
        Rise *services[3];
        size_t n_services[3];
        bool has_services;

        /* The files whose sections could not be shown: each said in its section, and the exit
         * status is 1. */
        BundleUnreadable unreadable;
} Show;

/* s->entry->path + "/" + name; NULL on OOM. */
char *show_bundle_file(const Show *s, const char *name);
/* Where a section needs a file of names (NULL-terminated) that is there but could not be read:
 * prints "  (needs WHAT; cannot be read: PATH: ERROR)", or without needs "  (cannot be read: PATH:
 * ERROR)", and returns true; false when none of them was unreadable. */
bool show_print_unreadable(const Show *s, const char *needs, ...);
/* A section title, bold on a terminal. */
void show_section(const Show *s, const char *title);
/* A share as a percentage with one decimal; a share too small for that is "<0.1%", not "0.0%". */
const char *show_share(char *buf, size_t l, double share);
/* A process's name escaped for the terminal, cut to cut columns, and " (812 processes)" after it
 * where the manifest counts more than one behind it (bundle_comm_processes()). NULL on OOM. */
char *show_process_name(const Show *s, const char *comm, size_t cut);
/* The sections of what rose (bundle-show-rises.c). */
void show_print_unusual(const Show *s);
void show_print_services(const Show *s);
void show_print_cpu(const Show *s);
/* "CPU activity over the slice" (bundle-show-activity.c). */
void show_print_activity(const Show *s);
/* A signed offset in seconds, compact: "-90s", "+15s", "+1.5s", "-2m30s". */
const char *show_format_offset(char *buf, size_t l, int64_t ns);
/* "Files" and "Open with" (bundle-show-files.c). */
void show_print_files(const Show *s);

/* Prints the bundle as one JSON document (pretty: indented). */
int show_print_json(const Show *s, bool pretty);
