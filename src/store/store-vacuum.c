/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Ring retention; see store-vacuum.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "store/store-vacuum.h"
#include "store/store-window.h"

static const char *const reason_table[_VACUUM_REASON_MAX] = {
        [VACUUM_REASON_AGE] = "older than the age limit",
        [VACUUM_REASON_SIZE] = "ring over its size limit",
        [VACUUM_REASON_FREE_SPACE] = "free space below the margin",
        [VACUUM_REASON_DISK_FULL] = "disk full",
};

const char *vacuum_reason_to_string(VacuumReason r) {
        if (r < 0 || r >= _VACUUM_REASON_MAX)
                return NULL;
        return reason_table[r];
}

typedef struct Candidate {
        char *name;
        uint64_t mtime_usec, bytes, disk_bytes;
        uint64_t mono_usec; /* this_boot: CLOCK_MONOTONIC of its last sample */
        bool pinned, gone, this_boot;
} Candidate;

/* Oldest first: other boots (and windows whose boot is not known) by modification time, then the
 * running boot's by the monotonic time of their last sample. */
static int cmp_candidate(const void *a, const void *b) {
        const Candidate *x = a, *y = b;
        if (x->this_boot != y->this_boot)
                return x->this_boot ? 1 : -1;
        if (x->this_boot && x->mono_usec != y->mono_usec)
                return x->mono_usec < y->mono_usec ? -1 : 1;
        if (!x->this_boot && x->mtime_usec != y->mtime_usec)
                return x->mtime_usec < y->mtime_usec ? -1 : 1;
        return strcmp(x->name, y->name);
}

/* Whether the window is of the running boot, and then when its last sample was taken by the
 * monotonic clock (through the mapping its header recorded). */
static int window_mono_time(int dir_fd, const char *name, const char *boot_id, Candidate *c) {
        _cleanup_(window_file_freep) WindowFile *w = NULL;
        char path[64 + NAME_MAX];
        uint64_t last = 0;
        bool any = false;
        int r;

        snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dir_fd, name);
        r = window_file_open(path, /* verify= */ false, &w);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !streq(w->header.info.boot_id, boot_id))
                return 0; /* unreadable or of another boot: its modification time is all there is */
        for (size_t i = 0; i < w->n_chunks; i++)
                if (w->chunks[i].n_samples > 0) {
                        last = MAX(last, w->chunks[i].last_ns);
                        any = true;
                }
        if (!any)
                return 0;
        c->this_boot = true;
        c->mono_usec = clock_map_perf_to_mono(&w->header.info.clock, last) / NSEC_PER_USEC;
        return 0;
}

struct VacuumCache {
        Candidate *entries; /* by name; only name, bytes, mtime_usec, this_boot and mono_usec */
        size_t n;
};

VacuumCache *vacuum_cache_new(void) {
        return calloc(1, sizeof(VacuumCache));
}

static void candidates_free(Candidate *c, size_t n);

VacuumCache *vacuum_cache_free(VacuumCache *c) {
        if (c)
                candidates_free(c->entries, c->n);
        free(c);
        return NULL;
}

static int cmp_candidate_name(const void *a, const void *b) {
        return strcmp(((const Candidate *) a)->name, ((const Candidate *) b)->name);
}

/* The window's boot and monotonic time as the cache has them, if it is unchanged since. */
static bool cache_lookup(const VacuumCache *cache, Candidate *c) {
        const Candidate *e;

        if (!cache || cache->n == 0)
                return false;
        e = bsearch(c, cache->entries, cache->n, sizeof(Candidate), cmp_candidate_name);
        if (!e || e->bytes != c->bytes || e->mtime_usec != c->mtime_usec)
                return false;
        c->this_boot = e->this_boot;
        c->mono_usec = e->mono_usec;
        return true;
}

/* The cache becomes what this run found: the windows there are now, no others. Left as it was when
 * memory runs out (a lookup checks size and modification time). */
static void cache_update(VacuumCache *cache, const Candidate *cands, size_t n) {
        Candidate *entries;

        if (!cache)
                return;
        entries = n > 0 ? calloc(n, sizeof(Candidate)) : NULL;
        if (n > 0 && !entries)
                return;
        for (size_t i = 0; i < n; i++) {
                entries[i] = (Candidate) { .name = strdup(cands[i].name), .bytes = cands[i].bytes,
                                           .mtime_usec = cands[i].mtime_usec, .this_boot = cands[i].this_boot,
                                           .mono_usec = cands[i].mono_usec };
                if (!entries[i].name) {
                        candidates_free(entries, i);
                        return;
                }
        }
        if (n > 0)
                qsort(entries, n, sizeof(Candidate), cmp_candidate_name);
        candidates_free(cache->entries, cache->n);
        cache->entries = entries;
        cache->n = n;
}

static void candidates_free(Candidate *c, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(c[i].name);
        free(c);
}

static int free_bytes(int dir_fd, uint64_t *ret) {
        struct statvfs sv;
        if (fstatvfs(dir_fd, &sv) < 0)
                return -errno;
        *ret = (uint64_t) sv.f_bavail * sv.f_frsize;
        return 0;
}

