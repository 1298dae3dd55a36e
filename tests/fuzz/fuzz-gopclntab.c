/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the Go function table reader (symbolizer/symbolizer-gopclntab): the table comes
 * from any ELF file a sampled process maps. The input is one byte of options (bit 0: big-endian,
 * bit 1: a budget of the options' upper six bits in entries), then the table. Results are checked
 * against the
 * contract in symbolizer-gopclntab.h: names inside the table, never empty, without a NUL and
 * at most GOPCLNTAB_NAME_BYTES_MAX long,
 * ranges in order without overlap, sizes above 0, as many functions reported as the count returned at most;
 * and the same of the flags reader, gopclntab_parse_flags(), whose functions may be unnamed.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic/cleanup.h"
#include "symbolizer/symbolizer-gopclntab.h"
#include "tests/fuzz/fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct Seen {
        const uint8_t *table;
        size_t size;
        uint64_t n, last_end;
} Seen;

static int on_func(uint64_t entry, uint64_t size, const char *name, size_t name_len, void *userdata) {
        Seen *s = userdata;
        const uint8_t *p = (const uint8_t *) name;

        assert(p >= s->table && p < s->table + s->size);
        assert(name_len > 0 && name_len <= GOPCLNTAB_NAME_BYTES_MAX && name_len <= (size_t) (s->table + s->size - p));
        assert(!memchr(p, '\0', name_len));
        assert(size > 0 && entry + size > entry);
        assert(s->n == 0 || entry >= s->last_end); /* in order, no two ranges overlapping */
        s->last_end = entry + size;
        s->n++;
        return 0;
}

static int on_flags(uint64_t entry, uint64_t size, uint8_t flags, const char *name, size_t name_len, void *userdata) {
        Seen *s = userdata;

        if (name_len > 0)
                return on_func(entry, size, name, name_len, userdata);
        assert(size > 0 && entry + size > entry);
        assert(s->n == 0 || entry >= s->last_end);
        s->last_end = entry + size;
        s->n++;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *table = NULL;
        Seen s = {};
        uint64_t budget;
        int r;

        if (size < 1)
                return 0;
        budget = data[0] >> 2;
        table = fuzz_copy(data + 1, size - 1);
        if (!table)
                return 0;
        s.table = (const uint8_t *) table;
        s.size = size - 1;
        r = gopclntab_parse(s.table, s.size, data[0] & 1, data[0] & 2 ? &budget : NULL, on_func, &s);
        assert(r >= 0 || r == -EBADMSG || r == -EPROTONOSUPPORT || (r == -ETIME && budget == 0));
        assert(r < 0 || s.n <= (uint64_t) r);

        s.n = s.last_end = 0;
        budget = data[0] >> 2;
        r = gopclntab_parse_flags(s.table, s.size, data[0] & 1, data[0] & 2 ? &budget : NULL, on_flags, &s);
        assert(r >= 0 || r == -EBADMSG || r == -EPROTONOSUPPORT || (r == -ETIME && budget == 0));
        assert(r < 0 || s.n <= (uint64_t) r);
        return 0;
}
