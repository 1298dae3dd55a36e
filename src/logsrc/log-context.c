/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Log context buffer; see log-context.h. A ring of lines_max slots in arrival order; a range query
 * collects the slots in range and sorts them by (t_ns, arrival serial), which is cheap next to writing
 * a bundle and keeps adding O(1).
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

struct LogContext {
        LogContextLimits limits;
        Slot *slots; /* limits.lines_max */
        size_t head; /* oldest */
        size_t n;
        uint64_t bytes;
        uint64_t serial;
        uint64_t newest_t_ns;
        uint64_t evicted;
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
        c->slots = new0(Slot, c->limits.lines_max);
        if (!c->slots)
                return -ENOMEM;
        *ret = TAKE_PTR(c);
        return 0;
}

static void log_context_evict_oldest(LogContext *c) {
        Slot *s = &c->slots[c->head];

        assert(c->n > 0);
        c->bytes -= s->bytes;
        s->rec = log_record_free(s->rec);
        c->head = (c->head + 1) % c->limits.lines_max;
        c->n--;
        c->evicted++;
}

LogContext *log_context_free(LogContext *c) {
        if (!c)
                return NULL;
        while (c->n > 0)
                log_context_evict_oldest(c);
        free(c->slots);
        return mfree(c);
}

int log_context_add(LogContext *c, const LogRecord *rec) {
        uint64_t cutoff;
        size_t bytes;
        Slot *s;

        assert(c);
        assert(rec);

        bytes = log_record_dup_size(rec);
        if (bytes > c->limits.bytes_max) {
                c->evicted++;
                return -E2BIG;
        }

        c->newest_t_ns = MAX(c->newest_t_ns, rec->t_ns);
        cutoff = c->newest_t_ns > c->limits.age_ns_max ? c->newest_t_ns - c->limits.age_ns_max : 0;

        while (c->n > 0 && (c->n >= c->limits.lines_max || c->bytes + bytes > c->limits.bytes_max ||
                            c->slots[c->head].rec->t_ns < cutoff))
                log_context_evict_oldest(c);

        s = &c->slots[(c->head + c->n) % c->limits.lines_max];
        s->rec = log_record_dup(rec);
        if (!s->rec)
                return -ENOMEM;
        s->serial = c->serial++;
        s->bytes = bytes;
        c->bytes += bytes;
        c->n++;
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
        size_t m = 0;

        assert(c);
        assert(cb);

        if (c->n == 0 || from_ns > to_ns)
                return 0;
        sel = new (Slot *, c->n);
        if (!sel)
                return -ENOMEM;
        for (size_t i = 0; i < c->n; i++) {
                Slot *s = &c->slots[(c->head + i) % c->limits.lines_max];

                if (s->rec->t_ns >= from_ns && s->rec->t_ns <= to_ns)
                        sel[m++] = s;
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
        return c->n;
}

uint64_t log_context_bytes(const LogContext *c) {
        return c->bytes;
}

uint64_t log_context_evicted(const LogContext *c) {
        return c->evicted;
}
