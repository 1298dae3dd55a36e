/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The files of a bundle that are there but could not be read (this user may not, an I/O error),
 * each path with its error: what show, report and the others leave out of their output, say on
 * standard error and count in their exit status. A file that is not there (ENOENT) is a bundle
 * without it, not one of them.
 */
#pragma once

#include <stddef.h>

typedef struct BundleUnreadableFile {
        char *path;
        int error; /* negative errno */
} BundleUnreadableFile;

typedef struct BundleUnreadable {
        BundleUnreadableFile *files;
        size_t n, allocated;
} BundleUnreadable;

void bundle_unreadable_done(BundleUnreadable *u);
/* Adds dir/name (name NULL: dir itself) to u where error is negative and not -ENOENT; a file left
 * out on OOM. Returns error. */
int bundle_unreadable_add(BundleUnreadable *u, const char *dir, const char *name, int error);
/* The entry of dir/name, or NULL when it is not one. */
const BundleUnreadableFile *bundle_unreadable_find(const BundleUnreadable *u, const char *dir,
                                                   const char *name);
