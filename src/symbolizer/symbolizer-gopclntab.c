/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * .gopclntab: pcHeader, then (at pclnOffset) the functab, nfunc + 1 entries whose last one is the
 * end of the last function, then the _func records the entries point at. Go 1.2-1.15 have no
 * offsets in their header: the functab follows nfunc, and _func records and names are at offsets
 * from the table's start. A function's entry and name are read, and for the unwinder its flags.
 */
#include <errno.h>
#include <string.h>

#include "basic/macro.h"
#include "symbolizer/symbolizer-gopclntab.h"

#define GO12_MAGIC 0xfffffffbU
#define GO116_MAGIC 0xfffffffaU
#define GO118_MAGIC 0xfffffff0U
#define GO120_MAGIC 0xfffffff1U
#define GO_FUNCS_MAX 4194304U

typedef struct Reader {
        const uint8_t *data;
        size_t size;
        bool big_endian;
        unsigned ptr_size;
} Reader;

static bool read_uint(const Reader *r, uint64_t off, unsigned n, uint64_t *ret) {
        uint64_t v = 0;

        if (off > r->size || r->size - off < n)
                return false;
        for (unsigned i = 0; i < n; i++) {
                unsigned shift = r->big_endian ? 8 * (n - 1 - i) : 8 * i;
                v |= (uint64_t) r->data[off + i] << shift;
        }
        *ret = v;
        return true;
}

/* The name at off of the names table [names, names + names_size): up to its NUL, the table's end
 * or GOPCLNTAB_NAME_BYTES_MAX bytes, whichever comes first, so that a hostile table whose
 * functions all point into one long stretch without a NUL costs each function that much at most,
 * not the whole stretch. NULL when empty. */
static const char *name_at(const Reader *r, uint64_t names, uint64_t names_size, uint64_t off, size_t *ret_len) {
        const char *s, *nul;
        size_t max;

        if (off >= names_size)
                return NULL;
        s = (const char *) r->data + names + off;
        max = (size_t) MIN(names_size - off, (uint64_t) GOPCLNTAB_NAME_BYTES_MAX);
        nul = memchr(s, '\0', max);
        *ret_len = nul ? (size_t) (nul - s) : max;
        return *ret_len > 0 ? s : NULL;
}

