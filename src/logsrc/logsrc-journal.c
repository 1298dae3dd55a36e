/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Journal follower; see logsrc-journal.h for the contract. sd_journal_get_data() returns "FIELD=value"
 * pointers that stay valid only until the next call on the journal, so every field is copied into a
 * bounded buffer of the source before the next one is read.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-id128.h>
#include <systemd/sd-journal.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/macro.h"
#include "basic/parse-util.h"
#include "basic/time-util.h"
#include "logsrc/logsrc-journal.h"
#include "logsrc/logsrc-position.h"

/* The transports whose entries we read: all but "kernel" (see the header). */
static const char *const non_kernel_transports[] = {
        "_TRANSPORT=journal", "_TRANSPORT=syslog", "_TRANSPORT=stdout",
        "_TRANSPORT=driver",  "_TRANSPORT=audit",
};

/* TASK_COMM_LEN - 1: the kernel cuts a process name (and so _COMM) to this. */
#define COMM_CHARS_MAX 15

typedef struct FieldBuf {
        char value[LOG_FIELD_BYTES_MAX + 1];
        bool present;
} FieldBuf;

struct JournalSource {
        sd_journal *journal;
        sd_event_source *io;
        sd_event_source *defer; /* continues a batch that hit JOURNAL_BATCH_MAX, and the first read */

        LogRecordHandler handler;
        LogRecordHandler context_handler;
        uint64_t context_age_usec;
        unsigned context_entries_max;
        int context_priority_max;
        void *userdata;
        const ClockMap *clock;
        ClockMap assumed_clock; /* when the owner gave none */
        char *own_identifier;
        pid_t own_pid;
        sd_id128_t boot_id;

        char *cursor_path; /* NULL: not persisting */
        char *cursor;      /* of the last entry processed */
        char *skip_cursor; /* resume: the first entry read is skipped if it is this one */
        bool cursor_dirty;

        LogSourceStats stats;
        char message[LOG_MESSAGE_BYTES_MAX + 1];
        size_t message_len;
};

/* Copies the value of field into buf (NUL-terminated, at most size - 1 bytes). Returns 1 if present,
 * 0 if absent, < 0 on error; *truncated is set if the value did not fit. */
static int journal_get_field(sd_journal *j, const char *field, char *buf, size_t size, size_t *ret_len,
                             bool *truncated) {
        const void *data;
        size_t l, fl = strlen(field), n;
        int r;

        r = sd_journal_get_data(j, field, &data, &l);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (l < fl + 1 || memcmp(data, field, fl) != 0 || ((const char *) data)[fl] != '=')
                return -EBADMSG;
        n = l - fl - 1;
        if (n > size - 1) {
                n = size - 1;
                *truncated = true;
        }
        memcpy(buf, (const char *) data + fl + 1, n);
        buf[n] = '\0';
        if (ret_len)
                *ret_len = n;
        return 1;
}

static int get_small_field(JournalSource *js, const char *field, FieldBuf *f, bool *truncated) {
        int r;

        r = journal_get_field(js->journal, field, f->value, sizeof f->value, NULL, truncated);
        f->present = r > 0;
        return r < 0 ? r : 0;
}

/* The entry's PRIORITY into *ret: 0-7, or -1 where it has none a syslog level can be (missing, not a
 * number, above 7), as the entry's record and the backfill's count both take it. */
static int entry_priority(JournalSource *js, int *ret, bool *truncated) {
        FieldBuf prio;
        int r;

        r = get_small_field(js, "PRIORITY", &prio, truncated);
        if (r < 0)
                return r;
        if (!prio.present || safe_atoi(prio.value, ret) < 0 || *ret < 0 || *ret > 7)
                *ret = -1;
        return 0;
}

static const char *field_or_null(const FieldBuf *f) {
        return f->present ? f->value : NULL;
}

static bool journal_source_is_own(JournalSource *js, pid_t pid, const FieldBuf *comm,
                                  const FieldBuf *ident) {
        if (!js->own_identifier || pid != js->own_pid)
                return false;
        if (comm->present && strncmp(comm->value, js->own_identifier, COMM_CHARS_MAX) == 0 &&
            strlen(comm->value) == MIN(strlen(js->own_identifier), (size_t) COMM_CHARS_MAX))
                return true;
        return ident->present && streq(ident->value, js->own_identifier);
}

static int journal_source_remember_cursor(JournalSource *js) {
        char *c = NULL;
        int r;

        r = sd_journal_get_cursor(js->journal, &c);
        if (r < 0)
                return r;
        free(js->cursor);
        js->cursor = c;
        js->cursor_dirty = true;
        return 0;
}

/* Handles the entry the journal is positioned on; context: an entry before where reading begins,
 * for the context handler only. */
