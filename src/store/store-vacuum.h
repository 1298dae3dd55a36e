/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Retention for the ring directory: by age, by total bytes and by a free-space margin, oldest
 * window first, never a pinned one. A window is pinned while a bundle holds a hard link to it
 * (st_nlink > 1), so deleting the bundle releases it without telling us. Only finalized windows
 * (*.tpw) are candidates; the open *.tpw.partial is never touched. Each deletion is reported
 * through a callback with its reason, for the daemon to log.
 *
 * How old a window is: the wall clock can be stepped by hours (NTP after a wrong RTC, a restored
 * VM), and a modification time then says nothing of what came first. The windows of the running
 * boot (given by boot_id) go by the CLOCK_MONOTONIC time of their last sample, which no step
 * moves, and are all newer than any window of another boot; the others, unreadable ones and those
 * without a sample go by their modification time.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef enum VacuumReason {
        VACUUM_REASON_AGE,        /* older than max_age_usec */
        VACUUM_REASON_SIZE,       /* the ring is larger than max_bytes */
        VACUUM_REASON_FREE_SPACE, /* the file system has less than keep_free_bytes free */
        VACUUM_REASON_DISK_FULL,  /* a write failed with ENOSPC */
        _VACUUM_REASON_MAX,
        _VACUUM_REASON_INVALID = -22,
} VacuumReason;

const char *vacuum_reason_to_string(VacuumReason r);

/* What store_vacuum() read of each finalized window's chunk headers, kept from one run to the next:
 * a finalized window does not change (its size and modification time say so), and a day's ring is
 * thousands of chunk headers. For one boot_id. */
typedef struct VacuumCache VacuumCache;

VacuumCache *vacuum_cache_new(void);
VacuumCache *vacuum_cache_free(VacuumCache *c);

typedef struct VacuumLimits {
        uint64_t max_age_usec;    /* 0 or USEC_INFINITY: no age limit */
        uint64_t max_bytes;       /* 0: no size limit */
        uint64_t keep_free_bytes; /* 0: no margin */
        const char *boot_id;      /* the running boot; NULL: every window goes by its modification time */
        uint64_t now_mono_usec;   /* CLOCK_MONOTONIC now, for the running boot's windows */
        VacuumCache *cache;       /* NULL: every window's chunk headers are read */
} VacuumLimits;

typedef struct VacuumResult {
        unsigned removed;
        uint64_t bytes_freed;
        unsigned pinned_kept; /* pinned windows that a limit would otherwise have removed */
        /* The reason the newest finished window was removed for, or -1 if it was kept (or there is
         * none): by size, the limit holds less than it, the open window and the windows bundles
         * hold (pinned_bytes); by free space, the file system had less free than the margin even so. */
        int newest_removed;
        uint64_t pinned_bytes; /* of the finished windows bundles hold */
} VacuumResult;

typedef void (*VacuumCallback)(const char *name, VacuumReason reason, uint64_t bytes, void *userdata);

/*
 * Applies the limits to the windows in dir_fd. now_realtime_usec is compared with each window's
 * modification time (when its last chunk was written), limits->now_mono_usec with the monotonic
 * time of the last sample of a window of limits->boot_id. With emergency, exactly one window is
 * removed, the oldest unpinned, whatever the limits (reason DISK_FULL); -ENOSPC if there is none.
 * ret may be NULL.
 */
int store_vacuum(int dir_fd, const VacuumLimits *limits, uint64_t now_realtime_usec, bool emergency,
                 VacuumCallback cb, void *userdata, VacuumResult *ret);