bool gopclntab_header_like(const uint8_t *p, unsigned ptr_size) {
        uint32_t m = (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;

        return (m == GO12_MAGIC || m == GO116_MAGIC || m == GO118_MAGIC || m == GO120_MAGIC) && p[4] == 0 &&
               p[5] == 0 && (p[6] == 1 || p[6] == 2 || p[6] == 4) && p[7] == ptr_size;
}

/* Where _func.flag is, from the record's start (src/runtime/runtime2.go, _func): after entry
 * (uintptr before 1.18, then uint32 entryOff), nameOff, args, deferreturn, pcsp, pcfile, pcln,
 * npcdata, cuOffset (8 uint32s), startLine from 1.20 (another uint32), and funcID (a byte). Go
 * 1.16's byte there is a pad the linker leaves 0; before 1.16 there is none: 0. */
static uint64_t flag_offset(uint64_t magic, unsigned ptr_size) {
        switch (magic) {
        case GO116_MAGIC:
                return ptr_size + 8 * 4 + 1;
        case GO118_MAGIC:
                return 4 + 8 * 4 + 1;
        case GO120_MAGIC:
                return 4 + 9 * 4 + 1;
        default:
                return 0;
        }
}

static int parse(const uint8_t *data, size_t size, bool big_endian, uint64_t *budget, GoFuncCallback cb,
                 GoFlagsCallback flags_cb, void *userdata) {
        Reader r = { .data = data, .size = size, .big_endian = big_endian };
        uint64_t magic, ptr_size, nfunc, text_start = 0, functab, hdr_off;
        uint64_t names = 0, names_size = size, funcdata = 0; /* before 1.16: the whole table */
        uint64_t prev_entry = 0;
        bool go118;
        unsigned entry_size;
        int k;

        if (!read_uint(&r, 0, 4, &magic))
                return -EBADMSG;
        if (magic != GO12_MAGIC && magic != GO116_MAGIC && magic != GO118_MAGIC && magic != GO120_MAGIC)
                return -EPROTONOSUPPORT;
        go118 = magic == GO118_MAGIC || magic == GO120_MAGIC;
        if (size < 8 || data[4] != 0 || data[5] != 0 || !read_uint(&r, 7, 1, &ptr_size) ||
            (ptr_size != 4 && ptr_size != 8))
                return -EBADMSG;
        r.ptr_size = (unsigned) ptr_size;

        hdr_off = 8;
        if (!read_uint(&r, hdr_off, r.ptr_size, &nfunc) || nfunc == 0 || nfunc > GO_FUNCS_MAX)
                return -EBADMSG;
        if (magic == GO12_MAGIC)
                /* nfunc, then the functab; _func offsets and names are from the table's start */
                functab = hdr_off + r.ptr_size;
        else {
                /* nfunc, nfiles, [textStart,] funcnameOffset, cuOffset, filetabOffset, pctabOffset,
                 * pclnOffset */
                hdr_off += 2 * r.ptr_size;
                if (go118) {
                        if (!read_uint(&r, hdr_off, r.ptr_size, &text_start))
                                return -EBADMSG;
                        hdr_off += r.ptr_size;
                }
                if (!read_uint(&r, hdr_off, r.ptr_size, &names) ||
                    !read_uint(&r, hdr_off + 4 * r.ptr_size, r.ptr_size, &functab))
                        return -EBADMSG;
                if (names >= size || functab >= size || functab <= names)
                        return -EBADMSG;
                names_size = functab - names;
                funcdata = functab;
        }
        if (go118 && text_start == 0)
                return -EBADMSG; /* entries are offsets from an address nobody gave */

        /* nfunc entries, then the end of the last function alone (half an entry) */
        entry_size = go118 ? 8 : 2 * r.ptr_size;
        if (functab > size || size - functab < entry_size / 2 ||
            (size - functab - entry_size / 2) / entry_size < nfunc)
                return -EBADMSG;

        for (uint64_t i = 0; i <= nfunc; i++) {
                uint64_t e = functab + i * entry_size, entry, raw_entry, funcoff, next, name_off, func_entry;
                const char *name;
                size_t name_len;

                if (budget) {
                        if (*budget == 0)
                                return -ETIME;
                        (*budget)--;
                }
                if (!read_uint(&r, e, go118 ? 4 : r.ptr_size, &raw_entry))
                        return -EBADMSG;
                entry = go118 ? raw_entry + text_start : raw_entry;
                if (i > 0 && entry < prev_entry)
                        return -EBADMSG;
                if (i == nfunc)
                        break;
                if (!read_uint(&r, e + entry_size / 2, go118 ? 4 : r.ptr_size, &funcoff) ||
                    !read_uint(&r, e + entry_size, go118 ? 4 : r.ptr_size, &next))
                        return -EBADMSG;
                if (go118)
                        next += text_start;
                if (!go118 && funcoff == (r.ptr_size == 8 ? UINT64_MAX : UINT32_MAX)) {
                        /* Go 1.8-1.17: the hole between two text sections (ppc64 and arm, large
                         * programs), its entry the end of the function before it. */
                        prev_entry = entry;
                        continue;
                }
                /* _func: entryOff uint32 (1.18 on) or entry uintptr (before), then nameOff int32 */
                if (funcoff > size - funcdata ||
                    !read_uint(&r, funcdata + funcoff, go118 ? 4 : r.ptr_size, &func_entry) ||
                    !read_uint(&r, funcdata + funcoff + (go118 ? 4 : r.ptr_size), 4, &name_off))
                        return -EBADMSG;
                if (func_entry != raw_entry)
                        return -EBADMSG;
                name = name_at(&r, names, names_size, name_off, &name_len);
                prev_entry = entry;
                if (next <= entry)
                        continue; /* an empty range: nothing to look up */
                if (flags_cb) {
                        uint64_t flags = 0, off = flag_offset(magic, r.ptr_size);

                        if (off != 0 && !read_uint(&r, funcdata + funcoff + off, 1, &flags))
                                return -EBADMSG;
                        k = flags_cb(entry, next - entry, (uint8_t) flags, name, name ? name_len : 0, userdata);
                } else if (name)
                        k = cb(entry, next - entry, name, name_len, userdata);
                else
                        k = 0; /* unnamed: nothing to name */
                if (k < 0)
                        return k;
        }
        return (int) nfunc;
}

int gopclntab_parse(const uint8_t *data, size_t size, bool big_endian, uint64_t *budget, GoFuncCallback cb,
                    void *userdata) {
        return parse(data, size, big_endian, budget, cb, NULL, userdata);
}

int gopclntab_parse_flags(const uint8_t *data, size_t size, bool big_endian, uint64_t *budget, GoFlagsCallback cb,
                          void *userdata) {
        return parse(data, size, big_endian, budget, NULL, cb, userdata);
}
