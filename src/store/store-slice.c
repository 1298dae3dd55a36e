/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Listing windows and cutting time ranges; see store-slice.h.
 *
 * The cut is a streaming merge: overlapping chunks are sorted by their first sample time, and
 * before a chunk is decoded every buffered sample earlier than its first time is emitted, because
 * no later chunk can hold anything earlier. Chunks overlap little in time (one flush interval at
 * most), so only a few decoded chunks are held at once, whatever the length of the range.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic/alloc-util.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "store/store-slice.h"

void window_info_done(WindowInfo *w) {
        free(w->path);
        window_header_done(&w->header);
        *w = (WindowInfo) {};
}

void window_info_array_free(WindowInfo *w, size_t n) {
        for (size_t i = 0; w && i < n; i++)
                window_info_done(&w[i]);
        free(w);
}

int window_info_load(const char *path, bool verify, WindowInfo *ret) {
        _cleanup_(window_file_freep) WindowFile *wf = NULL;
        WindowInfo w = {};
        const char *slash;
        struct stat st;
        int r;

        w.path = strdup(path);
        if (!w.path)
                return -ENOMEM;
        slash = strrchr(w.path, '/');
        w.name = slash ? slash + 1 : w.path;
        w.partial = endswith(path, ".partial");
        if (stat(path, &st) >= 0) {
                w.bytes = (uint64_t) st.st_size;
                w.pinned = st.st_nlink > 1;
        }
        r = window_file_open(path, verify, &wf);
        if (r == -ENOMEM) {
                free(w.path);
                return r;
        }
        if (r < 0) {
                w.error = r;
                w.corrupt = r == -EBADMSG;
                *ret = w;
                return 0;
        }
        w.header = wf->header;
        wf->header = (WindowHeader) {};
        w.window_start_usec = w.header.start_realtime_usec;
        w.window_span_usec = w.header.span_usec;
        for (size_t i = 0; i < wf->n_chunks; i++) {
                const ChunkInfo *c = &wf->chunks[i];
                if (c->corrupt || c->n_samples == 0)
                        continue;
                w.first_ns = w.samples == 0 ? c->first_ns : MIN(w.first_ns, c->first_ns);
                w.last_ns = MAX(w.last_ns, c->last_ns);
                w.samples += c->n_samples;
        }
        w.lost = wf->stats.lost;
        w.chunks = wf->stats.chunks;
        w.corrupt_chunks = wf->stats.corrupt_chunks;
        w.first_corrupt_offset = wf->stats.first_corrupt_offset;
        w.corrupt = w.corrupt_chunks > 0;
        w.truncated = wf->stats.truncated;
        if (w.samples > 0) {
                w.start_realtime_usec = clock_map_perf_to_realtime(&w.header.info.clock, w.first_ns) / NSEC_PER_USEC;
                w.end_realtime_usec = clock_map_perf_to_realtime(&w.header.info.clock, w.last_ns) / NSEC_PER_USEC;
        } else {
                w.start_realtime_usec = w.window_start_usec;
                w.end_realtime_usec = w.window_start_usec + w.window_span_usec;
        }
        *ret = w;
        return 0;
}

static int cmp_info(const void *a, const void *b) {
        const WindowInfo *x = a, *y = b;
        uint64_t tx = x->error < 0 ? 0 : x->window_start_usec, ty = y->error < 0 ? 0 : y->window_start_usec;
        if (tx != ty)
                return tx < ty ? -1 : 1;
        return strcmp(x->name, y->name);
}

int ring_list_windows(const char *ring_dir, bool verify, WindowInfo **ret, size_t *ret_n) {
        _cleanup_closedir_ DIR *d = NULL;
        WindowInfo *v = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;
        int r;

        d = opendir(ring_dir);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char path[PATH_MAX];

                if (!endswith(de->d_name, ".tpw") && !endswith(de->d_name, ".tpw.partial"))
                        continue;
                if (snprintf(path, sizeof path, "%s/%s", ring_dir, de->d_name) >= (int) sizeof path)
                        continue;
                if (!GREEDY_REALLOC(v, allocated, n + 1)) {
                        window_info_array_free(v, n);
                        return -ENOMEM;
                }
                r = window_info_load(path, verify, &v[n]);
                if (r < 0) {
                        window_info_array_free(v, n);
                        return r;
                }
                n++;
        }
        if (n > 0)
                qsort(v, n, sizeof(WindowInfo), cmp_info);
        *ret = v;
        *ret_n = n;
        return 0;
}

void slice_stats_done(SliceStats *s) {
        free(s->corrupt_path);
        *s = (SliceStats) {};
}

typedef struct ChunkRef {
        size_t file, chunk;
        uint64_t first_ns;
} ChunkRef;

typedef struct Active {
        DecodedChunk *d;
        size_t pos, n, file;
} Active;

/* What keeps a window open during a cut: its chunks not yet decoded and its chunks being merged. */
typedef struct FileUse {
        size_t refs_left, active;
} FileUse;

static void release_file(WindowFile **files, FileUse *use, size_t f) {
        /* Decoded samples point into the file's string storage: close it only when none are left. */
        if (use[f].refs_left == 0 && use[f].active == 0)
                files[f] = window_file_free(files[f]);
}

