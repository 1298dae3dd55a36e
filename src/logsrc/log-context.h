/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The log context: a bounded in-memory buffer of copies of recent LogRecords from every source, so an
 * incident bundle can hold what was logged before the event (and, by asking again later, after it).
 * It owns the copies and the bounds; it does not decide what goes into a bundle.
 *
 * Bounds, all enforced on every add, oldest arrival first, and each kept per source (kmsg and the
 * journal have a ring each, so a chatty journal cannot push the kernel lines out; the memory held is
 * at most the bounds times the number of sources): at most lines_max records, at most bytes_max bytes
 * of copies (log_record_dup_size()), and nothing older than age_ns_max before the newest t_ns seen
 * from any source (records with t_ns = 0, which could not be placed on the perf clock, count as
 * oldest). Records from kmsg and the journal arrive slightly out of time order; each ring keeps
 * arrival order and log_context_range() merges and sorts.
 *
 * Which journal entries are worth keeping for context is the owner's setting
 * (log_context_set_journal_priority_max()); log_context_admits() applies it, log_context_add() does
 * not, so the owner can still keep a line it needs (the one a rule matched).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "logsrc/log-record.h"

#define LOG_CONTEXT_LINES_DEFAULT 20000U
#define LOG_CONTEXT_BYTES_DEFAULT (UINT64_C(16) * 1024 * 1024)
#define LOG_CONTEXT_AGE_NS_DEFAULT (UINT64_C(15) * 60 * 1000000000) /* 15 min: the longest `before` */

typedef struct LogContextLimits {
        size_t lines_max;    /* 0: LOG_CONTEXT_LINES_DEFAULT */
        uint64_t bytes_max;  /* 0: LOG_CONTEXT_BYTES_DEFAULT */
        uint64_t age_ns_max; /* 0: LOG_CONTEXT_AGE_NS_DEFAULT */
} LogContextLimits;

typedef struct LogContext LogContext;

/* limits may be NULL for all defaults. */
int log_context_new(const LogContextLimits *limits, LogContext **ret);
LogContext *log_context_free(LogContext *c);

/* Journal entries kept by default: info and more urgent. */
#define LOG_CONTEXT_JOURNAL_PRIORITY_DEFAULT 6
/* As priority_max: keep no journal entry for context. */
#define LOG_CONTEXT_JOURNAL_OFF (-1)

/* Journal entries less urgent than priority_max (syslog 0-7), or all of them if
 * LOG_CONTEXT_JOURNAL_OFF, are not admitted. Entries without a priority are admitted unless off. */
void log_context_set_journal_priority_max(LogContext *c, int priority_max);

/* Whether rec is worth keeping as context: every record of kmsg and other sources, journal entries
 * as set above. */
bool log_context_admits(const LogContext *c, const LogRecord *rec);

/* Stores a copy of rec, evicting as the bounds require. -E2BIG if the record alone exceeds bytes_max
 * (it is then dropped and counted), -ENOMEM. */
int log_context_add(LogContext *c, const LogRecord *rec);

typedef int (*LogContextCallback)(const LogRecord *rec, void *userdata);

/*
 * Calls cb for every record with from_ns <= t_ns <= to_ns, in t_ns order (ties in arrival order).
 * The records stay owned by the context and valid during the call; cb must not add to c. Returns the
 * number of records passed to cb, the first negative value cb returned (which stops the walk), or
 * -ENOMEM.
 */
int log_context_range(LogContext *c, uint64_t from_ns, uint64_t to_ns, LogContextCallback cb,
                      void *userdata);

/* Totals over every source. */
size_t log_context_lines(const LogContext *c);
uint64_t log_context_bytes(const LogContext *c);
/* Records evicted by the bounds or dropped as too large, since log_context_new(). */
uint64_t log_context_evicted(const LogContext *c);

static inline void log_context_freep(LogContext **c) {
        if (*c)
                *c = log_context_free(*c);
}