static void journal_source_handle_entry(JournalSource *js, bool context) {
        FieldBuf unit, comm, exe, transport, ident, uid, pid, fac;
        LogRecord rec = LOG_RECORD_NULL;
        bool truncated = false;
        uint64_t mono = 0, realtime = 0;
        sd_id128_t boot;
        uint32_t v;
        int r;

        if (!context && js->skip_cursor) {
                r = sd_journal_test_cursor(js->journal, js->skip_cursor);
                js->skip_cursor = mfree(js->skip_cursor);
                if (r > 0) {
                        js->stats.skipped_old++;
                        return;
                }
                /* The saved entry is gone (vacuumed) and we landed on a later one: deliver it. */
        }

        if (!context)
                (void) journal_source_remember_cursor(js);

        r = get_small_field(js, "_TRANSPORT", &transport, &truncated);
        if (r >= 0 && transport.present && streq(transport.value, "kernel")) {
                if (!context)
                        js->stats.skipped_kernel++;
                return;
        }

        r = journal_get_field(js->journal, "MESSAGE", js->message, sizeof js->message, &js->message_len,
                              &truncated);
        if (r <= 0) {
                if (!context)
                        js->stats.malformed++;
                return;
        }

        if (get_small_field(js, "_SYSTEMD_UNIT", &unit, &truncated) < 0 ||
            get_small_field(js, "_COMM", &comm, &truncated) < 0 ||
            get_small_field(js, "_EXE", &exe, &truncated) < 0 ||
            get_small_field(js, "SYSLOG_IDENTIFIER", &ident, &truncated) < 0 ||
            get_small_field(js, "_UID", &uid, &truncated) < 0 ||
            get_small_field(js, "_PID", &pid, &truncated) < 0 ||
            entry_priority(js, &rec.priority, &truncated) < 0 ||
            get_small_field(js, "SYSLOG_FACILITY", &fac, &truncated) < 0) {
                if (!context)
                        js->stats.malformed++;
                return;
        }
        if (truncated && !context)
                js->stats.truncated++;

        rec.source = LOG_SOURCE_JOURNAL;
        rec.kernel_origin = false; /* kernel entries are taken from kmsg, see the header */
        if (pid.present && safe_atoi(pid.value, &rec.pid) < 0)
                rec.pid = 0;
        if (journal_source_is_own(js, rec.pid, &comm, &ident)) {
                if (!context)
                        js->stats.skipped_own++;
                return;
        }
        if (uid.present && safe_atou32(uid.value, &v) >= 0)
                rec.uid = (uid_t) v;
        if (fac.present && safe_atoi(fac.value, &rec.facility) < 0)
                rec.facility = -1;

        if (sd_journal_get_realtime_usec(js->journal, &realtime) >= 0)
                rec.realtime_usec = realtime;
        if (sd_journal_get_monotonic_usec(js->journal, &mono, &boot) >= 0) {
                rec.source_usec = mono;
                if (sd_id128_equal(boot, js->boot_id) && mono < UINT64_MAX / NSEC_PER_USEC) {
                        rec.t_ns = clock_map_mono_to_perf(js->clock, mono * NSEC_PER_USEC);
                        rec.t_error_ns = js->clock->error_ns;
                }
        }

        rec.message = js->message;
        rec.message_len = js->message_len;
        rec.message_escaped = js->message;
        rec.message_escaped_len = js->message_len;
        rec.unit = field_or_null(&unit);
        rec.comm = field_or_null(&comm);
        rec.exe = field_or_null(&exe);
        rec.transport = field_or_null(&transport);
        rec.identifier = field_or_null(&ident);
        rec.cursor = context ? NULL : js->cursor; /* the cursor is the last entry read for the rules */

        if (context) {
                if (rec.t_ns > 0) /* of this boot: another's has no place on the perf clock */
                        (void) js->context_handler(&rec, js->userdata);
                return;
        }
        js->stats.records++;
        if (js->handler(&rec, js->userdata) < 0)
                js->stats.handler_errors++;
}

/* Reads up to JOURNAL_BATCH_MAX entries. Returns 0 when caught up, 1 if more may be waiting, < 0 on error.
 */
static int journal_source_read(JournalSource *js) {
        for (unsigned i = 0; i < JOURNAL_BATCH_MAX; i++) {
                int r;

                r = sd_journal_next(js->journal);
                if (r < 0)
                        return r;
                if (r == 0)
                        return 0;
                journal_source_handle_entry(js, /* context= */ false);
        }
        return 1;
}

