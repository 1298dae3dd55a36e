/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /tmp/perf-PID.map parsing. The file is appended to while the process runs and may describe a
 * range twice (code freed and regenerated): sorted by start, the later line wins at equal starts,
 * and an address belongs to an entry only inside [start, start + size).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "basic/macro.h"
#include "profile/profile-sample.h"
#include "symbolizer/symbolizer-jitmap.h"

typedef struct JitEntry {
        uint64_t start, size;
        uint32_t name;
        uint32_t seq;
} JitEntry;

struct JitMap {
        JitEntry *entries;
        size_t n, allocated;
        char *names;
        size_t names_len, names_allocated;
        size_t skipped;
};

JitMap *jit_map_free(JitMap *m) {
        if (!m)
                return NULL;
        free(m->entries);
        free(m->names);
        return mfree(m);
}

size_t jit_map_size(const JitMap *m) {
        return m->n;
}

size_t jit_map_bytes(const JitMap *m) {
        return sizeof(*m) + m->allocated * sizeof(JitEntry) + m->names_allocated;
}

size_t jit_map_skipped(const JitMap *m) {
        return m->skipped;
}

static int entry_cmp(const void *a, const void *b) {
        const JitEntry *x = a, *y = b;
        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        return x->seq > y->seq ? -1 : x->seq < y->seq; /* newest first */
}

static bool parse_hex(const char **p, const char *end, uint64_t *ret) {
        const char *s = *p;
        uint64_t v = 0;
        size_t digits = 0;

        if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
                s += 2;
        for (; s < end; s++, digits++) {
                int d;
                if (*s >= '0' && *s <= '9')
                        d = *s - '0';
                else if (*s >= 'a' && *s <= 'f')
                        d = *s - 'a' + 10;
                else if (*s >= 'A' && *s <= 'F')
                        d = *s - 'A' + 10;
                else
                        break;
                if (digits >= 16)
                        return false;
                v = v << 4 | (uint64_t) d;
        }
        if (digits == 0)
                return false;
        *p = s;
        *ret = v;
        return true;
}

int jit_map_parse(const char *text, size_t n, JitMap **ret) {
        _cleanup_(jit_map_freep) JitMap *m = new0(JitMap, 1);
        const char *p = text, *end = text + n;
        uint32_t seq = 0;

        if (!m)
                return -ENOMEM;
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p)) ?: end, *q = p, *name;
                uint64_t start, size;
                size_t l;

                if (!parse_hex(&q, eol, &start) || q >= eol || *q != ' ' || (q++, !parse_hex(&q, eol, &size)) ||
                    q >= eol || *q != ' ' || size == 0 || start + size < start || m->n >= JIT_MAP_ENTRIES_MAX) {
                        m->skipped++;
                        p = eol + 1;
                        continue;
                }
                name = q + 1;
                l = MIN((size_t) (eol - name), (size_t) PROFILE_NAME_BYTES_MAX - 1);
                if (l > 0 && name[l - 1] == '\r')
                        l--;
                if (l == 0 || m->names_len + l + 1 > UINT32_MAX) {
                        m->skipped++;
                        p = eol + 1;
                        continue;
                }
                if (!GREEDY_REALLOC(m->entries, m->allocated, m->n + 1) ||
                    !GREEDY_REALLOC(m->names, m->names_allocated, m->names_len + l + 1))
                        return -ENOMEM;
                memcpy(m->names + m->names_len, name, l);
                m->names[m->names_len + l] = '\0';
                m->entries[m->n++] = (JitEntry) { .start = start, .size = size, .name = (uint32_t) m->names_len,
                                                  .seq = seq++ };
                m->names_len += l + 1;
                p = eol + 1;
        }
        if (m->n > 0)
                qsort(m->entries, m->n, sizeof(JitEntry), entry_cmp);
        *ret = TAKE_PTR(m);
        return 0;
}

int jit_map_load(const char *path, JitMap **ret) {
        _cleanup_free_ char *data = NULL;
        size_t size;
        int r;

        r = read_full_file(path, JIT_MAP_BYTES_MAX, &data, &size);
        if (r < 0)
                return r;
        return jit_map_parse(data, size, ret);
}

bool jit_map_lookup(const JitMap *m, uint64_t addr, const char **ret_name, uint64_t *ret_offset) {
        size_t lo = 0, hi = m->n;

        /* Last entry whose start <= addr; at equal starts the first in order is the newest. */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (m->entries[mid].start <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        /* Walk back over entries with the same start to the newest one, and a few earlier ones
         * whose range may still cover addr (overlapping regenerations). */
        for (size_t i = lo, steps = 0; i > 0 && steps < 8; i--, steps++) {
                const JitEntry *e = &m->entries[i - 1];
                if (addr - e->start < e->size) {
                        size_t j = i - 1;
                        while (j > 0 && m->entries[j - 1].start == e->start)
                                j--;
                        e = &m->entries[j];
                        if (addr - e->start >= e->size)
                                continue;
                        *ret_name = m->names + e->name;
                        *ret_offset = addr - e->start;
                        return true;
                }
        }
        return false;
}
