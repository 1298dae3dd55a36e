/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-process failures to open a file; see file-failures.h.
 */
#include <errno.h>

#include "symbolizer/file-failures.h"

bool file_failures_recent(const FileFailures *f, const FileFailureKey *k, uint64_t now_usec) {
        uint64_t at;

        return f->map && hashmap_get(f->map, k, sizeof *k, &at) && now_usec - at < FILE_FAILURE_RETRY_USEC;
}

int file_failures_add(FileFailures *f, const FileFailureKey *k, uint64_t now_usec) {
        if (f->map && hashmap_size(f->map) >= FILE_FAILURES_MAX)
                f->map = hashmap_free(f->map); /* each costs one more try at the most */
        if (!f->map) {
                f->map = hashmap_new();
                if (!f->map)
                        return -ENOMEM;
        }
        return hashmap_put(f->map, k, sizeof *k, now_usec);
}

size_t file_failures_size(const FileFailures *f) {
        return f->map ? hashmap_size(f->map) : 0;
}

void file_failures_done(FileFailures *f) {
        f->map = hashmap_free(f->map);
}
