/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the verbs of tprof-bundle share: the global options and the verb signature. A verb gets
 * argv starting at its own name and returns the process exit code.
 */
#pragma once

#include <stdbool.h>

extern const char *arg_state_dir;
extern const char *arg_control_socket; /* NULL: $TPROF_CONTROL_SOCKET, else the default */

/* The control socket to use, and an error message for a failed call (returns the exit code). */
const char *control_socket_path(void);
int control_error_hint(int r, const char *path);

int verb_capture(int argc, char *argv[]);
int verb_status(int argc, char *argv[]);

typedef struct Verb {
        const char *name;
        const char *help;
        int (*run)(int argc, char *argv[]);
} Verb;

#include <stddef.h>
#include <stdint.h>

#include "store/store-export.h"

int verb_windows(int argc, char *argv[]);
/* Takes one of export's --by, --unit or --cgroup options into v; logs and fails on a bad value. */
int export_view_parse_option(ExportView *v, const char *option, const char *value);
/* "export --from --to --format ...": a range straight from the ring, see bundle-export.c. */
int verb_export(int argc, char *argv[]);
/* Parses a wall-clock TIME as `export --from/--to` take it into CLOCK_REALTIME microseconds. */
int bundle_parse_time(const char *s, uint64_t now_realtime_usec, uint64_t *ret_realtime_usec);
/*
 * The windows of ring (one boot: the newest the range touches) holding samples of [from, to]
 * (wall clock), and the range on the perf clock. *ret_paths and *ret_newest (the window that
 * decided the boot and clock mapping; ret_newest may be NULL) point into *ret_w (free both:
 * window_info_array_free(*ret_w, *ret_nw), free(*ret_paths)). Logs why on failure.
 */
#include "store/store-slice.h"
int bundle_ring_range(const char *ring, uint64_t from_usec, uint64_t to_usec, WindowInfo **ret_w, size_t *ret_nw,
                      char ***ret_paths, size_t *ret_n_paths, uint64_t *ret_from_ns, uint64_t *ret_to_ns,
                      const WindowInfo **ret_newest);
/* Where -o writes: a new or regular file through a temporary one (*ret_tmp, to be renamed into place
 * when complete), anything else (a device, a FIFO) in place (*ret_tmp NULL). */
#include <stdio.h>
FILE *bundle_open_output(const char *path, char **ret_tmp);
int verb_report(int argc, char *argv[]);
/* "2026-11-21T14:30:00Z" */
const char *bundle_format_utc_seconds(char *buf, size_t l, uint64_t realtime_usec);

/* The verbs (bundle-list.c, bundle-show.c, bundle-rm.c, bundle-open.c, bundle-export-bundle.c). */
int verb_list(int argc, char *argv[]);
int verb_show(int argc, char *argv[]);
int verb_rm(int argc, char *argv[]);
int verb_open(int argc, char *argv[]);
/* "export ID --format folded|perf-script|svg [--diff]": a bundle's files, see bundle-export-bundle.c. */
int bundle_export_bundle(int argc, char *argv[]);
/*
 * Whether an export command line (argv[0] = "export") names a bundle, i.e. has a positional
 * argument: then it belongs to bundle_export_bundle(), else to the ring export. For the verb
 * table: "return export_names_bundle(argc, argv) ? bundle_export_bundle(argc, argv) : ring...".
 */
bool export_names_bundle(int argc, char *argv[]);

#include <stdio.h>
#include "bundle/bundle-read.h"

/*
 * The windows in a bundle's windows/, sorted (their names start with their UTC start): *ret_w all
 * *ret_n of them (window_info_array_free(w, n)), *ret_paths the *ret_n_paths readable ones' paths
 * (pointing into *ret_w; free the array only). Unreadable ones are said and left out.
 */
int bundle_readable_windows(const BundleEntry *e, WindowInfo **ret_w, size_t *ret_n, char ***ret_paths,
                            size_t *ret_n_paths);
/* Logs r, bundle_readable_windows()'s error, with the path of the bundle's windows/; returns r. */
int bundle_windows_error(const BundleEntry *e, int r);

/* After an export from windows: says what it left out, damaged chunks and samples of another
 * event than the file's (skipped_other_event, perf script keeps one event a file). */
void export_warn_skipped(const SliceStats *st, uint64_t skipped_other_event);

/*
 * After a bundle's slice (what: "slice" or "baseline") was cut again from its windows/: says what
 * export_warn_skipped() says, and when the export holds fewer samples than the manifest counts
 * there (want; 0: not judged, as for an export that filters; nor when samples of another event
 * were left out on purpose). Windows removed or damaged since the bundle was written leave an
 * export short, and whoever reads it would never know.
 */
void bundle_export_warn_short(const BundleEntry *e, const SliceStats *st, uint64_t skipped_other_event, uint64_t want,
                              const char *what);

/* export ID --format pprof [--baseline] [-o FILE], see bundle-export-pprof.c. */
int bundle_export_pprof(const BundleEntry *e, bool baseline, const char *output);
/* Flushes an output of bundle_open_output(), syncs and renames its temporary file (if any) into place. */
int export_commit_output(FILE *out, const char *tmp, const char *path);
