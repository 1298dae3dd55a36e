/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One struct for every log line, whatever its source: what the log sources produce, what the rule
 * engine matches, what the log context buffer keeps and what a bundle's log holds. Plain data with
 * borrowed strings: valid for the duration of the callback that receives it; whoever keeps a
 * record copies it (log_record_dup()).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Longest message we match or keep; the kernel's own limit for one record is about 1 KiB. */
#define LOG_MESSAGE_BYTES_MAX 8192U
/* Longest value of a trusted journal field we keep. */
#define LOG_FIELD_BYTES_MAX 256U

typedef enum LogSource {
        LOG_SOURCE_KMSG,    /* /dev/kmsg or a recorded kmsg file */
        LOG_SOURCE_JOURNAL, /* sd-journal */
        LOG_SOURCE_TEXT,    /* a line handed in by tprofd --test-rules */
        _LOG_SOURCE_MAX,
        _LOG_SOURCE_INVALID = -22,
} LogSource;

const char *log_source_to_string(LogSource s);

typedef struct LogRecord {
        LogSource source;
        /*
         * True only when the kernel itself logged the record: kmsg facility 0, or journald
         * _TRANSPORT=kernel. This is what `source: kernel` rules require (unless origin: any).
         */
        bool kernel_origin;
        int priority; /* syslog level 0-7, -1 if unknown */
        int facility; /* syslog facility number (0 = kernel), -1 if unknown */

        uint64_t seq;           /* kmsg sequence number; 0 for others */
        uint64_t t_ns;          /* on the perf clock; 0 if it could not be mapped */
        uint64_t source_usec;   /* the source's own time: kmsg/_SOURCE_MONOTONIC usec, journal monotonic */
        uint64_t realtime_usec; /* CLOCK_REALTIME, 0 if unknown */
        uint64_t t_error_ns;    /* estimated error of t_ns */

        /* The message, unescaped (kmsg \xNN decoded): what rules match. May contain any byte. */
        const char *message;
        size_t message_len;
        /* The same message as the source wrote it for display (kmsg: with the kernel's \xNN escapes);
         * for journal entries the unescaped message again. NULL when the source has no such form. */
        const char *message_escaped;
        size_t message_escaped_len;

        /* Trusted fields (journald sets them, clients cannot); NULL when absent. */
        const char *unit;       /* _SYSTEMD_UNIT */
        const char *comm;       /* _COMM */
        const char *exe;        /* _EXE */
        const char *transport;  /* _TRANSPORT */
        const char *identifier; /* SYSLOG_IDENTIFIER: client-written, shown but never trusted */
        uid_t uid;              /* _UID, or (uid_t) -1 */
        pid_t pid;              /* _PID, or 0 */

        /* kmsg dictionary (SUBSYSTEM=, DEVICE=), "KEY=value\n..." or NULL. */
        const char *dictionary;
        /* journal cursor of this entry, or NULL. */
        const char *cursor;
} LogRecord;

#define LOG_RECORD_NULL                                                                                     \
        ((LogRecord){                                                                                       \
                .source = _LOG_SOURCE_INVALID,                                                              \
                .priority = -1,                                                                             \
                .facility = -1,                                                                             \
                .uid = (uid_t) -1,                                                                          \
        })

/*
 * What a log source calls for every record it delivers. The record and its strings are valid only
 * during the call. A negative return is counted in LogSourceStats.handler_errors; the record still
 * counts as processed (the position moves past it), so one bad record cannot wedge a source.
 */
typedef int (*LogRecordHandler)(const LogRecord *rec, void *userdata);

/* Counters every log source keeps; hot paths count instead of logging (STYLE.md). */
typedef struct LogSourceStats {
        uint64_t records;         /* delivered to the handler */
        uint64_t lost;            /* never seen: sequence gaps, overruns, a position older than the buffer */
        uint64_t overruns;        /* read() said EPIPE: the kernel overwrote records we had not read */
        uint64_t malformed;       /* rejected by the parser (kmsg), no usable MESSAGE (journal) */
        uint64_t truncated;       /* journal: a message or field longer than our bounds, cut */
        uint64_t skipped_own;     /* tprofd's own messages (no feedback loops) */
        uint64_t skipped_old;     /* at or before the saved position, or the backlog of a first start */
        uint64_t skipped_kernel;  /* journal: _TRANSPORT=kernel entries, taken from kmsg instead */
        uint64_t handler_errors;  /* the handler returned < 0 */
        uint64_t position_errors; /* saving the position failed (the next save retries) */
} LogSourceStats;

/*
 * Deep copy of a record in one allocation (struct and strings), for whoever keeps records past the
 * handler call (the log context buffer, the incident manager). NULL on allocation failure.
 */
LogRecord *log_record_dup(const LogRecord *rec);
/* Accepts NULL; returns NULL. */
LogRecord *log_record_free(LogRecord *rec);
/* Bytes a log_record_dup() copy of rec takes (what the log context counts against its byte limit). */
size_t log_record_dup_size(const LogRecord *rec);

static inline void log_record_freep(LogRecord **rec) {
        if (*rec)
                *rec = log_record_free(*rec);
}
