/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /dev/kmsg follower; see logsrc-kmsg.h for the contract. The device gives one record per read() and
 * keeps a per-open-file position in sequence numbers: lseek(SEEK_DATA) goes to the oldest record still
 * buffered, SEEK_END to the next one to be logged, and read() fails with EPIPE once when records we
 * had not read yet were overwritten (the next read() returns the oldest record still there).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/macro.h"
#include "logsrc/logsrc-kmsg-parse.h"
#include "logsrc/logsrc-kmsg.h"
#include "logsrc/logsrc-position.h"

struct KmsgSource {
        sd_event_source *io;    /* device mode */
        sd_event_source *defer; /* file mode */
        int fd;                 /* device mode */
        FILE *file;             /* file mode */
        bool file_mode;
        bool at_end;

        LogRecordHandler handler;
        KmsgEndHandler on_end;
        void *userdata;
        const ClockMap *clock;
        char *own_prefix; /* "tprofd[1234]:" */

        char *position_path; /* NULL: not persisting */
        char boot_id[BOOT_ID_STRING_MAX];
        bool have_last;    /* last_seq is meaningful */
        uint64_t last_seq; /* last sequence number processed (delivered or deliberately skipped) */
        bool position_dirty;
        LogRecordHandler context_handler;
        bool have_resumed;   /* resumed after a saved position of this boot, */
        uint64_t resumed_seq; /* this one: records up to it go to the context handler only */

        LogSourceStats stats;
        KmsgRecord *record; /* parse target, large */
        char *buf;          /* KMSG_RECORD_BYTES_MAX + 1 */
};

/* Accounts for one well-formed record's sequence number. Returns true if it should be delivered. */
static bool kmsg_source_account_seq(KmsgSource *k, uint64_t seq) {
        if (k->have_last && seq <= k->last_seq) {
                if (!k->file_mode) {
                        /* At or before the saved position (resume), or the kernel repeating itself. */
                        k->stats.skipped_old++;
                        return false;
                }
                /* A recorded file may hold several boots one after another: start counting afresh. */
        } else if (k->have_last && seq > k->last_seq + 1)
                k->stats.lost += seq - k->last_seq - 1;

        k->have_last = true;
        k->last_seq = seq;
        k->position_dirty = true;
        return true;
}

static bool kmsg_source_is_own(KmsgSource *k, const KmsgRecord *rec) {
        size_t l;

        if (!k->own_prefix || rec->facility == 0)
                return false;
        l = strlen(k->own_prefix);
        return rec->message_len >= l && memcmp(rec->message, k->own_prefix, l) == 0;
}

/* Hands a record the rules do not see to the context handler. */
static void kmsg_source_context(KmsgSource *k) {
        LogRecord rec;

        if (!k->context_handler || kmsg_source_is_own(k, k->record))
                return;
        kmsg_record_to_log_record(k->record, k->clock, &rec);
        (void) k->context_handler(&rec, k->userdata);
}

/* Parses and delivers one raw record of n bytes in k->buf. deliver=false only moves the position. */
static void kmsg_source_handle_raw(KmsgSource *k, size_t n, bool deliver) {
        LogRecord rec;
        int r;

        r = kmsg_record_parse(k->buf, n, k->record, /* reterr_reason= */ NULL);
        if (r < 0) {
                k->stats.malformed++;
                return;
        }
        if (!deliver) {
                /* Skipping the backlog on a first start: gaps in it are nothing we missed. */
                k->have_last = true;
                k->last_seq = k->record->seq;
                k->position_dirty = true;
                k->stats.skipped_old++;
                kmsg_source_context(k);
                return;
        }
        if (!kmsg_source_account_seq(k, k->record->seq)) {
                if (k->have_resumed && k->record->seq <= k->resumed_seq)
                        kmsg_source_context(k); /* handled by the earlier run, not by this one */
                return;
        }
        if (kmsg_source_is_own(k, k->record)) {
                k->stats.skipped_own++;
                return;
        }

        kmsg_record_to_log_record(k->record, k->clock, &rec);
        k->stats.records++;
        if (k->handler(&rec, k->userdata) < 0)
                k->stats.handler_errors++;
}

/*
 * Reads records from the device until it has none (returns 0), max records were read (returns 1) or
 * an unexpected error (< 0). EPIPE is counted and reading goes on: the gap shows in the sequence
 * numbers and is counted as lost there.
 */
