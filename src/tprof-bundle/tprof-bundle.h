/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the verbs of tprof-bundle share: the global options and the verb signature. A verb gets
 * argv starting at its own name and returns the process exit code.
 */
#pragma once

#include <stdbool.h>

extern const char *arg_state_dir;

typedef struct Verb {
        const char *name;
        const char *help;
        int (*run)(int argc, char *argv[]);
} Verb;

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
