/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ring directory and its open window; see ring-store.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/fileio.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "store/compress.h"
#include "store/ring-store.h"

struct RingStore {
        char *dir;
        int dir_fd;
        RingOptions o;

        WindowHeaderInfo info; /* strings owned: see info_strings */
        char *info_strings[4];

        ChunkWriter *cw;
        ByteBuf out;

        int fd; /* the open window, -EBADF between windows */
        char partial_name[RING_NAME_MAX], final_name[RING_NAME_MAX];
        uint64_t window_start_usec, window_end_usec;
        uint64_t offset;                 /* end of the last chunk written */
        uint64_t header_bytes;           /* of the open window */
        uint64_t written_first_ns, written_last_ns;
        uint64_t dropped_samples;
        VacuumCache *vacuum_cache; /* NULL when it could not be made: the vacuum reads every window */
        uint64_t windows_finished; /* since the store was opened */
};

char **ring_names_free(char **l) {
        if (l)
                for (char **i = l; *i; i++)
                        free(*i);
        free(l);
        return NULL;
}

static void emit(const RingOptions *o, RingEventType type, const char *name, const char *reason, uint64_t bytes) {
        if (o && o->on_event)
                o->on_event(&(RingEvent) { .type = type, .name = name, .reason = reason, .bytes = bytes }, o->userdata);
}

int ring_window_name(const char *host, uint64_t start_realtime_usec, uint64_t span_usec, bool partial, char *buf,
                     size_t l) {
        char h[128];
        time_t t = (time_t) (start_realtime_usec / USEC_PER_SEC);
        struct tm tm;
        int n;

        snprintf(h, sizeof h, "%s", isempty(host) ? "localhost" : host);
        filename_sanitize(h);
        if (!gmtime_r(&t, &tm))
                return -EINVAL;
        n = snprintf(buf, l, "%s-%04d%02d%02dT%02d%02d%02dZ-%llus.tpw%s", h, tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (unsigned long long) ((span_usec + USEC_PER_SEC - 1) / USEC_PER_SEC), partial ? ".partial" : "");
        return n < 0 || (size_t) n >= l ? -ENAMETOOLONG : 0;
}

/* ---------------------------------------------------------------- recovery */

/* renameat2(RENAME_NOREPLACE) within dir_fd; where the kernel has none (before 3.15: ENOSYS) or
 * the file system does not take the flag (EINVAL), a hard link under the new name, which fails as
 * well when it exists, then the old name removed. A run stopped between the two leaves both names
 * on one file: the next one removes the old name. */
static int rename_noreplace(int dir_fd, const char *from, const char *to) {
        struct stat a, b;

        if (renameat2(dir_fd, from, dir_fd, to, RENAME_NOREPLACE) >= 0)
                return 0;
        if (errno == ENOSYS || errno == EINVAL) {
                if (linkat(dir_fd, from, dir_fd, to, 0) >= 0)
                        return unlinkat(dir_fd, from, 0) < 0 ? -errno : 0;
        }
        if (errno != EEXIST)
                return -errno;
        if (fstatat(dir_fd, from, &a, AT_SYMLINK_NOFOLLOW) < 0 || fstatat(dir_fd, to, &b, AT_SYMLINK_NOFOLLOW) < 0)
                return -EEXIST;
        if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
                return -EEXIST;
        return unlinkat(dir_fd, from, 0) < 0 ? -errno : 0;
}

