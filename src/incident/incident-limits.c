/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bundle retention in incidents/; see incident-limits.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "basic/string-util.h"
#include "bundle/bundle-format.h"
#include "incident/incident-limits.h"

static uint64_t dir_bytes_at(int dir_fd, const char *name, unsigned depth) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        uint64_t total = 0;

        if (depth > 4)
                return 0;
        if (opendir_at(dir_fd, name, O_NOFOLLOW, &d) < 0)
                return 0;
        while ((de = readdir(d))) {
                struct stat st;
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISDIR(st.st_mode))
                        total += dir_bytes_at(dirfd(d), de->d_name, depth + 1);
                else
                        total += (uint64_t) st.st_blocks * 512;
        }
        return total;
}

/* A crash halfway leaves a .tmp-* folder, which readers treat as unfinished and the next start
 * removes, never a bundle that lists windows or files it no longer has. */
int incident_bundle_remove(int incidents_fd, const char *name) {
        _cleanup_free_ char *tmp = NULL;

        if (asprintf(&tmp, BUNDLE_TMP_PREFIX "%s", name) < 0)
                return -ENOMEM;
        if (renameat(incidents_fd, name, incidents_fd, tmp) < 0)
                return -errno;
        return rm_rf_at(incidents_fd, tmp, BUNDLE_DEPTH_MAX);
}

typedef struct Bundle {
        char *name;
        struct statx_timestamp made; /* its folder's birth time; zero where the file system keeps none */
        uint64_t bytes;
} Bundle;

static void bundles_free(Bundle *b, size_t n) {
        for (size_t i = 0; b && i < n; i++)
                free(b[i].name);
        free(b);
}

/* Age order: bundle names start with their event's UTC second ("20261127T003559Z-"), and within
 * one second the folder made first is the older bundle (the name's rule and short id say nothing
 * of age; the manifest is written again when repeats join, the folder only renamed into place);
 * the name breaks what is left of a tie. */
static int bundle_cmp(const void *pa, const void *pb) {
        const Bundle *a = pa, *b = pb;
        const char *za = strchr(a->name, 'Z'), *zb = strchr(b->name, 'Z');
        size_t la = za ? (size_t) (za - a->name) : 0, lb = zb ? (size_t) (zb - b->name) : 0;
        int c;

        if (la > 0 && la == lb && (c = strncmp(a->name, b->name, la)) == 0) {
                if (a->made.tv_sec != b->made.tv_sec)
                        return a->made.tv_sec < b->made.tv_sec ? -1 : 1;
                if (a->made.tv_nsec != b->made.tv_nsec)
                        return a->made.tv_nsec < b->made.tv_nsec ? -1 : 1;
        }
        return strcmp(a->name, b->name);
}

void incident_limits_enforce(int incidents_fd, const IncidentLimits *limits, const char *keep,
                             IncidentHeldFunc held, IncidentRemovedFunc cb, void *userdata) {
        _cleanup_closedir_ DIR *d = NULL;
        Bundle *b = NULL;
        size_t n = 0, allocated = 0;
        uint64_t total = 0;
        struct dirent *de;

        if (opendir_at(incidents_fd, ".", 0, &d) < 0)
                return;
        while ((de = readdir(d))) {
                struct statx stx;

                if (de->d_name[0] == '.')
                        continue;
                if (!GREEDY_REALLOC(b, allocated, n + 1))
                        goto out;
                b[n] = (Bundle) { .name = strdup(de->d_name) };
                if (!b[n].name)
                        goto out;
                if (statx(incidents_fd, de->d_name, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &stx) == 0 &&
                    (stx.stx_mask & STATX_BTIME))
                        b[n].made = stx.stx_btime;
                b[n].bytes = dir_bytes_at(incidents_fd, de->d_name, 0);
                total += b[n].bytes;
                n++;
        }
        if (n == 0)
                goto out;
        qsort(b, n, sizeof(Bundle), bundle_cmp);
        /* The bundle to keep (else the newest) always stays, even when it alone is over the size
         * limit. A removal that fails counts against max_bundles all the same (cb hears of it). */
        bool have_keep = false;
        for (size_t i = 0; keep && i < n; i++)
                have_keep = have_keep || streq(b[i].name, keep);
        size_t left = n;
        for (size_t i = 0; i < n && left > 1 && (left > limits->max_bundles || total > limits->max_bundle_bytes); i++) {
                if (have_keep ? streq(b[i].name, keep) : i + 1 == n)
                        continue;
                if (held && held(b[i].name, userdata))
                        continue;
                left--;
                int r = incident_bundle_remove(incidents_fd, b[i].name);
                if (cb)
                        cb(b[i].name, r, userdata);
                if (r < 0)
                        continue;
                total -= b[i].bytes;
        }
out:
        bundles_free(b, n);
}

void incident_limits_remove_unfinished(int incidents_fd, IncidentHeldFunc keep, IncidentRemovedFunc cb,
                                       void *userdata) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        if (opendir_at(incidents_fd, ".", 0, &d) < 0)
                return;
        while ((de = readdir(d))) {
                if (!startswith(de->d_name, BUNDLE_TMP_PREFIX))
                        continue;
                if (keep && keep(de->d_name, userdata))
                        continue;
                int r = rm_rf_at(incidents_fd, de->d_name, BUNDLE_DEPTH_MAX);
                if (cb)
                        cb(de->d_name, r, userdata);
        }
}
