/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/macro.h"
#include "bundle/bundle-unreadable.h"

void bundle_unreadable_done(BundleUnreadable *u) {
        for (size_t i = 0; i < u->n; i++)
                free(u->files[i].path);
        free(u->files);
        *u = (BundleUnreadable) {};
}

int bundle_unreadable_add(BundleUnreadable *u, const char *dir, const char *name, int error) {
        char *p = NULL;

        if (error >= 0 || error == -ENOENT)
                return error;
        if (!GREEDY_REALLOC(u->files, u->allocated, u->n + 1))
                return error;
        if (!name)
                p = strdup(dir);
        else if (asprintf(&p, "%s/%s", dir, name) < 0)
                p = NULL;
        if (!p)
                return error;
        u->files[u->n++] = (BundleUnreadableFile) { .path = p, .error = error };
        return error;
}

const BundleUnreadableFile *bundle_unreadable_find(const BundleUnreadable *u, const char *dir,
                                                   const char *name) {
        size_t l = strlen(dir);

        for (size_t i = 0; i < u->n; i++) {
                const char *p = u->files[i].path;
                if (strncmp(p, dir, l) == 0 && p[l] == '/' && streq(p + l + 1, name))
                        return &u->files[i];
        }
        return NULL;
}