static int recover_one(int dir_fd, const char *name, const RingOptions *o) {
        _cleanup_(window_file_freep) WindowFile *w = NULL;
        _cleanup_close_ int fd = -EBADF;
        char final[RING_NAME_MAX], path[64];
        uint64_t cut = 0;
        struct stat st;
        int r;

        fd = openat(dir_fd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        r = window_file_open(path, /* verify= */ true, &w);
        if (r == -EBADMSG || r == -EPROTONOSUPPORT) {
                /* Died before the header was complete: nothing in it can be read. */
                if (st.st_nlink > 1)
                        return 0;
                if (unlinkat(dir_fd, name, 0) < 0)
                        return -errno;
                emit(o, RING_EVENT_DISCARDED, name, "no valid window header", (uint64_t) st.st_size);
                return 0;
        }
        if (r < 0)
                return r;
        if (w->size > w->stats.good_end_offset) {
                cut = w->size - w->stats.good_end_offset;
                if (ftruncate(fd, (off_t) w->stats.good_end_offset) < 0)
                        return -errno;
        }
        if (fsync(fd) < 0)
                return -errno;

        snprintf(final, sizeof final, "%.*s", (int) (strlen(name) - strlen(".partial")), name);
        r = rename_noreplace(dir_fd, name, final);
        if (r < 0)
                return r;
        emit(o, RING_EVENT_RECOVERED, final, cut > 0 ? "cut an unfinished chunk" : "finalized", cut);
        return 0;
}

int ring_store_recover(int dir_fd, const RingOptions *o) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        r = opendir_at(dir_fd, ".", 0, &d);
        if (r < 0)
                return r;
        /* One window that cannot be finalized (an I/O error on a bad sector, a name that is not a
         * file) is said and left as it is: the ring goes on without it rather than not at all. */
        while ((de = readdir(d)))
                if (endswith(de->d_name, ".tpw.partial")) {
                        int k = recover_one(dir_fd, de->d_name, o);
                        if (k == -ENOMEM)
                                return k;
                        if (k < 0)
                                emit(o, RING_EVENT_UNRECOVERED, de->d_name, strerror(-k), 0);
                }
        if (fsync(dir_fd) < 0 && r == 0)
                r = -errno;
        return r;
}

/* ---------------------------------------------------------------- windows */

static int finalize_window(RingStore *rs) {
        int r = 0;

        if (rs->fd < 0)
                return 0;
        if (rs->offset <= rs->header_bytes) {
                /* Not one chunk: the window holds nothing worth a file (a bundle's link keeps its copy). */
                rs->fd = safe_close(rs->fd);
                if (unlinkat(rs->dir_fd, rs->partial_name, 0) < 0 && errno != ENOENT)
                        return -errno;
                return 0;
        }
        if (fsync(rs->fd) < 0)
                r = -errno;
        rs->fd = safe_close(rs->fd);
        if (renameat(rs->dir_fd, rs->partial_name, rs->dir_fd, rs->final_name) < 0) {
                if (r == 0)
                        r = -errno;
        } else
                rs->windows_finished++;
        if (fsync(rs->dir_fd) < 0 && r == 0)
                r = -errno;
        return r;
}

/* The ring's limits, and what orders its windows (an emergency removes the oldest whatever the
 * limits). */
static VacuumLimits vacuum_limits(const RingStore *rs) {
        return (VacuumLimits) {
                .max_age_usec = rs->o.max_age_usec,
                .max_bytes = rs->o.max_bytes,
                .keep_free_bytes = rs->o.keep_free_bytes,
                .boot_id = rs->info.boot_id,
                .now_mono_usec = now_usec(CLOCK_MONOTONIC),
                .cache = rs->vacuum_cache,
        };
}

static int write_all_at(int fd, const void *p, size_t n, uint64_t off) {
        size_t done = 0;

        while (done < n) {
                ssize_t k = pwrite(fd, (const uint8_t *) p + done, n - done, (off_t) (off + done));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                done += (size_t) k;
        }
        return 0;
}

static void on_vacuum_removed(const char *name, VacuumReason reason, uint64_t bytes, void *userdata) {
        RingStore *rs = userdata;
        emit(&rs->o, RING_EVENT_REMOVED, name, vacuum_reason_to_string(reason), bytes);
}

/* Writes buf at rs->offset; on ENOSPC frees space by retention and retries; cuts a failed write off again. */
static int append_with_retry(RingStore *rs, const void *buf, size_t n) {
        int r;

        for (;;) {
                r = write_all_at(rs->fd, buf, n, rs->offset);
                if (r >= 0)
                        break;
                (void) ftruncate(rs->fd, (off_t) rs->offset);
                if (r != -ENOSPC && r != -EDQUOT)
                        return r;
                VacuumLimits l = vacuum_limits(rs);
                r = store_vacuum(rs->dir_fd, &l, now_usec(CLOCK_REALTIME), /* emergency= */ true, on_vacuum_removed, rs,
                                 NULL);
                if (r == -ENOSPC)
                        return r;
                if (r < 0)
                        return r;
        }
        if (rs->o.sync && fdatasync(rs->fd) < 0)
                return -errno;
        rs->offset += n;
        return 0;
}

