/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ring: a directory of window files that the daemon writes. It owns the open window
 * (<host>-<UTC yyyymmddThhmmssZ>-<secs>s.tpw.partial, renamed to .tpw when finalized), its
 * in-memory chunk (ChunkWriter), rotation at wall-clock window boundaries, crash recovery of
 * leftover .partial files, retention (store-vacuum.h, also run on ENOSPC) and pinning by hard
 * link. It never logs: what happened to which file is reported through on_event.
 *
 * Call protocol (all from one thread): ring_store_open(); then ring_store_add_sample() and
 * ring_store_add_lost() as samples arrive; ring_store_flush() every chunk_usec;
 * ring_store_rotate() when the window ends (ring_store_window_end_usec()) and every few seconds
 * besides, for a wall clock stepped back (cheap when nothing is due); ring_store_vacuum()
 * every minute or so; ring_store_free() at exit finalizes the open window.
 *
 * Pinning the open window: its .partial is hard-linked under its final .tpw name. The link and the
 * ring's file are one inode, so chunks appended later (the seconds after an incident) appear in
 * the bundle's copy too, and the rename at finalization does not affect it. A pin made before
 * t+after was flushed should be repeated afterwards so a window opened by a rotation in between is
 * linked as well; linking is idempotent. Where dest is on another file system, or one without hard
 * links, the windows are copied instead: a copy holds what was flushed when it was made, and a
 * repeated pin copies a window again that grew since (so the pin after t+after must come after
 * its flush).
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "profile/profile-sample.h"
#include "store/store-vacuum.h"
#include "store/store-window.h"

#define RING_WINDOW_USEC_DEFAULT (UINT64_C(120) * UINT64_C(1000000))
#define RING_CHUNK_USEC_DEFAULT (UINT64_C(5) * UINT64_C(1000000))
#define RING_MAX_AGE_USEC_DEFAULT (UINT64_C(12) * UINT64_C(3600) * UINT64_C(1000000))
/* Buffered samples beyond this force a flush even before chunk_usec, so memory stays bounded. */
#define RING_CHUNK_SAMPLES_MAX (UINT32_C(1) << 18)

typedef enum RingEventType {
        RING_EVENT_REMOVED,   /* retention deleted a window; reason says why */
        RING_EVENT_RECOVERED, /* a .partial left by a crash was finalized; bytes = tail cut off */
        RING_EVENT_DISCARDED, /* a .partial with no usable header was deleted */
        RING_EVENT_DROPPED,   /* a chunk could not be written (disk full and nothing left to free); bytes = samples */
        RING_EVENT_UNRECOVERED, /* a .partial left by a crash could not be finalized (reason: why): left as it is */
        _RING_EVENT_TYPE_MAX,
        _RING_EVENT_TYPE_INVALID = -EINVAL,
} RingEventType;

typedef struct RingEvent {
        RingEventType type;
        const char *name; /* file name inside the ring directory */
        const char *reason;
        uint64_t bytes;
} RingEvent;

typedef struct RingOptions {
        uint64_t window_usec;     /* 0: RING_WINDOW_USEC_DEFAULT */
        uint64_t chunk_usec;      /* the flush interval the caller keeps; 0: RING_CHUNK_USEC_DEFAULT */
        uint64_t max_age_usec;    /* 0: RING_MAX_AGE_USEC_DEFAULT; USEC_INFINITY: keep forever */
        uint64_t max_bytes;       /* 0: no limit */
        uint64_t keep_free_bytes; /* 0: no margin */
        int compress_level;       /* 0: COMPRESS_LEVEL_DEFAULT */
        unsigned chain_chunks;    /* chunks sharing tables; 0: CHUNK_CHAIN_DEFAULT, 1: all self-contained */
        bool sync;                /* fdatasync() after every chunk */
        void (*on_event)(const RingEvent *e, void *userdata);
        void *userdata;
} RingOptions;

typedef struct RingStore RingStore;

int ring_store_open(const char *ring_dir, const RingOptions *o, const WindowHeaderInfo *h, RingStore **ret);
/* Flushes and finalizes the open window. Errors are lost here: call ring_store_flush() first to see them. */
RingStore *ring_store_free(RingStore *rs);

int ring_store_add_sample(RingStore *rs, const Sample *s);
/* Lost counts are written with the next chunk that holds a sample (or at ring_store_free()). */
int ring_store_add_lost(RingStore *rs, uint32_t cpu, uint64_t n);
int ring_store_update_clock(RingStore *rs, const ClockMap *m);
/*
 * Appends the buffered samples as one chunk. On ENOSPC it removes the oldest unpinned windows one
 * at a time and retries; if nothing is left to remove the chunk is dropped (RING_EVENT_DROPPED) and
 * -ENOSPC returned, and the store stays usable.
 */
int ring_store_flush(RingStore *rs);
/*
 * Ends the open window when now_realtime_usec reaches its end (or lies before its start: the wall
 * clock was stepped back) and opens the next. Returns 1 if a new window was opened, 0 if not due.
 */
int ring_store_rotate(RingStore *rs, uint64_t now_realtime_usec);
/* Whether ring_store_rotate() would end the open window (or open one) at now_realtime_usec. */
bool ring_store_rotate_due(const RingStore *rs, uint64_t now_realtime_usec);
int ring_store_vacuum(RingStore *rs, uint64_t now_realtime_usec, VacuumResult *ret);
/*
 * Hard-links (or copies, see above) every window of this boot that overlaps [from_perf_ns,
 * to_perf_ns] into dest_dirfd under its .tpw name, the open window first; the open window counts
 * as reaching to infinity. A window that cannot be pinned does not stop the others: the first
 * error is returned. On success *ret_linked (if not NULL) gets a NULL-terminated list of the names
 * linked or already present.
 */
int ring_store_pin(RingStore *rs, uint64_t from_perf_ns, uint64_t to_perf_ns, int dest_dirfd, char ***ret_linked);

/* The open window's file name (ending in .partial) and counters, for status output and tests. */
const char *ring_store_current_name(const RingStore *rs);
/* The windows this store finished (renamed from .partial) since it was opened. */
uint64_t ring_store_windows_finished(const RingStore *rs);
/* When the open window ends by the wall clock (ring_store_rotate() is due then); 0 if none is open. */
uint64_t ring_store_window_end_usec(const RingStore *rs);
uint64_t ring_store_dropped_samples(const RingStore *rs);

/* Finalizes every *.tpw.partial in dir_fd (what ring_store_open() does first); for tools and tests.
 * One that cannot be is left as it is, with RING_EVENT_UNRECOVERED: only ENOMEM or an unreadable
 * directory fail. */
int ring_store_recover(int dir_fd, const RingOptions *o);

/* Formats a window's file name; buf must hold RING_NAME_MAX. */
#define RING_NAME_MAX 320
int ring_window_name(const char *host, uint64_t start_realtime_usec, uint64_t span_usec, bool partial, char *buf,
                     size_t l);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(RingStore *, ring_store_free);

/* Frees a NULL-terminated name list as ring_store_pin() returns it. */
char **ring_names_free(char **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, ring_names_free);