static int cmp_ref(const void *a, const void *b) {
        const ChunkRef *x = a, *y = b;
        if (x->first_ns != y->first_ns)
                return x->first_ns < y->first_ns ? -1 : 1;
        if (x->file != y->file)
                return x->file < y->file ? -1 : 1;
        return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

/* Emits buffered samples with time < limit (all of them with UINT64_MAX) in time order. */
static int drain(Active *act, size_t *n_act, uint64_t limit, uint64_t to_ns, SliceHandler h, void *ud,
                 SliceStats *st, WindowFile **files, FileUse *use) {
        for (;;) {
                size_t best = SIZE_MAX;
                uint64_t best_t = UINT64_MAX;
                Sample s;
                int r;

                for (size_t i = 0; i < *n_act; i++) {
                        uint64_t t = decoded_chunk_sample_time(act[i].d, act[i].pos);
                        if (best == SIZE_MAX || t < best_t) {
                                best = i;
                                best_t = t;
                        }
                }
                if (best == SIZE_MAX || (limit != UINT64_MAX && best_t >= limit))
                        return 0;
                if (best_t <= to_ns) {
                        decoded_chunk_sample(act[best].d, act[best].pos, &s);
                        r = h(&s, ud);
                        if (r < 0)
                                return r;
                        st->samples++;
                        act[best].pos++;
                }
                if (best_t > to_ns || act[best].pos >= act[best].n) {
                        /* Exhausted, or past the range: samples are time-ordered within a chunk. */
                        size_t f = act[best].file;
                        decoded_chunk_free(act[best].d);
                        act[best] = act[--*n_act];
                        use[f].active--;
                        release_file(files, use, f);
                }
        }
}

int slice_read(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, SliceHandler h, void *ud,
               SliceStats *ret_stats) {
        WindowFile **files = NULL;
        FileUse *use = NULL;
        ChunkRef *refs = NULL;
        Active *act = NULL;
        size_t n_refs = 0, refs_alloc = 0, n_act = 0, act_alloc = 0;
        SliceStats st = { .corrupt_offset = UINT64_MAX };
        int r = 0;

        files = new0(WindowFile *, n ?: 1);
        use = new0(FileUse, n ?: 1);
        if (!files || !use) {
                free(files);
                free(use);
                return -ENOMEM;
        }
        for (size_t f = 0; f < n; f++) {
                bool any = false;

                r = window_file_open(paths[f], /* verify= */ false, &files[f]);
                if (r < 0)
                        goto finish;
                if (files[f]->stats.truncated)
                        st.truncated_windows++;
                for (size_t c = 0; c < files[f]->n_chunks; c++) {
                        const ChunkInfo *ci = &files[f]->chunks[c];
                        if (ci->n_samples == 0 || ci->first_ns > to_perf_ns || ci->last_ns < from_perf_ns) {
                                st.chunks_skipped++;
                                continue;
                        }
                        if (!GREEDY_REALLOC(refs, refs_alloc, n_refs + 1)) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        refs[n_refs++] = (ChunkRef) { .file = f, .chunk = c, .first_ns = ci->first_ns };
                        use[f].refs_left++;
                        any = true;
                }
                if (any)
                        st.windows++;
                else
                        files[f] = window_file_free(files[f]); /* keep few fds open on a long ring */
        }
        if (n_refs > 0)
                qsort(refs, n_refs, sizeof(ChunkRef), cmp_ref);

        for (size_t i = 0; i < n_refs; i++) {
                WindowFile *wf = files[refs[i].file];
                DecodedChunk *d = NULL;
                size_t pos = 0, cnt;

                r = drain(act, &n_act, refs[i].first_ns, to_perf_ns, h, ud, &st, files, use);
                if (r < 0)
                        goto finish;
                r = window_file_decode_chunk(wf, refs[i].chunk, &d);
                use[refs[i].file].refs_left--;
                if (r == -EBADMSG) {
                        st.corrupt_chunks++;
                        if (!st.corrupt_path) {
                                st.corrupt_path = strdup(wf->path);
                                st.corrupt_offset = wf->chunks[refs[i].chunk].offset;
                        }
                        release_file(files, use, refs[i].file);
                        r = 0;
                        continue;
                }
                if (r < 0)
                        goto finish;
                st.chunks_read++;
                st.lost += wf->chunks[refs[i].chunk].lost;
                cnt = decoded_chunk_n_samples(d);
                while (pos < cnt && decoded_chunk_sample_time(d, pos) < from_perf_ns)
                        pos++;
                if (pos >= cnt) {
                        decoded_chunk_free(d);
                        release_file(files, use, refs[i].file);
                        continue;
                }
                if (!GREEDY_REALLOC(act, act_alloc, n_act + 1)) {
                        decoded_chunk_free(d);
                        r = -ENOMEM;
                        goto finish;
                }
                act[n_act++] = (Active) { .d = d, .pos = pos, .n = cnt, .file = refs[i].file };
                use[refs[i].file].active++;
        }
        r = drain(act, &n_act, UINT64_MAX, to_perf_ns, h, ud, &st, files, use);

finish:
        for (size_t i = 0; i < n_act; i++)
                decoded_chunk_free(act[i].d);
        free(act);
        free(refs);
        for (size_t f = 0; f < n; f++)
                window_file_free(files[f]);
        free(files);
        free(use);
        if (ret_stats)
                *ret_stats = st;
        else
                free(st.corrupt_path);
        return r;
}

int slice_lost(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, uint64_t *ret) {
        uint64_t lost = 0;
        int r;

        for (size_t f = 0; f < n; f++) {
                _cleanup_(window_file_freep) WindowFile *w = NULL;

                r = window_file_open(paths[f], /* verify= */ false, &w);
                if (r < 0)
                        return r;
                /* The chunks slice_read() would decode: with samples, overlapping the range. */
                for (size_t c = 0; c < w->n_chunks; c++) {
                        const ChunkInfo *ci = &w->chunks[c];
                        if (ci->n_samples > 0 && ci->first_ns <= to_perf_ns && ci->last_ns >= from_perf_ns)
                                lost += ci->lost;
                }
        }
        *ret = lost;
        return 0;
}
