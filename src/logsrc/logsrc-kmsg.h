/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel log follower. It reads /dev/kmsg on an sd-event loop, one record per read(), parses each
 * record (logsrc-kmsg-parse.h) and hands it to the owner as a LogRecord. It owns: the kmsg fd, the
 * sequence-number bookkeeping (gaps and EPIPE overruns are counted as lost, never fatal), the position
 * file <state_dir>/state/kmsg-position, and skipping tprofd's own messages. It leaves to the owner what
 * to do with a record (rules) and when to stop.
 *
 * Where it starts:
 *   - a saved position from this boot: right after the saved sequence number (records between the
 *     saved one and the oldest still in the kernel buffer are counted as lost);
 *   - no position, or one from another boot: at the end of the buffer (the records present at
 *     kmsg_source_new() are skipped and counted in skipped_old), or at the start of the buffer if
 *     from_start is set;
 *   - a position from another boot with from_start_on_new_boot: at the start of the buffer. Then a
 *     daemon that ran before the reboot sees this boot's early records (a hang during boot), while a
 *     first installation does not replay a buffer nobody asked about.
 *
 * Exactly once: a record is handed to the handler first, then the position moves past it, and the
 * position is saved (atomically) after every batch of reads and on kmsg_source_free(). A clean stop
 * and restart therefore neither repeats nor skips a record; a crash can repeat at most the records
 * of the last batch (KMSG_BATCH_MAX), never skip one.
 *
 * Recorded-file mode: when path is a regular file it is read once from the start as `cat /dev/kmsg`
 * writes it (each record a header line plus " KEY=value" continuation lines), without a position
 * file; at end of file the source stops and calls on_end. Sequence gaps in the file count as lost.
 *
 * Origin: a record the kernel logged has facility 0 (LogRecord.kernel_origin). Anything user space
 * writes into /dev/kmsg has a facility != 0: devkmsg_write() in kernel/printk/printk.c starts from
 * facility LOG_USER and only takes the writer's facility when it is not 0, so "<6>text" is stored as
 * PRI 14 (user.info) and a line without a prefix as user.warning. tests/test-logsrc-kmsg.sh checks it.
 */
#pragma once

#include <stdbool.h>

#include <systemd/sd-event.h>

#include "basic/clock-map.h"
#include "logsrc/log-record.h"

#define KMSG_PATH_DEFAULT "/dev/kmsg"
/* Records handled per wakeup before yielding to the rest of the loop and saving the position. */
#define KMSG_BATCH_MAX 256U

typedef struct KmsgSource KmsgSource;

/* Called once when a recorded file has been read to its end (or a read error ended the source). */
typedef void (*KmsgEndHandler)(KmsgSource *k, int error, void *userdata);

typedef struct KmsgSourceOptions {
        const char *path;            /* NULL or "/dev/kmsg", or a recorded file of raw records */
        const char *state_dir;       /* position under <state_dir>/state/; NULL: do not persist */
        bool from_start;             /* without a position of this boot, read the whole buffer */
        bool from_start_on_new_boot; /* with a position of an earlier boot, read the whole buffer */
        const ClockMap *clock;       /* for realtime_usec; borrowed, may be updated; NULL: none */
        const char *own_identifier;  /* skip "<own_identifier>[<our pid>]: ..." records; NULL: none */
        KmsgEndHandler on_end;       /* recorded-file mode: end of file; may be NULL */
        /* The device's records that the rules do not see, read at the start: those up to the
         * saved position (an earlier run handled them) and, on a first start at the end, the
         * whole buffer. They are the recent lines a bundle of an event soon after the start
         * shows, a resumed incident's among them. May be NULL. */
        LogRecordHandler context_handler;
} KmsgSourceOptions;

/*
 * Opens the source and attaches it to e (io source for the device, defer source for a file). Handler
 * and on_end get userdata. Returns 0, or -errno from open/lseek/reading the boot id/the state dir.
 */
int kmsg_source_new(sd_event *e, const KmsgSourceOptions *o, LogRecordHandler handler, void *userdata,
                    KmsgSource **ret);

/* Saves the position (if persisting) and frees. Accepts NULL; returns NULL. */
KmsgSource *kmsg_source_free(KmsgSource *k);

/* Saves the position now if it moved since the last save. 0 if saved or nothing to do, < 0 on error. */
int kmsg_source_save_position(KmsgSource *k);

void kmsg_source_get_stats(const KmsgSource *k, LogSourceStats *ret);

/* True once a recorded file has been read to its end. Always false for /dev/kmsg. */
bool kmsg_source_at_end(const KmsgSource *k);

static inline void kmsg_source_freep(KmsgSource **k) {
        if (*k)
                *k = kmsg_source_free(*k);
}
