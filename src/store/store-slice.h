/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading the ring: listing its windows with what they cover, and cutting a time range out of a
 * set of windows as one time-ordered stream of samples. Shared by the daemon (incident slices)
 * and tprof-bundle (windows, export). Range cuts use the per-chunk time bounds of the chunk
 * headers, so only chunks that overlap the range are read and decompressed.
 *
 * Perf clock times are only comparable within one boot: callers pass windows of a single boot
 * (WindowInfo.boot_id) to slice_read().
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "basic/clock-map.h"
#include "store/store-window.h"

typedef struct WindowInfo {
        char *path;
        const char *name; /* basename, inside path */
        uint64_t first_ns, last_ns;                        /* perf clock; both 0 when it has no samples */
        uint64_t start_realtime_usec, end_realtime_usec;   /* first/last sample through the window's clock map,
                                                            * or the nominal bounds when it has no samples */
        uint64_t window_start_usec, window_span_usec;      /* nominal, from the header */
        uint64_t samples, lost, bytes;
        bool partial, pinned, corrupt, truncated;
        unsigned chunks, corrupt_chunks;
        uint64_t first_corrupt_offset;
        int error; /* < 0 if the file could not be read at all (then only path, name, bytes are set) */
        WindowHeader header; /* host, boot id, kernel, event, frequency, CPUs, clock map */
} WindowInfo;

void window_info_done(WindowInfo *w);
void window_info_array_free(WindowInfo *w, size_t n);

/* Loads one window's summary; with verify every payload checksum is checked (reads the file). */
int window_info_load(const char *path, bool verify, WindowInfo *ret);

/*
 * Lists the *.tpw and *.tpw.partial files of ring_dir, oldest first (by nominal start, then name).
 * Unreadable files are listed with error set, not skipped. Returns -ENOENT if the directory is missing.
 */
int ring_list_windows(const char *ring_dir, bool verify, WindowInfo **ret, size_t *ret_n);

typedef struct SliceStats {
        uint64_t samples;         /* handed to the handler */
        uint64_t lost;            /* lost-sample counts of the chunks that overlap the range */
        unsigned windows;         /* windows that had a chunk in range */
        unsigned chunks_read, chunks_skipped;
        unsigned corrupt_chunks;  /* in range but damaged: skipped */
        char *corrupt_path;       /* the first of them */
        uint64_t corrupt_offset;
        unsigned truncated_windows;
} SliceStats;

void slice_stats_done(SliceStats *s);

/*
 * Calls h for every sample with from_perf_ns <= t_ns <= to_perf_ns in the given windows, in time
 * order across windows and chunks (ties keep file order). A handler's negative return stops the
 * read and is returned; damaged chunks are skipped and counted, not errors. ret_stats may be NULL.
 */
int slice_read(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, SliceHandler h, void *ud,
               SliceStats *ret_stats);

/* The SliceStats.lost that slice_read() would count for the range, from the chunk headers alone:
 * nothing is decompressed. (A chunk whose payload is damaged counts here, not in slice_read().) */
int slice_lost(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, uint64_t *ret);