static int remove_one(int dir_fd, Candidate *c, VacuumReason reason, VacuumCallback cb, void *userdata,
                      VacuumResult *res, uint64_t *total) {
        struct stat st;

        /* Re-check the link count right before deleting: a bundle may have pinned it meanwhile. */
        if (fstatat(dir_fd, c->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (st.st_nlink > 1) {
                c->pinned = true;
                res->pinned_bytes += c->bytes;
                return 0;
        }
        if (unlinkat(dir_fd, c->name, 0) < 0)
                return errno == ENOENT ? 0 : -errno;
        c->gone = true;
        res->removed++;
        res->bytes_freed += c->bytes;
        *total -= MIN(*total, c->bytes);
        if (cb)
                cb(c->name, reason, c->bytes, userdata);
        return 1;
}

int store_vacuum(int dir_fd, const VacuumLimits *limits, uint64_t now_realtime_usec, bool emergency,
                 VacuumCallback cb, void *userdata, VacuumResult *ret) {
        _cleanup_closedir_ DIR *d = NULL;
        Candidate *cands = NULL;
        size_t n = 0, allocated = 0;
        uint64_t total = 0;
        VacuumResult res = { .newest_removed = -1 };
        struct dirent *de;
        int r = 0;

        r = opendir_at(dir_fd, ".", 0, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                struct stat st;
                bool final = endswith(de->d_name, ".tpw"), partial = endswith(de->d_name, ".tpw.partial");

                if (!final && !partial)
                        continue;
                if (fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                total += (uint64_t) st.st_size;
                if (!final)
                        continue;
                if (!GREEDY_REALLOC(cands, allocated, n + 1)) {
                        r = -ENOMEM;
                        goto finish;
                }
                cands[n] = (Candidate) {
                        .name = strdup(de->d_name),
                        .mtime_usec = (uint64_t) st.st_mtim.tv_sec * USEC_PER_SEC +
                                      (uint64_t) st.st_mtim.tv_nsec / NSEC_PER_USEC,
                        .bytes = (uint64_t) st.st_size,
                        .pinned = st.st_nlink > 1,
                };
                if (st.st_nlink > 1)
                        res.pinned_bytes += (uint64_t) st.st_size;
                if (!cands[n++].name) {
                        r = -ENOMEM;
                        goto finish;
                }
                if (limits->boot_id && !cache_lookup(limits->cache, &cands[n - 1])) {
                        r = window_mono_time(dir_fd, de->d_name, limits->boot_id, &cands[n - 1]);
                        if (r < 0)
                                goto finish;
                }
        }
        if (limits->boot_id)
                cache_update(limits->cache, cands, n);
        if (n > 0)
                qsort(cands, n, sizeof(Candidate), cmp_candidate);

        if (emergency) {
                r = -ENOSPC;
                for (size_t i = 0; i < n && r == -ENOSPC; i++) {
                        if (cands[i].pinned)
                                continue;
                        int k = remove_one(dir_fd, &cands[i], VACUUM_REASON_DISK_FULL, cb, userdata, &res, &total);
                        if (k < 0)
                                r = k;
                        else if (k > 0)
                                r = 0;
                }
                goto finish;
        }

        /* Free space is measured once a pass, and what the pass removed added to it: some file
         * systems show freed blocks only later (btrfs at its commit; a file someone still reads
         * keeps its blocks), and measuring after each removal would empty the ring in one pass
         * there. A margin still missed is seen again by the next pass. */
        bool avail_known = false;
        uint64_t avail0 = 0, freed_at_measure = 0;
        for (size_t i = 0; i < n; i++) {
                Candidate *c = &cands[i];
                VacuumReason reason = _VACUUM_REASON_INVALID;

                if (limits->max_age_usec > 0 && limits->max_age_usec != USEC_INFINITY &&
                    (c->this_boot ? c->mono_usec + limits->max_age_usec < limits->now_mono_usec
                                  : c->mtime_usec + limits->max_age_usec < now_realtime_usec))
                        reason = VACUUM_REASON_AGE;
                else if (limits->max_bytes > 0 && total > limits->max_bytes)
                        reason = VACUUM_REASON_SIZE;
                else if (limits->keep_free_bytes > 0) {
                        if (!avail_known) {
                                r = free_bytes(dir_fd, &avail0);
                                if (r < 0)
                                        goto finish;
                                avail_known = true;
                                freed_at_measure = res.bytes_freed; /* in avail0 already, or soon */
                        }
                        if (avail0 + (res.bytes_freed - freed_at_measure) < limits->keep_free_bytes)
                                reason = VACUUM_REASON_FREE_SPACE;
                }
                if (reason < 0)
                        continue;
                if (c->pinned) {
                        res.pinned_kept++;
                        continue;
                }
                r = remove_one(dir_fd, c, reason, cb, userdata, &res, &total);
                if (r < 0)
                        goto finish;
                if (r == 0 && c->pinned)
                        res.pinned_kept++;
                if (r > 0 && i == n - 1) /* sorted oldest first */
                        res.newest_removed = reason;
                r = 0;
        }

finish:
        candidates_free(cands, n);
        if (r >= 0 && ret)
                *ret = res;
        return r;
}
