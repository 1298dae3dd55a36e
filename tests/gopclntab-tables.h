/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Go function tables built byte by byte as the Go linker lays them out (src/runtime/symtab.go:
 * pcHeader, functab, _func; src/debug/gosym/pclntab.go reads all these layouts and agrees with
 * them), for the unit test and the fuzzer's seeds: three functions, main.main, runtime.goexit
 * and main.leaf, at GOPCLNTAB_TEXT + 0x100, 0x180 and 0x200, the last ending at + 0x260.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GOPCLNTAB_TEXT 0x401000U /* where the tables' functions are */
/* A _func record of Go 1.16's and 1.20's length (src/runtime/runtime2.go: entry uintptr or
 * entryOff uint32, nameOff, args, deferreturn, pcsp, pcfile, pcln, npcdata, cuOffset, startLine
 * from 1.20, funcID, flag from 1.17, a pad, nfuncdata; Go 1.15's and 1.18's, 40 bytes, padded to
 * it): Go's own reader looks past the name. */
#define GOPCLNTAB_FUNC_SIZE 44U
/* The flags the tables give their functions (_func.flag, Go 1.17 on): runtime.goexit TOPFRAME, as
 * Go's linker marks it, main.leaf SPWRITE; every funcID byte, before the flag, 7, and every
 * startLine (1.20 on) 0x03030303, so that a reader one field off reads other flags. */
static const uint8_t gopclntab_flags[3] = { 0, 0x01, 0x02 };

static inline void gopclntab_put(uint8_t *p, uint64_t v, unsigned n) {
        for (unsigned i = 0; i < n; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

/* Go 1.16 on (magic 0xfffffffa, 0xfffffff0 or 0xfffffff1): header, names, then functab (3
 * functions + end), then the three _func records. Returns its size, 0 if cap is too small. */
static inline size_t gopclntab_make(uint8_t *t, size_t cap, uint32_t magic) {
        static const char names[] = "main.main\0runtime.goexit\0main.leaf";
        const bool go118 = magic != 0xfffffffaU;
        const unsigned ptr = 8, entry_size = go118 ? 8 : 16, hdr = go118 ? 8 + 8 * ptr : 8 + 7 * ptr;
        const uint64_t entries[4] = { 0x100, 0x180, 0x200, 0x260 }; /* offsets from GOPCLNTAB_TEXT */
        const uint32_t name_offs[3] = { 0, 10, 25 };
        size_t names_off = hdr, functab = names_off + sizeof(names), size;
        size_t funcs = functab + 3 * entry_size + entry_size / 2;
        unsigned h = 8;

        size = funcs + 3 * GOPCLNTAB_FUNC_SIZE;
        /* The linker writes the last entry's first half only: the _func records follow at once. */
        if (size > cap)
                return 0;
        memset(t, 0, size);
        gopclntab_put(t, magic, 4);
        t[6] = 1;                               /* minLC */
        t[7] = ptr;                             /* ptrSize */
        gopclntab_put(t + h, 3, ptr), h += ptr; /* nfunc */
        gopclntab_put(t + h, 1, ptr), h += ptr; /* nfiles */
        if (go118)
                gopclntab_put(t + h, GOPCLNTAB_TEXT, ptr), h += ptr; /* textStart */
        gopclntab_put(t + h, names_off, ptr), h += ptr;              /* funcnameOffset */
        h += 3 * ptr;                                                /* cuOffset, filetabOffset, pctabOffset */
        gopclntab_put(t + h, functab, ptr);                          /* pclnOffset */
        memcpy(t + names_off, names, sizeof(names));
        for (unsigned i = 0; i < 4; i++) {
                uint8_t *e = t + functab + i * entry_size;
                uint64_t funcoff = funcs - functab + i * GOPCLNTAB_FUNC_SIZE;
                if (go118) {
                        gopclntab_put(e, entries[i], 4);
                        if (i < 3)
                                gopclntab_put(e + 4, funcoff, 4);
                } else {
                        gopclntab_put(e, GOPCLNTAB_TEXT + entries[i], 8);
                        if (i < 3)
                                gopclntab_put(e + 8, funcoff, 8);
                }
        }
        for (unsigned i = 0; i < 3; i++) {
                uint8_t *f = t + funcs + i * GOPCLNTAB_FUNC_SIZE;
                if (go118) {
                        gopclntab_put(f, entries[i], 4);
                        gopclntab_put(f + 4, name_offs[i], 4);
                } else {
                        gopclntab_put(f, GOPCLNTAB_TEXT + entries[i], 8);
                        gopclntab_put(f + 8, name_offs[i], 4);
                }
                /* after the uint32s from nameOff to cuOffset (and startLine): funcID, flag */
                size_t flag_off = (go118 ? 4 : ptr) + 8 * 4 + 1;
                if (magic == 0xfffffff1U) {
                        gopclntab_put(f + flag_off - 1, 0x03030303U, 4); /* startLine */
                        flag_off += 4;
                }
                f[flag_off - 1] = 7;
                f[flag_off] = gopclntab_flags[i];
        }
        return size;
}

/* Go 1.2-1.15: magic, nfunc, the functab right after it (3 functions + end), the filetab offset,
 * then names and _func records, both at offsets from the table's start. Returns its size, 0 if cap
 * is too small. */
static inline size_t gopclntab_make_go12(uint8_t *t, size_t cap) {
        static const char names[] = "main.main\0runtime.goexit\0main.leaf";
        const uint64_t entries[4] = { 0x100, 0x180, 0x200, 0x260 }; /* offsets from GOPCLNTAB_TEXT */
        const uint32_t name_offs[3] = { 0, 10, 25 };
        const size_t functab = 16, fileoff = functab + 3 * 16 + 8, names_off = fileoff + 4;
        const size_t filetab = names_off + sizeof(names) + 1, funcs = filetab + 4;
        const size_t size = funcs + 3 * GOPCLNTAB_FUNC_SIZE;

        if (size > cap)
                return 0;
        memset(t, 0, size);
        gopclntab_put(t, 0xfffffffbU, 4);
        t[6] = 1; /* quantum */
        t[7] = 8; /* ptrSize */
        gopclntab_put(t + 8, 3, 8);
        for (unsigned i = 0; i < 4; i++) {
                gopclntab_put(t + functab + i * 16, GOPCLNTAB_TEXT + entries[i], 8);
                if (i < 3)
                        /* the _func's offset from the table's start */
                        gopclntab_put(t + functab + i * 16 + 8, funcs + i * GOPCLNTAB_FUNC_SIZE, 8);
        }
        gopclntab_put(t + fileoff, filetab, 4); /* the filetab: its count, 0; only Go's own tools read it */
        memcpy(t + names_off, names, sizeof(names));
        for (unsigned i = 0; i < 3; i++) {
                gopclntab_put(t + funcs + i * GOPCLNTAB_FUNC_SIZE, GOPCLNTAB_TEXT + entries[i], 8);
                gopclntab_put(t + funcs + i * GOPCLNTAB_FUNC_SIZE + 8, names_off + name_offs[i], 4);
                t[funcs + i * GOPCLNTAB_FUNC_SIZE + 36] = 7; /* funcID; no flag before Go 1.17 */
        }
        return size;
}