static int kmsg_source_read_device(KmsgSource *k, unsigned max, bool deliver) {
        for (unsigned i = 0; i < max; i++) {
                ssize_t n;

                n = read(k->fd, k->buf, KMSG_RECORD_BYTES_MAX);
                if (n < 0) {
                        if (errno == EAGAIN)
                                return 0;
                        if (errno == EINTR)
                                continue;
                        if (errno == EPIPE) {
                                k->stats.overruns++;
                                continue;
                        }
                        if (errno == EINVAL) {
                                /* A record larger than our buffer (never with KMSG_RECORD_BYTES_MAX
                                 * over the kernel's 8 KiB CONSOLE_EXT_LOG_MAX): the kernel steps past
                                 * it before it refuses it (devkmsg_read(), 3.10-7.1), so reading goes
                                 * on after it. */
                                k->stats.malformed++;
                                continue;
                        }
                        return -errno;
                }
                if (n == 0)
                        return 0;
                kmsg_source_handle_raw(k, (size_t) n, deliver);
        }
        return 1;
}

/* Reads one line of at most size - *n bytes into buf + *n. Returns 1 if a line was read (*overlong set
 * if it did not fit; the rest of it is consumed), 0 at EOF with nothing read, < 0 on error. */
static int read_line_bounded(FILE *f, char *buf, size_t size, size_t *n, bool *overlong) {
        bool any = false;
        int c;

        while ((c = getc_unlocked(f)) != EOF) {
                any = true;
                if (*n < size)
                        buf[(*n)++] = (char) c;
                else
                        *overlong = true;
                if (c == '\n')
                        return 1;
        }
        if (ferror(f))
                return -EIO;
        return any ? 1 : 0;
}

/* Assembles the next record of a recorded file: a header line and its " KEY=value" lines. Returns 1
 * with the record in k->buf (*ret_n bytes), 0 at the end of the file, < 0 on error. */
static int kmsg_source_read_file_record(KmsgSource *k, size_t *ret_n, bool *ret_overlong) {
        bool overlong = false;
        size_t n = 0;
        int r, c;

        for (;;) {
                r = read_line_bounded(k->file, k->buf, KMSG_RECORD_BYTES_MAX, &n, &overlong);
                if (r <= 0)
                        return r;
                if (!(n == 1 && k->buf[0] == '\n'))
                        break;
                n = 0; /* blank line between records: not a record */
        }

        while ((c = getc_unlocked(k->file)) == ' ') {
                (void) ungetc(c, k->file);
                r = read_line_bounded(k->file, k->buf, KMSG_RECORD_BYTES_MAX, &n, &overlong);
                if (r < 0)
                        return r;
        }
        if (c != EOF)
                (void) ungetc(c, k->file);
        else if (ferror(k->file))
                return -EIO;

        *ret_n = n;
        *ret_overlong = overlong;
        return 1;
}

static void kmsg_source_end(KmsgSource *k, int error) {
        k->at_end = true;
        (void) sd_event_source_set_enabled(k->defer ?: k->io, SD_EVENT_OFF);
        if (k->on_end)
                k->on_end(k, error, k->userdata);
}

static int on_kmsg_file(sd_event_source *s, void *userdata) {
        KmsgSource *k = userdata;

        for (unsigned i = 0; i < KMSG_BATCH_MAX; i++) {
                bool overlong;
                size_t n;
                int r;

                r = kmsg_source_read_file_record(k, &n, &overlong);
                if (r <= 0) {
                        kmsg_source_end(k, r);
                        return 0;
                }
                if (overlong) {
                        k->stats.malformed++;
                        continue;
                }
                kmsg_source_handle_raw(k, n, /* deliver= */ true);
        }
        return 0;
}

static int on_kmsg_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        KmsgSource *k = userdata;
        int r;

        r = kmsg_source_read_device(k, KMSG_BATCH_MAX, /* deliver= */ true);
        /* Handle, then save: the position never runs ahead of what the handler has seen. */
        (void) kmsg_source_save_position(k);
        if (r < 0)
                kmsg_source_end(k, r);
        return 0;
}

int kmsg_source_save_position(KmsgSource *k) {
        KmsgPosition p = {};
        int r;

        assert(k);

        if (!k->position_path || !k->position_dirty || !k->have_last)
                return 0;
        memcpy(p.boot_id, k->boot_id, sizeof p.boot_id);
        p.seq = k->last_seq;
        r = kmsg_position_save(k->position_path, &p);
        if (r < 0) {
                k->stats.position_errors++;
                return r;
        }
        k->position_dirty = false;
        return 0;
}

