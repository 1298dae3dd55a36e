/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Log context buffer; see log-context.h. One ring of lines_max slots per source, in arrival order; a
 * range query collects the slots in range from every ring and sorts them by (t_ns, arrival serial),
 * which is cheap next to writing a bundle and keeps adding O(1).
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/macro.h"
#include "logsrc/log-context.h"

typedef struct Slot {
        LogRecord *rec;
        uint64_t serial;
        size_t bytes;
} Slot;

/* The records of one source, in arrival order. */
typedef struct Ring {
        Slot *slots; /* limits.lines_max, allocated at the first add */
        size_t head; /* oldest */
        size_t n;
        uint64_t bytes;
} Ring;

struct LogContext {
        LogContextLimits limits;
        Ring rings[_LOG_SOURCE_MAX];
        uint64_t serial;
        uint64_t newest_t_ns;
        uint64_t evicted;
        int journal_priority_max;
};

int log_context_new(const LogContextLimits *limits, LogContext **ret) {
        _cleanup_(log_context_freep) LogContext *c = NULL;

        assert(ret);

        c = new0(LogContext, 1);
        if (!c)
                return -ENOMEM;
        if (limits)
                c->limits = *limits;
        if (c->limits.lines_max == 0)
                c->limits.lines_max = LOG_CONTEXT_LINES_DEFAULT;
        if (c->limits.bytes_max == 0)
                c->limits.bytes_max = LOG_CONTEXT_BYTES_DEFAULT;
        if (c->limits.age_ns_max == 0)
                c->limits.age_ns_max = LOG_CONTEXT_AGE_NS_DEFAULT;
        c->journal_priority_max = LOG_CONTEXT_JOURNAL_PRIORITY_DEFAULT;
        *ret = TAKE_PTR(c);
        return 0;
}

static void ring_evict_oldest(LogContext *c, Ring *g) {
        Slot *s = &g->slots[g->head];

        assert(g->n > 0);
        g->bytes -= s->bytes;
        s->rec = log_record_free(s->rec);
        g->head = (g->head + 1) % c->limits.lines_max;
        g->n--;
        c->evicted++;
}

LogContext *log_context_free(LogContext *c) {
        if (!c)
                return NULL;
        for (size_t k = 0; k < ELEMENTSOF(c->rings); k++) {
                while (c->rings[k].n > 0)
                        ring_evict_oldest(c, &c->rings[k]);
                free(c->rings[k].slots);
        }
        return mfree(c);
}

void log_context_set_journal_priority_max(LogContext *c, int priority_max) {
        assert(c);
        c->journal_priority_max = priority_max < 0 ? LOG_CONTEXT_JOURNAL_OFF : MIN(priority_max, 7);
}

bool log_context_admits(const LogContext *c, const LogRecord *rec) {
        assert(c);
        assert(rec);

        if (rec->source != LOG_SOURCE_JOURNAL)
                return true;
        if (c->journal_priority_max == LOG_CONTEXT_JOURNAL_OFF)
                return false;
        return rec->priority < 0 || rec->priority <= c->journal_priority_max;
}

int log_context_add(LogContext *c, const LogRecord *rec) {
        uint64_t cutoff;
        size_t bytes;
        Ring *g;
        Slot *s;

        assert(c);
        assert(rec);

        bytes = log_record_dup_size(rec);
        if (bytes > c->limits.bytes_max) {
                c->evicted++;
                return -E2BIG;
        }
        g = &c->rings[rec->source >= 0 && rec->source < _LOG_SOURCE_MAX ? rec->source : LOG_SOURCE_TEXT];
        if (!g->slots) {
                g->slots = new0(Slot, c->limits.lines_max);
                if (!g->slots)
                        return -ENOMEM;
        }

        c->newest_t_ns = MAX(c->newest_t_ns, rec->t_ns);
        cutoff = c->newest_t_ns > c->limits.age_ns_max ? c->newest_t_ns - c->limits.age_ns_max : 0;

        /* Age applies to every ring, so a source that went quiet does not hold stale lines. */
        for (size_t k = 0; k < ELEMENTSOF(c->rings); k++)
                while (c->rings[k].n > 0 && c->rings[k].slots[c->rings[k].head].rec->t_ns < cutoff)
                        ring_evict_oldest(c, &c->rings[k]);
        while (g->n > 0 && (g->n >= c->limits.lines_max || g->bytes + bytes > c->limits.bytes_max))
                ring_evict_oldest(c, g);

        s = &g->slots[(g->head + g->n) % c->limits.lines_max];
        s->rec = log_record_dup(rec);
        if (!s->rec)
                return -ENOMEM;
        s->serial = c->serial++;
        s->bytes = bytes;
        g->bytes += bytes;
        g->n++;
        return 0;
}

static int slot_compare(const void *a, const void *b) {
        const Slot *x = *(const Slot *const *) a, *y = *(const Slot *const *) b;

        if (x->rec->t_ns != y->rec->t_ns)
                return x->rec->t_ns < y->rec->t_ns ? -1 : 1;
        return x->serial < y->serial ? -1 : x->serial > y->serial;
}

int log_context_range(LogContext *c, uint64_t from_ns, uint64_t to_ns, LogContextCallback cb,
                      void *userdata) {
        _cleanup_free_ Slot **sel = NULL;
        size_t m = 0, total = log_context_lines(c);

        assert(c);
        assert(cb);

        if (total == 0 || from_ns > to_ns)
                return 0;
        sel = new (Slot *, total);
        if (!sel)
                return -ENOMEM;
        for (size_t k = 0; k < ELEMENTSOF(c->rings); k++) {
                Ring *g = &c->rings[k];

                for (size_t i = 0; i < g->n; i++) {
                        Slot *s = &g->slots[(g->head + i) % c->limits.lines_max];

                        if (s->rec->t_ns >= from_ns && s->rec->t_ns <= to_ns)
                                sel[m++] = s;
                }
        }
        qsort(sel, m, sizeof(Slot *), slot_compare);
        for (size_t i = 0; i < m; i++) {
                int r = cb(sel[i]->rec, userdata);
                if (r < 0)
                        return r;
        }
        return (int) MIN(m, (size_t) INT32_MAX);
}

size_t log_context_lines(const LogContext *c) {
        size_t n = 0;

        for (size_t k = 0; k < ELEMENTSOF(c->rings); k++)
                n += c->rings[k].n;
        return n;
}

uint64_t log_context_bytes(const LogContext *c) {
        uint64_t b = 0;

        for (size_t k = 0; k < ELEMENTSOF(c->rings); k++)
                b += c->rings[k].bytes;
        return b;
}

uint64_t log_context_evicted(const LogContext *c) {
        return c->evicted;
}