static int open_window(RingStore *rs, uint64_t now_realtime_usec) {
        uint64_t span = rs->o.window_usec, start = now_realtime_usec, end;
        _cleanup_close_ int fd = -EBADF;
        int r;

        /* Windows end on multiples of the span in wall-clock time, so they line up across restarts. */
        end = (start / span + 1) * span;
        for (unsigned attempt = 0;; attempt++) {
                r = ring_window_name(rs->info.host, start, end - start, true, rs->partial_name,
                                     sizeof rs->partial_name);
                if (r < 0)
                        return r;
                r = ring_window_name(rs->info.host, start, end - start, false, rs->final_name,
                                     sizeof rs->final_name);
                if (r < 0)
                        return r;
                /* The finalized name must be free too, or the rename at the end would replace a window
                 * (one recovered after a crash in this same second, say). */
                if (faccessat(rs->dir_fd, rs->final_name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
                        fd = openat(rs->dir_fd, rs->partial_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                                    0640);
                else
                        errno = EEXIST;
                if (fd >= 0 || errno != EEXIST || attempt >= 60)
                        break;
                /* A window of the same second exists (a restart): name this one a second later. */
                start = (start / USEC_PER_SEC + 1) * USEC_PER_SEC;
                if (start >= end)
                        end = start + span;
        }
        if (fd < 0)
                return -errno;
        r = window_header_encode(&rs->info, start, end - start, &rs->out);
        if (r < 0)
                return r;
        rs->fd = TAKE_FD(fd);
        rs->offset = 0;
        r = append_with_retry(rs, rs->out.data, rs->out.len);
        if (r < 0) {
                rs->fd = safe_close(rs->fd);
                (void) unlinkat(rs->dir_fd, rs->partial_name, 0);
                return r;
        }
        rs->header_bytes = rs->out.len;
        r = chunk_writer_restart_chain(rs->cw); /* a window file never depends on another */
        if (r < 0)
                return r;
        rs->window_start_usec = start;
        rs->window_end_usec = end;
        rs->written_first_ns = UINT64_MAX;
        rs->written_last_ns = 0;
        return 0;
}

int ring_store_open(const char *ring_dir, const RingOptions *o, const WindowHeaderInfo *h, RingStore **ret) {
        _cleanup_(ring_store_freep) RingStore *rs = NULL;
        const char *src[4] = { h->host, h->boot_id, h->kernel_release, h->event };
        int r;

        rs = calloc(1, sizeof(RingStore));
        if (!rs)
                return -ENOMEM;
        rs->dir_fd = rs->fd = -EBADF;
        rs->o = o ? *o : (RingOptions) {};
        if (rs->o.window_usec == 0)
                rs->o.window_usec = RING_WINDOW_USEC_DEFAULT;
        if (rs->o.window_usec < USEC_PER_SEC)
                return -EINVAL;
        if (rs->o.chunk_usec == 0)
                rs->o.chunk_usec = RING_CHUNK_USEC_DEFAULT;
        if (rs->o.max_age_usec == 0)
                rs->o.max_age_usec = RING_MAX_AGE_USEC_DEFAULT;
        if (rs->o.compress_level == 0)
                rs->o.compress_level = COMPRESS_LEVEL_DEFAULT;

        rs->info = *h;
        for (size_t i = 0; i < 4; i++) {
                rs->info_strings[i] = strndup(src[i] ?: "", WINDOW_HEADER_STRING_BYTES_MAX);
                if (!rs->info_strings[i])
                        return -ENOMEM;
        }
        rs->info.host = rs->info_strings[0];
        rs->info.boot_id = rs->info_strings[1];
        rs->info.kernel_release = rs->info_strings[2];
        rs->info.event = rs->info_strings[3];

        rs->dir = strdup(ring_dir);
        if (!rs->dir)
                return -ENOMEM;
        r = mkdir_p(ring_dir, 0750);
        if (r < 0)
                return r;
        rs->dir_fd = open(ring_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rs->dir_fd < 0)
                return -errno;
        r = ring_store_recover(rs->dir_fd, &rs->o);
        if (r < 0)
                return r;

        rs->cw = chunk_writer_new(rs->o.compress_level);
        rs->vacuum_cache = vacuum_cache_new();
        if (!rs->cw || !rs->vacuum_cache)
                return -ENOMEM;
        chunk_writer_set_clock(rs->cw, &h->clock);
        chunk_writer_set_frequency(rs->cw, h->freq_hz);
        chunk_writer_set_time_resolution(rs->cw, h->time_resolution_usec);
        if (rs->o.chain_chunks > 0)
                chunk_writer_set_chain(rs->cw, rs->o.chain_chunks);
        r = open_window(rs, now_usec(CLOCK_REALTIME));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(rs);
        return 0;
}

static int flush_chunk(RingStore *rs, bool lost_alone);

RingStore *ring_store_free(RingStore *rs) {
        if (!rs)
                return NULL;
        if (rs->fd >= 0) {
                (void) flush_chunk(rs, true);
                (void) finalize_window(rs);
        }
        chunk_writer_free(rs->cw);
        vacuum_cache_free(rs->vacuum_cache);
        byte_buf_done(&rs->out);
        for (size_t i = 0; i < 4; i++)
                free(rs->info_strings[i]);
        safe_close(rs->dir_fd);
        free(rs->dir);
        free(rs);
        return NULL;
}

int ring_store_add_sample(RingStore *rs, const Sample *s) {
        int r;

        if (chunk_writer_n_samples(rs->cw) >= RING_CHUNK_SAMPLES_MAX) {
                r = ring_store_flush(rs);
                if (r < 0 && r != -ENOSPC)
                        return r;
        }
        return chunk_writer_add_sample(rs->cw, s);
}

int ring_store_add_lost(RingStore *rs, uint32_t cpu, uint64_t n) {
        return chunk_writer_add_lost(rs->cw, cpu, n);
}

int ring_store_update_clock(RingStore *rs, const ClockMap *m) {
        /* Each chunk records the mapping in effect when it is written; the header keeps the first. */
        chunk_writer_set_clock(rs->cw, m);
        rs->info.clock = *m; /* and windows opened from now on carry it in their header */
        return 0;
}

/* lost_alone: also a chunk of lost counts and no samples. Such a chunk has no time, so slices
 * (which go by time) would not see its counts: they wait for the next sample, except at the end. */
static int flush_chunk(RingStore *rs, bool lost_alone) {
        uint64_t first, last;
        size_t n;
        int r;

        if (chunk_writer_is_empty(rs->cw) || (!lost_alone && chunk_writer_n_samples(rs->cw) == 0))
                return 0;
        if (rs->fd < 0) {
                r = open_window(rs, now_usec(CLOCK_REALTIME));
                if (r < 0)
                        goto drop;
        }
        r = chunk_writer_encode(rs->cw, &rs->out);
        if (r < 0)
                goto drop;
        r = append_with_retry(rs, rs->out.data, rs->out.len);
        if (r < 0)
                goto drop;
        chunk_writer_time_range(rs->cw, &first, &last);
        rs->written_first_ns = MIN(rs->written_first_ns, first);
        rs->written_last_ns = MAX(rs->written_last_ns, last);
        return chunk_writer_commit(rs->cw);

drop:
        /* Keeping the samples for a retry would let memory grow while the disk stays full. */
        n = chunk_writer_n_samples(rs->cw);
        rs->dropped_samples += n;
        emit(&rs->o, RING_EVENT_DROPPED, rs->partial_name, r == -ENOSPC ? "disk full" : "write failed", n);
        (void) chunk_writer_reset(rs->cw);
        return r;
}

int ring_store_flush(RingStore *rs) {
        return flush_chunk(rs, false);
}

bool ring_store_rotate_due(const RingStore *rs, uint64_t now_realtime_usec) {
        /* A wall clock stepped back before the window's start also ends it: names stay truthful. */
        return rs->fd < 0 || now_realtime_usec < rs->window_start_usec || now_realtime_usec >= rs->window_end_usec;
}

int ring_store_rotate(RingStore *rs, uint64_t now_realtime_usec) {
        int r, k;

        if (!ring_store_rotate_due(rs, now_realtime_usec))
                return 0;
        r = ring_store_flush(rs);
        k = finalize_window(rs);
        if (k < 0)
                return k;
        k = open_window(rs, now_realtime_usec);
        if (k < 0)
                return k;
        return r < 0 && r != -ENOSPC ? r : 1;
}

int ring_store_vacuum(RingStore *rs, uint64_t now_realtime_usec, VacuumResult *ret) {
        VacuumLimits l = vacuum_limits(rs);

        return store_vacuum(rs->dir_fd, &l, now_realtime_usec, /* emergency= */ false, on_vacuum_removed, rs, ret);
}

/* Pins the ring's file name as dest_name in dest_dirfd: a hard link, so chunks appended later reach
 * the bundle too. Where the bundles live on another file system (EXDEV) or on one without hard links
 * (EPERM, EMLINK, EOPNOTSUPP) a copy of what the file holds now instead, made again when a later pin
 * (the one after t+after) finds the ring's file grown: the bundle keeps its samples, only the ring
 * no longer counts the window as pinned, and its retention may remove it as any other. */
static int pin_file(RingStore *rs, const char *name, int dest_dirfd, const char *dest_name) {
        struct stat src, dest;

        if (linkat(rs->dir_fd, name, dest_dirfd, dest_name, 0) >= 0)
                return 0;
        if (errno == EEXIST) {
                if (fstatat(rs->dir_fd, name, &src, AT_SYMLINK_NOFOLLOW) < 0 ||
                    fstatat(dest_dirfd, dest_name, &dest, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                if (!S_ISREG(dest.st_mode))
                        return -EEXIST; /* not a window of ours: left alone */
                if ((src.st_dev == dest.st_dev && src.st_ino == dest.st_ino) || src.st_size <= dest.st_size)
                        return 0;
        } else if (errno != EXDEV && errno != EPERM && errno != EMLINK && errno != EOPNOTSUPP)
                return -errno;
        return copy_file_at(rs->dir_fd, name, dest_dirfd, dest_name);
}

static int link_window(RingStore *rs, const char *name, const char *dest_name, int dest_dirfd, char ***list,
                       size_t *n) {
        char *copy;
        int r;

        r = pin_file(rs, name, dest_dirfd, dest_name);
        if (r < 0)
                return r;
        copy = strdup(dest_name);
        if (!copy)
                return -ENOMEM;
        *list = reallocarray(*list, *n + 2, sizeof(char *));
        if (!*list) {
                free(copy);
                return -ENOMEM;
        }
        (*list)[(*n)++] = copy;
        (*list)[*n] = NULL;
        return 0;
}

int ring_store_pin(RingStore *rs, uint64_t from_perf_ns, uint64_t to_perf_ns, int dest_dirfd, char ***ret_linked) {
        _cleanup_(ring_names_freep) char **list = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        size_t n = 0;
        int r, ret = 0;

        if (from_perf_ns > to_perf_ns)
                return -EINVAL;
        /* The open window first: it holds the newest seconds, the event's. Where windows are copied
         * (the bundles on another file system) and that one fills up, the older ones are lost
         * rather than this one; a window that cannot be pinned does not keep the others from it. */
        if (rs->fd >= 0) {
                uint64_t first, last;

                chunk_writer_time_range(rs->cw, &first, &last);
                first = MIN(first, rs->written_first_ns);
                if (first == UINT64_MAX || first <= to_perf_ns) {
                        r = link_window(rs, rs->partial_name, rs->final_name, dest_dirfd, &list, &n);
                        if (r < 0)
                                ret = r;
                }
        }
        r = opendir_at(rs->dir_fd, ".", 0, &d);
        if (r < 0 && ret == 0)
                ret = r;
        while (d && (de = readdir(d))) {
                _cleanup_(window_file_freep) WindowFile *w = NULL;
                char path[PATH_MAX];
                uint64_t first = UINT64_MAX, last = 0;

                if (!endswith(de->d_name, ".tpw"))
                        continue;
                snprintf(path, sizeof path, "%s/%s", rs->dir, de->d_name);
                r = window_file_open(path, /* verify= */ false, &w);
                if (r < 0)
                        continue; /* unreadable windows are no use to a bundle */
                /* Perf clock values of another boot are not comparable with ours. */
                if (!streq(w->header.info.boot_id, rs->info.boot_id))
                        continue;
                for (size_t i = 0; i < w->n_chunks; i++)
                        if (w->chunks[i].n_samples > 0) {
                                first = MIN(first, w->chunks[i].first_ns);
                                last = MAX(last, w->chunks[i].last_ns);
                        }
                if (first > to_perf_ns || last < from_perf_ns)
                        continue;
                r = link_window(rs, de->d_name, de->d_name, dest_dirfd, &list, &n);
                if (r < 0 && ret == 0)
                        ret = r;
        }
        if (fsync(dest_dirfd) < 0 && ret == 0)
                ret = -errno;
        if (ret < 0)
                return ret;
        if (ret_linked) {
                if (!list) {
                        list = new0(char *, 1);
                        if (!list)
                                return -ENOMEM;
                }
                *ret_linked = TAKE_PTR(list);
        }
        return 0;
}

uint64_t ring_store_windows_finished(const RingStore *rs) {
        return rs->windows_finished;
}

const char *ring_store_current_name(const RingStore *rs) {
        return rs->fd >= 0 ? rs->partial_name : NULL;
}

uint64_t ring_store_window_end_usec(const RingStore *rs) {
        return rs->fd >= 0 ? rs->window_end_usec : 0;
}

uint64_t ring_store_dropped_samples(const RingStore *rs) {
        return rs->dropped_samples;
}