static void journal_source_run(JournalSource *js) {
        int r;

        r = journal_source_read(js);
        /* Handle, then save: the cursor never runs ahead of what the handler has seen. */
        (void) journal_source_save_position(js);
        if (r > 0)
                (void) sd_event_source_set_enabled(js->defer, SD_EVENT_ONESHOT);
}

static int on_journal_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        JournalSource *js = userdata;

        (void) sd_journal_process(js->journal);
        journal_source_run(js);
        return 0;
}

static int on_journal_defer(sd_event_source *s, void *userdata) {
        journal_source_run(userdata);
        return 0;
}

int journal_source_save_position(JournalSource *js) {
        int r;

        assert(js);

        if (!js->cursor_path || !js->cursor_dirty || !js->cursor)
                return 0;
        r = journal_cursor_save(js->cursor_path, js->cursor);
        if (r < 0) {
                js->stats.position_errors++;
                return r;
        }
        js->cursor_dirty = false;
        return 0;
}

static int journal_source_add_matches(JournalSource *js, const char *const *matches) {
        size_t n = 0;
        int r;

        for (; matches && matches[n]; n++)
                if (n >= JOURNAL_MATCHES_MAX || !strchr(matches[n], '='))
                        return -EINVAL;

        /* Each owner match ANDed with "any non-kernel transport", the terms ORed. */
        for (size_t i = 0; i < MAX(n, (size_t) 1); i++) {
                if (n > 0) {
                        r = sd_journal_add_match(js->journal, matches[i], 0);
                        if (r < 0)
                                return r;
                }
                for (size_t t = 0; t < ELEMENTSOF(non_kernel_transports); t++) {
                        r = sd_journal_add_match(js->journal, non_kernel_transports[t], 0);
                        if (r < 0)
                                return r;
                }
                r = sd_journal_add_disjunction(js->journal);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Whether the context would keep the entry the journal is on: of this boot, at most as verbose
 * as the context keeps (the entries that count against the backfill's limit). */
static bool journal_entry_for_context(JournalSource *js) {
        sd_id128_t boot;
        uint64_t mono;
        bool truncated = false;
        int p;

        if (sd_journal_get_monotonic_usec(js->journal, &mono, &boot) < 0 || !sd_id128_equal(boot, js->boot_id))
                return false;
        if (js->context_priority_max < 0 || entry_priority(js, &p, &truncated) < 0)
                return true;
        return p < 0 || p <= js->context_priority_max; /* as log_context_admits() takes it */
}

/*
 * The entries before where reading begins (the saved cursor, or the tail), those of the last
 * context_age_usec, with at most context_entries_max of those the context keeps among them, oldest
 * first, to the context handler: an earlier run read them, or they came before a first start, and
 * a bundle soon after the start shows them. Leaves the journal anywhere: the caller seeks again.
 */
static void journal_source_backfill(JournalSource *js, const char *cursor) {
        uint64_t now = now_usec(CLOCK_REALTIME), cutoff, t;
        unsigned n = 0, steps = 0;
        bool on_older = false;
        int r;

        if (!js->context_handler || js->context_entries_max == 0)
                return;
        cutoff = now > js->context_age_usec ? now - js->context_age_usec : 0;
        r = cursor ? sd_journal_seek_cursor(js->journal, cursor) : sd_journal_seek_tail(js->journal);
        if (r < 0)
                return;
        /* Back to the oldest entry wanted: the one where the walk stops is in (the head, or the
         * last the limit allows) or out (too old). Only what the context would keep counts. */
        while (n < js->context_entries_max) {
                r = sd_journal_previous(js->journal);
                if (r <= 0)
                        break;
                if (sd_journal_get_realtime_usec(js->journal, &t) >= 0 && t < cutoff) {
                        on_older = true;
                        break;
                }
                steps++;
                if (journal_entry_for_context(js))
                        n++;
        }
        if (steps == 0)
                return;
        if (!on_older) {
                journal_source_handle_entry(js, /* context= */ true);
                steps--;
        }
        while (steps-- > 0 && sd_journal_next(js->journal) > 0)
                journal_source_handle_entry(js, /* context= */ true);
}

static int journal_source_seek(JournalSource *js, bool from_start, uint64_t since_realtime_usec) {
        _cleanup_free_ char *cursor = NULL;
        int r;

        if (js->cursor_path) {
                r = journal_cursor_load(js->cursor_path, &cursor);
                if (r >= 0 && sd_journal_seek_cursor(js->journal, cursor) >= 0) {
                        journal_source_backfill(js, cursor);
                        r = sd_journal_seek_cursor(js->journal, cursor);
                        if (r < 0)
                                return r;
                        js->skip_cursor = TAKE_PTR(cursor);
                        return 0;
                }
                /* -ENOENT: first start; -EBADMSG or a cursor sd-journal rejects: start as if first. */
                if (r < 0 && r != -ENOENT && r != -EBADMSG)
                        return r;
        }

        if (from_start)
                return sd_journal_seek_head(js->journal);
        if (since_realtime_usec > 0)
                return sd_journal_seek_realtime_usec(js->journal, since_realtime_usec);

        journal_source_backfill(js, NULL);
        r = sd_journal_seek_tail(js->journal);
        if (r < 0)
                return r;
        /* Step onto the last entry so the next sd_journal_next() returns only new ones, and save its
         * cursor now: a restart before any new entry then still resumes here, not at a later tail. */
        r = sd_journal_previous(js->journal);
        if (r < 0)
                return r;
        if (r == 0)
                /* No entry matches yet. Left at the tail, sd-journal resolves "tail" lazily at the first
                 * sd_journal_next() and returns only the last of the entries that arrived meanwhile;
                 * from the head it returns all of them, and every one of them is new. */
                return sd_journal_seek_head(js->journal);
        if (journal_source_remember_cursor(js) >= 0)
                (void) journal_source_save_position(js);
        return 0;
}

int journal_source_new(sd_event *e, const JournalSourceOptions *o, LogRecordHandler handler, void *userdata,
                       JournalSource **ret) {
        _cleanup_(journal_source_freep) JournalSource *js = NULL;
        uint64_t usage = 0;
        int r, fd, events;

        assert(e);
        assert(o);
        assert(handler);
        assert(ret);

        if (o->namespace && o->directory)
                return -EINVAL;

        js = new0(JournalSource, 1);
        if (!js)
                return -ENOMEM;
        js->handler = handler;
        js->context_handler = o->context_handler;
        js->context_age_usec = o->context_age_usec;
        js->context_entries_max = o->context_entries_max;
        js->context_priority_max = o->context_priority_max;
        js->userdata = userdata;
        js->own_pid = getpid();
        if (o->clock)
                js->clock = o->clock;
        else {
                clock_map_assume(&js->assumed_clock);
                js->clock = &js->assumed_clock;
        }
        if (o->own_identifier) {
                js->own_identifier = strdup(o->own_identifier);
                if (!js->own_identifier)
                        return -ENOMEM;
        }
        r = sd_id128_get_boot(&js->boot_id);
        if (r < 0)
                return r;

        if (o->directory)
                r = sd_journal_open_directory(&js->journal, o->directory, 0);
        else if (o->namespace)
                r = sd_journal_open_namespace(&js->journal, o->namespace, SD_JOURNAL_LOCAL_ONLY);
        else
                r = sd_journal_open(&js->journal, SD_JOURNAL_LOCAL_ONLY);
        if (r < 0)
                return r;

        /* sd-journal opens "successfully" with no files at all; tell the owner there is no journal. */
        r = sd_journal_get_usage(js->journal, &usage);
        if (r < 0 || usage == 0)
                return -ENODATA;

        /* Bounds what sd-journal decompresses for us; longer values are cut and counted. */
        r = sd_journal_set_data_threshold(js->journal, LOG_MESSAGE_BYTES_MAX + 64);
        if (r < 0)
                return r;

        r = journal_source_add_matches(js, o->matches);
        if (r < 0)
                return r;

        if (o->state_dir) {
                r = logsrc_state_path(o->state_dir, JOURNAL_CURSOR_FILE, &js->cursor_path);
                if (r < 0)
                        return r;
        }
        r = journal_source_seek(js, o->from_start, o->since_realtime_usec);
        if (r < 0)
                return r;

        fd = sd_journal_get_fd(js->journal);
        if (fd < 0)
                return fd;
        events = sd_journal_get_events(js->journal);
        if (events < 0)
                return events;
        r = sd_event_add_io(e, &js->io, fd, (uint32_t) events, on_journal_io, js);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(js->io, "journal");

        /* Entries already there after a resume are read on the first loop iteration. */
        r = sd_event_add_defer(e, &js->defer, on_journal_defer, js);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(js->defer, SD_EVENT_ONESHOT);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(js->defer, "journal-batch");

        *ret = TAKE_PTR(js);
        return 0;
}

JournalSource *journal_source_free(JournalSource *js) {
        if (!js)
                return NULL;
        (void) journal_source_save_position(js);
        sd_event_source_disable_unref(js->io);
        sd_event_source_disable_unref(js->defer);
        sd_journal_close(js->journal);
        free(js->own_identifier);
        free(js->cursor_path);
        free(js->cursor);
        free(js->skip_cursor);
        return mfree(js);
}

void journal_source_get_stats(const JournalSource *js, LogSourceStats *ret) {
        assert(js);
        assert(ret);
        *ret = js->stats;
}
