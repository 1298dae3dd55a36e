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

static void strv_free_n(char **l, size_t n) {
        for (size_t i = 0; l && i < n; i++)
                free(l[i]);
        free(l);
}

void incident_limits_enforce(int incidents_fd, const IncidentLimits *limits, const char *keep,
                             IncidentHeldFunc held, IncidentRemovedFunc cb, void *userdata) {
        _cleanup_closedir_ DIR *d = NULL;
        char **names = NULL;
        size_t n = 0, allocated = 0;
        uint64_t *bytes = NULL, total = 0;
        struct dirent *de;

        if (opendir_at(incidents_fd, ".", 0, &d) < 0)
                return;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                if (!GREEDY_REALLOC(names, allocated, n + 1))
                        goto out;
                names[n] = strdup(de->d_name);
                if (!names[n])
                        goto out;
                n++;
        }
        if (n == 0)
                goto out;
        /* Bundle names start with their UTC second: name order is age order, but for bundles of
         * the same second, which sort by rule and short id. */
        qsort(names, n, sizeof(char *), cmp_string_ptr);
        bytes = new0(uint64_t, n ?: 1);
        if (!bytes)
                goto out;
        for (size_t i = 0; i < n; i++) {
                bytes[i] = dir_bytes_at(incidents_fd, names[i], 0);
                total += bytes[i];
        }
        /* The bundle to keep (else the last by name) always stays, even when it alone is over the
         * size limit. A removal that fails counts against max_bundles all the same (cb hears of it). */
        bool have_keep = false;
        for (size_t i = 0; keep && i < n; i++)
                have_keep = have_keep || streq(names[i], keep);
        size_t left = n;
        for (size_t i = 0; i < n && left > 1 && (left > limits->max_bundles || total > limits->max_bundle_bytes); i++) {
                if (have_keep ? streq(names[i], keep) : i + 1 == n)
                        continue;
                if (held && held(names[i], userdata))
                        continue;
                left--;
                int r = incident_bundle_remove(incidents_fd, names[i]);
                if (cb)
                        cb(names[i], r, userdata);
                if (r < 0)
                        continue;
                total -= bytes[i];
        }
out:
        free(bytes);
        strv_free_n(names, n);
}

void incident_limits_remove_unfinished(int incidents_fd, IncidentRemovedFunc cb, void *userdata) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        if (opendir_at(incidents_fd, ".", 0, &d) < 0)
                return;
        while ((de = readdir(d))) {
                if (!startswith(de->d_name, BUNDLE_TMP_PREFIX))
                        continue;
                int r = rm_rf_at(incidents_fd, de->d_name, BUNDLE_DEPTH_MAX);
                if (cb)
                        cb(de->d_name, r, userdata);
        }
}