/* Positions the fd of the device: after a saved position of this boot, or at the end or the start. */
static int kmsg_source_seek(KmsgSource *k, const KmsgSourceOptions *o) {
        bool from_start = o->from_start;
        KmsgPosition p;
        int r;

        if (k->position_path) {
                r = logsrc_read_boot_id(k->boot_id);
                if (r < 0)
                        return r;
                r = kmsg_position_load(k->position_path, &p);
                if (r >= 0 && streq(p.boot_id, k->boot_id)) {
                        /* Resume: read from the oldest record, skip up to the saved one, count what the
                         * kernel dropped since as lost. */
                        if (lseek(k->fd, 0, SEEK_DATA) < 0)
                                return -errno;
                        k->have_last = true;
                        k->last_seq = p.seq;
                        k->have_resumed = true;
                        k->resumed_seq = p.seq;
                        return 0;
                }
                /* -ENOENT: first start; -EBADMSG: unusable, start as if first; other errors are real. */
                if (r < 0 && r != -ENOENT && r != -EBADMSG)
                        return r;
                if (r >= 0 && o->from_start_on_new_boot)
                        from_start = true; /* a position of an earlier boot: this boot is all new */
        }

        if (lseek(k->fd, 0, SEEK_DATA) < 0)
                return -errno;
        if (from_start)
                return 0;

        /* Start at the end, but know where the end is: read through what is buffered now without
         * delivering it, so the position saved next is exact and a restart does not skip records
         * logged while we were down. (lseek(SEEK_END) would not tell us the sequence number.) */
        r = kmsg_source_read_device(k, UINT_MAX, /* deliver= */ false);
        if (r < 0)
                return r;
        (void) kmsg_source_save_position(k);
        return 0;
}

int kmsg_source_new(sd_event *e, const KmsgSourceOptions *o, LogRecordHandler handler, void *userdata,
                    KmsgSource **ret) {
        _cleanup_(kmsg_source_freep) KmsgSource *k = NULL;
        const char *path;
        struct stat st;
        int r;

        assert(e);
        assert(o);
        assert(handler);
        assert(ret);

        k = new0(KmsgSource, 1);
        if (!k)
                return -ENOMEM;
        k->fd = -EBADF;
        k->handler = handler;
        k->on_end = o->on_end;
        k->context_handler = o->context_handler;
        k->userdata = userdata;
        k->clock = o->clock;
        k->record = new0(KmsgRecord, 1);
        k->buf = malloc(KMSG_RECORD_BYTES_MAX + 1);
        if (!k->record || !k->buf)
                return -ENOMEM;
        if (o->own_identifier &&
            asprintf(&k->own_prefix, "%s[%d]:", o->own_identifier, (int) getpid()) < 0) {
                k->own_prefix = NULL;
                return -ENOMEM;
        }

        path = o->path ?: KMSG_PATH_DEFAULT;
        k->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (k->fd < 0)
                return -errno;
        if (fstat(k->fd, &st) < 0)
                return -errno;

        if (S_ISREG(st.st_mode)) {
                k->file_mode = true;
                k->file = fdopen(k->fd, "re");
                if (!k->file)
                        return -errno;
                k->fd = -EBADF; /* owned by the FILE now */
                r = sd_event_add_defer(e, &k->defer, on_kmsg_file, k);
                if (r < 0)
                        return r;
                /* A file is always ready to read, and sd-event keeps dispatching a pending source
                 * before others of its priority that became pending later: at the default
                 * priority a long replay would starve the timers, the control socket and SIGTERM
                 * of the same or lower priority until its end. Read it only when nothing else waits. */
                r = sd_event_source_set_priority(k->defer, SD_EVENT_PRIORITY_IDLE);
                if (r < 0)
                        return r;
                r = sd_event_source_set_enabled(k->defer, SD_EVENT_ON);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_description(k->defer, "kmsg-file");
        } else {
                if (!S_ISCHR(st.st_mode))
                        return -ENOTTY;
                if (o->state_dir) {
                        r = logsrc_state_path(o->state_dir, KMSG_POSITION_FILE, &k->position_path);
                        if (r < 0)
                                return r;
                }
                r = kmsg_source_seek(k, o);
                if (r < 0)
                        return r;
                r = sd_event_add_io(e, &k->io, k->fd, EPOLLIN, on_kmsg_io, k);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_description(k->io, "kmsg");
        }

        *ret = TAKE_PTR(k);
        return 0;
}

KmsgSource *kmsg_source_free(KmsgSource *k) {
        if (!k)
                return NULL;
        (void) kmsg_source_save_position(k);
        sd_event_source_disable_unref(k->io);
        sd_event_source_disable_unref(k->defer);
        safe_fclose(k->file);
        safe_close(k->fd);
        free(k->own_prefix);
        free(k->position_path);
        free(k->record);
        free(k->buf);
        return mfree(k);
}

void kmsg_source_get_stats(const KmsgSource *k, LogSourceStats *ret) {
        assert(k);
        assert(ret);
        *ret = k->stats;
}

bool kmsg_source_at_end(const KmsgSource *k) {
        assert(k);
        return k->at_end;
}
