/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The journal follower. It reads journald's files through sd-journal on an sd-event loop (the journal
 * fd, sd_journal_process()) and hands every new entry to the owner as a LogRecord. It owns: the
 * sd_journal handle, the filter (the owner's match strings, never kernel entries), the cursor file
 * <state_dir>/state/journal-cursor, the clock mapping of entry times onto the perf clock, and skipping
 * tprofd's own entries. It leaves to the owner what to do with an entry and what to log.
 *
 * Trust: only fields journald itself writes (names starting with '_': _SYSTEMD_UNIT, _UID, _PID, _COMM,
 * _EXE, _TRANSPORT) are trusted; journald drops such fields when a client sends them, which the
 * end-to-end test proves with a forged _TRANSPORT=kernel. SYSLOG_IDENTIFIER is filled in
 * LogRecord.identifier for display only: any client can set it.
 *
 * Kernel entries: the kernel's records reach tprofd through the kmsg source, with their exact
 * sequence numbers and perf-clock stamps. So this source never delivers _TRANSPORT=kernel entries
 * (an sd-journal match restricts reading to the other transports, and every entry read is checked
 * again); LogRecord.kernel_origin is therefore always false here.
 *
 * Where it starts: after the entry of the saved cursor (the entry itself is skipped); with no cursor
 * at the tail (only entries added from now on), at the head if from_start, or at since_realtime_usec
 * if set (a journald that started after the owner: its entries since then are all new). The cursor is saved
 * atomically after each batch and on free, after the handler has seen the entries: as for kmsg, a
 * clean restart neither repeats nor skips an entry, a crash may repeat the last batch.
 *
 * Time: journald stamps user-space entries with CLOCK_MONOTONIC (valid for the boot they were logged
 * in) and CLOCK_REALTIME. An entry of the current boot gets t_ns = clock_map_mono_to_perf(monotonic)
 * and t_error_ns = the map's error; an entry of another boot gets t_ns = 0 (it cannot be placed on this
 * boot's perf clock) and only realtime_usec.
 */
#pragma once

#include <stdbool.h>

#include <systemd/sd-event.h>

#include "basic/clock-map.h"
#include "logsrc/log-record.h"

/* Entries handled per wakeup before yielding to the rest of the loop and saving the cursor. */
#define JOURNAL_BATCH_MAX 256U
/* Most match strings accepted. */
#define JOURNAL_MATCHES_MAX 256U

typedef struct JournalSource JournalSource;

typedef struct JournalSourceOptions {
        const char *namespace;      /* journal namespace (sd_journal_open_namespace); NULL: the system's */
        const char *directory;      /* or: read the journal files in this directory; NULL: none */
        const char *state_dir;      /* cursor under <state_dir>/state/; NULL: do not persist */
        bool from_start;            /* without a saved cursor, start at the head instead of the tail */
        uint64_t since_realtime_usec; /* without a saved cursor, start at the first entry stamped at or
                                       * after this CLOCK_REALTIME time instead of the tail (the owner
                                       * was already running when the journal appeared); 0: unset */
        const ClockMap *clock;      /* borrowed, the owner may update it; NULL: assume perf == monotonic */
        const char *own_identifier; /* skip our own entries: _COMM or SYSLOG_IDENTIFIER equal to it with
                                     * _PID = our pid; NULL: none */
        /* NULL-terminated "FIELD=value" strings, OR-ed: only entries matching one of them are read (each
         * is a sd_journal_add_match() term of its own). NULL or empty: every entry. */
        const char *const *matches;
        /* The entries before where reading begins (the saved cursor, or the tail on a first start),
         * of this boot, those of the last context_age_usec, oldest first: they go to this handler
         * only (the recent lines a bundle soon after the start shows). At most context_entries_max
         * of them at context_priority_max or more urgent (or without a priority; -1: any) are
         * counted; the rest go along. NULL: none. */
        LogRecordHandler context_handler;
        uint64_t context_age_usec;
        unsigned context_entries_max;
        int context_priority_max;
} JournalSourceOptions;

/*
 * Opens the journal and attaches it to e. Returns 0; -ENODATA if no journal file could be opened
 * (journald has never run here, or its files are not readable by us): the owner reports that once and
 * goes on without this source; -EINVAL for a bad match string; other -errno from sd-journal or the
 * state dir.
 */
int journal_source_new(sd_event *e, const JournalSourceOptions *o, LogRecordHandler handler, void *userdata,
                       JournalSource **ret);

/* Saves the cursor (if persisting) and frees. Accepts NULL; returns NULL. */
JournalSource *journal_source_free(JournalSource *j);

/* Saves the cursor now if it moved since the last save. 0 if saved or nothing to do, < 0 on error. */
int journal_source_save_position(JournalSource *j);

void journal_source_get_stats(const JournalSource *j, LogSourceStats *ret);

static inline void journal_source_freep(JournalSource **j) {
        if (*j)
                *j = journal_source_free(*j);
}
